/// Makes strings that match a regular expression, for attributes with a pattern
/// (`regularExpressionString`): Core Data checks a value against it as a whole (`MATCHES`), in ICU's
/// syntax.
///
/// Handled: literals and escapes (`\.`, `\t`, `\u00e9`, `\x41`), `.`, classes (`[a-z0-9_]`, `[^@ ]`,
/// `\d \w \s` and their negations, `\p{L}`, `\p{Lu}`, `\p{Ll}`, `\p{N}`), groups (plain, `(?:…)`, named),
/// alternation, the quantifiers `* + ? {n} {n,} {n,m}` (lazy and possessive forms alike), and `^` / `$`
/// at the ends. Refused, with the construct named: lookaround, backreferences, word boundaries, class
/// intersections and POSIX classes. Negated classes draw from printable ASCII.
struct PatternGenerator: Sendable {
    struct Unsupported: Error, Equatable {
        let reason: String
    }

    private indirect enum Node: Sendable {
        case characters(CharacterSet, negated: Bool)
        case sequence([Node])
        case choice([Node])
        case repeated(Node, min: Int, max: Int?)
    }

    /// Scalar ranges, inclusive.
    private typealias CharacterSet = [ClosedRange<UInt32>]

    private let root: Node
    let pattern: String

    init(_ pattern: String) throws {
        self.pattern = pattern
        var parser = Parser(scalars: Array(pattern.unicodeScalars))
        root = try parser.parseAll()
    }

    /// A matching string; `stretch` is how many more repetitions than its minimum an unbounded
    /// quantifier may take.
    func string(_ random: inout FixtureRandom, stretch: Int = 4) throws -> String {
        var scalars = String.UnicodeScalarView()
        try generate(root, &random, stretch: stretch, into: &scalars)
        return String(scalars)
    }

    private func generate(
        _ node: Node, _ random: inout FixtureRandom, stretch: Int, into out: inout String.UnicodeScalarView
    ) throws {
        switch node {
        case .characters(let set, let negated):
            out.append(try Self.draw(from: set, negated: negated, &random))
        case .sequence(let nodes):
            for node in nodes { try generate(node, &random, stretch: stretch, into: &out) }
        case .choice(let options):
            try generate(random.pick(options), &random, stretch: stretch, into: &out)
        case .repeated(let node, let low, let high):
            let top = high ?? (low + stretch)
            let count = random.int(in: low...max(low, top))
            for _ in 0..<count { try generate(node, &random, stretch: stretch, into: &out) }
        }
    }

    private static let printable: CharacterSet = [0x20...0x7e]

    private static func draw(
        from set: CharacterSet, negated: Bool, _ random: inout FixtureRandom
    ) throws
        -> Unicode.Scalar
    {
        var ranges = set
        if negated {
            // Printable ASCII outside the set (letters and digits first, so that values stay plain).
            let allowed = (0x20...0x7e).filter { code in !set.contains { $0.contains(UInt32(code)) } }
            let plain = allowed.filter {
                (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0)
            }
            let pool = plain.isEmpty ? allowed : plain
            guard !pool.isEmpty else { throw Unsupported(reason: "a negated class that leaves no printable character") }
            return Unicode.Scalar(UInt32(random.pick(pool)))!
        }
        ranges = ranges.filter { range in (range.lowerBound...range.upperBound).contains { Unicode.Scalar($0) != nil } }
        guard !ranges.isEmpty else { throw Unsupported(reason: "an empty class") }
        let total = ranges.reduce(UInt64(0)) { $0 + UInt64($1.count) }
        var pick = random.next() % total
        for range in ranges {
            if pick < UInt64(range.count) {
                let code = range.lowerBound + UInt32(pick)
                return Unicode.Scalar(code) ?? Unicode.Scalar(range.lowerBound)!
            }
            pick -= UInt64(range.count)
        }
        return Unicode.Scalar(ranges[0].lowerBound)!
    }

    // MARK: - Parsing

    private struct Parser {
        let scalars: [Unicode.Scalar]
        var position = 0

        init(scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var atEnd: Bool { position >= scalars.count }
        var current: Unicode.Scalar? { atEnd ? nil : scalars[position] }

        mutating func parseAll() throws -> Node {
            let node = try parseChoice()
            if !atEnd { throw Unsupported(reason: "an unbalanced ')' at character \(position + 1)") }
            return node
        }

        mutating func parseChoice() throws -> Node {
            var options = [try parseSequence()]
            while current == "|" {
                position += 1
                options.append(try parseSequence())
            }
            return options.count == 1 ? options[0] : .choice(options)
        }

        mutating func parseSequence() throws -> Node {
            var items: [Node] = []
            while let scalar = current, scalar != "|", scalar != ")" {
                if scalar == "^" || scalar == "$" {
                    // Whole-string matching makes anchors at the ends mean nothing more.
                    let atStart =
                        items.isEmpty
                        && (position == 0 || scalars[position - 1] == "(" || scalars[position - 1] == "|"
                            || scalars[position - 1] == ":")
                    let next = position + 1 < scalars.count ? scalars[position + 1] : nil
                    let atFinish = next == nil || next == ")" || next == "|"
                    guard scalar == "^" ? atStart : atFinish else {
                        throw Unsupported(reason: "'\(scalar)' inside the pattern")
                    }
                    position += 1
                    continue
                }
                var atom = try parseAtom()
                atom = try parseQuantifiers(atom)
                items.append(atom)
            }
            return items.count == 1 ? items[0] : .sequence(items)
        }

        mutating func parseQuantifiers(_ atom: Node) throws -> Node {
            var node = atom
            while let scalar = current {
                let bounds: (Int, Int?)
                switch scalar {
                case "*": bounds = (0, nil)
                case "+": bounds = (1, nil)
                case "?": bounds = (0, 1)
                case "{":
                    guard let parsed = try parseBraces() else { return node }
                    bounds = parsed
                    node = .repeated(node, min: bounds.0, max: bounds.1)
                    skipModifier()
                    continue
                default: return node
                }
                position += 1
                node = .repeated(node, min: bounds.0, max: bounds.1)
                skipModifier()
            }
            return node
        }

        /// A lazy (`?`) or possessive (`+`) mark after a quantifier: the same strings match.
        mutating func skipModifier() {
            if current == "?" || current == "+" { position += 1 }
        }

        /// `{n}`, `{n,}`, `{n,m}`; nil (and nothing read) when the brace is a literal.
        mutating func parseBraces() throws -> (Int, Int?)? {
            var index = position + 1
            func number() -> Int? {
                var digits = ""
                while index < scalars.count, ("0"..."9").contains(scalars[index]) {
                    digits.unicodeScalars.append(scalars[index])
                    index += 1
                }
                return digits.isEmpty ? nil : Int(digits)
            }
            guard let low = number() else { return nil }
            var high: Int? = low
            if index < scalars.count, scalars[index] == "," {
                index += 1
                high = number()
            }
            guard index < scalars.count, scalars[index] == "}" else { return nil }
            if let high, high < low {
                throw Unsupported(reason: "a quantifier {\(low),\(high)} whose maximum is below its minimum")
            }
            guard low <= 1000, (high ?? 0) <= 1000 else { throw Unsupported(reason: "a quantifier above 1000") }
            position = index + 1
            return (low, high)
        }

        mutating func parseAtom() throws -> Node {
            let scalar = scalars[position]
            position += 1
            switch scalar {
            case "(":
                if current == "?" {
                    position += 1
                    guard let kind = current else { throw Unsupported(reason: "an unfinished group") }
                    switch kind {
                    case ":":
                        position += 1
                    case "=", "!":
                        throw Unsupported(reason: "lookahead '(?\(kind)'")
                    case "<"
                    where position + 1 < scalars.count
                        && (scalars[position + 1] == "=" || scalars[position + 1] == "!"):
                        throw Unsupported(reason: "lookbehind")
                    case "<", "P":
                        // A named group: its name up to '>'.
                        while let next = current, next != ">" { position += 1 }
                        position += 1
                    default:
                        // Flags such as (?i) or (?i:…): the case given in the pattern still matches.
                        while let next = current, next != ")" && next != ":" { position += 1 }
                        if current == ")" {
                            position += 1
                            return .sequence([])
                        }
                        position += 1
                    }
                }
                let inner = try parseChoice()
                guard current == ")" else { throw Unsupported(reason: "an unclosed '('") }
                position += 1
                return inner
            case "[":
                return try parseClass()
            case ".":
                return .characters([0x61...0x7a, 0x30...0x39], negated: false)
            case "\\":
                return try parseEscape(inClass: false)
            case ")":
                throw Unsupported(reason: "an unbalanced ')'")
            case "*", "+", "?":
                throw Unsupported(reason: "a quantifier '\(scalar)' with nothing before it")
            default:
                return .characters([scalar.value...scalar.value], negated: false)
            }
        }

        mutating func parseEscape(inClass: Bool) throws -> Node {
            guard let scalar = current else { throw Unsupported(reason: "a '\\' at the end") }
            position += 1
            func set(_ ranges: CharacterSet, negated: Bool = false) -> Node { .characters(ranges, negated: negated) }
            switch scalar {
            case "d": return set([0x30...0x39])
            case "D": return set([0x30...0x39], negated: true)
            case "w": return set([0x61...0x7a, 0x41...0x5a, 0x30...0x39, 0x5f...0x5f])
            case "W": return set([0x61...0x7a, 0x41...0x5a, 0x30...0x39, 0x5f...0x5f], negated: true)
            case "s": return set([0x20...0x20])
            case "S": return set([0x20...0x20, 0x09...0x0d], negated: true)
            case "t": return set([0x09...0x09])
            case "n": return set([0x0a...0x0a])
            case "r": return set([0x0d...0x0d])
            case "p":
                guard current == "{", let close = scalars[position...].firstIndex(of: "}") else {
                    throw Unsupported(reason: "'\\p' without a {property}")
                }
                let name = String(String.UnicodeScalarView(scalars[(position + 1)..<close]))
                position = close + 1
                switch name {
                case "L", "Letter", "Alphabetic": return set([0x61...0x7a, 0x41...0x5a])
                case "Lu", "Uppercase": return set([0x41...0x5a])
                case "Ll", "Lowercase": return set([0x61...0x7a])
                case "N", "Nd", "Digit": return set([0x30...0x39])
                default: throw Unsupported(reason: "the Unicode property \\p{\(name)}")
                }
            case "u", "x":
                let count = scalar == "u" ? 4 : 2
                var digits = ""
                if scalar == "x", current == "{" {
                    position += 1
                    while let next = current, next != "}" {
                        digits.unicodeScalars.append(next)
                        position += 1
                    }
                    position += 1
                } else {
                    for _ in 0..<count {
                        guard let next = current else { break }
                        digits.unicodeScalars.append(next)
                        position += 1
                    }
                }
                guard let code = UInt32(digits, radix: 16), Unicode.Scalar(code) != nil else {
                    throw Unsupported(reason: "the escape \\\(scalar)\(digits)")
                }
                return set([code...code])
            case "b", "B", "A", "z", "Z", "G":
                if inClass && scalar == "b" { return set([0x08...0x08]) }
                throw Unsupported(reason: "the anchor '\\\(scalar)'")
            case "1"..."9":
                throw Unsupported(reason: "a backreference '\\\(scalar)'")
            case "Q":
                // Quoted text up to \E.
                var items: [Node] = []
                while position < scalars.count {
                    if scalars[position] == "\\", position + 1 < scalars.count, scalars[position + 1] == "E" {
                        position += 2
                        break
                    }
                    items.append(set([scalars[position].value...scalars[position].value]))
                    position += 1
                }
                return .sequence(items)
            default:
                if ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) {
                    throw Unsupported(reason: "the escape '\\\(scalar)'")
                }
                return set([scalar.value...scalar.value])
            }
        }

        mutating func parseClass() throws -> Node {
            var negated = false
            if current == "^" {
                negated = true
                position += 1
            }
            var ranges: CharacterSet = []
            var first = true
            while true {
                guard let scalar = current else { throw Unsupported(reason: "an unclosed '['") }
                if scalar == "]" && !first {
                    position += 1
                    break
                }
                first = false
                if scalar == "[" { throw Unsupported(reason: "a class inside a class (POSIX class or set operation)") }
                if scalar == "&", position + 1 < scalars.count, scalars[position + 1] == "&" {
                    throw Unsupported(reason: "a class intersection '&&'")
                }
                var low: UInt32
                position += 1
                if scalar == "\\" {
                    let escaped = try parseEscape(inClass: true)
                    guard case .characters(let set, let isNegated) = escaped, !isNegated else {
                        throw Unsupported(reason: "a negated escape inside a class")
                    }
                    if set.count != 1 || set[0].count != 1 {
                        ranges += set
                        continue
                    }
                    low = set[0].lowerBound
                } else {
                    low = scalar.value
                }
                // A range a-z (a '-' last in the class is itself).
                if current == "-", position + 1 < scalars.count, scalars[position + 1] != "]" {
                    position += 1
                    var high = scalars[position].value
                    position += 1
                    if high == 0x5c {  // an escaped end
                        let escaped = try parseEscape(inClass: true)
                        guard case .characters(let set, false) = escaped, set.count == 1, set[0].count == 1 else {
                            throw Unsupported(reason: "a range ending in a class")
                        }
                        high = set[0].lowerBound
                    }
                    guard high >= low else { throw Unsupported(reason: "a range whose end is below its start") }
                    ranges.append(low...high)
                } else {
                    ranges.append(low...low)
                }
            }
            return .characters(ranges, negated: negated)
        }
    }
}
