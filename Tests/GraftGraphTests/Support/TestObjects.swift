import Foundation
import GraftCore
import GraftGraph
import Testing

/// A test double: an object whose properties are a dictionary.
final class Record: KeyValueCoding, CustomStringConvertible {
    var values: [String: Any]

    init(_ values: [String: Any] = [:]) {
        self.values = values
    }

    func value(forKey key: String) -> Any? { values[key] }

    subscript(key: String) -> Any? {
        get { values[key] }
        set { values[key] = newValue }
    }

    var description: String { "<Record \(values["name"].map { "\($0)" } ?? "?")>" }
}

/// A to-many relationship's value.
struct ToMany: KeyValueCollection {
    var keyValueElements: [any KeyValueCoding]

    init(_ elements: [Record]) {
        keyValueElements = elements
    }
}

/// A small company: Sales (Ann, Bob, Cy), Engineering (Dee, Eve) and Empty (nobody).
///
/// Ann manages Bob and Cy; Dee manages Eve; Eve manages nobody. Salaries mix `Int64`, `Double` and
/// `Decimal` on purpose.
struct Company {
    let company: Record
    let sales: Record
    let engineering: Record
    let empty: Record
    let ann: Record
    let bob: Record
    let cy: Record
    let dee: Record
    let eve: Record

    static func date(_ seconds: Double) -> Date { Date(timeIntervalSinceReferenceDate: seconds) }

    init() {
        ann = Record([
            "name": "Ann", "salary": Int64(60000), "hireDate": Company.date(100), "isManager": true,
            "id": UUID(uuidString: "00000000-0000-0000-0000-000000000001")!, "age": Int64(41),
        ])
        bob = Record([
            "name": "Bob", "salary": Int64(45000), "hireDate": Company.date(300), "isManager": false,
            "age": Int64(29), "nickname": "Bobby",
        ])
        cy = Record([
            "name": "Cy", "salary": 52000.5, "hireDate": Company.date(200), "isManager": false, "age": Int64(35),
        ])
        dee = Record([
            "name": "Dée", "salary": Decimal(string: "90000.25")!, "hireDate": Company.date(50), "isManager": true,
            "age": Int64(50),
        ])
        eve = Record([
            "name": "eve", "salary": Int64(80000), "hireDate": Company.date(400), "isManager": false,
            "age": Int64(23),
        ])
        sales = Record(["name": "Sales", "budget": Int64(1_000_000)])
        engineering = Record(["name": "Engineering", "budget": 2_500_000.0])
        empty = Record(["name": "Empty", "employees": ToMany([])])
        company = Record(["name": "Acme", "departments": ToMany([sales, engineering, empty])])

        sales["employees"] = ToMany([ann, bob, cy])
        engineering["employees"] = ToMany([dee, eve])
        for employee in [ann, bob, cy] { employee["department"] = sales }
        for employee in [dee, eve] { employee["department"] = engineering }
        bob["manager"] = ann
        cy["manager"] = ann
        eve["manager"] = dee
        ann["reports"] = ToMany([bob, cy])
        bob["reports"] = ToMany([])
        cy["reports"] = ToMany([])
        dee["reports"] = ToMany([eve])
        eve["reports"] = ToMany([])
        sales["manager"] = ann
        engineering["manager"] = dee
    }

    var employees: [Record] { [ann, bob, cy, dee, eve] }
}

// MARK: - Helpers

/// Parses `format` and checks that it prints as `expected` and parses back to the same predicate.
@discardableResult
func expectParse(
    _ format: String, _ arguments: Any?..., prints expected: String, sourceLocation: SourceLocation = #_sourceLocation
) -> GraftPredicate? {
    do {
        let predicate = try GraftPredicate.parse(format, arguments: arguments)
        #expect(predicate.description == expected, "parsing \(format)", sourceLocation: sourceLocation)
        let again = try GraftPredicate(format: predicate.description)
        #expect(again == predicate, "reparsing \(predicate.description)", sourceLocation: sourceLocation)
        return predicate
    } catch {
        Issue.record("\(format) did not parse: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Checks that parsing `format` fails with a syntax error at `offset` whose message contains `message`.
func expectSyntaxError(
    _ format: String, _ arguments: Any?..., at offset: Int, _ message: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let predicate = try GraftPredicate.parse(format, arguments: arguments)
        Issue.record("\(format) parsed as \(predicate), but should fail", sourceLocation: sourceLocation)
    } catch let error as GraftError {
        #expect(error.code == .syntaxError, sourceLocation: sourceLocation)
        #expect(error.context == [.offset(offset)], "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains(message), "\(error)", sourceLocation: sourceLocation)
        // The message shows the text with a caret under the offset.
        let lines = error.message.split(separator: "\n", omittingEmptySubsequences: false)
        if let caret = lines.last {
            #expect(caret.count == offset + 3 && caret.hasSuffix("^"), "\(error)", sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}

/// Evaluates `format` with `object` and checks the result.
func expectEvaluation(
    _ format: String, _ arguments: Any?..., on object: Any?, variables: [String: Any] = [:], is expected: Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let predicate = try GraftPredicate.parse(format, arguments: arguments)
        let result = try predicate.evaluate(with: object, variables: variables)
        #expect(result == expected, "\(format) on \(object.map { "\($0)" } ?? "nil")", sourceLocation: sourceLocation)
    } catch {
        Issue.record("\(format) failed: \(error)", sourceLocation: sourceLocation)
    }
}

/// Checks that evaluating `format` with `object` fails with `GraftError.evaluationFailed`.
@discardableResult
func expectEvaluationError(
    _ format: String, on object: Any?, variables: [String: Any] = [:], _ message: String,
    sourceLocation: SourceLocation = #_sourceLocation
) -> GraftError? {
    do {
        let predicate = try GraftPredicate.parse(format)
        let result = try predicate.evaluate(with: object, variables: variables)
        Issue.record("\(format) gave \(result), but should fail", sourceLocation: sourceLocation)
    } catch let error as GraftError {
        #expect(error.code == .evaluationFailed, "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains(message), "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
