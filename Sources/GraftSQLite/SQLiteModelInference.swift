import Foundation
import GraftCore
import GraftModel

/// Builds a model from a SQLite store's own tables, for stores read without a model that have no model
/// cache (stores written before Core Data kept one, and some apps' stores) or one that cannot be decoded.
///
/// What the tables tell, following Core Data's layout (`Formats/sqlite-store.md`):
///
/// - entities, their numbers and inheritance, from `Z_PRIMARYKEY` (`Z_SUPER`);
/// - stored attributes, one per `Z<NAME>` column, typed by the column's declared SQL type, on the
///   entity whose rows use the column (the common ancestor of the entities of the rows with a value);
/// - to-ones from their key columns: a `Z<n>_<NAME>` column names the destination's entity number, a
///   `Z_FOK_<NAME>` column marks one whose inverse is an ordered to-many; other integer columns indexed as
///   Core Data indexes foreign keys are to-ones when their values are keys of a table, the destination
///   told by the values and by its name (`ZLASTMESSAGE` → `KikMessage`);
/// - many-to-manys, with both names and their inverse, from the join tables; to-manys without inverse
///   from the `Z<n><NAME>` columns Core Data adds to the destination's table;
/// - one-to-one pairs, where the keys on both sides point at each other.
///
/// What they do not, and the inferred model therefore leaves as it says in its warning: the case of
/// property names (columns are in capitals; the model uses lower case), integer widths and Booleans
/// (INTEGER is Integer 64), Float against Double, UUID, URI and Transformable against String and Binary,
/// optionality (all optional), delete rules (Nullify), defaults and validation rules, abstract
/// entities, and to-manys whose inverse is a to-one (the store keeps only the to-one's column).
enum SQLiteModelInference {
    struct Result {
        var model: Model
        var warnings: [String]
    }

    /// One entity of the store, as `Z_PRIMARYKEY` lists it.
    private final class EntityInfo {
        let number: Int
        var name: String
        let superNumber: Int
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
        init(number: Int, name: String, superNumber: Int) {
            self.number = number
            self.name = name
            self.superNumber = superNumber
        }
    }

    /// A column of an entity table, as `PRAGMA table_info` gives it.
    struct ColumnInfo {
        var name: String
        var type: String
    }

    /// A to-one found in an entity table, before inverses are paired.
    private struct ToOne {
        var owner: Int
        var name: String
        var column: String
        var table: String
        var destination: Int
    }

    static func infer(
        database: SQLiteDatabase, path: String, metadata: PropertyList.Dictionary
    ) throws -> Result {
        let rows = try SQLiteSchema.entityRows(in: database).filter { $0.number < SQLiteSchema.frameworkEntityNumbers }
        guard !rows.isEmpty else {
            throw GraftError(.malformedInput, "Z_PRIMARYKEY lists no entities", context: [.file(path)])
        }
        var warnings: [String] = []
        // Names as Z_PRIMARYKEY has them; the metadata's version hashes give their case where it differs
        // only in case (Core Data 1.0 wrote names in lower case).
        let recordedNames = metadata["NSStoreModelVersionHashes"]?.dictionaryValue.map { Array($0.keys) } ?? []
        var entities: [Int: EntityInfo] = [:]
        for row in rows {
            guard entities[row.number] == nil else {
                throw GraftError(
                    .malformedInput, "Z_PRIMARYKEY lists entity number \(row.number) twice", context: [.file(path)])
            }
            let spelled = recordedNames.first { $0 != row.name && $0.caseInsensitiveCompare(row.name) == .orderedSame }
            entities[row.number] = EntityInfo(
                number: row.number, name: spelled ?? row.name, superNumber: row.superNumber)
        }
        func parent(of number: Int) -> Int? {
            guard let info = entities[number], info.superNumber != 0, entities[info.superNumber] != nil else {
                return nil
            }
            return info.superNumber
        }
        for info in entities.values where info.superNumber != 0 && entities[info.superNumber] == nil {
            throw GraftError(
                .malformedInput,
                "Z_PRIMARYKEY gives \(info.name) the parent number \(info.superNumber), which it does not list",
                context: [.file(path)])
        }
        func chain(_ number: Int) -> [Int] {
            var result = [number]
            var current = number
            while let up = parent(of: current) {
                guard !result.contains(up) else { break }
                result.append(up)
                current = up
            }
            return result
        }
        if let cyclic = entities.keys.sorted().first(where: { number in
            let up = chain(number)
            return parent(of: up.last!) != nil
        }) {
            throw GraftError(
                .malformedInput, "Z_PRIMARYKEY's Z_SUPER numbers form a cycle at \(entities[cyclic]!.name)",
                context: [.file(path)])
        }
        func root(of number: Int) -> Int { chain(number).last! }
        func lowestCommonAncestor(_ numbers: [Int]) -> Int? {
            guard var common = numbers.first.map(chain) else { return nil }
            for number in numbers.dropFirst() {
                let other = Set(chain(number))
                common = common.filter(other.contains)
            }
            return common.first
        }
        func isKind(_ number: Int, of ancestor: Int) -> Bool { chain(number).contains(ancestor) }

        // Tables: one per root entity.
        let tableNames = try SQLiteSchema.actualColumns(in: database)
        let indexNames = try Self.indexNames(in: database)
        var tableOfRoot: [Int: String] = [:]
        var columnsOfRoot: [Int: [ColumnInfo]] = [:]
        for number in entities.keys.sorted() where parent(of: number) == nil {
            let info = entities[number]!
            guard let table = tableNames[("Z" + info.name).uppercased()] else {
                throw GraftError(
                    .malformedInput, "the store has no table Z\(info.name.uppercased()) for entity \(info.name)",
                    context: [.file(path)])
            }
            tableOfRoot[number] = table.name
            columnsOfRoot[number] = try Self.columns(of: table.name, in: database)
        }
        let q = SQLiteName.quoted

        /// The entities whose rows in `table` have a value in `column`.
        func entitiesUsing(_ column: String, in table: String, hierarchy: Int) throws -> [Int] {
            let statement = try database.prepare(
                "SELECT DISTINCT Z_ENT FROM \(q(table)) WHERE \(q(column)) IS NOT NULL")
            var found: [Int] = []
            while try statement.step() {
                let number = Int(statement.int64(0))
                if entities[number] != nil && root(of: number) == hierarchy { found.append(number) }
            }
            return found
        }
        func owner(of column: String, in table: String, hierarchy: Int) throws -> Int {
            guard entities.keys.contains(where: { $0 != hierarchy && root(of: $0) == hierarchy }) else {
                return hierarchy
            }
            return lowestCommonAncestor(try entitiesUsing(column, in: table, hierarchy: hierarchy)) ?? hierarchy
        }

        var toOnes: [ToOne] = []
        var sawUnknownColumns: [String] = []
        var undecided: [String] = []
        var external: [String] = []
        for (rootNumber, table) in tableOfRoot.sorted(by: { $0.key < $1.key }) {
            let columns = columnsOfRoot[rootNumber]!
            let upperNames = Set(columns.map { $0.name.uppercased() })
            var entityColumns: [String: Int] = [:]  // to-one name → destination number
            var orderColumns: Set<String> = []
            var propertyColumns: [ColumnInfo] = []
            var virtualColumns: [(column: String, owner: Int, name: String)] = []
            for column in columns {
                let upper = column.name.uppercased()
                if ["Z_PK", "Z_ENT", "Z_OPT"].contains(upper) { continue }
                if upper.hasPrefix("Z_FOK_") {
                    orderColumns.insert(String(upper.dropFirst(6)))
                } else if let (number, rest) = Self.numbered(upper.dropFirst()), rest.hasPrefix("_") {
                    entityColumns[String(rest.dropFirst())] = number
                } else if let (number, rest) = Self.numbered(upper.dropFirst()), !rest.isEmpty {
                    virtualColumns.append((column.name, number, rest.lowercased()))
                } else if upper.hasPrefix("Z"), upper.count > 1, !upper.hasPrefix("Z_") {
                    propertyColumns.append(column)
                } else {
                    sawUnknownColumns.append("\(table).\(column.name)")
                }
            }
            for column in propertyColumns {
                let upper = column.name.uppercased()
                let base = String(upper.dropFirst())
                let ownerNumber = try owner(of: column.name, in: table, hierarchy: rootNumber)
                // A sibling's column of the same name carries a numeric suffix (ZTEXT, ZTEXT1).
                var name = base.lowercased()
                let digits = base.reversed().prefix { $0.isNumber }.count
                if digits > 0, digits < base.count, upperNames.contains("Z" + base.dropLast(digits)) {
                    let other = try owner(of: "Z" + base.dropLast(digits), in: table, hierarchy: rootNumber)
                    if !isKind(ownerNumber, of: other) && !isKind(other, of: ownerNumber) {
                        name = String(base.dropLast(digits)).lowercased()
                    }
                }
                let declared = column.type.uppercased()
                if declared.contains("INT") {
                    let indexed = indexNames.contains("\(table)_\(column.name)_INDEX".uppercased())
                    if entityColumns[base] != nil || orderColumns.contains(base) || indexed {
                        if let destination = try destinationOfToOne(
                            column: column.name, name: name, in: table, owner: ownerNumber,
                            entityColumn: entityColumns[base], database: database, entities: entities,
                            tableOfRoot: tableOfRoot, root: root, lowestCommonAncestor: lowestCommonAncestor)
                        {
                            toOnes.append(
                                ToOne(
                                    owner: ownerNumber, name: name, column: column.name, table: table,
                                    destination: destination))
                            continue
                        }
                        if entityColumns[base] != nil || orderColumns.contains(base) {
                            undecided.append("\(entities[ownerNumber]!.name).\(name)")
                        }
                    }
                }
                var attribute = Attribute(name: name, type: Self.attributeType(declared: declared))
                if attribute.type == .binary, try Self.looksExternal(column.name, in: table, database: database) {
                    attribute.allowsExternalBinaryDataStorage = true
                    external.append("\(entities[ownerNumber]!.name).\(name)")
                }
                entities[ownerNumber]!.attributes.append(attribute)
            }
            // To-manys without inverse: the owner's key kept in the related rows.
            for virtual in virtualColumns {
                guard let ownerInfo = entities[virtual.owner] else {
                    sawUnknownColumns.append("\(table).\(virtual.column)")
                    continue
                }
                let destination =
                    lowestCommonAncestor(try entitiesUsing(virtual.column, in: table, hierarchy: rootNumber))
                    ?? rootNumber
                let ordered = orderColumns.contains("\(virtual.owner)" + virtual.name.uppercased())
                ownerInfo.relationships.append(
                    Relationship(
                        name: virtual.name, destination: entities[destination]!.name, isToMany: true, isOrdered: ordered
                    ))
            }
        }

        // One-to-ones: two to-ones whose keys point at each other, the only such pair between them.
        var inverseOf: [Int: Int] = [:]
        for (first, a) in toOnes.enumerated() {
            let candidates = toOnes.enumerated().filter { second, b in
                second != first && root(of: b.owner) == root(of: a.destination)
                    && root(of: a.owner) == root(of: b.destination)
            }
            let consistent = try candidates.filter { _, b in
                try Self.pointAtEachOther(a.table, a.column, b.table, b.column, database: database)
            }
            if consistent.count == 1 { inverseOf[first] = consistent[0].offset }
        }
        for (index, toOne) in toOnes.enumerated() {
            var inverse: String?
            if let other = inverseOf[index], inverseOf[other] == index { inverse = toOnes[other].name }
            entities[toOne.owner]!.relationships.append(
                Relationship(name: toOne.name, destination: entities[toOne.destination]!.name, inverse: inverse))
        }

        // Many-to-manys, from their join tables.
        let known = Set(tableOfRoot.values.map { $0.uppercased() })
        for (upper, table) in tableNames.sorted(by: { $0.key < $1.key }) where !known.contains(upper) {
            guard upper.hasPrefix("Z_"), let (number, relationshipName) = Self.numbered(upper.dropFirst(2)),
                entities[number] != nil, !relationshipName.isEmpty
            else { continue }
            let keys = table.columns.filter { column in
                let name = column.uppercased()
                return !name.hasPrefix("Z_FOK_") && name != "FOK_REFLEXIVE"
            }
            guard keys.count == 2 else {
                if !["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"].contains(upper) {
                    sawUnknownColumns.append(table.name)
                }
                continue
            }
            let upperKeys = keys.map { $0.uppercased() }
            if let reflexive = upperKeys.firstIndex(of: "REFLEXIVE") {
                let own = upperKeys[1 - reflexive]
                guard let (ownNumber, ownName) = Self.numbered(own.dropFirst(2)), ownNumber == number else {
                    sawUnknownColumns.append(table.name)
                    continue
                }
                let name = ownName.lowercased()
                entities[number]!.relationships.append(
                    Relationship(
                        name: name, destination: entities[number]!.name, inverse: name, isToMany: true,
                        isOrdered: table.columns.contains { $0.uppercased() == "FOK_REFLEXIVE" }))
                continue
            }
            // `Z_<n><R>` holds `Z_<m><R>` (the other side's keys) and `Z_<n><S>` (this side's).
            func parse(_ column: String) -> (number: Int, name: String)? {
                guard column.hasPrefix("Z_"), let (n, rest) = Self.numbered(column.dropFirst(2)), !rest.isEmpty else {
                    return nil
                }
                return (n, rest)
            }
            guard let first = parse(upperKeys[0]), let second = parse(upperKeys[1]) else {
                sawUnknownColumns.append(table.name)
                continue
            }
            func isNamed(_ name: String, _ base: String) -> Bool {
                name == base || (name.hasPrefix(base) && name.dropFirst(base.count).allSatisfy(\.isNumber))
            }
            let pair: (own: (number: Int, name: String), other: (number: Int, name: String))
            if isNamed(second.name, relationshipName) && first.number == number {
                pair = (first, second)
            } else if isNamed(first.name, relationshipName) && second.number == number {
                pair = (second, first)
            } else {
                sawUnknownColumns.append(table.name)
                continue
            }
            guard entities[pair.other.number] != nil else {
                sawUnknownColumns.append(table.name)
                continue
            }
            let name = relationshipName.lowercased()
            let inverseName = pair.own.name.lowercased()
            let ordered = table.columns.contains { $0.uppercased() == "Z_FOK_\(pair.other.number)" + relationshipName }
            let inverseOrdered = table.columns.contains { $0.uppercased() == "Z_FOK_\(number)" + pair.own.name }
            entities[number]!.relationships.append(
                Relationship(
                    name: name, destination: entities[pair.other.number]!.name, inverse: inverseName, isToMany: true,
                    isOrdered: ordered))
            entities[pair.other.number]!.relationships.append(
                Relationship(
                    name: inverseName, destination: entities[number]!.name, inverse: name, isToMany: true,
                    isOrdered: inverseOrdered))
        }

        warnings.append(
            "the model was inferred from the store's tables (it has no model cache): property names are in lower "
                + "case (the store keeps them in capitals), attribute types are those the columns declare (INTEGER is "
                + "Integer 64, FLOAT is Double, VARCHAR is String, BLOB is Binary), a property shared by an inheritance "
                + "tree's table belongs to the entity whose objects have values for it, every property is optional, delete "
                + "rules are Nullify, destinations of to-ones are told from their names and keys, and to-manys whose "
                + "inverse is a to-one are not known (the store keeps only the to-one); give the model with --model to "
                + "read it exactly")
        if !undecided.isEmpty {
            warnings.append(
                "these columns look like to-ones but their destination cannot be told; they are read as integers: "
                    + undecided.joined(separator: ", "))
        }
        if !external.isEmpty {
            warnings.append(
                "these binary attributes are read as allowing external storage (their values carry Core Data's marker "
                    + "bytes): " + external.joined(separator: ", "))
        }
        if !sawUnknownColumns.isEmpty {
            warnings.append(
                "these tables and columns do not follow Core Data's layout and are not read: "
                    + sawUnknownColumns.joined(separator: ", "))
        }
        let ordered = entities.keys.sorted()
        let model = try Model(
            entities: ordered.map { number in
                let info = entities[number]!
                // Properties in name order, as a compiled model's are read, so that the model written
                // into a converted document reads back the same.
                return Entity(
                    name: info.name, parent: parent(of: number).map { entities[$0]!.name },
                    attributes: info.attributes.sorted { $0.name < $1.name },
                    relationships: info.relationships.sorted { $0.name < $1.name })
            })
        return Result(model: model, warnings: warnings)
    }

    // MARK: Helpers

    /// The destination of a to-one kept in `column`: the entity its entity column names, else the entity
    /// the name and the keys agree on.
    private static func destinationOfToOne(
        column: String, name: String, in table: String, owner: Int, entityColumn: Int?, database: SQLiteDatabase,
        entities: [Int: EntityInfo], tableOfRoot: [Int: String], root: (Int) -> Int,
        lowestCommonAncestor: ([Int]) -> Int?
    ) throws -> Int? {
        if let entityColumn, entities[entityColumn] != nil { return entityColumn }
        let q = SQLiteName.quoted
        let values = try database.prepare("SELECT count(*) FROM \(q(table)) WHERE \(q(column)) IS NOT NULL")
        let hasValues = try values.step() && values.int64(0) > 0
        // The roots whose tables hold every key the column holds.
        var holding: [Int] = []
        for (rootNumber, rootTable) in tableOfRoot.sorted(by: { $0.key < $1.key }) {
            guard hasValues else {
                holding.append(rootNumber)
                continue
            }
            let missing = try database.prepare(
                "SELECT 1 FROM \(q(table)) s WHERE s.\(q(column)) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(q(rootTable)) d WHERE d.Z_PK = s.\(q(column))) LIMIT 1"
            )
            if try !missing.step() { holding.append(rootNumber) }
        }
        guard !holding.isEmpty else { return nil }
        // Names: the entity named as the property, then one whose name ends with it, then one whose last
        // word ends the property's name; ties go to the name sharing the longest start with the owner's.
        let ownerName = entities[owner]!.name.lowercased()
        func score(_ entity: EntityInfo) -> Int? {
            let entityName = entity.name.lowercased()
            if entityName == name { return 3 }
            if entityName.hasSuffix(name) { return 2 }
            if let word = lastWord(of: entity.name)?.lowercased(), name.hasSuffix(word) { return 1 }
            return nil
        }
        func sharedStart(_ entity: EntityInfo) -> Int {
            zip(entity.name.lowercased(), ownerName).prefix { $0 == $1 }.count
        }
        let candidates = entities.values.filter { holding.contains(root($0.number)) }.compactMap { entity in
            score(entity).map { (entity, $0) }
        }
        if let best = candidates.max(by: { lhs, rhs in
            (lhs.1, sharedStart(lhs.0), rhs.0.name) < (rhs.1, sharedStart(rhs.0), lhs.0.name)
        }) {
            return best.0.number
        }
        // No name fits: the one table that holds every key, the destination the common ancestor of the
        // rows pointed at.
        guard hasValues, holding.count == 1, let rootTable = tableOfRoot[holding[0]] else { return nil }
        let kinds = try database.prepare(
            "SELECT DISTINCT d.Z_ENT FROM \(q(table)) s JOIN \(q(rootTable)) d ON d.Z_PK = s.\(q(column))")
        var numbers: [Int] = []
        while try kinds.step() { numbers.append(Int(kinds.int64(0))) }
        return lowestCommonAncestor(numbers.filter { entities[$0] != nil && root($0) == holding[0] }) ?? holding[0]
    }

    /// The last capitalised word of a name (`KikMessage` → `Message`).
    private static func lastWord(of name: String) -> String? {
        guard let start = name.lastIndex(where: \.isUppercase) else { return nil }
        let word = name[start...]
        return word.count > 1 ? String(word) : nil
    }

    /// Whether every row of `a` whose key column points at a row of `b` is pointed back at, and the other
    /// way round, with at least one pair.
    private static func pointAtEachOther(
        _ tableA: String, _ columnA: String, _ tableB: String, _ columnB: String, database: SQLiteDatabase
    ) throws -> Bool {
        let q = SQLiteName.quoted
        func disagreements(_ from: String, _ fromColumn: String, _ to: String, _ toColumn: String) throws -> Int64 {
            let statement = try database.prepare(
                "SELECT count(*) FROM \(q(from)) a JOIN \(q(to)) b ON b.Z_PK = a.\(q(fromColumn)) WHERE b.\(q(toColumn)) IS NOT a.Z_PK"
            )
            return try statement.step() ? statement.int64(0) : 1
        }
        let pairs = try database.prepare(
            "SELECT count(*) FROM \(q(tableA)) a JOIN \(q(tableB)) b ON b.Z_PK = a.\(q(columnA)) WHERE b.\(q(columnB)) = a.Z_PK"
        )
        guard try pairs.step(), pairs.int64(0) > 0 else { return false }
        return try disagreements(tableA, columnA, tableB, columnB) == 0
            && disagreements(tableB, columnB, tableA, columnA) == 0
    }

    /// Whether every value of a BLOB column starts with the marker Core Data puts before binary values
    /// that may be stored externally: `0x01` and the bytes, or `0x02` and a short file name.
    private static func looksExternal(_ column: String, in table: String, database: SQLiteDatabase) throws -> Bool {
        let q = SQLiteName.quoted
        let statement = try database.prepare(
            "SELECT count(*), sum(substr(\(q(column)), 1, 1) = x'01' OR (substr(\(q(column)), 1, 1) = x'02' AND length(\(q(column))) < 256)) FROM \(q(table)) WHERE typeof(\(q(column))) = 'blob'"
        )
        guard try statement.step() else { return false }
        let count = statement.int64(0)
        return count > 0 && statement.int64(1) == count
    }

    /// The type Core Data gives an attribute whose column is declared `declared`.
    static func attributeType(declared: String) -> AttributeType {
        let type = declared.uppercased()
        if type == "TIMESTAMP" || type.hasPrefix("DATE") { return .date }
        if type.contains("INT") { return .integer64 }
        if type.hasPrefix("DECIMAL") || type.hasPrefix("NUMERIC") { return .decimal }
        if type.contains("FLOA") || type.contains("REAL") || type.contains("DOUB") { return .double }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return .string }
        if type.contains("BOOL") { return .boolean }
        return .binary
    }

    /// A number at the start of `text` and what follows it, or `nil` when `text` does not start with one.
    private static func numbered<S: StringProtocol>(_ text: S) -> (Int, String)? {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, let number = Int(digits) else { return nil }
        return (number, String(text.dropFirst(digits.count)))
    }

    static func columns(of table: String, in database: SQLiteDatabase) throws -> [ColumnInfo] {
        let info = try database.prepare("PRAGMA table_info(\(SQLiteName.quoted(table)))")
        var columns: [ColumnInfo] = []
        while try info.step() {
            if let name = info.text(1) { columns.append(ColumnInfo(name: name, type: info.text(2) ?? "")) }
        }
        return columns
    }

    private static func indexNames(in database: SQLiteDatabase) throws -> Set<String> {
        let statement = try database.prepare("SELECT name FROM sqlite_master WHERE type = 'index'")
        var names: Set<String> = []
        while try statement.step() { if let name = statement.text(0) { names.insert(name.uppercased()) } }
        return names
    }
}
