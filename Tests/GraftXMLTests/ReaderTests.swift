import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftXML
import Testing

/// What the reader tolerates: other encodings, comments and CDATA where the first pass looks for
/// objects, names in any case, missing or old-style metadata, ids that are not `z<number>`.
@Suite struct ReaderTests {
    static let control = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Valid/company.xml")

    static func controlText() throws -> String { try String(contentsOf: control, encoding: .utf8) }

    /// Writes `text` to a temporary file, reads it with `model`, and returns the reader and its snapshots.
    static func read(
        _ text: String, encoding: String.Encoding = .utf8, model: Model? = Support.company
    ) throws -> (XMLStoreReader, [Snapshot]) {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("store.xml")
        try text.data(using: encoding)!.write(to: url)
        let reader = try XMLStoreReader(url: url, model: model)
        return (reader, try Support.snapshots(reader))
    }

    @Test func readsTheSameDocumentInUTF16AndLatin1() throws {
        let (_, expected) = try Self.read(Self.controlText())
        let utf16 = try Self.controlText().replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"UTF-16\"")
        let (_, fromUTF16) = try Self.read(utf16, encoding: .utf16)
        #expect(fromUTF16 == expected)
        let latin1 = try Self.controlText().replacingOccurrences(
            of: "encoding=\"UTF-8\"", with: "encoding=\"ISO-8859-1\""
        )
        .replacingOccurrences(of: ">Bob<", with: ">Böb<")
        let (_, fromLatin1) = try Self.read(latin1, encoding: .isoLatin1)
        let flunky = Support.company.entity(named: "Flunky")!
        #expect(fromLatin1[2][attribute: "name", in: flunky] == "Böb")
    }

    @Test func objectsInCommentsAndCDATAAreNotObjects() throws {
        let text = try Self.controlText().replacingOccurrences(
            of: "    <object type=\"FLUNKY\"",
            with: """
                    <!-- <object type="PROJECT" id="z900"> in a comment -->
                    <?graft <object type="PROJECT" id="z901"> in an instruction ?>
                    <object type="FLUNKY"
                """
        ).replacingOccurrences(
            of: "<attribute name=\"coffeeorder\" type=\"string\">flat white</attribute>",
            with:
                "<attribute name=\"coffeeorder\" type=\"string\"><![CDATA[<object type=\"PROJECT\" id=\"z902\"> & more]]></attribute>"
        )
        let (reader, snapshots) = try Self.read(text)
        #expect(reader.objectCount == 3)
        let flunky = Support.company.entity(named: "Flunky")!
        #expect(snapshots[2][attribute: "coffeeOrder", in: flunky] == "<object type=\"PROJECT\" id=\"z902\"> & more")
    }

    @Test func namesMatchInAnyCase() throws {
        let text = try Self.controlText().replacingOccurrences(of: "type=\"DEPARTMENT\"", with: "type=\"Department\"")
            .replacingOccurrences(of: "name=\"hiredate\"", with: "name=\"hireDate\"")
            .replacingOccurrences(of: "name=\"directreports\"", with: "name=\"DirectReports\"")
        let (_, snapshots) = try Self.read(text)
        let (_, expected) = try Self.read(Self.controlText())
        #expect(snapshots == expected)
    }

    @Test func readsWithoutDatabaseInfoOrWithEmptyMetadata() throws {
        let text = try Self.controlText()
        let start = text.range(of: "    <databaseInfo>")!.lowerBound
        let end = text.range(of: "</databaseInfo>\n")!.upperBound
        let (bare, bareSnapshots) = try Self.read(text.replacingCharacters(in: start..<end, with: ""))
        #expect(bare.warnings.contains { $0.contains("no <databaseInfo>") })
        #expect(bare.warnings.contains { $0.contains("no model version hashes") })
        #expect(bareSnapshots.count == 3)
        #expect(bare.metadata.values["NSStoreType"] == .string("XML"))

        let metadataStart = text.range(of: "<metadata>")!.upperBound
        let metadataEnd = text.range(of: "</metadata>")!.lowerBound
        let (old, _) = try Self.read(text.replacingCharacters(in: metadataStart..<metadataEnd, with: ""))
        #expect(old.metadata.identifier == "5A1D7C1E-0000-4000-8000-000000000001")
        #expect(old.metadata.values.count == 2)  // NSStoreUUID and NSStoreType, added by the reader
    }

    @Test func idsThatAreNotNumbersGetFreshKeys() throws {
        let text = try Self.controlText().replacingOccurrences(of: "z104", with: "bob")
        let (reader, snapshots) = try Self.read(text)
        #expect(snapshots[2].ref.key == 104)  // the next after the largest z-number, 103
        #expect(reader.objectCount == 3)
        let department = Support.company.entity(named: "Department")!
        let flunky = Support.company.entity(named: "Flunky")!
        #expect(
            snapshots[0][relationship: "employees", in: department]?.refs.last
                == ObjectRef(entity: flunky.index, key: 104))
    }

    @Test func readingTwiceGivesTheSameSnapshots() throws {
        let reader = try XMLStoreReader(url: Self.control, model: Support.company)
        #expect(try Support.snapshots(reader) == Support.snapshots(reader))
    }

    @Test func anErrorThrownByTheCallerStopsTheReadAndComesBackAsItIs() throws {
        struct Stop: Error {}
        let reader = try XMLStoreReader(url: Self.control, model: Support.company)
        var seen = 0
        #expect(throws: Stop.self) {
            try reader.forEachSnapshot { _ in
                seen += 1
                throw Stop()
            }
        }
        #expect(seen == 1)
    }

    @Test func aMissingFileIsReportedAsSuch() {
        #expect {
            _ = try XMLStoreReader(url: URL(fileURLWithPath: "/nonexistent/store.xml"), model: nil)
        } throws: { ($0 as? GraftError)?.code == .fileNotFound }
    }
}
