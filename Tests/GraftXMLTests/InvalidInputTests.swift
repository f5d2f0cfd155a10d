import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftXML
import Testing

/// Malformed documents in `Invalid/` (each the document in `Valid/` with one defect): every one gives a
/// `GraftError` that names the file and the line or object, and a conversion that meets it leaves no
/// output behind.
@Suite struct InvalidInputTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// What reading a file must report.
    struct Case: CustomTestStringConvertible, Sendable {
        var file: String
        var code: GraftError.Code
        var message: String
        var line: Int?
        var object: String?
        var key: String?
        var testDescription: String { file }
    }

    static let cases: [Case] = [
        Case(file: "truncated.xml", code: .malformedInput, message: "not well-formed XML", line: 58),
        Case(file: "not-xml.xml", code: .malformedInput, message: "not well-formed XML", line: 1),
        Case(file: "wrong-root.xml", code: .unsupportedFormat, message: "not <database>", line: 3),
        Case(file: "unknown-entity.xml", code: .modelMismatch, message: "'SPACESHIP'", line: 63, object: "z105"),
        Case(
            file: "unknown-attribute.xml", code: .modelMismatch, message: "has no attribute 'shoesize'", line: 50,
            object: "z103", key: "shoesize"),
        Case(
            file: "dangling-idref.xml", code: .malformedInput, message: "'z999', which is not the id of any object",
            line: 44, object: "z102", key: "employees"),
        Case(file: "duplicate-id.xml", code: .malformedInput, message: "used by two objects", line: 56, object: "z103"),
        Case(
            file: "bad-number.xml", code: .typeMismatch,
            message: "holds the text '7a', which is not an Integer 16 value",
            line: 42, object: "z102",
            key: "code"),
        Case(
            file: "out-of-range.xml", code: .typeMismatch,
            message: "holds 70000, which is beyond the range of Integer 16 (-32768…32767)", line: 42,
            object: "z102", key: "code"),
        Case(
            file: "bad-date.xml", code: .typeMismatch, message: "holds the text 'last Tuesday', which is not a date",
            line: 49,
            object: "z103", key: "hireDate"),
        Case(
            file: "bad-base64.xml", code: .typeMismatch, message: "is not base64", line: 50, object: "z103",
            key: "photo"),
        Case(
            file: "to-one-with-two.xml", code: .malformedInput, message: "a to-one relationship lists 2 objects",
            line: 51, object: "z103", key: "department"),
        Case(
            file: "wrong-destination.xml", code: .typeMismatch,
            message: "a Department, which is not a kind of Employee",
            line: 44, object: "z102", key: "employees"),
        Case(file: "entity-bomb.xml", code: .malformedInput, message: "declares the entity 'lol'", line: 3),
        Case(file: "external-entity.xml", code: .malformedInput, message: "declares the entity 'secret'", line: 3),
        // The document says standalone="yes", so libxml2 itself rejects the reference.
        Case(file: "undeclared-entity.xml", code: .malformedInput, message: "Entity 'nbsp' not defined", line: 50),
        // Without standalone="yes" the entity might be in the external DTD, which Graft never reads.
        Case(
            file: "undeclared-entity-not-standalone.xml", code: .malformedInput,
            message: "refers to the undeclared entity '&nbsp;'", line: 50),
        Case(file: "hash-mismatch.xml", code: .modelMismatch, message: "entities that differ: Department"),
        Case(
            file: "bad-uuid.xml", code: .malformedInput, message: "the store's UUID 'not-a-uuid' is not a UUID",
            line: 7,
            key: "<UUID>"),
    ]

    @Test func everyFileHasACase() throws {
        let files = try FileManager.default.contentsOfDirectory(
            atPath: Self.folder.appendingPathComponent("Invalid").path)
        #expect(Set(files) == Set(Self.cases.map(\.file)))
    }

    @Test func theControlDocumentReads() throws {
        let reader = try XMLStoreReader(
            url: Self.folder.appendingPathComponent("Valid/company.xml"), model: Support.company)
        #expect(reader.warnings.isEmpty)
        #expect(try Support.snapshots(reader).count == 3)
    }

    @Test(arguments: cases)
    func givesAClearErrorAndLeavesNothingBehind(_ expected: Case) throws {
        let url = Self.folder.appendingPathComponent("Invalid").appendingPathComponent(expected.file)
        let output = try Support.temporaryFolder()
        defer { Support.cleanUp(output) }
        do {
            let reader = try XMLStoreReader(url: url, model: Support.company)
            try Support.convert(reader, to: output.appendingPathComponent("converted.xml"))
            Issue.record("\(expected.file) was read without an error")
        } catch let error as GraftError {
            Self.check(error, is: expected, of: url)
        }
        #expect(Support.contents(of: output).isEmpty)
    }

    /// Checks that `error`, met reading `url`, is the one `expected` describes.
    static func check(_ error: GraftError, is expected: Case, of url: URL) {
        #expect(error.code == expected.code, "\(error)")
        #expect(error.message.contains(expected.message), "\(error)")
        #expect(error.context.first == .file(url.relativePath), "\(error)")
        if let line = expected.line { #expect(error.context.contains(.line(line)), "\(error)") }
        if let object = expected.object { #expect(error.context.contains(.object(object)), "\(error)") }
        if let key = expected.key { #expect(error.context.contains(.key(key)), "\(error)") }
    }

    @Test func aUUIDInLowerCaseIsKeptAsWritten() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let text = try String(contentsOf: Self.folder.appendingPathComponent("Valid/company.xml"), encoding: .utf8)
        let url = folder.appendingPathComponent("lower.xml")
        try text.replacingOccurrences(
            of: "5A1D7C1E-0000-4000-8000-000000000001", with: "5a1d7c1e-0000-4000-8000-0000000000ff"
        )
        .write(to: url, atomically: true, encoding: .utf8)
        let reader = try XMLStoreReader(url: url, model: Support.company)
        #expect(reader.metadata.identifier == "5a1d7c1e-0000-4000-8000-0000000000ff")
    }

    @Test func theExternalEntityIsNeverRead() throws {
        // The entity names /etc/passwd; whatever happens, its text must not reach a snapshot or an error.
        let url = Self.folder.appendingPathComponent("Invalid/external-entity.xml")
        do {
            let reader = try XMLStoreReader(url: url, model: nil)
            try reader.forEachSnapshot { snapshot in
                #expect(!snapshot.attributes.contains { $0.map { "\($0)".contains("root:") } ?? false })
            }
            Issue.record("the document was read")
        } catch let error as GraftError {
            #expect(!error.description.contains("root:"))
        }
    }
}
