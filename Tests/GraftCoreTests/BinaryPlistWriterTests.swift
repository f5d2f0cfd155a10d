import Foundation
import GraftCore
import Testing

/// The one binary-plist reader and writer under the value tree, the binary store and the clipboard.
@Suite struct BinaryPlistWriterTests {
    /// Apple's CFBinaryPList sizes references by the object count (`_byteCount(cnt)`), and its reader
    /// refuses a trailer whose references cannot hold that count (`1 << (8 * refSize) <= numObjects`).
    @Test(arguments: [254, 255, 256, 257, 65_535, 65_536])
    func referenceSizeHoldsTheObjectCount(objects: Int) throws {
        // An array of distinct integers: the array and its elements.
        let data = BinaryPropertyList.encode(.array((1..<objects).map { .integer(Int64($0)) }))
        let trailer = BinaryTrailer(data)
        #expect(trailer.objectCount == objects)
        #expect(trailer.referenceSize == (objects < 256 ? 1 : objects < 65_536 ? 2 : 4))
        #expect(try BinaryPropertyList.decode(data).arrayValue?.count == objects - 1)
    }

    /// CFBinaryPList sizes offsets by where the offset table starts (`_byteCount(length_so_far)`), and its
    /// reader refuses offsets too narrow to reach it, even when every object starts lower.
    @Test(arguments: 240...250)
    func offsetSizeReachesTheOffsetTable(length: Int) throws {
        let data = BinaryPropertyList.encode(.data(Data(count: length)))
        let trailer = BinaryTrailer(data)
        #expect(trailer.offsetSize == (trailer.offsetTableStart < 256 ? 1 : 2))
        #expect(try BinaryPropertyList.decode(data) == .data(Data(count: length)))
    }

    @Test func writesReservedObjectsLater() throws {
        var writer = BinaryPlistWriter(output: [UInt8](), referenceSize: 1)
        let reserved = writer.reserve()
        let key = writer.string("k")
        try writer.integer(42, at: reserved)
        let top = writer.dictionary(keys: [key], values: [reserved])
        try writer.finish(top: top)
        #expect(try BinaryPropertyList.decode(Data(writer.output)) == ["k": 42])
    }

    @Test func refusesObjectsNotReservedOrNeverWritten() {
        var writer = BinaryPlistWriter(output: [UInt8](), referenceSize: 1)
        let string = writer.string("a")
        #expect(throws: GraftError.self) { try writer.integer(1, at: string) }
        let reserved = writer.reserve()
        try? writer.integer(1, at: reserved)
        #expect(throws: GraftError.self) { try writer.integer(2, at: reserved) }
        _ = writer.reserve()
        let error = #expect(throws: GraftError.self) { try writer.finish(top: string) }
        #expect(error?.message.contains("never written") == true)
    }

    @Test func refusesMoreObjectsThanItsReferencesTellApart() {
        var writer = BinaryPlistWriter(output: [UInt8](), referenceSize: 1)
        for _ in 0..<256 { _ = writer.bool(true) }
        let error = #expect(throws: GraftError.self) { try writer.finish(top: 0) }
        #expect(error?.code == .invalidOperation)
    }

    @Test func sharesStringsAndBooleansOnlyWhenAsked() throws {
        var writer = BinaryPlistWriter(output: [UInt8](), referenceSize: 1)
        let elements = [
            writer.sharedString("a"), writer.sharedString("a"), writer.string("a"), writer.sharedBool(true),
            writer.sharedBool(true), writer.bool(true),
        ]
        #expect(elements == [0, 0, 1, 2, 2, 3])
        try writer.finish(top: writer.array(elements))
        #expect(try BinaryPropertyList.decode(Data(writer.output)) == ["a", "a", "a", true, true, true])
    }

    /// CoreFoundation reads `bplist0` and any one character after it (`bplist00`, Leopard's `bplist01`).
    @Test func readsLaterHeadersOfVersionZero() throws {
        var bytes = [UInt8](BinaryPropertyList.encode(["a": 1]))
        bytes[7] = UInt8(ascii: "1")
        #expect(try BinaryPropertyList.decode(Data(bytes)) == ["a": 1])
    }

    /// The view gives each object's type and where its contents lie, checked, without decoding the rest.
    @Test func viewsObjectsWithoutDecodingTheTree() throws {
        let data = BinaryPropertyList.encode([
            "name": "Zoë", "bytes": .data(Data([1, 2])), "big": .unsignedInteger(.max),
        ])
        try data.withUnsafeBytes { bytes in
            let view = try BinaryPlistView(bytes, name: "test")
            guard case .dictionary(let start, let count) = try view.object(view.topObject) else {
                Issue.record("the top object is not a dictionary")
                return
            }
            #expect(count == 3)
            var found: [String: BinaryPlistView.Object] = [:]
            for index in 0..<count {
                let key = try view.object(view.element(index, from: start))
                found[view.string(key) ?? "?"] = try view.object(view.element(count + index, from: start))
            }
            #expect(found["name"].flatMap(view.validatedString) == "Zoë")
            if case .data(let dataStart, let dataCount)? = found["bytes"] {
                #expect(view.data(dataStart, dataCount) == Data([1, 2]))
            } else {
                Issue.record("bytes: \(String(describing: found["bytes"]))")
            }
            if case .unsignedInteger(let value)? = found["big"] { #expect(value == .max) } else { Issue.record("big") }
            #expect(view.kind(of: view.topObject) == "a dictionary")
        }
    }

    /// Hostile references give errors that name the bytes, never a trap.
    @Test func viewRefusesReferencesOutsideTheObjects() throws {
        let data = BinaryPropertyList.encode(["a"])
        try data.withUnsafeBytes { bytes in
            let view = try BinaryPlistView(bytes, name: "test", baseOffset: 100)
            for reference in [-1, view.objectCount, Int.max] {
                let error = #expect(throws: GraftError.self) { try view.object(reference) }
                #expect(error?.message.hasPrefix("test: ") == true)
            }
            #expect(view.kind(of: 99) == "an object outside the data")
        }
    }
}
