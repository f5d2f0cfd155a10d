import Foundation
import GraftCore
import GraftModel

extension GraftPredicate {
    /// Parses a predicate in Apple's predicate format, replacing `%@`, `%K`, `%d`, … by `arguments`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let predicate = try GraftPredicate(format: "%K BEGINSWITH[c] %@ AND hireDate > %@", "name", "a", cutoff)
    /// ```
    ///
    /// See ``parse(_:arguments:)`` for the grammar.
    ///
    /// - Throws: `GraftError.syntaxError` with the offset of the problem.
    public init(format: String, _ arguments: Any?...) throws {
        self = try GraftPredicate.parse(format, arguments: arguments)
    }

    /// Parses a predicate in Apple's predicate format.
    ///
    /// The grammar:
    /// - comparisons `==` `=` `!=` `<>` `<` `<=` `=<` `>` `>=` `=>`, `BEGINSWITH`, `ENDSWITH`,
    ///   `CONTAINS`, `LIKE`, `MATCHES`, `IN`, `BETWEEN`, each optionally followed by `[c]`, `[d]`, `[n]`
    ///   or a combination such as `[cd]`;
    /// - `AND`/`&&`, `OR`/`||`, `NOT`/`!`, parentheses; `NOT` binds tighter than `AND`, which binds
    ///   tighter than `OR`; `TRUEPREDICATE`, `FALSEPREDICATE`;
    /// - `ANY`/`SOME`, `ALL`, `NONE` before a comparison;
    /// - expressions: key paths (`department.name`, `employees.@avg.salary`, `#size` for a key that is
    ///   a reserved word), `SELF`, `$VARIABLE` and `$VARIABLE.key.path`, `nil`/`NULL`,
    ///   `TRUE`/`YES`/`FALSE`/`NO`, integers (also `0x1F`, `0o17`, `0b101`, negative), reals (`2.5e3`),
    ///   strings in single or double quotes with `\"`, `\\`, `\n`, `\t`, `\r`, `\0`, `\uXXXX` escapes,
    ///   aggregates `{1, 2, 3}`, arithmetic `+ - * /` with parentheses, and
    ///   `CAST(<seconds since 2001-01-01>, "NSDate")`, `CAST("<uuid>", "NSUUID")`,
    ///   `CAST("1.5", "NSDecimalNumber")`, `CAST(<value>, "NSNumber")`, `CAST(<value>, "NSString")`,
    ///   and Graft's `CAST("<base64>", "NSData")` and `CAST("<url>", "NSURL")`;
    /// - format specifiers: `%@` (a value, an object, an array or set — which becomes an aggregate — or
    ///   nil), `%K` (a key path), `%d` `%i` `%u` `%ld` `%lld` (integers), `%f` `%lf` `%g` `%e`
    ///   (doubles), `%s` (a string).
    ///
    /// Keywords are case-insensitive. Function expressions (`FUNCTION(…)`, `now()`, `count:(…)`),
    /// `SUBQUERY`, index expressions (`[FIRST]`, `[SIZE]`) and `**` are not supported and give a
    /// syntax error saying so.
    ///
    /// - Throws: `GraftError.syntaxError` whose context holds `.offset(n)`, the offset in characters of
    ///   the problem, and whose message shows the text with a caret under it.
    public static func parse(_ format: String, arguments: [Any?] = []) throws -> GraftPredicate {
        var parser = try PredicateParser(format, arguments: arguments)
        let predicate = try parser.parsePredicate()
        try parser.finish()
        return predicate
    }
}

extension GraftPredicate.Expression {
    /// Parses one expression in the predicate format: `employees.@count`, `$FETCH_SOURCE.hireDate`,
    /// `salary * 12`.
    ///
    /// - Throws: `GraftError.syntaxError` with the offset of the problem.
    public static func parse(_ format: String, arguments: [Any?] = []) throws -> GraftPredicate.Expression {
        var parser = try PredicateParser(format, arguments: arguments)
        let expression = try parser.parseExpression()
        try parser.finish()
        return expression
    }
}

/// A recursive-descent parser over the lexer's tokens.
struct PredicateParser {
    private let tokens: [PredicateToken]
    private var index = 0
    private let arguments: [Any?]
    private var argumentIndex = 0
    private let errors: SyntaxErrorFactory
    private var depth = 0
    private static let maximumDepth = 200

    init(_ text: String, arguments: [Any?]) throws {
        errors = SyntaxErrorFactory(text: text, subject: "predicate")
        tokens = try PredicateLexer.tokenize(text, errors: errors)
        self.arguments = arguments
    }

    private var token: PredicateToken { tokens[index] }
    private var nextToken: PredicateToken { tokens[min(index + 1, tokens.count - 1)] }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func error(_ message: String, at token: PredicateToken) -> GraftError {
        errors.error(message, at: token.offset)
    }

    private mutating func expectPunctuation(_ character: Character, _ purpose: String) throws {
        guard token.isPunctuation(character) else {
            throw error("expected '\(character)' \(purpose), found \(token.quoted)", at: token)
        }
        advance()
    }

    /// Checks that nothing follows and every argument was used.
    mutating func finish() throws {
        guard token.kind == .end else {
            let message: String
            if token.isPunctuation(")") {
                message = "unbalanced ')': there is no '(' for it to close"
            } else {
                message = "unexpected \(token.quoted) after the end of the predicate"
            }
            throw error(message, at: token)
        }
        if argumentIndex < arguments.count {
            throw error(
                "\(arguments.count) format arguments were given but the format uses only \(argumentIndex)", at: token)
        }
    }

    private mutating func nested<T>(_ body: (inout PredicateParser) throws -> T) throws -> T {
        depth += 1
        defer { depth -= 1 }
        if depth > Self.maximumDepth {
            throw error("the predicate is nested more than \(Self.maximumDepth) levels deep", at: token)
        }
        return try body(&self)
    }

    // MARK: Predicates

    mutating func parsePredicate() throws -> GraftPredicate {
        var terms = [try parseAnd()]
        while token.isKeyword("OR") || token.isSymbol("||") {
            advance()
            terms.append(try parseAnd())
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func parseAnd() throws -> GraftPredicate {
        var terms = [try parseNot()]
        while token.isKeyword("AND") || token.isSymbol("&&") {
            advance()
            terms.append(try parseNot())
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func parseNot() throws -> GraftPredicate {
        if token.isKeyword("NOT") || token.isSymbol("!") {
            advance()
            return .not(try nested { try $0.parseNot() })
        }
        return try parsePrimaryPredicate()
    }

    private mutating func parsePrimaryPredicate() throws -> GraftPredicate {
        if token.isKeyword("TRUEPREDICATE") {
            advance()
            return .truePredicate
        }
        if token.isKeyword("FALSEPREDICATE") {
            advance()
            return .falsePredicate
        }
        guard token.isPunctuation("(") else { return try parseComparison() }

        // "(" opens either a group of predicates or an expression such as "(a + b) * 2 > c". Try the
        // group first; if it fails, or an operator follows its ")", read a comparison instead.
        let mark = (index, argumentIndex)
        let open = token
        var groupError: GraftError
        do {
            advance()
            let inner = try nested { try $0.parsePredicate() }
            try expectPunctuation(")", "to close the '(' at offset \(open.offset)")
            if !continuesExpression(token) { return inner }
            groupError = error("expected a predicate", at: open)
        } catch let failure as GraftError {
            groupError = failure
        }
        (index, argumentIndex) = mark
        do {
            return try nested { try $0.parseComparison() }
        } catch let failure as GraftError {
            // Report whichever reading got further: that is where the text stops making sense.
            throw offset(of: failure) >= offset(of: groupError) ? failure : groupError
        }
    }

    private func offset(of error: GraftError) -> Int {
        for case .offset(let offset) in error.context { return offset }
        return 0
    }

    /// Whether `token` can only continue an expression (so a parenthesized group before it was one).
    private func continuesExpression(_ token: PredicateToken) -> Bool {
        if comparisonOperator(token) != nil { return true }
        if case .symbol(let symbol) = token.kind { return ["+", "-", "*", "/"].contains(symbol) }
        return token.isPunctuation(".") || token.isPunctuation("[")
    }

    private mutating func parseComparison() throws -> GraftPredicate {
        var modifier = GraftPredicate.Modifier.direct
        switch token.keyword {
        case "ANY", "SOME": modifier = .any
        case "ALL": modifier = .all
        case "NONE": modifier = .none
        default: break
        }
        if modifier != .direct { advance() }

        let leftToken = token
        let left = try parseExpression()
        let operatorToken = token
        guard let op = comparisonOperator(token) else {
            if token.kind == .end {
                throw error(
                    "expected a comparison operator (==, !=, <, >, BEGINSWITH, IN, …) after the expression, "
                        + "found the end of the text", at: token)
            }
            if token.isPunctuation("("), case .keyPath = left {
                throw error("function expressions are not supported", at: leftToken)
            }
            throw error(
                "expected a comparison operator (==, !=, <, >, BEGINSWITH, CONTAINS, LIKE, MATCHES, IN, BETWEEN), "
                    + "found \(token.quoted)", at: token)
        }
        advance()
        let options = try parseOptions()
        if token.kind == .end {
            throw error("expected an expression after '\(operatorToken.text)', found the end of the text", at: token)
        }
        let rightToken = token
        let right = try parseExpression()

        switch (op, right) {
        case (.between, .aggregate(let bounds)) where bounds.count != 2:
            throw error("BETWEEN needs two bounds, as in {low, high}, but found \(bounds.count)", at: rightToken)
        case (.matches, .constant(.string(let pattern))):
            do {
                _ = try RegularExpressionCache.shared.expression(pattern, options: options)
            } catch {
                throw self.error("invalid regular expression for MATCHES: \(error)", at: rightToken)
            }
        default: break
        }
        return .comparison(GraftPredicate.Comparison(left, op, right, modifier: modifier, options: options))
    }

    private func comparisonOperator(_ token: PredicateToken) -> GraftPredicate.Operator? {
        switch token.kind {
        case .symbol("=="), .symbol("="): return .equalTo
        case .symbol("!="), .symbol("<>"): return .notEqualTo
        case .symbol("<"): return .lessThan
        case .symbol("<="), .symbol("=<"): return .lessThanOrEqualTo
        case .symbol(">"): return .greaterThan
        case .symbol(">="), .symbol("=>"): return .greaterThanOrEqualTo
        default: break
        }
        switch token.keyword {
        case "BEGINSWITH": return .beginsWith
        case "ENDSWITH": return .endsWith
        case "CONTAINS": return .contains
        case "LIKE": return .like
        case "MATCHES": return .matches
        case "IN": return .in
        case "BETWEEN": return .between
        default: return nil
        }
    }

    private mutating func parseOptions() throws -> ComparisonOptions {
        guard token.isPunctuation("[") else { return [] }
        advance()
        guard case .identifier(let letters, escaped: false) = token.kind else {
            throw error("expected comparison options such as c, d or cd inside '[ ]', found \(token.quoted)", at: token)
        }
        var options: ComparisonOptions = []
        for (offset, letter) in letters.enumerated() {
            switch letter {
            case "c", "C": options.insert(.caseInsensitive)
            case "d", "D": options.insert(.diacriticInsensitive)
            case "n", "N": options.insert(.normalized)
            case "l", "L":
                throw errors.error("the locale-sensitive option 'l' is not supported", at: token.offset + offset)
            default:
                throw errors.error(
                    "unknown comparison option '\(letter)' (expected c, d or n)", at: token.offset + offset)
            }
        }
        advance()
        try expectPunctuation("]", "to close the comparison options")
        return options
    }

    // MARK: Expressions

    mutating func parseExpression() throws -> GraftPredicate.Expression {
        try nested { try $0.parseAdditive() }
    }

    private mutating func parseAdditive() throws -> GraftPredicate.Expression {
        var left = try parseMultiplicative()
        while case .symbol(let symbol) = token.kind, symbol == "+" || symbol == "-" {
            advance()
            left = .arithmetic(symbol == "+" ? .add : .subtract, left, try parseMultiplicative())
        }
        return left
    }

    private mutating func parseMultiplicative() throws -> GraftPredicate.Expression {
        var left = try parseUnary()
        while case .symbol(let symbol) = token.kind, symbol == "*" || symbol == "/" {
            advance()
            if token.isSymbol("*") { throw error("the power operator ** is not supported", at: token) }
            left = .arithmetic(symbol == "*" ? .multiply : .divide, left, try parseUnary())
        }
        return left
    }

    private mutating func parseUnary() throws -> GraftPredicate.Expression {
        guard token.isSymbol("-") else { return try parsePostfix() }
        advance()
        if case .number(let text) = token.kind {
            let numberToken = token
            advance()
            return .constant(try number(text, negative: true, at: numberToken))
        }
        if token.kind == .end {
            throw error("expected an expression after '-', found the end of the text", at: token)
        }
        return .arithmetic(.subtract, .constant(.integer(0)), try nested { try $0.parseUnary() })
    }

    private mutating func parsePostfix() throws -> GraftPredicate.Expression {
        var expression = try parsePrimaryExpression()
        while token.isPunctuation(".") {
            advance()
            let tail = try parseKeyPathTail()
            switch expression {
            case .keyPath(let path): expression = .keyPath(KeyValuePath(components: path.components + tail))
            case .evaluatedObject: expression = .keyPath(KeyValuePath(components: [.identity] + tail))
            case .member(let base, let path):
                expression = .member(base, KeyValuePath(components: path.components + tail))
            default: expression = .member(expression, KeyValuePath(components: tail))
            }
        }
        if token.isPunctuation("[") {
            throw error("index expressions such as [FIRST], [LAST], [SIZE] or [0] are not supported", at: token)
        }
        return expression
    }

    /// One key-path component after a dot.
    private mutating func parseKeyPathTail() throws -> [KeyValuePath.Component] {
        switch token.kind {
        case .identifier(let name, let escaped):
            advance()
            if !escaped && name.uppercased() == "SELF" { return [.identity] }
            return [.key(name)]
        case .collectionOperator(let name):
            let operatorToken = token
            advance()
            return [.collectionOperator(try collectionOperator(name, at: operatorToken))]
        default:
            throw error("expected a key or a collection operator after '.', found \(token.quoted)", at: token)
        }
    }

    private func collectionOperator(
        _ name: String, at token: PredicateToken
    ) throws -> KeyValuePath.CollectionOperator {
        guard let op = KeyValuePath.CollectionOperator(name: name) else {
            throw error(KeyValuePath.CollectionOperator.unknownMessage("@" + name), at: token)
        }
        return op
    }

    private mutating func parsePrimaryExpression() throws -> GraftPredicate.Expression {
        let start = token
        switch start.kind {
        case .number(let text):
            advance()
            return .constant(try number(text, negative: false, at: start))
        case .string(let text):
            advance()
            return .constant(.string(text))
        case .variable(let name):
            advance()
            return .variable(name)
        case .collectionOperator(let name):
            advance()
            return .keyPath(KeyValuePath(components: [.collectionOperator(try collectionOperator(name, at: start))]))
        case .identifier(let name, escaped: true):
            advance()
            return .keyPath(KeyValuePath(components: [.key(name)]))
        case .identifier(let name, escaped: false):
            return try parseWord(name, at: start)
        case .format(let specifier):
            advance()
            return try formatArgument(specifier, at: start)
        case .punctuation("{"):
            advance()
            var elements: [GraftPredicate.Expression] = []
            if !token.isPunctuation("}") {
                elements.append(try parseExpression())
                while token.isPunctuation(",") {
                    advance()
                    elements.append(try parseExpression())
                }
            }
            try expectPunctuation("}", "to close the '{' at offset \(start.offset)")
            return .aggregate(elements)
        case .punctuation("("):
            advance()
            let inner = try parseExpression()
            try expectPunctuation(")", "to close the '(' at offset \(start.offset)")
            return inner
        case .end:
            throw error("expected an expression, found the end of the text", at: start)
        default:
            throw error("expected an expression, found \(start.quoted)", at: start)
        }
    }

    /// A name in expression position: a literal keyword, `SELF`, `CAST(…)`, or the first key of a path.
    private mutating func parseWord(_ name: String, at start: PredicateToken) throws -> GraftPredicate.Expression {
        let upper = name.uppercased()
        switch upper {
        case "NIL", "NULL":
            advance()
            return .null
        case "TRUE", "YES":
            advance()
            return .constant(.bool(true))
        case "FALSE", "NO":
            advance()
            return .constant(.bool(false))
        case "SELF":
            advance()
            return .evaluatedObject
        case "CAST":
            advance()
            return try parseCast(at: start)
        case "SUBQUERY":
            throw error("SUBQUERY is not supported", at: start)
        case "FUNCTION":
            throw error("function expressions are not supported", at: start)
        case "FIRST", "LAST", "SIZE":
            throw error("index expressions such as [\(upper)] are not supported; write #\(name) for a key", at: start)
        default:
            if PredicateKeyword.isReserved(name) {
                throw error(
                    "expected an expression, found the reserved word '\(name)' (write #\(name) to use it as a key)",
                    at: start)
            }
        }
        if nextToken.isPunctuation("(") || nextToken.isPunctuation(":") {
            throw error("function expressions such as \(name)(…) are not supported", at: start)
        }
        advance()
        return .keyPath(KeyValuePath(components: [.key(name)]))
    }

    private mutating func parseCast(at start: PredicateToken) throws -> GraftPredicate.Expression {
        try expectPunctuation("(", "after CAST")
        let valueToken = token
        let value = try parseExpression()
        try expectPunctuation(",", "between CAST's value and its type")
        guard case .string(let typeName) = token.kind else {
            throw error(
                "expected a type name such as \"NSDate\" as CAST's second argument, found \(token.quoted)", at: token)
        }
        let typeToken = token
        advance()
        try expectPunctuation(")", "to close the CAST at offset \(start.offset)")
        let constant: Value?
        switch value {
        case .constant(let value): constant = value
        default: constant = nil
        }
        guard let constant else {
            throw error("CAST converts only constants, as in CAST(600000000, \"NSDate\")", at: valueToken)
        }
        do {
            return .constant(try Self.cast(constant, to: typeName))
        } catch let failure as CastFailure {
            throw error(failure.text, at: failure.badType ? typeToken : valueToken)
        }
    }

    private struct CastFailure: Error {
        var text: String
        var badType = false
    }

    private static func cast(_ value: Value, to typeName: String) throws -> Value {
        func fail(_ what: String) -> CastFailure {
            CastFailure(text: "CAST to \(typeName) needs \(what), found \(GraftPredicate.Expression.format(value))")
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
            if case .string(let text) = value, let decimal = Self.decimal(text) { return .decimal(decimal) }
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
            throw CastFailure(
                text: "CAST to \"\(typeName)\" is not supported (NSDate, NSUUID, NSNumber, NSDecimalNumber, "
                    + "NSString, NSData, NSURL)", badType: true)
        }
    }

    /// Decimal text, all of it: Foundation's parser stops quietly at the first character it does not read.
    private static func decimal(_ text: String) -> Decimal? {
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

    private func number(_ text: String, negative: Bool, at token: PredicateToken) throws -> Value {
        let lowered = text.lowercased()
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where lowered.hasPrefix(prefix) {
            guard let magnitude = UInt64(lowered.dropFirst(2), radix: radix) else {
                throw error("the integer \(text) does not fit in 64 bits", at: token)
            }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else {
                    throw error("the integer -\(text) does not fit in 64 bits", at: token)
                }
                return .integer(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
            }
            guard let value = Int64(exactly: magnitude) else {
                throw error("the integer \(text) does not fit in a signed 64-bit integer", at: token)
            }
            return .integer(value)
        }
        let signed = negative ? "-" + text : text
        if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            if let integer = Int64(signed) { return .integer(integer) }
            // Larger than 64 bits: keep every digit.
            if let decimal = Decimal(string: signed, locale: posixLocale) { return .decimal(decimal) }
        }
        guard let double = Double(signed) else { throw error("malformed number '\(signed)'", at: token) }
        return .double(double)
    }

    // MARK: Format arguments

    private mutating func formatArgument(
        _ specifier: String, at token: PredicateToken
    ) throws -> GraftPredicate.Expression {
        guard argumentIndex < arguments.count else {
            throw error(
                "the format uses more arguments than the \(arguments.count) given (%\(specifier) is number "
                    + "\(argumentIndex + 1))", at: token)
        }
        let argument = unwrapped(arguments[argumentIndex])
        argumentIndex += 1
        func mismatch(_ expected: String) -> GraftError {
            error(
                "%\(specifier) needs \(expected), but argument \(argumentIndex) is "
                    + Operand(argument).kindDescription,
                at: token)
        }
        switch specifier {
        case "@":
            do {
                return try GraftPredicate.Expression(value: argument)
            } catch let failure as GraftError {
                throw error("argument \(argumentIndex) for %@: \(failure.message)", at: token)
            }
        case "K":
            let path: KeyValuePath
            switch argument {
            case let text as String:
                do {
                    path = try KeyValuePath(parsing: text)
                } catch let failure as GraftError {
                    throw error(
                        "the %K argument \"\(text)\" is not a key path: "
                            + (failure.message.split(separator: "\n").first.map(String.init) ?? ""), at: token)
                }
            case let given as KeyValuePath: path = given
            default: throw mismatch("a key path string")
            }
            return .keyPath(path)
        case "s":
            guard let text = argument as? String else { throw mismatch("a String") }
            return .constant(.string(text))
        case "f", "lf", "g", "e":
            guard let number = Operand(argument).number else { throw mismatch("a number") }
            return .constant(.double(number.doubleValue))
        default:
            switch Operand(argument).number {
            case .integer(let value): return .constant(.integer(value))
            case .double(let value) where value.rounded() == value && abs(value) < 9.2e18:
                return .constant(.integer(Int64(value)))
            default: throw mismatch("an integer")
            }
        }
    }
}
