import Foundation
import GraftCore

/// Evaluating predicates on objects, with Core Data's semantics.
///
/// The rules:
/// - **Collections.** A key path through a to-many gives a collection. Without a modifier, comparing a
///   collection with `<`, `>`, `BEGINSWITH`, `LIKE`, `MATCHES`, `IN` or `BETWEEN` is an error (use
///   `ANY`, `ALL`, `NONE`, or a collection operator such as `@count`); `==` and `!=` between a
///   collection and a single value are an error too, while two collections are equal when they hold
///   the same elements in any order. `CONTAINS` with a collection on the left tests membership.
/// - **Modifiers.** `ANY` is true when the comparison holds for some element, `ALL` when it holds for
///   every element (true for none), `NONE` when it holds for no element. A `nil` on the left (a to-one
///   on the way was nil) counts as no elements; a single value counts as one element.
/// - **nil.** `nil == nil` is true and `nil == x` false; `<`, `<=`, `>`, `>=`, `BETWEEN` and the string
///   operators are false when either side is nil.
/// - **Types.** Values compare as ``ValueComparison`` says: numbers across types, a `Bool` as 1 or 0.
///   Values that cannot be compared (a string and a number) are unequal; ordering them (`name > 5`)
///   is an error naming both sides and their kinds, as is ordering two objects (Foundation raises an
///   exception for both). NaN is ordered against nothing: such comparisons are false.
/// - **Strings.** `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, `MATCHES` and `IN` on a string are
///   errors when a side is neither a string nor `nil` (with `nil` they are false). The empty string
///   begins, ends and is contained in every string. A `MATCHES` pattern ICU rejects is an error saying
///   what is wrong and where (``RegularExpressionProblem``).
/// - **Variables.** `$NAME` is looked up in `variables`; a missing variable is an error.
extension GraftPredicate {
    /// Whether `object` satisfies the predicate.
    ///
    /// For example:
    ///
    /// ```swift
    /// let recent = try GraftPredicate(format: "hireDate > $FETCH_SOURCE.hireDate")
    /// let matches = try recent.evaluate(with: employee, variables: ["FETCH_SOURCE": manager])
    /// ```
    ///
    /// - Parameters:
    ///   - object: the object `SELF` and key paths refer to: usually a `KeyValueCoding` object, but any
    ///     value works (`SELF BEGINSWITH "a"` tests strings).
    ///   - variables: values for `$NAME` variables, by name without the `$`.
    /// - Throws: `GraftError.evaluationFailed`, naming the key path or variable, for a collection
    ///   compared without a modifier, a missing variable, arithmetic on non-numbers, values of different
    ///   kinds ordered or matched as strings, an invalid regular expression, a function given the wrong
    ///   kind of argument, or a key read from something that has no keys.
    public func evaluate(with object: Any?, variables: [String: Any] = [:]) throws -> Bool {
        try evaluate(in: EvaluationContext(object: object, variables: variables))
    }

    /// Whether `object` satisfies the predicate: the same as `evaluate(with: Any?, variables:)`, without
    /// first finding out whether `object` is a `KeyValueCoding` object (the fast path for fetches).
    public func evaluate(with object: any KeyValueCoding, variables: [String: Any] = [:]) throws -> Bool {
        try evaluate(in: EvaluationContext(object: object, variables: variables))
    }

    func evaluate(in context: EvaluationContext) throws -> Bool {
        switch self {
        case .truePredicate: return true
        case .falsePredicate: return false
        case .comparison(let comparison): return try comparison.evaluate(in: context)
        case .not(let predicate): return try !predicate.evaluate(in: context)
        case .and(let predicates):
            for predicate in predicates where try !predicate.evaluate(in: context) { return false }
            return true
        case .or(let predicates):
            for predicate in predicates where try predicate.evaluate(in: context) { return true }
            return false
        }
    }
}

struct EvaluationContext {
    /// `SELF`.
    let object: Any?
    /// `SELF` when it is an object, found out once for all the key paths of a predicate.
    let keyValueObject: (any KeyValueCoding)?
    let variables: [String: Any]

    init(object: Any?, variables: [String: Any]) {
        self.object = object
        self.keyValueObject = object as? any KeyValueCoding
        self.variables = variables
    }

    init(object: any KeyValueCoding, variables: [String: Any]) {
        self.object = object
        self.keyValueObject = object
        self.variables = variables
    }

    /// The same `SELF` with other variables (a `SUBQUERY`'s).
    init(outer: EvaluationContext, variables: [String: Any]) {
        self.object = outer.object
        self.keyValueObject = outer.keyValueObject
        self.variables = variables
    }

    func variable(_ name: String) throws -> Any? {
        guard let value = variables[name] else {
            throw GraftError(
                .evaluationFailed, "no value was given for the variable $\(name)", context: [.key("$" + name)])
        }
        return unwrapped(value)
    }
}

extension GraftPredicate.Expression {
    /// The expression's value for `object`: what a comparison compares.
    ///
    /// For example:
    ///
    /// ```swift
    /// let total = try GraftPredicate.Expression.parse("employees.@sum.salary").evaluate(with: department)
    /// ```
    ///
    /// - Throws: `GraftError.evaluationFailed` as ``GraftPredicate/evaluate(with:variables:)-(Any?,_)`` does.
    public func evaluate(with object: Any?, variables: [String: Any] = [:]) throws -> Any? {
        unwrapped(try value(in: EvaluationContext(object: object, variables: variables)))
    }

    /// The value as Swift sees it (objects, key path results) without classifying it.
    func value(in context: EvaluationContext) throws -> Any? {
        switch self {
        case .evaluatedObject: return context.object
        case .variable(let name): return try context.variable(name)
        case .object(let reference): return reference.object
        case .keyPath(let path):
            if let object = context.keyValueObject { return try path.resolve(on: object) }
            return try path.resolve(on: context.object)
        case .member(let base, let path): return try path.resolve(on: base.value(in: context))
        default: return try operand(in: context).anyValue
        }
    }

    func operand(in context: EvaluationContext) throws -> Operand {
        switch self {
        case .constant(let value): return Operand(value)
        case .null: return .null
        case .object(let reference): return .object(reference.object)
        case .aggregate(let elements): return .collection(try elements.map { try $0.operand(in: context) })
        case .arithmetic(let op, let left, let right):
            let (a, b) = (try left.operand(in: context), try right.operand(in: context))
            if a.isNull || b.isNull { return .null }
            guard let x = a.number, let y = b.number else {
                let culprit = a.number == nil ? (left, a) : (right, b)
                throw GraftError(
                    .evaluationFailed, "\(op.rawValue) needs numbers, but \(culprit.0) is \(culprit.1.kindDescription)",
                    context: [.key(culprit.0.description)])
            }
            return try op.apply(x, y).operand
        case .evaluatedObject, .variable, .keyPath, .member:
            return Operand(try value(in: context))
        case .function(let function, let arguments):
            return try function.apply(try arguments.map { try $0.operand(in: context) }, written: arguments)
        case .method(let receiver, let selector, let arguments):
            return try PredicateFunction.method(
                selector, receiver: try receiver.operand(in: context),
                arguments: try arguments.map { try $0.operand(in: context) }, written: description)
        case .subquery(let collection, let variable, let predicate):
            let elements: [Operand]
            switch try collection.operand(in: context) {
            case .null: elements = []
            case .collection(let values): elements = values
            case let other:
                throw GraftError(
                    .evaluationFailed, "SUBQUERY needs a collection, but \(collection) is \(other.kindDescription)",
                    context: [.key(collection.description)])
            }
            var variables = context.variables
            var kept: [Operand] = []
            for element in elements {
                variables[variable] = element.anyValue as Any
                let inner = EvaluationContext(outer: context, variables: variables)
                if try predicate.evaluate(in: inner) { kept.append(element) }
            }
            return .collection(kept)
        case .index(let base, let selector):
            return try Self.select(selector, from: base, in: context)
        case .cast(let inner, let typeName):
            do {
                return try PredicateCast.cast(try inner.operand(in: context), to: typeName)
            } catch let failure as PredicateCast.Failure {
                throw GraftError(.evaluationFailed, failure.text, context: [.key(inner.description)])
            }
        case .ternary(let condition, let whenTrue, let whenFalse):
            return try (condition.evaluate(in: context) ? whenTrue : whenFalse).operand(in: context)
        case .fetch:
            throw GraftError(
                .evaluationFailed,
                "FETCH runs a fetch request in a managed object context, which only a migration does; "
                    + "a predicate cannot evaluate it", context: [.key(description)])
        }
    }

    private static func select(
        _ selector: GraftPredicate.IndexSelector, from base: GraftPredicate.Expression, in context: EvaluationContext
    ) throws -> Operand {
        let container = try base.operand(in: context)
        func fail(_ message: String) -> GraftError {
            GraftError(.evaluationFailed, message, context: [.key(base.description)])
        }
        switch container {
        case .null:
            return selector == .size ? .integer(0) : .null
        case .collection(let elements):
            switch selector {
            case .first: return elements.first ?? .null
            case .last: return elements.last ?? .null
            case .size: return .integer(Int64(elements.count))
            case .at(let index):
                let position = try index.operand(in: context)
                guard case .integer(let offset) = position else {
                    throw fail("an index into \(base) must be an integer, but \(index) is \(position.kindDescription)")
                }
                guard offset >= 0, offset < elements.count else {
                    throw fail(
                        "the index \(offset) is outside \(base), which has \(Wording.counted(elements.count, "element"))"
                    )
                }
                return elements[Int(offset)]
            }
        case .other(let box):
            guard let dictionary = box.value as? [String: Any] else { break }
            switch selector {
            case .size: return .integer(Int64(dictionary.count))
            case .at(let key):
                guard case .string(let name) = try key.operand(in: context) else {
                    throw fail("a key into the dictionary \(base) must be a string")
                }
                return Operand(dictionary[name])
            default:
                let keys = dictionary.keys.sorted()
                guard let key = selector == .first ? keys.first : keys.last else { return .null }
                return Operand(dictionary[key])
            }
        default:
            break
        }
        throw fail("\(base) is \(container.kindDescription), which has no elements to select from")
    }
}

extension GraftPredicate.ArithmeticOperator {
    func apply(_ x: Number, _ y: Number) throws -> Number {
        switch (x, y) {
        case (.decimal, _), (_, .decimal):
            let (a, b) = (x.decimalValue, y.decimalValue)
            switch self {
            case .add: return .decimal(a + b)
            case .subtract: return .decimal(a - b)
            case .multiply: return .decimal(a * b)
            case .divide:
                if b.isZero { throw GraftError(.evaluationFailed, "division by zero") }
                return .decimal(a / b)
            case .power: return .double(Foundation.pow(x.doubleValue, y.doubleValue))
            }
        case (.integer(let a), .integer(let b)) where self != .divide && self != .power:
            let (result, overflow): (Int64, Bool)
            switch self {
            case .add: (result, overflow) = a.addingReportingOverflow(b)
            case .subtract: (result, overflow) = a.subtractingReportingOverflow(b)
            default: (result, overflow) = a.multipliedReportingOverflow(by: b)
            }
            return overflow ? try apply(.decimal(Decimal(a)), .decimal(Decimal(b))) : .integer(result)
        default:
            let (a, b) = (x.doubleValue, y.doubleValue)
            switch self {
            case .add: return .double(a + b)
            case .subtract: return .double(a - b)
            case .multiply: return .double(a * b)
            case .divide: return .double(a / b)
            case .power: return .double(Foundation.pow(a, b))
            }
        }
    }
}

extension GraftPredicate.Comparison {
    func evaluate(in context: EvaluationContext) throws -> Bool {
        let left = try self.left.operand(in: context)
        let right = try self.right.operand(in: context)
        let elements: [Operand]
        switch (modifier, left) {
        case (.direct, _): return try test(left, right)
        case (_, .collection(let values)): elements = values
        case (_, .null): elements = []
        default: elements = [left]
        }
        switch modifier {
        case .any, .direct:
            for element in elements where try test(element, right) { return true }
            return false
        case .all:
            for element in elements where try !test(element, right) { return false }
            return true
        case .none:
            for element in elements where try test(element, right) { return false }
            return true
        }
    }

    /// The comparison of two single values (or, for `CONTAINS`, `IN`, `==`, `BETWEEN`, collections).
    private func test(_ lhs: Operand, _ rhs: Operand) throws -> Bool {
        switch self.operator {
        case .equalTo, .notEqualTo:
            if lhs.isCollection != rhs.isCollection {
                try requireSingle(lhs, left)
                try requireSingle(rhs, right)
            }
            return operandsEqual(lhs, rhs, options: options) == (self.operator == .equalTo)
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            try requireSingle(lhs, left)
            try requireSingle(rhs, right)
            if lhs.isNull || rhs.isNull { return false }
            guard let order = compareOperands(lhs, rhs, options: options) else {
                try requireComparable(lhs, rhs)
                return false
            }
            switch self.operator {
            case .lessThan: return order == .orderedAscending
            case .lessThanOrEqualTo: return order != .orderedDescending
            case .greaterThan: return order == .orderedDescending
            default: return order != .orderedAscending
            }
        case .beginsWith, .endsWith, .like, .matches:
            try requireSingle(lhs, left)
            try requireSingle(rhs, right)
            if lhs.isNull || rhs.isNull { return false }
            guard case .string(let text) = lhs, case .string(let pattern) = rhs else {
                throw mismatch(lhs, rhs, needs: "strings")
            }
            if self.operator == .matches { return try matchesRegularExpression(text, pattern) }
            return self.operator.matchesStrings(text, pattern, options: options)
        case .contains:
            try requireSingle(rhs, right)
            if case .collection(let elements) = lhs {
                return elements.contains { operandsEqual($0, rhs, options: options) }
            }
            if lhs.isNull || rhs.isNull { return false }
            guard case .string(let text) = lhs, case .string(let part) = rhs else {
                throw mismatch(lhs, rhs, needs: "strings (or a collection on its left)")
            }
            return contains(options.fold(text), options.fold(part))
        case .in:
            try requireSingle(lhs, left)
            switch rhs {
            case .collection(let elements):
                return elements.contains { operandsEqual(lhs, $0, options: options) }
            case .string(let text):
                if lhs.isNull { return false }
                guard case .string(let part) = lhs else {
                    throw mismatch(lhs, rhs, needs: "a string on its left when its right is a string")
                }
                return contains(options.fold(text), options.fold(part))
            case .null:
                return false
            default:
                throw failure(
                    "IN needs a collection or a string on its right, but \(right) is \(rhs.kindDescription)", right)
            }
        case .between:
            try requireSingle(lhs, left)
            guard case .collection(let bounds) = rhs, bounds.count == 2 else {
                throw failure(
                    "BETWEEN needs two bounds, as in {low, high}, but \(right) is \(rhs.kindDescription)", right)
            }
            if lhs.isNull || bounds[0].isNull || bounds[1].isNull { return false }
            guard let low = compareOperands(lhs, bounds[0], options: options),
                let high = compareOperands(lhs, bounds[1], options: options)
            else {
                try requireComparable(lhs, bounds[0])
                try requireComparable(lhs, bounds[1])
                return false
            }
            return low != .orderedAscending && high != .orderedDescending
        }
    }

    private func requireSingle(_ value: Operand, _ side: GraftPredicate.Expression) throws {
        guard value.isCollection else { return }
        throw failure(
            "\(side) gives \(value.kindDescription), which cannot be compared with \(self.operator.formatText) as one "
                + "value: use ANY, ALL or NONE, or a collection operator such as @count", side)
    }

    /// Throws when two values that could not be ordered are of different kinds (a string and a
    /// number) or are objects: Foundation raises an exception there rather than answer.
    private func requireComparable(_ lhs: Operand, _ rhs: Operand) throws {
        switch (lhs, rhs) {
        case (.object, .object):
            throw mismatch(lhs, rhs, needs: "values that have an order (objects have none)")
        default:
            if lhs.number != nil && rhs.number != nil { return }  // NaN: unordered, not an error
            if sortRank(lhs) == sortRank(rhs), case .collection = lhs { return }
            if sortRank(lhs) != sortRank(rhs) || !lhs.isOrderable {
                throw mismatch(lhs, rhs, needs: "two values of one kind (numbers, strings, dates, …)")
            }
        }
    }

    /// `name > 5`: the comparison, both sides and their kinds.
    private func mismatch(_ lhs: Operand, _ rhs: Operand, needs: String) -> GraftError {
        GraftError(
            .evaluationFailed,
            "\(self.operator.formatText)\(options.formatSuffix) needs \(needs), but \(left) is \(lhs.kindDescription)"
                + " and \(right) is \(rhs.kindDescription), in \(description)",
            context: [.key(left.description)])
    }

    private func failure(_ message: String, _ side: GraftPredicate.Expression) -> GraftError {
        GraftError(.evaluationFailed, message, context: [.key(side.description)])
    }

    private func matchesRegularExpression(_ text: String, _ pattern: String) throws -> Bool {
        do {
            return try GraftPredicate.Operator.matchesRegularExpression(text, pattern, options: options)
        } catch let problem as RegularExpressionProblem {
            throw failure(problem.description, right)
        }
    }
}

extension GraftPredicate.Operator {
    /// `text BEGINSWITH/ENDSWITH/CONTAINS/LIKE/== pattern` with the options, exactly as evaluation in
    /// memory decides it: for stores that run these comparisons in their own engine (SQLite calls it
    /// as a registered function), so that both give the same answer.
    package func matchesStrings(_ text: String, _ pattern: String, options: ComparisonOptions) -> Bool {
        switch self {
        case .beginsWith: return options.fold(text).hasPrefix(options.fold(pattern))
        case .endsWith: return options.fold(text).hasSuffix(options.fold(pattern))
        case .like: return LikePattern(options.fold(pattern)).matches(options.fold(text))
        case .contains, .in: return stringContains(options.fold(text), options.fold(pattern))
        case .equalTo: return compareStrings(text, pattern, options: options) == .orderedSame
        case .notEqualTo: return compareStrings(text, pattern, options: options) != .orderedSame
        default: return false
        }
    }

    /// `text MATCHES pattern` with the options, as evaluation in memory decides it.
    ///
    /// - Throws: ``RegularExpressionProblem`` (whose description says what is wrong) for a pattern ICU
    ///   does not accept.
    package static func matchesRegularExpression(
        _ text: String, _ pattern: String, options: ComparisonOptions
    ) throws -> Bool {
        let diacritics: ComparisonOptions = options.intersection(.diacriticInsensitive)
        let regex = try RegularExpressionCache.shared.expression(diacritics.fold(pattern), options: options)
        let subject = diacritics.fold(text)
        let range = NSRange(subject.startIndex..<subject.endIndex, in: subject)
        return regex.firstMatch(in: subject, options: [], range: range) != nil
    }
}

extension ValueComparison {
    /// How two strings order with the options, as sorts and comparisons in memory order them: for
    /// stores that sort in their own engine (SQLite calls it as a registered collation).
    package static func compareText(_ a: String, _ b: String, options: ComparisonOptions) -> ComparisonResult {
        compareStrings(a, b, options: options)
    }
}

/// Whether `part` occurs in `text` (the empty string occurs in every string).
private func contains(_ text: String, _ part: String) -> Bool {
    stringContains(text, part)
}

private func stringContains(_ text: String, _ part: String) -> Bool {
    part.isEmpty || text.firstRange(of: part) != nil
}

/// A `LIKE` pattern: `?` matches one character, `*` any run of characters, `\` makes the next one literal.
struct LikePattern {
    private enum Element: Equatable {
        case character(Character)
        case one
        case any
    }

    private var elements: [Element] = []

    init(_ pattern: String) {
        var escaped = false
        for character in pattern {
            if escaped {
                elements.append(.character(character))
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "?" {
                elements.append(.one)
            } else if character == "*" {
                if elements.last != .any { elements.append(.any) }
            } else {
                elements.append(.character(character))
            }
        }
        if escaped { elements.append(.character("\\")) }
    }

    /// Greedy matching that backtracks to the last `*`: linear in most cases, never exponential.
    func matches(_ text: String) -> Bool {
        let characters = Array(text)
        var (t, p) = (0, 0)
        var star: (pattern: Int, text: Int)?
        while t < characters.count {
            if p < elements.count {
                switch elements[p] {
                case .any:
                    star = (p, t)
                    p += 1
                    continue
                case .one:
                    t += 1
                    p += 1
                    continue
                case .character(let expected) where expected == characters[t]:
                    t += 1
                    p += 1
                    continue
                default: break
                }
            }
            guard let last = star else { return false }
            star = (last.pattern, last.text + 1)
            (p, t) = (last.pattern + 1, last.text + 1)
        }
        while p < elements.count, elements[p] == .any { p += 1 }
        return p == elements.count
    }
}

/// Compiled `MATCHES` patterns, kept so that evaluating a predicate on many objects compiles each
/// pattern once. Patterns are wrapped as `\A(?:pattern)\z` so that the whole string must match.
final class RegularExpressionCache: @unchecked Sendable {
    static let shared = RegularExpressionCache()

    private struct Key: Hashable {
        var pattern: String
        var caseInsensitive: Bool
    }

    private let lock = NSLock()
    private var expressions: [Key: NSRegularExpression] = [:]
    private static let capacity = 256

    func expression(_ pattern: String, options: ComparisonOptions) throws -> NSRegularExpression {
        let caseInsensitive = options.contains(.caseInsensitive)
        let key = Key(pattern: pattern, caseInsensitive: caseInsensitive)
        lock.lock()
        defer { lock.unlock() }
        if let cached = expressions[key] { return cached }
        let expression: NSRegularExpression
        do {
            expression = try NSRegularExpression(
                pattern: "\\A(?:" + pattern + ")\\z", options: caseInsensitive ? [.caseInsensitive] : [])
        } catch {
            throw RegularExpressionProblem(pattern: pattern)
        }
        if expressions.count >= Self.capacity { expressions.removeAll() }
        expressions[key] = expression
        return expression
    }
}

/// An ICU regular expression that does not compile, with what is wrong with it and where: Foundation
/// only says "NSCocoaErrorDomain Code=2048", so the common mistakes are found here.
package struct RegularExpressionProblem: Error, CustomStringConvertible {
    package var pattern: String

    package var description: String {
        "MATCHES needs an ICU regular expression, but \(GraftPredicate.Expression.quote(pattern)) is not one: "
            + (diagnosis ?? "ICU rejects it")
    }

    /// The first mistake found, with its offset in characters.
    var diagnosis: String? {
        let characters = Array(pattern)
        var groups: [Int] = []
        var index = 0
        var canRepeat = false
        while index < characters.count {
            let character = characters[index]
            switch character {
            case "\\":
                guard index + 1 < characters.count else { return "it ends with a lone backslash (offset \(index))" }
                if characters[index + 1] == "Q" {
                    // \Q…\E quotes everything up to \E.
                    var end = index + 2
                    while end + 1 < characters.count, !(characters[end] == "\\" && characters[end + 1] == "E") {
                        end += 1
                    }
                    index = end + 2
                } else {
                    index += 2
                }
                canRepeat = true
                continue
            case "[":
                guard let end = Self.classEnd(characters, from: index) else {
                    return "the '[' at offset \(index) opens a character class that is never closed with ']'"
                }
                index = end + 1
                canRepeat = true
                continue
            case "(":
                groups.append(index)
                canRepeat = false
                if index + 1 < characters.count, characters[index + 1] == "?" { index += 1 }
            case ")":
                guard groups.popLast() != nil else { return "the ')' at offset \(index) closes no group" }
                canRepeat = true
            case "|":
                canRepeat = false
            case "*", "+", "?":
                guard canRepeat else { return "the '\(character)' at offset \(index) has nothing before it to repeat" }
                // A possessive or lazy suffix may follow once.
                if index + 1 < characters.count, characters[index + 1] == "?" || characters[index + 1] == "+" {
                    index += 1
                }
                canRepeat = false
            case "{":
                var end = index + 1
                while end < characters.count, characters[end].isNumber || characters[end] == "," { end += 1 }
                if end < characters.count, characters[end] == "}", end > index + 1 {
                    guard canRepeat else { return "the '{' at offset \(index) has nothing before it to repeat" }
                    index = end + 1
                    canRepeat = false
                    continue
                }
                return "the '{' at offset \(index) starts no repeat count such as {2} or {1,3} (write \\{ for a brace)"
            default:
                canRepeat = true
            }
            index += 1
        }
        if let open = groups.last { return "the '(' at offset \(open) opens a group that is never closed with ')'" }
        return nil
    }

    /// The offset of the `]` that closes the class opened at `start`, or nil.
    private static func classEnd(_ characters: [Character], from start: Int) -> Int? {
        var index = start + 1
        if index < characters.count, characters[index] == "^" { index += 1 }
        if index < characters.count, characters[index] == "]" { index += 1 }  // a literal ']' first
        while index < characters.count {
            switch characters[index] {
            case "\\": index += 2
            case "[":
                guard let end = classEnd(characters, from: index) else { return nil }
                index = end + 1
            case "]": return index
            default: index += 1
            }
        }
        return nil
    }
}
