import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel
import GraftTestSupport
import Testing

/// The streaming writer: a header, objects one at a time, the end; the same bytes as `encode`.
@Suite struct ClipboardWriterTests {
    /// Writes `clipboard` through a `ClipboardWriter`, object by object, and returns the bytes.
    func streamed(
        _ clipboard: Clipboard, _ encoding: ClipboardEncoding, capacity: ClipboardWriter.Capacity?
    ) throws -> Data {
        var bytes = Data()
        var writer = try ClipboardWriter(encoding: encoding, header: clipboard.header, capacity: capacity) { chunk in
            bytes.append(contentsOf: chunk)
        }
        for object in clipboard.objects { try writer.write(object) }
        try writer.finish()
        return bytes
    }

    @Test(arguments: ClipboardEncoding.allCases)
    func theWriterGivesTheBytesEncodeGives(_ encoding: ClipboardEncoding) throws {
        for clipboard in [ClipboardSamples.empty, ClipboardSamples.small, ClipboardSamples.company(objects: 3_000)] {
            let capacity = ClipboardWriter.Capacity(of: clipboard.objects)
            #expect(try streamed(clipboard, encoding, capacity: capacity) == (try encoding.encode(clipboard)))
            // Without a capacity only a binary property list's reference width may differ; the document
            // reads back the same.
            let unsized = try streamed(clipboard, encoding, capacity: nil)
            if encoding != .binaryPlist { #expect(unsized == (try encoding.encode(clipboard))) }
            #expect(try ClipboardEncoding.decode(unsized) == clipboard)
        }
    }

    /// 60,000 objects, never held: the writer hands on chunks of bounded size, and the document reads
    /// back with every object in order.
    @Test(arguments: ClipboardEncoding.allCases)
    func manyObjectsInBoundedChunks(_ encoding: ClipboardEncoding) throws {
        let sample = ClipboardSamples.company(objects: 25)
        let count = 60_000
        var header = sample.header
        header.roots = (1...count).map { "o\($0)" }
        var bytes = Data()
        var largest = 0
        var chunks = 0
        var writer = try ClipboardWriter(encoding: encoding, header: header) { chunk in
            largest = max(largest, chunk.count)
            chunks += 1
            bytes.append(contentsOf: chunk)
        }
        for index in 1...count {
            var object = sample.objects[index % sample.objects.count]
            object.id = "o\(index)"
            object.relationships = []
            try writer.write(object)
        }
        try writer.finish()
        #expect(chunks > 10)
        #expect(largest <= 512 * 1024, "a chunk of \(largest) bytes")
        let back = try ClipboardEncoding.decode(bytes)
        #expect(back.objects.count == count)
        #expect(back.objects.last?.id == "o\(count)")
        #expect(back.roots == header.roots)
    }

    @Test(arguments: ClipboardEncoding.allCases)
    func anObjectThatDoesNotFitWritesNothing(_ encoding: ClipboardEncoding) throws {
        let clipboard = ClipboardSamples.small
        var bytes = Data()
        var writer = try ClipboardWriter(encoding: encoding, header: clipboard.header) { chunk in
            bytes.append(contentsOf: chunk)
        }
        var stranger = try #require(clipboard.objects.first)
        stranger.entity = "Nowhere"
        let error = try #require(throws: GraftError.self) { try writer.write(stranger) }
        #expect(error.code == .malformedInput)
        #expect(error.context.contains(.object(stranger.id)))
        var undeclared = try #require(clipboard.objects.first)
        undeclared.attributes.append(.init("nothing", .integer(1)))
        #expect(throws: GraftError.self) { try writer.write(undeclared) }
        // The document goes on as if neither had been offered.
        for object in clipboard.objects { try writer.write(object) }
        try writer.finish()
        #expect(try ClipboardEncoding.decode(bytes) == clipboard)
        let finished = try #require(throws: GraftError.self) { try writer.finish() }
        #expect(finished.code == .invalidOperation)
    }

    @Test func aHeaderThatDoesNotHoldTogetherIsRefusedBeforeAnyByte() throws {
        var header = ClipboardSamples.small.header
        header.entities.append(header.entities[0])
        var chunks = 0
        let error = try #require(throws: GraftError.self) {
            _ = try ClipboardWriter(encoding: .json, header: header) { _ in chunks += 1 }
        }
        #expect(error.code == .malformedInput)
        #expect(chunks == 0)
    }

    @Test(arguments: ClipboardEncoding.allCases)
    func aFailingSinkStopsTheWriter(_ encoding: ClipboardEncoding) throws {
        struct Full: Error {}
        let clipboard = ClipboardSamples.company(objects: 5_000)
        var calls = 0
        #expect(throws: Full.self) {
            try encoding.encode(clipboard) { _ in
                calls += 1
                if calls == 2 { throw Full() }
            }
        }
        #expect(calls == 2)
    }
}

/// `copy --all` streamed: the same document, byte for byte, as the clipboard copied in memory and
/// encoded, from a store of every format, in every encoding.
@Suite struct StreamingCopyTests {
    /// The Company store written as a document of `format`.
    func companyStore(_ format: StoreFormat, in folder: URL) throws -> URL {
        let source = try Company.store()
        var snapshots: [Snapshot] = []
        try source.forEachSnapshot { snapshots.append($0) }
        let url = folder.appendingPathComponent("company.\(format.rawValue)")
        try format.driver.write(
            snapshots, to: url, model: Company.v2,
            metadata: StoreMetadata.make(for: Company.v2, storeType: format.storeType), overwrite: false)
        return url
    }

    @Test(arguments: StoreFormat.allCases)
    func theStreamedCopyIsTheCopyInMemory(_ format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try companyStore(format, in: folder)
        let copied = try Copier.copyAll(from: Copier.reader(for: url, model: nil))
        #expect(copied.objects.count == 12)
        for encoding in ClipboardEncoding.allCases {
            var bytes = Data()
            var progress: [Int] = []
            let streamed = try Copier.copyAll(
                from: Copier.reader(for: url, model: nil), encoding: encoding,
                to: { bytes.append(contentsOf: $0) }, progress: { done, _ in progress.append(done) })
            #expect(bytes == (try encoding.encode(copied)), "\(format) → \(encoding)")
            #expect(streamed.counts == copied.counts)
            #expect(streamed.objects == copied.objects.count)
            #expect(progress.last == copied.objects.count)
            // The library call for a whole store takes the same path.
            var whole = Data()
            let result = try Copier.copy(
                storeAt: url, selection: Selection(roots: [.all]), encoding: encoding,
                to: { whole.append(contentsOf: $0) })
            #expect(whole == bytes)
            let inMemory = try Copier.copy(storeAt: url, selection: Selection(roots: [.all]))
            #expect(result.json == inMemory.json)
        }
    }

    /// Any other selection is copied, then encoded: the same bytes as encoding the copy.
    @Test func aSelectionIsCopiedThenEncoded() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try companyStore(.sqlite, in: folder)
        let selection = Selection(roots: [.predicate(entity: "Department", format: "name == 'Sales'")])
        let copied = try Copier.copy(storeAt: url, selection: selection)
        var bytes = Data()
        let streamed = try Copier.copy(
            storeAt: url, selection: selection, encoding: .json, to: { bytes.append(contentsOf: $0) })
        #expect(bytes == (try ClipboardEncoding.json.encode(copied.clipboard)))
        #expect(streamed.json == copied.json)
        #expect(streamed.references == copied.clipboard.references.count)
    }

    /// A sink that fails stops the copy with its error.
    @Test(arguments: ClipboardEncoding.allCases)
    func aFailingSinkStopsTheCopy(_ encoding: ClipboardEncoding) throws {
        struct Full: Error {}
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try companyStore(.sqlite, in: folder)
        var calls = 0
        #expect(throws: Full.self) {
            try Copier.copy(storeAt: url, selection: Selection(roots: [.all]), encoding: encoding) { _ in
                calls += 1
                throw Full()
            }
        }
        #expect(calls == 1)
    }
}
