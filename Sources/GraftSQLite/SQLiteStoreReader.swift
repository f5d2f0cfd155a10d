import CSQLite
import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Reads a whole Core Data SQLite store as a stream of snapshots, never changing the store, its `-wal`
/// or its `-shm`.
///
/// Rows are read table by table in key order; each to-many is filled from a second cursor over the
/// inverse's column or the join table, sorted the same way and read in step, so memory stays bounded
/// whatever the store's size.
///
/// For example:
///
/// ```swift
/// let reader = try SQLiteStoreReader(url: storeURL, model: nil)   // the store's own model cache
/// try reader.forEachSnapshot { snapshot in … }
/// ```
public final class SQLiteStoreReader: StoreReader {
    public let model: Model
    public let metadata: StoreMetadata
    let database: SQLiteDatabase
    let schema: SQLiteSchema
    let url: URL
    let missingExternalData: MissingExternalData
    /// Things worth telling the user that did not stop the read (values whose external file is missing).
    public private(set) var warnings: [String] = []

    /// What to do with a binary value kept in an external file (`.<store>_SUPPORT/_EXTERNAL_DATA`) that
    /// is not there: Core Data keeps large values outside the store, and copies of stores often leave
    /// that folder behind.
    public enum MissingExternalData: Sendable {
        /// Stop with an error naming the object, the attribute and the file.
        case fail
        /// Read the value as absent and add a warning.
        case omit
    }

    /// Opens a store for reading.
    ///
    /// - Parameter model: the model to read with; `nil` uses the model the store keeps in its model cache.
    /// - Throws: `GraftError.fileNotFound`, `.malformedInput` (not a Core Data store, corrupt),
    ///   `.notFound` (no model given and no model cache), `.modelMismatch` (the given model's version hashes
    ///   differ from the store's, naming the entities).
    public init(url: URL, model: Model?, missingExternalData: MissingExternalData = .fail) throws {
        self.url = url
        self.missingExternalData = missingExternalData
        let database = try SQLiteDatabase.openForReading(url)
        let (metadata, chosen) = try SQLiteStoreFile.read(database, url: url).metadataAndModel(model)
        self.model = chosen
        self.metadata = metadata
        self.database = database
        self.schema = try SQLiteSchema.discover(in: database, model: chosen)
    }

    /// The folder Core Data keeps externally stored binary data in: `.<store name>_SUPPORT/_EXTERNAL_DATA`.
    var externalDataFolder: URL {
        url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent)_SUPPORT/_EXTERNAL_DATA")
    }

    /// Offsets for writing this store's objects into a document with one key sequence: needed when two
    /// root tables use the same keys (found with a join on the keys, which uses the tables' key index).
    public var keyOffsets: [Int: Int64] {
        var maxKeys: [Int: Int64] = [:]
        var roots: [(root: Int, table: String)] = []
        for table in schema.tables {
            guard let statement = try? database.prepare("SELECT max(Z_PK) FROM \(quoted(table.name))"),
                (try? statement.step()) == true,
                !statement.isNull(0)
            else { continue }
            maxKeys[table.rootEntity] = statement.int64(0)
            roots.append((table.rootEntity, table.name))
        }
        var collide = false
        search: for first in roots.indices {
            for second in roots.indices where second > first {
                let sql =
                    "SELECT 1 FROM \(quoted(roots[first].table)) a JOIN \(quoted(roots[second].table)) b ON a.Z_PK = b.Z_PK LIMIT 1"
                if let statement = try? database.prepare(sql), (try? statement.step()) == true {
                    collide = true
                    break search
                }
            }
        }
        return DocumentKeys.offsets(maxKeys: maxKeys, collide: collide)
    }

    public var objectCount: Int? {
        try? counts().values.reduce(0, +)
    }

    /// How many objects each entity has, counting each object under its own entity only.
    public func counts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for entity in model.descriptions where !entity.isAbstract { counts[entity.name] = 0 }
        for table in schema.tables {
            let statement = try database.prepare("SELECT Z_ENT, count(*) FROM \(quoted(table.name)) GROUP BY Z_ENT")
            while try statement.step() {
                let number = Int(statement.int64(0))
                guard let entity = schema.entity(forNumber: number) else {
                    throw GraftError(
                        .malformedInput,
                        "table \(table.name) holds rows of entity number \(number), which the model does not have",
                        context: [.file(url.relativePath)])
                }
                counts[model.descriptions[entity].name, default: 0] += Int(statement.int64(1))
            }
        }
        return counts
    }

    public func forEachSnapshot(_ body: (Snapshot) throws -> Void) throws {
        do {
            for table in schema.tables.indices {
                try readTable(table, body)
            }
        } catch let error as GraftError {
            throw error.context.first == .file(url.relativePath) ? error : error.inFile(url.relativePath)
        }
    }

    // MARK: Reading one table

    /// A cursor over (owner key, related key, related entity) rows sorted by owner key.
    private final class RelatedCursor {
        let statement: SQLiteStatement
        let fixedEntity: Int?
        let schema: SQLiteSchema
        /// `Entity.relationship`, for messages.
        let label: String
        var current: (owner: Int64, key: Int64, entity: Int)?
        var finished = false

        init(statement: SQLiteStatement, fixedEntity: Int?, schema: SQLiteSchema, label: String) throws {
            self.statement = statement
            self.fixedEntity = fixedEntity
            self.schema = schema
            self.label = label
            try advance()
        }

        func advance() throws {
            guard try statement.step() else {
                current = nil
                finished = true
                return
            }
            let entity: Int
            if let fixedEntity {
                entity = fixedEntity
            } else {
                let number = Int(statement.int64(2))
                guard let found = schema.entity(forNumber: number) else {
                    throw GraftError(
                        .malformedInput,
                        "\(label) of p\(statement.int64(0)) holds p\(statement.int64(1)), whose entity number \(number) the model does not have"
                    )
                }
                entity = found
            }
            current = (statement.int64(0), statement.int64(1), entity)
        }

        /// The related refs of `owner`, consuming them (owners must be asked in increasing order).
        func take(_ owner: Int64) throws -> [ObjectRef] {
            var refs: [ObjectRef] = []
            while let row = current, row.owner <= owner {
                if row.owner == owner { refs.append(ObjectRef(entity: row.entity, key: row.key)) }
                try advance()
            }
            return refs
        }
    }

    private func quoted(_ name: String) -> String { SQLiteName.quoted(name) }

    /// A cursor for one to-many of the entities in `table`.
    private func cursors(
        for relationship: RelationshipDescription, of entity: EntityDescription
    ) throws -> [RelatedCursor] {
        guard let storage = schema.toManyStorage[entity.index][relationship.index] else { return [] }
        let destination = model.descriptions[relationship.destinationIndex]
        let destinationTable = schema.tables[schema.tableOfEntity[destination.index]]
        let fixed = destination.descendantIndices.isEmpty ? destination.index : nil
        switch storage {
        case .inverseColumn(let table, let column, let orderColumn):
            let source = schema.tables[table]
            let order = orderColumn.map { "\(quoted($0)), " } ?? ""
            let sql =
                "SELECT \(quoted(column)), Z_PK, Z_ENT FROM \(quoted(source.name)) WHERE \(quoted(column)) IS NOT NULL ORDER BY \(quoted(column)), \(order)Z_PK"
            return [
                try RelatedCursor(
                    statement: database.prepare(sql), fixedEntity: nil, schema: schema,
                    label: "\(entity.name).\(relationship.name)")
            ]
        case .joinTable(let index, let ownColumn, let otherColumn, let orderColumn):
            let join = schema.joinTables[index]
            var pairs = [(ownColumn, otherColumn, orderColumn)]
            // A relationship that is its own inverse is stored once per pair: read both directions.
            if SQLiteSchema.isOwnInverse(relationship, of: entity, in: model) {
                pairs = [
                    (join.sourceColumn, join.destinationColumn, nil), (join.destinationColumn, join.sourceColumn, nil),
                ]
            }
            return try pairs.map { own, other, order in
                let orderBy = order.map { "j.\(quoted($0)), " } ?? ""
                let sql: String
                if fixed == nil {
                    sql =
                        "SELECT j.\(quoted(own)), j.\(quoted(other)), d.Z_ENT FROM \(quoted(join.name)) j JOIN \(quoted(destinationTable.name)) d ON d.Z_PK = j.\(quoted(other)) ORDER BY j.\(quoted(own)), \(orderBy)j.\(quoted(other))"
                } else {
                    sql =
                        "SELECT j.\(quoted(own)), j.\(quoted(other)) FROM \(quoted(join.name)) j ORDER BY j.\(quoted(own)), \(orderBy)j.\(quoted(other))"
                }
                return try RelatedCursor(
                    statement: database.prepare(sql), fixedEntity: fixed, schema: schema,
                    label: "\(entity.name).\(relationship.name)")
            }
        }
    }

    private func readTable(_ tableIndex: Int, _ body: (Snapshot) throws -> Void) throws {
        var decoder = SQLiteRowDecoder(
            schema: schema, table: tableIndex, database: database, path: url.relativePath,
            externalData: externalDataFolder)
        let rows = try database.prepare(decoder.selectClause + " ORDER BY t.Z_PK")
        let table = schema.tables[tableIndex]

        // One set of cursors per to-many, shared by every entity of the table that has it.
        var toManyCursors: [String: [RelatedCursor]] = [:]
        for member in table.entities {
            let entity = model.descriptions[member]
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                let declarer = SQLiteSchema.declaringEntity(of: relationship.name, from: entity, in: model)
                let key = "\(declarer.index).\(relationship.name)"
                if toManyCursors[key] == nil { toManyCursors[key] = try cursors(for: relationship, of: declarer) }
            }
        }
        let missing: ((String) throws -> Void)? =
            missingExternalData == .fail
            ? nil
            : { path in self.warnings.append("external file \(path) is missing; its value is read as no value") }
        while try rows.step() {
            let snapshot = try decoder.snapshot(of: rows, missing: missing) { relationship, entity, key in
                let declarer = SQLiteSchema.declaringEntity(of: relationship.name, from: entity, in: self.model)
                var refs: [ObjectRef] = []
                for cursor in toManyCursors["\(declarer.index).\(relationship.name)"] ?? [] {
                    refs += try cursor.take(key)
                }
                return refs
            }
            try body(snapshot)
        }
    }
}
