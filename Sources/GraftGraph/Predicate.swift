import Foundation
import GraftModel

/// A condition on objects, written in Apple's predicate-format syntax (`NSPredicate`).
///
/// A predicate is a tree: comparisons of two ``Expression``s, joined with `AND`, `OR` and `NOT`.
/// Parse one with ``init(format:_:)``, test objects with ``evaluate(with:variables:)-(Any?,_)``, print
/// it back with ``description``, or walk the tree (a store translates it to SQL).
///
/// For example:
///
/// ```swift
/// let predicate = try GraftPredicate(format: "department.name == %@ AND salary > %d", "Sales", 50000)
/// let wellPaid = try employees.filter { try predicate.evaluate(with: $0) }
/// print(predicate)   // department.name == "Sales" AND salary > 50000
/// ```
///
/// It is named `GraftPredicate`, not `Predicate`, so that it never clashes with Foundation's `Predicate`
/// in files that import both.
public indirect enum GraftPredicate: Hashable, Sendable {
    /// `TRUEPREDICATE`: true for every object.
    case truePredicate
    /// `FALSEPREDICATE`: false for every object.
    case falsePredicate
    /// A comparison of two expressions: `salary > 50000`, `ANY employees.name BEGINSWITH[c] "a"`.
    case comparison(Comparison)
    /// `NOT p`: true when `p` is false.
    case not(GraftPredicate)
    /// `p AND q AND …`: true when every subpredicate is; an empty list is true.
    case and([GraftPredicate])
    /// `p OR q OR …`: true when any subpredicate is; an empty list is false.
    case or([GraftPredicate])
}

extension GraftPredicate {
    /// A comparison predicate: `left operator[options] right`, with an optional `ANY`/`ALL`/`NONE`
    /// modifier that applies the comparison to each element of a collection on the left.
    ///
    /// For example, `ANY employees.name BEGINSWITH[c] "a"` is
    ///
    /// ```swift
    /// GraftPredicate.Comparison(.keyPath("employees.name"), .beginsWith, .constant("a"),
    ///                      modifier: .any, options: .caseInsensitive)
    /// ```
    public struct Comparison: Hashable, Sendable {
        /// `ANY`, `ALL`, `NONE`, or none.
        public var modifier: Modifier
        /// The left-hand expression.
        public var left: Expression
        /// The relation tested between the two sides.
        public var `operator`: Operator
        /// The right-hand expression.
        public var right: Expression
        /// The string options written after the operator: `[c]`, `[d]`, `[cd]`, `[n]`.
        public var options: ComparisonOptions

        public init(
            _ left: Expression, _ operator: Operator, _ right: Expression, modifier: Modifier = .direct,
            options: ComparisonOptions = []
        ) {
            self.modifier = modifier
            self.left = left
            self.operator = `operator`
            self.right = right
            self.options = options
        }
    }

    /// How a comparison treats a collection on its left.
    public enum Modifier: Hashable, Sendable {
        /// No modifier: the left side is compared as one value. A to-many key path there is an error,
        /// except with `CONTAINS`, `==` and `!=` (see ``GraftPredicate``'s evaluation rules).
        case direct
        /// `ANY` (or `SOME`): true when the comparison holds for at least one element.
        case any
        /// `ALL`: true when it holds for every element (and for no elements).
        case all
        /// `NONE`: true when it holds for no element.
        case none
    }

    /// The relation a comparison tests.
    public enum Operator: Hashable, Sendable, CaseIterable {
        /// `==` (also written `=`).
        case equalTo
        /// `!=` (also written `<>`).
        case notEqualTo
        /// `<`
        case lessThan
        /// `<=` (also written `=<`).
        case lessThanOrEqualTo
        /// `>`
        case greaterThan
        /// `>=` (also written `=>`).
        case greaterThanOrEqualTo
        /// `BEGINSWITH`: the left string starts with the right one.
        case beginsWith
        /// `ENDSWITH`: the left string ends with the right one.
        case endsWith
        /// `CONTAINS`: the left string contains the right one, or the left collection contains the
        /// right value.
        case contains
        /// `LIKE`: the left string matches the right pattern, where `?` is one character and `*` any
        /// number; a backslash makes the next character literal.
        case like
        /// `MATCHES`: the left string, all of it, matches the right ICU regular expression.
        case matches
        /// `IN`: the left value equals an element of the right collection, or the left string occurs in
        /// the right string.
        case `in`
        /// `BETWEEN`: the left value lies between the two values of the right aggregate, bounds
        /// included: `age BETWEEN {18, 65}`.
        case between

        /// The operator as the predicate format writes it: `==`, `BEGINSWITH`, …
        public var formatText: String {
            switch self {
            case .equalTo: return "=="
            case .notEqualTo: return "!="
            case .lessThan: return "<"
            case .lessThanOrEqualTo: return "<="
            case .greaterThan: return ">"
            case .greaterThanOrEqualTo: return ">="
            case .beginsWith: return "BEGINSWITH"
            case .endsWith: return "ENDSWITH"
            case .contains: return "CONTAINS"
            case .like: return "LIKE"
            case .matches: return "MATCHES"
            case .in: return "IN"
            case .between: return "BETWEEN"
            }
        }
    }

    /// One side of a comparison.
    public indirect enum Expression: Hashable, Sendable {
        /// A literal value: a number, string, boolean, or a `CAST` such as `CAST(600000000, "NSDate")`.
        case constant(Value)
        /// `nil` (also written `NULL`).
        case null
        /// An object passed as a `%@` argument or a variable's value; equal only to itself.
        case object(ObjectReference)
        /// `SELF`: the object the predicate is evaluated with.
        case evaluatedObject
        /// `$NAME`: a variable, given to ``GraftPredicate/substituting(_:)`` or at evaluation time.
        case variable(String)
        /// A key path read from the evaluated object: `department.name`, `employees.@count`.
        case keyPath(KeyValuePath)
        /// A key path read from the value of another expression: `$FETCH_SOURCE.hireDate`.
        case member(Expression, KeyValuePath)
        /// `{a, b, c}`: a collection of expressions, for `IN` and `BETWEEN`.
        case aggregate([Expression])
        /// `a + b`, `a - b`, `a * b`, `a / b`, `a ** b` on numbers.
        case arithmetic(ArithmeticOperator, Expression, Expression)
        /// One of the predicate format's built-in functions, by its selector name as written:
        /// `uppercase:(name)`, `count:(employees)`, `add:to:(salary, 100)`, `now()`. See
        /// ``PredicateFunction`` for the list and what each returns.
        case function(PredicateFunction, [Expression])
        /// `FUNCTION(receiver, "selector", arguments…)`: a method of the receiver's value. Graft has no
        /// Objective-C runtime, so the selectors are those ``PredicateFunction/method(_:receiver:arguments:)``
        /// documents: the built-in functions with the receiver as first argument, the string and number
        /// accessors (`uppercaseString`, `length`, `intValue`, …), and any key of an object
        /// (`FUNCTION(SELF, "name")` reads `name`).
        case method(Expression, String, [Expression])
        /// `SUBQUERY(collection, $x, predicate)`: the elements of the collection for which the predicate
        /// holds, each bound to `$x` while it is tested. `SELF` inside is still the evaluated object.
        case subquery(Expression, variable: String, predicate: GraftPredicate)
        /// `collection[index]`: `[FIRST]`, `[LAST]`, `[SIZE]` or `[n]` (counting from 0); a dictionary
        /// takes a key (`attributes["colour"]`).
        case index(Expression, IndexSelector)
        /// `CAST(expression, "type")` of a value only known at evaluation (`CAST(hireDate, "NSNumber")`);
        /// a `CAST` of a constant is folded into the constant when parsed.
        case cast(Expression, String)
        /// `TERNARY(predicate, a, b)`: `a` where the predicate holds, `b` otherwise.
        case ternary(GraftPredicate, Expression, Expression)
        /// `FETCH(request, context, countOnly)`: the objects (or, with `YES`, their count) a fetch request
        /// finds in a managed object context (Core Data's `NSFetchRequestExpression`), as a mapping
        /// model's source expression fetches the source objects:
        /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car", "TRUEPREDICATE"), $manager.sourceContext, NO)`.
        /// Graft parses and prints it; evaluating it is the migration engine's part.
        case fetch(Expression, context: Expression, countOnly: Bool)
    }

    /// What `collection[…]` selects.
    public indirect enum IndexSelector: Hashable, Sendable {
        /// `[FIRST]`: the first element (of a to-many, the first in the relationship's order).
        case first
        /// `[LAST]`: the last element.
        case last
        /// `[SIZE]`: the number of elements.
        case size
        /// `[n]` on an array (from 0), `["key"]` on a dictionary.
        case at(Expression)
    }

    /// The arithmetic an expression can do.
    ///
    /// Integers stay `Int64` under `+`, `-` and `*` unless the result overflows (then it is a
    /// `Decimal`); `/` and `**` give a `Double`. Any `Decimal` operand makes the result a `Decimal`, and
    /// otherwise any `Double` a `Double`. Arithmetic with `nil` gives `nil`.
    public enum ArithmeticOperator: String, Hashable, Sendable, CaseIterable {
        case add = "+"
        case subtract = "-"
        case multiply = "*"
        case divide = "/"
        /// `**`: the left number raised to the power of the right one, as a `Double`.
        case power = "**"
    }

    /// An object held by an expression. Two references are equal when they hold the same object.
    ///
    /// The reference is `Sendable` so that predicates are; the object itself is only read (with
    /// `value(forKey:)`) when the predicate is evaluated, so evaluate such a predicate where the object
    /// may be used (on its context's thread).
    public struct ObjectReference: Hashable, @unchecked Sendable, CustomStringConvertible {
        /// The object.
        public let object: any KeyValueCoding

        public init(_ object: any KeyValueCoding) {
            self.object = object
        }

        public static func == (lhs: ObjectReference, rhs: ObjectReference) -> Bool {
            lhs.object === rhs.object
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(ObjectIdentifier(object))
        }

        /// The object's own description if it has one, otherwise its type and identity.
        public var description: String {
            if let describable = object as? CustomStringConvertible { return describable.description }
            return "<\(type(of: object)) \(ObjectIdentifier(object))>"
        }
    }
}

extension GraftPredicate.Expression: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral
{
    /// A string literal is a constant string (not a key path; write `.keyPath("name")` for that).
    public init(stringLiteral value: String) { self = .constant(.string(value)) }
    public init(integerLiteral value: Int64) { self = .constant(.integer(value)) }
    public init(floatLiteral value: Double) { self = .constant(.double(value)) }
    public init(booleanLiteral value: Bool) { self = .constant(.bool(value)) }
}
