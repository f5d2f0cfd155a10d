import GraftCore

/// One token of predicate-format text.
struct PredicateToken {
    enum Kind: Equatable {
        /// A name: a key, a keyword (`AND`, `BEGINSWITH`, `nil`), or with `escaped` a `#name` that is
        /// always a key.
        case identifier(String, escaped: Bool)
        /// Number text as written, without a sign: `42`, `3.5e2`, `0x1F`.
        case number(String)
        /// A string literal, escapes resolved.
        case string(String)
        /// `$NAME`, without the `$`.
        case variable(String)
        /// `@count`, without the `@`.
        case collectionOperator(String)
        /// `%@`, `%K`, `%d`, …, without the `%`.
        case format(String)
        /// `( ) { } [ ] , . :`
        case punctuation(Character)
        /// `==`, `!=`, `<`, `&&`, `!`, `+`, … as written.
        case symbol(String)
        case end
    }

    var kind: Kind
    /// Offset of the first character, in characters from the start of the text.
    var offset: Int
    /// The text as written.
    var text: String

    /// The token for messages: `'FOO'`, `the end of the predicate`.
    var quoted: String {
        if case .end = kind { return "the end of the text" }
        return "'\(text)'"
    }

    func isKeyword(_ word: String) -> Bool {
        if case .identifier(let name, escaped: false) = kind {
            return name.count == word.count && name.uppercased() == word
        }
        return false
    }

    var keyword: String? {
        if case .identifier(let name, escaped: false) = kind { return name.uppercased() }
        return nil
    }

    func isSymbol(_ symbol: String) -> Bool { kind == .symbol(symbol) }
    func isPunctuation(_ character: Character) -> Bool { kind == .punctuation(character) }
}

/// Splits predicate-format text into tokens.
struct PredicateLexer {
    private let characters: [Character]
    private var position = 0
    private let errors: SyntaxErrorFactory

    /// The symbols the format knows, longest first so that `<=` wins over `<`.
    private static let symbols = [
        "==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", "=", "<", ">", "!", "+",
        "-", "*", "/",
    ]
    private static let symbolCharacters: Set<Character> = ["=", "!", "<", ">", "&", "|", "~", "^"]
    private static let formatSpecifiers = [
        "@", "K", "d", "i", "u", "ld", "li", "lu", "lld", "lli", "llu", "hd",
        "hi", "hu", "f", "lf", "g", "e", "s",
    ]

    init(_ text: String, errors: SyntaxErrorFactory) {
        self.characters = Array(text)
        self.errors = errors
    }

    static func tokenize(_ text: String, errors: SyntaxErrorFactory) throws -> [PredicateToken] {
        var lexer = PredicateLexer(text, errors: errors)
        var tokens: [PredicateToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private var current: Character? { position < characters.count ? characters[position] : nil }

    private func peek(_ ahead: Int = 1) -> Character? {
        position + ahead < characters.count ? characters[position + ahead] : nil
    }

    private func text(from start: Int) -> String { String(characters[start..<position]) }

    private static func startsName(_ character: Character) -> Bool { character.isLetter || character == "_" }
    private static func continuesName(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_"
    }

    private mutating func name() -> String {
        let start = position
        while let character = current, Self.continuesName(character) { position += 1 }
        return text(from: start)
    }

    mutating func next() throws -> PredicateToken {
        while let character = current, character.isWhitespace { position += 1 }
        let start = position
        guard let character = current else { return PredicateToken(kind: .end, offset: start, text: "") }
        func token(_ kind: PredicateToken.Kind) -> PredicateToken {
            PredicateToken(kind: kind, offset: start, text: text(from: start))
        }

        if Self.startsName(character) {
            return token(.identifier(name(), escaped: false))
        }
        if character.isASCII, character.isNumber {
            return token(.number(try number()))
        }
        switch character {
        case "\"", "'":
            return token(.string(try string(quote: character)))
        case "#", "$", "@":
            position += 1
            guard let next = current, Self.startsName(next) else {
                let what = character == "#" ? "a key" : character == "$" ? "a variable name" : "an operator name"
                throw errors.error("expected \(what) after '\(character)'", at: start)
            }
            let word = name()
            switch character {
            case "#": return token(.identifier(word, escaped: true))
            case "$": return token(.variable(word))
            default: return token(.collectionOperator(word))
            }
        case "%":
            position += 1
            for specifier in Self.formatSpecifiers.sorted(by: { $0.count > $1.count })
            where characters[position...].starts(with: specifier) {
                position += specifier.count
                return token(.format(specifier))
            }
            throw errors.error(
                "unknown format specifier '%\(current.map(String.init) ?? "")' "
                    + "(expected %@, %K, %d, %i, %ld, %f or %s)",
                at: start)
        case "(", ")", "{", "}", "[", "]", ",", ".", ":":
            position += 1
            return token(.punctuation(character))
        case "*" where peek() == "*":
            position += 2
            return token(.symbol("**"))
        case "+", "-", "*", "/":
            position += 1
            return token(.symbol(String(character)))
        case _ where Self.symbolCharacters.contains(character):
            for symbol in Self.symbols where characters[position...].starts(with: symbol) {
                position += symbol.count
                return token(.symbol(symbol))
            }
            while let next = current, Self.symbolCharacters.contains(next) { position += 1 }
            throw errors.error("unknown operator '\(text(from: start))'", at: start)
        default:
            throw errors.error("unexpected character '\(character)'", at: start)
        }
    }

    private mutating func number() throws -> String {
        let start = position
        if current == "0", let prefix = peek(), "xXoObB".contains(prefix) {
            position += 2
            let digits: (Character) -> Bool
            switch prefix {
            case "x", "X": digits = { $0.isHexDigit }
            case "o", "O": digits = { ("0"..."7").contains($0) }
            default: digits = { $0 == "0" || $0 == "1" }
            }
            let digitsStart = position
            while let character = current, digits(character) { position += 1 }
            if position == digitsStart {
                throw errors.error("expected digits after '\(text(from: start))'", at: start)
            }
        } else {
            skipDigits()
            if current == ".", let next = peek(), next.isASCII, next.isNumber {
                position += 1
                skipDigits()
            }
            if current == "e" || current == "E" {
                let mark = position
                position += 1
                if current == "+" || current == "-" { position += 1 }
                if let next = current, next.isASCII, next.isNumber {
                    skipDigits()
                } else {
                    position = mark
                }
            }
        }
        if let next = current, Self.continuesName(next) {
            throw errors.error("malformed number '\(text(from: start))\(next)'", at: start)
        }
        return text(from: start)
    }

    private mutating func skipDigits() {
        while let character = current, character.isASCII, character.isNumber { position += 1 }
    }

    private mutating func string(quote: Character) throws -> String {
        let start = position
        position += 1
        var result = ""
        while let character = current {
            position += 1
            if character == quote { return result }
            guard character == "\\" else {
                result.append(character)
                continue
            }
            guard let escaped = current else { break }
            position += 1
            switch escaped {
            case "n": result.append("\n")
            case "r": result.append("\r")
            case "t": result.append("\t")
            case "0": result.append("\0")
            case "u":
                let digitsStart = position
                while position < digitsStart + 4, let digit = current, digit.isHexDigit { position += 1 }
                guard position == digitsStart + 4, let value = UInt32(text(from: digitsStart), radix: 16),
                    let scalar = Unicode.Scalar(value)
                else {
                    throw errors.error("expected four hexadecimal digits after \\u", at: digitsStart - 2)
                }
                result.unicodeScalars.append(scalar)
            default: result.append(escaped)
            }
        }
        throw errors.error("unterminated string: no closing \(quote) for the one at offset \(start)", at: start)
    }
}
