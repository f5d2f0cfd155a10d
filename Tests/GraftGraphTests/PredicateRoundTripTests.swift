import Foundation
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

/// Makes random predicates from the whole grammar (except objects, which print as descriptions).
struct PredicateGenerator {
    var random: RepeatableRandomNumberGenerator

    private static let keys = [
        "name", "salary", "department", "employees", "hireDate", "_x1", "héllo", "Name",
        // Reserved words, printed with a # escape.
        "size", "first", "in", "SELF", "all", "cast", "no", "TruePredicate",
    ]
    private static let variables = ["FETCH_SOURCE", "FETCHED_PROPERTY", "X", "and", "limit_2"]
    private static let stringPieces = [
        "a", "Sales", " ", "\"", "'", "\\", "\n", "\t", "\r\n", "\u{1}", "é", "e\u{301}", "😀", "%@", "$X", "*", "?",
        "{", ")", "#", "ß",
    ]

    init(seed: UInt64) {
        random = RepeatableRandomNumberGenerator(seed: seed)
    }

    private mutating func pick<T>(_ choices: [T]) -> T { choices.randomElement(using: &random)! }
    private mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    mutating func predicate(depth: Int = 0) -> GraftPredicate {
        let leaf = depth >= 3 || chance(45)
        if leaf {
            if chance(5) { return chance(50) ? .truePredicate : .falsePredicate }
            return .comparison(comparison(depth: depth))
        }
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return .not(predicate(depth: depth + 1))
        case 1: return .and((0..<Int.random(in: 2...3, using: &random)).map { _ in predicate(depth: depth + 1) })
        default: return .or((0..<Int.random(in: 2...3, using: &random)).map { _ in predicate(depth: depth + 1) })
        }
    }

    mutating func comparison(depth: Int) -> GraftPredicate.Comparison {
        var options: ComparisonOptions = []
        if chance(25) { options.insert(.caseInsensitive) }
        if chance(25) { options.insert(.diacriticInsensitive) }
        if chance(5) { options.insert(.normalized) }
        let op = pick(GraftPredicate.Operator.allCases)
        var right = expression(depth: depth)
        // Keep to what the parser accepts: BETWEEN takes two bounds, MATCHES a valid pattern.
        switch (op, right) {
        case (.between, .aggregate(let bounds)) where bounds.count != 2:
            right = .aggregate([bounds.first ?? .null, expression(depth: depth + 1)])
        case (.matches, .constant(.string(let text))):
            right = .constant(.string(NSRegularExpression.escapedPattern(for: text) + "|[a-z]+.*"))
        default: break
        }
        return GraftPredicate.Comparison(
            expression(depth: depth), op, right, modifier: pick([.direct, .direct, .any, .all, .none]), options: options
        )
    }

    mutating func expression(depth: Int) -> GraftPredicate.Expression {
        let leaf = depth >= 4 || chance(60)
        if leaf {
            switch Int.random(in: 0..<10, using: &random) {
            case 0...3: return .constant(constant())
            case 4...6: return .keyPath(keyPath())
            case 7: return .variable(pick(Self.variables))
            case 8: return pick([.null, .evaluatedObject])
            default: return .member(.variable(pick(Self.variables)), keyPath())
            }
        }
        if chance(40) {
            return .aggregate((0..<Int.random(in: 0...3, using: &random)).map { _ in expression(depth: depth + 1) })
        }
        return .arithmetic(
            pick(GraftPredicate.ArithmeticOperator.allCases), expression(depth: depth + 1), expression(depth: depth + 1)
        )
    }

    mutating func keyPath() -> KeyValuePath {
        var components: [KeyValuePath.Component] = []
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            switch Int.random(in: 0..<10, using: &random) {
            case 0...6: components.append(.key(pick(Self.keys)))
            case 7: components.append(.identity)
            default: components.append(.collectionOperator(pick(KeyValuePath.CollectionOperator.allCases)))
            }
        }
        // A path that is only SELF prints as SELF, which parses as the evaluated object.
        if components == [.identity] { components.append(.key("name")) }
        return KeyValuePath(components: components)
    }

    mutating func constant() -> Value {
        switch Int.random(in: 0..<10, using: &random) {
        case 0:
            return .integer(pick([0, 1, -1, Int64.max, Int64.min, Int64.random(in: .min ... .max, using: &random)]))
        case 1:
            return .integer(Int64.random(in: -100_000...100_000, using: &random))
        case 2:
            let special: [Double] = [
                0.5, -0.0, 1e-7, .leastNonzeroMagnitude, 1e16, 3.0, -2.5e300, .greatestFiniteMagnitude,
            ]
            return .double(chance(50) ? pick(special) : Double.random(in: -1e6...1e6, using: &random))
        case 3:
            let digits = String(Int64.random(in: 0...Int64.max, using: &random))
            let point = Int.random(in: 0...digits.count, using: &random)
            let text =
                (chance(30) ? "-" : "") + digits.prefix(point) + (point < digits.count ? "." : "")
                + digits.dropFirst(point)
            return .decimal(
                Decimal(string: text.hasSuffix(".") ? text + "0" : text, locale: Locale(identifier: "en_US_POSIX"))!)
        case 4:
            let length = Int.random(in: 0...6, using: &random)
            return .string((0..<length).map { _ in pick(Self.stringPieces) }.joined())
        case 5:
            return .bool(chance(50))
        case 6:
            let seconds =
                chance(50)
                ? Double(Int64.random(in: -1_000_000_000...1_000_000_000, using: &random))
                : Double.random(in: -1e9...1e9, using: &random)
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case 7:
            var bytes: (UInt64, UInt64) = (random.next(), random.next())
            return .uuid(withUnsafeBytes(of: &bytes) { UUID(uuid: $0.load(as: uuid_t.self)) })
        case 8:
            return .data(
                Data((0..<Int.random(in: 0...8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
            )
        default:
            return .uri(URL(string: pick(["https://example.com/a?b=1", "file:///tmp/x%20y", "mailto:a@b.c"]))!)
        }
    }
}

@Suite struct PredicateRoundTripTests {
    /// Printed so that a failure can be replayed with `GRAFT_SEED=<seed> swift test --filter GraftGraphTests`.
    static let seed = RepeatableRandomNumberGenerator.seed(default: 20_250_601)

    @Test func printedPredicatesParseBackEqual() throws {
        let seed = Self.seed
        print("PredicateRoundTripTests seed: \(seed) (replay with GRAFT_SEED=\(seed))")
        var generator = PredicateGenerator(seed: seed)
        var failures = 0
        for iteration in 0..<1_500 {
            let predicate = generator.predicate()
            let text = predicate.description
            do {
                let parsed = try GraftPredicate(format: text)
                #expect(parsed == predicate, "seed \(seed), predicate \(iteration): \(text)\nparsed as \(parsed)")
                #expect(Set([parsed, predicate]).count == 1, "seed \(seed), predicate \(iteration): hashes differ")
                #expect(parsed.description == text, "seed \(seed), predicate \(iteration)")
                if parsed != predicate { failures += 1 }
            } catch {
                Issue.record("seed \(seed), predicate \(iteration): \(text)\ndid not parse: \(error)")
                failures += 1
            }
            if failures > 5 { break }
        }
    }

    @Test func printedExpressionsParseBackEqual() throws {
        let seed = Self.seed &+ 1
        var generator = PredicateGenerator(seed: seed)
        for iteration in 0..<1_000 {
            let expression = generator.expression(depth: 0)
            let parsed = try GraftPredicate.Expression.parse(expression.description)
            #expect(parsed == expression, "seed \(seed), expression \(iteration): \(expression)")
            if parsed != expression { break }
        }
    }

    @Test func theGeneratorIsRepeatable() {
        var first = PredicateGenerator(seed: 42)
        var second = PredicateGenerator(seed: 42)
        for _ in 0..<20 {
            #expect(first.predicate() == second.predicate())
        }
    }
}
