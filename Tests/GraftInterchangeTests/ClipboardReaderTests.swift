import Foundation
import GraftCore
import GraftInterchange
import GraftTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `ClipboardReader` reads documents object by object, in every encoding, with the checks of a decode.
@Suite struct ClipboardReaderTests {
    static let document = ClipboardSamples.company(objects: 300)

    /// Reads every object of `reader`.
    static func objects(_ reader: inout ClipboardReader) throws -> [Clipboard.Object] {
        var objects: [Clipboard.Object] = []
        while let object = try reader.next() { objects.append(object) }
        return objects
    }

    @Test(arguments: ClipboardEncoding.allCases)
    func readsEveryEncodingObjectByObject(_ encoding: ClipboardEncoding) throws {
        let data = try encoding.encode(Self.document)
        var reader = try ClipboardReader(data: data)
        #expect(reader.encoding == encoding)
        #expect(reader.header == Self.document.header)
        #expect(reader.objectCount == Self.document.objects.count)
        #expect(try Self.objects(&reader) == Self.document.objects)
        #expect(try reader.next() == nil, "the end stays the end")
        #expect(try ClipboardReader(data: data, encoding: encoding).header == Self.document.header)
        #expect(throws: GraftError.self) {
            try ClipboardReader(data: data, encoding: encoding == .json ? .xml : .json)
        }
    }

    @Test(arguments: ClipboardEncoding.allCases)
    func readsAMappedFile(_ encoding: ClipboardEncoding) throws {
        let folder = try ReaderScratchFolder()
        let url = folder.url.appendingPathComponent("clipboard.\(encoding.fileExtension)")
        try encoding.encode(Self.document).write(to: url)
        var reader = try ClipboardReader(contentsOf: url)
        #expect(reader.header == Self.document.header)
        #expect(try Self.objects(&reader) == Self.document.objects)
        #expect(throws: GraftError.self) {
            try ClipboardReader(contentsOf: folder.url.appendingPathComponent("missing.json"))
        }
    }

    @Test(arguments: ClipboardEncoding.allCases)
    func rewindStartsASecondPass(_ encoding: ClipboardEncoding) throws {
        var reader = try ClipboardReader(data: try encoding.encode(Self.document))
        for object in Self.document.objects.prefix(3) { #expect(try reader.next() == object) }
        reader.rewind()
        #expect(try Self.objects(&reader) == Self.document.objects)
        reader.rewind()
        #expect(try Self.objects(&reader) == Self.document.objects, "the id checks start over too")
    }

    /// Members in the order Python's `plistlib` and `json.dumps(sort_keys=True)` write them, and stranger:
    /// objects before the model, attributes and relationships before the entity, the version last.
    @Test func membersInUnusualOrder() throws {
        let json = """
            {"references": [{"identity": {"salary": "5"}, "entity": "Employee", "id": "r1"}],
             "objects": [
              {"relationships": {"employees": ["o2", "r1"]}, "attributes": {"name": "Sales"}, "entity": "Department", "id": "o1"},
              {"attributes": {"hired": 1.5, "salary": "52000.5"}, "id": "o2", "relationships": {"department": "o1"}, "entity": "Employee"}
             ],
             "roots": ["o1"], "source": {"store": "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"},
             "model": {"versionIdentifiers": [], "entities": [
              {"relationships": [{"ordered": false, "toMany": true, "name": "employees"}], "name": "Department", "attributes": [{"type": "string", "name": "name"}], "versionHash": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="},
              {"versionHash": "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=", "name": "Employee", "attributes": [{"name": "salary", "type": "decimal"}, {"name": "hired", "type": "date"}], "relationships": [{"name": "department", "toMany": false}]}
             ]},
             "encoding": {"integer64": "number", "nonFiniteNumbers": "strings NaN, Infinity, -Infinity", "binary": "base64", "decimal": "string", "date": "seconds since 2001-01-01T00:00:00Z"},
             "format": "graft-clipboard", "version": 1}
            """
        var reader = try ClipboardReader(data: Data(json.utf8))
        #expect(reader.header == ClipboardSamples.small.header)
        let objects = try Self.objects(&reader)
        #expect(objects.map(\.id) == ["o1", "o2"])
        #expect(objects[1][attribute: "salary"] == .decimal(Decimal(string: "52000.5")!))
        #expect(objects[1][relationship: "department"] == ["o1"])
        // Property lists with their keys sorted, as the tree encoders (and plistlib) write them.
        let tree = try BinaryPropertyList.decode(try ClipboardEncoding.binaryPlist.encode(Self.document))
        guard case .dictionary(var top) = tree else { throw GraftError(.notFound, "the sample's tree has changed") }
        top["encoding"] = .dictionary([
            "date": "real, seconds since 2001-01-01T00:00:00Z", "decimal": "string",
            "controlCharacters": "data holding the string's UTF-8 bytes",
        ])
        for (encoding, data) in [
            (ClipboardEncoding.binaryPlist, BinaryPropertyList.encode(tree)),
            (.plist, XMLPropertyList.encode(.dictionary(top))),
        ] {
            var reader = try ClipboardReader(data: data, encoding: encoding)
            #expect(reader.header == Self.document.header, "\(encoding)")
            #expect(try Self.objects(&reader) == Self.document.objects, "\(encoding)")
        }
    }

    /// The XML property-list encoding writes dates as reals, and reads `<date>` elements for them too, as
    /// a property list written by another tool has them; a date that is no date is refused.
    @Test func plistDateElementsAreRead() throws {
        let text = String(decoding: try ClipboardEncoding.plist.encode(ClipboardSamples.small), as: UTF8.self)
        let hired = "<real>1.5</real>"
        try #require(text.contains(hired))
        let dated = text.replacingOccurrences(of: hired, with: "<date>2001-01-01T00:00:01.5Z</date>")
        var reader = try ClipboardReader(data: Data(dated.utf8), encoding: .plist)
        #expect(try Self.objects(&reader) == ClipboardSamples.small.objects)
        for bad in ["2001-13-01T00:00:00Z", "2001-01-01T00:00:00", "2001-01-01T00:00:00.Z"] {
            let broken = text.replacingOccurrences(of: hired, with: "<date>\(bad)</date>")
            var reader = try ClipboardReader(data: Data(broken.utf8), encoding: .plist)
            let error = #expect(throws: GraftError.self) { try Self.objects(&reader) }
            #expect(error?.message.contains("'\(bad)' is not a date") == true, "\(bad)")
        }
    }

    /// A bad value in the middle of a document: the objects before it read, then an error that names the
    /// object, the key and the place.
    @Test(arguments: ClipboardEncoding.allCases)
    func aBadValueMidDocumentNamesObjectAndKey(_ encoding: ClipboardEncoding) throws {
        let data: Data
        if encoding == .binaryPlist {
            guard case .dictionary(var top) = try BinaryPropertyList.decode(try encoding.encode(Self.document)),
                case .array(var objects)? = top["objects"], case .dictionary(var object) = objects[150],
                case .dictionary(var attributes)? = object["attributes"]
            else { throw GraftError(.notFound, "the sample's tree has changed") }
            attributes["number"] = "x"
            object["attributes"] = .dictionary(attributes)
            objects[150] = .dictionary(object)
            top["objects"] = .array(objects)
            data = BinaryPropertyList.encode(.dictionary(top))
        } else {
            let text = String(decoding: try encoding.encode(Self.document), as: UTF8.self)
            let (find, replacement) =
                switch encoding {
                case .json: ("\"number\": 150,", "\"number\": \"x\",")
                case .xml: ("<attribute name=\"number\">150<", "<attribute name=\"number\">x<")
                default: ("<integer>150</integer>", "<string>x</string>")
                }
            #expect(text.components(separatedBy: find).count == 2, "\(encoding): \(find) is not unique")
            data = Data(text.replacingOccurrences(of: find, with: replacement).utf8)
        }
        var reader = try ClipboardReader(data: data)
        for object in Self.document.objects.prefix(150) { #expect(try reader.next() == object) }
        let error = try #require(throws: GraftError.self) { try reader.next() }
        #expect(error.code == .malformedInput)
        #expect(error.context.contains(.object("o151")) && error.context.contains(.key("number")), "\(error)")
        #expect(
            error.context.contains { if case .line = $0 { true } else if case .offset = $0 { true } else { false } },
            "\(error)")
        #expect(throws: GraftError.self, "an error stays") { try reader.next() }
        #expect(throws: GraftError.self) { try encoding.decode(data) }
    }

    /// Ids used twice are refused when the second is read; missing targets and roots that are not objects
    /// on the call that reaches the end, naming the first object that has one.
    @Test(arguments: ClipboardEncoding.allCases)
    func documentWideRulesAreCheckedByTheEnd(_ encoding: ClipboardEncoding) throws {
        var twice = ClipboardSamples.small
        twice.objects[1].id = "o1"
        twice.objects[0].relationships = [.init("employees", ["r1"])]
        var reader = try ClipboardReader(data: try encoding.encode(twice))
        _ = try reader.next()
        let repeated = try #require(throws: GraftError.self) { try reader.next() }
        #expect(repeated.message.contains("used twice") && repeated.context.contains(.object("o1")), "\(repeated)")

        var dangling = ClipboardSamples.small
        dangling.objects[0].relationships = [.init("employees", ["o2", "o9"])]
        reader = try ClipboardReader(data: try encoding.encode(dangling))
        #expect(try reader.next()?.id == "o1")
        #expect(try reader.next()?.id == "o2")
        let missing = try #require(throws: GraftError.self) { try reader.next() }
        #expect(missing.message.contains("o9"), "\(missing)")
        #expect(missing.context.contains(.object("o1")) && missing.context.contains(.key("employees")), "\(missing)")

        var root = ClipboardSamples.small
        root.roots = ["r1"]
        reader = try ClipboardReader(data: try encoding.encode(root))
        let notAnObject = try #require(throws: GraftError.self) { try Self.objects(&reader) }
        #expect(notAnObject.message.contains("'r1' is not an object"), "\(notAnObject)")
    }

    /// Cut or corrupted documents give errors from the reader, never a crash.
    @Test(arguments: ClipboardEncoding.allCases)
    func corruptedDocumentsGiveErrors(_ encoding: ClipboardEncoding) throws {
        let seed = RepeatableRandomNumberGenerator.seed(default: 20_261_201)
        var random = RepeatableRandomNumberGenerator(seed: seed)
        let data = try encoding.encode(ClipboardSamples.company(objects: 40))
        var errors = 0
        for attempt in 0..<200 {
            var corrupted = attempt % 2 == 0 ? data : data.prefix(Int.random(in: 0..<data.count, using: &random))
            if attempt % 2 == 0 {
                for _ in 0...2 {
                    let position = Int.random(in: (corrupted.count / 4)..<corrupted.count, using: &random)
                    corrupted[position] = UInt8.random(in: 0...255, using: &random)
                }
            }
            do {
                var reader = try ClipboardReader(data: corrupted, encoding: encoding)
                _ = try Self.objects(&reader)
            } catch is GraftError {
                errors += 1
            } catch {
                Issue.record("\(encoding), seed \(seed): not a GraftError: \(error)")
            }
        }
        #expect(errors > 100, "seed \(seed): only \(errors) errors")
    }

    /// A decoded document carries its check: pasting it does not check it again, and changing it makes
    /// the next check run.
    @Test func aDecodedDocumentIsCheckedOnce() throws {
        var clipboard = try ClipboardEncoding.decode(try ClipboardEncoding.json.encode(ClipboardSamples.small))
        #expect(clipboard == ClipboardSamples.small)
        try clipboard.check()
        clipboard.objects[0].relationships = [.init("employees", ["o9"])]
        #expect(throws: GraftError.self) { try clipboard.check() }
    }

    /// A large document read object by object from a mapped file stays in bounded memory: the reader hands
    /// the pages it has read back.
    @Test func aLargeDocumentIsReadInBoundedMemory() throws {
        let folder = try ReaderScratchFolder()
        let url = folder.url.appendingPathComponent("large.json")
        let count = 300_000
        try #require(FileManager.default.createFile(atPath: url.path, contents: nil))
        let file = try FileHandle(forWritingTo: url)
        let padding = String(repeating: "x", count: 160)
        var chunk = """
            {"format": "graft-clipboard", "version": 1,
             "encoding": {"date": "seconds since 2001-01-01T00:00:00Z", "decimal": "string", "binary": "base64", "nonFiniteNumbers": "strings NaN, Infinity, -Infinity", "integer64": "number"},
             "model": {"entities": [{"name": "Thing", "versionHash": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=", "attributes": [{"name": "text", "type": "string"}, {"name": "number", "type": "integer64"}], "relationships": [{"name": "next", "toMany": false}]}], "versionIdentifiers": []},
             "roots": ["o1"],
             "objects": [

            """
        for index in 1...count {
            let next = index < count ? "\"o\(index + 1)\"" : "[]"
            chunk += index == 1 ? "" : ",\n"
            chunk += "{\"id\": \"o\(index)\", \"entity\": \"Thing\", \"attributes\": {\"text\": \"\(padding)\", "
            chunk += "\"number\": \(index)}, \"relationships\": {\"next\": \(next)}}"
            if chunk.utf8.count > 1 << 20 {
                file.write(Data(chunk.utf8))
                chunk = ""
            }
        }
        chunk += "\n ],\n \"references\": []}\n"
        file.write(Data(chunk.utf8))
        try file.close()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)

        var reader = try ClipboardReader(contentsOf: url)
        #expect(reader.objectCount == count)
        var highest = Self.residentBytes(ofMapping: url)
        var read = 0
        while let object = try reader.next() {
            read += 1
            if object.id != "o\(read)" { Issue.record("object \(read) is \(object.id)") }
            if read % 10_000 == 0 { highest = max(highest, Self.residentBytes(ofMapping: url)) }
        }
        #expect(read == count)
        #expect(highest > 0, "the file is mapped")
        #expect(highest < size / 8, "reading \(size) bytes kept \(highest) of them in memory")
    }

    /// How much of the mapping of the file at `url` is in this process's memory (tests run side by side,
    /// so the process's whole size says nothing).
    static func residentBytes(ofMapping url: URL) -> Int {
        // Read to the end: the file's size says 0, so readers that trust it stop early.
        let descriptor = open("/proc/self/smaps", O_RDONLY)
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        var inMapping = false
        var total = 0
        for line in text.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") && !line.hasSuffix("kB") {
                inMapping = line.hasSuffix(url.path)
            } else if inMapping, line.hasPrefix("Rss:") {
                total += (Int(line.dropFirst(4).trimmingCharacters(in: .whitespaces).dropLast(3)) ?? 0) * 1024
            }
        }
        return total
    }
}
/// A folder of its own for a test, removed when the test is done.
final class ReaderScratchFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("graft-reader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
