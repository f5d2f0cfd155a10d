import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import GraftXML
import Testing

/// An XML store's saves never discard another writer's work: the document is locked while a save
/// writes; a context's save takes in what another writer saved since the document was read (conflicting
/// only over objects both changed), a save that checks no versions fails; and an `exclusive` store keeps
/// other writers waiting from before it reads until it goes away.
@Suite struct DocumentLockingTests {
    let folder: URL
    let url: URL

    init() throws {
        folder = try Support.temporaryFolder()
        url = folder.appendingPathComponent("Projects.xml")
        let context = ObjectContext(store: try XMLStore.open(url: url, model: Support.company))
        try context.insert("Project").setValue("First", forKey: "title")
        try context.save()
    }

    func titles() throws -> [String] {
        let context = ObjectContext(store: try XMLStore.open(url: url, model: Support.company))
        return try context.fetch(FetchRequest(entityName: "Project")).compactMap {
            $0.value(forKey: "title") as? String
        }
        .sorted()
    }

    func add(_ title: String, to store: InMemoryStore) throws {
        let context = ObjectContext(store: store)
        try context.insert("Project").setValue(title, forKey: "title")
        try context.save()
    }

    @Test func aSaveAfterAnotherWritersSaveKeepsItsWork() throws {
        defer { Support.cleanUp(folder) }
        let one = try XMLStore.open(url: url, model: Support.company)
        let other = try XMLStore.open(url: url, model: Support.company)
        try add("From one", to: one)
        // The other store gave its new project the key "From one" has now: it takes a new one.
        try add("From the other", to: other)
        #expect(try titles() == ["First", "From one", "From the other"])
        #expect(other.count == 3)
        try add("From one again", to: one)
        #expect(try titles() == ["First", "From one", "From one again", "From the other"])
        // A save that checks no versions fails instead of discarding the other writer's work.
        let project = try #require(other.allSnapshots.first)
        let error = #expect(throws: GraftError.self) { try other.save(StoreChanges(updated: [project])) }
        #expect(error?.code == .busy)
        #expect(
            error?.description
                == "\(url.relativePath): was changed by another writer since it was read; nothing was written (read it again and redo the change)"
        )
        #expect(try titles() == ["First", "From one", "From one again", "From the other"])
        #expect(Support.contents(of: folder) == ["Projects.xml"])
    }

    @Test func anExclusiveStoreKeepsOtherWritersWaitingUntilItGoesAway() throws {
        defer { Support.cleanUp(folder) }
        var holder: InMemoryStore? = try XMLStore.open(url: url, model: Support.company, exclusive: true)
        let started = Date()
        let error = #expect(throws: GraftError.self) {
            _ = try XMLStore.open(url: url, model: Support.company, wait: 0.2, exclusive: true)
        }
        #expect(Date().timeIntervalSince(started) >= 0.2)
        #expect(error?.code == .busy)
        #expect(error?.message.hasPrefix("is busy: another writer holds its lock") == true)
        // A plain store reads, but its save waits for the lock too.
        let plain = try XMLStore.open(url: url, model: Support.company, wait: 0.2)
        #expect(throws: GraftError.self) { try add("Plain", to: plain) }
        // Saving hands the lock over to the new document: still no one else gets in.
        try add("Exclusive", to: holder!)
        #expect(throws: GraftError.self) {
            _ = try XMLStore.open(url: url, model: Support.company, wait: 0.2, exclusive: true)
        }
        try add("Exclusive again", to: holder!)
        holder = nil
        let next = try XMLStore.open(url: url, model: Support.company, wait: 0.2, exclusive: true)
        try add("Next", to: next)
        #expect(try titles() == ["Exclusive", "Exclusive again", "First", "Next"])
    }

    @Test func aWaitingWriterGoesAheadWhenTheHolderFinishes() throws {
        defer { Support.cleanUp(folder) }
        let url = url
        nonisolated(unsafe) var holder: InMemoryStore? = try XMLStore.open(
            url: url, model: Support.company, exclusive: true)
        let waiter = Background { () -> Int in
            let store = try XMLStore.open(url: url, model: Support.company, wait: 30, exclusive: true)
            let context = ObjectContext(store: store)
            try context.insert("Project").setValue("Second", forKey: "title")
            try context.save()
            return store.count
        }
        Thread.sleep(forTimeInterval: 0.3)
        #expect(!waiter.isFinished)
        try add("Held", to: holder!)
        holder = nil
        // The waiter read the document after the holder's save: nothing is lost.
        #expect(try waiter.wait(30)?.get() == 3)
        #expect(try titles() == ["First", "Held", "Second"])
    }

    @Test func twoNewStoresAtOnePathDoNotOverwriteEachOther() throws {
        defer { Support.cleanUp(folder) }
        let fresh = folder.appendingPathComponent("New.xml")
        let one = try XMLStore.open(url: fresh, model: Support.company)
        let other = try XMLStore.open(url: fresh, model: Support.company)
        try add("One", to: one)
        let error = #expect(throws: GraftError.self) { try add("Other", to: other) }
        #expect(
            error?.description
                == "\(fresh.relativePath): was created by another writer while this one worked; nothing was written")
        #expect(try XMLStore.open(url: fresh, model: Support.company).count == 1)
    }

    @Test func aSymbolicLinkToAStoreIsSavedThrough() throws {
        defer { Support.cleanUp(folder) }
        let link = folder.appendingPathComponent("Link.xml")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "Projects.xml")
        let store = try XMLStore.open(url: link, model: Support.company)
        try add("Through the link", to: store)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "Projects.xml")
        #expect(try titles() == ["First", "Through the link"])
        #expect(Support.contents(of: folder) == ["Link.xml", "Projects.xml"])
    }

    @Test func theWritersTemporaryFileCarriesItsProcessID() throws {
        defer { Support.cleanUp(folder) }
        var writer = try XMLStoreWriter(
            url: url, model: Support.company, metadata: StoreMetadata.make(for: Support.company, storeType: .xml),
            overwrite: true)
        let name = writer.temporaryURL.lastPathComponent
        #expect(name.hasPrefix(".Projects.xml.graft-\(getpid())-") && name.hasSuffix(".tmp"), "\(name)")
        writer.cancel()
        #expect(Support.contents(of: folder) == ["Projects.xml"])
    }
}
