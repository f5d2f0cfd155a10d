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
    /// - function expressions: the built-in functions `name:(arguments)` and `now()` (``PredicateFunction``),
    ///   `FUNCTION(receiver, "selector", arguments…)`, `SUBQUERY(collection, $x, predicate)`, index forms
    ///   `collection[FIRST]`, `[LAST]`, `[SIZE]`, `[n]`, `CAST(expression, "type")` of a key path,
    ///   `TERNARY(predicate, a, b)`, `FETCH(request, context, NO)` (parsed and printed, not evaluated), and
    ///   `**` (a power).
    ///
    /// Keywords are case-insensitive; function names are matched exactly, as Foundation's selectors are.
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
        if case .symbol(let symbol) = token.kind { return ["+", "-", "*", "/", "**"].contains(symbol) }
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

        let left = try parseExpression()
        let operatorToken = token
        guard let op = comparisonOperator(token) else {
            if token.kind == .end {
                throw error(
                    "expected a comparison operator (==, !=, <, >, BEGINSWITH, IN, …) after the expression, "
                        + "found the end of the text", at: token)
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
            } catch let problem as RegularExpressionProblem {
                throw self.error(problem.description, at: rightToken)
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
        var left = try parsePower()
        while case .symbol(let symbol) = token.kind, symbol == "*" || symbol == "/" {
            advance()
            if symbol == "*" && token.isSymbol("*") {
                throw error(
                    "expected an expression after '*', found '*' (write ** without a space for a power)", at: token)
            }
            left = .arithmetic(symbol == "*" ? .multiply : .divide, left, try parsePower())
        }
        return left
    }

    /// `a ** b`, binding tighter than `*` and to the right: `2 ** 3 ** 2` is `2 ** 9`.
    private mutating func parsePower() throws -> GraftPredicate.Expression {
        let base = try parseUnary()
        guard token.isSymbol("**") else { return base }
        advance()
        return .arithmetic(.power, base, try nested { try $0.parsePower() })
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
        while token.isPunctuation(".") || token.isPunctuation("[") {
            if token.isPunctuation("[") {
                expression = .index(expression, try parseIndex())
                continue
            }
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
            return try parseSubquery(at: start)
        case "FUNCTION":
            return try parseMethod(at: start)
        case "FETCH" where nextToken.isPunctuation("("):
            return try parseFetch(at: start)
        case "TERNARY" where nextToken.isPunctuation("("):
            return try parseTernary(at: start)
        case "FIRST", "LAST", "SIZE":
            throw error(
                "[\(upper)] selects from a collection, as in employees[\(upper)]; write #\(name) for a key", at: start)
        default:
            if PredicateKeyword.isReserved(name) {
                throw error(
                    "expected an expression, found the reserved word '\(name)' (write #\(name) to use it as a key)",
                    at: start)
            }
        }
        if nextToken.isPunctuation("(") || nextToken.isPunctuation(":") {
            return try parseFunction(name, at: start)
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
        do {
            guard case .constant(let constant) = value else {
                // A value known only at evaluation: check the type now, convert then.
                _ = try PredicateCast.cast(Operand.null, to: typeName)
                return .cast(value, typeName)
            }
            return .constant(try PredicateCast.cast(constant, to: typeName))
        } catch let failure as PredicateCast.Failure {
            throw error(failure.text, at: failure.badType ? typeToken : valueToken)
        }
    }

    /// `name(…)` or `name:part:(…)` after its first word: one of the built-in functions.
    private mutating func parseFunction(_ first: String, at start: PredicateToken) throws -> GraftPredicate.Expression {
        var name = first
        advance()
        while token.isPunctuation(":") {
            name += ":"
            advance()
            if case .identifier(let part, escaped: false) = token.kind, nextToken.isPunctuation(":") {
                name += part
                advance()
            }
        }
        guard let function = PredicateFunction(name: name) else {
            throw error(
                "unknown function '\(name)' (the predicate format's functions are "
                    + PredicateFunction.allCases.map(\.name).joined(separator: ", ") + ")", at: start)
        }
        let open = token
        try expectPunctuation("(", "after the function name \(name)")
        let arguments = try parseArguments(closing: open)
        guard arguments.count == function.arity else {
            throw error(
                "\(name) takes \(Wording.counted(function.arity, "argument")), but \(arguments.count) were given",
                at: start)
        }
        return .function(function, arguments)
    }

    /// Comma-separated expressions up to the `)` that closes `open`.
    private mutating func parseArguments(closing open: PredicateToken) throws -> [GraftPredicate.Expression] {
        var arguments: [GraftPredicate.Expression] = []
        if !token.isPunctuation(")") {
            arguments.append(try parseExpression())
            while token.isPunctuation(",") {
                advance()
                arguments.append(try parseExpression())
            }
        }
        try expectPunctuation(")", "to close the '(' at offset \(open.offset)")
        return arguments
    }

    /// `FUNCTION(receiver, "selector", arguments…)`.
    private mutating func parseMethod(at start: PredicateToken) throws -> GraftPredicate.Expression {
        advance()
        let open = token
        try expectPunctuation("(", "after FUNCTION")
        let receiver = try parseExpression()
        try expectPunctuation(",", "between FUNCTION's receiver and its selector")
        guard case .string(let selector) = token.kind, !selector.isEmpty else {
            throw error(
                "expected a selector name such as \"uppercaseString\" in quotes, found \(token.quoted)", at: token)
        }
        advance()
        var arguments: [GraftPredicate.Expression] = []
        if token.isPunctuation(",") {
            advance()
            arguments = try parseArguments(closing: open)
        } else {
            try expectPunctuation(")", "to close the FUNCTION at offset \(open.offset)")
        }
        return .method(receiver, selector, arguments)
    }

    /// `FETCH(request, context, countOnly)`, the last a Boolean constant.
    private mutating func parseFetch(at start: PredicateToken) throws -> GraftPredicate.Expression {
        advance()
        let open = token
        try expectPunctuation("(", "after FETCH")
        let request = try parseExpression()
        try expectPunctuation(",", "between FETCH's request and its context")
        let context = try parseExpression()
        try expectPunctuation(",", "between FETCH's context and its count-only flag")
        let flagToken = token
        guard case .constant(.bool(let countOnly)) = try parseExpression() else {
            throw error(
                "expected YES or NO as FETCH's third argument (count only), found \(flagToken.quoted)", at: flagToken)
        }
        try expectPunctuation(")", "to close the FETCH at offset \(open.offset)")
        return .fetch(request, context: context, countOnly: countOnly)
    }

    /// `SUBQUERY(collection, $x, predicate)`.
    private mutating func parseSubquery(at start: PredicateToken) throws -> GraftPredicate.Expression {
        advance()
        let open = token
        try expectPunctuation("(", "after SUBQUERY")
        let collection = try parseExpression()
        try expectPunctuation(",", "after SUBQUERY's collection")
        guard case .variable(let variable) = token.kind else {
            throw error(
                "expected a variable such as $x as SUBQUERY's second argument, found \(token.quoted)", at: token)
        }
        advance()
        try expectPunctuation(",", "after SUBQUERY's variable")
        let predicate = try nested { try $0.parsePredicate() }
        try expectPunctuation(")", "to close the SUBQUERY at offset \(open.offset)")
        return .subquery(collection, variable: variable, predicate: predicate)
    }

    /// `TERNARY(predicate, a, b)`.
    private mutating func parseTernary(at start: PredicateToken) throws -> GraftPredicate.Expression {
        advance()
        let open = token
        try expectPunctuation("(", "after TERNARY")
        let condition = try nested { try $0.parsePredicate() }
        try expectPunctuation(",", "after TERNARY's condition")
        let whenTrue = try parseExpression()
        try expectPunctuation(",", "after TERNARY's first value")
        let whenFalse = try parseExpression()
        try expectPunctuation(")", "to close the TERNARY at offset \(open.offset)")
        return .ternary(condition, whenTrue, whenFalse)
    }

    /// `[FIRST]`, `[LAST]`, `[SIZE]` or `[expression]` after an expression.
    private mutating func parseIndex() throws -> GraftPredicate.IndexSelector {
        let open = token
        advance()
        let selector: GraftPredicate.IndexSelector
        switch token.keyword {
        case "FIRST" where nextToken.isPunctuation("]"):
            selector = .first
            advance()
        case "LAST" where nextToken.isPunctuation("]"):
            selector = .last
            advance()
        case "SIZE" where nextToken.isPunctuation("]"):
            selector = .size
            advance()
        default:
            if token.isPunctuation("]") {
                throw error("expected FIRST, LAST, SIZE or an index inside '[ ]'", at: token)
            }
            selector = .at(try parseExpression())
        }
        try expectPunctuation("]", "to close the '[' at offset \(open.offset)")
        return selector
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
