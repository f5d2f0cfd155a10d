import Foundation
import Graft
import GraftTestSupport
import OfficesExample
import Testing

/// The seed case kept in `examples/Offices`: version 2 of the Company model adds an office to every
/// department, which a subclass makes in `awakeFromInsert` and `awakeFromFetch` without undo steps. The
/// test runs the example's own code, so the example cannot rot.
@Suite struct ExampleOfficesTests {
    static let folder = Project.url("examples/Offices")

    @Test func theVersion1DocumentHoldsItsObjects() throws {
        let models = try ModelFile.load(Self.folder.appendingPathComponent("Company.xcdatamodeld"))
        let version1 = try #require(models.version(named: "Company"))
        let expected = try OfficesExample.version1Document(model: version1)
        let url = Self.folder.appendingPathComponent("Company-v1.xml")
        if ProcessInfo.processInfo.environment["GRAFT_RECORD"] == "1" {
            let metadata = StoreMetadata.make(
                for: version1, storeType: .xml, identifier: OfficesExample.version1Identifier)
            var writer = try StoreFormat.xml.driver.writer(
                at: url, model: version1, metadata: metadata, overwrite: true)
            try expected.forEachSnapshot { try writer.write($0) }
            try writer.finish()
        }
        let reader = try StoreFormat.xml.driver.reader(at: url, model: nil, options: StoreReadOptions())
        #expect(reader.model.versionHashes == version1.versionHashes)
        #expect(reader.model.versionHashes != models.current.versionHashes)
        let differences = try Verification.differences(between: expected, and: reader)
        #expect(differences.isEmpty, "\(differences)")
    }

    @Test func aVersion1DocumentOpensUneditedAndEveryDepartmentGetsAnOffice() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("offices-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let report = try OfficesExample.run(folder: Self.folder, workingDirectory: work)
        #expect(report.wasUpgraded)
        #expect(report.offices == ["Research": "Main building", "Sales": "Main building"])
        #expect(report.newObjectsAfterOpening == 2)  // the two offices, to be saved with the next save
        #expect(!report.editedAfterOpening)  // no unsaved edits: nothing to undo
        #expect(report.insertedDepartmentHasOffice)
        #expect(report.editedAfterInsert)
        #expect(report.undoRemovedDepartmentAndOffice)
        #expect(report.reopenedOffices == report.offices)
        #expect(!report.reopenedHasChanges)
        #expect(!report.reopenedEdited)
    }
}
