import Foundation
import GraftCore

/// A predicate or an expression as a compiled model holds it: the `NSPredicate` and `NSExpression`
/// objects Core Data and Xcode's model compiler archive for validation rules, derived attributes,
/// Core Spotlight display names, partial indexes, index expressions, fetched properties and fetch
/// request templates.
///
/// A `Model` keeps these as predicate-format text (`SELF >= 0`, `additionalAttributes.width`,
/// `count:(pages)`); this type turns archived objects into that text when a compiled model is read,
/// and text back into archived objects when one is written. It covers the forms compiled models
/// hold — comparisons, `AND`/`OR`/`NOT`, key paths, `SELF`, constants, variables and function
/// expressions — not the whole predicate language; text it cannot parse is archived as a string.
/// Mapping models add method calls on a receiver (`FUNCTION($manager, "…", …)`), key paths from a
/// variable (`$source.name`) and fetch request expressions (`FETCH(…)`), which are read (not parsed).
/// `Formats/models.md` lists each archived form with the corpus files that show it.
indirect enum ModelExpression: Hashable, Sendable {
    /// A constant: a number, a string or `nil`.
    case constant(Constant)
    /// `SELF`, the evaluated object (`NSSelfExpression`).
    case evaluatedObject
    /// `$NAME` (`NSVariableExpression`).
    case variable(String)
    /// A key path from the evaluated object (`NSKeyPathExpression` over `SELF`), or from a variable
    /// when it starts with `$` (`$source.name`, `$manager.sourceContext`).
    case keyPath(String)
    /// A function such as `count:(pages)` or `uppercase:(title)` (`NSFunctionExpression`); the name
    /// keeps its colon, as Core Data writes the selector.
    case function(String, [ModelExpression])
    /// `FUNCTION(receiver, "selector", arguments…)`: a method of the receiver's value
    /// (`NSFunctionExpression` whose operand is not Foundation's function table), as mapping models call
    /// the migration manager: `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", …)`.
    case method(ModelExpression, String, [ModelExpression])
    /// `FETCH(request, context, countOnly)`: the objects a fetch request finds in a context
    /// (Core Data's `NSFetchRequestExpression`), as a mapping model's source expression fetches the
    /// source objects.
    case fetch(request: ModelExpression, context: ModelExpression, countOnly: Bool)
    /// `{1, 2, 3}` (`NSAggregateExpression`).
    case aggregate([ModelExpression])
    /// `left op right` (`NSComparisonPredicate`).
    case comparison(Comparison)
    /// `AND`, `OR` or `NOT` over predicates (`NSCompoundPredicate`).
    case compound(CompoundType, [ModelExpression])
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case truth(Bool)

    enum Constant: Hashable, Sendable {
        case integer(Int64)
        case real(Double)
        case string(String)
        case null
    }

    /// Foundation's `NSCompoundPredicateType` codes.
    enum CompoundType: Int64, Sendable {
        case not = 0, and = 1, or = 2
    }

    struct Comparison: Hashable, Sendable {
        var left: ModelExpression
        var operation: Operator
        var right: ModelExpression
        /// 0 direct, 1 `ALL`, 2 `ANY` (`NSComparisonPredicateModifier`).
        var modifier: Int64 = 0
        /// 1 case-insensitive `[c]`, 2 diacritic-insensitive `[d]`, 8 normalized `[n]`.
        var options: Int64 = 0
    }

    /// Foundation's `NSPredicateOperatorType` codes, with the text predicate format writes.
    enum Operator: Int64, Sendable, CaseIterable {
        case lessThan = 0, lessThanOrEqual = 1, greaterThan = 2, greaterThanOrEqual = 3, equal = 4, notEqual = 5
        case matches = 6, like = 7, beginsWith = 8, endsWith = 9, `in` = 10, contains = 99, between = 100

        var symbol: String {
            switch self {
            case .lessThan: return "<"
            case .lessThanOrEqual: return "<="
            case .greaterThan: return ">"
            case .greaterThanOrEqual: return ">="
            case .equal: return "=="
            case .notEqual: return "!="
            case .matches: return "MATCHES"
            case .like: return "LIKE"
            case .beginsWith: return "BEGINSWITH"
            case .endsWith: return "ENDSWITH"
            case .in: return "IN"
            case .contains: return "CONTAINS"
            case .between: return "BETWEEN"
            }
        }

        /// The `NSPredicateOperator` subclass Foundation archives for this operator, and whether its
        /// archive has `NSVariant` (comparison and string operators) or `NSNegate` (equality).
        var archivedClass: String {
            switch self {
            case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual: return "NSComparisonPredicateOperator"
            case .equal, .notEqual: return "NSEqualityPredicateOperator"
            case .matches: return "NSMatchingPredicateOperator"
            case .like: return "NSLikePredicateOperator"
            case .beginsWith, .endsWith: return "NSSubstringPredicateOperator"
            case .in, .contains: return "NSInPredicateOperator"
            case .between: return "NSBetweenPredicateOperator"
            }
        }

        /// The operator class with its superclasses.
        var archivedChain: [String] {
            var chain = [archivedClass]
            switch self {
            case .like: chain += ["NSMatchingPredicateOperator", "NSStringPredicateOperator"]
            case .matches, .beginsWith, .endsWith: chain.append("NSStringPredicateOperator")
            default: break
            }
            return chain + ["NSPredicateOperator", "NSObject"]
        }
    }

    /// Whether this is a predicate (rather than an expression).
    var isPredicate: Bool {
        switch self {
        case .comparison, .compound, .truth: return true
        default: return false
        }
    }
}

// MARK: - Text

extension ModelExpression {
    /// The text Foundation's `predicateFormat` gives this predicate or expression; Core Data hashes
    /// a derived attribute's expression in this form.
    var format: String {
        switch self {
        case .constant(let constant):
            switch constant {
            case .integer(let number): return String(number)
            case .real(let number): return ValidationText.plain(number) ?? String(number)
            case .string(let text): return ValidationText.quoted(text)
            case .null: return "nil"
            }
        case .evaluatedObject: return "SELF"
        case .variable(let name): return "$" + name
        case .keyPath(let path): return path
        case .function(let name, let arguments):
            let stem = name.hasSuffix(":") ? name : name + ":"
            return stem + "(" + arguments.map(\.format).joined(separator: ", ") + ")"
        case .method(let receiver, let selector, let arguments):
            // Foundation prints `"selector" , argument` (a space before the comma); Graft writes the
            // usual `, `, which both parsers read.
            let parts = [receiver.format, ValidationText.quoted(selector)] + arguments.map(\.format)
            return "FUNCTION(" + parts.joined(separator: ", ") + ")"
        case .fetch(let request, let context, let countOnly):
            return "FETCH(" + request.format + ", " + context.format + ", " + (countOnly ? "YES" : "NO") + ")"
        case .aggregate(let elements): return "{" + elements.map(\.format).joined(separator: ", ") + "}"
        case .comparison(let comparison):
            var text = ""
            if comparison.modifier == 1 { text += "ALL " }
            if comparison.modifier == 2 { text += "ANY " }
            text += comparison.left.format + " " + comparison.operation.symbol
            var flags = ""
            if comparison.options & 1 != 0 { flags += "c" }
            if comparison.options & 2 != 0 { flags += "d" }
            if comparison.options & 8 != 0 { flags += "n" }
            if !flags.isEmpty { text += "[" + flags + "]" }
            return text + " " + comparison.right.format
        case .compound(let type, let parts):
            func nested(_ part: ModelExpression) -> String {
                if case .compound(let inner, _) = part, inner != .not { return "(" + part.format + ")" }
                return part.format
            }
            switch type {
            case .not: return "NOT " + (parts.first.map(nested) ?? "TRUEPREDICATE")
            case .and: return parts.map(nested).joined(separator: " AND ")
            case .or: return parts.map(nested).joined(separator: " OR ")
            }
        case .truth(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        }
    }

    /// Parses predicate-format text into a predicate, or `nil` for text outside the forms above.
    static func parsePredicate(_ text: String) -> ModelExpression? {
        var parser = ExpressionParser(text)
        guard let predicate = parser.predicate(), parser.atEnd, predicate.isPredicate else { return nil }
        return predicate
    }

    /// Parses predicate-format text into an expression (`a.b`, `count:(pages)`, `SELF`), or `nil`.
    static func parseExpression(_ text: String) -> ModelExpression? {
        var parser = ExpressionParser(text)
        guard let expression = parser.expression(), parser.atEnd else { return nil }
        return expression
    }
}

/// A recursive-descent reader of the predicate-format subset `ModelExpression` covers.
private struct ExpressionParser {
    enum Token: Equatable {
        case word(String)
        case number(String)
        case string(String)
        case variable(String)
        case symbol(String)
    }

    var tokens: [Token] = []
    var position = 0
    var failed = false

    init(_ text: String) {
        let characters = Array(text.unicodeScalars)
        var index = 0
        func isWordStart(_ c: Unicode.Scalar) -> Bool { c == "_" || c == "@" || c == "#" || c.properties.isAlphabetic }
        func isWord(_ c: Unicode.Scalar) -> Bool { isWordStart(c) || ("0"..."9").contains(c) }
        while index < characters.count {
            let c = characters[index]
            if c.properties.isWhitespace {
                index += 1
            } else if c == "\"" || c == "'" {
                var text = ""
                var closed = false
                index += 1
                while index < characters.count {
                    let d = characters[index]
                    if d == "\\", index + 1 < characters.count {
                        text.unicodeScalars.append(characters[index + 1])
                        index += 2
                        continue
                    }
                    if d == c {
                        closed = true
                        index += 1
                        break
                    }
                    text.unicodeScalars.append(d)
                    index += 1
                }
                if !closed { failed = true }
                tokens.append(.string(text))
            } else if ("0"..."9").contains(c)
                || (c == "-" && index + 1 < characters.count && ("0"..."9").contains(characters[index + 1])
                    && Self.allowsSign(before: tokens.last))
            {
                var text = String(c)
                index += 1
                while index < characters.count,
                    ("0"..."9").contains(characters[index]) || characters[index] == "."
                        || characters[index] == "e" || characters[index] == "E"
                        || ((characters[index] == "-" || characters[index] == "+")
                            && (text.last == "e" || text.last == "E"))
                {
                    text.unicodeScalars.append(characters[index])
                    index += 1
                }
                tokens.append(.number(text))
            } else if c == "$" {
                var name = ""
                index += 1
                while index < characters.count, isWord(characters[index]) {
                    name.unicodeScalars.append(characters[index])
                    index += 1
                }
                if name.isEmpty { failed = true }
                tokens.append(.variable(name))
            } else if isWordStart(c) {
                var word = ""
                while index < characters.count, isWord(characters[index]) || characters[index] == "." {
                    word.unicodeScalars.append(characters[index])
                    index += 1
                }
                tokens.append(.word(word))
            } else {
                let two = index + 1 < characters.count ? String(c) + String(characters[index + 1]) : ""
                if ["==", "!=", "<=", ">=", "=<", "=>", "<>", "&&", "||"].contains(two) {
                    tokens.append(.symbol(two))
                    index += 2
                } else if "=<>!(){},:[]".unicodeScalars.contains(c) {
                    tokens.append(.symbol(String(c)))
                    index += 1
                } else {
                    failed = true
                    index += 1
                }
            }
        }
    }

    /// A minus sign starts a number only where an operand may start.
    static func allowsSign(before token: Token?) -> Bool {
        switch token {
        case nil, .symbol: return true
        case .word(let word): return ExpressionParser.keywordOperators[word.uppercased()] != nil
        default: return false
        }
    }

    static let keywordOperators: [String: ModelExpression.Operator] = [
        "MATCHES": .matches, "LIKE": .like, "BEGINSWITH": .beginsWith, "ENDSWITH": .endsWith, "IN": .in,
        "CONTAINS": .contains, "BETWEEN": .between,
    ]
    static let symbolOperators: [String: ModelExpression.Operator] = [
        "<": .lessThan, "<=": .lessThanOrEqual, "=<": .lessThanOrEqual, ">": .greaterThan, ">=": .greaterThanOrEqual,
        "=>": .greaterThanOrEqual, "=": .equal, "==": .equal, "!=": .notEqual, "<>": .notEqual,
    ]

    var atEnd: Bool { !failed && position == tokens.count }
    var next: Token? { position < tokens.count ? tokens[position] : nil }

    mutating func take(_ token: Token) -> Bool {
        guard next == token else { return false }
        position += 1
        return true
    }

    mutating func takeWord(_ words: String...) -> Bool {
        guard case .word(let word)? = next, words.contains(word.uppercased()) else { return false }
        position += 1
        return true
    }

    mutating func predicate() -> ModelExpression? {
        guard !failed, var left = conjunction() else { return nil }
        var parts = [left]
        while takeWord("OR") || take(.symbol("||")) {
            guard let right = conjunction() else { return nil }
            parts.append(right)
        }
        if parts.count > 1 { left = .compound(.or, parts) }
        return left
    }

    mutating func conjunction() -> ModelExpression? {
        guard var left = negation() else { return nil }
        var parts = [left]
        while takeWord("AND") || take(.symbol("&&")) {
            guard let right = negation() else { return nil }
            parts.append(right)
        }
        if parts.count > 1 { left = .compound(.and, parts) }
        return left
    }

    mutating func negation() -> ModelExpression? {
        if takeWord("NOT") || take(.symbol("!")) {
            guard let inner = negation() else { return nil }
            return .compound(.not, [inner])
        }
        return primaryPredicate()
    }

    mutating func primaryPredicate() -> ModelExpression? {
        if takeWord("TRUEPREDICATE") { return .truth(true) }
        if takeWord("FALSEPREDICATE") { return .truth(false) }
        if next == .symbol("(") {
            let start = position
            position += 1
            if let inner = predicate(), inner.isPredicate, take(.symbol(")")) { return inner }
            position = start
        }
        return comparison()
    }

    mutating func comparison() -> ModelExpression? {
        var modifier: Int64 = 0
        if takeWord("ANY", "SOME") {
            modifier = 2
        } else if takeWord("ALL") {
            modifier = 1
        }
        guard let left = expression() else { return nil }
        let operation: ModelExpression.Operator
        switch next {
        case .symbol(let symbol)? where Self.symbolOperators[symbol] != nil:
            operation = Self.symbolOperators[symbol]!
        case .word(let word)? where Self.keywordOperators[word.uppercased()] != nil:
            operation = Self.keywordOperators[word.uppercased()]!
        default:
            return nil
        }
        position += 1
        var options: Int64 = 0
        if take(.symbol("[")) {
            guard case .word(let flags)? = next else { return nil }
            position += 1
            for flag in flags.lowercased() {
                switch flag {
                case "c": options |= 1
                case "d": options |= 2
                case "n": options |= 8
                default: return nil
                }
            }
            guard take(.symbol("]")) else { return nil }
        }
        guard let right = expression() else { return nil }
        return .comparison(.init(left: left, operation: operation, right: right, modifier: modifier, options: options))
    }

    mutating func expression() -> ModelExpression? {
        guard !failed, let token = next else { return nil }
        position += 1
        switch token {
        case .number(let text):
            if let integer = Int64(text) { return .constant(.integer(integer)) }
            if let real = Double(text) { return .constant(.real(real)) }
            return nil
        case .string(let text):
            return .constant(.string(text))
        case .variable(let name):
            return .variable(name)
        case .symbol("{"):
            var elements: [ModelExpression] = []
            if take(.symbol("}")) { return .aggregate([]) }
            repeat {
                guard let element = expression() else { return nil }
                elements.append(element)
            } while take(.symbol(","))
            return take(.symbol("}")) ? .aggregate(elements) : nil
        case .symbol("("):
            guard let inner = expression(), take(.symbol(")")) else { return nil }
            return inner
        case .word(let word):
            switch word.uppercased() {
            case "NIL", "NULL": return .constant(.null)
            case "TRUE", "YES": return .constant(.integer(1))
            case "FALSE", "NO": return .constant(.integer(0))
            case "SELF": return .evaluatedObject
            default: break
            }
            if word.uppercased().hasPrefix("SELF.") { return .keyPath(String(word.dropFirst(5))) }
            if next == .symbol(":") {
                // A function: name:(arguments).
                position += 1
                guard take(.symbol("(")) else { return nil }
                var arguments: [ModelExpression] = []
                if !take(.symbol(")")) {
                    repeat {
                        guard let argument = expression() else { return nil }
                        arguments.append(argument)
                    } while take(.symbol(","))
                    guard take(.symbol(")")) else { return nil }
                }
                return .function(word + ":", arguments)
            }
            if Self.keywordOperators[word.uppercased()] != nil
                || ["AND", "OR", "NOT", "ANY", "ALL", "SOME"]
                    .contains(word.uppercased())
            {
                return nil
            }
            let path = word.hasPrefix("#") ? String(word.dropFirst()) : word
            guard !path.isEmpty, !path.hasSuffix("."), !path.hasPrefix("."), !path.contains("..") else { return nil }
            return .keyPath(path)
        default:
            return nil
        }
    }
}

// MARK: - Archived objects

extension ModelExpression {
    /// Reads an archived `NSPredicate` or `NSExpression`.
    ///
    /// - Throws: `GraftError.malformedInput` naming the class it cannot read.
    init(archived object: ArchivedObject, depth: Int = 0) throws {
        guard depth < 64 else { throw GraftError(.malformedInput, "a predicate is nested more than 64 deep") }
        func sub(_ key: String) throws -> ModelExpression {
            guard let child = try object[key] else {
                throw GraftError(.malformedInput, "\(object.className ?? "an expression") has no \(key)")
            }
            return try ModelExpression(archived: child, depth: depth + 1)
        }
        func list(_ key: String) throws -> [ModelExpression] {
            try (object[key]?.decodeArray() ?? []).map { try ModelExpression(archived: $0, depth: depth + 1) }
        }
        if object.isKind(of: "NSComparisonPredicate") {
            guard let operation = try object["NSPredicateOperator"],
                let code = operation.rawField("NSOperatorType")?.int64Value,
                let kind = Operator(rawValue: code)
            else {
                throw GraftError(.malformedInput, "an NSComparisonPredicate has an operator Graft does not know")
            }
            let options = operation.rawField("NSOptions")?.int64Value ?? 0
            let modifier = operation.rawField("NSModifier")?.int64Value ?? 0
            self = .comparison(
                .init(
                    left: try sub("NSLeftExpression"), operation: kind, right: try sub("NSRightExpression"),
                    modifier: modifier, options: options))
        } else if object.isKind(of: "NSCompoundPredicate") {
            let code = object.rawField("NSCompoundPredicateType")?.int64Value ?? 1
            guard let type = CompoundType(rawValue: code) else {
                throw GraftError(.malformedInput, "an NSCompoundPredicate has the unknown type \(code)")
            }
            self = .compound(type, try list("NSSubpredicates"))
        } else if object.isKind(of: "NSTruePredicate") {
            self = .truth(true)
        } else if object.isKind(of: "NSFalsePredicate") {
            self = .truth(false)
        } else if object.isKind(of: "NSSelfExpression") {
            self = .evaluatedObject
        } else if object.isKind(of: "NSKeyPathSpecifierExpression") {
            self = .keyPath(try object.string(forKey: "NSKeyPath") ?? "")
        } else if object.isKind(of: "NSKeyPathExpression") {
            let arguments = try list("NSArguments")
            let operand = try object["NSOperand"].map { try ModelExpression(archived: $0, depth: depth + 1) }
            guard case .keyPath(let path)? = arguments.first else {
                throw GraftError(.malformedInput, "an NSKeyPathExpression has no key path")
            }
            switch operand {
            case nil, .evaluatedObject?: self = .keyPath(path)
            case .keyPath(let base)?: self = .keyPath(base + "." + path)
            case .variable(let name)?: self = .keyPath("$" + name + "." + path)
            default:
                throw GraftError(.malformedInput, "an NSKeyPathExpression starts from an operand Graft does not read")
            }
        } else if object.isKind(of: "NSVariableExpression") {
            self = .variable(try object.string(forKey: "NSVariable") ?? "")
        } else if object.isKind(of: "NSFunctionExpression") {
            let name = try object.string(forKey: "NSSelectorName") ?? ""
            let arguments = try list("NSArguments")
            // Foundation's own functions (`count:`, `uppercase:`) have as operand a constant naming their
            // class (`NSConstantValueClassName`, no value); any other operand is a receiver.
            if let operand = try object["NSOperand"],
                !(operand.isKind(of: "NSConstantValueExpression") && !operand.contains("NSConstantValue"))
            {
                self = .method(try ModelExpression(archived: operand, depth: depth + 1), name, arguments)
            } else {
                self = .function(name, arguments)
            }
        } else if object.isKind(of: "NSFetchRequestExpression") {
            // `+[NSFetchRequestExpression expressionForFetch:context:countOnly:]`, archived as
            // `NSFRExpression`, `NSMOCExpression` and `NSCountOnlyFlag` (V2toV3.cdm).
            self = .fetch(
                request: try sub("NSFRExpression"), context: try sub("NSMOCExpression"),
                countOnly: try object.bool(forKey: "NSCountOnlyFlag") ?? false)
        } else if object.isKind(of: "NSAggregateExpression") {
            self = .aggregate(try list("NSCollection"))
        } else if object.isKind(of: "NSConstantValueExpression") {
            guard let value = try object["NSConstantValue"] else {
                self = .constant(.null)
                return
            }
            switch try value.decodePropertyList() {
            case .integer(let number): self = .constant(.integer(number))
            case .unsignedInteger(let number): self = .constant(.integer(Int64(truncatingIfNeeded: number)))
            case .real(let number): self = .constant(.real(number))
            case .bool(let flag): self = .constant(.integer(flag ? 1 : 0))
            case .string(let text): self = .constant(.string(text))
            case .date(let date): self = .constant(.real(date.timeIntervalSinceReferenceDate))
            default: throw GraftError(.malformedInput, "an NSConstantValueExpression holds a value Graft does not read")
            }
        } else if case .string(let text) = object.rawValue {
            // Graft's own older archives kept predicates as text.
            guard let parsed = ModelExpression.parsePredicate(text) ?? ModelExpression.parseExpression(text) else {
                throw GraftError(.malformedInput, "cannot read the predicate text '\(text)'")
            }
            self = parsed
        } else {
            throw GraftError(
                .malformedInput, "\(object.className ?? "an object") is not a predicate or expression Graft reads")
        }
    }

    /// The predicate-format text of an archived predicate or expression: text kept as a string is
    /// returned as it is; an archived object Graft cannot read gives `nil`.
    static func text(of object: ArchivedObject) -> String? {
        if let text = try? object.decodeString() { return text }
        return (try? ModelExpression(archived: object))?.format
    }
}

/// Archives `ModelExpression`s into a model archive, sharing the one `SELF` expression as Foundation
/// does (every `NSSelfExpression` in `ReviewDocument.mom` is the same object).
struct ExpressionArchiver {
    private var evaluatedObject: KeyedArchiver.UID?

    static let predicateChain = ["NSPredicate", "NSObject"]
    static let expressionChain = ["NSExpression", "NSObject"]

    mutating func archive(_ expression: ModelExpression, in archiver: inout KeyedArchiver) -> KeyedArchiver.UID {
        switch expression {
        case .evaluatedObject:
            if let shared = evaluatedObject { return shared }
            let uid = archiver.encodeObject(
                classChain: ["NSSelfExpression"] + Self.expressionChain, fields: ["NSExpressionType": 1])
            evaluatedObject = uid
            return uid
        case .constant(let constant):
            var fields: PropertyList.Dictionary = ["NSExpressionType": 0]
            switch constant {
            case .integer(let number): fields["NSConstantValue"] = archiver.encode(number).propertyList
            case .real(let number): fields["NSConstantValue"] = archiver.encode(number).propertyList
            case .string(let text): fields["NSConstantValue"] = archiver.encode(text).propertyList
            // Foundation archives a nil constant as a class name that is nil (Photos.sqlite, 10.15.7).
            case .null: fields["NSConstantValueClassName"] = KeyedArchiver.UID.null.propertyList
            }
            return archiver.encodeObject(
                classChain: ["NSConstantValueExpression"] + Self.expressionChain, fields: fields)
        case .variable(let name):
            return archiver.encodeObject(
                classChain: ["NSVariableExpression"] + Self.expressionChain,
                fields: ["NSExpressionType": 2, "NSVariable": archiver.encode(name).propertyList])
        case .keyPath(let fullPath):
            // `$source.name`: the variable is the operand and the rest the path.
            var path = fullPath
            let operand: KeyedArchiver.UID
            if fullPath.hasPrefix("$"), let dot = fullPath.firstIndex(of: ".") {
                operand = archive(
                    .variable(String(fullPath[fullPath.index(after: fullPath.startIndex)..<dot])), in: &archiver)
                path = String(fullPath[fullPath.index(after: dot)...])
            } else {
                operand = archive(.evaluatedObject, in: &archiver)
            }
            let specifier = archiver.encodeObject(
                classChain: ["NSKeyPathSpecifierExpression"] + Self.expressionChain,
                fields: ["NSExpressionType": 10, "NSKeyPath": archiver.encode(path).propertyList])
            let arguments = archiver.encodeArray([specifier], mutable: true)
            // One key gives valueForKey:, a path valueForKeyPath: (Photos.sqlite: `favorite`, and the
            // derived attribute's `additionalAttributes.cameraCaptureDevice`).
            let selector = path.contains(".") ? "valueForKeyPath:" : "valueForKey:"
            return archiver.encodeObject(
                classChain: ["NSKeyPathExpression", "NSFunctionExpression"] + Self.expressionChain,
                fields: [
                    "NSExpressionType": 3, "NSOperand": operand.propertyList,
                    "NSSelectorName": archiver.encode(selector).propertyList, "NSArguments": arguments.propertyList,
                ])
        case .function(let name, let arguments):
            // Foundation's functions are class methods of _NSPredicateUtilities, the function's operand.
            let operand = archiver.encodeObject(
                classChain: ["NSConstantValueExpression"] + Self.expressionChain,
                fields: [
                    "NSExpressionType": 0,
                    "NSConstantValueClassName": archiver.encode("_NSPredicateUtilities").propertyList,
                ])
            return archiveFunction(operand: operand, selector: name, arguments: arguments, in: &archiver)
        case .method(let receiver, let selector, let arguments):
            let operand = archive(receiver, in: &archiver)
            return archiveFunction(operand: operand, selector: selector, arguments: arguments, in: &archiver)
        case .fetch(let request, let context, let countOnly):
            let requestUID = archive(request, in: &archiver)
            let contextUID = archive(context, in: &archiver)
            return archiver.encodeObject(
                classChain: ["NSFetchRequestExpression"] + Self.expressionChain,
                fields: [
                    "NSExpressionType": 50, "NSFRExpression": requestUID.propertyList,
                    "NSMOCExpression": contextUID.propertyList, "NSCountOnlyFlag": .bool(countOnly),
                ])
        case .aggregate(let elements):
            var members: [KeyedArchiver.UID] = []
            for element in elements { members.append(archive(element, in: &archiver)) }
            let list = archiver.encodeArray(members)
            return archiver.encodeObject(
                classChain: ["NSAggregateExpression"] + Self.expressionChain,
                fields: ["NSExpressionType": 14, "NSCollection": list.propertyList])
        case .comparison(let comparison):
            let left = archive(comparison.left, in: &archiver)
            let right = archive(comparison.right, in: &archiver)
            let operation = comparison.operation
            var fields: PropertyList.Dictionary = [
                "NSOperatorType": .integer(operation.rawValue), "NSModifier": .integer(comparison.modifier),
                "NSOptions": .integer(comparison.options),
            ]
            switch operation.archivedClass {
            case "NSEqualityPredicateOperator": fields["NSNegate"] = .bool(operation == .notEqual)
            case "NSComparisonPredicateOperator": fields["NSVariant"] = .integer(operation.rawValue)
            case "NSInPredicateOperator", "NSBetweenPredicateOperator": break
            default: fields["NSVariant"] = .integer(comparison.options)
            }
            let operatorUID = archiver.encodeObject(classChain: operation.archivedChain, fields: fields)
            return archiver.encodeObject(
                classChain: ["NSComparisonPredicate"] + Self.predicateChain,
                fields: [
                    "NSLeftExpression": left.propertyList, "NSRightExpression": right.propertyList,
                    "NSPredicateOperator": operatorUID.propertyList,
                ])
        case .compound(let type, let parts):
            var members: [KeyedArchiver.UID] = []
            for part in parts { members.append(archive(part, in: &archiver)) }
            let list = archiver.encodeArray(members)
            return archiver.encodeObject(
                classChain: ["NSCompoundPredicate"] + Self.predicateChain,
                fields: ["NSCompoundPredicateType": .integer(type.rawValue), "NSSubpredicates": list.propertyList])
        case .truth(let value):
            return archiver.encodeObject(
                classChain: [value ? "NSTruePredicate" : "NSFalsePredicate"] + Self.predicateChain, fields: [:])
        }
    }

    /// An `NSFunctionExpression`: the operand (Foundation's function table, or a receiver such as
    /// `$manager`), the selector and the arguments, in an `NSMutableArray` (as V2toV3.cdm has a
    /// relationship mapping's; Foundation reads any array).
    private mutating func archiveFunction(
        operand: KeyedArchiver.UID, selector: String, arguments: [ModelExpression], in archiver: inout KeyedArchiver
    ) -> KeyedArchiver.UID {
        var elements: [KeyedArchiver.UID] = []
        for argument in arguments { elements.append(archive(argument, in: &archiver)) }
        let list = archiver.encodeArray(elements, mutable: true)
        return archiver.encodeObject(
            classChain: ["NSFunctionExpression"] + Self.expressionChain,
            fields: [
                "NSExpressionType": 4, "NSOperand": operand.propertyList,
                "NSSelectorName": archiver.encode(selector).propertyList, "NSArguments": list.propertyList,
            ])
    }
}
