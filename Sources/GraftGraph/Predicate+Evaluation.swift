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
///   Values that cannot be compared (a string and a number) are unequal, and ordering comparisons of
///   them are false — not errors.
/// - **Strings.** `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, `MATCHES` and `IN` on a string are false
///   when either side is not a string. The empty string begins, ends and is contained in every string.
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
    ///   compared without a modifier, a missing variable, arithmetic on non-numbers, or a key read from
    ///   something that has no keys.
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
        }
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
            }
        case (.integer(let a), .integer(let b)) where self != .divide:
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
            guard let order = compareOperands(lhs, rhs, options: options), !(lhs.isNull || rhs.isNull) else {
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
            guard case .string(let text) = lhs, case .string(let pattern) = rhs else { return false }
            switch self.operator {
            case .beginsWith: return options.fold(text).hasPrefix(options.fold(pattern))
            case .endsWith: return options.fold(text).hasSuffix(options.fold(pattern))
            case .like: return LikePattern(options.fold(pattern)).matches(options.fold(text))
            default: return try matchesRegularExpression(text, pattern)
            }
        case .contains:
            try requireSingle(rhs, right)
            if case .collection(let elements) = lhs {
                return elements.contains { operandsEqual($0, rhs, options: options) }
            }
            guard case .string(let text) = lhs, case .string(let part) = rhs else { return false }
            return contains(options.fold(text), options.fold(part))
        case .in:
            try requireSingle(lhs, left)
            switch rhs {
            case .collection(let elements):
                return elements.contains { operandsEqual(lhs, $0, options: options) }
            case .string(let text):
                guard case .string(let part) = lhs else { return false }
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
            guard !lhs.isNull, let low = compareOperands(lhs, bounds[0], options: options),
                let high = compareOperands(lhs, bounds[1], options: options)
            else { return false }
            return low != .orderedAscending && high != .orderedDescending
        }
    }

    private func requireSingle(_ value: Operand, _ side: GraftPredicate.Expression) throws {
        guard value.isCollection else { return }
        throw failure(
            "\(side) gives \(value.kindDescription), which cannot be compared with \(self.operator.formatText) as one "
                + "value: use ANY, ALL or NONE, or a collection operator such as @count", side)
    }

    private func failure(_ message: String, _ side: GraftPredicate.Expression) -> GraftError {
        GraftError(.evaluationFailed, message, context: [.key(side.description)])
    }

    private func matchesRegularExpression(_ text: String, _ pattern: String) throws -> Bool {
        let diacritics: ComparisonOptions = options.intersection(.diacriticInsensitive)
        let regex: NSRegularExpression
        do {
            regex = try RegularExpressionCache.shared.expression(diacritics.fold(pattern), options: options)
        } catch {
            throw failure("invalid regular expression for MATCHES: \(error)", right)
        }
        let subject = diacritics.fold(text)
        let range = NSRange(subject.startIndex..<subject.endIndex, in: subject)
        return regex.firstMatch(in: subject, options: [], range: range) != nil
    }
}

/// Whether `part` occurs in `text` (the empty string occurs in every string).
private func contains(_ text: String, _ part: String) -> Bool {
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
        let expression = try NSRegularExpression(
            pattern: "\\A(?:" + pattern + ")\\z", options: caseInsensitive ? [.caseInsensitive] : [])
        if expressions.count >= Self.capacity { expressions.removeAll() }
        expressions[key] = expression
        return expression
    }
}
