import Foundation
import GraftCore
import GraftModel

/// The built-in functions of the predicate format (`NSExpression`'s documented functions), written
/// `name:(arguments)` — `uppercase:(name)`, `add:to:(salary, 100)` — or `name()` when they take no
/// argument (`now()`, `random()`).
///
/// What each gives:
/// - over a collection (an aggregate, a to-many, a key path through one): `sum:`, `count:`, `min:`,
///   `max:`, `average:` as the `@sum`, `@count`, `@min`, `@max`, `@avg` collection operators do;
///   `median:` (the middle value, or the mean of the two middle ones as a `Double`), `mode:` (an
///   array of the most frequent values, first seen first), `stddev:` (the population standard
///   deviation, a `Double`). `nil` elements are skipped, except by `count:`; a `nil` collection gives
///   `nil` (`count:` gives 0).
/// - on two numbers: `add:to:`, `from:subtract:`, `multiply:by:`, `divide:by:` as `+ - * /` do;
///   `modulus:by:` (the integer remainder), `raise:toPower:` (a `Double`), `bitwiseAnd:with:`,
///   `bitwiseOr:with:`, `bitwiseXor:with:`, `leftshift:by:`, `rightshift:by:` (on `Int64`).
/// - on one number: `sqrt:`, `log:` (base 10), `ln:`, `exp:` (as `Double`s), `ceiling:`, `floor:`,
///   `trunc:`, `abs:` (integers stay integers), `onesComplement:`, `random:` (an integer from 0 to
///   n − 1).
/// - on strings: `uppercase:`, `lowercase:`.
/// - `now()` (the current date), `random()` (a `Double` from 0 up to 1), `noindex:(x)` (`x`: a hint
///   for SQL stores, no change in value), `castObject:toType:(x, "NSNumber")` (the same conversions
///   as `CAST`).
///
/// Arithmetic with `nil` gives `nil`; an argument of the wrong kind (a string given to `sqrt:`) is
/// a `GraftError.evaluationFailed` naming the function and the argument.
public enum PredicateFunction: String, Hashable, Sendable, CaseIterable {
    case sum = "sum:"
    case count = "count:"
    case min = "min:"
    case max = "max:"
    case average = "average:"
    case median = "median:"
    case mode = "mode:"
    case stddev = "stddev:"
    case add = "add:to:"
    case subtract = "from:subtract:"
    case multiply = "multiply:by:"
    case divide = "divide:by:"
    case modulus = "modulus:by:"
    case raise = "raise:toPower:"
    case bitwiseAnd = "bitwiseAnd:with:"
    case bitwiseOr = "bitwiseOr:with:"
    case bitwiseXor = "bitwiseXor:with:"
    case leftShift = "leftshift:by:"
    case rightShift = "rightshift:by:"
    case sqrt = "sqrt:"
    case log = "log:"
    case ln = "ln:"
    case exp = "exp:"
    case ceiling = "ceiling:"
    case floor = "floor:"
    case trunc = "trunc:"
    case abs = "abs:"
    case onesComplement = "onesComplement:"
    case randomBelow = "random:"
    case uppercase = "uppercase:"
    case lowercase = "lowercase:"
    case now = "now"
    case random = "random"
    case noindex = "noindex:"
    case castObject = "castObject:toType:"

    /// The selector name as the format writes it: `uppercase:`, `now`.
    public var name: String { rawValue }

    /// How many arguments the function takes: one per colon of its name.
    public var arity: Int { rawValue.filter { $0 == ":" }.count }

    /// The function named `name` (`uppercase:`, `now`), matched exactly as Foundation's selectors are.
    public init?(name: String) {
        self.init(rawValue: name)
    }

    private enum Kind {
        case collection, numbers, number, string, none, other
    }

    private var kind: Kind {
        switch self {
        case .sum, .count, .min, .max, .average, .median, .mode, .stddev: return .collection
        case .add, .subtract, .multiply, .divide, .modulus, .raise, .bitwiseAnd, .bitwiseOr, .bitwiseXor,
            .leftShift, .rightShift:
            return .numbers
        case .sqrt, .log, .ln, .exp, .ceiling, .floor, .trunc, .abs, .onesComplement, .randomBelow: return .number
        case .uppercase, .lowercase: return .string
        case .now, .random: return .none
        case .noindex, .castObject: return .other
        }
    }

    /// The function applied to evaluated arguments (as many as ``arity``).
    func apply(_ arguments: [Operand], written: [GraftPredicate.Expression]) throws -> Operand {
        func fail(_ message: String, _ position: Int) -> GraftError {
            let culprit = position < written.count ? written[position].description : name
            return GraftError(.evaluationFailed, "\(name) \(message)", context: [.key(culprit)])
        }
        switch kind {
        case .none:
            if self == .now { return .date(Date()) }
            return .double(Double.random(in: 0..<1))
        case .other:
            if self == .noindex { return arguments[0] }
            guard case .string(let typeName) = arguments[1] else {
                throw fail("needs a type name such as \"NSNumber\", but found \(arguments[1].kindDescription)", 1)
            }
            do {
                return try PredicateCast.cast(arguments[0], to: typeName)
            } catch let failure as PredicateCast.Failure {
                throw GraftError(.evaluationFailed, failure.text, context: [.key(written[0].description)])
            }
        case .string:
            switch arguments[0] {
            case .null: return .null
            case .string(let text): return .string(self == .uppercase ? text.uppercased() : text.lowercased())
            case let other: throw fail("needs a string, but found \(other.kindDescription)", 0)
            }
        case .collection:
            let elements: [Operand]
            switch arguments[0] {
            case .null: return self == .count ? .integer(0) : .null
            case .collection(let values): elements = values
            case let other: throw fail("needs a collection, but found \(other.kindDescription)", 0)
            }
            do {
                return try aggregate(elements)
            } catch let failure as AggregateFailure {
                throw fail(failure.text, 0)
            }
        case .number:
            if arguments[0].isNull { return .null }
            guard let number = arguments[0].number else {
                throw fail("needs a number, but found \(arguments[0].kindDescription)", 0)
            }
            return try unary(number, fail: { fail($0, 0) })
        case .numbers:
            if arguments[0].isNull || arguments[1].isNull { return .null }
            for position in 0..<2 where arguments[position].number == nil {
                throw fail("needs numbers, but found \(arguments[position].kindDescription)", position)
            }
            return try binary(arguments[0].number!, arguments[1].number!, fail: { fail($0, 1) })
        }
    }

    private func aggregate(_ elements: [Operand]) throws -> Operand {
        let present = elements.filter { !$0.isNull }
        switch self {
        case .sum: return Operand(try KeyValuePath.CollectionOperator.sum.apply(to: elements))
        case .count: return Operand(try KeyValuePath.CollectionOperator.count.apply(to: elements))
        case .min: return Operand(try KeyValuePath.CollectionOperator.min.apply(to: elements))
        case .max: return Operand(try KeyValuePath.CollectionOperator.max.apply(to: elements))
        case .average: return Operand(try KeyValuePath.CollectionOperator.avg.apply(to: elements))
        case .mode:
            var counts: [(value: Operand, count: Int)] = []
            for value in present {
                if let index = counts.firstIndex(where: { operandsEqual($0.value, value, options: []) }) {
                    counts[index].count += 1
                } else {
                    counts.append((value, 1))
                }
            }
            let top = counts.map(\.count).max() ?? 0
            return .collection(counts.filter { $0.count == top }.map(\.value))
        case .median, .stddev:
            var numbers: [Number] = []
            for value in present {
                guard let number = value.number else {
                    throw AggregateFailure(text: "needs numbers, but found \(value.kindDescription)")
                }
                numbers.append(number)
            }
            guard !numbers.isEmpty else { return .null }
            if self == .stddev {
                let doubles = numbers.map(\.doubleValue)
                let mean = doubles.reduce(0, +) / Double(doubles.count)
                let variance = doubles.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(doubles.count)
                return .double(variance.squareRoot())
            }
            let sorted = numbers.sorted { compareNumbers($0, $1) == .orderedAscending }
            let middle = sorted.count / 2
            if sorted.count % 2 == 1 { return sorted[middle].operand }
            return .double((sorted[middle - 1].doubleValue + sorted[middle].doubleValue) / 2)
        default:
            return .null
        }
    }

    private func unary(_ number: Number, fail: (String) -> GraftError) throws -> Operand {
        let value = number.doubleValue
        switch self {
        case .sqrt: return .double(value.squareRoot())
        case .log: return .double(Foundation.log10(value))
        case .ln: return .double(Foundation.log(value))
        case .exp: return .double(Foundation.exp(value))
        case .ceiling, .floor, .trunc, .abs:
            if case .integer(let integer) = number {
                if self != .abs { return .integer(integer) }
                return integer == .min ? .decimal(-Decimal(integer)) : .integer(Swift.abs(integer))
            }
            if case .decimal(let decimal) = number {
                var result = Decimal()
                var input = decimal
                switch self {
                case .ceiling: NSDecimalRound(&result, &input, 0, .up)
                case .floor: NSDecimalRound(&result, &input, 0, .down)
                case .trunc: NSDecimalRound(&result, &input, 0, decimal < 0 ? .up : .down)
                default: result = decimal < 0 ? -decimal : decimal
                }
                return .decimal(result)
            }
            switch self {
            case .ceiling: return .double(value.rounded(.up))
            case .floor: return .double(value.rounded(.down))
            case .trunc: return .double(value.rounded(.towardZero))
            default: return .double(Swift.abs(value))
            }
        case .onesComplement, .randomBelow:
            guard let integer = Self.integer(number) else { throw fail("needs an integer, but found \(value)") }
            if self == .onesComplement { return .integer(~integer) }
            guard integer > 0 else { throw fail("needs a positive bound, but found \(integer)") }
            return .integer(Int64.random(in: 0..<integer))
        default:
            return .null
        }
    }

    private func binary(_ x: Number, _ y: Number, fail: (String) -> GraftError) throws -> Operand {
        switch self {
        case .add: return try GraftPredicate.ArithmeticOperator.add.apply(x, y).operand
        case .subtract: return try GraftPredicate.ArithmeticOperator.subtract.apply(x, y).operand
        case .multiply: return try GraftPredicate.ArithmeticOperator.multiply.apply(x, y).operand
        case .divide: return try GraftPredicate.ArithmeticOperator.divide.apply(x, y).operand
        case .raise: return try GraftPredicate.ArithmeticOperator.power.apply(x, y).operand
        default: break
        }
        guard let a = Self.integer(x), let b = Self.integer(y) else {
            throw fail("needs integers, but found \(x.doubleValue) and \(y.doubleValue)")
        }
        switch self {
        case .modulus:
            guard b != 0 else { throw fail("cannot take a remainder by zero") }
            return .integer(a.remainderReportingOverflow(dividingBy: b).partialValue)
        case .bitwiseAnd: return .integer(a & b)
        case .bitwiseOr: return .integer(a | b)
        case .bitwiseXor: return .integer(a ^ b)
        case .leftShift: return .integer(a << b)
        default: return .integer(a >> b)
        }
    }

    private static func integer(_ number: Number) -> Int64? {
        switch number {
        case .integer(let value): return value
        case .double(let value): return value.rounded(.towardZero) == value ? Int64(exactly: value) : nil
        case .decimal(let value): return Int64(exactly: value.nearestDouble)
        }
    }
}

/// The methods `FUNCTION(receiver, "selector", …)` can call.
extension PredicateFunction {
    /// `FUNCTION(receiver, selector, arguments)`: a built-in function whose name is `selector`, given the
    /// receiver as its first argument (`FUNCTION(name, "uppercase:")`); `uppercaseString`,
    /// `lowercaseString`, `capitalizedString`, `length` of a string; `intValue`, `integerValue`,
    /// `longLongValue`, `doubleValue`, `floatValue`, `boolValue`, `stringValue` of a number (and of a
    /// string holding one); `count`, `firstObject`, `lastObject`, `anyObject`, `allObjects` of a
    /// collection; `timeIntervalSinceReferenceDate`, `timeIntervalSince1970` of a date; and, with no
    /// argument, any key of an object or dictionary.
    static func method(
        _ selector: String, receiver: Operand, arguments: [Operand], written: String
    ) throws
        -> Operand
    {
        func fail(_ message: String) -> GraftError {
            GraftError(.evaluationFailed, "FUNCTION \(selector): \(message)", context: [.key(written)])
        }
        if let function = PredicateFunction(name: selector) {
            guard function.arity == arguments.count + 1 else {
                throw fail("takes \(function.arity) arguments with its receiver, but \(arguments.count + 1) were given")
            }
            return try function.apply([receiver] + arguments, written: [])
        }
        guard arguments.isEmpty else {
            throw fail("is not a method Graft can call with arguments (only the built-in functions take them)")
        }
        if case .null = receiver { return .null }
        switch (selector, receiver) {
        case ("uppercaseString", .string(let text)): return .string(text.uppercased())
        case ("lowercaseString", .string(let text)): return .string(text.lowercased())
        case ("capitalizedString", .string(let text)): return .string(text.capitalized)
        case ("length", .string(let text)): return .integer(Int64(text.utf16.count))
        case ("stringValue", .string): return receiver
        case ("count", .collection(let elements)): return .integer(Int64(elements.count))
        case ("firstObject", .collection(let elements)), ("anyObject", .collection(let elements)):
            return elements.first ?? .null
        case ("lastObject", .collection(let elements)): return elements.last ?? .null
        case ("allObjects", .collection): return receiver
        case ("timeIntervalSinceReferenceDate", .date(let date)): return .double(date.timeIntervalSinceReferenceDate)
        case ("timeIntervalSince1970", .date(let date)): return .double(date.timeIntervalSince1970)
        case ("description", _): return .string(ValueText.describe(receiver))
        default: break
        }
        let numeric = ["intValue", "integerValue", "longLongValue", "doubleValue", "floatValue", "boolValue"]
        if numeric.contains(selector) || selector == "stringValue" {
            var number = receiver.number
            if number == nil, case .string(let text) = receiver {
                let trimmed = text.trimmingCharacters(in: .whitespaces)
                number = Int64(trimmed).map(Number.integer) ?? Double(trimmed).map(Number.double) ?? .integer(0)
            }
            if let number {
                switch selector {
                case "doubleValue", "floatValue": return .double(number.doubleValue)
                case "boolValue": return .bool(number.doubleValue != 0)
                case "stringValue": return .string(ValueText.describe(number.operand))
                default:
                    if case .integer = number { return number.operand }
                    let value = number.doubleValue.rounded(.towardZero)
                    return Int64(exactly: value).map(Operand.integer) ?? .double(value)
                }
            }
        }
        if case .object(let object) = receiver { return Operand(object.value(forKey: selector)) }
        if case .other(let box) = receiver, let dictionary = box.value as? [String: Any] {
            return Operand(dictionary[selector])
        }
        throw fail("\(receiver.kindDescription) has no method '\(selector)' that Graft knows")
    }
}

/// `CAST(value, "type")`: the conversions Foundation's predicate format makes.
enum PredicateCast {
    struct Failure: Error {
        var text: String
        var badType = false
    }

    static let typeNames = ["NSDate", "NSUUID", "NSNumber", "NSDecimalNumber", "NSString", "NSData", "NSURL"]

    /// The value as `typeName`; `nil` stays `nil`.
    static func cast(_ operand: Operand, to typeName: String) throws -> Operand {
        guard typeNames.contains(typeName) else {
            throw Failure(
                text: "CAST to \"\(typeName)\" is not supported (" + typeNames.joined(separator: ", ") + ")",
                badType: true)
        }
        switch operand {
        case .null: return .null
        case .integer(let value): return Operand(try cast(.integer(value), to: typeName))
        case .double(let value): return Operand(try cast(.double(value), to: typeName))
        case .decimal(let value): return Operand(try cast(.decimal(value), to: typeName))
        case .bool(let value): return Operand(try cast(.bool(value), to: typeName))
        case .string(let value): return Operand(try cast(.string(value), to: typeName))
        case .date(let value): return Operand(try cast(.date(value), to: typeName))
        case .data(let value): return Operand(try cast(.data(value), to: typeName))
        case .uuid(let value): return Operand(try cast(.uuid(value), to: typeName))
        case .url(let value): return Operand(try cast(.uri(value), to: typeName))
        case .object, .collection, .other:
            if typeName == "NSString" { return .string(ValueText.describe(operand)) }
            throw Failure(text: "CAST to \(typeName) cannot convert \(operand.kindDescription)")
        }
    }

    /// A constant as `typeName`.
    static func cast(_ value: Value, to typeName: String) throws -> Value {
        func fail(_ what: String) -> Failure {
            Failure(text: "CAST to \(typeName) needs \(what), found \(GraftPredicate.Expression.format(value))")
        }
        let number = Operand(value).number
        switch typeName {
        case "NSDate":
            if case .date = value { return value }
            if let number { return .date(Date(timeIntervalSinceReferenceDate: number.doubleValue)) }
            if case .string(let text) = value, let seconds = Double(text) {
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            }
            throw fail("a number of seconds since 2001-01-01")
        case "NSUUID":
            if case .uuid = value { return value }
            if case .string(let text) = value, let uuid = UUID(uuidString: text) { return .uuid(uuid) }
            throw fail("a UUID string")
        case "NSNumber":
            if number != nil { return value }
            if case .date(let date) = value { return .double(date.timeIntervalSinceReferenceDate) }
            if case .string(let text) = value {
                if let integer = Int64(text) { return .integer(integer) }
                if let double = Double(text) { return .double(double) }
            }
            throw fail("a number or the text of one")
        case "NSDecimalNumber":
            if let number { return .decimal(number.decimalValue) }
            if case .string(let text) = value, let decimal = decimal(text) { return .decimal(decimal) }
            throw fail("a number or the text of one")
        case "NSString":
            if case .string = value { return value }
            return .string(ValueText.format(value))
        case "NSData":
            if case .data = value { return value }
            if case .string(let text) = value, let data = Data(base64Encoded: text) { return .data(data) }
            throw fail("base64 text")
        case "NSURL":
            if case .uri = value { return value }
            if case .string(let text) = value, let url = URL(string: text) { return .uri(url) }
            throw fail("URL text")
        default:
            throw Failure(
                text: "CAST to \"\(typeName)\" is not supported (" + typeNames.joined(separator: ", ") + ")",
                badType: true)
        }
    }

    /// Decimal text, all of it: Foundation's parser stops quietly at the first character it does not read.
    static func decimal(_ text: String) -> Decimal? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let body = trimmed.hasPrefix("-") || trimmed.hasPrefix("+") ? trimmed.dropFirst() : Substring(trimmed)
        var sawDigit = false
        var sawDot = false
        var sawExponent = false
        var previous: Character = " "
        for character in body {
            if character.isASCII && character.isNumber {
                sawDigit = true
            } else if character == "." && !sawDot && !sawExponent {
                sawDot = true
            } else if (character == "e" || character == "E") && sawDigit && !sawExponent {
                sawExponent = true
            } else if (character == "-" || character == "+") && (previous == "e" || previous == "E") {
                // the exponent's sign
            } else {
                return nil
            }
            previous = character
        }
        guard sawDigit, previous.isNumber || previous == "." else { return nil }
        return Decimal(string: trimmed, locale: posixLocale)
    }
}

extension ValueText {
    /// A value's text for `CAST(…, "NSString")` and `description`: attribute values as Graft prints
    /// them, objects and collections by their description.
    static func describe(_ operand: Operand) -> String {
        switch operand {
        case .null: return "nil"
        case .integer(let value): return format(.integer(value))
        case .double(let value): return format(.double(value))
        case .decimal(let value): return format(.decimal(value))
        case .bool(let value): return format(.bool(value))
        case .string(let value): return value
        case .date(let value): return format(.date(value))
        case .data(let value): return format(.data(value))
        case .uuid(let value): return format(.uuid(value))
        case .url(let value): return format(.uri(value))
        case .object(let object):
            if let describable = object as? CustomStringConvertible { return describable.description }
            return "<\(type(of: object))>"
        case .collection(let elements): return "(" + elements.map(describe).joined(separator: ", ") + ")"
        case .other(let box): return String(describing: box.value)
        }
    }
}
