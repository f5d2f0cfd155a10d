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
    /// Where `Z_OPT` is, looked up once rather than per row.
    let versionColumn: Int32?
    let database: SQLiteDatabase
    let path: String
    let externalData: URL?
    /// What to do with values that are not of their attribute's type or range.
    let refusals: ValueRefusals
    private var lookups: [Int: SQLiteStatement] = [:]
    /// Per entity (by model index): where its values are in a row, resolved once.
    private var plans: [Plan?]

    /// Where one entity's values are in a row.
    final class Plan {
        let attributes: [Attribute]
        /// The attributes (by index) the row has no column for, which read no value.
        let unread: [Int]
        /// One entry per relationship of the entity, in order.
        let relationships: [Relationship]

        struct Attribute {
            var index: Int
            var column: Int32
            var kind: SQLiteValues.Kind
        }

        enum Relationship {
            /// A to-one kept in a column (and the destination's entity number in another, when the
            /// destination has subentities and the store has that column).
            case toOne(key: Int32, entity: Int32?, destination: Int, hasSubentities: Bool)
            case toMany
            case transientToOne
            case transientToMany
            /// A to-one whose column the store lacks.
            case missingToOne
        }

        init(attributes: [Attribute], count: Int, relationships: [Relationship]) {
            self.attributes = attributes
            var unread = Array(0..<count)
            for attribute in attributes { unread.removeAll { $0 == attribute.index } }
            self.unread = unread
            self.relationships = relationships
        }
    }

    mutating func plan(for entityIndex: Int) -> Plan {
        if let plan = plans[entityIndex] { return plan }
        let entity = schema.model.descriptions[entityIndex]
        var attributes: [Plan.Attribute] = []
        for (index, attribute) in entity.attributes.enumerated() {
            guard let name = schema.attributeColumns[entityIndex][index], let column = position[name] else { continue }
            attributes.append(Plan.Attribute(index: index, column: column, kind: SQLiteValues.Kind(attribute)))
        }
        var relationships: [Plan.Relationship] = []
        for relationship in entity.relationships {
            if relationship.isTransient {
                relationships.append(relationship.isToMany ? .transientToMany : .transientToOne)
            } else if relationship.isToMany {
                relationships.append(.toMany)
            } else if let columns = schema.toOneColumns[entityIndex][relationship.index],
                let key = position[columns.key]
            {
                let destination = schema.model.descriptions[relationship.destinationIndex]
                relationships.append(
                    .toOne(
                        key: key, entity: columns.entity.flatMap { position[$0] }, destination: destination.index,
                        hasSubentities: !destination.descendantIndices.isEmpty))
            } else {
                relationships.append(.missingToOne)
            }
        }
        let plan = Plan(attributes: attributes, count: entity.attributes.count, relationships: relationships)
        plans[entityIndex] = plan
        return plan
    }

    init(
        schema: SQLiteSchema, table: Int, database: SQLiteDatabase, path: String, externalData: URL?,
        refusals: ValueRefusals
    ) {
        self.schema = schema
        self.table = schema.tables[table]
        self.columns = self.table.columns.filter { !$0.name.isEmpty }
        var position: [String: Int32] = [:]
        for (offset, column) in columns.enumerated() { position[column.name] = Int32(offset) }
        self.position = position
        self.versionColumn = position["Z_OPT"]
        self.database = database
        self.path = path
        self.externalData = externalData
        self.refusals = refusals
        self.plans = Array(repeating: nil, count: schema.model.descriptions.count)
    }

    /// `SELECT <every column> FROM <table>` (add your own `WHERE`/`ORDER BY`).
    var selectClause: String {
        "SELECT \(columns.map { "t." + SQLiteName.quoted($0.name) }.joined(separator: ", ")) FROM \(SQLiteName.quoted(table.name)) t"
    }

    /// The model index of the row's entity.
    func entity(of row: SQLiteStatement) throws -> (key: Int64, entity: Int) {
        let key = row.int64(0)
        return (key, try entity(key: key, number: Int(row.int64(1))))
    }

    /// The entity of the row with `key` and entity number `number`.
    func entity(key: Int64, number: Int) throws -> Int {
        guard let entity = schema.entity(forNumber: number) else {
            throw GraftError(
                .malformedInput,
                "row \(key) of table \(table.name) has entity number \(number), which the model does not have",
                context: [.file(path)])
        }
        return entity
    }

    /// A snapshot of the current row, its to-manys left `.unloaded`.
    mutating func snapshot(of row: SQLiteStatement, missing: ((String) throws -> Void)? = nil) throws -> Snapshot {
        let (key, entityIndex) = try entity(of: row)
        let entity = schema.model.descriptions[entityIndex]
        var snapshot = Snapshot(entity: entity, key: key)
        // The row's version, for optimistic locking: Core Data counts every save of a row in Z_OPT.
        if let column = versionColumn, !row.isNull(column) { snapshot.version = row.int64(column) }
        try read(row, key: key, plan: plan(for: entityIndex), into: &snapshot, missing: missing) { _, _, _ in false }
        return snapshot
    }

    /// Reads the current row, of the object with `key`, into `snapshot`, an object of the plan's entity
    /// (made by `Snapshot(entity:key:)`, then perhaps filled from an earlier row: every value is
    /// replaced, and storage is reused where the snapshot holds the only reference to it).
    ///
    /// - Parameter toMany: fills `refs` (empty when called) with the objects of the to-many with this
    ///   relationship index; returns `false` when the to-many is not loaded.
    mutating func read(
        _ row: SQLiteStatement, key: Int64, plan: Plan, into snapshot: inout Snapshot,
        missing: ((String) throws -> Void)? = nil,
        toMany: (_ relationship: Int, _ key: Int64, _ refs: inout [ObjectRef]) throws -> Bool
    ) throws {
        let entityIndex = snapshot.ref.entity
        snapshot.ref.key = key
        // Written through the buffer, so that the array's uniqueness is checked once a row, not once a value.
        try snapshot.attributes.withUnsafeMutableBufferPointer { attributes in
            try read(row, key: key, entity: entityIndex, plan: plan, into: attributes, missing: missing)
        }
        for (index, slot) in plan.relationships.enumerated() {
            switch slot {
            case .toOne(let column, let entityColumn, let destination, let hasSubentities):
                let stored = row.column(column)
                guard !stored.isNull else {
                    snapshot.relationships[index] = .toOne(nil)
                    continue
                }
                let target = stored.int64
                var targetEntity = destination
                if hasSubentities {
                    if let entityColumn, !row.isNull(entityColumn),
                        let found = schema.entity(forNumber: Int(row.int64(entityColumn)))
                    {
                        targetEntity = found
                    } else {
                        targetEntity = try lookUpEntity(of: target, in: schema.model.descriptions[destination])
                    }
                }
                snapshot.relationships[index] = .toOne(ObjectRef(entity: targetEntity, key: target))
            case .toMany:
                var refs = snapshot.takeToMany(at: index)
                snapshot.relationships[index] = try toMany(index, key, &refs) ? .toMany(refs) : .unloaded
            case .transientToMany:
                snapshot.relationships[index] = .toMany([])
            case .transientToOne, .missingToOne:
                snapshot.relationships[index] = .toOne(nil)
            }
        }
    }

    /// The row's attribute values, into the snapshot's attributes (by index).
    private mutating func read(
        _ row: SQLiteStatement, key: Int64, entity entityIndex: Int, plan: Plan,
        into attributes: UnsafeMutableBufferPointer<Value?>, missing: ((String) throws -> Void)?
    ) throws {
        for index in plan.unread { attributes[index] = nil }
        for slot in plan.attributes {
            do {
                attributes[slot.index] = try SQLiteValues.read(
                    row, slot.column, as: slot.kind, externalData: externalData, missing: missing)
            } catch let refused as UnreadableValue {
                let entity = schema.model.descriptions[entityIndex]
                let attribute = entity.attributes[slot.index].name
                let object = "\(entity.name) p\(key)"
                try refusals.refuse(
                    refused, entity: entity.name, attribute: attribute, type: slot.kind.type, object: "p\(key)",
                    slot: .init(entity: entityIndex, attribute: slot.index, key: key)
                ) {
                    GraftError(
                        .typeMismatch, refused.message, context: [.file(path), .object(object), .key(attribute)],
                        remedy: ValueRefusals.remedy)
                }
                attributes[slot.index] = nil
            } catch let error as GraftError {
                let entity = schema.model.descriptions[entityIndex]
                throw error.at(.key(entity.attributes[slot.index].name)).at(.object("\(entity.name) p\(key)")).inFile(
                    path)
            }
        }
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
