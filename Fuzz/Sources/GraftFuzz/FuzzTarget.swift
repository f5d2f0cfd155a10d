import Foundation
import Graft
@_spi(GraftInternal) import GraftModel

/// One reader to fuzz: a name for the command line, a line for `--help`, and what to do with one input.
///
/// A target reads the input as the reader's users would (a file on disk for stores, bytes for the
/// rest) and goes on as far as a reader's caller would: every snapshot of a store, the model a clipboard
/// carries, the description and evaluation of a predicate. Throwing a `GraftError` is the expected way
/// to refuse an input; a trap, a sanitizer report, a leak, a hang or any other error is a finding.
struct FuzzTarget: Sendable {
    let name: String
    let summary: String
    let body: @Sendable (Data) throws -> Void
    /// Builds what the target keeps for the whole run, before the first input.
    var prepare: @Sendable () -> Void = {}

    /// The target this process fuzzes.
    nonisolated(unsafe) static var current: FuzzTarget?

    static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }

    /// Whether to print how each input ended (GRAFT_FUZZ_VERBOSE=1): to see what a seed or a finding
    /// does, with `graft-fuzz TARGET -runs=0 FILE…`.
    static let verbose = ProcessInfo.processInfo.environment["GRAFT_FUZZ_VERBOSE"] == "1"

    /// Prints a line to standard error at once (standard output is buffered, and lost when an input
    /// crashes the process).
    static func say(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Runs the target on one input, turning an error that is not a `GraftError` into a finding.
    func run(_ bytes: UnsafeRawBufferPointer) {
        let data = bytes.isEmpty ? Data() : Data(bytes)
        do {
            try body(data)
            if Self.verbose { Self.say("\(name): read (\(data.count) bytes)") }
        } catch let error as GraftError {
            // Refused with an error the caller can show: the expected outcome for bad input.
            if Self.verbose { Self.say("\(name): refused (\(data.count) bytes): \(error)") }
        } catch {
            fatalError("\(name): the reader threw \(type(of: error)), not a GraftError: \(error)")
        }
    }

    static let all: [FuzzTarget] = [
        FuzzTarget(
            name: "sqlite-store", summary: "a Core Data SQLite store, with its model cache (SQLiteStoreReader)"
        ) { data in
            let url = try Scratch.file(named: "store.sqlite", contents: data)
            let reader = try SQLiteStoreReader(url: url, model: nil, missingExternalData: .omit)
            _ = try reader.counts()
            _ = reader.keyOffsets
            try reader.forEachSnapshot { _ in }
        },
        FuzzTarget(
            name: "sqlite-values",
            summary: "real SQLite stores with values replaced by SQL, any type in any column (SQLiteStoreReader)",
            body: SQLiteValueEdits.run, prepare: { _ = SQLiteValueEdits.bases }),
        FuzzTarget(
            name: "model-cache",
            summary: "a store's model cache: raw deflate, then a compiled model (RawDeflate, CompiledModelReader)"
        ) { data in
            var warnings: [String] = []
            let archive = try RawDeflate.inflate(data)
            let model = try CompiledModelReader.read(archive, path: "Z_MODELCACHE", warnings: &warnings)
            try RoundTrip.compiledModel(model)
        },
        FuzzTarget(name: "xml-store", summary: "a Core Data XML store (XMLStoreReader)") { data in
            let url = try Scratch.file(named: "store.xml", contents: data)
            let reader = try XMLStoreReader(url: url, model: nil)
            _ = reader.keyOffsets
            try reader.forEachSnapshot { _ in }
        },
        FuzzTarget(name: "binary-store", summary: "a Core Data binary store (BinaryStoreReader)") { data in
            let url = try Scratch.file(named: "store.binary", contents: data)
            _ = try? BinaryStoreReader.recordedMetadata(at: url)
            let reader = try BinaryStoreReader(url: url, model: nil)
            _ = reader.keyOffsets
            try reader.forEachSnapshot { _ in }
        },
        FuzzTarget(name: "xcdatamodel", summary: "an .xcdatamodel's contents file (XcdatamodelReader)") { data in
            var warnings: [String] = []
            let model = try XcdatamodelReader.read(data, path: "contents", warnings: &warnings)
            _ = try XcdatamodelReader.read(XcdatamodelWriter.contents(of: model))
            try RoundTrip.compiledModel(model)
        },
        FuzzTarget(
            name: "mapping-model",
            summary: "a mapping model, compiled (.cdm) or Xcode's xcmapping.xml (MappingModel.read)"
        ) { data in
            // The input's first bytes choose the form, as MappingModel.load does.
            let mapping =
                data.starts(with: Array("bplist".utf8))
                ? try MappingModel.read(compiled: data, path: "Fuzz.cdm")
                : try MappingModel.read(xcmapping: data, path: "Fuzz.xcmappingmodel/xcmapping.xml")
            // Every expression as the migration engine reads it.
            for entityMapping in mapping.entityMappings {
                for property in entityMapping.attributeMappings + entityMapping.relationshipMappings {
                    guard let text = property.valueExpression else { continue }
                    _ = try? GraftPredicate.Expression.parse(text)
                }
                if let filter = entityMapping.filterPredicate { _ = try? GraftPredicate.parse(filter) }
            }
        },
        FuzzTarget(name: "mom", summary: "a compiled model, .mom (CompiledModelReader)") { data in
            var warnings: [String] = []
            let model = try CompiledModelReader.read(data, path: "model.mom", warnings: &warnings)
            try RoundTrip.compiledModel(model)
            _ = try XcdatamodelReader.read(XcdatamodelWriter.contents(of: model))
        },
        clipboard(.json),
        clipboard(.plist),
        clipboard(.binaryPlist),
        clipboard(.xml),
        FuzzTarget(
            name: "predicate", summary: "a predicate in Apple's format: parse, describe, evaluate (GraftPredicate)",
            body: { data in
                let predicate = try GraftPredicate(format: String(decoding: data, as: UTF8.self))
                _ = try? GraftPredicate(format: predicate.description)
                _ = try predicate.evaluate(with: Person.sample, variables: ["FETCH_SOURCE": Person.sample])
            }, prepare: { _ = Person.sample }),
        FuzzTarget(
            name: "property-list", summary: "a property list: binary, XML or OpenStep text (PropertyList.decode)"
        ) { data in
            let list = try PropertyList.decode(data)
            _ = try PropertyList.decode(list.encode(format: .binary))
            _ = try PropertyList.decode(list.encode(format: .xml))
        },
    ]

    /// A clipboard encoding: decode, read the model it carries, encode again and decode that.
    static func clipboard(_ encoding: ClipboardEncoding) -> FuzzTarget {
        let name = encoding == .binaryPlist ? "clipboard-bplist" : "clipboard-\(encoding.rawValue)"
        return FuzzTarget(name: name, summary: "a clipboard document, \(encoding.displayName) (ClipboardEncoding)") {
            data in
            let clipboard = try encoding.decode(data)
            _ = try? clipboard.model()
            _ = try encoding.decode(encoding.encode(clipboard))
        }
    }
}

/// What a reader's result is written back as, read again: a writer must cope with whatever a reader
/// accepted.
enum RoundTrip {
    static func compiledModel(_ model: Model) throws {
        _ = try CompiledModelReader.read(CompiledModelWriter.archive(model))
    }
}

/// A small object graph for predicates to be evaluated on: key paths, to-ones, to-manys and every
/// attribute type a predicate can compare.
final class Person: KeyValueCoding, @unchecked Sendable {
    let name: String
    let age: Int64
    var manager: Person?
    var reports: [Person] = []

    init(name: String, age: Int64) {
        self.name = name
        self.age = age
    }

    static let sample: Person = {
        let boss = Person(name: "Ann", age: 51)
        let bob = Person(name: "Bob", age: 29)
        let cy = Person(name: "Cy", age: 34)
        bob.manager = boss
        cy.manager = boss
        boss.reports = [bob, cy]
        return bob
    }()

    func value(forKey key: String) -> Any? {
        switch key {
        case "name": return name
        case "age": return age
        case "salary": return Decimal(string: "45000.50")
        case "rating": return 4.5
        case "hireDate": return Date(timeIntervalSinceReferenceDate: 300)
        case "isRemote": return false
        case "badge": return UUID(uuidString: "6E9D3F2A-9C1B-4C1E-8F4B-2D7A5B3C1E0F")
        case "photo": return Data([0, 1, 2, 3])
        case "homepage": return URL(string: "https://example.com/bob")
        case "manager": return manager
        case "reports": return reports as [any KeyValueCoding]
        default: return nil
        }
    }
}
