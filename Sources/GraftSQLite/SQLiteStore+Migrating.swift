internal import CSQLite
import Foundation
import GraftCore
import GraftGraph
import GraftModel

extension SQLiteStoreDriver {
    /// New columns in the entity tables (`ALTER TABLE … ADD COLUMN`, named as a new store of
    /// `destination` names them), filled where a value is given, then the new metadata and model cache:
    /// all in one `BEGIN IMMEDIATE` transaction, so other writers wait and readers see the store before
    /// or after, never between. Tables, entity numbers, relationship columns and join tables stay as they
    /// are, so the two versions must have the same entities and relationships (the caller checks).
    ///
    /// Returns `false`, having changed nothing, when the store cannot be read back with `destination`
    /// after such a change: its tables do not hold an entity, or a column of the store would have
    /// another name in `destination`'s layout — a subentity's new attribute taking, as its siblings come
    /// after it, the name a sibling's column has (`ZCOLLAR`, the sibling's becoming `ZCOLLAR1`).
    public func addAttributes(
        _ additions: [AttributeAddition], at url: URL, from source: Model, to destination: Model,
        metadata: StoreMetadata, check: () throws -> Void
    ) throws -> Bool {
        let database = try SQLiteDatabase.openForWriting(url)
        try database.execute("BEGIN IMMEDIATE")
        do {
            try check()
            let schema = try SQLiteSchema.discover(in: database, model: source)
            guard let layout = Self.layout(keeping: schema, for: destination) else {
                try database.execute("ROLLBACK")
                return false
            }
            for addition in additions {
                guard let entity = source.entity(named: addition.entity),
                    let newEntity = destination.entity(named: addition.entity),
                    let index = newEntity.attributeIndexByName[addition.attribute],
                    let column = layout.attributeColumns[newEntity.index][index],
                    schema.tableOfEntity[entity.index] >= 0
                else {
                    try database.execute("ROLLBACK")
                    return false
                }
                let attribute = newEntity.attributes[index]
                let table = schema.tables[schema.tableOfEntity[entity.index]].name
                if !addition.onlyWhereNil {
                    let present = try SQLiteModelInference.columns(of: table, in: database).map { $0.name.uppercased() }
                    guard !present.contains(column.uppercased()) else {
                        try database.execute("ROLLBACK")
                        return false
                    }
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
            try SQLiteModelCache.record(metadata, model: destination, in: database, replacing: true)
            try database.execute("COMMIT")
            return true
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            throw error
        }
    }

    /// The layout a new store of `destination` has, with the store's entity numbers, when every
    /// attribute and to-one the store keeps has there the column it has in the store (`schema`); `nil`
    /// when one would move.
    private static func layout(keeping schema: SQLiteSchema, for destination: Model) -> SQLiteSchema? {
        let source = schema.model
        var numbers: [Int] = []
        for entity in destination.descriptions {
            guard let old = source.entity(named: entity.name) else { return nil }
            numbers.append(schema.entityNumbers[old.index])
        }
        let layout = SQLiteSchema(model: destination, numbers: numbers)
        func same(_ a: String?, _ b: String?) -> Bool { a?.uppercased() == b?.uppercased() }
        for entity in destination.descriptions {
            let old = source.entity(named: entity.name)!
            for (index, attribute) in entity.attributes.enumerated() {
                guard let from = old.attributeIndexByName[attribute.name], !old.attributes[from].isTransient else {
                    continue
                }
                guard same(layout.attributeColumns[entity.index][index], schema.attributeColumns[old.index][from])
                else { return nil }
            }
            for (index, relationship) in entity.relationships.enumerated() {
                guard let from = old.relationshipIndexByName[relationship.name],
                    same(layout.toOneColumns[entity.index][index]?.key, schema.toOneColumns[old.index][from]?.key)
                else { return nil }
            }
        }
        return layout
    }
}
