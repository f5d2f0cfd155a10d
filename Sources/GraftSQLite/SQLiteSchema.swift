import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Where each entity, attribute and relationship of a model lives in a Core Data SQLite store: tables,
/// columns, join tables and indexes, named as Core Data names them.
///
/// `SQLiteSchema(model:)` derives the layout Core Data would create for a model (used to write new
/// stores); `SQLiteSchema.discover(in:model:)` finds the layout of an existing store, whose entity
/// numbers, column suffixes and join-table names may differ from a fresh derivation after migrations.
/// `Formats/sqlite-store.md` describes every rule with its evidence.
struct SQLiteSchema {
    /// One table per root entity.
    struct Table {
        var name: String
        /// The model index of the root entity.
        var rootEntity: Int
        /// Every entity stored in this table (the root and its subentities), by model index.
        var entities: [Int]
        var columns: [Column]
    }

    /// What a column of an entity table holds.
    enum ColumnRole: Hashable {
        case primaryKey
        case entity
        case version
        /// An attribute, by the entity's attribute index (the same index in every subentity).
        case attribute(entity: Int, attribute: Int)
        /// A to-one relationship's destination key.
        case toOne(entity: Int, relationship: Int)
        /// The destination's entity number, for to-ones whose destination has subentities (`Z9_NAME`).
        case toOneEntity(entity: Int, relationship: Int)
        /// The position in the inverse ordered to-many (`Z_FOK_NAME`).
        case orderKey(entity: Int, relationship: Int)
        /// The owner's key for a to-many without inverse (`Z<n>NAME`, in the destination's table), by the
        /// to-many's declaring entity and relationship index.
        case virtualToOne(entity: Int, relationship: Int)
        /// The owner's entity number for such a to-many, when its entity has subentities (`Z<n>_<n>NAME`).
        case virtualToOneEntity(entity: Int, relationship: Int)
        /// The position in such a to-many when it is ordered (`Z_FOK_<n>NAME`).
        case virtualOrderKey(entity: Int, relationship: Int)
    }

    /// Where a to-many without inverse keeps its owners: a hidden to-one in the destination's table (Core
    /// Data's layout, which holds one owner per related object) and, when a document relates an object to
    /// several owners, a join table for the owners after the first (Graft's, which Core Data does not read).
    struct VirtualColumn {
        var table: Int
        var column: String
        var entityColumn: String?
        var orderColumn: String?
        /// The join table with the further owners, by index, when the store has one.
        var overflow: Int?

        /// The columns a row's owner is written to (key, entity number, position), those the store has.
        var ownerColumns: [String] { [column, entityColumn, orderColumn].compactMap { $0 } }
    }

    struct Column {
        var name: String
        var type: String
        var role: ColumnRole
    }

    /// A join table for a many-to-many relationship (or a to-many without inverse).
    struct JoinTable {
        var name: String
        /// The entity (model index) and relationship that name the table.
        var entity: Int
        var relationship: Int
        /// Holds keys of `entity`'s objects.
        var sourceColumn: String
        /// Holds keys of the related objects.
        var destinationColumn: String
        /// Order of the destination objects in `relationship`, when it is ordered.
        var sourceOrderColumn: String?
        /// Order of the source objects in the inverse, when the inverse is ordered.
        var destinationOrderColumn: String?
        /// The inverse relationship, unless the relationship is its own inverse: (entity, relationship).
        var inverse: (entity: Int, relationship: Int)?
        /// Whether the relationship is its own inverse: each pair is one row, the second key in `REFLEXIVE`.
        var isReflexive = false
    }

    /// How the objects of a to-many relationship are found.
    enum ToManyStorage {
        /// The inverse to-one's column in the destination's table (and its order column).
        case inverseColumn(table: Int, column: String, orderColumn: String?)
        /// A join table; `ownColumn` holds this side's keys, `otherColumn` the related keys.
        case joinTable(index: Int, ownColumn: String, otherColumn: String, orderColumn: String?)
        /// A to-many without inverse: a column Core Data adds to the destination's table holding the owner's
        /// key (and its entity number, and the position when ordered).
        case virtualColumn(VirtualColumn)

        /// The table and column that hold the owner's key in the related rows, when the to-many is kept in
        /// the destination's table (its inverse's column or a virtual one).
        var ownerColumn: (table: Int, column: String, orderColumn: String?)? {
            switch self {
            case .inverseColumn(let table, let column, let order): return (table, column, order)
            case .virtualColumn(let virtual): return (virtual.table, virtual.column, virtual.orderColumn)
            case .joinTable: return nil
            }
        }
    }

    let model: Model
    /// Core Data entity number (`Z_ENT`) by model index.
    var entityNumbers: [Int] {
        didSet { indexByNumber = Self.inverse(of: entityNumbers) }
    }
    /// Model index by entity number (-1 where no entity has the number).
    private var indexByNumber: [Int] = []

    private static func inverse(of numbers: [Int]) -> [Int] {
        var inverse = [Int](repeating: -1, count: (numbers.max() ?? 0) + 1)
        for (index, number) in numbers.enumerated() where number >= 0 { inverse[number] = index }
        return inverse
    }
    var tables: [Table]
    var joinTables: [JoinTable]
    /// Table index by model entity index.
    var tableOfEntity: [Int]
    /// Column names by entity and attribute index (nil for transient attributes).
    var attributeColumns: [[String?]]
    /// Columns of each to-one: key column, entity column, order column.
    var toOneColumns: [[(key: String, entity: String?, order: String?)?]]
    /// Storage of each to-many.
    var toManyStorage: [[ToManyStorage?]]
    /// Extra `CREATE INDEX` statements (foreign keys, entity column, uniqueness, fetch indexes).
    var indexStatements: [String]
    /// What discovery found different from Core Data's naming rules (tables found by their columns).
    var warnings: [String] = []
    /// Tables already matched to an entity or a join table (upper-cased), while discovering.
    var claimedTables: Set<String> = []

    /// The model index of the entity with Core Data number `number`.
    @inline(__always)
    func entity(forNumber number: Int) -> Int? {
        guard number >= 0, number < indexByNumber.count else { return nil }
        let index = indexByNumber[number]
        return index < 0 ? nil : index
    }

    // MARK: Deriving a fresh layout

    /// The layout Core Data gives a new store for `model`.
    ///
    /// - Parameter numbers: each entity's `Z_ENT` by model index; by default Core Data's numbering of a
    ///   new store (roots by name, each followed depth-first by its subentities).
    ///   - indexStyle: how indexes are named; Graft writes `.modern`.
    init(model: Model, numbers: [Int]? = nil, indexStyle: IndexStyle = .modern) {
        self.model = model
        let descriptions = model.descriptions
        entityNumbers = numbers ?? descriptions.map { $0.index + 1 }
        indexByNumber = Self.inverse(of: entityNumbers)
        tables = []
        joinTables = []
        tableOfEntity = Array(repeating: -1, count: descriptions.count)
        attributeColumns = descriptions.map { Array(repeating: nil, count: $0.attributes.count) }
        toOneColumns = descriptions.map { Array(repeating: nil, count: $0.relationships.count) }
        toManyStorage = descriptions.map { Array(repeating: nil, count: $0.relationships.count) }
        indexStatements = []

        // Entity tables: columns for every stored attribute and to-one, in entity-number order;
        // a name already used in the table (by a sibling subentity) gets a numeric suffix.
        for root in descriptions where root.superentityIndex == nil {
            let members = [root.index] + root.descendantIndices
            var table = Table(
                name: "Z" + root.name.uppercased(), rootEntity: root.index, entities: members,
                columns: [
                    Column(name: "Z_PK", type: "INTEGER PRIMARY KEY", role: .primaryKey),
                    Column(name: "Z_ENT", type: "INTEGER", role: .entity),
                    Column(name: "Z_OPT", type: "INTEGER", role: .version),
                ])
            var names = UniqueNames(["Z_PK", "Z_ENT", "Z_OPT"])
            func claim(_ base: String) -> String { names.claim(base) }
            let tableIndex = tables.count
            for member in members {
                tableOfEntity[member] = tableIndex
                let entity = descriptions[member]
                let ownAttributes = Set(entity.declaration.attributes.map(\.name))
                for (index, attribute) in entity.attributes.enumerated() where ownAttributes.contains(attribute.name) {
                    guard !attribute.isTransient else { continue }
                    let name = claim("Z" + attribute.name.uppercased())
                    table.columns.append(
                        Column(
                            name: name, type: Self.sqlType(of: attribute.type),
                            role: .attribute(entity: member, attribute: index)))
                    // Subentities share the column: they inherit the attribute at the same index.
                    for heir in [member] + entity.descendantIndices { attributeColumns[heir][index] = name }
                }
                let ownRelationships = Set(entity.declaration.relationships.map(\.name))
                for (index, relationship) in entity.relationships.enumerated()
                where ownRelationships.contains(relationship.name) && !relationship.isToMany
                    && !relationship.isTransient
                {
                    let keyColumn = claim("Z" + relationship.name.uppercased())
                    table.columns.append(
                        Column(name: keyColumn, type: "INTEGER", role: .toOne(entity: member, relationship: index)))
                    var entityColumn: String?
                    let destination = descriptions[relationship.destinationIndex]
                    if !destination.descendantIndices.isEmpty {
                        let name = claim("Z\(entityNumbers[destination.index])_" + relationship.name.uppercased())
                        table.columns.append(
                            Column(name: name, type: "INTEGER", role: .toOneEntity(entity: member, relationship: index))
                        )
                        entityColumn = name
                    }
                    var orderColumn: String?
                    if let inverse = model.inverse(of: relationship), inverse.isOrdered, inverse.isToMany {
                        let name = claim("Z_FOK_" + relationship.name.uppercased())
                        table.columns.append(
                            Column(name: name, type: "INTEGER", role: .orderKey(entity: member, relationship: index)))
                        orderColumn = name
                    }
                    for heir in [member] + entity.descendantIndices {
                        toOneColumns[heir][index] = (keyColumn, entityColumn, orderColumn)
                    }
                }
            }
            table.columns = Self.orderedForCreation(table.columns)
            tables.append(table)
        }

        // To-manys with a to-one inverse are kept in the inverse's column.
        for entity in descriptions {
            for (index, relationship) in entity.relationships.enumerated()
            where relationship.isToMany && !relationship.isTransient {
                guard let inverseIndex = relationship.inverseIndex else { continue }
                let destination = descriptions[relationship.destinationIndex]
                guard !destination.relationships[inverseIndex].isToMany,
                    let columns = toOneColumns[destination.index][inverseIndex]
                else { continue }
                toManyStorage[entity.index][index] = .inverseColumn(
                    table: tableOfEntity[destination.index], column: columns.key, orderColumn: columns.order)
            }
        }
        deriveManyToManys()
        deriveVirtualToOnes()
        indexStatements = deriveIndexes(style: indexStyle)
    }

    /// Names made unique the way Core Data's name generator makes them: a name already taken gets the
    /// first free numeric suffix (`ZTEXT`, `ZTEXT1`).
    struct UniqueNames {
        private var used: Set<String>

        init(_ used: Set<String> = []) { self.used = used }

        mutating func claim(_ base: String) -> String {
            var name = base
            var suffix = 1
            while used.contains(name) {
                name = base + String(suffix)
                suffix += 1
            }
            used.insert(name)
            return name
        }
    }

    /// How Core Data names indexes of indexed attributes and compound indexes.
    enum IndexStyle {
        /// `Z_<Entity>_<name>`, one fetch index per indexed attribute (framework 752 and later in the corpus).
        case modern
        /// `<TABLE>_<COLUMN>_INDEX` for indexed attributes and `<TABLE>_<COLUMN>_<COLUMN>…` for compound
        /// indexes (framework 640 and 641 in the corpus).
        case legacy
    }

    /// Records a join table (or replaces the one at `replacing`) and the to-many storage of both its sides.
    mutating func addJoinTable(_ join: JoinTable, replacing: Int? = nil) {
        let index = replacing ?? joinTables.count
        if let replacing { joinTables[replacing] = join } else { joinTables.append(join) }
        let entity = model.descriptions[join.entity]
        for heir in [entity.index] + entity.descendantIndices {
            toManyStorage[heir][join.relationship] = .joinTable(
                index: index, ownColumn: join.sourceColumn, otherColumn: join.destinationColumn,
                orderColumn: join.sourceOrderColumn)
        }
        if let inverse = join.inverse {
            let other = model.descriptions[inverse.entity]
            for heir in [other.index] + other.descendantIndices {
                toManyStorage[heir][inverse.relationship] = .joinTable(
                    index: index, ownColumn: join.destinationColumn, otherColumn: join.sourceColumn,
                    orderColumn: join.destinationOrderColumn)
            }
        }
    }

    /// Whether a relationship is its own inverse (a symmetric `friends` on one entity): such a pair of
    /// objects is stored once, and read from both columns of its join table.
    static func isOwnInverse(
        _ relationship: RelationshipDescription, of entity: EntityDescription, in model: Model
    ) -> Bool {
        guard let inverse = model.inverse(of: relationship), inverse.name == relationship.name else { return false }
        let destination = model.descriptions[relationship.destinationIndex]
        return model.isKind(entity, of: destination) || model.isKind(destination, of: entity)
    }

    /// The entity along `start`'s inheritance chain that declares the relationship `name`.
    static func declaringEntity(of name: String, from start: EntityDescription, in model: Model) -> EntityDescription {
        var current = start
        while let parent = current.superentityIndex,
            !current.declaration.relationships.contains(where: { $0.name == name })
        {
            current = model.descriptions[parent]
        }
        return current
    }

    /// The SQL type Core Data declares for an attribute type.
    static func sqlType(of type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: return "INTEGER"
        case .decimal: return "DECIMAL"
        case .double, .float: return "FLOAT"
        case .string, .uri: return "VARCHAR"
        case .date: return "TIMESTAMP"
        case .binary, .uuid, .transformable, .objectID, .composite, .undefined: return "BLOB"
        }
    }

    /// Newer Core Data versions group a table's columns by type: the bookkeeping columns, then
    /// integers, timestamps, decimals, floats, strings and blobs, each group in property order.
    static func orderedForCreation(_ columns: [Column]) -> [Column] {
        let rank = [
            "INTEGER PRIMARY KEY": 0, "INTEGER": 1, "TIMESTAMP": 2, "DECIMAL": 3, "FLOAT": 4, "VARCHAR": 5, "BLOB": 6,
        ]
        let bookkeeping = columns.prefix(3)
        let rest = columns.dropFirst(3).enumerated().sorted { lhs, rhs in
            (rank[lhs.element.type] ?? 9, lhs.offset) < (rank[rhs.element.type] ?? 9, rhs.offset)
        }.map(\.element)
        return Array(bookkeeping) + rest
    }

    // MARK: DDL

    /// `CREATE TABLE` and `CREATE INDEX` statements for a new store, bookkeeping tables included.
    var creationStatements: [String] {
        var statements: [String] = []
        for table in tables {
            let columns = table.columns.map { "\($0.name) \($0.type)" }.joined(separator: ", ")
            statements.append("CREATE TABLE \(table.name) ( \(columns) )")
        }
        for join in joinTables {
            var columns = ["\(join.sourceColumn) INTEGER", "\(join.destinationColumn) INTEGER"]
            if let order = join.sourceOrderColumn { columns.append("\(order) INTEGER") }
            if let order = join.destinationOrderColumn { columns.append("\(order) INTEGER") }
            columns.append("PRIMARY KEY (\(join.sourceColumn), \(join.destinationColumn))")
            statements.append("CREATE TABLE \(join.name) ( \(columns.joined(separator: ", ")) )")
        }
        statements += indexStatements
        statements += [
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
            "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)",
        ]
        return statements
    }

    private func deriveIndexes(style: IndexStyle) -> [String] {
        var statements: [String] = []
        for table in tables {
            for column in table.columns {
                switch column.role {
                case .toOne, .virtualToOne:
                    statements.append(
                        "CREATE INDEX \(table.name)_\(column.name)_INDEX ON \(table.name) (\(column.name))")
                default:
                    break
                }
            }
            if table.entities.count > 1 {
                statements.append("CREATE INDEX \(table.name)_Z_ENT_INDEX ON \(table.name) (Z_ENT)")
            }
        }
        for join in joinTables {
            statements.append(
                "CREATE INDEX \(join.name)_\(join.destinationColumn)_INDEX ON \(join.name) (\(join.destinationColumn), \(join.sourceColumn))"
            )
        }
        for entity in model.descriptions {
            let table = tables[tableOfEntity[entity.index]]
            func columnList(_ names: [String], ascending: [Bool]? = nil) -> String? {
                var parts: [String] = []
                for (position, name) in names.enumerated() {
                    guard let column = columnName(forProperty: name, of: entity) else { return nil }
                    let order = (ascending?[position] ?? true) ? "ASC" : "DESC"
                    parts.append("\(column) COLLATE BINARY \(order)")
                }
                return parts.joined(separator: ", ")
            }
            if style == .legacy {
                for attribute in entity.declaration.attributes where attribute.isIndexed && !attribute.isTransient {
                    guard let column = columnName(forProperty: attribute.name, of: entity) else { continue }
                    statements.append("CREATE INDEX \(table.name)_\(column)_INDEX ON \(table.name) (\(column))")
                }
                for index in entity.declaration.compoundIndexes {
                    let columns = index.compactMap { columnName(forProperty: $0, of: entity) }
                    guard columns.count == index.count else { continue }
                    statements.append(
                        "CREATE INDEX \(table.name)_\(columns.joined(separator: "_")) ON \(table.name) (\(columns.joined(separator: ", ")))"
                    )
                }
                for constraint in entity.declaration.uniquenessConstraints {
                    guard let columns = columnList(constraint) else { continue }
                    statements.append(
                        "CREATE UNIQUE INDEX Z_\(entity.name)_UNIQUE_\(constraint.joined(separator: "_")) ON \(table.name) (\(columns))"
                    )
                }
                continue
            }
            // Indexed attributes become single-property fetch indexes named after the attribute, as
            // compiled models describe them (store2-52-0: `Z_Message_destructionDate`).
            var fetchIndexes = entity.declaration.fetchIndexes
            for attribute in entity.declaration.attributes where attribute.isIndexed && !attribute.isTransient {
                if !fetchIndexes.contains(where: { $0.name == attribute.name }) {
                    fetchIndexes.append(FetchIndex(name: attribute.name, elements: [.init(property: attribute.name)]))
                }
            }
            for index in fetchIndexes {
                guard
                    let columns = columnList(
                        index.elements.map(\.property), ascending: index.elements.map(\.isAscending))
                else { continue }
                statements.append("CREATE INDEX Z_\(entity.name)_\(index.name) ON \(table.name) (\(columns))")
            }
            for constraint in entity.declaration.uniquenessConstraints {
                guard let columns = columnList(constraint) else { continue }
                statements.append(
                    "CREATE UNIQUE INDEX Z_\(entity.name)_UNIQUE_\(constraint.joined(separator: "_")) ON \(table.name) (\(columns))"
                )
            }
        }
        // A name used twice (an index repeated under two descriptions) is created once.
        var seen: Set<String> = []
        return statements.filter { statement in
            let name =
                statement.split(separator: " ").dropFirst(statement.hasPrefix("CREATE UNIQUE") ? 3 : 2).first.map(
                    String.init) ?? statement
            return seen.insert(name).inserted
        }
    }

    /// The column holding a property's value (an attribute or a to-one's key).
    func columnName(forProperty name: String, of entity: EntityDescription) -> String? {
        if let index = entity.attributeIndexByName[name] { return attributeColumns[entity.index][index] }
        if let index = entity.relationshipIndexByName[name] { return toOneColumns[entity.index][index]?.key }
        return nil
    }
}
