import Foundation
import Testing

@testable import GraftCore

@Suite struct GraftErrorTests {
    @Test func descriptionSaysWhereThenWhat() {
        let error = GraftError(
            .malformedInput, "unknown attribute type 'Nonsense'",
            context: [.file("m/contents"), .line(3), .entity("A"), .key("x")])
        #expect(error.description == "m/contents:3: A: x: unknown attribute type 'Nonsense'")
        #expect(GraftError(.io, "disk full").description == "disk full")
        #expect(GraftError(.io, "bad", context: [.file("f"), .offset(12)]).description == "f@12: bad")
    }

    @Test func underlyingErrorsAreListedIndented() {
        let error = GraftError(
            .validationFailed, "2 validation errors",
            underlying: [
                GraftError(.validationFailed, "is required", context: [.object("Employee p1"), .key("name")]),
                GraftError(
                    .validationFailed, "too long\nsecond line", context: [.object("Employee p2"), .key("name")]),
            ])
        #expect(
            error.description
                == "2 validation errors\n  - Employee p1: name: is required\n  - Employee p2: name: too long\n    second line"
        )
    }

    @Test func aLongListIsCutShort() {
        let error = GraftError(
            .validationFailed, "100 problems",
            underlying: (1...100).map { GraftError(.validationFailed, "problem \($0)") })
        let lines = error.description.split(separator: "\n")
        #expect(lines.count == 1 + GraftError.listedLimit + 1)
        #expect(lines.last == "  - … and \(100 - GraftError.listedLimit) more")
        #expect(error.underlying.count == 100)
    }

    @Test func articlesFitTheNoun() {
        #expect(Wording.withArticle("Employee") == "an Employee")
        #expect(Wording.withArticle("Department") == "a Department")
        #expect(Wording.withArticle("integer16") == "an integer16")
        #expect(Wording.withArticle("uri") == "a uri")
        #expect(Wording.withArticle("") == "")
    }

    @Test func locationsCanBeAddedOnTheWayOut() {
        let error = GraftError(.notFound, "missing").at(.entity("E")).inFile("a.xml")
        #expect(error.context == [.file("a.xml"), .entity("E")])
    }
}

@Suite struct JSONValueTests {
    @Test func writesStableOrderedJSON() {
        let value: JSONValue = .object([
            ("b", .int(1)), ("a", .array([.string("x\"\n\u{01}"), .double(1.5), .double(2), .null, .bool(true)])),
            ("empty", .object([])), ("nan", .double(.nan)),
        ])
        #expect(value.text() == #"{"b":1,"a":["x\"\n\u0001",1.5,2.0,null,true],"empty":{},"nan":null}"#)
        #expect(value.text(pretty: true).contains("\n  \"a\": [\n    \"x"))
    }

    @Test func outputParsesWithFoundation() throws {
        let value: JSONValue = .object([("name", .string("Ünïcödé 🙂")), ("n", .int(Int64.min)), ("d", .double(0.1))])
        let parsed = try JSONSerialization.jsonObject(with: Data(value.text().utf8)) as? [String: Any]
        #expect(parsed?["name"] as? String == "Ünïcödé 🙂")
        #expect(parsed?["d"] as? Double == 0.1)
    }
}
