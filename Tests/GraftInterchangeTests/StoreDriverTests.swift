import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel
import GraftTestSupport
import Testing

/// The store drivers as everything above the store modules uses them: found by name, file extension and
/// content, and each writing, reading, creating and opening its own documents the same way.
@Suite struct StoreDriverTests {
    static let model = Company.v2

    /// A new department, keyed by the store.
    func research(for store: any PersistentStore) throws -> Snapshot {
        let department = try #require(Self.model.entity(named: "Department"))
        let key = try #require(try store.allocateKeys(rootEntity: department.rootIndex, count: 1).first)
        var snapshot = Snapshot(entity: department, key: key)
        snapshot[attribute: "name", in: department] = .string("Research")
        return snapshot
    }

    func document(_ format: StoreFormat, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("company.\(format.driver.fileExtensions[0])")
        try format.driver.write(
            ImperfectCompany.snapshots(), to: url, model: Self.model,
            metadata: StoreMetadata.make(for: Self.model, storeType: format.storeType), overwrite: false)
        return url
    }

    @Test func namesAndExtensionsPickOneFormatEach() {
        let names = StoreFormat.allCases.map(\.rawValue)
        #expect(names == ["sqlite", "xml", "binary"])
        let extensions = StoreFormat.allCases.flatMap(\.driver.fileExtensions)
        #expect(Set(extensions).count == extensions.count)
        for format in StoreFormat.allCases {
            #expect(StoreFormat(rawValue: format.rawValue) == format)
            for suffix in format.driver.fileExtensions {
                #expect(StoreFormat.forExtension(URL(fileURLWithPath: "/tmp/a.\(suffix.uppercased())")) == format)
            }
        }
        #expect(StoreFormat(rawValue: "json") == nil)
        #expect(StoreFormat.forExtension(URL(fileURLWithPath: "/tmp/a.json")) == nil)
    }

    @Test(arguments: StoreFormat.allCases)
    func eachFormatRecognisesItsOwnDocumentsOnly(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try document(format, in: folder)
        let prefix = try #require(try FileHandle(forReadingFrom: url).read(upToCount: 4096))
        for other in StoreFormat.allCases {
            #expect(other.driver.recognizes(prefix: prefix) == (other == format), "\(other) on \(format)")
        }
        #expect(try StoreFormat.detect(url) == format)
        #expect(StoreFormat.detect(prefix: Data("{\"format\":".utf8)) == nil)
    }

    @Test(arguments: StoreFormat.allCases)
    func aDocumentReadsBackAsItsDriverWroteIt(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try document(format, in: folder)
        let reader = try format.driver.reader(at: url, model: nil, options: StoreReadOptions())
        let counts = try reader.counts()
        #expect(counts["Department"] == 1 && counts["Employee"] == 3 && counts.values.reduce(0, +) == 4)
        var names: [String] = []
        try reader.forEachSnapshot { snapshot in
            let entity = reader.model.descriptions[snapshot.ref.entity]
            if case .string(let name)? = snapshot[attribute: "name", in: entity] { names.append(name) }
        }
        #expect(names.sorted() == ["Ann", "Bob", "Tiny", "Zed"])
        #expect(try format.driver.recordedVersionHashes(at: url) == Self.model.versionHashes)
        #expect(try StoreFormat.recordedVersionHashes(of: url) == Self.model.versionHashes)
    }

    @Test(arguments: StoreFormat.allCases)
    func aWriteThatFailsLeavesNothing(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("broken.\(format.rawValue)")
        let department = try #require(Self.model.entity(named: "Department"))
        // A snapshot with too few attribute values for its entity does not fit it.
        let misfit = Snapshot(ref: ObjectRef(entity: department.index, key: 9), attributes: [], relationships: [])
        #expect(throws: GraftError.self) {
            try format.driver.write(
                ImperfectCompany.snapshots() + [misfit], to: url, model: Self.model,
                metadata: StoreMetadata.make(for: Self.model, storeType: format.storeType), overwrite: false)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test(arguments: StoreFormat.allCases)
    func aCreatedStoreIsWrittenWhenFirstSaved(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("new.\(format.rawValue)")
        let store = try format.driver.create(url, model: Self.model)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        try store.save(StoreChanges(inserted: [research(for: store)]))
        #expect(try StoreFormat.detect(url) == format)
        let counts = try format.driver.reader(at: url, model: nil, options: StoreReadOptions()).counts()
        #expect(counts["Department"] == 1)
        #expect(throws: GraftError.self) { try format.driver.create(url, model: Self.model) }
    }

    @Test(arguments: StoreFormat.allCases)
    func aStoreOpenedForReadingIsNeverWritten(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try document(format, in: folder)
        let before = try Data(contentsOf: url)
        let store = try format.driver.openForReading(url, model: nil, options: StoreReadOptions())
        let change = StoreChanges(inserted: [try research(for: store)])
        #expect(throws: GraftError.self) { try store.save(change) }
        #expect(try Data(contentsOf: url) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [url.lastPathComponent])
    }

    @Test(arguments: StoreFormat.allCases)
    func anOpenedStoreSavesInPlace(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try document(format, in: folder)
        let store = try StoreFormat.openExclusively(url, model: nil)
        try store.save(StoreChanges(inserted: [research(for: store)]))
        let counts = try format.driver.reader(at: url, model: nil, options: StoreReadOptions()).counts()
        #expect(counts["Department"] == 2 && counts.values.reduce(0, +) == 5)
    }
}
