import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// A Core Data SQLite store opened for a context: objects are read on demand (a fetch reads only the
/// rows it needs; to-manys are read when first used), and saves write only what changed, in one
/// transaction.
///
/// For example:
///
/// ```swift
/// let store = try SQLiteStore.open(url, model: nil)          // the store's own model
/// let context = ObjectContext(store: store)
/// var request = FetchRequest(entityName: "Employee")
/// request.predicate = try GraftPredicate(format: "salary > 50000")
/// request.fetchLimit = 100
/// let employees = try context.fetch(request)                  // reads about 100 rows
/// ```
public final class SQLiteStore: SiblingReading {
    public let url: URL
    public let model: Model
    public private(set) var metadata: StoreMetadata
    public var identifier: String { metadata.identifier }
    /// Whether the store was opened with ``openForReading(_:model:)``: saving throws.
    public let isReadOnly: Bool
    let database: SQLiteDatabase
    /// Where everything is; a save can add Graft's join table for further owners of a to-many without
    /// inverse.
    var schema: SQLiteSchema
    /// The last key handed out per root entity.
    private var lastKeys: [Int: Int64] = [:]
    private var rowStatements: [Int: SQLiteStatement] = [:]
    /// Prepared fetch statements by their SQL, so that repeated fetches and to-many reads are not
    /// prepared again each time; emptied when it grows large.
    private var fetchStatements: [String: SQLiteStatement] = [:]
    /// One row decoder per table, keeping the per-entity plans it works out.
    private var decoders: [Int: SQLiteRowDecoder] = [:]
    private var selectClauses: [Int: String] = [:]
    /// The folder Core Data keeps externally stored binary data in.
    let externalDataFolder: URL
    /// The files SQLite keeps beside a store, by suffix: `-wal`, `-shm`, `-journal`.
    public static let sideFileSuffixes = SQLiteDatabase.sideFileSuffixes

    /// Whether ``beginExclusiveAccess()`` opened a write transaction that the next save commits.
    var holdsExclusiveAccess = false

    private init(
        url: URL, model: Model, metadata: StoreMetadata, database: SQLiteDatabase, schema: SQLiteSchema,
        isReadOnly: Bool = false
    ) {
        self.url = url
        self.isReadOnly = isReadOnly
        self.externalDataFolder = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent)_SUPPORT/_EXTERNAL_DATA")
        self.model = model
        self.metadata = metadata
        self.database = database
        self.schema = schema
    }

    /// Opens an existing store for reading and saving.
    ///
    /// - Parameters:
    ///   - model: the model to use; `nil` uses the store's model cache.
    ///   - wait: how long to wait for another connection's lock, in seconds, before failing as busy.
    /// - Throws: `GraftError.fileNotFound`, `.malformedInput`, `.notFound` (no model), `.modelMismatch`;
    ///   `.io` for a read-only store; `.busy`.
    public static func open(_ url: URL, model: Model?, wait: TimeInterval = FileLock.defaultWait) throws -> SQLiteStore
    {
        let database = try SQLiteDatabase.openForWriting(url, wait: wait)
        let choice = try SQLiteStoreFile.read(database, url: url).chooseModel(model, database: database)
        let (metadata, chosen) = (choice.metadata, choice.model)
        try database.execute("PRAGMA foreign_keys = OFF")
        // Room for the pages a paste looks up and changes (SQLite grows the cache only as it needs).
        try database.execute("PRAGMA cache_size = -65536")
        let schema = try SQLiteSchema.discover(in: database, model: chosen)
        return SQLiteStore(url: url, model: chosen, metadata: metadata, database: database, schema: schema)
    }

    /// Opens a store to read and fetch from without changing it, its `-wal` or its `-shm` in any way.
    ///
    /// - Parameters:
    ///   - missingExternalData: what to do with a value whose external file is missing: stop with an
    ///     error when it is read, or read it as no value and add a warning to `warnings`.
    ///   - valueReading: what to do with a stored value that is not of its attribute's type or range:
    ///     stop with an error when it is read, or read it as no value with a warning per attribute.
    /// - Throws: as ``open(_:model:wait:)``.
    public static func openForReading(
        _ url: URL, model: Model?, missingExternalData: StoreReadOptions.MissingExternalData = .fail,
        valueReading: ValueReading = .strict
    ) throws -> SQLiteStore {
        let database = try SQLiteDatabase.openForReading(url)
        let choice = try SQLiteStoreFile.read(database, url: url).chooseModel(model, database: database)
        let (metadata, chosen) = (choice.metadata, choice.model)
        let schema = try SQLiteSchema.discover(in: database, model: chosen)
        let store = SQLiteStore(
            url: url, model: chosen, metadata: metadata, database: database, schema: schema, isReadOnly: true)
        store.readWarnings = choice.warnings + schema.warnings
        store.omitsMissingExternalData = missingExternalData == .omit
        store.refusals = ValueRefusals(valueReading)
        return store
    }

    /// Starts a write transaction now, waiting for other writers up to the store's `wait`, and holds it
    /// until the next save commits it (or the store goes away, which rolls it back): what is read and
    /// checked from now on cannot be changed by another writer before the save (a paste's
    /// read-check-write). Readers are not held up.
    ///
    /// The corresponding SQL is `BEGIN IMMEDIATE`.
    ///
    /// - Throws: `GraftError.busy` when another writer holds the store longer than `wait`;
    ///   `GraftError.invalidOperation` for a store opened for reading.
    public func beginExclusiveAccess() throws {
        guard !isReadOnly else {
            throw GraftError(
                .invalidOperation, "the store was opened for reading only", context: [.file(url.relativePath)])
        }
        guard !holdsExclusiveAccess else { return }
        try database.execute("BEGIN IMMEDIATE")
        holdsExclusiveAccess = true
    }

    /// Things worth telling the user that did not stop the store from opening or a value from being read:
    /// how its model was found, values read as absent because their external file is missing or (under
    /// `ValueReading.lenient`) because they are not of their attribute's type or range.
    public var warnings: [String] { readWarnings + refusals.warnings }
    private var readWarnings: [String] = []
    /// What to do with values that are not of their attribute's type or range (strict unless opened
    /// for reading with `.lenient`).
    private(set) var refusals = ValueRefusals(.strict)
    /// Whether a value whose external file is missing is read as no value (with a warning).
    private var omitsMissingExternalData = false

    /// What reading a row does when a value's external file is missing: `nil` (an error) unless the store
    /// was opened to omit such values.
    var missingExternalFile: ((String) throws -> Void)? {
        guard omitsMissingExternalData else { return nil }
        return { [weak self] path in
            self?.readWarnings.append("external file \(path) is missing; its value is read as no value")
        }
    }

    /// A read-only store over a connection of its own to the same file, with this store's model, schema
    /// and reading options, for fetching on another thread (a paste looks identities up on two). Values
    /// it reads as absent are its own warnings.
    public func readingSibling() throws -> any PersistentStore {
        let database = try self.database.sibling()
        try database.execute("PRAGMA query_only = 1")
        let sibling = SQLiteStore(
            url: url, model: model, metadata: metadata, database: database, schema: schema, isReadOnly: true)
        sibling.omitsMissingExternalData = omitsMissingExternalData
        sibling.refusals = ValueRefusals(refusals.policy)
        return sibling
    }

    /// Creates a new, empty store for `model` and opens it.
    ///
    /// - Throws: `GraftError.alreadyExists` when something is at `url`.
    public static func create(_ url: URL, model: Model, metadata: StoreMetadata? = nil) throws -> SQLiteStore {
        let writer = try SQLiteStoreWriter(
            url: url, model: model, metadata: metadata ?? StoreMetadata.make(for: model, storeType: .sqlite),
            overwrite: false)
        try writer.finish()
        return try open(url, model: model)
    }

    // MARK: Reading

    public func snapshot(for ref: ObjectRef) throws -> Snapshot? {
        let tableIndex = schema.tableOfEntity[ref.entity]
        return try withDecoder(table: tableIndex) { decoder in
            if rowStatements[tableIndex] == nil {
                rowStatements[tableIndex] = try database.prepare(decoder.selectClause + " WHERE t.Z_PK = ?")
            }
            let statement = rowStatements[tableIndex]!
            defer { statement.reset() }
            try statement.bind(ref.key, at: 1)
            guard try statement.step() else { return nil }
            let snapshot = try decoder.snapshot(of: statement, missing: missingExternalFile)
            guard snapshot.ref.entity == ref.entity else { return nil }
            return snapshot
        }
    }

    public func relatedRefs(of ref: ObjectRef, relationship index: Int) throws -> [ObjectRef] {
        let entity = model.descriptions[ref.entity]
        let relationship = entity.relationships[index]
        guard let storage = schema.toManyStorage[entity.index][index] else { return [] }
        let destination = model.descriptions[relationship.destinationIndex]
        switch storage {
        case .inverseColumn, .virtualColumn:
            let (table, column, order) = storage.ownerColumn!
            let orderBy = order.map { "\(SQLiteName.quoted($0)), " } ?? ""
            let statement = try cachedStatement(
                "SELECT Z_PK, Z_ENT FROM \(SQLiteName.quoted(schema.tables[table].name)) WHERE \(SQLiteName.quoted(column)) = ? ORDER BY \(orderBy)Z_PK"
            )
            defer { statement.reset() }
            try statement.bind(ref.key, at: 1)
            var refs: [ObjectRef] = []
            while try statement.step() {
                guard let found = schema.entity(forNumber: Int(statement.int64(1))) else { continue }
                refs.append(ObjectRef(entity: found, key: statement.int64(0)))
            }
            return refs
        case .joinTable(let join, let own, let other, let order):
            let table = schema.joinTables[join]
            let destinationTable = schema.tables[schema.tableOfEntity[destination.index]].name
            var pairs = [(own, other, order)]
            if SQLiteSchema.isOwnInverse(relationship, of: entity, in: model) {
                pairs = [
                    (table.sourceColumn, table.destinationColumn, nil),
                    (table.destinationColumn, table.sourceColumn, nil),
                ]
            }
            var refs: [ObjectRef] = []
            for (own, other, order) in pairs {
                let orderBy = order.map { "j.\(SQLiteName.quoted($0)), " } ?? ""
                let statement = try cachedStatement(
                    "SELECT j.\(SQLiteName.quoted(other)), d.Z_ENT FROM \(SQLiteName.quoted(table.name)) j JOIN \(SQLiteName.quoted(destinationTable)) d ON d.Z_PK = j.\(SQLiteName.quoted(other)) WHERE j.\(SQLiteName.quoted(own)) = ? ORDER BY \(orderBy)j.\(SQLiteName.quoted(other))"
                )
                defer { statement.reset() }
                try statement.bind(ref.key, at: 1)
                while try statement.step() {
                    guard let found = schema.entity(forNumber: Int(statement.int64(1))) else { continue }
                    refs.append(ObjectRef(entity: found, key: statement.int64(0)))
                }
            }
            if pairs.count > 1 { SQLiteStoreReader.removeRepeats(from: &refs) }
            return refs
        }
    }

    /// Runs `body` with the table's row decoder, kept for the next use.
    func withDecoder<T>(table: Int, _ body: (inout SQLiteRowDecoder) throws -> T) rethrows -> T {
        var decoder =
            decoders.removeValue(forKey: table)
            ?? SQLiteRowDecoder(
                schema: schema, table: table, database: database, path: url.relativePath,
                externalData: externalDataFolder, refusals: refusals)
        defer { decoders[table] = decoder }
        return try body(&decoder)
    }

    /// `SELECT` of every column of a table, as the table's decoder reads them.
    func selectClause(table: Int) -> String {
        if let clause = selectClauses[table] { return clause }
        let clause = withDecoder(table: table) { $0.selectClause }
        selectClauses[table] = clause
        return clause
    }

    /// A prepared statement for `sql`, from the cache when it was prepared before.
    func cachedStatement(_ sql: String) throws -> SQLiteStatement {
        if let statement = fetchStatements[sql] { return statement }
        if fetchStatements.count >= 64 { fetchStatements.removeAll() }
        let statement = try database.prepare(sql)
        fetchStatements[sql] = statement
        return statement
    }

    public func allocateKeys(rootEntity: Int, count: Int) throws -> [Int64] {
        let last: Int64
        let recorded: String
        if let known = lastKeys[rootEntity] {
            (last, recorded) = (known, "the last key handed out is \(known)")
        } else {
            let table = schema.tables[schema.tableOfEntity[rootEntity]].name
            let statement = try database.prepare("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?")
            try statement.bind(Int64(schema.entityNumbers[rootEntity]), at: 1)
            let zMax = try statement.step() ? statement.int64(0) : 0
            let highest = try database.prepare("SELECT max(Z_PK) FROM \(SQLiteName.quoted(table))")
            let rows = try highest.step() ? highest.int64(0) : 0
            // Keys start at 1, whatever a damaged Z_MAX says below that.
            last = max(zMax, rows, 0)
            recorded = zMax >= rows ? "Z_MAX is \(zMax)" : "the highest Z_PK in \(table) is \(rows)"
        }
        do {
            let keys = try KeyAllocation.keys(
                after: last, count: count, entity: model.descriptions[rootEntity].name, recorded: recorded)
            lastKeys[rootEntity] = keys.last ?? last
            return keys
        } catch let error as GraftError {
            throw error.inFile(url.relativePath)
        }
    }
}
