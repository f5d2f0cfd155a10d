import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Turns rows of one entity table into snapshots: attribute values and to-one references (with the
/// destination's exact entity). To-manys are left to the caller.
struct SQLiteRowDecoder {
    let schema: SQLiteSchema
    let table: SQLiteSchema.Table
    /// The columns selected, in order.
    let columns: [SQLiteSchema.Column]
    let position: [String: Int32]
    let database: SQLiteDatabase
    let path: String
    let externalData: URL?
    private var lookups: [Int: SQLiteStatement] = [:]

    init(schema: SQLiteSchema, table: Int, database: SQLiteDatabase, path: String, externalData: URL?) {
        self.schema = schema
        self.table = schema.tables[table]
        self.columns = self.table.columns.filter { !$0.name.isEmpty }
        var position: [String: Int32] = [:]
        for (offset, column) in columns.enumerated() { position[column.name] = Int32(offset) }
        self.position = position
        self.database = database
        self.path = path
        self.externalData = externalData
    }

    /// `SELECT <every column> FROM <table>` (add your own `WHERE`/`ORDER BY`).
    var selectClause: String {
        "SELECT \(columns.map { "t." + SQLiteName.quoted($0.name) }.joined(separator: ", ")) FROM \(SQLiteName.quoted(table.name)) t"
    }

    /// The model index of the row's entity.
    func entity(of row: SQLiteStatement) throws -> (key: Int64, entity: Int) {
        let key = row.int64(0)
        let number = Int(row.int64(1))
        guard let entity = schema.entity(forNumber: number) else {
            throw GraftError(
                .malformedInput,
                "row \(key) of table \(table.name) has entity number \(number), which the model does not have",
                context: [.file(path)])
        }
        return (key, entity)
    }

    /// A snapshot of the current row; to-manys come from `toMany` (`.unloaded` when it returns nil).
    mutating func snapshot(
        of row: SQLiteStatement, missing: ((String) throws -> Void)? = nil,
        toMany: (RelationshipDescription, EntityDescription, Int64) throws -> [ObjectRef]?
    ) throws -> Snapshot {
        let (key, entityIndex) = try entity(of: row)
        let model = schema.model
        let entity = model.descriptions[entityIndex]
        var attributes = [Value?](repeating: nil, count: entity.attributes.count)
        for (index, attribute) in entity.attributes.enumerated() {
            guard let name = schema.attributeColumns[entityIndex][index], let column = position[name] else { continue }
            do {
                attributes[index] = try SQLiteValues.read(
                    row, column, as: attribute, externalData: externalData, missing: missing)
            } catch let error as GraftError {
                throw error.at(.key(attribute.name)).at(.object("\(entity.name) p\(key)")).inFile(path)
            }
        }
        var relationships: [RelationshipValue] = []
        relationships.reserveCapacity(entity.relationships.count)
        for relationship in entity.relationships {
            if relationship.isTransient {
                relationships.append(relationship.isToMany ? .toMany([]) : .toOne(nil))
            } else if relationship.isToMany {
                relationships.append(try toMany(relationship, entity, key).map { .toMany($0) } ?? .unloaded)
            } else {
                relationships.append(.toOne(try toOne(relationship, of: entityIndex, in: row)))
            }
        }
        return Snapshot(
            ref: ObjectRef(entity: entityIndex, key: key), attributes: attributes, relationships: relationships)
    }

    private mutating func toOne(
        _ relationship: RelationshipDescription, of entity: Int, in row: SQLiteStatement
    ) throws -> ObjectRef? {
        guard let columns = schema.toOneColumns[entity][relationship.index], let keyColumn = position[columns.key],
            !row.isNull(keyColumn)
        else { return nil }
        let target = row.int64(keyColumn)
        let destination = schema.model.descriptions[relationship.destinationIndex]
        guard !destination.descendantIndices.isEmpty else { return ObjectRef(entity: destination.index, key: target) }
        if let entityColumn = columns.entity.flatMap({ position[$0] }), !row.isNull(entityColumn),
            let found = schema.entity(forNumber: Int(row.int64(entityColumn)))
        {
            return ObjectRef(entity: found, key: target)
        }
        return ObjectRef(entity: try lookUpEntity(of: target, in: destination), key: target)
    }

    /// The exact entity of the object with `key` in `destination`'s table (for stores that lack the
    /// destination-entity column).
    private mutating func lookUpEntity(of key: Int64, in destination: EntityDescription) throws -> Int {
        let tableIndex = schema.tableOfEntity[destination.index]
        if lookups[tableIndex] == nil {
            lookups[tableIndex] = try database.prepare(
                "SELECT Z_ENT FROM \(SQLiteName.quoted(schema.tables[tableIndex].name)) WHERE Z_PK = ?")
        }
        let statement = lookups[tableIndex]!
        defer { statement.reset() }
        try statement.bind(key, at: 1)
        guard try statement.step(), let entity = schema.entity(forNumber: Int(statement.int64(0))) else {
            return destination.index
        }
        return entity
    }
}

/// SQL identifiers.
enum SQLiteName {
    static func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
}
