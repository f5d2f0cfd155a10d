import Foundation
import GraftCore
import GraftGraph
import GraftModel

extension SQLiteStore: StreamingInserts {
    /// Writes a context's changes in one transaction: new rows, changed rows (with `Z_OPT` counting the
    /// change), deleted rows and their join rows, to-many join rows and order keys, and each tree's
    /// highest key in `Z_PRIMARYKEY`. On any failure the transaction is rolled back and the store is as
    /// it was.
    ///
    /// Optimistic locking, as Core Data's SQLite store does it: inside the transaction, before anything
    /// is written, each object of `changes.expectedVersions` must still have that `Z_OPT`; if any has
    /// another (another connection saved it) or its row is gone, nothing is written and the save throws
    /// ``StoreVersionConflicts`` listing them all.
    public func save(_ changes: StoreChanges) throws {
        guard !changes.isEmpty else { return }
        guard !isReadOnly else {
            throw GraftError(
                .invalidOperation, "the store was opened for reading only", context: [.file(url.relativePath)])
        }
        // Within the transaction `beginExclusiveAccess()` opened, if any; the save ends it either way.
        if !holdsExclusiveAccess { try database.execute("BEGIN IMMEDIATE") }
        holdsExclusiveAccess = false
        let schemaBefore = schema
        do {
            if let expected = changes.expectedVersions,
                let conflicts = try StoreVersionConflicts.check(expected, stored: storedVersion)
            {
                throw conflicts
            }
            var writer = RowWriter(store: self)
            // Deleted and changed rows first, so that the values they give up (under a uniqueness
            // constraint's index) are free for the new rows that take them.
            for ref in changes.deleted { try writer.delete(ref) }
            // The snapshots borrowed where they are (through buffers, whose elements are read in place,
            // where an array's are copied out): a copy of each would touch memory nothing else reads.
            try changes.updated.withUnsafeBufferPointer { updated in
                try changes.updatedFrom.withUnsafeBufferPointer { from in
                    for position in updated.indices {
                        guard position < from.count, from[position]?.ref == updated[position].ref else {
                            try writer.update(updated[position], from: nil)
                            continue
                        }
                        try writer.update(
                            updated[position], from: from[position],
                            changedAttributes: position < changes.changedAttributes.count
                                ? changes.changedAttributes[position] : nil)
                    }
                }
            }
            try changes.inserted.withUnsafeBufferPointer { inserted in
                try changes.updated.withUnsafeBufferPointer { updated in
                    for snapshot in inserted.indices { try writer.insert(inserted[snapshot]) }
                    // Rows leave their old owners in to-manys without inverse before new owners claim them.
                    for snapshot in updated.indices { try writer.releaseOwnedRows(updated[snapshot]) }
                    for snapshot in inserted.indices { try writer.writeToManys(inserted[snapshot]) }
                    for snapshot in updated.indices { try writer.writeToManys(updated[snapshot]) }
                }
            }
            try writer.recordHighestKeys(changes.inserted)
            try database.execute("COMMIT")
            // Changes were written: closing may fold the -wal into the store, as SQLite does.
            database.setCheckpointsOnClose(true)
        } catch {
            try? database.execute("ROLLBACK")
            schema = schemaBefore
            if let conflicts = error as? StoreVersionConflicts { throw conflicts }
            let error = GraftError.wrap(error)
            throw error.context.first == .file(url.relativePath) ? error : error.inFile(url.relativePath)
        }
    }

    /// The `Z_OPT` of an object's row now, or `nil` when the table has no row of that entity with its key.
    private func storedVersion(of ref: ObjectRef) throws -> Int64? {
        let table = schema.tables[schema.tableOfEntity[ref.entity]].name
        let statement = try cachedStatement("SELECT Z_OPT, Z_ENT FROM \(SQLiteName.quoted(table)) WHERE Z_PK = ?")
        defer { statement.reset() }
        try statement.bind(ref.key, at: 1)
        guard try statement.step(), statement.int64(1) == Int64(schema.entityNumbers[ref.entity]) else { return nil }
        return statement.int64(0)
    }

    /// A writer that inserts new objects into this store in one transaction, as they come: nothing is
    /// visible to other connections until `finish()` commits them all, and `cancel()` (or any failure)
    /// rolls them all back. For a paste into an empty store, which need not hold its objects at once.
    ///
    /// The snapshots may name objects that come later. To-manys kept in join tables are written with
    /// each object; those kept on the member's row (an order, or the owner of a to-many without
    /// inverse) wait until every row exists.
    public func inserter() throws -> any StoreWriter {
        guard !isReadOnly else {
            throw GraftError(
                .invalidOperation, "the store was opened for reading only", context: [.file(url.relativePath)])
        }
        if !holdsExclusiveAccess { try database.execute("BEGIN IMMEDIATE") }
        holdsExclusiveAccess = false
        return Inserter(store: self, schemaBefore: schema)
    }

    private struct Inserter: StoreWriter {
        let store: SQLiteStore
        let schemaBefore: SQLiteSchema
        var writer: RowWriter
        /// Objects whose to-manys live on their members' rows, with only those to-manys.
        var waiting: [Snapshot] = []
        var highest: [Int: Int64] = [:]
        var open = true

        init(store: SQLiteStore, schemaBefore: SQLiteSchema) {
            self.store = store
            self.schemaBefore = schemaBefore
            self.writer = RowWriter(store: store)
        }

        mutating func write(_ snapshot: Snapshot) throws {
            do {
                try writer.insert(snapshot)
                let entity = store.model.descriptions[snapshot.ref.entity]
                highest[entity.rootIndex] = max(highest[entity.rootIndex] ?? 0, snapshot.ref.key)
                var onMembers = Snapshot(ref: snapshot.ref, attributes: [], relationships: snapshot.relationships)
                var waits = false
                for relationship in entity.relationships where relationship.isToMany {
                    guard case .toMany(let refs) = snapshot.relationships[relationship.index], !refs.isEmpty,
                        let storage = store.schema.toManyStorage[entity.index][relationship.index]
                    else { continue }
                    switch storage {
                    case .joinTable: onMembers.relationships[relationship.index] = .unloaded
                    case .inverseColumn(_, _, let order) where order == nil:
                        onMembers.relationships[relationship.index] = .unloaded
                    default: waits = true
                    }
                }
                // Join rows now; rows of members once they exist.
                var now = snapshot
                for index in now.relationships.indices where onMembers.relationships[index] != .unloaded {
                    if case .toMany = now.relationships[index] { now.relationships[index] = .unloaded }
                }
                try writer.writeToManys(now)
                if waits {
                    onMembers.attributes = Array(repeating: nil, count: entity.attributes.count)
                    for index in onMembers.relationships.indices where !entity.relationships[index].isToMany {
                        onMembers.relationships[index] = .unloaded
                    }
                    waiting.append(onMembers)
                }
            } catch {
                cancel()
                throw error
            }
        }

        mutating func finish() throws {
            guard open else { return }
            do {
                for snapshot in waiting { try writer.writeToManys(snapshot) }
                waiting = []
                try writer.recordHighest(highest)
                try store.database.execute("COMMIT")
                store.database.setCheckpointsOnClose(true)
                open = false
            } catch {
                cancel()
                let error = GraftError.wrap(error)
                throw error.context.first == .file(store.url.relativePath)
                    ? error : error.inFile(store.url.relativePath)
            }
        }

        mutating func cancel() {
            guard open else { return }
            open = false
            try? store.database.execute("ROLLBACK")
            store.schema = schemaBefore
        }
    }

    /// Row-level writes for one save.
    private struct RowWriter {
        let store: SQLiteStore
        var statements: [String: SQLiteStatement] = [:]

        var schema: SQLiteSchema { store.schema }
        var model: Model { store.model }

        init(store: SQLiteStore) { self.store = store }

        mutating func statement(_ sql: String) throws -> SQLiteStatement {
            if let statement = statements[sql] { return statement }
            let statement = try store.database.prepare(sql)
            statements[sql] = statement
            return statement
        }

        /// What an entity's rows hold besides the bookkeeping columns, worked out once per entity: its
        /// fields, each an attribute's column or a to-one's columns (key, and entity number where the
        /// destination has subentities), in the order the statements name them.
        private struct Columns {
            enum Field {
                case attribute(index: Int, kind: SQLiteValues.Kind)
                case toOne(index: Int, hasEntityColumn: Bool)
            }
            var fields: [(field: Field, names: [String])] = []
            var insertSQL = ""
            /// `UPDATE` statements by the fields they set (positions in `fields`).
            var updates: [[Int]: SQLiteStatement] = [:]
        }
        private var columnsByEntity: [Int: Columns] = [:]

        private mutating func columns(of entityIndex: Int) -> Columns {
            if let columns = columnsByEntity[entityIndex] { return columns }
            let entity = model.descriptions[entityIndex]
            var columns = Columns()
            for (index, attribute) in entity.attributes.enumerated() {
                guard let column = schema.attributeColumns[entityIndex][index] else { continue }
                columns.fields.append((.attribute(index: index, kind: SQLiteValues.Kind(attribute)), [column]))
            }
            for relationship in entity.relationships where !relationship.isToMany && !relationship.isTransient {
                guard let toOne = schema.toOneColumns[entityIndex][relationship.index] else { continue }
                columns.fields.append(
                    (
                        .toOne(index: relationship.index, hasEntityColumn: toOne.entity != nil),
                        [toOne.key] + (toOne.entity.map { [$0] } ?? [])
                    ))
            }
            let names = (["Z_PK", "Z_ENT", "Z_OPT"] + columns.fields.flatMap(\.names)).map(SQLiteName.quoted)
            columns.insertSQL =
                "INSERT INTO \(table(of: entityIndex)) (\(names.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))"
            columnsByEntity[entityIndex] = columns
            return columns
        }

        private func table(of entityIndex: Int) -> String {
            SQLiteName.quoted(schema.tables[schema.tableOfEntity[entityIndex]].name)
        }

        /// The positions of the fields whose values in `snapshot` differ from those in `stored` (every
        /// field without `stored`); of the attributes, those in `changedAttributes` when it is given.
        private static func changedFields(
            _ columns: Columns, of snapshot: Snapshot, from stored: Snapshot?, changedAttributes: [Int]?
        ) -> [Int] {
            guard let stored else { return Array(columns.fields.indices) }
            return columns.fields.indices.filter { position in
                switch columns.fields[position].field {
                case .attribute(let index, _):
                    if let changedAttributes { return changedAttributes.contains(index) }
                    return snapshot.attributes[index] != stored.attributes[index]
                case .toOne(let index, _):
                    return snapshot.relationships[index].firstRef != stored.relationships[index].firstRef
                }
            }
        }

        /// Binds a snapshot's values of the fields at `positions` from parameter `first` on; returns the
        /// next one.
        private func bindValues(
            of snapshot: Snapshot, _ columns: Columns, _ positions: some Sequence<Int>, to statement: SQLiteStatement,
            from first: Int32
        ) throws -> Int32 {
            var parameter = first
            let entity = model.descriptions[snapshot.ref.entity]
            for position in positions {
                switch columns.fields[position].field {
                case .attribute(let index, let kind):
                    do {
                        let exact = try SQLiteValues.bind(
                            snapshot.attributes[index], as: kind, to: statement, at: parameter)
                        if !exact && !entity.attributes[index].isOptional
                            && snapshot.attributes[index]?.doubleValue?.isNaN == true
                        {
                            throw GraftError(
                                .validationFailed,
                                "is NaN, which a SQLite store keeps as no value, and the attribute is required",
                                context: [.object("\(entity.name) p\(snapshot.ref.key)")])
                        }
                    } catch let error as GraftError {
                        throw error.at(.key(entity.attributes[index].name))
                    }
                    parameter += 1
                case .toOne(let index, let hasEntityColumn):
                    let target = snapshot.relationships[index].firstRef
                    if let target {
                        try statement.bind(target.key, at: parameter)
                    } else {
                        try statement.bindNull(at: parameter)
                    }
                    parameter += 1
                    if hasEntityColumn {
                        if let target {
                            try statement.bind(Int64(schema.entityNumbers[target.entity]), at: parameter)
                        } else {
                            try statement.bindNull(at: parameter)
                        }
                        parameter += 1
                    }
                }
            }
            return parameter
        }

        mutating func insert(_ snapshot: Snapshot) throws {
            let columns = columns(of: snapshot.ref.entity)
            let statement = try self.statement(columns.insertSQL)
            try statement.bind(snapshot.ref.key, at: 1)
            try statement.bind(Int64(schema.entityNumbers[snapshot.ref.entity]), at: 2)
            try statement.bind(Int64(1), at: 3)
            _ = try bindValues(of: snapshot, columns, columns.fields.indices, to: statement, from: 4)
            try statement.run()
        }

        /// Writes a changed object's row: the columns whose values differ from `stored`, the object as
        /// it was read (every column without it), and one more change in `Z_OPT`. `changedAttributes`,
        /// when given, names the attributes that differ, which are then not compared.
        mutating func update(_ snapshot: Snapshot, from stored: Snapshot?, changedAttributes: [Int]? = nil) throws {
            let entity = snapshot.ref.entity
            let columns = columns(of: entity)
            let changed = Self.changedFields(
                columns, of: snapshot, from: stored, changedAttributes: changedAttributes)
            let statement: SQLiteStatement
            if let prepared = columns.updates[changed] {
                statement = prepared
            } else {
                let sets =
                    changed.flatMap { columns.fields[$0].names }.map { "\(SQLiteName.quoted($0)) = ?" }
                    + ["Z_OPT = Z_OPT + 1"]
                statement = try store.database.prepare(
                    "UPDATE \(table(of: entity)) SET \(sets.joined(separator: ", ")) WHERE Z_PK = ?")
                columnsByEntity[entity]!.updates[changed] = statement
            }
            let next = try bindValues(of: snapshot, columns, changed, to: statement, from: 1)
            try statement.bind(snapshot.ref.key, at: next)
            try statement.run()
            if store.database.changes == 0 {
                throw GraftError(
                    .notFound, "the object no longer exists in the store",
                    context: [.object("\(model.descriptions[entity].name) p\(snapshot.ref.key)")])
            }
        }

        /// Join rows and order keys for the loaded to-manys of a new or changed object.
        mutating func writeToManys(_ snapshot: Snapshot) throws {
            let entity = model.descriptions[snapshot.ref.entity]
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                guard case .toMany(let refs) = snapshot.relationships[relationship.index],
                    let storage = schema.toManyStorage[entity.index][relationship.index]
                else { continue }
                switch storage {
                case .virtualColumn(let virtual):
                    try writeOwners(of: snapshot, relationship, refs: refs, virtual)
                case .inverseColumn(let table, _, let orderColumn):
                    guard let orderColumn else { continue }
                    let statement = try self.statement(
                        "UPDATE \(SQLiteName.quoted(schema.tables[table].name)) SET \(SQLiteName.quoted(orderColumn)) = ? WHERE Z_PK = ?"
                    )
                    for (position, ref) in refs.enumerated() {
                        try statement.bind(
                            SQLiteStoreWriter.firstOrderKey + Int64(position) * SQLiteStoreWriter.orderKeyStep, at: 1)
                        try statement.bind(ref.key, at: 2)
                        try statement.run()
                    }
                case .joinTable(let index, let own, let other, let orderColumn):
                    let join = schema.joinTables[index]
                    let name = SQLiteName.quoted(join.name)
                    if SQLiteSchema.isOwnInverse(relationship, of: entity, in: model) {
                        // Stored once per pair, under either column.
                        let clear = try statement(
                            "DELETE FROM \(name) WHERE \(SQLiteName.quoted(join.sourceColumn)) = ? OR \(SQLiteName.quoted(join.destinationColumn)) = ?"
                        )
                        try clear.bind(snapshot.ref.key, at: 1)
                        try clear.bind(snapshot.ref.key, at: 2)
                        try clear.run()
                        let add = try statement(
                            "INSERT OR IGNORE INTO \(name) (\(SQLiteName.quoted(join.sourceColumn)), \(SQLiteName.quoted(join.destinationColumn))) VALUES (?, ?)"
                        )
                        for ref in refs {
                            try add.bind(min(ref.key, snapshot.ref.key), at: 1)
                            try add.bind(max(ref.key, snapshot.ref.key), at: 2)
                            try add.run()
                        }
                        continue
                    }
                    // Remove pairs no longer present, add the new ones, then set this side's order.
                    let keep = refs.map { String($0.key) }.joined(separator: ", ")
                    let clear = try statement(
                        "DELETE FROM \(name) WHERE \(SQLiteName.quoted(own)) = ?"
                            + (refs.isEmpty ? "" : " AND \(SQLiteName.quoted(other)) NOT IN (\(keep))"))
                    try clear.bind(snapshot.ref.key, at: 1)
                    try clear.run()
                    let add = try statement(
                        "INSERT OR IGNORE INTO \(name) (\(SQLiteName.quoted(own)), \(SQLiteName.quoted(other))) VALUES (?, ?)"
                    )
                    for ref in refs {
                        try add.bind(snapshot.ref.key, at: 1)
                        try add.bind(ref.key, at: 2)
                        try add.run()
                    }
                    if let orderColumn {
                        let order = try statement(
                            "UPDATE \(name) SET \(SQLiteName.quoted(orderColumn)) = ? WHERE \(SQLiteName.quoted(own)) = ? AND \(SQLiteName.quoted(other)) = ?"
                        )
                        for (position, ref) in refs.enumerated() {
                            try order.bind(
                                SQLiteStoreWriter.firstOrderKey + Int64(position) * SQLiteStoreWriter.orderKeyStep,
                                at: 1)
                            try order.bind(snapshot.ref.key, at: 2)
                            try order.bind(ref.key, at: 3)
                            try order.run()
                        }
                    }
                }
            }
        }

        /// Releases the rows an object no longer relates in its loaded to-manys without inverse.
        mutating func releaseOwnedRows(_ snapshot: Snapshot) throws {
            let entity = model.descriptions[snapshot.ref.entity]
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                guard case .toMany(let refs) = snapshot.relationships[relationship.index],
                    case .virtualColumn(let virtual)? = schema.toManyStorage[entity.index][relationship.index]
                else { continue }
                try releaseOwned(by: snapshot.ref.key, virtual, except: refs.map(\.key))
            }
        }

        /// Releases the rows `owner` holds in a to-many without inverse, but for the keys in `kept`.
        private mutating func releaseOwned(
            by owner: Int64, _ virtual: SQLiteSchema.VirtualColumn, except kept: [Int64]
        )
            throws
        {
            let table = SQLiteName.quoted(schema.tables[virtual.table].name)
            let keep = kept.map(String.init).joined(separator: ", ")
            let clear = try statement(
                "UPDATE \(table) SET \(virtual.ownerColumns.map { "\(SQLiteName.quoted($0)) = NULL" }.joined(separator: ", ")) WHERE \(SQLiteName.quoted(virtual.column)) = ?"
                    + (kept.isEmpty ? "" : " AND Z_PK NOT IN (\(keep))"))
            try clear.bind(owner, at: 1)
            try clear.run()
            if let overflow = virtual.overflow {
                let join = schema.joinTables[overflow]
                let remove = try statement(
                    "DELETE FROM \(SQLiteName.quoted(join.name)) WHERE \(SQLiteName.quoted(join.sourceColumn)) = ?")
                try remove.bind(owner, at: 1)
                try remove.run()
            }
        }

        /// A to-many without inverse keeps its owner in each related row (Core Data's layout): the rows no
        /// longer related are released and the related ones claimed, with the owner's entity number and
        /// position where the store has columns for them. A row another object already owns is recorded in
        /// Graft's join table for further owners (created on first use), which Graft reads and Core Data
        /// does not.
        private mutating func writeOwners(
            of snapshot: Snapshot, _ relationship: RelationshipDescription, refs: [ObjectRef],
            _ virtual: SQLiteSchema.VirtualColumn
        ) throws {
            let owner = snapshot.ref.key
            try releaseOwned(by: owner, virtual, except: refs.map(\.key))
            let table = SQLiteName.quoted(schema.tables[virtual.table].name)
            let current = try statement("SELECT \(SQLiteName.quoted(virtual.column)) FROM \(table) WHERE Z_PK = ?")
            let claim = try statement(
                "UPDATE \(table) SET \(virtual.ownerColumns.map { "\(SQLiteName.quoted($0)) = ?" }.joined(separator: ", ")) WHERE Z_PK = ?"
            )
            for (position, ref) in refs.enumerated() {
                try current.bind(ref.key, at: 1)
                let holder: Int64? = try current.step() && !current.isNull(0) ? current.int64(0) : nil
                current.reset()
                if let holder, holder != owner {
                    let join = try store.ownersJoinTable(
                        of: relationship, from: model.descriptions[snapshot.ref.entity])
                    let add = try statement(
                        "INSERT OR IGNORE INTO \(SQLiteName.quoted(join.name)) (\(SQLiteName.quoted(join.sourceColumn)), \(SQLiteName.quoted(join.destinationColumn))) VALUES (?, ?)"
                    )
                    try add.bind(owner, at: 1)
                    try add.bind(ref.key, at: 2)
                    try add.run()
                    continue
                }
                var values = [owner]
                if virtual.entityColumn != nil { values.append(Int64(schema.entityNumbers[snapshot.ref.entity])) }
                if virtual.orderColumn != nil {
                    values.append(SQLiteStoreWriter.firstOrderKey + Int64(position) * SQLiteStoreWriter.orderKeyStep)
                }
                for (offset, value) in values.enumerated() { try claim.bind(value, at: Int32(offset + 1)) }
                try claim.bind(ref.key, at: Int32(values.count + 1))
                try claim.run()
            }
        }

        mutating func delete(_ ref: ObjectRef) throws {
            let entity = model.descriptions[ref.entity]
            let table = schema.tables[schema.tableOfEntity[entity.index]].name
            let statement = try self.statement("DELETE FROM \(SQLiteName.quoted(table)) WHERE Z_PK = ?")
            try statement.bind(ref.key, at: 1)
            try statement.run()
            // Join rows that mention the object, and the rows that name it as their owner in a to-many
            // without inverse.
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                if case .virtualColumn(let virtual)? = schema.toManyStorage[entity.index][relationship.index] {
                    try releaseOwned(by: ref.key, virtual, except: [])
                    continue
                }
                guard
                    case .joinTable(let index, let own, let other, _)? = schema.toManyStorage[entity.index][
                        relationship.index]
                else {
                    continue
                }
                let columns = SQLiteSchema.isOwnInverse(relationship, of: entity, in: model) ? [own, other] : [own]
                for column in columns {
                    let clear = try self.statement(
                        "DELETE FROM \(SQLiteName.quoted(schema.joinTables[index].name)) WHERE \(SQLiteName.quoted(column)) = ?"
                    )
                    try clear.bind(ref.key, at: 1)
                    try clear.run()
                }
            }
        }

        /// Raises each tree's `Z_MAX` to the highest key saved.
        mutating func recordHighestKeys(_ inserted: [Snapshot]) throws {
            var highest: [Int: Int64] = [:]
            for snapshot in inserted {
                let root = model.descriptions[snapshot.ref.entity].rootIndex
                highest[root] = max(highest[root] ?? 0, snapshot.ref.key)
            }
            try recordHighest(highest)
        }

        /// Raises each tree's `Z_MAX` to at least its key in `highest`.
        mutating func recordHighest(_ highest: [Int: Int64]) throws {
            let statement = try self.statement("UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_ENT = ?")
            for (root, key) in highest {
                try statement.bind(key, at: 1)
                try statement.bind(Int64(schema.entityNumbers[root]), at: 2)
                try statement.run()
            }
        }
    }
}

extension SQLiteStore {
    /// Graft's join table for the owners after the first of objects in a to-many without inverse,
    /// created (in the save's transaction) when the store does not have it yet.
    fileprivate func ownersJoinTable(
        of relationship: RelationshipDescription, from entity: EntityDescription
    ) throws -> SQLiteSchema.JoinTable {
        guard case .virtualColumn(var virtual)? = schema.toManyStorage[entity.index][relationship.index] else {
            throw GraftError(.invalidOperation, "\(entity.name).\(relationship.name) is not a to-many without inverse")
        }
        if let overflow = virtual.overflow { return schema.joinTables[overflow] }
        let side = schema.side(of: relationship, from: entity)
        let join = schema.ownersJoinTable(entity: side.entity, relationship: side.relationship)
        var columns = [join.sourceColumn, join.destinationColumn]
        if let order = join.sourceOrderColumn { columns.append(order) }
        try database.execute(
            "CREATE TABLE \(SQLiteName.quoted(join.name)) ( \(columns.map { "\(SQLiteName.quoted($0)) INTEGER" }.joined(separator: ", ")), PRIMARY KEY (\(SQLiteName.quoted(join.sourceColumn)), \(SQLiteName.quoted(join.destinationColumn))) )"
        )
        virtual.overflow = schema.joinTables.count
        schema.joinTables.append(join)
        let declarer = model.descriptions[side.entity]
        for heir in [declarer.index] + declarer.descendantIndices {
            schema.toManyStorage[heir][side.relationship] = .virtualColumn(virtual)
        }
        return join
    }
}
