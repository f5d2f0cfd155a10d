internal import CSQLite
import Foundation
import GraftCore
import GraftGraph
import GraftModel

extension SQLiteStoreDriver {
    /// New columns in the entity tables (`ALTER TABLE … ADD COLUMN`, named as Core Data names a column,
    /// with a numeric suffix where the table has the name already), filled where a value is given, then
    /// the new metadata and model cache: all in one `BEGIN IMMEDIATE` transaction, so other writers wait
    /// and readers see the store before or after, never between. Tables, entity numbers, relationship
    /// columns and join tables stay as they are, so the two versions must have the same entities and
    /// relationships (the caller checks; a store whose tables do not hold an entity is refused here).
    public func addAttributes(
        _ additions: [AttributeAddition], at url: URL, from source: Model, to destination: Model,
        metadata: StoreMetadata, check: () throws -> Void
    ) throws -> Bool {
        let database = try SQLiteDatabase.openForWriting(url)
        try database.execute("BEGIN IMMEDIATE")
        do {
            try check()
            let schema = try SQLiteSchema.discover(in: database, model: source)
            for addition in additions {
                guard let entity = source.entity(named: addition.entity),
                    let newEntity = destination.entity(named: addition.entity),
                    let attribute = newEntity.attributes.first(where: { $0.name == addition.attribute }),
                    schema.tableOfEntity[entity.index] >= 0
                else {
                    try database.execute("ROLLBACK")
                    return false
                }
                let table = schema.tables[schema.tableOfEntity[entity.index]].name
                let column: String
                if addition.onlyWhereNil {
                    guard let index = entity.attributeIndexByName[addition.attribute],
                        let existing = schema.attributeColumns[entity.index][index]
                    else {
                        try database.execute("ROLLBACK")
                        return false
                    }
                    column = existing
                } else {
                    var names = SQLiteSchema.UniqueNames(
                        Set(try SQLiteModelInference.columns(of: table, in: database).map { $0.name.uppercased() }))
                    column = names.claim("Z" + attribute.name.uppercased())
                    try database.execute(
                        "ALTER TABLE \(SQLiteName.quoted(table)) ADD COLUMN \(column) "
                            + SQLiteSchema.sqlType(of: attribute.type))
                }
                guard let value = addition.value else { continue }
                let numbers = ([entity.index] + entity.descendantIndices).map { String(schema.entityNumbers[$0]) }
                let update = try database.prepare(
                    "UPDATE \(SQLiteName.quoted(table)) SET \(column) = ? WHERE Z_ENT IN (\(numbers.joined(separator: ", ")))"
                        + (addition.onlyWhereNil ? " AND \(column) IS NULL" : ""))
                try SQLiteValues.bind(value, as: attribute, to: update, at: 1)
                try update.run()
            }
            var values = metadata.values
            values["NSStoreUUID"] = nil  // the UUID lives in Z_UUID
            let meta = try database.prepare("UPDATE Z_METADATA SET Z_UUID = ?, Z_PLIST = ?")
            try meta.bind(metadata.identifier, at: 1)
            try meta.bind(PropertyList.dictionary(values).encode(format: .binary), at: 2)
            try meta.run()
            try database.execute("CREATE TABLE IF NOT EXISTS Z_MODELCACHE (Z_CONTENT BLOB)")
            try database.execute("DELETE FROM Z_MODELCACHE")
            let cache = try database.prepare("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)")
            try cache.bind(try SQLiteModelCache.encode(destination, frameworkVersion: metadata.frameworkVersion), at: 1)
            try cache.run()
            try database.execute("COMMIT")
            return true
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            throw error
        }
    }
}
