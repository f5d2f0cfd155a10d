import Foundation
import GraftCore
import GraftGraph
import GraftModel

extension SQLiteStore {
    /// Runs a fetch in SQL: the entities' rows, narrowed by as much of the predicate as translates, ordered
    /// and limited in SQL when all of the predicate and sort translate.
    public func fetch(_ request: StoreFetch) throws -> StoreFetchResult {
        guard let first = request.entities.first else {
            return StoreFetchResult(refs: [], predicateApplied: true, sortedAndLimited: true)
        }
        let entity = model.descriptions[first]
        let tableIndex = schema.tableOfEntity[entity.index]
        let table = schema.tables[tableIndex]
        var clauses: [String] = []
        var bindings: [SQLBinding] = []
        let wanted = Set(request.entities)
        if table.entities.contains(where: { !wanted.contains($0) }) {
            clauses.append(
                "t.Z_ENT IN (\(request.entities.map { String(schema.entityNumbers[$0]) }.joined(separator: ", ")))")
        }
        let translator = SQLPredicateTranslator(schema: schema, entity: entity, alias: "t")
        var complete = true
        if let predicate = request.predicate {
            let translated = translator.translate(predicate)
            if let sql = translated.sql {
                clauses.append("(\(sql))")
                bindings += translated.bindings
            }
            complete = translated.complete
        }
        // Only the keys when the caller wants faults and SQL decides the whole predicate.
        let keysOnly = !request.includesValues && complete
        var sql =
            keysOnly
            ? "SELECT t.Z_PK, t.Z_ENT FROM \(SQLiteName.quoted(table.name)) t" : selectClause(table: tableIndex)
        if !clauses.isEmpty { sql += " WHERE " + clauses.joined(separator: " AND ") }
        var ordered = request.sortDescriptors.isEmpty
        if complete, !request.sortDescriptors.isEmpty, let order = translator.orderBy(request.sortDescriptors) {
            sql += " ORDER BY " + order
            ordered = true
        } else if request.sortDescriptors.isEmpty {
            sql += " ORDER BY t.Z_PK"
        }
        let limited = complete && ordered && request.limit != nil
        if limited, let limit = request.limit { sql += " LIMIT \(limit)" }
        let statement = try cachedStatement(sql)
        defer {
            statement.reset()
            statement.clearBindings()
        }
        for (offset, binding) in bindings.enumerated() { try binding.bind(to: statement, at: Int32(offset + 1)) }
        var snapshots: [Snapshot] = []
        var refs: [ObjectRef] = []
        let missing = missingExternalFile
        try withDecoder(table: tableIndex) { decoder in
            while try statement.step() {
                if keysOnly {
                    let (key, entity) = try decoder.entity(of: statement)
                    refs.append(ObjectRef(entity: entity, key: key))
                } else {
                    snapshots.append(try decoder.snapshot(of: statement, missing: missing) { _, _, _ in nil })
                }
            }
        }
        if !keysOnly { refs = snapshots.map(\.ref) }
        return StoreFetchResult(
            refs: refs, snapshots: snapshots, predicateApplied: complete,
            sortedAndLimited: ordered && (request.limit == nil || limited))
    }

    /// The rows of several objects with one statement per table and up to 500 keys, in the order asked.
    public func snapshots(for refs: [ObjectRef]) throws -> [Snapshot] {
        var found: [ObjectRef: Snapshot] = [:]
        var byTable: [Int: [ObjectRef]] = [:]
        for ref in refs { byTable[schema.tableOfEntity[ref.entity], default: []].append(ref) }
        let missing = missingExternalFile
        for (tableIndex, tableRefs) in byTable.sorted(by: { $0.key < $1.key }) {
            var start = 0
            while start < tableRefs.count {
                let chunk = tableRefs[start..<min(start + 500, tableRefs.count)]
                start += 500
                let sql =
                    selectClause(table: tableIndex) + " WHERE t.Z_PK IN ("
                    + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")"
                let statement = try cachedStatement(sql)
                defer {
                    statement.reset()
                    statement.clearBindings()
                }
                for (offset, ref) in chunk.enumerated() { try statement.bind(ref.key, at: Int32(offset + 1)) }
                try withDecoder(table: tableIndex) { decoder in
                    while try statement.step() {
                        let snapshot = try decoder.snapshot(of: statement, missing: missing) { _, _, _ in nil }
                        found[snapshot.ref] = snapshot
                    }
                }
            }
        }
        return refs.compactMap { found[$0] }
    }
}
