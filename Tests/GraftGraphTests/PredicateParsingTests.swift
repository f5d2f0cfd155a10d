import Foundation
import GraftCore
import GraftGraph
import GraftModel
import Testing

@Suite struct PredicateParsingTests {
    /// Text as written, and as Graft prints it back (Apple's normalised form).
    static let normalisations: [(String, String)] = [
        // Comparison operators and their spellings.
        ("name == \"Sales\"", "name == \"Sales\""),
        ("name = 'Sales'", "name == \"Sales\""),
        ("salary != 5", "salary != 5"),
        ("salary <> 5", "salary != 5"),
        ("salary < 5", "salary < 5"),
        ("salary <= 5", "salary <= 5"),
        ("salary =< 5", "salary <= 5"),
        ("salary > 50000", "salary > 50000"),
        ("salary >= 5", "salary >= 5"),
        ("salary => 5", "salary >= 5"),
        ("name BEGINSWITH 'a'", "name BEGINSWITH \"a\""),
        ("name beginswith[c] 'a'", "name BEGINSWITH[c] \"a\""),
        ("name EndsWith[d] 'a'", "name ENDSWITH[d] \"a\""),
        ("name CONTAINS[cd] 'a'", "name CONTAINS[cd] \"a\""),
        ("name CONTAINS[DC] 'a'", "name CONTAINS[cd] \"a\""),
        ("name LIKE[n] 'a*b?'", "name LIKE[n] \"a*b?\""),
        ("name MATCHES '[a-z]+'", "name MATCHES \"[a-z]+\""),
        ("name ==[c] 'a'", "name ==[c] \"a\""),
        ("name IN {'a', \"b\"}", "name IN {\"a\", \"b\"}"),
        ("name in[c] 'Sales and Marketing'", "name IN[c] \"Sales and Marketing\""),
        ("age BETWEEN {18, 65}", "age BETWEEN {18, 65}"),
        ("id IN {}", "id IN {}"),
        // Modifiers.
        ("ANY employees.salary > 50000", "ANY employees.salary > 50000"),
        ("some employees.salary > 50000", "ANY employees.salary > 50000"),
        ("ALL employees.salary > 50000", "ALL employees.salary > 50000"),
        ("NONE employees.name BEGINSWITH[c] 'a'", "NONE employees.name BEGINSWITH[c] \"a\""),
        // Compounds and precedence.
        ("a == 1 && b == 2 || c == 3", "(a == 1 AND b == 2) OR c == 3"),
        ("a == 1 || b == 2 && c == 3", "a == 1 OR (b == 2 AND c == 3)"),
        ("a == 1 AND b == 2 AND c == 3", "a == 1 AND b == 2 AND c == 3"),
        ("a == 1 AND (b == 2 AND c == 3)", "a == 1 AND (b == 2 AND c == 3)"),
        ("!a == 1", "NOT a == 1"),
        ("not a == 1 and b == 2", "NOT a == 1 AND b == 2"),
        ("NOT (a == 1 OR b == 2)", "NOT (a == 1 OR b == 2)"),
        ("NOT NOT a == 1", "NOT NOT a == 1"),
        ("(a == 1)", "a == 1"),
        ("((a == 1) AND ((b == 2)))", "a == 1 AND b == 2"),
        ("TRUEPREDICATE", "TRUEPREDICATE"),
        ("falsepredicate OR a == 1", "FALSEPREDICATE OR a == 1"),
        // Literals.
        ("x == nil", "x == nil"),
        ("x == NULL", "x == nil"),
        ("x == TRUE", "x == YES"),
        ("x == yes", "x == YES"),
        ("x == false", "x == NO"),
        ("x == No", "x == NO"),
        ("x == 0x1F", "x == 31"),
        ("x == 0o17", "x == 15"),
        ("x == 0b101", "x == 5"),
        ("x == -5", "x == -5"),
        ("x == -0x10", "x == -16"),
        ("x == 2.5", "x == 2.5"),
        ("x == 1e3", "x == 1000.0"),
        ("x == -2.5E-3", "x == -0.0025"),
        ("x == 9223372036854775807", "x == 9223372036854775807"),
        ("x == -9223372036854775808", "x == -9223372036854775808"),
        ("x == 99999999999999999999", "x == CAST(\"99999999999999999999\", \"NSDecimalNumber\")"),
        ("x == 'say \"hi\"'", "x == \"say \\\"hi\\\"\""),
        ("x == \"a\\\\b\\n\\t\\u00e9\"", "x == \"a\\\\b\\n\\té\""),
        ("x == 'it\\'s'", "x == \"it's\""),
        ("x == \"\\u0001\"", "x == \"\\u0001\""),
        ("hireDate > CAST(600000000, \"NSDate\")", "hireDate > CAST(600000000, \"NSDate\")"),
        ("hireDate > cast(-1.5, 'NSDate')", "hireDate > CAST(-1.5, \"NSDate\")"),
        (
            "id == CAST('6BA7B810-9DAD-11D1-80B4-00C04FD430C8', 'NSUUID')",
            "id == CAST(\"6BA7B810-9DAD-11D1-80B4-00C04FD430C8\", \"NSUUID\")"
        ),
        ("price == CAST('12.50', 'NSDecimalNumber')", "price == CAST(\"12.5\", \"NSDecimalNumber\")"),
        ("price == CAST('12', 'NSNumber')", "price == 12"),
        ("code == CAST(12, 'NSString')", "code == \"12\""),
        // Key paths, SELF, variables, escapes.
        ("SELF == 3", "SELF == 3"),
        ("self.name == 'a'", "SELF.name == \"a\""),
        ("#size == 3", "#size == 3"),
        ("department.size == 3", "department.#size == 3"),
        ("#Name == 3", "Name == 3"),
        ("department.employees.@count > 3", "department.employees.@count > 3"),
        ("employees.@avg.salary < 1000", "employees.@avg.salary < 1000"),
        ("@count == 2", "@count == 2"),
        ("employees.@MAX.salary > 1", "employees.@max.salary > 1"),
        ("hireDate > $FETCH_SOURCE.hireDate", "hireDate > $FETCH_SOURCE.hireDate"),
        ("$FETCHED_PROPERTY.name == name", "$FETCHED_PROPERTY.name == name"),
        ("x == $LIMIT", "x == $LIMIT"),
        // Arithmetic.
        ("salary * 12 + bonus > 100000", "salary * 12 + bonus > 100000"),
        ("(a + b) * c > 1", "(a + b) * c > 1"),
        ("a - (b - c) == 0", "a - (b - c) == 0"),
        ("a - b - c == 0", "a - b - c == 0"),
        ("a / (b * c) == 0", "a / (b * c) == 0"),
        ("-salary < -1", "0 - salary < -1"),
        ("((a + b)) / 2 > (c)", "(a + b) / 2 > c"),
        ("(a + b).@count > 1", "(a + b).@count > 1"),
    ]

    @Test(arguments: normalisations)
    func printsNormalisedFormat(text: String, expected: String) {
        expectParse(text, prints: expected)
    }

    @Test func precedenceIsNotThenAndThenOr() throws {
        let a = GraftPredicate.comparison(.init(.keyPath("a"), .equalTo, 1))
        let b = GraftPredicate.comparison(.init(.keyPath("b"), .equalTo, 2))
        let c = GraftPredicate.comparison(.init(.keyPath("c"), .equalTo, 3))
        #expect(try GraftPredicate(format: "a == 1 OR b == 2 AND NOT c == 3") == .or([a, .and([b, .not(c)])]))
        #expect(try GraftPredicate(format: "NOT a == 1 AND b == 2") == .and([.not(a), b]))
        #expect(try GraftPredicate(format: "NOT (a == 1 AND b == 2)") == .not(.and([a, b])))
        #expect(try GraftPredicate(format: "(a == 1 OR b == 2) AND c == 3") == .and([.or([a, b]), c]))
    }

    @Test func buildsTheExpectedTree() throws {
        let predicate = try GraftPredicate(format: "ANY employees.name BEGINSWITH[cd] $PREFIX")
        let expected = GraftPredicate.comparison(
            .init(
                .keyPath("employees.name"), .beginsWith, .variable("PREFIX"), modifier: .any,
                options: [.caseInsensitive, .diacriticInsensitive]))
        #expect(predicate == expected)

        let arithmetic = try GraftPredicate.Expression.parse("salary * 12 + 100")
        #expect(arithmetic == .arithmetic(.add, .arithmetic(.multiply, .keyPath("salary"), 12), 100))
        #expect(
            try GraftPredicate.Expression.parse("$FETCH_SOURCE.manager.name")
                == .member(.variable("FETCH_SOURCE"), "manager.name"))
        #expect(try GraftPredicate.Expression.parse("SELF") == .evaluatedObject)
        #expect(try GraftPredicate.Expression.parse("{1, 'a', nil}") == .aggregate([1, "a", .null]))
        #expect(
            try GraftPredicate.Expression.parse("CAST(0, \"NSDate\")")
                == .constant(.date(Date(timeIntervalSinceReferenceDate: 0))))
    }

    @Test func keywordsAreCaseInsensitive() throws {
        let lower = try GraftPredicate(format: "any tags in {'a'} and not name like[c] 'x*' or truepredicate")
        let upper = try GraftPredicate(format: "ANY tags IN {'a'} AND NOT name LIKE[c] 'x*' OR TRUEPREDICATE")
        #expect(lower == upper)
    }

    @Test func describesComparisonsAndExpressions() {
        let comparison = GraftPredicate.Comparison(
            .keyPath("employees.name"), .beginsWith, "a", modifier: .any, options: .caseInsensitive)
        #expect(comparison.description == "ANY employees.name BEGINSWITH[c] \"a\"")
        #expect(GraftPredicate.and([]).description == "TRUEPREDICATE")
        #expect(GraftPredicate.or([]).description == "FALSEPREDICATE")
        #expect(GraftPredicate.and([.comparison(comparison)]).description == comparison.description)
        #expect(GraftPredicate.Expression.constant(.data(Data([1, 2, 3]))).description == "CAST(\"AQID\", \"NSData\")")
        #expect(
            GraftPredicate.Expression.constant(.uri(URL(string: "https://example.com/a")!)).description
                == "CAST(\"https://example.com/a\", \"NSURL\")")
    }

    /// (text, offset of the error, part of its message)
    static let malformed: [(String, Int, String)] = [
        // Unbalanced parentheses.
        ("(name == \"a\"", 12, "expected ')' to close the '(' at offset 0"),
        ("((a == 1) OR b == 2", 19, "expected ')' to close the '(' at offset 0"),
        ("name == \"a\")", 11, "unbalanced ')'"),
        ("x IN {1, 2", 10, "expected '}' to close the '{' at offset 5"),
        // Unknown operators.
        ("name ~ \"a\"", 5, "unknown operator '~'"),
        ("name =~ \"a\"", 6, "unknown operator '~'"),
        ("name FOO \"a\"", 5, "expected a comparison operator"),
        ("x == 1 & y == 2", 7, "unknown operator '&'"),
        ("name BEGINSWITH[x] 'a'", 16, "unknown comparison option 'x'"),
        ("name BEGINSWITH[cl] 'a'", 17, "option 'l' is not supported"),
        ("x == 5 * * 2", 9, "expected an expression after '*'"),
        // Unterminated strings.
        ("name == \"abc", 8, "unterminated string"),
        ("name == 'abc", 8, "unterminated string"),
        ("name == 'abc\\'", 8, "unterminated string"),
        // Trailing garbage.
        ("name == \"a\" garbage", 12, "unexpected 'garbage' after the end of the predicate"),
        ("a == 1 2", 7, "unexpected '2'"),
        // Missing operands.
        ("name ==", 7, "expected an expression after '=='"),
        ("== \"a\"", 0, "expected an expression, found '=='"),
        ("name == \"a\" AND", 15, "expected an expression, found the end of the text"),
        ("a == 1 AND OR b == 2", 11, "reserved word 'OR'"),
        ("name", 4, "expected a comparison operator"),
        ("", 0, "expected an expression, found the end of the text"),
        ("x == -", 6, "expected an expression after '-'"),
        ("a.  == 1", 4, "expected a key or a collection operator after '.'"),
        // Malformed literals and unsupported features.
        ("x == 12abc", 5, "malformed number"),
        ("x == 0x", 5, "expected digits after '0x'"),
        ("x == 0x1FFFFFFFFFFFFFFFF", 5, "does not fit in 64 bits"),
        ("x == \"\\u12\"", 6, "four hexadecimal digits"),
        ("x == @median", 5, "unknown collection operator '@median'"),
        ("x == $", 5, "expected a variable name after '$'"),
        ("x == #", 5, "expected a key after '#'"),
        ("x == %q", 5, "unknown format specifier"),
        ("x ? 1", 2, "unexpected character '?'"),
        ("SUBQUERY(employees, e, e.salary > 5).@count > 0", 20, "expected a variable such as $x"),
        ("SUBQUERY(employees, $e, $e.salary).@count > 0", 33, "expected a comparison operator"),
        ("FUNCTION(x, foo) == 1", 12, "expected a selector name"),
        ("nowish() > hireDate", 0, "unknown function 'nowish'"),
        ("x == count:(employees, 2)", 5, "count: takes 1 argument, but 2 were given"),
        ("x == add:to:(1)", 5, "add:to: takes 2 arguments, but 1 were given"),
        ("employees[].name == 'a'", 10, "expected FIRST, LAST, SIZE or an index"),
        ("employees[FIRST.name == 'a'", 10, "[FIRST] selects from a collection"),
        ("size == 3", 0, "write #size"),
        ("x BETWEEN {1}", 10, "BETWEEN needs two bounds"),
        ("x MATCHES '('", 10, "the '(' at offset 0 opens a group that is never closed"),
        ("x MATCHES '['", 10, "the '[' at offset 0 opens a character class that is never closed"),
        ("x MATCHES 'a)'", 10, "the ')' at offset 1 closes no group"),
        ("x MATCHES '*a'", 10, "the '*' at offset 0 has nothing before it to repeat"),
        ("x MATCHES 'a\\\\'", 10, "lone backslash"),
        ("x MATCHES 'a{x'", 10, "the '{' at offset 1 starts no repeat count"),
        ("d == CAST('abc', 'NSUUID')", 10, "needs a UUID string"),
        ("d == CAST(1, 'NSFoo')", 13, "CAST to \"NSFoo\" is not supported"),
        ("d == CAST(x, 'NSFoo')", 13, "CAST to \"NSFoo\" is not supported"),
        ("d == CAST('1.5x', 'NSDecimalNumber')", 10, "needs a number"),
        // Errors on a later line point into that line.
        ("a == 1 AND\n  b == ", 18, "expected an expression after '=='"),
    ]

    @Test(arguments: malformed)
    func reportsSyntaxErrorsWithPositions(text: String, offset: Int, message: String) {
        if text.contains("\n") {
            // The caret is under the column on the error's own line.
            let error = #expect(throws: GraftError.self) { try GraftPredicate(format: text) }
            #expect(error?.context == [.offset(offset)])
            #expect(error?.message.hasSuffix("\n    b == \n         ^") == true, "\(String(describing: error))")
        } else {
            expectSyntaxError(text, at: offset, message)
        }
    }

    @Test func syntaxErrorsShowTheTextWithACaret() {
        let error = #expect(throws: GraftError.self) { try GraftPredicate(format: "(name == \"Ann\"") }
        #expect(
            error?.description == """
                offset 14: expected ')' to close the '(' at offset 0, found the end of the text
                  (name == "Ann"
                                ^
                """)
    }

    @Test func deepNestingIsAnErrorNotACrash() throws {
        let text = String(repeating: "(", count: 300) + "a == 1" + String(repeating: ")", count: 300)
        let error = #expect(throws: GraftError.self) { try GraftPredicate(format: text) }
        #expect(error?.message.contains("nested more than") == true)
        let fine = String(repeating: "(", count: 50) + "a == 1" + String(repeating: ")", count: 50)
        #expect(try GraftPredicate(format: fine) == GraftPredicate(format: "a == 1"))
    }
}
