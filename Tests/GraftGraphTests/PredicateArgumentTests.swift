import Foundation
import GraftCore
import GraftGraph
import GraftModel
import Testing

@Suite struct FormatArgumentTests {
    let graph = Company()

    @Test func objectsAndValues() {
        expectParse("name == %@", "Sales", prints: "name == \"Sales\"")
        expectParse("salary > %@", Int64(50000), prints: "salary > 50000")
        expectParse("salary > %@", 7, prints: "salary > 7")
        expectParse("ratio < %@", 0.25, prints: "ratio < 0.25")
        expectParse("flag == %@", true, prints: "flag == YES")
        expectParse("price == %@", Decimal(string: "9.99")!, prints: "price == CAST(\"9.99\", \"NSDecimalNumber\")")
        expectParse("hireDate > %@", Company.date(600_000_000), prints: "hireDate > CAST(600000000, \"NSDate\")")
        expectParse("hireDate > %@", Company.date(0.25), prints: "hireDate > CAST(0.25, \"NSDate\")")
        expectParse(
            "id == %@", UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!,
            prints: "id == CAST(\"6BA7B810-9DAD-11D1-80B4-00C04FD430C8\", \"NSUUID\")")
        expectParse("photo == %@", Data([0xFF, 0]), prints: "photo == CAST(\"/wA=\", \"NSData\")")
        expectParse(
            "site == %@", URL(string: "https://example.com")!,
            prints: "site == CAST(\"https://example.com\", \"NSURL\")")
        expectParse("nickname == %@", nil, prints: "nickname == nil")
        expectParse("nickname == %@", NSNull(), prints: "nickname == nil")
        expectParse("name IN %@", ["Ann", "Bob"], prints: "name IN {\"Ann\", \"Bob\"}")
        expectParse("age BETWEEN %@", [Int64(18), 65.5] as [Any], prints: "age BETWEEN {18, 65.5}")
        expectParse("name == %@", Value.string("x"), prints: "name == \"x\"")
        expectParse("name == %@", GraftPredicate.Expression.keyPath("nickname"), prints: "name == nickname")
    }

    @Test func objectArgumentsAreObjects() throws {
        let predicate = try GraftPredicate(format: "manager == %@", graph.ann)
        #expect(predicate == .comparison(.init(.keyPath("manager"), .equalTo, .object(.init(graph.ann)))))
        #expect(predicate.description == "manager == <Record Ann>")
        #expect(try predicate.evaluate(with: graph.bob))
        #expect(try !predicate.evaluate(with: graph.eve))
        // Equal only to the same object.
        #expect(try GraftPredicate(format: "manager == %@", graph.ann) == predicate)
        #expect(try GraftPredicate(format: "manager == %@", Record(["name": "Ann"])) != predicate)

        let team = try GraftPredicate(format: "SELF IN %@", ToMany([graph.ann, graph.bob]))
        #expect(try team.evaluate(with: graph.bob))
        #expect(try !team.evaluate(with: graph.cy))
        #expect(try GraftPredicate(format: "%@.name == 'Ann'", graph.ann).evaluate(with: nil))
    }

    @Test func keyPathArguments() {
        expectParse("%K == %@", "name", "Sales", prints: "name == \"Sales\"")
        expectParse("%K.@count > %d", "employees", 3, prints: "employees.@count > 3")
        expectParse("%K BEGINSWITH[c] %@", "department.name", "s", prints: "department.name BEGINSWITH[c] \"s\"")
        expectParse("%K == 1", "size", prints: "#size == 1")
        expectParse("%K == 1", KeyValuePath("a.b"), prints: "a.b == 1")
        expectEvaluation("%K == %@", "manager.name", "Ann", on: graph.bob, is: true)
    }

    @Test func printfStyleArguments() {
        expectParse("age == %d", 29, prints: "age == 29")
        expectParse("age == %i", Int32(-3), prints: "age == -3")
        expectParse("age == %ld", Int64.max, prints: "age == 9223372036854775807")
        expectParse("age == %lld", UInt8(7), prints: "age == 7")
        expectParse("age == %u", UInt32(7), prints: "age == 7")
        expectParse("age == %d", 3.0, prints: "age == 3")
        expectParse("ratio == %f", 0.5, prints: "ratio == 0.5")
        expectParse("ratio == %lf", 2, prints: "ratio == 2.0")
        expectParse("name == %s", "Ann", prints: "name == \"Ann\"")
        expectParse("%K == %d AND %K == %@", "a", 1, "b", "x", prints: "a == 1 AND b == \"x\"")
    }

    @Test func argumentErrorsPointAtTheSpecifier() {
        expectSyntaxError("x == %@", at: 5, "more arguments than the 0 given")
        expectSyntaxError("x == %@ AND y == %@", "a", at: 17, "more arguments than the 1 given")
        expectSyntaxError("x == 1", "extra", at: 6, "1 format arguments were given but the format uses only 0")
        expectSyntaxError("x == %d", "seven", at: 5, "%d needs an integer, but argument 1 is a String")
        expectSyntaxError("x == %d", 2.5, at: 5, "%d needs an integer")
        expectSyntaxError("x == %f", "x", at: 5, "%f needs a number")
        expectSyntaxError("x == %s", 3, at: 5, "%s needs a String")
        expectSyntaxError("%K == 1", 3, at: 0, "%K needs a key path string")
        expectSyntaxError("%K == 1", "a..b", at: 0, "the %K argument \"a..b\" is not a key path")
        expectSyntaxError("x == %@", ["a": 1], at: 5, "cannot be used in a predicate")
        expectSyntaxError("x == %Q", at: 5, "unknown format specifier")
    }

    @Test func argumentsAreConsumedOnceWhenParenthesesBacktrack() {
        expectParse("(%K + %d) * 2 > %d", "a", 1, 10, prints: "(a + 1) * 2 > 10")
        expectParse("(%K == %d) AND %K == %d", "a", 1, "b", 2, prints: "a == 1 AND b == 2")
    }
}

@Suite struct SubstitutionTests {
    let graph = Company()

    @Test func substitutesVariables() throws {
        let template = try GraftPredicate(format: "department.name == $DEPARTMENT AND salary > $MINIMUM")
        let sales = try template.substituting(["DEPARTMENT": "Sales", "MINIMUM": 50000])
        #expect(sales.description == "department.name == \"Sales\" AND salary > 50000")
        #expect(sales == (try GraftPredicate(format: "department.name == 'Sales' AND salary > 50000")))
        #expect(try sales.evaluate(with: graph.ann))
        #expect(try !sales.evaluate(with: graph.bob))
    }

    @Test func substitutesEveryKindOfValue() throws {
        let template = try GraftPredicate(
            format: "a == $A AND b IN $B AND c == $C AND d == $D AND e == $E AND f.name == $F.name AND g == $G + 1")
        let substituted = try template.substituting([
            "A": Company.date(5), "B": ["x", "y"], "C": nil as String? as Any, "D": graph.ann, "E": NSNull(),
            "F": graph.bob, "G": Int64(2),
        ])
        #expect(
            substituted.description.hasPrefix(
                "a == CAST(5, \"NSDate\") AND b IN {\"x\", \"y\"} AND c == nil AND d == <Record Ann> "
                    + "AND e == nil AND f.name == <Record Bob>.name AND g == 2 + 1"
            ))
    }

    @Test func leavesUnknownVariablesForEvaluation() throws {
        let template = try GraftPredicate(format: "hireDate > $FETCH_SOURCE.hireDate AND salary > $MINIMUM")
        let partly = try template.substituting(["MINIMUM": 40000])
        #expect(partly.description == "hireDate > $FETCH_SOURCE.hireDate AND salary > 40000")
        #expect(try partly.evaluate(with: graph.bob, variables: ["FETCH_SOURCE": graph.ann]))
        #expect(try !partly.evaluate(with: graph.ann, variables: ["FETCH_SOURCE": graph.ann]))
    }

    @Test func rejectsValuesAPredicateCannotHold() throws {
        let template = try GraftPredicate(format: "x == $X")
        let error = #expect(throws: GraftError.self) { try template.substituting(["X": ["key": "value"]]) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.context == [.key("$X")])
    }
}
