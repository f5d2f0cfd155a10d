import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// The schema Graft derives from a model, compared with the schema Apple's Core Data created.
@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
struct SQLiteSchemaTests {
    /// Tables with their columns, join tables included, bookkeeping tables left out; index names.
    struct Layout: Equatable {
        var tables: [String: Set<String>]
        var indexes: Set<String>
    }

    static func layout(of database: SQLiteDatabase) throws -> Layout {
        var tables: [String: Set<String>] = [:]
        for (_, table) in try SQLiteSchema.actualColumns(in: database)
        where !["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"].contains(table.name) && !table.name.hasPrefix("sqlite_")
            && !table.name.hasPrefix("ACHANGE") && !table.name.hasPrefix("ATRANSACTION")
        {
            tables[table.name] = Set(table.columns)
        }
        var indexes: Set<String> = []
        let statement = try database.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        while try statement.step() { indexes.insert(statement.text(0)!) }
        return Layout(tables: tables, indexes: indexes)
    }

    static func layout(of schema: SQLiteSchema) -> Layout {
        var tables: [String: Set<String>] = [:]
        for table in schema.tables { tables[table.name] = Set(table.columns.map(\.name)) }
        for join in schema.joinTables {
            tables[join.name] = Set(
                [join.sourceColumn, join.destinationColumn]
                    + [join.sourceOrderColumn, join.destinationOrderColumn].compactMap { $0 })
        }
        let indexes = Set(
            schema.indexStatements.map { statement in
                String(statement.split(separator: " ").dropFirst(statement.hasPrefix("CREATE UNIQUE") ? 3 : 2).first!)
            })
        return Layout(tables: tables, indexes: indexes)
    }

    /// Stores whose schema Core Data created in one go for the model they hold (not migrated from an
    /// older version, which leaves the older version's names behind).
    static let freshStores = [
        "coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite",
        "coredataplus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite",
        "wibosco-migration/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite",
        "wibosco-migration/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_2.sqlite",
        "wibosco-migration/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_3.sqlite",
        "wibosco-migration/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_WAL.sqlite",
        "wire-ios-data-model/Tests/Resources/store1-24.wiredatabase",
        "wire-ios-data-model/Tests/Resources/store1-27.wiredatabase",
        "wire-ios-data-model/Tests/Resources/store2-3.wiredatabase",
    ]

    @Test(arguments: freshStores)
    func theDerivedSchemaIsTheOneCoreDataCreated(path: String) throws {
        let url = Corpus.url(path)
        let file = try SQLiteStoreFile.read(url)
        let model = try file.cachedModel()
        let database = try SQLiteDatabase.openForReading(url)
        let actual = try Self.layout(of: database)
        let version = file.metadata["NSPersistenceFrameworkVersion"]?.int64Value ?? 0
        let expected = Self.layout(of: SQLiteSchema(model: model, indexStyle: version < 700 ? .legacy : .modern))
        for name in Set(actual.tables.keys).union(expected.tables.keys).sorted() {
            #expect(actual.tables[name] == expected.tables[name], "\(path): table \(name)")
        }
        #expect(
            actual.indexes == expected.indexes,
            "\(path): indexes only in the store \(actual.indexes.subtracting(expected.indexes).sorted()), only derived \(expected.indexes.subtracting(actual.indexes).sorted())"
        )
    }
}
