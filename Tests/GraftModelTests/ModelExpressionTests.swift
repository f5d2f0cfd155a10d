import Foundation
import GraftCore
import GraftTestSupport
import Testing

@testable import GraftModel

/// Predicates and expressions in compiled models: read from Apple's archived objects, written back as
/// such objects, and printed as Foundation's predicate format prints them.
@Suite struct ModelExpressionTests {
    /// Text Graft parses, and the text Foundation's `predicateFormat` would print for it.
    static let predicates: [(String, String)] = [
        ("SELF >= 0", "SELF >= 0"),
        ("SELF <= 10", "SELF <= 10"),
        ("length >= 1", "length >= 1"),
        ("timeIntervalSinceReferenceDate <= 900000000.5", "timeIntervalSinceReferenceDate <= 900000000.5"),
        (#"SELF MATCHES "[a-z]+\\d""#, #"SELF MATCHES "[a-z]+\\d""#),
        ("booleanAttribute = YES", "booleanAttribute == 1"),
        ("booleanAttribute == 1 AND floatAttribute > 5", "booleanAttribute == 1 AND floatAttribute > 5"),
        ("mdID != nil", "mdID != nil"),
        ("(a == 1 OR b == 2) AND NOT c < -3.5", "(a == 1 OR b == 2) AND NOT c < -3.5"),
        ("thing == $FETCH_SOURCE AND size > 3", "thing == $FETCH_SOURCE AND size > 3"),
        (#"ANY tags.name ==[cd] "x""#, #"ANY tags.name ==[cd] "x""#),
        ("kind IN {1, 2}", "kind IN {1, 2}"),
        ("TRUEPREDICATE", "TRUEPREDICATE"),
    ]

    static let expressions: [(String, String)] = [
        ("additionalAttributes.cameraCaptureDevice", "additionalAttributes.cameraCaptureDevice"),
        ("name", "name"),
        ("SELF", "SELF"),
        ("uppercase:(title)", "uppercase:(title)"),
        ("count:( pages )", "count:(pages)"),
        ("pages.@count", "pages.@count"),
    ]

    @Test(arguments: predicates)
    func predicatesPrintAsFoundationPrintsThem(text: String, printed: String) throws {
        let predicate = try #require(ModelExpression.parsePredicate(text), "\(text)")
        #expect(predicate.format == printed)
        #expect(ModelExpression.parsePredicate(printed) == predicate)
    }

    @Test(arguments: expressions)
    func expressionsPrintAsFoundationPrintsThem(text: String, printed: String) throws {
        let expression = try #require(ModelExpression.parseExpression(text), "\(text)")
        #expect(expression.format == printed)
    }

    @Test(arguments: ["", "a ==", "== 1", "a = = 1", "\"unclosed", "f:(a", "a AND", "a.b..c == 1", "SELF >= #"])
    func textOutsideTheFormsIsNotParsed(text: String) {
        #expect(ModelExpression.parsePredicate(text) == nil)
    }

    /// Any text either parses into something that prints and parses back the same, or is refused.
    @Test func randomTextNeverTrapsAndWhatParsesIsStable() {
        var random = RepeatableRandomNumberGenerator(seed: RepeatableRandomNumberGenerator.seed(default: 12))
        let pieces = [
            "a", "b.c", "SELF", "$V", "1", "-2.5", "\"s\"", "'t'", "nil", "==", "!=", "<", ">=", "AND", "OR", "NOT",
            "(", ")", "{", "}", ",", ":", "[c]", "ANY", "IN", "MATCHES", "#", "\\", "@count", ".", " ",
        ]
        for _ in 0..<2000 {
            let text = (0..<Int.random(in: 1...9, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                .joined(separator: " ")
            if let predicate = ModelExpression.parsePredicate(text) {
                #expect(ModelExpression.parsePredicate(predicate.format) == predicate, "seed \(random.seed): \(text)")
            }
            if let expression = ModelExpression.parseExpression(text) {
                #expect(
                    ModelExpression.parseExpression(expression.format) == expression, "seed \(random.seed): \(text)")
            }
        }
    }

    /// Archiving and reading back gives the same predicate, for every form.
    @Test(arguments: predicates.map(\.0) + expressions.map(\.0))
    func archivedObjectsReadBack(text: String) throws {
        let parsed = try #require(ModelExpression.parsePredicate(text) ?? ModelExpression.parseExpression(text))
        var archiver = KeyedArchiver()
        var expressions = ExpressionArchiver()
        let root = expressions.archive(parsed, in: &archiver)
        let data = BinaryPropertyList.encode(archiver.finish(top: ["root": root]))
        let object = try #require(try KeyedArchive(data: data).topObject(forKey: "root"))
        #expect(try ModelExpression(archived: object) == parsed)
    }

    /// The archived forms are Foundation's, as the corpus's archives show them.
    @Test func archivedFormsAreFoundations() throws {
        func archived(_ text: String) throws -> ArchivedObject {
            let parsed = try #require(ModelExpression.parsePredicate(text) ?? ModelExpression.parseExpression(text))
            var archiver = KeyedArchiver()
            var expressions = ExpressionArchiver()
            let root = expressions.archive(parsed, in: &archiver)
            let data = BinaryPropertyList.encode(archiver.finish(top: ["root": root]))
            return try #require(try KeyedArchive(data: data).topObject(forKey: "root"))
        }
        // Photos.sqlite: one key is valueForKey:, a path valueForKeyPath:, both over SELF.
        let key = try archived("favorite")
        #expect(key.classChain == ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"])
        #expect(try key.string(forKey: "NSSelectorName") == "valueForKey:")
        #expect(try key["NSOperand"]?.className == "NSSelfExpression")
        #expect(try key["NSArguments"]?.className == "NSMutableArray")
        #expect(try archived("a.b").string(forKey: "NSSelectorName") == "valueForKeyPath:")
        // Photos.sqlite: `x != nil` is an equality operator with NSNegate, nil a class name that is nil.
        let notNil = try archived("mdID != nil")
        let operation = try #require(try notNil["NSPredicateOperator"])
        #expect(operation.className == "NSEqualityPredicateOperator")
        #expect(try operation.bool(forKey: "NSNegate") == true)
        #expect(operation.rawField("NSOperatorType")?.int64Value == 5)
        let constant = try #require(try notNil["NSRightExpression"])
        #expect(constant.contains("NSConstantValueClassName") && !constant.contains("NSConstantValue"))
        // ReviewDocument.mom: `SELF <= 10` is a comparison operator whose variant is its type, over the
        // one shared SELF.
        let bound = try archived("SELF <= 10")
        let comparison = try #require(try bound["NSPredicateOperator"])
        #expect(comparison.className == "NSComparisonPredicateOperator")
        #expect(Set(comparison.fieldNames) == ["NSModifier", "NSOperatorType", "NSOptions", "NSVariant"])
        #expect(comparison.rawField("NSVariant")?.int64Value == 1)
        #expect(try bound["NSRightExpression"]?.integer(forKey: "NSConstantValue") == 10)
    }

    @Test func theCorpusArchivesReadAsTheirText() throws {
        guard Corpus.isAvailable else { return }
        let mom = "CocoaSampleCode/Reviews/Reviews.app/Contents/Resources/ReviewDocument.mom"
        let model = try CompiledModelReader.read(Data(contentsOf: Corpus.url(mom)))
        let rating = try #require(model.entity(named: "Product")?.attribute(named: "overallRating"))
        #expect(rating.minValue == .integer(0))
        #expect(rating.maxValue == .integer(10))
    }

    // MARK: The derived attribute's hash

    /// -[NSDerivedAttributeDescription _versionHash:inStyle:] computes the attribute's own hash into a
    /// buffer it never feeds to the digest: the hash is SHA-256 of the expression's text alone.
    @Test func aDerivedAttributeHashesItsExpressionOnly() {
        let one = Attribute(
            name: "derivedCameraCaptureDevice", type: .integer16, isReadOnly: true,
            derivationExpression: "additionalAttributes.cameraCaptureDevice")
        let other = Attribute(
            name: "somethingElse", type: .string, isOptional: false,
            derivationExpression: "additionalAttributes.cameraCaptureDevice")
        #expect(VersionHasher.hash(of: one) == VersionHasher.hash(of: other))
        #expect(
            VersionHasher.hash(of: one) == VersionHasher.sha256(Array("additionalAttributes.cameraCaptureDevice".utf8)))
    }

    /// setDerivationExpression: rewrites `.@count` as count:, `.@sum` and `.@total` as sum:, and nothing else.
    @Test(arguments: [
        ("pages.@count", "count:(pages)"), ("items.price.@sum", "sum:(items.price)"),
        ("items.price.@total", "sum:(items.price)"), ("items.price.@max", "items.price.@max"),
        ("uppercase:(title)", "uppercase:(title)"), (" name ", "name"),
    ])
    func derivationsAreHashedInTheirNormalForm(written: String, hashed: String) {
        #expect(DerivationExpression.normalized(written) == hashed)
        let attribute = Attribute(name: "x", type: .integer64, derivationExpression: written)
        #expect(VersionHasher.hash(of: attribute) == VersionHasher.sha256(Array(hashed.utf8)))
    }

    @Test func aDerivedAttributeMarkedTransientStillCounts() throws {
        let plain = Entity(
            name: "A", attributes: [Attribute(name: "n", type: .string, derivationExpression: "name")])
        var transient = plain
        transient.attributes[0].isTransient = true
        #expect(try Model(entities: [plain]).versionHashes == Model(entities: [transient]).versionHashes)
    }
}
