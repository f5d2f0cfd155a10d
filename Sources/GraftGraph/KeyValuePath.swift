import Foundation
import GraftCore

/// A key path such as `department.name` or `employees.@avg.salary`, parsed once and evaluated on
/// many objects.
///
/// Evaluation follows Foundation's key-value coding, with to-manys flattened:
/// - a key reads a property of a `KeyValueCoding` object (or an entry of a `[String: Any]` dictionary);
/// - `nil` anywhere along the path makes the whole result `nil`;
/// - a key applied to a collection (a to-many, or an array from an earlier to-many) reads that key of
///   every element and gives an array `[Any?]`, in element order; where the key gives a to-many again,
///   its elements are spliced in, so `departments.employees.name` is one flat array of names;
///   an element whose value is `nil` gives a `nil` element;
/// - `SELF` is the value itself;
/// - a collection operator (`@count`, `@sum`, `@avg`, `@min`, `@max`) applies to the collection on its
///   left; the keys on its right are read from every element first (`employees.@sum.salary`), and where
///   nothing follows, the elements themselves are used (`tags.@count`, `salaries.@max`). See
///   ``CollectionOperator`` for the result types.
///
/// For example:
///
/// ```swift
/// let path = try KeyValuePath(parsing: "employees.@avg.salary")
/// for department in departments {
///     print(try path.evaluate(on: department) ?? "no employees")
/// }
/// ```
public struct KeyValuePath: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// One step of a key path.
    public enum Component: Hashable, Sendable {
        /// A property name.
        case key(String)
        /// `SELF`: the value itself.
        case identity
        /// `@count`, `@sum`, `@avg`, `@min`, `@max` or a union operator, applied to the collection on its left.
        case collectionOperator(CollectionOperator)
    }

    /// The aggregate functions a key path can apply to a collection.
    ///
    /// Elements that are `nil` are skipped by all but `@count`, which counts every element.
    /// - `@count`: the number of elements, as `Int64`.
    /// - `@sum`: `Int64` when every element is an integer (or a `Bool`), unless the sum overflows, which
    ///   gives a `Decimal`; `Decimal` when any element is a `Decimal` (doubles are taken at their
    ///   shortest decimal text, so 0.1 counts as exactly 0.1); otherwise `Double` when any element is a
    ///   `Double`. An empty sum is `Int64(0)`.
    /// - `@avg`: `Decimal` when any element is a `Decimal`, otherwise `Double` (the average of integers
    ///   is a `Double`, as SQL's AVG is). The average of nothing is `nil`, as in SQL.
    /// - `@min`, `@max`: the smallest or largest element by ``ValueComparison`` (numbers, strings,
    ///   dates, …), as the element's own value; `nil` for no elements. Elements that cannot be ordered
    ///   against each other (a string and a number) are an error.
    /// - `@unionOfObjects`: the values (the key path on the operator's right read from every element),
    ///   as an array, `nil`s left out; `@distinctUnionOfObjects` keeps the first of equal values.
    /// - `@unionOfArrays`, `@unionOfSets`: every element must itself be a collection; the key path on
    ///   the right is read from the elements of each, and the values joined into one array, `nil`s
    ///   left out; the `distinct` forms keep the first of equal values.
    public enum CollectionOperator: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
        case count
        case sum
        case avg
        case min
        case max
        /// The values, duplicates removed (first seen first).
        case distinctUnionOfObjects
        /// The values, in element order, duplicates kept.
        case unionOfObjects
        /// The elements of every collection in the collection, duplicates removed.
        case distinctUnionOfArrays
        /// The elements of every collection in the collection.
        case unionOfArrays
        /// As `@distinctUnionOfArrays`, for a collection of sets.
        case distinctUnionOfSets
        /// As `@unionOfArrays`, for a collection of sets.
        case unionOfSets

        /// `@count`, `@sum`, …
        public var description: String { "@" + rawValue }
    }

    /// The steps, first to last.
    public var components: [Component]

    /// A key path of the given components.
    public init(components: [Component]) {
        self.components = components
    }

    /// A key path of one key, taken as it is (no dots are interpreted).
    public init(key: String) {
        self.components = [.key(key)]
    }

    /// Parses key-value coding text: keys separated by dots, `@count`-style operators, and `SELF`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let path = try KeyValuePath(parsing: "manager.department.employees.@count")
    /// ```
    ///
    /// Keys are taken as written (no quoting or `#` escapes, which belong to the predicate format).
    ///
    /// - Throws: `GraftError.syntaxError` with the offset of an empty key or an unknown operator.
    public init(parsing text: String) throws {
        var components: [Component] = []
        var offset = 0
        for part in text.split(separator: ".", omittingEmptySubsequences: false) {
            if part.isEmpty {
                throw SyntaxErrorFactory(text: text, subject: "key path")
                    .error("a key path has an empty key", at: offset)
            }
            if part.first == "@" {
                guard let op = CollectionOperator(name: part.dropFirst()) else {
                    throw SyntaxErrorFactory(text: text, subject: "key path")
                        .error(CollectionOperator.unknownMessage(String(part)), at: offset)
                }
                components.append(.collectionOperator(op))
            } else if part == "SELF" || part == "self" {
                components.append(.identity)
            } else {
                components.append(.key(String(part)))
            }
            offset += part.count + 1
        }
        self.components = components
    }

    /// A key path from a literal, such as `.keyPath("department.name")` when building a predicate.
    ///
    /// An invalid literal stops the program; parse text that is not fixed in the source with
    /// ``init(parsing:)``. (Because of this conformance, `KeyValuePath("a.b")` with a literal argument
    /// is a literal too, which is why the throwing initializer has a label.)
    public init(stringLiteral text: String) {
        do {
            try self.init(parsing: text)
        } catch {
            preconditionFailure("invalid key path literal: \(error)")
        }
    }

    /// The key-value coding text: `department.name`, `employees.@sum.salary`, `SELF`.
    public var description: String {
        components.map { component in
            switch component {
            case .key(let key): return key
            case .identity: return "SELF"
            case .collectionOperator(let op): return op.description
            }
        }.joined(separator: ".")
    }

    /// The value at the end of the path, starting at `root` (an object, a collection, a dictionary).
    ///
    /// - Throws: `GraftError.evaluationFailed`, naming the key path, when a key is applied to something
    ///   that has no keys (a string, a number) or a collection operator to something that is not a
    ///   collection or to elements it cannot add or order.
    public func evaluate(on root: Any?) throws -> Any? {
        unwrapped(try resolve(components[...], on: root))
    }

    /// The value at the end of the path, starting at an object: the same as `evaluate(on: Any?)`,
    /// without first finding out whether the root is an object.
    public func evaluate(on object: any KeyValueCoding) throws -> Any? {
        unwrapped(try resolve(on: object))
    }

    /// The value, possibly a nil optional boxed in `Any` (which `Operand` sees through).
    func resolve(on object: any KeyValueCoding) throws -> Any? {
        guard case .key(let key)? = components.first else { return try resolve(components[...], on: object) }
        let value = object.value(forKey: key)
        return components.count == 1 ? value : try resolve(components.dropFirst(), on: value)
    }

    func resolve(on root: Any?) throws -> Any? {
        try resolve(components[...], on: root)
    }

    private func resolve(_ steps: ArraySlice<Component>, on root: Any?) throws -> Any? {
        var current = root
        for index in steps.indices {
            switch steps[index] {
            case .identity:
                continue
            case .key(let key):
                guard let value = current else { return nil }
                current = try self.value(forKey: key, of: value)
            case .collectionOperator(let op):
                guard let value = current else { return nil }
                let operand = Operand(value)
                if case .null = operand { return nil }
                guard case .collection(let elements) = operand else {
                    throw evaluationError("\(op) needs a collection, but found \(operand.kindDescription)")
                }
                let rest = steps[(index + 1)...]
                var values: [Operand] = []
                values.reserveCapacity(elements.count)
                if op.unitesCollections {
                    for element in elements {
                        let joined = rest.isEmpty ? element : Operand(try resolve(rest, on: element.anyValue))
                        switch joined {
                        case .collection(let inner): values.append(contentsOf: inner)
                        case .null: continue
                        default:
                            throw evaluationError(
                                "\(op) needs collections to join, but one element gives \(joined.kindDescription)")
                        }
                    }
                    return op.union(values)
                }
                for element in elements {
                    if rest.isEmpty {
                        values.append(element)
                        continue
                    }
                    switch Operand(try resolve(rest, on: element.anyValue)) {
                    case .collection(let nested): values.append(contentsOf: nested)
                    case let single: values.append(single)
                    }
                }
                do {
                    return try op.apply(to: values)
                } catch let message as AggregateFailure {
                    throw evaluationError(message.text)
                }
            }
        }
        return current
    }

    private func value(forKey key: String, of value: Any) throws -> Any? {
        if let object = value as? any KeyValueCoding {
            return object.value(forKey: key)
        }
        switch Operand(value) {
        case .null:
            return nil
        case .collection(let elements):
            var result: [Any?] = []
            result.reserveCapacity(elements.count)
            for element in elements {
                let elementValue: Any?
                switch element {
                case .null: elementValue = nil
                case .object(let object): elementValue = object.value(forKey: key)
                default: elementValue = try self.value(forKey: key, of: element.anyValue as Any)
                }
                switch Operand(elementValue) {
                case .collection(let nested): result.append(contentsOf: nested.map(\.anyValue))
                case .null: result.append(nil)
                default: result.append(elementValue)
                }
            }
            return result
        case .other(let box) where box.value is [String: Any]:
            return (box.value as? [String: Any])?[key] ?? nil
        case let operand:
            throw evaluationError("cannot read the key '\(key)' of \(operand.kindDescription)")
        }
    }

    private func evaluationError(_ message: String) -> GraftError {
        GraftError(.evaluationFailed, message, context: [.key(description)])
    }
}

/// Reads a key path of an object: `value(forKeyPath: "department.name", of: employee)`.
///
/// The path is parsed on every call; to read the same path of many objects, parse it once with
/// ``KeyValuePath/init(parsing:)`` and call ``KeyValuePath/evaluate(on:)-(KeyValueCoding)``.
///
/// - Throws: `GraftError.syntaxError` for a malformed path; `GraftError.evaluationFailed` as
///   ``KeyValuePath/evaluate(on:)-(KeyValueCoding)`` does.
public func value(forKeyPath keyPath: String, of object: any KeyValueCoding) throws -> Any? {
    try KeyValuePath(parsing: keyPath).evaluate(on: object)
}

/// nil for nil and for a nil optional boxed in `Any`.
func unwrapped(_ value: Any?) -> Any? {
    guard let value else { return nil }
    if let box = value as? any OptionalBox { return unwrapped(box.unboxed) }
    return value
}

// MARK: - Collection operators

struct AggregateFailure: Error {
    var text: String
}

extension KeyValuePath.CollectionOperator {
    /// The operator named `name` (without the `@`), case-insensitively.
    init?<S: StringProtocol>(name: S) {
        guard let op = Self.allCases.first(where: { $0.rawValue.caseInsensitiveCompare(String(name)) == .orderedSame })
        else { return nil }
        self = op
    }

    static func unknownMessage(_ written: String) -> String {
        "unknown collection operator '\(written)' (expected "
            + allCases.map(\.description).joined(separator: ", ") + ")"
    }

    /// Whether the operator joins the collections a collection holds (`@unionOfArrays`, `@unionOfSets`).
    var unitesCollections: Bool {
        switch self {
        case .distinctUnionOfArrays, .unionOfArrays, .distinctUnionOfSets, .unionOfSets: return true
        default: return false
        }
    }

    /// The union operators' result: the values without `nil`s, without repeats for the distinct forms.
    func union(_ values: [Operand]) -> Any? {
        let present = values.filter { !$0.isNull }
        switch self {
        case .distinctUnionOfObjects, .distinctUnionOfArrays, .distinctUnionOfSets:
            var kept: [Operand] = []
            for value in present where !kept.contains(where: { operandsEqual($0, value, options: []) }) {
                kept.append(value)
            }
            return kept.map(\.anyValue)
        default:
            return present.map(\.anyValue)
        }
    }

    func apply(to values: [Operand]) throws -> Any? {
        switch self {
        case .distinctUnionOfObjects, .unionOfObjects, .distinctUnionOfArrays, .unionOfArrays,
            .distinctUnionOfSets, .unionOfSets:
            return union(values)
        case .count:
            return Int64(values.count)
        case .sum:
            return try Self.sum(values.filter { !$0.isNull }, operatorName: description)?.anyValue ?? Int64(0)
        case .avg:
            let present = values.filter { !$0.isNull }
            guard let total = try Self.sum(present, operatorName: description), !present.isEmpty else { return nil }
            if case .decimal(let value) = total { return value / Decimal(present.count) }
            return total.doubleValue / Double(present.count)
        case .min, .max:
            var best: Operand?
            for value in values where !value.isNull {
                guard let current = best else {
                    best = value
                    continue
                }
                guard let order = compareOperands(value, current, options: []) else {
                    throw AggregateFailure(
                        text: "\(description) cannot order \(value.kindDescription) against \(current.kindDescription)")
                }
                if (self == .min && order == .orderedAscending) || (self == .max && order == .orderedDescending) {
                    best = value
                }
            }
            return best?.anyValue
        }
    }

    /// The sum by the rule in the type's documentation; nil for no values.
    private static func sum(_ values: [Operand], operatorName: String) throws -> Number? {
        var numbers: [Number] = []
        numbers.reserveCapacity(values.count)
        var hasDecimal = false
        var hasDouble = false
        for value in values {
            guard let number = value.number else {
                throw AggregateFailure(text: "\(operatorName) needs numbers, but found \(value.kindDescription)")
            }
            switch number {
            case .decimal: hasDecimal = true
            case .double: hasDouble = true
            case .integer: break
            }
            numbers.append(number)
        }
        if numbers.isEmpty { return nil }
        if hasDecimal {
            return .decimal(numbers.reduce(Decimal(0)) { $0 + $1.decimalValue })
        }
        if hasDouble {
            return .double(numbers.reduce(0.0) { $0 + $1.doubleValue })
        }
        var total: Int64 = 0
        for (index, number) in numbers.enumerated() {
            guard case .integer(let value) = number else { continue }
            let (result, overflow) = total.addingReportingOverflow(value)
            if overflow {
                return .decimal(numbers[index...].reduce(Decimal(total)) { $0 + $1.decimalValue })
            }
            total = result
        }
        return .integer(total)
    }
}

extension Operand {
    var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}
