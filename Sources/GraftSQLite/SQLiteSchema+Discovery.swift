import Foundation
import GraftCore
import GraftGraph
import GraftModel

extension SQLiteSchema {
    /// One row of `Z_PRIMARYKEY`.
    struct EntityRow {
        var number: Int
        var name: String
        var superNumber: Int
        var maxKey: Int64
    }

    /// Entity numbers from here on are the framework's own entities (persistent history's `CHANGE`,
    /// `TRANSACTION`, `TRANSACTIONSTRING` are 16001–16003), kept in tables named `A` + the name.
    static let frameworkEntityNumbers = 16001

    /// Reads `Z_PRIMARYKEY`.
    static func entityRows(in database: SQLiteDatabase) throws -> [EntityRow] {
        guard try database.hasTable("Z_PRIMARYKEY") else {
            throw GraftError(
                .malformedInput, "is not a Core Data store (no Z_PRIMARYKEY table)", context: [.file(database.path)])
        }
        let statement = try database.prepare("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        var rows: [EntityRow] = []
        while try statement.step() {
            guard statement.int64(0) > 0, statement.int64(0) <= Int64(Int32.max) else {
                throw GraftError(
                    .malformedInput,
                    "Z_PRIMARYKEY lists the entity number \(statement.int64(0)), which is not a valid one",
                    context: [.file(database.path)])
            }
            rows.append(
                EntityRow(
                    number: Int(statement.int64(0)), name: statement.text(1) ?? "",
                    superNumber: Int(statement.int64(2)),
                    maxKey: statement.int64(3)))
        }
        return rows
    }

    /// The layout of an existing store, matched against `model`.
    ///
    /// Entities are matched by number (`Z_ENT`): the numbers a store was created with stay after
    /// migrations, while `Z_NAME` may be stale after a rename. Where every name in `Z_PRIMARYKEY` is an
    /// entity of the model and the hierarchy agrees, the names decide; otherwise Core Data's numbering
    /// of the model must agree with the store's hierarchy. Tables, columns and join tables are then
    /// found by name, allowing for the suffixes and join-table names migrations leave.
    ///
    /// - Throws: `GraftError.modelMismatch` when the store's tables do not fit the model, naming the entity,
    ///   property, table or column.
    static func discover(in database: SQLiteDatabase, model: Model) throws -> SQLiteSchema {
        let all = try entityRows(in: database)
        let rows = all.filter { $0.number < frameworkEntityNumbers }
        let numbers = try matchEntities(rows, model: model, path: database.path)
        var schema = SQLiteSchema(model: model, numbers: numbers)
        let framework = all.filter { $0.number >= frameworkEntityNumbers }
        if !framework.isEmpty {
            let listed = framework.map { "\($0.name) in A\($0.name.uppercased())" }.joined(separator: ", ")
            schema.warnings.append(
                "the store keeps Core Data's own bookkeeping entities (\(listed)), for persistent history or CloudKit "
                    + "mirroring; they are not part of the model and are not read")
        }
        let actual = try actualColumns(in: database)
        try schema.reconcile(with: actual, rows: rows, path: database.path)
        return schema
    }

    /// Every table's columns, by table name (upper-cased for matching).
    static func actualColumns(in database: SQLiteDatabase) throws -> [String: (name: String, columns: [String])] {
        let tables = try database.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        var result: [String: (name: String, columns: [String])] = [:]
        var names: [String] = []
        while try tables.step() { if let name = tables.text(0) { names.append(name) } }
        for name in names {
            let info = try database.prepare(
                "PRAGMA table_info(\"\(name.replacingOccurrences(of: "\"", with: "\"\""))\")")
            var columns: [String] = []
            while try info.step() { if let column = info.text(1) { columns.append(column) } }
            result[name.uppercased()] = (name, columns)
        }
        return result
    }

    private static func matchEntities(_ rows: [EntityRow], model: Model, path: String) throws -> [Int] {
        let descriptions = model.descriptions
        func superName(_ row: EntityRow) -> String? { rows.first { $0.number == row.superNumber }?.name }
        // Core Data 1.0 wrote entity names in lower case: names match exactly, else ignoring case.
        func row(named name: String) -> EntityRow? {
            rows.first { $0.name == name } ?? rows.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        }
        func sameName(_ a: String?, _ b: String?) -> Bool {
            a == b || (a != nil && b != nil && a!.caseInsensitiveCompare(b!) == .orderedSame)
        }
        // By name, when every model entity is present under its own name with the same parent.
        var byName = Array(repeating: -1, count: descriptions.count)
        var namesAgree = true
        for entity in descriptions {
            guard let row = row(named: entity.name),
                sameName(superName(row), entity.superentityIndex.map({ descriptions[$0].name }))
            else {
                namesAgree = false
                break
            }
            byName[entity.index] = row.number
        }
        if namesAgree { return byName }
        // By number: Core Data's numbering of the model, checked against the store's hierarchy.
        let byNumber = descriptions.map { $0.index + 1 }
        let shapeAgrees = descriptions.allSatisfy { entity in
            guard let row = rows.first(where: { $0.number == entity.index + 1 }) else { return false }
            return row.superNumber == (entity.superentityIndex.map { $0 + 1 } ?? 0)
        }
        if shapeAgrees && rows.count == descriptions.count { return byNumber }
        let missing = descriptions.filter { row(named: $0.name) == nil }.map(\.name)
        throw GraftError(
            .modelMismatch,
            "the store's entities (\(rows.map(\.name).joined(separator: ", "))) do not match the model's"
                + (missing.isEmpty ? "" : "; missing: \(missing.joined(separator: ", "))"),
            context: [.file(path)])
    }

    /// Adjusts derived names to the tables and columns the store has.
    private mutating func reconcile(
        with actual: [String: (name: String, columns: [String])], rows: [EntityRow], path: String
    ) throws {
        let descriptions = model.descriptions
        // Entity tables: by the root's current name, else by the name Z_PRIMARYKEY still records.
        for index in tables.indices {
            let root = tables[index].rootEntity
            let recorded = rows.first { $0.number == entityNumbers[root] }?.name ?? descriptions[root].name
            guard let found = actual[tables[index].name.uppercased()] ?? actual[("Z" + recorded).uppercased()] else {
                throw GraftError(
                    .modelMismatch,
                    "the store has no table \(tables[index].name) for entity \(descriptions[root].name)",
                    context: [.file(path)])
            }
            let oldName = tables[index].name
            tables[index].name = found.name
            claimedTables.insert(found.name.uppercased())
            let present = Set(found.columns.map { $0.uppercased() })
            var renamed: [String: String] = [:]
            for columnIndex in tables[index].columns.indices {
                let column = tables[index].columns[columnIndex]
                if present.contains(column.name.uppercased()) { continue }
                if case .attribute(let entity, let attribute) = column.role {
                    throw GraftError(
                        .modelMismatch,
                        "column \(column.name) for \(descriptions[entity].name).\(descriptions[entity].attributes[attribute].name) is missing from table \(found.name)",
                        context: [.file(path)])
                }
                if case .toOne(let entity, let relationship) = column.role {
                    throw GraftError(
                        .modelMismatch,
                        "column \(column.name) for \(descriptions[entity].name).\(descriptions[entity].relationships[relationship].name) is missing from table \(found.name)",
                        context: [.file(path)])
                }
                // An entity column's number may differ after migrations (`Z11_QUOTE` vs `Z9_QUOTE`).
                if case .toOneEntity = column.role, let underscore = column.name.firstIndex(of: "_") {
                    let tail = column.name[underscore...].uppercased()
                    let match = found.columns.first { name in
                        let upper = name.uppercased()
                        guard upper.hasSuffix(tail), upper.hasPrefix("Z") else { return false }
                        let number = upper.dropFirst().dropLast(tail.count)
                        return !number.isEmpty && number.allSatisfy(\.isNumber)
                    }
                    if let match {
                        renamed[column.name] = match
                        tables[index].columns[columnIndex].name = match
                        continue
                    }
                }
                // An entity or order column the store does not have: read as absent.
                renamed[column.name] = ""
                tables[index].columns[columnIndex].name = ""
            }
            if oldName != found.name || !renamed.isEmpty {
                for entity in tables[index].entities {
                    for relationship in toOneColumns[entity].indices {
                        guard var columns = toOneColumns[entity][relationship] else { continue }
                        if let entityColumn = columns.entity, let new = renamed[entityColumn] {
                            columns.entity = new.isEmpty ? nil : new
                        }
                        if let order = columns.order, let new = renamed[order] {
                            columns.order = new.isEmpty ? nil : new
                        }
                        toOneColumns[entity][relationship] = columns
                    }
                }
            }
        }
        // To-manys through an inverse column point at the (possibly renamed) table.
        for entity in descriptions.indices {
            for relationship in toManyStorage[entity].indices {
                if case .inverseColumn(let table, _, _)? = toManyStorage[entity][relationship] {
                    let inverse = model.inverse(of: descriptions[entity].relationships[relationship])!
                    let destination = descriptions[descriptions[entity].relationships[relationship].destinationIndex]
                    let columns = toOneColumns[destination.index][inverse.index]!
                    toManyStorage[entity][relationship] = .inverseColumn(
                        table: table, column: columns.key, orderColumn: columns.order)
                }
            }
        }
        // Join tables: either side may name the table, and column names may carry suffixes.
        for index in joinTables.indices {
            try reconcileJoinTable(index, actual: actual, path: path)
        }
        // To-manys without inverse: their column in the destination's table, and Graft's join table for
        // further owners.
        for entity in descriptions {
            for relationship in entity.declaration.relationships
            where relationship.isToMany && !relationship.isTransient {
                guard let index = entity.relationshipIndexByName[relationship.name],
                    case .virtualColumn(var virtual)? = toManyStorage[entity.index][index]
                else { continue }
                func found(_ role: ColumnRole) -> String? {
                    tables[virtual.table].columns.first { $0.role == role && !$0.name.isEmpty }?.name
                }
                let owners = ownersJoinTable(entity: entity.index, relationship: index)
                var join: JoinTable?
                if let table = actual[owners.name.uppercased()],
                    let source = table.columns.first(where: { $0.uppercased() == owners.sourceColumn }),
                    let destination = table.columns.first(where: { $0.uppercased() == owners.destinationColumn })
                {
                    claimedTables.insert(table.name.uppercased())
                    join = owners
                    join!.name = table.name
                    join!.sourceColumn = source
                    join!.destinationColumn = destination
                    join!.sourceOrderColumn = owners.sourceOrderColumn.flatMap { order in
                        table.columns.first { $0.uppercased() == order }
                    }
                }
                guard let column = found(.virtualToOne(entity: entity.index, relationship: index)) else {
                    guard let join else {
                        throw GraftError(
                            .modelMismatch,
                            "column \(virtual.column) for \(entity.name).\(relationship.name) (a to-many without inverse, "
                                + "which Core Data keeps in the destination's table) is missing from table "
                                + tables[virtual.table].name,
                            context: [.file(path)])
                    }
                    // A store Graft wrote before it followed Core Data's layout: the join table holds them all.
                    addJoinTable(join)
                    continue
                }
                virtual.column = column
                virtual.entityColumn = found(.virtualToOneEntity(entity: entity.index, relationship: index))
                virtual.orderColumn = found(.virtualOrderKey(entity: entity.index, relationship: index))
                if let join {
                    virtual.overflow = joinTables.count
                    joinTables.append(join)
                }
                for heir in [entity.index] + entity.descendantIndices {
                    toManyStorage[heir][index] = .virtualColumn(virtual)
                }
            }
        }
    }

    /// Finds the join table of a many-to-many by the columns it must have.
    ///
    /// The table Core Data's naming rule predicts is taken when it has the columns; otherwise the table
    /// named after the other side, and otherwise any table whose columns fit (stores migrated between
    /// model versions keep older names, and for two sides of one entity the side that names the table
    /// depends on the order of the entity's properties in Apple's compiled model), with a warning.
    private mutating func reconcileJoinTable(
        _ index: Int, actual: [String: (name: String, columns: [String])], path: String
    ) throws {
        var join = joinTables[index]
        let descriptions = model.descriptions
        let owner = descriptions[join.entity]
        let relationship = owner.relationships[join.relationship]
        let number = entityNumbers[join.entity]
        /// A column whose name is `base` followed by nothing or a numeric suffix.
        func column(_ base: String, in columns: [String], excluding: String? = nil) -> String? {
            let base = base.uppercased()
            return columns.first { name in
                let upper = name.uppercased()
                guard upper.hasPrefix(base), upper != excluding?.uppercased() else { return false }
                return upper.dropFirst(base.count).allSatisfy(\.isNumber)
            }
        }
        let sourceBase: String
        let destinationBase: String
        var candidates = [join.name]
        if join.isReflexive {
            sourceBase = "Z_\(number)" + relationship.name.uppercased()
            destinationBase = "REFLEXIVE"
        } else if let inverse = join.inverse {
            let otherNumber = entityNumbers[inverse.entity]
            let inverseName = descriptions[inverse.entity].relationships[inverse.relationship].name.uppercased()
            sourceBase = "Z_\(number)" + inverseName
            destinationBase = "Z_\(otherNumber)" + relationship.name.uppercased()
            candidates.append("Z_\(otherNumber)" + inverseName)
        } else {
            return
        }
        func fits(_ table: (name: String, columns: [String])) -> (source: String, destination: String)? {
            guard let source = column(sourceBase, in: table.columns),
                let destination = column(destinationBase, in: table.columns, excluding: source)
            else { return nil }
            return (source, destination)
        }
        var found: (table: (name: String, columns: [String]), columns: (source: String, destination: String))?
        for name in candidates {
            if let table = actual[name.uppercased()], let columns = fits(table) {
                found = (table, columns)
                break
            }
        }
        if found == nil {
            let fitting = actual.values.filter { !claimedTables.contains($0.name.uppercased()) }
                .compactMap { table in fits(table).map { (table, $0) } }
                .sorted { $0.0.name < $1.0.name }
            if fitting.count == 1 {
                found = fitting[0]
                warnings.append(
                    "the join table of \(owner.name).\(relationship.name) is \(fitting[0].0.name), found by its columns "
                        + "(\(fitting[0].1.source), \(fitting[0].1.destination)); Core Data's naming rule gives \(join.name)"
                )
            } else if fitting.count > 1 {
                throw GraftError(
                    .modelMismatch,
                    "several tables could be the join table of \(owner.name).\(relationship.name): "
                        + fitting.map(\.0.name).joined(separator: ", "),
                    context: [.file(path)])
            }
        }
        guard let (table, columns) = found else {
            let present = candidates.compactMap { actual[$0.uppercased()]?.name }
            throw GraftError(
                .modelMismatch,
                "the store has no join table for \(owner.name).\(relationship.name): no table has columns \(sourceBase) and "
                    + "\(destinationBase)"
                    + (present.isEmpty
                        ? " (looked for \(candidates.joined(separator: " or ")) first)"
                        : " (\(present.joined(separator: " and ")) lacks them)"),
                context: [.file(path)])
        }
        claimedTables.insert(table.name.uppercased())
        join.name = table.name
        join.sourceColumn = columns.source
        join.destinationColumn = columns.destination
        // The position a key column's object has in the other side is `Z_FOK_` + the column's base name.
        func orderColumn(ofBase base: String) -> String? {
            base == "REFLEXIVE"
                ? column("FOK_REFLEXIVE", in: table.columns) : column("Z_FOK_" + base.dropFirst(2), in: table.columns)
        }
        join.sourceOrderColumn = join.sourceOrderColumn.flatMap { _ in orderColumn(ofBase: destinationBase) }
        join.destinationOrderColumn = join.destinationOrderColumn.flatMap { _ in orderColumn(ofBase: sourceBase) }
        joinTables[index] = join
        addJoinTable(join, replacing: index)
    }
}
