import Foundation
import GraftBinary
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

/// Corrupt binary stores, generated from a valid one: each gives a `GraftError` that says what and
/// where, and a conversion that meets it leaves no output behind.
@Suite struct InvalidInputTests {
    /// A valid document's bytes, with the map and metadata ranges.
    static let valid: (bytes: Data, header: BinaryStoreHeader) = {
        let scratch = Scratch()
        let url = scratch.url("valid.binary")
        try! writeStore(Company.edgeDocument, to: url)
        let bytes = try! Data(contentsOf: url)
        return (bytes, try! BinaryStoreHeader(decoding: bytes, fileSize: bytes.count))
    }()

    static var validMetadata: Data { valid.bytes.subdata(in: valid.header.metadataRange) }

    static var validMap: Data { valid.bytes.subdata(in: valid.header.mapRange) }

    /// The valid document with its metadata dictionary changed by `edit`.
    static func withMetadata(_ edit: (inout PropertyList.Dictionary) -> Void) throws -> Data {
        var values = try #require(
            try KeyedArchive(data: validMetadata).topObject(forKey: "metadata")?.decodePropertyList().dictionaryValue)
        edit(&values)
        var archiver = KeyedArchiver()
        let root = archiver.encodePropertyList(.dictionary(values))
        return assemble(map: validMap, metadata: archiver.finish(top: ["metadata": root]).encode(format: .binary))
    }

    /// The bytes with a big-endian header field replaced.
    static func patch(_ field: (offset: Int, size: Int), _ value: UInt64, in bytes: Data = valid.bytes) -> Data {
        var bytes = bytes
        for index in 0..<field.size {
            bytes[field.offset + index] = UInt8(truncatingIfNeeded: value >> UInt64(8 * (field.size - 1 - index)))
        }
        return bytes
    }

    /// A file of a header, this map and this metadata.
    static func assemble(map: Data, metadata: Data = validMetadata) -> Data {
        let header = BinaryStoreHeader(
            metadataOffset: 64 + UInt64(map.count), metadataLength: UInt64(metadata.count),
            mapLength: UInt64(map.count),
            primaryKeyCounter: 1)
        return header.encoded + map + metadata
    }

    typealias Node = HandMade.Node

    static func handMap(_ nodes: [Node]) -> Data { HandMade.map(nodes) }

    /// A Project node as Core Data writes it: deadline, title, then `NSNull` for its two relationships.
    static func project(_ key: Int64, title: HandMade.Slot = "Apollo", related: [String: [Int64]]? = nil) -> Node {
        Node(key: key, entity: "Project", attributes: .slots([.nsNull, title, .nsNull, .nsNull]), related: related)
    }

    /// A Department node as Core Data writes it: budget, code, location, name, then `NSNull` for
    /// `employees`, `projects` and the fetched property `recentHires`.
    static func department(_ key: Int64, related: [String: [Int64]]? = nil) -> Node {
        Node(
            key: key, entity: "Department",
            attributes: .slots([.value(.integer(250)), 7, "Lab", "Science", .nsNull, .nsNull, .nsNull]),
            related: related)
    }

    struct Corruption: CustomTestStringConvertible, Sendable {
        let name: String
        let code: GraftError.Code
        let fragment: String
        let bytes: @Sendable () -> Data
        var testDescription: String { name }
    }

    typealias Field = BinaryStoreLayout.HeaderField

    static let corruptions: [Corruption] = [
        Corruption(name: "empty file", code: .malformedInput, fragment: "too short for the 64-byte header") { Data() },
        Corruption(name: "truncated header", code: .malformedInput, fragment: "too short for the 64-byte header") {
            valid.bytes.prefix(40)
        },
        Corruption(name: "truncated body", code: .malformedInput, fragment: "beyond the end of the file") {
            valid.bytes.prefix(valid.bytes.count - 10)
        },
        Corruption(name: "bad magic", code: .malformedInput, fragment: "does not start with 'CoreData'") {
            Data("CoreDatX".utf8) + valid.bytes.dropFirst(8)
        },
        Corruption(name: "a SQLite file", code: .malformedInput, fragment: "not a binary store") {
            Data("SQLite format 3\u{0}".utf8) + Data(count: 200)
        },
        Corruption(name: "format version 2", code: .unsupportedFormat, fragment: "format version 2") {
            patch(Field.formatVersion, 2)
        },
        Corruption(name: "map offset beyond the end", code: .malformedInput, fragment: "beyond the end of the file") {
            patch(Field.mapOffset, UInt64(valid.bytes.count + 100))
        },
        Corruption(name: "map length beyond 2^64", code: .malformedInput, fragment: "beyond 2⁶⁴") {
            patch(Field.mapLength, UInt64.max)
        },
        Corruption(name: "metadata length beyond the end", code: .malformedInput, fragment: "metadata") {
            patch(Field.metadataLength, valid.header.metadataLength + 1)
        },
        Corruption(name: "map inside the header", code: .malformedInput, fragment: "inside the 64-byte header") {
            patch(Field.mapOffset, 8)
        },
        Corruption(name: "overlapping ranges", code: .malformedInput, fragment: "overlap") {
            patch(Field.metadataOffset, 80, in: patch(Field.metadataLength, 16))
        },
        Corruption(name: "map is not a property list", code: .malformedInput, fragment: "does not start with 'bplist'")
        {
            assemble(map: Data(repeating: 0xAB, count: 100))
        },
        Corruption(name: "map is not a keyed archive", code: .malformedInput, fragment: "not a keyed archive") {
            assemble(map: BinaryPropertyList.encode(["mapData": 1, "nodes": [1, 2, 3]]))
        },
        Corruption(name: "map without mapData", code: .malformedInput, fragment: "no 'mapData' object") {
            var archiver = KeyedArchiver()
            let root = archiver.encode("nothing")
            return assemble(map: archiver.finish(top: ["root": root]).encode(format: .binary))
        },
        Corruption(name: "map truncated inside", code: .malformedInput, fragment: "object map") {
            let map = valid.bytes.subdata(in: valid.header.mapRange)
            return assemble(map: map.prefix(map.count / 2) + map.suffix(32))
        },
        Corruption(name: "metadata is not an archive", code: .malformedInput, fragment: "metadata") {
            assemble(map: valid.bytes.subdata(in: valid.header.mapRange), metadata: Data("junk, not a plist".utf8))
        },
        Corruption(name: "node naming an unknown entity", code: .malformedInput, fragment: "names the entity 'Ghost'") {
            assemble(map: handMap([Node(key: 1, entity: "Ghost", attributes: .slots([]))]))
        },
        Corruption(name: "relationship to a missing key", code: .malformedInput, fragment: "primary key 99") {
            assemble(map: handMap([project(1, related: ["department": [99]])]))
        },
        Corruption(
            name: "relationship to the wrong entity", code: .malformedInput, fragment: "where a Department belongs"
        ) {
            assemble(map: handMap([project(1, related: ["department": [2]]), project(2)]))
        },
        Corruption(name: "to-one holding two objects", code: .malformedInput, fragment: "to-one relationship holds 2") {
            assemble(map: handMap([project(1, related: ["department": [3, 3]]), department(3)]))
        },
        Corruption(name: "unknown relationship", code: .modelMismatch, fragment: "relationship 'sponsor'") {
            assemble(map: handMap([project(1, related: ["sponsor": []])]))
        },
        Corruption(name: "value of the wrong type", code: .typeMismatch, fragment: "holds an integer where a String") {
            assemble(map: handMap([project(1, title: 5)]))
        },
        Corruption(name: "wrong number of values", code: .malformedInput, fragment: "has 3 values") {
            assemble(map: handMap([Node(key: 1, entity: "Project", attributes: .slots([.nsNull, "A", "B"]))]))
        },
        Corruption(name: "duplicate key", code: .malformedInput, fragment: "appears twice") {
            assemble(map: handMap([project(1), project(1)]))
        },
        Corruption(name: "node filed under another key", code: .malformedInput, fragment: "files it under 7") {
            var node = project(1)
            node.filedUnder = 7
            return assemble(map: handMap([node]))
        },
    ]

    /// Converts `input` into a new binary store in `scratch`, as `graft convert` would.
    static func convert(_ input: URL, into output: URL, model: Model?) throws {
        let reader = try BinaryStoreReader(url: input, model: model)
        var writer = try BinaryStoreWriter(url: output, model: reader.model, metadata: reader.metadata)
        do {
            try reader.forEachSnapshot { try writer.write($0) }
            try writer.finish()
        } catch {
            writer.cancel()
            throw error
        }
    }

    static func expectFailure(
        _ bytes: Data, model: Model? = Company.model, code: GraftError.Code, fragment: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let scratch = Scratch()
        let input = scratch.url("input.binary")
        try bytes.write(to: input)
        let outputFolder = scratch.url("out")
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let error = #expect(throws: GraftError.self, sourceLocation: sourceLocation) {
            try convert(input, into: outputFolder.appendingPathComponent("output.binary"), model: model)
        }
        guard let error else { return }
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(error.description.contains(fragment), "\(error)", sourceLocation: sourceLocation)
        #expect(error.context.first == .file(input.relativePath), "\(error)", sourceLocation: sourceLocation)
        let left = try FileManager.default.contentsOfDirectory(atPath: outputFolder.path)
        #expect(left.isEmpty, "left behind: \(left)", sourceLocation: sourceLocation)
    }

    @Test(arguments: corruptions)
    func corruptStoreGivesAClearError(corruption: Corruption) throws {
        try Self.expectFailure(corruption.bytes(), code: corruption.code, fragment: corruption.fragment)
    }

    @Test func mismatchedModelHashesAreRefused() throws {
        try Self.expectFailure(
            Self.valid.bytes, model: Company.otherVersion, code: .modelMismatch, fragment: "Department")
    }

    @Test func missingModelAsksForOne() throws {
        let bytes = try Self.withMetadata { $0[StoreMetadata.graftModelKey] = nil }
        try Self.expectFailure(bytes, model: nil, code: .notFound, fragment: "--model")
    }

    @Test(arguments: [
        (PropertyList.string("NSStoreType"), "the store's UUID 'NSStoreType' is not a UUID"),
        ("{5A1D7C1E-0000-4000-8000-000000000001}", "UUID '{5A1D7C1E-0000-4000-8000-000000000001}' is not a UUID"),
        (.integer(7), "the store's UUID is an integer, not a string"),
    ])
    func aStoreUUIDThatIsNotOneIsAnError(uuid: PropertyList, fragment: String) throws {
        let bytes = try Self.withMetadata { $0["NSStoreUUID"] = uuid }
        try Self.expectFailure(bytes, code: .malformedInput, fragment: fragment)
        let scratch = Scratch()
        let input = scratch.url("uuid.binary")
        try bytes.write(to: input)
        let error = try #require(throws: GraftError.self) { try BinaryStoreReader(url: input, model: Company.model) }
        #expect(error.context == [.file(input.relativePath), .key("NSStoreUUID")], "\(error)")
    }

    @Test func aStoreUUIDInLowerCaseIsKeptAsWritten() throws {
        let lower = "5a1d7c1e-0000-4000-8000-00000000000a"
        let scratch = Scratch()
        let input = scratch.url("lower.binary")
        try Self.withMetadata { $0["NSStoreUUID"] = .string(lower) }.write(to: input)
        #expect(try BinaryStoreReader(url: input, model: Company.model).metadata.identifier == lower)
    }

    @Test func corruptCarriedModelIsAnError() throws {
        let bytes = try Self.withMetadata { $0[StoreMetadata.graftModelKey] = .data(Data("not deflate".utf8)) }
        try Self.expectFailure(
            bytes, model: nil, code: .malformedInput, fragment: "GraftModelCache: the data is not raw deflate")
    }

    @Test func missingFileIsNotFound() throws {
        let scratch = Scratch()
        let error = #expect(throws: GraftError.self) {
            try BinaryStoreReader(url: scratch.url("absent.binary"), model: Company.model)
        }
        #expect(error?.code == .fileNotFound)
    }

    @Test func handBuiltArchiveIsRead() throws {
        // GraftCore's KeyedArchiver shares scalars and uses the smallest reference sizes: a different
        // writer from BinaryStoreWriter, whose output the reader must take as well.
        let map = Self.handMap([
            Self.project(1, related: ["department": [3]]), Self.project(2, title: "B"),
            Self.department(3, related: ["projects": [2, 1]]),
        ])
        let scratch = Scratch()
        let url = scratch.url("hand.binary")
        try Self.assemble(map: map).write(to: url)
        let read = try readStore(url)
        #expect(read.count == 3)
        let science = try #require(read.first { $0.ref == Company.ref("Department", 3) })
        let entity = Company.entity("Department")
        #expect(science[attribute: "name", in: entity] == "Science")
        #expect(science[attribute: "budget", in: entity] == .decimal(250))
        #expect(
            science[relationship: "projects", in: entity]
                == .toMany([Company.ref("Project", 2), Company.ref("Project", 1)]))
        #expect(science[relationship: "employees", in: entity] == .toMany([]))
    }
}
