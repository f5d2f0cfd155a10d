import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// Every snapshot of a reader, keyed by reference.
func allSnapshots(_ reader: any StoreReader) throws -> [ObjectRef: Snapshot] {
    var snapshots: [ObjectRef: Snapshot] = [:]
    try reader.forEachSnapshot { snapshot in
        #expect(snapshots[snapshot.ref] == nil, "\(snapshot.ref) read twice")
        snapshots[snapshot.ref] = snapshot
    }
    return snapshots
}

/// Snapshots with unordered to-manys sorted, so two documents compare regardless of set order.
func normalized(_ snapshots: [ObjectRef: Snapshot], model: Model) -> [ObjectRef: Snapshot] {
    snapshots.mapValues { snapshot in
        var copy = snapshot
        let entity = model.descriptions[snapshot.ref.entity]
        for relationship in entity.relationships where relationship.isToMany && !relationship.isOrdered {
            if case .toMany(let refs) = copy.relationships[relationship.index] {
                copy.relationships[relationship.index] = .toMany(refs.sorted())
            }
        }
        return copy
    }
}

/// The first few differences between two documents, for readable failures.
func differences(_ lhs: [ObjectRef: Snapshot], _ rhs: [ObjectRef: Snapshot], model: Model, limit: Int = 5) -> [String] {
    var found: [String] = []
    for ref in Set(lhs.keys).union(rhs.keys).sorted() where found.count < limit {
        let entity = model.descriptions[ref.entity]
        guard let a = lhs[ref], let b = rhs[ref] else {
            found.append("\(entity.name) p\(ref.key): only in \(lhs[ref] == nil ? "second" : "first")")
            continue
        }
        for (index, attribute) in entity.attributes.enumerated() where a.attributes[index] != b.attributes[index] {
            found.append(
                "\(entity.name) p\(ref.key).\(attribute.name): \(String(describing: a.attributes[index])) vs \(String(describing: b.attributes[index]))"
            )
        }
        for relationship in entity.relationships
        where a.relationships[relationship.index] != b.relationships[relationship.index] {
            found.append(
                "\(entity.name) p\(ref.key).\(relationship.name): \(a.relationships[relationship.index]) vs \(b.relationships[relationship.index])"
            )
        }
    }
    return found
}

@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
struct SQLiteCorpusTests {
    /// Every SQLite store, those without a model cache included (read with a model inferred from their
    /// tables; below, those with a model file are also read with it).
    static let stores = Corpus.sqliteStores

    @Test(arguments: stores)
    func readsEveryObjectAndRoundTripsThroughANewStore(path: String) throws {
        let source = Corpus.url(path)
        let before = try Data(contentsOf: source)
        let walBefore = try? Data(contentsOf: URL(fileURLWithPath: source.path + "-wal"))
        // The corpus copies left the stores' external-data folders behind.
        let reader = try SQLiteStoreReader(url: source, model: nil, missingExternalData: .omit)
        let snapshots = try allSnapshots(reader)
        let counts = try reader.counts()
        #expect(snapshots.count == counts.values.reduce(0, +))
        // Every row of every entity table is an object.
        var rows = 0
        for table in reader.schema.tables {
            let statement = try reader.database.prepare("SELECT count(*) FROM \(SQLiteName.quoted(table.name))")
            #expect(try statement.step())
            rows += Int(statement.int64(0))
        }
        #expect(snapshots.count == rows, "\(path): \(snapshots.count) objects, \(rows) rows")
        for (name, count) in counts {
            let entity = try #require(reader.model.entity(named: name))
            #expect(snapshots.values.filter { $0.ref.entity == entity.index }.count == count, "\(name)")
        }

        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("copy.sqlite")
        // A model inferred from the tables has hashes of its own: the copy records those.
        let metadata =
            reader.modelSource == .inferred
            ? StoreMetadata.make(
                for: reader.model, storeType: .sqlite, identifier: reader.metadata.identifier,
                keeping: reader.metadata.values)
            : reader.metadata
        let writer = try SQLiteStoreWriter(url: copy, model: reader.model, metadata: metadata, overwrite: false)
        for snapshot in snapshots.values.sorted(by: { $0.ref < $1.ref }) { try writer.write(snapshot) }
        try writer.finish()
        let again = try SQLiteStoreReader(url: copy, model: reader.model)
        #expect(again.metadata.identifier == reader.metadata.identifier)
        let written = try allSnapshots(again)
        let diff = differences(
            normalized(written, model: reader.model), normalized(snapshots, model: reader.model), model: reader.model)
        #expect(diff.isEmpty, "\(diff.joined(separator: "\n"))")
        // Reading never changed the user's files.
        #expect(try Data(contentsOf: source) == before)
        #expect((try? Data(contentsOf: URL(fileURLWithPath: source.path + "-wal"))) == walBefore)
        #expect(!FileManager.default.fileExists(atPath: source.path + "-shm") || path.contains("WAL"))
    }

    @Test func storesWithoutAModelCacheReadWithTheirModel() throws {
        let model = try ModelFile.load(Corpus.url("recipes/Recipes.xcdatamodel")).current
        let reader = try SQLiteStoreReader(url: Corpus.url("recipes/Recipes.sqlite"), model: model)
        let counts = try reader.counts()
        let database = try SQLiteDatabase.openForReading(Corpus.url("recipes/Recipes.sqlite"))
        var rows = 0
        for table in ["ZRECIPE", "ZINGREDIENT", "ZRECIPETYPE", "ZIMAGE"] {
            let statement = try database.prepare("SELECT count(*) FROM \(table)")
            #expect(try statement.step())
            rows += Int(statement.int64(0))
        }
        #expect(counts.values.reduce(0, +) == rows)
        let snapshots = try allSnapshots(reader)
        #expect(snapshots.count == counts.values.reduce(0, +))
        let recipe = try #require(model.entity(named: "Recipe"))
        let withIngredients = snapshots.values.filter {
            $0.ref.entity == recipe.index
                && !$0.relationships[recipe.relationshipIndexByName["ingredients"]!].refs.isEmpty
        }
        #expect(!withIngredients.isEmpty)

        // CoreDataBooks' store was written before `contents` was added to Book (the manifest notes the
        // hand-added column): with its Xcode 3 model as it is, the hashes differ and say so.
        let books = try ModelFile.load(Corpus.url("coredatabooks-gilpa/CoreDataBooks.xcdatamodel")).current
        let error = try #require(throws: GraftError.self) {
            try SQLiteStoreReader(url: Corpus.url("coredatabooks-gilpa/CoreDataBooks.sqlite"), model: books)
        }
        #expect(error.code == .modelMismatch)
        #expect(error.message.contains("entities that differ: Book"))
        var book = books.entities[0]
        book.attributes.removeAll { $0.name == "contents" }
        let writer = try Model(entities: [book])
        let bookStore = try SQLiteStoreReader(
            url: Corpus.url("coredatabooks-gilpa/CoreDataBooks.sqlite"), model: writer)
        #expect(try bookStore.counts() == ["Book": 12])
    }

    @Test func aMissingExternalFileIsAnErrorUnlessAskedToOmit() throws {
        let url = Corpus.url("wire-ios-data-model/Tests/Resources/store2-7.wiredatabase")
        let strict = try SQLiteStoreReader(url: url, model: nil)
        let error = try #require(throws: GraftError.self) { try strict.forEachSnapshot { _ in } }
        #expect(error.description.contains("User p1: imageMediumData"))
        #expect(
            error.description.contains(
                "_EXTERNAL_DATA/30084A1C-76CF-4976-8312-8E8EFCF6F510: the value is kept in an external file that is missing (--omit-missing-external-data"
            ))
        let lenient = try SQLiteStoreReader(url: url, model: nil, missingExternalData: .omit)
        try lenient.forEachSnapshot { _ in }
        #expect(!lenient.warnings.isEmpty)
    }

    @Test func dataStillInTheWALIsRead() throws {
        let reader = try SQLiteStoreReader(
            url: Corpus.url(
                "wibosco-migration/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_WAL.sqlite"
            ),
            model: nil)
        // The main file alone holds no Post rows; the -wal holds 84.
        #expect(try reader.counts()["Post"] == 84)
    }
}
