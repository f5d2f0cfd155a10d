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
        var sql = selectClause(table: tableIndex)
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
        let missing = missingExternalFile
        try withDecoder(table: tableIndex) { decoder in
            while try statement.step() {
                snapshots.append(try decoder.snapshot(of: statement, missing: missing) { _, _, _ in nil })
            }
        }
        return StoreFetchResult(
            refs: snapshots.map(\.ref), snapshots: snapshots, predicateApplied: complete,
            sortedAndLimited: ordered && (request.limit == nil || limited))
    }
}
