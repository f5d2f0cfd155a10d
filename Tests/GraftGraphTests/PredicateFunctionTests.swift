import Foundation
import GraftCore
import GraftGraph
import Testing

/// Function expressions, SUBQUERY, index forms, CAST of key paths, TERNARY, `**` and the union
/// collection operators, on the small Company graph (see `TestObjects.swift`).
@Suite struct PredicateFunctionTests {
    let graph = Company()

    static func value(_ text: String, on object: Any?, variables: [String: Any] = [:]) throws -> Any? {
        try GraftPredicate.Expression.parse(text).evaluate(with: object, variables: variables)
    }

    /// (expression, evaluated on Sales — employees Ann 60000/41, Bob 45000/29, Cy 52000.5/35 —, its value)
    static let onSales: [(String, Operandish)] = [
        ("sum:(employees.age)", .integer(105)),
        ("count:(employees)", .integer(3)),
        ("count:(projects)", .integer(0)),
        ("min:(employees.age)", .integer(29)),
        ("max:(employees.salary)", .integer(60000)),
        ("average:(employees.age)", .double(35)),
        ("median:(employees.age)", .integer(35)),
        ("median:({1, 2, 3, 10})", .double(2.5)),
        ("mode:({1, 2, 2, 3, 3, 4})", .array([.integer(2), .integer(3)])),
        ("stddev:({2, 4, 4, 4, 5, 5, 7, 9})", .double(2)),
        ("add:to:(budget, 1)", .integer(1_000_001)),
        ("from:subtract:(budget, 1)", .integer(999_999)),
        ("multiply:by:(2, 3)", .integer(6)),
        ("divide:by:(7, 2)", .double(3.5)),
        ("modulus:by:(7, 3)", .integer(1)),
        ("modulus:by:(-7, 3)", .integer(-1)),
        ("raise:toPower:(2, 10)", .double(1024)),
        ("2 ** 10", .double(1024)),
        ("2 ** 3 ** 2", .double(512)),
        ("2 * 3 ** 2", .double(18)),
        ("sqrt:(16)", .double(4)),
        ("log:(1000)", .double(3)),
        ("ln:(1)", .double(0)),
        ("exp:(0)", .double(1)),
        ("ceiling:(2.1)", .double(3)),
        ("floor:(-2.1)", .double(-3)),
        ("trunc:(-2.7)", .double(-2)),
        ("abs:(-5)", .integer(5)),
        ("abs:(-2.5)", .double(2.5)),
        ("bitwiseAnd:with:(12, 10)", .integer(8)),
        ("bitwiseOr:with:(12, 10)", .integer(14)),
        ("bitwiseXor:with:(12, 10)", .integer(6)),
        ("leftshift:by:(1, 4)", .integer(16)),
        ("rightshift:by:(16, 2)", .integer(4)),
        ("onesComplement:(0)", .integer(-1)),
        ("uppercase:(name)", .string("SALES")),
        ("lowercase:(manager.name)", .string("ann")),
        ("uppercase:(nickname)", .null),
        ("noindex:(name)", .string("Sales")),
        ("castObject:toType:('42', 'NSNumber')", .integer(42)),
        ("castObject:toType:(budget, 'NSString')", .string("1000000")),
        ("add:to:(nothing, 1)", .null),
        // SUBQUERY gives the matching elements.
        ("SUBQUERY(employees, $e, $e.salary > 50000).@count", .integer(2)),
        ("SUBQUERY(employees, $e, $e.age < 30 AND $e.name BEGINSWITH 'B')[FIRST].name", .string("Bob")),
        ("SUBQUERY(employees, $e, SUBQUERY($e.reports, $r, $r.age > 30).@count > 0)[SIZE]", .integer(1)),
        ("SUBQUERY(employees, $e, $e.department == SELF).@count", .integer(3)),
        // Index forms.
        ("employees[FIRST].name", .string("Ann")),
        ("employees[LAST].name", .string("Cy")),
        ("employees[SIZE]", .integer(3)),
        ("employees[1].name", .string("Bob")),
        ("projects[FIRST]", .null),
        ("{10, 20, 30}[LAST]", .integer(30)),
        ("employees.name[2]", .string("Cy")),
        // CAST of values known only at evaluation.
        ("CAST(manager.hireDate, 'NSNumber')", .double(100)),
        ("CAST(budget, 'NSString')", .string("1000000")),
        ("CAST(CAST(manager.hireDate, 'NSNumber') + 50, 'NSDate')", .date(150)),
        ("CAST(nickname, 'NSNumber')", .null),
        // TERNARY.
        ("TERNARY(budget > 10, 'big', 'small')", .string("big")),
        ("TERNARY(employees.@count == 0, 0, employees.@avg.age)", .double(35)),
        // FUNCTION: methods Graft knows, and keys of objects.
        ("FUNCTION(name, 'uppercaseString')", .string("SALES")),
        ("FUNCTION(name, 'length')", .integer(5)),
        ("FUNCTION('42', 'intValue')", .integer(42)),
        ("FUNCTION(employees, 'count')", .integer(3)),
        ("FUNCTION(SELF, 'name')", .string("Sales")),
        ("FUNCTION(budget, 'add:to:', 5)", .integer(1_000_005)),
        ("FUNCTION(name, 'lowercase:')", .string("sales")),
        // Union operators.
        ("employees.@unionOfObjects.isManager", .array([.bool(true), .bool(false), .bool(false)])),
        ("employees.@distinctUnionOfObjects.isManager", .array([.bool(true), .bool(false)])),
        ("employees.@unionOfObjects.nickname", .array([.string("Bobby")])),
        ("employees.@distinctUnionOfObjects.department.name", .array([.string("Sales")])),
        ("{{1, 2}, {2, 3}}.@unionOfArrays.SELF", .array([.integer(1), .integer(2), .integer(2), .integer(3)])),
        ("{{1, 2}, {2, 3}}.@distinctUnionOfArrays.SELF", .array([.integer(1), .integer(2), .integer(3)])),
        ("{{1, 2}, {2, 3}}.@distinctUnionOfSets.SELF", .array([.integer(1), .integer(2), .integer(3)])),
        ("{{1, 2}, {2, 3}}.@unionOfSets.SELF", .array([.integer(1), .integer(2), .integer(2), .integer(3)])),
        ("count:(employees.@distinctUnionOfObjects.manager)", .integer(1)),
    ]

    @Test(arguments: onSales)
    func evaluatesOnSales(text: String, expected: Operandish) throws {
        let value = try Self.value(text, on: graph.sales)
        #expect(Operandish(value) == expected, "\(text) gave \(String(describing: value))")
    }

    @Test func unionsAcrossDepartments() throws {
        let names = try #require(
            try Self.value("departments.@distinctUnionOfArrays.employees", on: graph.company) as? [Any?])
        #expect(names.count == 5)
        let reports = try Self.value("departments.employees.@distinctUnionOfObjects.manager.name", on: graph.company)
        #expect(Operandish(reports) == .array([.string("Ann"), .string("Dée")]))
    }

    @Test func nowAndRandom() throws {
        let before = Date()
        let now = try #require(try Self.value("now()", on: nil) as? Date)
        #expect(now >= before && now <= Date())
        let random = try #require(try Self.value("random()", on: nil) as? Double)
        #expect(random >= 0 && random < 1)
        let below = try #require(try Self.value("random:(3)", on: nil) as? Int64)
        #expect((0..<3).contains(below))
        expectEvaluation("hireDate < now()", on: graph.bob, is: true)
    }

    @Test func functionsInPredicates() {
        expectEvaluation("uppercase:(name) == 'BOB'", on: graph.bob, is: true)
        expectEvaluation("lowercase:(name) BEGINSWITH 'b'", on: graph.bob, is: true)
        expectEvaluation("count:(employees) == 3", on: graph.sales, is: true)
        expectEvaluation("sum:(employees.age) > 100", on: graph.sales, is: true)
        expectEvaluation(
            "SUBQUERY(employees, $x, $x.name == 'Ann' && $x.isManager == YES).@count != 0", on: graph.sales, is: true)
        expectEvaluation(
            "SUBQUERY(employees, $x, $x.name == 'Ann' && $x.isManager == NO).@count != 0", on: graph.sales, is: false)
        expectEvaluation("employees[SIZE] == 2", on: graph.engineering, is: true)
        expectEvaluation("CAST(hireDate, 'NSNumber') > 250", on: graph.bob, is: true)
        expectEvaluation("modulus:by:(age, 2) == 1", on: graph.bob, is: true)
        expectEvaluation("count:(employees.@distinctUnionOfObjects.department) == 1", on: graph.sales, is: true)
        expectEvaluation("ANY employees.@unionOfObjects.name == 'Cy'", on: graph.sales, is: true)
    }

    @Test func subqueryVariablesAreNotSubstituted() throws {
        let template = try GraftPredicate(format: "SUBQUERY(employees, $e, $e.salary > $MIN).@count > 0")
        let bound = try template.substituting(["MIN": Int64(55000), "e": "not this"])
        #expect(bound.description == "SUBQUERY(employees, $e, $e.salary > 55000).@count > 0")
        #expect(try bound.evaluate(with: graph.sales))
        #expect(try !bound.evaluate(with: graph.empty))
    }

    @Test(arguments: [
        "uppercase:(name) == \"BOB\"",
        "now() > hireDate",
        "random() < 1",
        "add:to:(age, 1) == 30",
        "count:(employees) > 2",
        "castObject:toType:(age, \"NSString\") == \"29\"",
        "SUBQUERY(employees, $e, $e.salary > 5 AND $e.name BEGINSWITH \"A\").@count > 0",
        "SUBQUERY(employees, $e, ANY $e.reports.name == \"x\")[SIZE] == 0",
        "employees[FIRST].name == \"Ann\"",
        "employees[LAST] == nil",
        "employees[SIZE] == 3",
        "employees[1 + 1].name == \"Cy\"",
        "CAST(hireDate, \"NSNumber\") > 5",
        "FUNCTION(name, \"uppercaseString\") == \"BOB\"",
        "FUNCTION(SELF, \"add:to:\", 1, 2) == 3",
        "TERNARY(age > 5, 1, 2) == 1",
        "age ** 2 > 5",
        "(age + 1) ** 2 > 5",
        "employees.@distinctUnionOfObjects.name CONTAINS \"Ann\"",
        "employees.@unionOfSets.name.@count == 2",
    ])
    func printsAndParsesBack(format: String) {
        expectParse(format, prints: format)
    }

    @Test func errorsNameTheFunctionAndTheArgument() {
        var error = expectEvaluationError("sqrt:(name) == 1", on: graph.bob, "sqrt: needs a number, but found a String")
        #expect(error?.context == [.key("name")])
        error = expectEvaluationError("uppercase:(age) == 'A'", on: graph.bob, "uppercase: needs a string")
        #expect(error?.context == [.key("age")])
        expectEvaluationError("sum:(name) == 1", on: graph.bob, "sum: needs a collection, but found a String")
        expectEvaluationError("modulus:by:(age, 0) == 1", on: graph.bob, "cannot take a remainder by zero")
        expectEvaluationError("SUBQUERY(name, $x, $x == 'a').@count == 1", on: graph.bob, "SUBQUERY needs a collection")
        expectEvaluationError("name[FIRST] == 'B'", on: graph.bob, "has no elements to select from")
        expectEvaluationError(
            "reports[5] == nil", on: graph.ann, "the index 5 is outside reports, which has 2 elements")
        expectEvaluationError("reports['x'] == nil", on: graph.ann, "must be an integer")
        expectEvaluationError("CAST(name, 'NSDate') == nil", on: graph.bob, "CAST to NSDate needs a number of seconds")
        expectEvaluationError("FUNCTION(age, 'frobnicate') == 1", on: graph.bob, "has no method 'frobnicate'")
        expectEvaluationError("name.@unionOfArrays.x == 1", on: graph.bob, "@unionOfArrays needs a collection")
        expectEvaluationError(
            "employees.@unionOfArrays.name == 1", on: graph.sales, "@unionOfArrays needs collections to join")
    }

    /// Ordering or string-matching values of different kinds is an error naming both sides, as
    /// Foundation raises rather than answer; equality of different kinds is simply false.
    @Test(arguments: [
        (
            "name > 5",
            "> needs two values of one kind (numbers, strings, dates, …), but name is a String and 5 is an integer"
        ),
        ("hireDate > 3", "hireDate is a Date and 3 is an integer"),
        ("age < 'x'", "age is an integer and \"x\" is a String"),
        ("age BEGINSWITH '2'", "BEGINSWITH needs strings, but age is an integer"),
        ("age LIKE[c] '2*'", "LIKE[c] needs strings"),
        ("age MATCHES '2.*'", "MATCHES needs strings"),
        ("age CONTAINS '2'", "CONTAINS needs strings"),
        ("age IN 'abc29'", "IN needs a string on its left"),
        ("age BETWEEN {'a', 'z'}", "BETWEEN needs two values of one kind"),
        ("manager > department", "objects have none"),
    ])
    func mismatchedTypes(format: String, message: String) {
        let error = expectEvaluationError(format, on: graph.bob, message)
        #expect(error?.message.contains("in \(format.prefix(4))") == true, "\(String(describing: error))")
    }

    @Test func nilAndNaNAreNotMismatches() {
        expectEvaluation("nickname > 5", on: graph.ann, is: false)
        expectEvaluation("age > nil", on: graph.ann, is: false)
        expectEvaluation("nickname BEGINSWITH 5", on: graph.ann, is: false)
        expectEvaluation("SELF > 1", on: Double.nan, is: false)
        expectEvaluation("name == 5", on: graph.ann, is: false)
    }
}

/// A value, for comparing evaluation results in tests.
enum Operandish: Equatable, CustomStringConvertible {
    case null
    case integer(Int64)
    case double(Double)
    case string(String)
    case bool(Bool)
    case date(Double)
    case array([Operandish])
    case other(String)

    init(_ value: Any?) {
        switch value {
        case nil: self = .null
        case let value as Bool: self = .bool(value)
        case let value as Int64: self = .integer(value)
        case let value as Int: self = .integer(Int64(value))
        case let value as Double: self = .double(value)
        case let value as Decimal: self = .double(NSDecimalNumber(decimal: value).doubleValue)
        case let value as String: self = .string(value)
        case let value as Date: self = .date(value.timeIntervalSinceReferenceDate)
        case let value as [Any?]: self = .array(value.map(Operandish.init))
        case let value?: self = .other("\(value)")
        }
    }

    var description: String {
        switch self {
        case .null: return "nil"
        case .integer(let value): return "\(value)"
        case .double(let value): return "\(value)"
        case .string(let value): return "\"\(value)\""
        case .bool(let value): return "\(value)"
        case .date(let value): return "date \(value)"
        case .array(let values): return "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .other(let text): return text
        }
    }
}
