internal import CSQLite
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
public final class SQLiteStoreReader: StoreReader, SnapshotExchangingReader {
    public let model: Model
    public let metadata: StoreMetadata
    public let modelSource: ModelSource
    let database: SQLiteDatabase
    let schema: SQLiteSchema
    let url: URL
    let missingExternalData: StoreReadOptions.MissingExternalData
    /// Values that are not of their attribute's type or range: an error, or no value and a warning.
    let refusals: ValueRefusals
    /// Things worth telling the user that did not stop the read: how the model was found, values whose
    /// external file is missing, values read as no value under `ValueReading.lenient` (one line per
    /// entity and attribute).
    public var warnings: [String] {
        // A failed search for missing references fails the read too: that error is told there.
        try? settleDanglingReferences()
        return readWarnings + refusals.warnings
    }
    private var readWarnings: [String] = []
    /// The values read as no value under `ValueReading.lenient`, by object and attribute.
    package var refusedValues: Set<ValueRefusals.Slot> { refusals.slots }

    /// References to missing objects, by root entity and key; empty unless `dangling` is `.drop`.
    private var missing: Set<MissingKey> = []
    /// The search for references to missing objects, while it runs (see ``settleDanglingReferences()``).
    private var danglingSearch: BackgroundWork<DanglingReferences>?

    /// The entity numbers of tables (by index) gathered by ``forEachRef(_:)``, for the reads after it;
    /// `nil` for a table whose keys do not allow them.
    private var collectedNumbers: [Int: EntityNumbers?] = [:]
    /// Rows per table, by table index, counted once (by ``counts()`` or `count(*)`).
    private var rowCounts: [Int: Int64] = [:]

    private struct MissingKey: Hashable {
        var root: Int
        var key: Int64
    }

    /// Opens a store for reading.
    ///
    /// - Parameters:
    ///   - model: the model to read with; `nil` uses the model the store keeps in its model cache, or, for
    ///     a store without one (or whose cache cannot be decoded), a model inferred from its tables
    ///     (`warnings` say what that model cannot know).
    ///   - valueReading: what to do with a stored value that is not of its attribute's type or range.
    /// - Throws: `GraftError.fileNotFound`, `.malformedInput` (not a Core Data store, corrupt),
    ///   `.modelMismatch` (the given model's version hashes differ from the store's, naming the entities,
    ///   or its tables do not fit the model); while reading, `.typeMismatch` naming the object, attribute
    ///   and value that strict reading refuses.
    public init(
        url: URL, model: Model?, missingExternalData: StoreReadOptions.MissingExternalData = .fail,
        danglingReferences: StoreReadOptions.DanglingReferences = .keep, valueReading: ValueReading = .strict
    ) throws {
        self.url = url
        self.missingExternalData = missingExternalData
        self.refusals = ValueRefusals(valueReading)
        let database = try SQLiteDatabase.openForReading(url)
        let choice = try SQLiteStoreFile.read(database, url: url).chooseModel(model, database: database)
        let (metadata, chosen) = (choice.metadata, choice.model)
        self.model = chosen
        self.metadata = metadata
        self.modelSource = choice.source
        self.database = database
        self.schema = try SQLiteSchema.discover(in: database, model: chosen)
        readWarnings = choice.warnings + schema.warnings
        if danglingReferences == .drop {
            // On a connection of its own: what is read before the first snapshot (counts, keys, a
            // clipboard's header) goes on meanwhile.
            let (sibling, model, schema) = (try database.sibling(), chosen, schema)
            danglingSearch = BackgroundWork {
                try withExtendedLifetime(sibling) {
                    try Self.danglingReferences(in: sibling, model: model, schema: schema)
                }
            }
        }
    }

    deinit {
        // The search reads this reader's file, or the private copy of it that this reader removes.
        _ = try? danglingSearch?.wait()
    }

    /// Waits for the search for references to missing objects, if one runs, and takes what it found.
    private func settleDanglingReferences() throws {
        guard let search = danglingSearch else { return }
        danglingSearch = nil
        let found = try search.wait()
        missing = found.missing
        readWarnings += found.warnings
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

    /// The rows of every entity table: `count(*)` a table, which SQLite answers from the table's smallest
    /// index without a pass over its rows (grouping by `Z_ENT`, as ``counts()`` does, is such a pass).
    public var objectCount: Int? {
        var total: Int64 = 0
        for table in schema.tables.indices {
            guard let rows = try? rowCount(ofTable: table) else { return nil }
            total &+= rows
        }
        return Int(total)
    }

    /// The rows of a table, counted once.
    private func rowCount(ofTable tableIndex: Int) throws -> Int64 {
        if let known = rowCounts[tableIndex] { return known }
        let statement = try database.prepare("SELECT count(*) FROM \(quoted(schema.tables[tableIndex].name))")
        guard try statement.step() else { return 0 }
        rowCounts[tableIndex] = statement.int64(0)
        return statement.int64(0)
    }

    /// References to rows that do not exist, and a warning for each relationship holding some.
    private struct DanglingReferences {
        var missing: Set<MissingKey> = []
        var warnings: [String] = []
    }

    /// Finds references to rows that do not exist, with one anti-join per to-one column and join column.
    private static func danglingReferences(
        in database: SQLiteDatabase, model: Model, schema: SQLiteSchema
    ) throws -> DanglingReferences {
        var result = DanglingReferences()
        func quoted(_ name: String) -> String { SQLiteName.quoted(name) }
        var found: [String: [Int64]] = [:]
        func scan(_ sql: String, root: Int, label: String) throws {
            let statement = try database.prepare(sql)
            while try statement.step() {
                let key = statement.int64(0)
                result.missing.insert(MissingKey(root: root, key: key))
                found[label, default: []].append(key)
            }
        }
        for entity in model.descriptions {
            for relationship in entity.declaration.relationships where !relationship.isTransient {
                guard let index = entity.relationshipIndexByName[relationship.name] else { continue }
                let description = entity.relationships[index]
                let destination = model.descriptions[description.destinationIndex]
                let target = quoted(schema.tables[schema.tableOfEntity[destination.index]].name)
                let label = "\(entity.name).\(relationship.name) (\(destination.name))"
                if !relationship.isToMany, let columns = schema.toOneColumns[entity.index][index] {
                    let table = quoted(schema.tables[schema.tableOfEntity[entity.index]].name)
                    try scan(
                        missingKeys(column: quoted(columns.key), of: table, notIn: target, skippingNull: true),
                        root: destination.rootIndex, label: label)
                } else if relationship.isToMany,
                    case .joinTable(let join, let own, let other, _)? = schema.toManyStorage[entity.index][index]
                {
                    let table = quoted(schema.joinTables[join].name)
                    try scan(
                        missingKeys(column: quoted(other), of: table, notIn: target), root: destination.rootIndex,
                        label: label)
                    let source = quoted(schema.tables[schema.tableOfEntity[entity.index]].name)
                    try scan(
                        missingKeys(column: quoted(own), of: table, notIn: source), root: entity.rootIndex,
                        label: "join rows of \(label) from missing \(entity.name)")
                }
            }
        }
        for (label, keys) in found.sorted(by: { $0.key < $1.key }) {
            let shown = keys.prefix(10).map { "p\($0)" }.joined(separator: ", ")
            result.warnings.append(
                "\(label) refers to \(shown)\(keys.count > 10 ? " and \(keys.count - 10) more" : ""), which the store does not have; those references are left out"
            )
        }
        return result
    }

    /// The SQL for the distinct keys in `column` of `table` (both quoted) that no row of `target` has, in
    /// order (and NULL, unless `skippingNull`). The keys are made distinct first (from the column's index,
    /// when it has one), so that each is looked up in `target` once rather than once per row holding it.
    private static func missingKeys(
        column: String, of table: String, notIn target: String, skippingNull: Bool = false
    )
        -> String
    {
        "SELECT k FROM (SELECT DISTINCT \(column) AS k FROM \(table)\(skippingNull ? " WHERE \(column) IS NOT NULL" : "")) "
            + "WHERE NOT EXISTS (SELECT 1 FROM \(target) d WHERE d.Z_PK = k) ORDER BY 1"
    }

    /// How many objects each entity has, counting each object under its own entity only.
    public func counts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for entity in model.descriptions where !entity.isAbstract { counts[entity.name] = 0 }
        for (tableIndex, table) in schema.tables.enumerated() {
            let statement = try database.prepare("SELECT Z_ENT, count(*) FROM \(quoted(table.name)) GROUP BY Z_ENT")
            var rows: Int64 = 0
            while try statement.step() {
                rows &+= statement.int64(1)
                let number = Int(statement.int64(0))
                guard let entity = schema.entity(forNumber: number) else {
                    throw GraftError(
                        .malformedInput,
                        "table \(table.name) holds rows of entity number \(number), which the model does not have",
                        context: [.file(url.relativePath)])
                }
                counts[model.descriptions[entity].name, default: 0] += Int(statement.int64(1))
            }
            rowCounts[tableIndex] = rows
        }
        return counts
    }

    public func forEachSnapshot(_ body: (Snapshot) throws -> Void) throws {
        try handOverEachSnapshot { try body($0) }
    }

    package func handOverEachSnapshot(_ body: (inout Snapshot) throws -> Void) throws {
        do {
            try settleDanglingReferences()
            var entityNumbers: [Int: EntityNumbers?] = [:]
            for table in schema.tables.indices {
                try readTable(table, entityNumbers: &entityNumbers, body)
            }
        } catch let error as GraftError {
            throw error.context.first == .file(url.relativePath) ? error : error.inFile(url.relativePath)
        }
    }

    /// The refs of the objects ``forEachSnapshot(_:)`` gives, in its order, from each table's keys and
    /// entity numbers alone (no value decoded).
    ///
    /// Where a table's keys are dense enough for an array of entity numbers (Core Data's are), the pairs
    /// are read in any order, which lets SQLite answer from the index Core Data keeps on `Z_ENT` in a
    /// table of several entities (a seventh of the table's pages in the Company benchmark's store), and
    /// the keys come in order from the array; else from the table in key order.
    public func forEachRef(_ body: (ObjectRef) throws -> Void) throws -> Bool {
        do {
            for table in schema.tables.indices {
                let decoder = SQLiteRowDecoder(
                    schema: schema, table: table, database: database, path: url.relativePath,
                    externalData: externalDataFolder, refusals: refusals)
                // The same pass gathers the table's entity numbers, which reading its to-manys needs.
                let collected = try collectNumbers(ofTable: table)
                collectedNumbers.updateValue(collected, forKey: table)
                if let collected {
                    for (key, number) in collected.numbers.enumerated() where number != EntityNumbers.absent {
                        let entity = try decoder.entity(key: Int64(key), number: Int(number))
                        try body(ObjectRef(entity: entity, key: Int64(key)))
                    }
                    continue
                }
                let rows = try database.prepare(
                    "SELECT Z_PK, Z_ENT FROM \(quoted(schema.tables[table].name)) ORDER BY Z_PK")
                while try rows.step() {
                    let (key, entity) = try decoder.entity(of: rows)
                    try body(ObjectRef(entity: entity, key: key))
                }
            }
        } catch let error as GraftError {
            throw error.context.first == .file(url.relativePath) ? error : error.inFile(url.relativePath)
        }
        return true
    }

    // MARK: Reading one table

    /// The `Z_ENT` of every row of an entity table, by key: read in one pass over the table, so that
    /// cursors over the rows of a to-many need not look each row up in the table for its entity. Two
    /// bytes a key: entity numbers are small (one per entity of the model).
    private final class EntityNumbers {
        static let noRow = Int32.min
        /// The number stored for keys without a row.
        static let absent = UInt16.max
        let numbers: [UInt16]

        init(_ numbers: [UInt16]) { self.numbers = numbers }

        /// The entity number of the row with `key`, or `noRow`.
        @inline(__always)
        func number(of key: Int64) -> Int32 {
            guard key >= 0 && key < numbers.count else { return Self.noRow }
            let number = numbers[Int(key)]
            return number == Self.absent ? Self.noRow : Int32(number)
        }
    }

    /// Gathers a table's entity numbers from its rows, in any order, while its keys allow an array.
    private struct EntityNumbersCollector {
        /// `nil` once the keys do not allow one.
        private var numbers: [UInt16]?

        /// For a table whose keys run from `lowest` to `highest` over `count` rows: dense enough when the
        /// array is at most about four entries a row.
        init(lowest: Int64, highest: Int64, count: Int64) {
            if lowest >= 0 && highest < 1 << 27 && highest <= 4 * count + (1 << 20) {
                numbers = [UInt16](repeating: EntityNumbers.absent, count: Int(highest) + 1)
            }
        }

        var isCollecting: Bool { numbers != nil }

        /// Notes the entity number of the row with `key`; a key out of bounds or seen before, or a number
        /// that does not fit in two bytes, ends the collection.
        mutating func add(key: Int64, number: Int64) {
            guard let count = numbers?.count else { return }
            guard key >= 0 && key < count, numbers![Int(key)] == EntityNumbers.absent,
                number >= 0 && number < Int64(EntityNumbers.absent)
            else {
                numbers = nil
                return
            }
            numbers![Int(key)] = UInt16(number)
        }

        var result: EntityNumbers? { numbers.map(EntityNumbers.init) }
    }

    /// A collector for a table's entity numbers, from the table's key bounds.
    private func entityNumbersCollector(ofTable tableIndex: Int) throws -> EntityNumbersCollector {
        // Each bound is a query of its own: SQLite finds a lone min() or max() of the primary key at one
        // end of the table, but a query asking for both (or for a count beside them) reads every row.
        func bound(_ function: String) throws -> Int64? {
            let statement = try database.prepare(
                "SELECT \(function)(Z_PK) FROM \(quoted(schema.tables[tableIndex].name))")
            guard try statement.step(), !statement.isNull(0) else { return nil }
            return statement.int64(0)
        }
        guard let lowest = try bound("min"), let highest = try bound("max") else {
            return EntityNumbersCollector(lowest: -1, highest: -1, count: 0)
        }
        return EntityNumbersCollector(lowest: lowest, highest: highest, count: try rowCount(ofTable: tableIndex))
    }

    /// The entity numbers of a table's rows, when its keys are dense enough to keep them in an array
    /// (Core Data's are), each key is used once and every number fits in two bytes; else `nil`. Those
    /// ``forEachRef(_:)`` gathered are not read again.
    private func entityNumbers(ofTable tableIndex: Int, cache: inout [Int: EntityNumbers?]) throws -> EntityNumbers? {
        if let cached = cache[tableIndex] { return cached }
        if let collected = collectedNumbers[tableIndex] {
            cache.updateValue(collected, forKey: tableIndex)
            return collected
        }
        let collected = try collectNumbers(ofTable: tableIndex)
        cache.updateValue(collected, forKey: tableIndex)
        return collected
    }

    /// Reads a table's entity numbers in one pass over its keys and `Z_ENT`, in whatever order SQLite
    /// finds cheapest; `nil` when they do not fit an array (see `EntityNumbersCollector`).
    private func collectNumbers(ofTable tableIndex: Int) throws -> EntityNumbers? {
        var collector = try entityNumbersCollector(ofTable: tableIndex)
        if collector.isCollecting {
            let rows = try database.prepare("SELECT Z_PK, Z_ENT FROM \(quoted(schema.tables[tableIndex].name))")
            while collector.isCollecting, try rows.step() { collector.add(key: rows.int64(0), number: rows.int64(1)) }
        }
        return collector.result
    }

    /// A cursor over (owner key, related key, related entity) rows sorted by owner key.
    private final class RelatedCursor {
        let rows: CursorRows
        let fixedEntity: Int?
        /// Where the related rows' entity numbers come from when the statement does not select them.
        let entityNumbers: EntityNumbers?
        let schema: SQLiteSchema
        /// `Entity.relationship`, for messages.
        let label: String
        var current: (owner: Int64, key: Int64, entity: Int)?
        var finished = false

        init(
            rows: CursorRows, fixedEntity: Int?, entityNumbers: EntityNumbers? = nil, schema: SQLiteSchema,
            label: String
        ) throws {
            self.rows = rows
            self.fixedEntity = fixedEntity
            self.entityNumbers = entityNumbers
            self.schema = schema
            self.label = label
            try advance()
        }

        func advance() throws {
            guard let row = try rows.next() else {
                current = nil
                finished = true
                return
            }
            let entity: Int
            if let fixedEntity {
                entity = fixedEntity
            } else {
                let number: Int
                if let entityNumbers {
                    let found = entityNumbers.number(of: row.key)
                    guard found != EntityNumbers.noRow else {
                        throw GraftError(
                            .malformedInput,
                            "\(label) of p\(row.owner) holds p\(row.key), which its table does not have")
                    }
                    number = Int(found)
                } else {
                    number = Int(row.third)
                }
                guard let found = schema.entity(forNumber: number) else {
                    throw GraftError(
                        .malformedInput,
                        "\(label) of p\(row.owner) holds p\(row.key), whose entity number \(number) the model does not have"
                    )
                }
                entity = found
            }
            current = (row.owner, row.key, entity)
        }

        /// Appends the related refs of `owner` to `refs`, consuming them (owners must be asked in
        /// increasing order).
        func take(_ owner: Int64, into refs: inout [ObjectRef]) throws {
            while let row = current, row.owner <= owner {
                if row.owner == owner { refs.append(ObjectRef(entity: row.entity, key: row.key)) }
                try advance()
            }
        }
    }

    private func quoted(_ name: String) -> String { SQLiteName.quoted(name) }

    /// A cursor statement's rows (owner key, related key, and the third column or 0): stepped here, or,
    /// for a long one, read ahead on a thread and connection of its own while this thread reads the rows
    /// of the table (to-manys of a million rows are a fifth of a copy's reading).
    private final class CursorRows {
        typealias Row = (owner: Int64, key: Int64, third: Int64)
        private let statement: SQLiteStatement?
        private let ahead: ReadAhead<Row>?
        private let columns: Int32

        static let chunkSize = 4096

        /// `statement`'s rows, stepped here when `readsAhead` is false; else on another thread, with
        /// `statement` prepared on a connection that thread alone uses until the rows end or `stop()`.
        init(_ statement: SQLiteStatement, columns: Int32, readsAhead: Bool) {
            self.columns = columns
            guard readsAhead else {
                self.statement = statement
                ahead = nil
                return
            }
            self.statement = nil
            ahead = ReadAhead(chunkSize: Self.chunkSize) { chunk, limit in
                while chunk.count < limit {
                    guard try statement.step() else { return false }
                    chunk.append((statement.int64(0), statement.int64(1), columns > 2 ? statement.int64(2) : 0))
                }
                return true
            }
        }

        func next() throws -> Row? {
            if let ahead { return try ahead.next() }
            guard let statement, try statement.step() else { return nil }
            return (statement.int64(0), statement.int64(1), columns > 2 ? statement.int64(2) : 0)
        }

        /// Ends reading ahead, if it runs, and waits until its thread is done with its connection.
        func stop() { ahead?.stop() }
    }

    /// Cursors over tables of this many rows or more are read ahead (tests lower it).
    var cursorReadAheadRows: Int64 = 1 << 16

    /// Connections for cursors read ahead, made as needed and used again by the next table's cursors
    /// (whose threads the previous table's have ended); the number of them in use while a table is read.
    private var cursorConnections: [SQLiteDatabase] = []
    private var cursorConnectionsInUse = 0

    /// Rows of `sql` over `table`, read ahead on a connection of their own when the table is long.
    private func cursorRows(_ sql: String, columns: Int32, over table: String) throws -> CursorRows {
        let size = try? database.prepare("SELECT max(rowid) FROM \(quoted(table))")
        let long = try size.map { try $0.step() && $0.int64(0) >= cursorReadAheadRows } ?? false
        guard long, let connection = try? cursorConnection() else {
            return CursorRows(try database.prepare(sql), columns: columns, readsAhead: false)
        }
        return CursorRows(try connection.prepare(sql), columns: columns, readsAhead: true)
    }

    private func cursorConnection() throws -> SQLiteDatabase {
        if cursorConnectionsInUse == cursorConnections.count { cursorConnections.append(try database.sibling()) }
        cursorConnectionsInUse += 1
        return cursorConnections[cursorConnectionsInUse - 1]
    }

    /// A cursor for one to-many of the entities in `table`.
    private func cursors(
        for relationship: RelationshipDescription, of entity: EntityDescription,
        entityNumbers cache: inout [Int: EntityNumbers?]
    ) throws -> [RelatedCursor] {
        guard let storage = schema.toManyStorage[entity.index][relationship.index] else { return [] }
        let destination = model.descriptions[relationship.destinationIndex]
        let destinationTable = schema.tables[schema.tableOfEntity[destination.index]]
        let fixed = destination.descendantIndices.isEmpty ? destination.index : nil
        let label = "\(entity.name).\(relationship.name)"
        func joinCursors(_ join: SQLiteSchema.JoinTable, _ pairs: [(String, String, String?)]) throws -> [RelatedCursor]
        {
            try pairs.map { own, other, order in
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
                    rows: cursorRows(sql, columns: fixed == nil ? 3 : 2, over: join.name), fixedEntity: fixed,
                    schema: schema, label: label)
            }
        }
        switch storage {
        case .inverseColumn, .virtualColumn:
            let (table, column, orderColumn) = storage.ownerColumn!
            let source = schema.tables[table]
            let order = orderColumn.map { "\(quoted($0)), " } ?? ""
            // Each related row's entity comes from the table's entity numbers, read once, when it can:
            // selecting Z_ENT here would look every row up in the table (the rows come in the order of
            // the foreign key's index, which holds only the key and Z_PK).
            let numbers = try entityNumbers(ofTable: table, cache: &cache)
            let selected = numbers == nil ? "Z_PK, Z_ENT" : "Z_PK"
            let sql =
                "SELECT \(quoted(column)), \(selected) FROM \(quoted(source.name)) WHERE \(quoted(column)) IS NOT NULL ORDER BY \(quoted(column)), \(order)Z_PK"
            var cursors = [
                try RelatedCursor(
                    rows: cursorRows(sql, columns: numbers == nil ? 3 : 2, over: source.name), fixedEntity: nil,
                    entityNumbers: numbers, schema: schema, label: label)
            ]
            // Owners after the first, in Graft's join table.
            if case .virtualColumn(let virtual) = storage, let overflow = virtual.overflow {
                let join = schema.joinTables[overflow]
                cursors += try joinCursors(join, [(join.sourceColumn, join.destinationColumn, join.sourceOrderColumn)])
            }
            return cursors
        case .joinTable(let index, let ownColumn, let otherColumn, let orderColumn):
            let join = schema.joinTables[index]
            // A relationship that is its own inverse is stored once per pair: read both directions.
            if SQLiteSchema.isOwnInverse(relationship, of: entity, in: model) {
                return try joinCursors(
                    join,
                    [
                        (join.sourceColumn, join.destinationColumn, nil),
                        (join.destinationColumn, join.sourceColumn, nil),
                    ])
            }
            return try joinCursors(join, [(ownColumn, otherColumn, orderColumn)])
        }
    }

    /// What reading the rows of one entity needs: where its values are, its to-manys' cursors (by
    /// relationship index; empty for relationships without any) and a snapshot whose storage each row
    /// reuses.
    private final class EntityReading {
        let plan: SQLiteRowDecoder.Plan
        let cursors: [[RelatedCursor]]
        @exclusivity(unchecked) var snapshot: Snapshot

        init(plan: SQLiteRowDecoder.Plan, cursors: [[RelatedCursor]], snapshot: Snapshot) {
            self.plan = plan
            self.cursors = cursors
            self.snapshot = snapshot
        }
    }

    private func readTable(
        _ tableIndex: Int, entityNumbers: inout [Int: EntityNumbers?], _ body: (inout Snapshot) throws -> Void
    ) throws {
        var decoder = SQLiteRowDecoder(
            schema: schema, table: tableIndex, database: database, path: url.relativePath,
            externalData: externalDataFolder, refusals: refusals)
        let rows = try database.prepare(decoder.selectClause + " ORDER BY t.Z_PK")
        let table = schema.tables[tableIndex]

        // One set of cursors per to-many, shared by every entity of the table that has it; those read
        // ahead end with the table, so that the next table's can use their connections.
        var sharedCursors: [String: [RelatedCursor]] = [:]
        defer {
            for cursors in sharedCursors.values { for cursor in cursors { cursor.rows.stop() } }
            cursorConnectionsInUse = 0
        }
        var readings = [EntityReading?](repeating: nil, count: model.descriptions.count)
        func reading(for entity: EntityDescription, cursors: [[RelatedCursor]]) -> EntityReading {
            EntityReading(
                plan: decoder.plan(for: entity.index), cursors: cursors, snapshot: Snapshot(entity: entity, key: 0))
        }
        for member in table.entities {
            let entity = model.descriptions[member]
            var cursors = [[RelatedCursor]](repeating: [], count: entity.relationships.count)
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                let declarer = SQLiteSchema.declaringEntity(of: relationship.name, from: entity, in: model)
                let key = "\(declarer.index).\(relationship.name)"
                if sharedCursors[key] == nil {
                    sharedCursors[key] = try self.cursors(
                        for: relationship, of: declarer, entityNumbers: &entityNumbers)
                }
                cursors[relationship.index] = sharedCursors[key]!
            }
            readings[member] = reading(for: entity, cursors: cursors)
        }
        let missing: ((String) throws -> Void)? =
            missingExternalData == .fail
            ? nil
            : { path in self.readWarnings.append("external file \(path) is missing; its value is read as no value") }
        while try rows.step() {
            let (key, entityIndex) = try decoder.entity(of: rows)
            let current: EntityReading
            if let found = readings[entityIndex] {
                current = found
            } else {
                // A row of an entity kept in another table (a damaged store): read it with no to-manys.
                let entity = model.descriptions[entityIndex]
                current = reading(
                    for: entity, cursors: Array(repeating: [], count: entity.relationships.count))
                readings[entityIndex] = current
            }
            try decoder.read(rows, key: key, plan: current.plan, into: &current.snapshot, missing: missing) {
                relationship, key, refs in
                let cursors = current.cursors[relationship]
                for cursor in cursors { try cursor.take(key, into: &refs) }
                // A relationship that is its own inverse is read in both directions, and older stores
                // keep each pair in both: each related object once.
                if cursors.count > 1 { Self.removeRepeats(from: &refs) }
                return true
            }
            if self.missing.isEmpty {
                try body(&current.snapshot)
                // What `body` gave back is filled with the next row of the entity: it must be of the entity.
                if current.snapshot.ref.entity != entityIndex {
                    current.snapshot = Snapshot(entity: model.descriptions[entityIndex], key: 0)
                }
            } else {
                var snapshot = withoutMissingReferences(current.snapshot)
                try body(&snapshot)
            }
        }
    }

    /// Keeps the first of each repeated reference, in order.
    static func removeRepeats(from refs: inout [ObjectRef]) {
        var seen = Set<ObjectRef>()
        refs.removeAll { !seen.insert($0).inserted }
    }

    private func withoutMissingReferences(_ snapshot: Snapshot) -> Snapshot {
        var copy = snapshot
        for (index, value) in snapshot.relationships.enumerated() {
            func exists(_ ref: ObjectRef) -> Bool {
                !missing.contains(MissingKey(root: model.descriptions[ref.entity].rootIndex, key: ref.key))
            }
            switch value {
            case .toOne(let ref?) where !exists(ref): copy.relationships[index] = .toOne(nil)
            case .toMany(let refs) where !refs.allSatisfy(exists):
                copy.relationships[index] = .toMany(refs.filter(exists))
            default: break
            }
        }
        return copy
    }
}
