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
        var clauses = entityClauses(request, table: table)
        var bindings: [SQLBinding] = []
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
        // Sorts through to-ones join their destinations (left joins: each row stays, once).
        let order = complete && !request.sortDescriptors.isEmpty ? translator.orderBy(request.sortDescriptors) : nil
        if let order, !order.joins.isEmpty { sql += " " + order.joins }
        if !clauses.isEmpty { sql += " WHERE " + clauses.joined(separator: " AND ") }
        var ordered = request.sortDescriptors.isEmpty
        if let order {
            sql += " ORDER BY " + order.order
            ordered = true
        } else if request.sortDescriptors.isEmpty && !request.inAnyOrder {
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
                    snapshots.append(try decoder.snapshot(of: statement, missing: missing))
                }
            }
        }
        if !keysOnly { refs = snapshots.map(\.ref) }
        return StoreFetchResult(
            refs: refs, snapshots: snapshots, predicateApplied: complete,
            sortedAndLimited: ordered && (request.limit == nil || limited))
    }

    /// The `Z_ENT` test a fetch's table needs, as `t`, when it holds entities the fetch does not want.
    private func entityClauses(_ request: StoreFetch, table: SQLiteSchema.Table) -> [String] {
        let wanted = Set(request.entities)
        guard table.entities.contains(where: { !wanted.contains($0) }) else { return [] }
        return ["t.Z_ENT IN (\(request.entities.map { String(schema.entityNumbers[$0]) }.joined(separator: ", ")))"]
    }

    /// Counts a fetch's objects with `SELECT COUNT(*)` when SQL decides its whole predicate (`nil`
    /// otherwise), leaving out the objects `excluding` names.
    public func count(_ request: StoreFetch, excluding: [ObjectRef]) throws -> Int? {
        guard let first = request.entities.first else { return 0 }
        let entity = model.descriptions[first]
        let tableIndex = schema.tableOfEntity[entity.index]
        let table = schema.tables[tableIndex]
        var clauses = entityClauses(request, table: table)
        var bindings: [SQLBinding] = []
        if let predicate = request.predicate {
            let translated = SQLPredicateTranslator(schema: schema, entity: entity, alias: "t").translate(predicate)
            guard translated.complete, let sql = translated.sql else { return nil }
            clauses.append("(\(sql))")
            bindings += translated.bindings
        }
        // Keys are unique within a table (one key sequence per inheritance tree).
        let excludedKeys = excluding.filter { schema.tableOfEntity[$0.entity] == tableIndex }.map(\.key)
        if !excludedKeys.isEmpty {
            clauses.append("t.Z_PK NOT IN (\(excludedKeys.map { String($0) }.joined(separator: ", ")))")
        }
        var sql = "SELECT COUNT(*) FROM \(SQLiteName.quoted(table.name)) t"
        if !clauses.isEmpty { sql += " WHERE " + clauses.joined(separator: " AND ") }
        let statement = try cachedStatement(sql)
        defer {
            statement.reset()
            statement.clearBindings()
        }
        for (offset, binding) in bindings.enumerated() { try binding.bind(to: statement, at: Int32(offset + 1)) }
        guard try statement.step() else { return 0 }
        return Int(statement.int64(0))
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
                        let snapshot = try decoder.snapshot(of: statement, missing: missing)
                        found[snapshot.ref] = snapshot
                    }
                }
            }
        }
        return refs.compactMap { found[$0] }
    }
}
