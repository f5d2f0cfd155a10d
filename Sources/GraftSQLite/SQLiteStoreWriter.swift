internal import CSQLite
import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Writes a new Core Data SQLite store from a stream of snapshots, in Apple's layout: tables, columns,
/// join tables and indexes named as Core Data names them, `Z_PRIMARYKEY` with each tree's highest key,
/// `Z_METADATA` with the metadata dictionary and the store UUID, `Z_MODELCACHE` holding the model, and
/// SQLite set up as Core Data sets it (incremental auto-vacuum, 4096-byte pages, WAL journal).
///
/// The store is built in a temporary file beside the destination, loaded in one transaction with the
/// journal off (WAL is switched on at the end, as bulk loading in WAL mode is slower), then renamed into
/// place. Nothing appears at the destination unless `finish()` succeeds.
///
/// For example:
///
/// ```swift
/// var writer = try SQLiteStoreWriter(url: out, model: model, metadata: metadata, overwrite: false)
/// try reader.forEachSnapshot { try writer.write($0) }
/// try writer.finish()
/// ```
public final class SQLiteStoreWriter: StoreFileWriter {
    let url: URL
    let model: Model
    var metadata: StoreMetadata
    let overwrite: Bool
    /// The temporary file the store is built in, and how it replaces the destination.
    private let replacement: FileReplacement
    /// Rows written since the file's pages were last sent on their way to the disk, and how many rows
    /// (about 8 MB of the Company benchmark's) make the next start.
    private var rowsSinceWriteback = 0
    private static let rowsPerWriteback = 65_536
    private var temporary: URL { replacement.temporaryURL }
    private var database: SQLiteDatabase?
    /// The lock on the finished store's file, until the writer hands it over or is dropped.
    private var placedFile: FileLock?
    private let schema: SQLiteSchema
    private var inserts: [SQLiteStatement] = []
    /// For each entity: where its values go in its table's insert statement, resolved once.
    private var plans: [RowPlan] = []
    /// Each entity's root, by entity index.
    private var rootOfEntity: [Int] = []
    private var joinInserts: [SQLiteStatement] = []
    /// Highest key written per root entity (by entity index; 0 for entities that are not roots).
    private var maxKeys: [Int64] = []
    // Order keys and owners wait until every row exists; each is kept as numbers (the column by its
    // place in `orderColumns` or `virtualColumns`), a few dozen bytes a related row.
    /// Order keys for rows of ordered to-manys with a to-one inverse.
    private var pendingOrders: [OrderUpdate] = []
    private var pendingJoinOrders: [JoinOrderUpdate] = []
    /// Owners of objects in to-manys without inverse, whose key goes in the related row's hidden column.
    private var pendingOwners: [OwnerUpdate] = []
    /// The owner recorded for each related row of a to-many without inverse, to refuse a second one.
    private var ownerOfRow: [OwnedRow: Int64] = [:]
    /// The order columns of to-manys with a to-one inverse, and the hidden columns of to-manys without
    /// inverse, each once; by entity and relationship, the place of its own (-1 for none).
    private var orderColumns: [(table: Int, column: String)] = []
    private var virtualColumns: [SQLiteSchema.VirtualColumn] = []
    private var columnOfToMany: [[Int32]] = []

    /// Inserts into Graft's join tables for further owners, created when first needed, by declaring
    /// entity and relationship.
    private var furtherOwners: [SQLiteSchema.Side: SQLiteStatement] = [:]
    public private(set) var warnings: [String] = []

    private struct OwnerUpdate {
        var virtual: Int32
        var ownerEntityNumber: Int32
        var key: Int64
        var owner: Int64
        var order: Int64
    }

    private struct OwnedRow: Hashable {
        var virtual: Int32
        var key: Int64
    }

    private struct OrderUpdate {
        var column: Int32
        var key: Int64
        var order: Int64
    }

    private struct JoinOrderUpdate {
        var join: Int32
        var source: Int64
        var destination: Int64
        var order: Int64
    }

    /// The first order key Core Data gives in an ordered relationship, and the step between keys.
    static let firstOrderKey: Int64 = 2048
    static let orderKeyStep: Int64 = 1024

    /// Starts a new store at `url`.
    ///
    /// - Throws: `GraftError.alreadyExists` when `url` exists and `overwrite` is false; `.io` when the
    ///   folder cannot be written.
    public init(url: URL, model: Model, metadata: StoreMetadata, overwrite: Bool) throws {
        self.url = url
        self.model = model
        self.metadata = metadata
        self.overwrite = overwrite
        // A replaced store's -wal, -shm and -journal go with it: they would otherwise be applied to the new file.
        replacement = try FileReplacement(
            replacing: url, overwrite: overwrite, sideFiles: SQLiteDatabase.sideFileSuffixes)
        schema = SQLiteSchema(model: model)
        do {
            let database = try SQLiteDatabase.create(temporary, displayPath: url.relativePath)
            self.database = database
            // Page size and auto-vacuum must be set before the first table exists.
            try database.execute("PRAGMA page_size = 4096")
            try database.execute("PRAGMA auto_vacuum = 2")
            try database.execute("PRAGMA journal_mode = OFF")
            try database.execute("PRAGMA synchronous = OFF")
            try database.execute("BEGIN")
            for statement in schema.creationStatements
            where !statement.hasPrefix("CREATE INDEX") && !statement.hasPrefix("CREATE UNIQUE") {
                try database.execute(statement)
            }
            var tablePositions: [[String: Int32]] = []
            for table in schema.tables {
                let columns = table.columns
                var positions: [String: Int32] = [:]
                for (offset, column) in columns.enumerated() { positions[column.name] = Int32(offset + 1) }
                tablePositions.append(positions)
                let names = columns.map(\.name).joined(separator: ", ")
                let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
                inserts.append(try database.prepare("INSERT INTO \(table.name) (\(names)) VALUES (\(marks))"))
            }
            plans = model.descriptions.map {
                RowPlan(
                    entity: $0, model: model, schema: schema, positions: tablePositions[schema.tableOfEntity[$0.index]])
            }
            rootOfEntity = model.descriptions.map(\.rootIndex)
            // A relationship and the same one inherited by subentities share their column.
            columnOfToMany = model.descriptions.map { entity in
                entity.relationships.indices.map { index -> Int32 in
                    switch schema.toManyStorage[entity.index][index] {
                    case .virtualColumn(let virtual)?:
                        if let known = virtualColumns.firstIndex(where: {
                            $0.table == virtual.table && $0.column == virtual.column
                        }) {
                            return Int32(known)
                        }
                        virtualColumns.append(virtual)
                        return Int32(virtualColumns.count - 1)
                    case .inverseColumn(let table, _, let order?)?:
                        if let known = orderColumns.firstIndex(where: { $0.table == table && $0.column == order }) {
                            return Int32(known)
                        }
                        orderColumns.append((table, order))
                        return Int32(orderColumns.count - 1)
                    default:
                        return -1
                    }
                }
            }
            maxKeys = Array(repeating: 0, count: model.descriptions.count)
            for join in schema.joinTables {
                var columns = [join.sourceColumn, join.destinationColumn]
                if let order = join.sourceOrderColumn { columns.append(order) }
                joinInserts.append(
                    try database.prepare(
                        "INSERT OR IGNORE INTO \(join.name) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
                    ))
            }
        } catch {
            cancel()
            let error = GraftError.wrap(error)
            throw error.context.first == .file(url.relativePath) ? error : error.inFile(url.relativePath)
        }
    }

    /// Where one entity's values go in its table's insert statement (a class, so that writing a row
    /// copies no arrays).
    private final class RowPlan {
        let table: Int
        let entityNumber: Int64
        private(set) var attributes: [(index: Int, parameter: Int32, kind: SQLiteValues.Kind)] = []
        private(set) var toOnes: [(index: Int, key: Int32, entity: Int32?)] = []
        /// To-manys that need rows or order keys written from this side, with whether each is its own
        /// inverse.
        private(set) var toManys: [(index: Int, isOwnInverse: Bool)] = []

        init(entity: EntityDescription, model: Model, schema: SQLiteSchema, positions: [String: Int32]) {
            table = schema.tableOfEntity[entity.index]
            entityNumber = Int64(schema.entityNumbers[entity.index])
            for (index, attribute) in entity.attributes.enumerated() {
                guard let name = schema.attributeColumns[entity.index][index], let parameter = positions[name] else {
                    continue
                }
                attributes.append((index, parameter, SQLiteValues.Kind(attribute)))
            }
            for relationship in entity.relationships where !relationship.isTransient {
                if relationship.isToMany {
                    // A to-many kept in its inverse's column needs nothing from this side, unless ordered.
                    if case .inverseColumn(_, _, nil)? = schema.toManyStorage[entity.index][relationship.index] {
                        continue
                    }
                    toManys.append(
                        (relationship.index, SQLiteSchema.isOwnInverse(relationship, of: entity, in: model)))
                } else if let columns = schema.toOneColumns[entity.index][relationship.index],
                    let key = positions[columns.key]
                {
                    toOnes.append((relationship.index, key, columns.entity.flatMap { positions[$0] }))
                }
            }
        }
    }

    /// Rows are the same whatever order their objects come in, unless the model has to-manys without
    /// inverse: an object such a to-many holds keeps one owner in its row, the first written (the
    /// warnings' examples of values stored inexactly also follow the order).
    public var acceptsSnapshotsInAnyOrder: Bool { virtualColumns.isEmpty }

    /// The to-ones with a column, and the to-manys that need join rows, order keys or owners written
    /// from their side: not a to-many kept in its inverse's column, unordered (a department's employees,
    /// kept in each employee's `ZDEPARTMENT`).
    public var relationshipsRead: RelationshipSelection {
        let plans = self.plans
        return RelationshipSelection(model: model) { entity, index in
            plans[entity].toOnes.contains { $0.index == index } || plans[entity].toManys.contains { $0.index == index }
        }
    }

    public func write(_ snapshot: Snapshot) throws {
        guard database != nil else { throw GraftError(.invalidOperation, "the writer is finished or cancelled") }
        let entity: EntityDescription
        do {
            entity = try snapshot.entity(checkedIn: model)
        } catch let error as GraftError {
            throw error.inFile(url.relativePath)
        }
        let plan = plans[snapshot.ref.entity]
        let statement = inserts[plan.table]
        let key = snapshot.ref.key
        do {
            statement.clearBindings()
            try statement.bind(key, at: 1)
            try statement.bind(plan.entityNumber, at: 2)
            try statement.bind(Int64(1), at: 3)
            for slot in plan.attributes {
                do {
                    let exact = try SQLiteValues.bind(
                        snapshot.attributes[slot.index], as: slot.kind, to: statement, at: slot.parameter)
                    if !exact { try noteInexact(snapshot, attribute: slot.index) }
                } catch let error as GraftError {
                    throw error.at(.key(model.descriptions[snapshot.ref.entity].attributes[slot.index].name))
                }
            }
            for slot in plan.toOnes {
                guard case .toOne(let target?) = snapshot.relationships[slot.index] else { continue }
                try statement.bind(target.key, at: slot.key)
                if let entityParameter = slot.entity {
                    try statement.bind(Int64(schema.entityNumbers[target.entity]), at: entityParameter)
                }
            }
            for (index, isOwnInverse) in plan.toManys {
                let refs = snapshot.relationships[index].refs
                if refs.isEmpty { continue }
                try recordToMany(
                    entity.relationships[index], of: entity, isOwnInverse: isOwnInverse, key: key, refs: refs)
            }
            try statement.run()
        } catch let error as GraftError {
            statement.reset()
            throw error.at(.object("\(model.descriptions[snapshot.ref.entity].name) p\(key)")).inFile(url.relativePath)
        }
        let root = rootOfEntity[snapshot.ref.entity]
        if key > maxKeys[root] { maxKeys[root] = key }
        rowsSinceWriteback += 1
        if rowsSinceWriteback == Self.rowsPerWriteback {
            // The pages SQLite has handed to the file so far start on their way to the disk, so that the
            // flush before the store is put in place has the last ones only to wait for.
            replacement.startWriteback()
            rowsSinceWriteback = 0
        }
    }

    /// Join rows (from the side that names the join table) and order keys of a to-many.
    private func recordToMany(
        _ relationship: RelationshipDescription, of entity: EntityDescription, isOwnInverse selfInverse: Bool,
        key: Int64, refs: [ObjectRef]
    ) throws {
        guard let storage = schema.toManyStorage[entity.index][relationship.index] else { return }
        switch storage {
        case .virtualColumn:
            // Core Data keeps the owner in the related row, which has room for one owner: the first is
            // written there, any further one in Graft's join table for further owners.
            let virtual = columnOfToMany[entity.index][relationship.index]
            for (position, ref) in refs.enumerated() {
                let order = Self.firstOrderKey + Int64(position) * Self.orderKeyStep
                let row = OwnedRow(virtual: virtual, key: ref.key)
                if let owner = ownerOfRow[row], owner != key {
                    try recordFurtherOwner(key, of: ref, in: relationship, of: entity, order: order, first: owner)
                    continue
                }
                ownerOfRow[row] = key
                pendingOwners.append(
                    OwnerUpdate(
                        virtual: virtual, ownerEntityNumber: Int32(schema.entityNumbers[entity.index]), key: ref.key,
                        owner: key, order: order))
            }
        case .inverseColumn(_, _, let orderColumn):
            guard orderColumn != nil else { return }
            let column = columnOfToMany[entity.index][relationship.index]
            for (position, ref) in refs.enumerated() {
                pendingOrders.append(
                    OrderUpdate(
                        column: column, key: ref.key, order: Self.firstOrderKey + Int64(position) * Self.orderKeyStep))
            }
        case .joinTable(let index, let ownColumn, _, let orderColumn):
            let join = schema.joinTables[index]
            let isNamingSide = ownColumn == join.sourceColumn
            for (position, ref) in refs.enumerated() {
                let order = Self.firstOrderKey + Int64(position) * Self.orderKeyStep
                if isNamingSide {
                    // A relationship that is its own inverse lists each pair on both objects: store it once.
                    if selfInverse && ref.key < key { continue }
                    let statement = joinInserts[index]
                    try statement.bind(key, at: 1)
                    try statement.bind(ref.key, at: 2)
                    if join.sourceOrderColumn != nil { try statement.bind(order, at: 3) }
                    try statement.run()
                } else if orderColumn != nil {
                    pendingJoinOrders.append(
                        JoinOrderUpdate(join: Int32(index), source: ref.key, destination: key, order: order))
                }
            }
        }
    }

    /// Records `owner` as a further owner of `ref` in a to-many without inverse, in Graft's join table
    /// (created on first use), and says so once per relationship.
    private func recordFurtherOwner(
        _ owner: Int64, of ref: ObjectRef, in relationship: RelationshipDescription, of entity: EntityDescription,
        order: Int64, first: Int64
    ) throws {
        let side = schema.side(of: relationship, from: entity)
        if furtherOwners[side] == nil {
            guard let database else { return }
            let join = schema.ownersJoinTable(entity: side.entity, relationship: side.relationship)
            var columns = [join.sourceColumn, join.destinationColumn]
            if let order = join.sourceOrderColumn { columns.append(order) }
            try database.execute(
                "CREATE TABLE \(join.name) ( \(columns.map { "\($0) INTEGER" }.joined(separator: ", ")), PRIMARY KEY (\(join.sourceColumn), \(join.destinationColumn)) )"
            )
            furtherOwners[side] = try database.prepare(
                "INSERT OR IGNORE INTO \(join.name) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
            )
            warnings.append(
                "\(model.descriptions[side.entity].name).\(relationship.name) has no inverse and relates "
                    + "\(model.descriptions[ref.entity].name) p\(ref.key) to both p\(first) and p\(owner): Core Data's "
                    + "layout keeps one owner per object (p\(first) here), so further owners are kept in \(join.name), "
                    + "which Graft reads and Core Data does not")
        }
        let statement = furtherOwners[side]!
        try statement.bind(owner, at: 1)
        try statement.bind(ref.key, at: 2)
        if relationship.isOrdered { try statement.bind(order, at: 3) }
        try statement.run()
    }

    /// Values the store could not keep exactly, by `Entity.attribute`: decimals stored rounded to a
    /// double, NaNs stored as NULL; how many, and the first few.
    private var inexact: [(name: String, isNaN: Bool, count: Int, examples: [String])] = []

    /// Notes a value stored inexactly; a NaN in a required attribute, which would be stored as no value,
    /// is refused.
    private func noteInexact(_ snapshot: Snapshot, attribute index: Int) throws {
        let entity = model.descriptions[snapshot.ref.entity]
        let attribute = entity.attributes[index]
        let name = "\(entity.name).\(attribute.name)"
        var example = "p\(snapshot.ref.key)"
        var isNaN = true
        if case .decimal(let value)? = snapshot.attributes[index] {
            example += " \(value) as \(value.nearestDouble)"
            isNaN = false
        }
        if isNaN && !attribute.isOptional {
            throw GraftError(
                .validationFailed,
                "is NaN, which a SQLite store keeps as no value, and the attribute is required")
        }
        let position =
            inexact.firstIndex { $0.name == name && $0.isNaN == isNaN }
            ?? {
                inexact.append((name, isNaN, 0, []))
                return inexact.count - 1
            }()
        inexact[position].count += 1
        if inexact[position].examples.count < 3 { inexact[position].examples.append(example) }
    }

    public func finish() throws {
        try finishKeepingLock()
        placedFile?.release()
        placedFile = nil
    }

    /// Finishes, and returns the lock on the store's file now in place, held until released (see
    /// ``FileReplacement/commit()``), for a store that keeps its document locked.
    public func finishHoldingLock() throws -> FileLock {
        try finishKeepingLock()
        defer { placedFile = nil }
        guard let placedFile else {
            throw GraftError(.invalidOperation, "the store was not placed", context: [.file(url.relativePath)])
        }
        return placedFile
    }

    private func finishKeepingLock() throws {
        guard let database else { throw GraftError(.invalidOperation, "the writer is finished or cancelled") }
        for entry in inexact {
            let more = entry.count > entry.examples.count ? ", and \(entry.count - entry.examples.count) more" : ""
            let were = entry.count == 1 ? "was" : "were"
            if entry.isNaN {
                warnings.append(
                    "\(entry.name): \(Wording.counted(entry.count, "NaN value")) \(were) stored as no value (SQLite "
                        + "keeps no NaN): \(entry.examples.joined(separator: ", "))\(more)")
            } else {
                warnings.append(
                    "\(entry.name): \(Wording.counted(entry.count, "decimal value")) with more digits than a SQLite "
                        + "store keeps (a 64-bit real, as Core Data writes decimals) \(were) stored rounded: "
                        + "\(entry.examples.joined(separator: ", "))\(more)")
            }
        }
        inexact.removeAll()
        do {
            try applyOrders(database)
            try writeBookkeeping(database)
            // Each index is built by sorting the table's rows in runs of at most the cache size, merged
            // sixteen at a time: runs of 8 MiB rather than 2 merge a few million rows in one pass, for
            // a few more MiB while the indexes are built.
            try database.execute("PRAGMA cache_size = -8192")
            for statement in schema.indexStatements { try database.execute(statement) }
            try database.execute("COMMIT")
            inserts.removeAll()
            joinInserts.removeAll()
            furtherOwners.removeAll()
            try database.execute("PRAGMA journal_mode = WAL")
            database.close()
            self.database = nil
            for suffix in SQLiteDatabase.sideFileSuffixes {
                try? FileManager.default.removeItem(atPath: temporary.path + suffix)
            }
            placedFile = try replacement.commit()
        } catch {
            cancel()
            let error = GraftError.wrap(error)
            throw error.context.first == .file(url.relativePath) ? error : error.inFile(url.relativePath)
        }
    }

    public func cancel() {
        inserts.removeAll()
        joinInserts.removeAll()
        furtherOwners.removeAll()
        database?.close()
        database = nil
        for suffix in SQLiteDatabase.sideFileSuffixes {
            try? FileManager.default.removeItem(atPath: temporary.path + suffix)
        }
        replacement.discard()
    }

    private func applyOrders(_ database: SQLiteDatabase) throws {
        /// One statement per column, prepared when first needed.
        var statements: [Int32: SQLiteStatement] = [:]
        func statement(_ number: Int32, _ sql: () -> String) throws -> SQLiteStatement {
            if let known = statements[number] { return known }
            let prepared = try database.prepare(sql())
            statements[number] = prepared
            return prepared
        }
        for update in pendingOrders {
            let statement = try statement(update.column) {
                let (table, column) = orderColumns[Int(update.column)]
                return "UPDATE \(schema.tables[table].name) SET \(column) = ? WHERE Z_PK = ?"
            }
            try statement.bind(update.order, at: 1)
            try statement.bind(update.key, at: 2)
            try statement.run()
        }
        statements.removeAll()
        for update in pendingJoinOrders {
            let join = schema.joinTables[Int(update.join)]
            guard let column = join.destinationOrderColumn else { continue }
            let statement = try statement(update.join) {
                "UPDATE \(join.name) SET \(column) = ? WHERE \(join.sourceColumn) = ? AND \(join.destinationColumn) = ?"
            }
            try statement.bind(update.order, at: 1)
            try statement.bind(update.source, at: 2)
            try statement.bind(update.destination, at: 3)
            try statement.run()
        }
        statements.removeAll()
        for update in pendingOwners {
            let virtual = virtualColumns[Int(update.virtual)]
            let statement = try statement(update.virtual) {
                let assignments = virtual.ownerColumns.map { "\($0) = ?" }
                return
                    "UPDATE \(schema.tables[virtual.table].name) SET \(assignments.joined(separator: ", ")) WHERE Z_PK = ?"
            }
            var parameter: Int32 = 1
            for value in [
                update.owner, virtual.entityColumn.map { _ in Int64(update.ownerEntityNumber) },
                virtual.orderColumn.map { _ in update.order },
            ] {
                guard let value else { continue }
                try statement.bind(value, at: parameter)
                parameter += 1
            }
            try statement.bind(update.key, at: parameter)
            try statement.run()
        }
        pendingOrders.removeAll()
        pendingJoinOrders.removeAll()
        pendingOwners.removeAll()
        ownerOfRow.removeAll()
    }

    private func writeBookkeeping(_ database: SQLiteDatabase) throws {
        let primaryKeys = try database.prepare(
            "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)")
        for entity in model.descriptions {
            try primaryKeys.bind(Int64(schema.entityNumbers[entity.index]), at: 1)
            try primaryKeys.bind(entity.name, at: 2)
            try primaryKeys.bind(Int64(entity.superentityIndex.map { schema.entityNumbers[$0] } ?? 0), at: 3)
            try primaryKeys.bind(entity.superentityIndex == nil ? maxKeys[entity.index] : 0, at: 4)
            try primaryKeys.run()
        }
        try SQLiteModelCache.record(metadata, model: model, in: database, replacing: false)
    }
}

/// The model a store keeps in `Z_MODELCACHE`.
enum SQLiteModelCache {
    /// Writes the store's metadata (`Z_METADATA`: the UUID in `Z_UUID`, the other keys as a binary
    /// property list in `Z_PLIST`) and `model` as its model cache, as a new store's first rows or, with
    /// `replacing`, in place of those it has (a migrated store's).
    static func record(_ metadata: StoreMetadata, model: Model, in database: SQLiteDatabase, replacing: Bool) throws {
        var values = metadata.values
        values["NSStoreUUID"] = nil  // the UUID lives in Z_UUID
        let meta = try database.prepare(
            replacing
                ? "UPDATE Z_METADATA SET Z_UUID = ?, Z_PLIST = ?"
                : "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)")
        try meta.bind(metadata.identifier, at: 1)
        try meta.bind(PropertyList.dictionary(values).encode(format: .binary), at: 2)
        try meta.run()
        if replacing {
            try database.execute("CREATE TABLE IF NOT EXISTS Z_MODELCACHE (Z_CONTENT BLOB)")
            try database.execute("DELETE FROM Z_MODELCACHE")
        }
        let cache = try database.prepare("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)")
        try cache.bind(try encode(model, frameworkVersion: metadata.frameworkVersion), at: 1)
        try cache.run()
    }

    static func encode(_ model: Model, frameworkVersion: Int64?) throws -> Data {
        try CompiledModelWriter.modelCache(model, frameworkVersion: frameworkVersion.map { Int($0) })
    }
}
