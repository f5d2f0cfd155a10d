import Foundation
import GraftCore
import GraftGraph
import Testing

@Suite struct PredicateEvaluationTests {
    let graph = Company()

    /// (predicate, expected result on Bob: name "Bob", salary 45000, age 29, nickname "Bobby",
    /// hireDate 300, isManager false, manager Ann, department Sales)
    static let onBob: [(String, Bool)] = [
        ("name == 'Bob'", true),
        ("name == 'bob'", false),
        ("name ==[c] 'bob'", true),
        ("name != 'Bob'", false),
        ("name <> 'Ann'", true),
        ("salary < 45001", true),
        ("salary <= 45000", true),
        ("salary =< 44999", false),
        ("salary > 44999.5", true),
        ("salary >= 45000.0", true),
        ("salary => 45000.01", false),
        ("name < 'Bobby'", true),
        ("name > 'Ann'", true),
        ("name >[c] 'ann'", true),
        // String operators, with options.
        ("name BEGINSWITH 'Bo'", true),
        ("name BEGINSWITH 'bo'", false),
        ("name BEGINSWITH[c] 'bo'", true),
        ("name BEGINSWITH ''", true),
        ("name ENDSWITH 'ob'", true),
        ("name ENDSWITH 'OB'", false),
        ("name ENDSWITH[c] 'OB'", true),
        ("name CONTAINS 'o'", true),
        ("name CONTAINS 'x'", false),
        ("name CONTAINS[c] 'O'", true),
        ("name LIKE 'B?b'", true),
        ("name LIKE 'B*'", true),
        ("name LIKE '*o*'", true),
        ("name LIKE 'b*'", false),
        ("name LIKE[c] 'b*'", true),
        ("name LIKE 'B?'", false),
        ("name LIKE '***b'", true),
        ("nickname LIKE 'B*b?'", true),
        ("name MATCHES 'B.b'", true),
        ("name MATCHES 'B'", false),
        ("name MATCHES 'o'", false),
        ("name MATCHES '[A-Z][a-z]+'", true),
        ("name MATCHES 'b.b'", false),
        ("name MATCHES[c] 'b.b'", true),
        ("name MATCHES 'Bo|Bob'", true),
        // IN and BETWEEN.
        ("name IN {'Ann', 'Bob'}", true),
        ("name IN {'Ann', 'Cy'}", false),
        ("name IN[c] {'ann', 'bob'}", true),
        ("age IN {29.0, 30}", true),
        ("name IN 'Bobby Tables'", true),
        ("name IN 'bobby'", false),
        ("name IN[c] 'BOBBY'", true),
        ("age BETWEEN {20, 30}", true),
        ("age BETWEEN {29, 29}", true),
        ("age BETWEEN {30, 40}", false),
        ("hireDate BETWEEN {CAST(300, 'NSDate'), CAST(301, 'NSDate')}", true),
        ("name BETWEEN {'A', 'C'}", true),
        // Key paths through to-ones.
        ("manager.name == 'Ann'", true),
        ("manager.department.name == 'Sales'", true),
        ("manager.manager.name == nil", true),
        ("manager.manager.name == 'Ann'", false),
        ("department.manager == manager", true),
        ("SELF == manager", false),
        ("SELF.name == 'Bob'", true),
        // Booleans and numbers across types.
        ("isManager == NO", true),
        ("isManager == 0", true),
        ("isManager == 0.0", true),
        ("isManager == FALSE", true),
        ("isManager != YES", true),
        ("age == 29.0", true),
        ("age == CAST('29', 'NSNumber')", true),
        ("age == CAST('29.000', 'NSDecimalNumber')", true),
        ("salary < CAST('45000.01', 'NSDecimalNumber')", true),
        ("age > 0x1C", true),
        ("age == 0b11101", true),
        ("age > -1", true),
        // Values of unrelated types are unequal (ordering them is an error: see mismatchedTypes).
        ("name == 3", false),
        ("name != 3", true),
        // Dates.
        ("hireDate == CAST(300, 'NSDate')", true),
        ("hireDate > CAST(299.5, 'NSDate')", true),
        ("hireDate < CAST(300, 'NSDate')", false),
        // Compounds.
        ("name == 'Bob' AND age == 29", true),
        ("name == 'Bob' AND age == 30", false),
        ("name == 'Ann' OR age == 29", true),
        ("NOT name == 'Ann'", true),
        ("!(name == 'Bob' || age > 100)", false),
        ("name == 'Ann' OR name == 'Bob' AND age == 30", false),
        ("(name == 'Ann' OR name == 'Bob') AND age == 29", true),
        ("TRUEPREDICATE", true),
        ("FALSEPREDICATE", false),
        ("NOT FALSEPREDICATE AND TRUEPREDICATE", true),
        // Arithmetic.
        ("salary * 2 == 90000", true),
        ("salary / 2 == 22500", true),
        ("salary / 4 == 11250", true),
        ("salary - age == 44971", true),
        ("-age == -29", true),
        ("age + 0.5 > 29", true),
        ("(age + 1) * 2 == 60", true),
        ("age + 1 * 2 == 31", true),
        ("salary * CAST('1.1', 'NSDecimalNumber') == 49500", true),
    ]

    @Test(arguments: onBob)
    func evaluatesOnOneObject(format: String, expected: Bool) {
        expectEvaluation(format, on: graph.bob, is: expected)
    }

    @Test func diacriticAndCaseOptions() {
        // Dée
        expectEvaluation("name == 'Dee'", on: graph.dee, is: false)
        expectEvaluation("name ==[d] 'Dee'", on: graph.dee, is: true)
        expectEvaluation("name ==[c] 'DÉE'", on: graph.dee, is: true)
        expectEvaluation("name ==[c] 'DEE'", on: graph.dee, is: false)
        expectEvaluation("name ==[cd] 'DEE'", on: graph.dee, is: true)
        expectEvaluation("name BEGINSWITH[d] 'De'", on: graph.dee, is: true)
        expectEvaluation("name ENDSWITH[cd] 'EE'", on: graph.dee, is: true)
        expectEvaluation("name CONTAINS[d] 'ee'", on: graph.dee, is: true)
        expectEvaluation("name LIKE[cd] 'd?E'", on: graph.dee, is: true)
        expectEvaluation("name MATCHES[d] 'Dee'", on: graph.dee, is: true)
        expectEvaluation("name MATCHES[cd] 'dee'", on: graph.dee, is: true)
        expectEvaluation("name MATCHES 'Dee'", on: graph.dee, is: false)
        expectEvaluation("name IN[cd] {'x', 'DEE'}", on: graph.dee, is: true)
    }

    @Test func likeTreatsBackslashAsEscape() {
        let record = Record(["code": "a*b?"])
        expectEvaluation(#"code LIKE 'a\\*b\\?'"#, on: record, is: true)
        expectEvaluation(#"code LIKE 'a\\*b\\?'"#, on: Record(["code": "axb?"]), is: false)
        expectEvaluation("code LIKE '*'", on: Record(["code": ""]), is: true)
        expectEvaluation("code LIKE '?'", on: Record(["code": ""]), is: false)
    }

    @Test func nilHandling() {
        let ann = graph.ann  // no manager, no nickname
        expectEvaluation("manager == nil", on: ann, is: true)
        expectEvaluation("manager != nil", on: ann, is: false)
        expectEvaluation("nickname == NULL", on: ann, is: true)
        expectEvaluation("nickname == ''", on: ann, is: false)
        expectEvaluation("nickname != 'x'", on: ann, is: true)
        expectEvaluation("nickname < 'x'", on: ann, is: false)
        expectEvaluation("nickname >= 'x'", on: ann, is: false)
        expectEvaluation("nickname <= nil", on: ann, is: false)
        expectEvaluation("nickname BEGINSWITH ''", on: ann, is: false)
        expectEvaluation("nickname CONTAINS 'a'", on: ann, is: false)
        expectEvaluation("nickname LIKE '*'", on: ann, is: false)
        expectEvaluation("nickname MATCHES '.*'", on: ann, is: false)
        expectEvaluation("nickname IN {'a', nil}", on: ann, is: true)
        expectEvaluation("nickname IN {'a'}", on: ann, is: false)
        expectEvaluation("nickname BETWEEN {'a', 'z'}", on: ann, is: false)
        expectEvaluation("name IN nickname", on: ann, is: false)
        expectEvaluation("manager.salary * 2 > 0", on: ann, is: false)
        expectEvaluation("name == 'Ann'", on: nil, is: false)
        expectEvaluation("SELF == nil", on: nil, is: true)
    }

    @Test func modifiersOverNonEmptyCollections() {
        let sales = graph.sales  // salaries 60000, 45000, 52000.5
        expectEvaluation("ANY employees.salary > 55000", on: sales, is: true)
        expectEvaluation("ANY employees.salary > 60000", on: sales, is: false)
        expectEvaluation("SOME employees.name == 'Cy'", on: sales, is: true)
        expectEvaluation("ALL employees.salary > 40000", on: sales, is: true)
        expectEvaluation("ALL employees.salary > 45000", on: sales, is: false)
        expectEvaluation("NONE employees.salary > 60000", on: sales, is: true)
        expectEvaluation("NONE employees.salary >= 60000", on: sales, is: false)
        expectEvaluation("ANY employees.name BEGINSWITH[c] 'a'", on: sales, is: true)
        expectEvaluation("ALL employees.name LIKE '*'", on: sales, is: true)
        expectEvaluation("ANY employees.name IN {'Cy', 'Zed'}", on: sales, is: true)
        expectEvaluation("ANY employees.age BETWEEN {40, 45}", on: sales, is: true)
        expectEvaluation("ANY employees.nickname == nil", on: sales, is: true)
        expectEvaluation("ALL employees.department == SELF", on: sales, is: true)
        expectEvaluation("ANY employees.manager.name == 'Ann'", on: sales, is: true)
        // Nested to-manys are flattened.
        expectEvaluation("ANY departments.employees.name == 'eve'", on: graph.company, is: true)
        expectEvaluation("ALL departments.employees.salary > 40000", on: graph.company, is: true)
        expectEvaluation("NONE departments.employees.reports.name == 'Ann'", on: graph.company, is: true)
        expectEvaluation("NOT ANY employees.salary > 100000", on: sales, is: true)
    }

    @Test func modifiersOverEmptyCollections() {
        let empty = graph.empty
        expectEvaluation("ANY employees.salary > 0", on: empty, is: false)
        expectEvaluation("ALL employees.salary > 0", on: empty, is: true)
        expectEvaluation("NONE employees.salary > 0", on: empty, is: true)
        expectEvaluation("employees.@count == 0", on: empty, is: true)
        // A to-many reached through a nil to-one counts as empty.
        expectEvaluation(
            "ANY manager.reports.name == 'x'", on: graph.bob.values["manager"].map { _ in graph.ann }, is: false)
        expectEvaluation("ANY manager.reports.name == 'x'", on: graph.ann, is: false)
        expectEvaluation("ALL manager.reports.name == 'x'", on: graph.ann, is: true)
        // A single value with a modifier counts as one element.
        expectEvaluation("ANY name == 'Ann'", on: graph.ann, is: true)
        expectEvaluation("ALL name == 'Bob'", on: graph.ann, is: false)
    }

    @Test func collectionOperatorsInPredicates() {
        expectEvaluation("employees.@count > 2", on: graph.sales, is: true)
        expectEvaluation("employees.@count > 3", on: graph.sales, is: false)
        expectEvaluation("department.employees.@count == 3", on: graph.bob, is: true)
        expectEvaluation("employees.@avg.salary > 52333", on: graph.sales, is: true)
        expectEvaluation("employees.@avg.salary < 1000", on: graph.sales, is: false)
        expectEvaluation("employees.@sum.salary == 157000.5", on: graph.sales, is: true)
        expectEvaluation(
            "employees.@sum.salary == CAST('170000.25', 'NSDecimalNumber')", on: graph.engineering, is: true)
        expectEvaluation("employees.@max.hireDate == CAST(300, 'NSDate')", on: graph.sales, is: true)
        expectEvaluation("employees.@min.name == 'Ann'", on: graph.sales, is: true)
        expectEvaluation("employees.@avg.salary == nil", on: graph.empty, is: true)
        expectEvaluation("departments.@max.employees.@count == 3", on: graph.company, is: true)
        expectEvaluation("employees.@count == reports.@count + 1", on: graph.sales, is: false)
        expectEvaluation("reports.@count == 2", on: graph.ann, is: true)
        // Left to right: the operator counts the flattened employees of every department.
        expectEvaluation("departments.employees.@count == 5", on: graph.company, is: true)
    }

    @Test func containsOnCollectionsTestsMembership() {
        expectEvaluation("employees CONTAINS %@", graph.bob, on: graph.sales, is: true)
        expectEvaluation("employees CONTAINS %@", graph.eve, on: graph.sales, is: false)
        expectEvaluation("%@ IN employees", graph.cy, on: graph.sales, is: true)
        expectEvaluation("tags CONTAINS 'b'", on: Record(["tags": ["a", "b"]]), is: true)
        expectEvaluation("tags CONTAINS[c] 'B'", on: Record(["tags": ["a", "b"]]), is: true)
        expectEvaluation("'a' IN tags", on: Record(["tags": Set(["a", "b"])]), is: true)
        expectEvaluation("tags == {'b', 'a'}", on: Record(["tags": ["a", "b"]]), is: true)
        expectEvaluation("tags != {'b'}", on: Record(["tags": ["a", "b"]]), is: true)
    }

    @Test func selfCanBeAPlainValue() {
        expectEvaluation("SELF BEGINSWITH 'a'", on: "apple", is: true)
        expectEvaluation("SELF > 3", on: Int64(4), is: true)
        expectEvaluation("SELF IN {1, 2}", on: 2.0, is: true)
        expectEvaluation("SELF.@count == 3", on: [1, 2, 3], is: true)
        expectEvaluation("@sum == 6", on: [1, 2, 3], is: true)
    }

    @Test func collectionsWithoutAModifierAreErrors() {
        var error = expectEvaluationError("employees.salary > 50000", on: graph.sales, "use ANY, ALL or NONE")
        #expect(error?.context == [.key("employees.salary")])
        error = expectEvaluationError(
            "employees.name == 'Ann'", on: graph.sales, "employees.name gives a collection of 3 values")
        #expect(error?.context == [.key("employees.name")])
        expectEvaluationError("employees.name BEGINSWITH 'A'", on: graph.sales, "use ANY, ALL or NONE")
        expectEvaluationError("employees.name IN {'Ann'}", on: graph.sales, "use ANY, ALL or NONE")
        expectEvaluationError("employees.age BETWEEN {1, 2}", on: graph.sales, "use ANY, ALL or NONE")
        expectEvaluationError("name == {'Ann', 'Bob'}", on: graph.ann, "{\"Ann\", \"Bob\"} gives a collection")
        expectEvaluationError("ANY employees.name CONTAINS {'A'}", on: graph.sales, "gives a collection")
    }

    @Test func otherEvaluationErrors() {
        var error = expectEvaluationError(
            "name == $MISSING", on: graph.ann, "no value was given for the variable $MISSING")
        #expect(error?.context == [.key("$MISSING")])
        error = expectEvaluationError("name.first == 'A'", on: graph.ann, "cannot read the key 'first' of a String")
        #expect(error?.context == [.key("name.first")])
        expectEvaluationError("name * 2 == 1", on: graph.ann, "* needs numbers, but name is a String")
        expectEvaluationError("name IN age", on: graph.ann, "IN needs a collection or a string on its right")
        expectEvaluationError("age BETWEEN age", on: graph.ann, "BETWEEN needs two bounds")
        expectEvaluationError("age / CAST('0', 'NSDecimalNumber') == 1", on: graph.ann, "division by zero")
        let error2 = expectEvaluationError(
            "name MATCHES $PATTERN", on: graph.ann, variables: ["PATTERN": "["],
            "MATCHES needs an ICU regular expression, but \"[\" is not one: the '[' at offset 0 opens a character class"
        )
        #expect(error2?.message.contains("NSCocoaErrorDomain") == false)
        #expect(error2?.context == [.key("$PATTERN")])
    }

    @Test func variablesAtEvaluationTime() throws {
        let hiredAfterSource = try GraftPredicate(format: "hireDate > $FETCH_SOURCE.hireDate AND SELF != $FETCH_SOURCE")
        let later = try graph.employees.filter {
            try hiredAfterSource.evaluate(with: $0, variables: ["FETCH_SOURCE": graph.cy])
        }
        #expect(later.map { $0["name"] as! String } == ["Bob", "eve"])

        let sameDepartment = try GraftPredicate(
            format: "department == $FETCH_SOURCE.department AND $FETCHED_PROPERTY.name == 'colleagues'")
        let variables: [String: Any] = ["FETCH_SOURCE": graph.bob, "FETCHED_PROPERTY": ["name": "colleagues"]]
        #expect(try sameDepartment.evaluate(with: graph.ann, variables: variables))
        #expect(try !sameDepartment.evaluate(with: graph.eve, variables: variables))

        expectEvaluation("salary > $MINIMUM", on: graph.bob, variables: ["MINIMUM": Int64(40000)], is: true)
        expectEvaluation("name IN $NAMES", on: graph.bob, variables: ["NAMES": ["Ann", "Bob"]], is: true)
        expectEvaluation("manager == $BOSS", on: graph.bob, variables: ["BOSS": graph.ann], is: true)
        expectEvaluation("nickname == $NOTHING", on: graph.ann, variables: ["NOTHING": NSNull()], is: true)
        expectEvaluation("$X.@count == 2", on: nil, variables: ["X": ["a", "b"]], is: true)
    }

    @Test func expressionsEvaluateToValues() throws {
        #expect(try GraftPredicate.Expression.parse("employees.@sum.age").evaluate(with: graph.sales) as? Int64 == 105)
        #expect(try GraftPredicate.Expression.parse("age * 2").evaluate(with: graph.bob) as? Int64 == 58)
        #expect(try GraftPredicate.Expression.parse("age / 2").evaluate(with: graph.bob) as? Double == 14.5)
        #expect(
            try GraftPredicate.Expression.parse("9223372036854775807 + 1").evaluate(with: nil) as? Decimal
                == Decimal(string: "9223372036854775808"))
        #expect(
            try GraftPredicate.Expression.parse("$A.name").evaluate(with: nil, variables: ["A": graph.cy]) as? String
                == "Cy"
        )
        #expect(try GraftPredicate.Expression.parse("SELF").evaluate(with: graph.cy) as? Record === graph.cy)
        let aggregate = try #require(try GraftPredicate.Expression.parse("{1, 'a'}").evaluate(with: nil) as? [Any?])
        #expect(aggregate.count == 2)
    }

    @Test func filteringManyObjectsReusesTheParsedPredicate() throws {
        let predicate = try GraftPredicate(format: "salary >= 50000 AND department.name BEGINSWITH[c] %@", "s")
        let matching = try graph.employees.filter { try predicate.evaluate(with: $0) }
        #expect(matching.map { $0["name"] as! String } == ["Ann", "Cy"])
    }
}
