import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import GraftXML
import Testing

/// `XMLStore.open`: a persistent store that rewrites its document atomically on every save.
@Suite struct XMLStoreTests {
    @Test func aNewStoreIsCreatedOnTheFirstSaveAndReopens() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("Projects.xml")
        let store = try XMLStore.open(url: url, model: Support.company)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        let context = ObjectContext(store: store)
        let project = try context.insert("Project")
        try project.setValue("Moon base", forKey: "title")
        try project.setValue(Date(timeIntervalSinceReferenceDate: 1_000.5), forKey: "deadline")
        try context.save()
        #expect(Support.contents(of: folder) == ["Projects.xml"])
        #expect(XMLStore.isXMLStore(try Data(contentsOf: url)))

        let reopened = try XMLStore.open(url: url, model: Support.company)
        #expect(reopened.identifier == store.identifier)
        let again = ObjectContext(store: reopened)
        let projects = try again.fetch(FetchRequest(entityName: "Project"))
        #expect(projects.count == 1)
        #expect(projects.first?.value(forKey: "title") as? String == "Moon base")

        // Edit and save: the file is rewritten in place, nothing else is left in the folder.
        try projects[0].setValue("Mars base", forKey: "title")
        try again.save()
        #expect(Support.contents(of: folder) == ["Projects.xml"])
        let third = ObjectContext(store: try XMLStore.open(url: url, model: Support.company))
        #expect(
            try third.fetch(FetchRequest(entityName: "Project")).first?.value(forKey: "title") as? String == "Mars base"
        )
    }

    @Test func aStoreWithoutAModelUsesTheInferredOne() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("Projects.xml")
        let store = try XMLStore.open(url: url, model: Support.company)
        let context = ObjectContext(store: store)
        try context.insert("Project").setValue("Moon base", forKey: "title")
        try context.save()
        let inferred = try XMLStore.open(url: url, model: nil)
        #expect(inferred.model.entity(named: "Project") != nil)
        #expect(inferred.count == 1)
    }

    @Test func openingANewStoreNeedsAModel() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        #expect {
            _ = try XMLStore.open(url: folder.appendingPathComponent("none.xml"), model: nil)
        } throws: { ($0 as? GraftError)?.code == .invalidOperation }
    }

    @Test func aFailedSaveKeepsTheOldFile() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("Projects.xml")
        let store = try XMLStore.open(url: url, model: Support.company)
        let context = ObjectContext(store: store)
        try context.insert("Project").setValue("Moon base", forKey: "title")
        try context.save()
        let before = try Data(contentsOf: url)
        // A snapshot the writer refuses: the save fails, and the document on disk stays as it was.
        let project = Support.company.entity(named: "Project")!
        var bad = Snapshot(entity: project, key: 99)
        bad[attribute: "title", in: project] = .integer(5)
        #expect(throws: GraftError.self) { try store.save(StoreChanges(inserted: [bad])) }
        #expect(try Data(contentsOf: url) == before)
        #expect(Support.contents(of: folder) == ["Projects.xml"])
        #expect(store.count == 1)
    }
}
