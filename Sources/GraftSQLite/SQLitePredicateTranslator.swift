import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// A value bound to a SQL parameter.
enum SQLBinding {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    func bind(to statement: SQLiteStatement, at index: Int32) throws {
        switch self {
        case .integer(let value): try statement.bind(value, at: index)
        case .real(let value): try statement.bind(value, at: index)
        case .text(let value): try statement.bind(value, at: index)
        case .blob(let value): try statement.bind(value, at: index)
        }
    }
}

/// Turns predicates and sort descriptors into SQL over an entity's table, where SQL gives exactly the
/// answer evaluation in memory gives; what it cannot translate is left to the context.
///
/// Translated: comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `IN` a list) of an attribute with a
/// constant; string `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE` and `MATCHES`, with or without
/// `[c]`/`[d]` (through the functions and collations ``SQLiteFunctions`` registers, which call the code
/// evaluation in memory uses); `nil` tests; a to-one compared with an object or followed to an attribute
/// of its destination; `@count` of a to-many; `ANY`/`ALL`/`NONE` over an attribute of a to-many's
/// destination (`EXISTS` subqueries); `SUBQUERY(toMany, $x, …).@count` compared with a number; and
/// `AND`/`OR`/`NOT` of these. String sorts order with the `GRAFT*` collations, as Swift orders strings.
struct SQLPredicateTranslator {
    let schema: SQLiteSchema
    let entity: EntityDescription
    let alias: String

    var model: Model { schema.model }

    /// SQL for as much of `predicate` as translates, and whether that was all of it. A top-level `AND`
    /// keeps its translatable parts; anything else translates whole or not at all.
    func translate(_ predicate: GraftPredicate) -> (sql: String?, bindings: [SQLBinding], complete: Bool) {
        if case .and(let parts) = predicate {
            var clauses: [String] = []
            var bindings: [SQLBinding] = []
            var complete = true
            for part in parts {
                if let (sql, values) = condition(part) {
                    clauses.append("(\(sql))")
                    bindings += values
                } else {
                    complete = false
                }
            }
            return (clauses.isEmpty ? nil : clauses.joined(separator: " AND "), bindings, complete)
        }
        if let (sql, values) = condition(predicate) { return (sql, values, true) }
        return (nil, [], false)
    }

    /// SQL that holds exactly when `predicate` does, or `nil`.
    func condition(_ predicate: GraftPredicate) -> (String, [SQLBinding])? {
        switch predicate {
        case .truePredicate: return ("1", [])
        case .falsePredicate: return ("0", [])
        case .and(let parts), .or(let parts):
            let isAnd = { if case .and = predicate { return true } else { return false } }()
            guard !parts.isEmpty else { return (isAnd ? "1" : "0", []) }
            var clauses: [String] = []
            var bindings: [SQLBinding] = []
            for part in parts {
                guard let (sql, values) = condition(part) else { return nil }
                clauses.append("(\(sql))")
                bindings += values
            }
            return (clauses.joined(separator: isAnd ? " AND " : " OR "), bindings)
        case .not(let inner):
            // A comparison with NULL is unknown in SQL but false in memory: make it false before NOT.
            guard let (sql, values) = condition(inner) else { return nil }
            return ("NOT COALESCE((\(sql)), 0)", values)
        case .comparison(let comparison):
            return self.comparison(comparison)
        }
    }

    // MARK: Comparisons

    private func comparison(_ comparison: GraftPredicate.Comparison) -> (String, [SQLBinding])? {
        guard comparison.modifier == .direct else { return toManyComparison(comparison) }
        if let counted = subqueryCount(comparison) { return counted }
        var left = comparison.left
        var right = comparison.right
        var op = comparison.operator
        if case .keyPath = right, !isKeyPath(left) {
            guard let flipped = Self.flipped(op) else { return nil }
            swap(&left, &right)
            op = flipped
        }
        guard case .keyPath(let path) = left else { return nil }
        let keys = path.components
        // attribute
        if keys.count == 1, case .key(let name) = keys[0], let index = entity.attributeIndexByName[name] {
            return attributeComparison(
                entity: entity, attribute: index, alias: alias, op, right, options: comparison.options)
        }
        // to-one compared with an object or nil
        if keys.count == 1, case .key(let name) = keys[0], let relationship = entity.relationship(named: name),
            !relationship.isToMany
        {
            return toOneComparison(relationship, op, right)
        }
        // to-one followed to an attribute
        if keys.count == 2, case .key(let name) = keys[0], case .key(let attributeName) = keys[1],
            let relationship = entity.relationship(named: name), !relationship.isToMany,
            let columns = schema.toOneColumns[entity.index][relationship.index]
        {
            let destination = model.descriptions[relationship.destinationIndex]
            guard let attribute = destination.attributeIndexByName[attributeName] else { return nil }
            // Only comparisons that are false when the destination is missing (no nil, no !=).
            if case .null = right { return nil }
            if op == .notEqualTo { return nil }
            guard
                let (inner, values) = attributeComparison(
                    entity: destination, attribute: attribute, alias: "d", op, right, options: comparison.options)
            else { return nil }
            let table = SQLiteName.quoted(schema.tables[schema.tableOfEntity[destination.index]].name)
            return (
                "\(alias).\(SQLiteName.quoted(columns.key)) IN (SELECT d.Z_PK FROM \(table) d WHERE \(inner))", values
            )
        }
        // @count of a to-many
        if keys.count == 2, case .key(let name) = keys[0], case .collectionOperator(.count) = keys[1],
            let relationship = entity.relationship(named: name), relationship.isToMany,
            case .constant(let constant) = right, let number = Self.integer(constant), let sqlOp = Self.sqlOperator(op)
        {
            guard let count = countExpression(relationship) else { return nil }
            return ("\(count) \(sqlOp) ?", [.integer(number)])
        }
        return nil
    }

    private func isKeyPath(_ expression: GraftPredicate.Expression) -> Bool {
        if case .keyPath = expression { return true }
        return false
    }

    private func attributeComparison(
        entity: EntityDescription, attribute index: Int, alias: String, _ op: GraftPredicate.Operator,
        _ right: GraftPredicate.Expression, options: ComparisonOptions
    ) -> (String, [SQLBinding])? {
        guard let name = schema.attributeColumns[entity.index][index] else { return nil }
        let attribute = entity.attributes[index]
        if attribute.type == .binary && attribute.allowsExternalBinaryDataStorage { return nil }
        let column = "\(alias).\(SQLiteName.quoted(name))"
        if case .null = right {
            switch op {
            case .equalTo: return ("\(column) IS NULL", [])
            case .notEqualTo: return ("\(column) IS NOT NULL", [])
            default: return nil
            }
        }
        let isString = attribute.type == .string || attribute.type == .uri
        // `[n]` changes no result; `[c]` and `[d]` go through Graft's collations and functions.
        let stringOptions = options.subtracting(.normalized)
        if attribute.type == .uri && !stringOptions.isEmpty { return nil }
        // Strings order and compare with options by Graft's collation; equality without options stays
        // SQLite's own, so that an index on the column serves it.
        let collate =
            isString && (!stringOptions.isEmpty || op != .equalTo && op != .notEqualTo && op != .in)
            ? " COLLATE \(SQLiteFunctions.collation(stringOptions))" : ""
        switch op {
        case .equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard case .constant(let constant) = right, let binding = Self.binding(constant, for: attribute.type) else {
                return nil
            }
            let sqlOp = Self.sqlOperator(op)!
            if op == .notEqualTo { return ("(\(column) != ?\(collate) OR \(column) IS NULL)", [binding]) }
            return ("\(column) \(sqlOp) ?\(collate)", [binding])
        case .between:
            guard case .aggregate(let bounds) = right, bounds.count == 2,
                case .constant(let low) = bounds[0], case .constant(let high) = bounds[1],
                let lowBinding = Self.binding(low, for: attribute.type),
                let highBinding = Self.binding(high, for: attribute.type)
            else { return nil }
            if isString {
                return ("(\(column) >= ?\(collate) AND \(column) <= ?\(collate))", [lowBinding, highBinding])
            }
            return ("\(column) BETWEEN ? AND ?", [lowBinding, highBinding])
        case .in:
            guard case .aggregate(let members) = right else { return nil }
            var bindings: [SQLBinding] = []
            for member in members {
                guard case .constant(let constant) = member, let binding = Self.binding(constant, for: attribute.type)
                else { return nil }
                bindings.append(binding)
            }
            guard !bindings.isEmpty else { return ("0", []) }
            let list = Array(repeating: "?", count: bindings.count).joined(separator: ", ")
            return ("\(column)\(collate) IN (\(list))", bindings)
        case .beginsWith, .endsWith, .contains, .like:
            guard attribute.type == .string, case .constant(.string(let text)) = right else { return nil }
            if text.isEmpty && op != .like { return ("\(column) IS NOT NULL", []) }
            if stringOptions.isEmpty {
                switch op {
                case .beginsWith: return ("substr(\(column), 1, length(?)) = ?", [.text(text), .text(text)])
                case .endsWith: return ("substr(\(column), -length(?)) = ?", [.text(text), .text(text)])
                case .contains: return ("instr(\(column), ?) > 0", [.text(text)])
                default: break
                }
            }
            guard let code = SQLiteFunctions.StringOperatorCode(op) else { return nil }
            return (
                "graft_match(\(code.rawValue), \(column), ?, \(stringOptions.rawValue))", [.text(text)]
            )
        case .matches:
            guard attribute.type == .string, case .constant(.string(let pattern)) = right else { return nil }
            // A pattern ICU rejects is left to evaluation in memory, which reports it clearly.
            guard (try? GraftPredicate.Operator.matchesRegularExpression("", pattern, options: stringOptions)) != nil
            else { return nil }
            if stringOptions.isEmpty { return ("\(column) REGEXP ?", [.text(pattern)]) }
            return ("regexp(?, \(column), \(stringOptions.rawValue))", [.text(pattern)])
        }
    }

    // MARK: To-manys

    /// The rows of a to-many's destination related to the row `alias`: what to select from (the
    /// destination aliased `related`) and the condition that ties them to `alias`; nil where the
    /// storage cannot say it simply (owners in an overflow table, a many-to-many that is its own inverse).
    private func relatedRows(
        _ relationship: RelationshipDescription, as related: String
    ) -> (from: String, link: String)? {
        guard let storage = schema.toManyStorage[entity.index][relationship.index] else { return nil }
        let destination = schema.tables[schema.tableOfEntity[relationship.destinationIndex]].name
        switch storage {
        case .virtualColumn(let virtual):
            guard virtual.overflow == nil else { return nil }
            return (
                "\(SQLiteName.quoted(schema.tables[virtual.table].name)) \(related)",
                "\(related).\(SQLiteName.quoted(virtual.column)) = \(alias).Z_PK"
            )
        case .inverseColumn(let table, let column, _):
            return (
                "\(SQLiteName.quoted(schema.tables[table].name)) \(related)",
                "\(related).\(SQLiteName.quoted(column)) = \(alias).Z_PK"
            )
        case .joinTable(let index, let own, let other, _):
            if SQLiteSchema.isOwnInverse(relationship, of: entity, in: model) { return nil }
            let join = "\(related)j"
            return (
                "\(SQLiteName.quoted(schema.joinTables[index].name)) \(join) JOIN \(SQLiteName.quoted(destination)) "
                    + "\(related) ON \(related).Z_PK = \(join).\(SQLiteName.quoted(other))",
                "\(join).\(SQLiteName.quoted(own)) = \(alias).Z_PK"
            )
        }
    }

    /// `ANY`/`ALL`/`NONE toMany.attribute op constant`, as `EXISTS` over the related rows.
    private func toManyComparison(_ comparison: GraftPredicate.Comparison) -> (String, [SQLBinding])? {
        guard case .keyPath(let path) = comparison.left, path.components.count == 2,
            case .key(let name) = path.components[0], case .key(let attributeName) = path.components[1],
            let relationship = entity.relationship(named: name), relationship.isToMany
        else { return nil }
        let destination = model.descriptions[relationship.destinationIndex]
        let related = alias + "m"
        guard let attribute = destination.attributeIndexByName[attributeName],
            let rows = relatedRows(relationship, as: related),
            let (inner, bindings) = SQLPredicateTranslator(schema: schema, entity: destination, alias: related)
                .attributeComparison(
                    entity: destination, attribute: attribute, alias: related, comparison.operator, comparison.right,
                    options: comparison.options)
        else { return nil }
        let select = "SELECT 1 FROM \(rows.from) WHERE \(rows.link)"
        switch comparison.modifier {
        case .any, .direct: return ("EXISTS (\(select) AND (\(inner)))", bindings)
        case .all: return ("NOT EXISTS (\(select) AND NOT COALESCE((\(inner)), 0))", bindings)
        case .none: return ("NOT EXISTS (\(select) AND (\(inner)))", bindings)
        }
    }

    /// `SUBQUERY(toMany, $x, predicate on $x).@count op n` (or `[SIZE]`), as a counting subquery.
    private func subqueryCount(_ comparison: GraftPredicate.Comparison) -> (String, [SQLBinding])? {
        let subquery: GraftPredicate.Expression
        switch comparison.left {
        case .member(let base, let path) where path.components == [.collectionOperator(.count)]: subquery = base
        case .index(let base, .size): subquery = base
        default: return nil
        }
        guard case .subquery(.keyPath(let path), let variable, let predicate) = subquery,
            path.components.count == 1, case .key(let name) = path.components[0],
            let relationship = entity.relationship(named: name), relationship.isToMany,
            case .constant(let constant) = comparison.right, let number = Self.integer(constant),
            let sqlOp = Self.sqlOperator(comparison.operator), let inner = Self.rebind(predicate, variable)
        else { return nil }
        let destination = model.descriptions[relationship.destinationIndex]
        let related = alias + "m"
        guard let rows = relatedRows(relationship, as: related),
            let (condition, bindings) = SQLPredicateTranslator(schema: schema, entity: destination, alias: related)
                .condition(inner)
        else { return nil }
        return (
            "(SELECT count(*) FROM \(rows.from) WHERE \(rows.link) AND (\(condition))) \(sqlOp) ?",
            bindings + [.integer(number)]
        )
    }

    /// A subquery's predicate with `$x.path` made a key path of the element (`$x` itself `SELF`), or nil
    /// when it refers to anything else of the outer object (which SQL over the element cannot see).
    static func rebind(_ predicate: GraftPredicate, _ variable: String) -> GraftPredicate? {
        switch predicate {
        case .truePredicate, .falsePredicate: return predicate
        case .not(let inner): return rebind(inner, variable).map { .not($0) }
        case .and(let parts):
            let rebound = parts.compactMap { rebind($0, variable) }
            return rebound.count == parts.count ? .and(rebound) : nil
        case .or(let parts):
            let rebound = parts.compactMap { rebind($0, variable) }
            return rebound.count == parts.count ? .or(rebound) : nil
        case .comparison(var comparison):
            guard let left = rebind(comparison.left, variable), let right = rebind(comparison.right, variable) else {
                return nil
            }
            comparison.left = left
            comparison.right = right
            return .comparison(comparison)
        }
    }

    private static func rebind(
        _ expression: GraftPredicate.Expression, _ variable: String
    ) -> GraftPredicate.Expression? {
        switch expression {
        case .variable(let name) where name == variable: return .evaluatedObject
        case .member(.variable(let name), let path) where name == variable: return .keyPath(path)
        case .constant, .null, .object: return expression
        case .aggregate(let elements):
            let rebound = elements.compactMap { rebind($0, variable) }
            return rebound.count == elements.count ? .aggregate(rebound) : nil
        default: return nil
        }
    }

    private func toOneComparison(
        _ relationship: RelationshipDescription, _ op: GraftPredicate.Operator, _ right: GraftPredicate.Expression
    )
        -> (String, [SQLBinding])?
    {
        guard let columns = schema.toOneColumns[entity.index][relationship.index], op == .equalTo || op == .notEqualTo
        else {
            return nil
        }
        let column = "\(alias).\(SQLiteName.quoted(columns.key))"
        if case .null = right { return (op == .equalTo ? "\(column) IS NULL" : "\(column) IS NOT NULL", []) }
        guard case .object(let reference) = right, let object = reference.object as? ManagedObject,
            !object.objectID.isTemporary
        else { return nil }
        var sql = "\(column) = ?"
        var bindings: [SQLBinding] = [.integer(object.objectID.key)]
        if let entityColumn = columns.entity {
            sql += " AND \(alias).\(SQLiteName.quoted(entityColumn)) = ?"
            bindings.append(.integer(Int64(schema.entityNumbers[object.objectID.entity])))
        }
        if op == .notEqualTo { return ("NOT COALESCE((\(sql)), 0)", bindings) }
        return (sql, bindings)
    }

    private func countExpression(_ relationship: RelationshipDescription) -> String? {
        guard let storage = schema.toManyStorage[entity.index][relationship.index] else { return nil }
        switch storage {
        case .virtualColumn(let virtual):
            // Owners after the first are in a join table the count would also have to read.
            guard virtual.overflow == nil else { return nil }
            return
                "(SELECT count(*) FROM \(SQLiteName.quoted(schema.tables[virtual.table].name)) c WHERE c.\(SQLiteName.quoted(virtual.column)) = \(alias).Z_PK)"
        case .inverseColumn(let table, let column, _):
            return
                "(SELECT count(*) FROM \(SQLiteName.quoted(schema.tables[table].name)) c WHERE c.\(SQLiteName.quoted(column)) = \(alias).Z_PK)"
        case .joinTable(let index, let own, _, _):
            if SQLiteSchema.isOwnInverse(relationship, of: entity, in: model) { return nil }
            return
                "(SELECT count(*) FROM \(SQLiteName.quoted(schema.joinTables[index].name)) j WHERE j.\(SQLiteName.quoted(own)) = \(alias).Z_PK)"
        }
    }

    // MARK: Sorting

    /// The `ORDER BY` terms for sort descriptors (ties broken by key), with the `LEFT JOIN`s they need,
    /// or `nil` when one of them does not translate. A key path may go through to-ones to an attribute
    /// (`department.name`): each to-one is joined on its foreign key to its destination's table (which
    /// holds the destination's subentities too), and an object whose to-one is `nil` sorts as a `nil`
    /// value, as in memory. Strings keep the sort's comparison through the collations.
    func orderBy(_ descriptors: [GraftSortDescriptor]) -> (joins: String, order: String)? {
        var terms: [String] = []
        var joins: [String] = []
        // One join per distinct to-one path, shared by the descriptors that go through it.
        var joined: [[String]: String] = [:]
        for descriptor in descriptors {
            var names: [String] = []
            for component in descriptor.keyPath.components {
                guard case .key(let name) = component else { return nil }
                names.append(name)
            }
            guard let attributeName = names.last else { return nil }
            var current = entity
            var currentAlias = alias
            for depth in 0..<(names.count - 1) {
                guard let index = current.relationshipIndexByName[names[depth]],
                    !current.relationships[index].isToMany, !current.relationships[index].isTransient,
                    let columns = schema.toOneColumns[current.index][index],
                    let destination = model.entity(named: current.relationships[index].destination)
                else { return nil }
                let path = Array(names[...depth])
                if let existing = joined[path] {
                    currentAlias = existing
                } else {
                    let joinAlias = "o\(joins.count + 1)"
                    let table = schema.tables[schema.tableOfEntity[destination.index]]
                    joins.append(
                        "LEFT JOIN \(SQLiteName.quoted(table.name)) \(joinAlias) ON \(joinAlias).Z_PK = "
                            + "\(currentAlias).\(SQLiteName.quoted(columns.key))")
                    joined[path] = joinAlias
                    currentAlias = joinAlias
                }
                current = destination
            }
            guard let index = current.attributeIndexByName[attributeName],
                let column = schema.attributeColumns[current.index][index]
            else { return nil }
            var collate = ""
            switch current.attributes[index].type {
            case .integer16, .integer32, .integer64, .double, .float, .decimal, .boolean, .date: break
            case .string:
                collate = " COLLATE \(SQLiteFunctions.collation(descriptor.options.subtracting(.normalized)))"
            default: return nil
            }
            terms.append(
                "\(currentAlias).\(SQLiteName.quoted(column))\(collate) \(descriptor.ascending ? "ASC" : "DESC")")
        }
        terms.append("\(alias).Z_PK")
        return (joins.joined(separator: " "), terms.joined(separator: ", "))
    }

    // MARK: Values

    static func sqlOperator(_ op: GraftPredicate.Operator) -> String? {
        switch op {
        case .equalTo: return "="
        case .notEqualTo: return "!="
        case .lessThan: return "<"
        case .lessThanOrEqualTo: return "<="
        case .greaterThan: return ">"
        case .greaterThanOrEqualTo: return ">="
        default: return nil
        }
    }

    static func flipped(_ op: GraftPredicate.Operator) -> GraftPredicate.Operator? {
        switch op {
        case .equalTo, .notEqualTo: return op
        case .lessThan: return .greaterThan
        case .lessThanOrEqualTo: return .greaterThanOrEqualTo
        case .greaterThan: return .lessThan
        case .greaterThanOrEqualTo: return .lessThanOrEqualTo
        default: return nil
        }
    }

    static func integer(_ value: Value) -> Int64? {
        switch value {
        case .integer(let number): return number
        case .double(let number): return number.rounded() == number ? Int64(exactly: number) : nil
        case .bool(let flag): return flag ? 1 : 0
        default: return nil
        }
    }

    /// The binding for a constant compared with an attribute of `type`, or `nil` when SQL would compare
    /// it differently than memory does.
    static func binding(_ value: Value, for type: AttributeType) -> SQLBinding? {
        switch type {
        case .integer16, .integer32, .integer64, .boolean:
            switch value {
            case .integer(let number): return .integer(number)
            case .bool(let flag): return .integer(flag ? 1 : 0)
            case .double(let number): return number.isFinite ? .real(number) : nil
            default: return nil
            }
        case .double, .float, .decimal:
            switch value {
            case .integer(let number): return .integer(number)
            case .double(let number): return number.isNaN ? nil : .real(number)
            case .decimal: return nil
            default: return nil
            }
        case .date:
            if case .date(let date) = value { return .real(date.timeIntervalSinceReferenceDate) }
            return nil
        case .string:
            if case .string(let text) = value { return .text(text) }
            return nil
        case .uri:
            if case .uri(let url) = value { return .text(url.absoluteString) }
            return nil
        case .uuid:
            if case .uuid(let uuid) = value { return .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) }) }
            return nil
        default:
            return nil
        }
    }
}
