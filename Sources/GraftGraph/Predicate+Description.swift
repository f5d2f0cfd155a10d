import Foundation
import GraftModel

/// Printing predicates in Apple's normalised predicate format.
///
/// The text parses back to an equal predicate (`try GraftPredicate(format: p.description) == p`) except for
/// predicates holding objects (`%@` objects print as their description), non-finite numbers, keys that
/// are not identifiers (`"first name"`), and one-element or empty `AND`/`OR` lists (printed as their
/// element, `TRUEPREDICATE` or `FALSEPREDICATE`).
///
/// Normalisations: `=` prints as `==`, `<>` as `!=`, `=<` as `<=`, `=>` as `>=`, `SOME` as `ANY`, `&&`
/// as `AND`, `||` as `OR`, `!` as `NOT`, `NULL` as `nil`, `TRUE` and `FALSE` as `YES` and `NO`, strings
/// in double quotes, numbers in decimal, and a nested `AND`/`OR` in parentheses.
extension GraftPredicate: CustomStringConvertible {
    public var description: String {
        switch self {
        case .truePredicate: return "TRUEPREDICATE"
        case .falsePredicate: return "FALSEPREDICATE"
        case .comparison(let comparison): return comparison.description
        case .not(let predicate): return "NOT " + predicate.parenthesizedIfCompound
        case .and(let predicates):
            if predicates.isEmpty { return "TRUEPREDICATE" }
            if predicates.count == 1 { return predicates[0].description }
            return predicates.map(\.parenthesizedIfCompound).joined(separator: " AND ")
        case .or(let predicates):
            if predicates.isEmpty { return "FALSEPREDICATE" }
            if predicates.count == 1 { return predicates[0].description }
            return predicates.map(\.parenthesizedIfCompound).joined(separator: " OR ")
        }
    }

    private var parenthesizedIfCompound: String {
        switch self {
        case .and(let predicates) where predicates.count > 1: return "(\(description))"
        case .or(let predicates) where predicates.count > 1: return "(\(description))"
        default: return description
        }
    }
}

extension GraftPredicate.Comparison: CustomStringConvertible {
    /// `ANY employees.name BEGINSWITH[c] "a"`.
    public var description: String {
        let prefix: String
        switch modifier {
        case .direct: prefix = ""
        case .any: prefix = "ANY "
        case .all: prefix = "ALL "
        case .none: prefix = "NONE "
        }
        return prefix + left.description + " " + self.operator.formatText + options.formatSuffix + " "
            + right.description
    }
}

extension GraftPredicate.Expression: CustomStringConvertible {
    /// The expression in the predicate format: `"Sales"`, `50000`, `department.name`, `$NAME`,
    /// `{1, 2}`, `salary * 12`, `CAST(600000000, "NSDate")`.
    public var description: String {
        switch self {
        case .constant(let value): return Self.format(value)
        case .null: return "nil"
        case .object(let reference): return reference.description
        case .evaluatedObject: return "SELF"
        case .variable(let name): return "$" + name
        case .keyPath(let path): return Self.format(path)
        case .member(let base, let path):
            let baseText: String
            switch base {
            case .arithmetic: baseText = "(\(base.description))"
            default: baseText = base.description
            }
            return baseText + "." + Self.format(path)
        case .aggregate(let elements):
            return "{" + elements.map(\.description).joined(separator: ", ") + "}"
        case .arithmetic(let op, let left, let right):
            let precedence = op.precedence
            // `**` groups to the right, the others to the left.
            let rightAssociative = op == .power
            var leftText = left.description
            if let inner = left.arithmeticPrecedence, inner < precedence || (rightAssociative && inner == precedence) {
                leftText = "(\(leftText))"
            }
            var rightText = right.description
            if let inner = right.arithmeticPrecedence, inner < precedence || (!rightAssociative && inner == precedence)
            {
                rightText = "(\(rightText))"
            }
            return leftText + " " + op.rawValue + " " + rightText
        case .function(let function, let arguments):
            return function.name + "(" + arguments.map(\.description).joined(separator: ", ") + ")"
        case .method(let receiver, let selector, let arguments):
            return "FUNCTION("
                + ([receiver.description, Self.quote(selector)] + arguments.map(\.description))
                .joined(separator: ", ") + ")"
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(\(collection), $\(variable), \(predicate))"
        case .index(let base, let selector):
            let baseText: String
            switch base {
            case .arithmetic: baseText = "(\(base.description))"
            default: baseText = base.description
            }
            switch selector {
            case .first: return baseText + "[FIRST]"
            case .last: return baseText + "[LAST]"
            case .size: return baseText + "[SIZE]"
            case .at(let index): return baseText + "[\(index)]"
            }
        case .cast(let inner, let typeName):
            return "CAST(\(inner), \(Self.quote(typeName)))"
        case .ternary(let condition, let whenTrue, let whenFalse):
            return "TERNARY(\(condition), \(whenTrue), \(whenFalse))"
        case .fetch(let request, let context, let countOnly):
            return "FETCH(\(request), \(context), \(countOnly ? "YES" : "NO"))"
        }
    }

    private var arithmeticPrecedence: Int? {
        if case .arithmetic(let op, _, _) = self { return op.precedence }
        return nil
    }

    /// A constant in the predicate format. Dates, UUIDs, decimals, data and URLs are written as
    /// `CAST`s (the last three are Graft's own: Apple's parser does not read them).
    static func format(_ value: Value) -> String {
        switch value {
        case .integer(let number): return String(number)
        case .double(let number): return number.description
        case .decimal(let number): return "CAST(\(quote(number.description)), \"NSDecimalNumber\")"
        case .string(let text): return quote(text)
        case .bool(let flag): return flag ? "YES" : "NO"
        case .date(let date): return "CAST(\(formatSeconds(date.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .data(let data): return "CAST(\(quote(data.base64EncodedString())), \"NSData\")"
        case .uuid(let uuid): return "CAST(\(quote(uuid.uuidString)), \"NSUUID\")"
        case .uri(let url): return "CAST(\(quote(url.absoluteString)), \"NSURL\")"
        }
    }

    /// Seconds without a needless ".0".
    private static func formatSeconds(_ seconds: Double) -> String {
        if seconds.rounded() == seconds, abs(seconds) < 1e15 { return String(Int64(seconds)) }
        return seconds.description
    }

    /// A double-quoted string with `\"`, `\\` and control characters escaped.
    static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// A key path with reserved words escaped as `#word`.
    static func format(_ path: KeyValuePath) -> String {
        path.components.map { component in
            switch component {
            case .key(let key): return PredicateKeyword.isReserved(key) ? "#" + key : key
            case .identity: return "SELF"
            case .collectionOperator(let op): return op.description
            }
        }.joined(separator: ".")
    }
}

extension GraftPredicate.ArithmeticOperator {
    var precedence: Int {
        switch self {
        case .add, .subtract: return 1
        case .multiply, .divide: return 2
        case .power: return 3
        }
    }
}

/// The predicate format's reserved words: they cannot name keys unless escaped with `#`.
enum PredicateKeyword {
    static let reserved: Set<String> = [
        "AND", "OR", "NOT", "IN", "ALL", "ANY", "SOME", "NONE", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH",
        "ENDSWITH", "BETWEEN", "NULL", "NIL", "SELF", "TRUE", "YES", "FALSE", "NO", "FIRST", "LAST", "SIZE",
        "ANYKEY", "SUBQUERY", "FUNCTION", "CAST", "FETCH", "TRUEPREDICATE", "FALSEPREDICATE", "CASEINSENSITIVE",
        "CI", "UTI-CONFORMS-TO", "UTI-EQUALS",
    ]

    static func isReserved(_ word: String) -> Bool {
        reserved.contains(word.uppercased())
    }
}
