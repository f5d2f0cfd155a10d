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
    /// Per entity (by model index): where its values are in a row, resolved once.
    private var plans: [Int: Plan] = [:]

    private struct Plan {
        var attributes: [(index: Int, column: Int32, kind: SQLiteValues.Kind)] = []
        /// Per relationship: `.toOne` columns, or nil for to-manys and transients.
        var toOnes: [(key: Int32, entity: Int32?, destination: Int, hasSubentities: Bool)?] = []
    }

    private mutating func plan(for entityIndex: Int) -> Plan {
        if let plan = plans[entityIndex] { return plan }
        let entity = schema.model.descriptions[entityIndex]
        var plan = Plan()
        for (index, attribute) in entity.attributes.enumerated() {
            guard let name = schema.attributeColumns[entityIndex][index], let column = position[name] else { continue }
            plan.attributes.append((index, column, SQLiteValues.Kind(attribute)))
        }
        for relationship in entity.relationships {
            guard !relationship.isToMany, !relationship.isTransient,
                let columns = schema.toOneColumns[entityIndex][relationship.index], let key = position[columns.key]
            else {
                plan.toOnes.append(nil)
                continue
            }
            let destination = schema.model.descriptions[relationship.destinationIndex]
            plan.toOnes.append((key, columns.entity.flatMap { position[$0] }, destination.index, !destination.descendantIndices.isEmpty))
        }
        plans[entityIndex] = plan
        return plan
    }

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
        let plan = plan(for: entityIndex)
        var attributes = [Value?](repeating: nil, count: entity.attributes.count)
        for slot in plan.attributes {
            do {
                attributes[slot.index] = try SQLiteValues.read(
                    row, slot.column, as: slot.kind, externalData: externalData, missing: missing)
            } catch let error as GraftError {
                throw error.at(.key(entity.attributes[slot.index].name)).at(.object("\(entity.name) p\(key)")).inFile(path)
            }
        }
        var relationships: [RelationshipValue] = []
        relationships.reserveCapacity(plan.toOnes.count)
        for (index, slot) in plan.toOnes.enumerated() {
            if let slot {
                guard !row.isNull(slot.key) else {
                    relationships.append(.toOne(nil))
                    continue
                }
                let target = row.int64(slot.key)
                var targetEntity = slot.destination
                if slot.hasSubentities {
                    if let entityColumn = slot.entity, !row.isNull(entityColumn),
                        let found = schema.entity(forNumber: Int(row.int64(entityColumn)))
                    {
                        targetEntity = found
                    } else {
                        targetEntity = try lookUpEntity(of: target, in: model.descriptions[slot.destination])
                    }
                }
                relationships.append(.toOne(ObjectRef(entity: targetEntity, key: target)))
                continue
            }
            let relationship = entity.relationships[index]
            if relationship.isTransient {
                relationships.append(relationship.isToMany ? .toMany([]) : .toOne(nil))
            } else if relationship.isToMany {
                relationships.append(try toMany(relationship, entity, key).map { .toMany($0) } ?? .unloaded)
            } else {
                relationships.append(.toOne(nil))  // a to-one whose column the store lacks
            }
        }
        return Snapshot(ref: ObjectRef(entity: entityIndex, key: key), attributes: attributes, relationships: relationships)
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
