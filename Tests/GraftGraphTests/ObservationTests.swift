import Foundation
import GraftCore
import GraftModel
import Testing

@testable import GraftGraph

/// Key observation, context changes, will-save and did-save, and their asynchronous sequences.
@Suite struct ObservationTests {
    /// Collects what an observer receives.
    final class Received<Element> {
        var items: [Element] = []
        func add(_ item: Element) { items.append(item) }
    }

    @Test func attributeChangesAreObservedUntilTheTokenIsCancelled() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        let received = Received<KeyChange>()
        let token = try ann.observe("name", received.add)
        try ann.setValue("Ann", forKey: "name")
        try ann.setValue("Ann", forKey: "name")  // no change, nothing sent
        #expect(received.items.count == 1)
        #expect(received.items.first?.kind == .setting)
        #expect(received.items.first?.oldValue == nil)
        #expect(received.items.first?.newValue as? String == "Ann")
        context.undo()
        #expect(received.items.count == 2)
        #expect(received.items.last?.oldValue as? String == "Ann")
        #expect(received.items.last?.newValue == nil)
        token.cancel()
        try ann.setValue("Anne", forKey: "name")
        #expect(received.items.count == 2)
    }

    @Test func releasingTheTokenStopsObserving() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        let received = Received<KeyChange>()
        do {
            let token = try ann.observe(nil, received.add)
            try ann.setValue("Ann", forKey: "name")
            withExtendedLifetime(token) {}
        }
        try ann.setValue("Anne", forKey: "name")
        #expect(received.items.map(\.key) == ["name"])
    }

    @Test func unknownKeysAreRefused() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        #expect(throws: GraftError.self) { try ann.observe("nickname") { _ in } }
    }

    /// One operation on a to-many proxy, and the one change it must send for the owner's key.
    struct ProxyCase: CustomStringConvertible, Sendable {
        let description: String
        let key: String
        let kind: KeyChange.Kind
        let inserted: Int
        let removed: Int
        let operation: @Sendable (RelationshipSet, [ManagedObject]) throws -> Void
    }

    static let proxyCases: [ProxyCase] = [
        ProxyCase(description: "insert", key: "songs", kind: .insertion, inserted: 1, removed: 0) { set, songs in
            try set.insert(songs[3])
        },
        ProxyCase(description: "insert at", key: "songs", kind: .insertion, inserted: 1, removed: 0) { set, songs in
            try set.insert(songs[3], at: 0)
        },
        ProxyCase(description: "insert contents", key: "songs", kind: .insertion, inserted: 2, removed: 0) {
            set, songs in try set.insert(contentsOf: [songs[3], songs[4]])
        },
        ProxyCase(description: "remove", key: "songs", kind: .removal, inserted: 0, removed: 1) { set, songs in
            try set.remove(songs[0])
        },
        ProxyCase(description: "remove contents", key: "songs", kind: .removal, inserted: 0, removed: 2) {
            set, songs in try set.remove(contentsOf: [songs[0], songs[2]])
        },
        ProxyCase(description: "remove all", key: "songs", kind: .removal, inserted: 0, removed: 3) { set, _ in
            try set.removeAll()
        },
        ProxyCase(description: "replace", key: "songs", kind: .replacement, inserted: 2, removed: 2) { set, songs in
            try set.replace(with: [songs[1], songs[3], songs[4]])
        },
        ProxyCase(description: "move", key: "songs", kind: .replacement, inserted: 0, removed: 0) { set, songs in
            try set.move(songs[2], to: 0)
        },
        ProxyCase(description: "unordered insert contents", key: "friends", kind: .insertion, inserted: 2, removed: 0) {
            set, songs in try set.insert(contentsOf: [songs[3], songs[4]])
        },
        ProxyCase(description: "unordered replace", key: "friends", kind: .replacement, inserted: 1, removed: 3) {
            set, songs in try set.replace(with: [songs[4]])
        },
    ]

    @Test(arguments: proxyCases)
    func toManyProxyMutationsSendOneChangeEach(_ proxyCase: ProxyCase) throws {
        let context = ObjectContext(model: TestModels.kinds)
        let isFriends = proxyCase.key == "friends"
        let owner = try context.insert(isFriends ? "Person" : "Playlist")
        let members = try (0..<5).map { _ in try context.insert(isFriends ? "Person" : "Song") }
        try owner.relatedObjects(forKey: proxyCase.key).insert(contentsOf: Array(members[0..<3]))
        let received = Received<KeyChange>()
        let token = try owner.observe(proxyCase.key, received.add)
        let inverse = isFriends ? "friends" : "playlists"
        let inverseReceived = Received<KeyChange>()
        let inverseTokens = try members.map { try $0.observe(inverse, inverseReceived.add) }

        try proxyCase.operation(try owner.relatedObjects(forKey: proxyCase.key), members)

        #expect(received.items.count == 1)
        let change = try #require(received.items.first)
        #expect(change.kind == proxyCase.kind)
        #expect(change.inserted.count == proxyCase.inserted)
        #expect(change.removed.count == proxyCase.removed)
        // Each member whose membership changed hears of it once, through the inverse.
        let changedMembers = Set((change.inserted + change.removed).map(ObjectIdentifier.init))
        #expect(inverseReceived.items.count == changedMembers.count)
        #expect(Set(inverseReceived.items.map { ObjectIdentifier($0.object) }) == changedMembers)
        withExtendedLifetime((token, inverseTokens)) {}
    }

    @Test func aFailedOperationSendsNothing() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let other = ObjectContext(model: TestModels.kinds)
        let playlist = try context.insert("Playlist")
        let song = try context.insert("Song")
        let foreign = try other.insert("Song")
        let received = Received<KeyChange>()
        let token = try playlist.observe(nil, received.add)
        let songToken = try song.observe(nil, received.add)
        // `song` is added first, then the foreign song is refused and the whole operation reverted.
        #expect(throws: GraftError.self) {
            try playlist.relatedObjects(forKey: "songs").replace(with: [song, foreign])
        }
        #expect(received.items.isEmpty)
        #expect(playlist.related("songs").isEmpty)
        withExtendedLifetime((token, songToken)) {}
    }

    @Test func deletionRulesAreObservedOnTheOtherSide() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        let note = try context.insert("Note")
        let passport = try context.insert("Passport")
        try ann.setValue(passport, forKey: "passport")
        let bob = try context.insert("Person")
        try ann.setValue(bob, forKey: "spouse")
        try ann.relatedObjects(forKey: "notes").insert(note)
        let received = Received<KeyChange>()
        let token = try bob.observe("spouse", received.add)
        try context.delete(ann)  // Nullify: bob.spouse becomes nil
        #expect(received.items.count == 1)
        #expect(received.items.first?.oldValue as? ManagedObject === ann)
        #expect(received.items.first?.newValue == nil)
        withExtendedLifetime(token) {}
    }

    @Test func contextChangesArriveOncePerProcessedChangeSet() throws {
        let store = InMemoryStore(model: TestModels.kinds)
        let setup = ObjectContext(store: store)
        let saved = try (0..<3).map { index in
            let person = try setup.insert("Person")
            try person.setValue("P\(index)", forKey: "name")
            return person
        }
        try setup.save()

        let context = ObjectContext(store: store)
        let received = Received<ContextChanges>()
        let token = context.observeChanges(received.add)
        let edited = context.object(with: saved[0].objectID)
        let deleted = context.object(with: saved[1].objectID)
        let refreshed = context.object(with: saved[2].objectID)
        let inserted = try context.insert("Person")
        try inserted.setValue("New", forKey: "name")  // an inserted object is not also updated
        try edited.setValue("Edited", forKey: "name")
        try context.delete(deleted)
        let transient = try context.insert("Person")
        try context.delete(transient)  // inserted and deleted again: in neither list
        _ = refreshed.value(forKey: "name")
        try context.refresh(refreshed, mergeChanges: false)
        #expect(received.items.isEmpty)  // nothing until changes are processed

        context.processPendingChanges()
        #expect(received.items.count == 1)
        let changes = try #require(received.items.first)
        #expect(changes.inserted == [inserted])
        #expect(changes.updated == [edited])
        #expect(changes.changedKeys[edited] == ["name"])
        #expect(changes.deleted == [deleted])
        #expect(changes.refreshed == [refreshed])

        context.processPendingChanges()
        #expect(received.items.count == 1)  // nothing new, nothing sent
        try inserted.setValue("Newer", forKey: "name")
        try context.save()  // a save processes pending changes first
        #expect(received.items.count == 2)
        // Already reported as inserted: now it is an update, as Core Data reports it.
        #expect(received.items.last?.inserted == [])
        #expect(received.items.last?.updated == [inserted])
        withExtendedLifetime(token) {}
    }

    @Test func undoIsProcessedAsAChangeSet() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        context.processPendingChanges()
        let received = Received<ContextChanges>()
        let token = context.observeChanges(received.add)
        context.undo()  // the insertion
        #expect(received.items.count == 1)
        #expect(received.items.first?.deleted == [ann])
        context.redo()
        #expect(received.items.count == 2)
        #expect(received.items.last?.inserted == [ann])
        withExtendedLifetime(token) {}
    }

    @Test func aRollbackIsObservedAsTheChangesItUndoes() throws {
        let store = InMemoryStore(model: TestModels.kinds)
        let setup = ObjectContext(store: store)
        let savedAnn = try setup.insert("Person")
        try savedAnn.setValue("Ann", forKey: "name")
        let savedBob = try setup.insert("Person")
        try savedBob.setValue("Bob", forKey: "name")
        try savedAnn.relatedObjects(forKey: "friends").insert(savedBob)
        try setup.save()

        let context = ObjectContext(store: store)
        let ann = context.object(with: savedAnn.objectID)
        let bob = context.object(with: savedBob.objectID)
        _ = ann.related("friends")
        let changes = Received<ContextChanges>()
        let keys = Received<KeyChange>()
        let token = context.observeChanges(changes.add)
        let annToken = try ann.observe(nil, keys.add)
        let cy = try context.insert("Person")
        try ann.setValue("Anne", forKey: "name")
        try ann.relatedObjects(forKey: "friends").replace(with: [cy])
        context.processPendingChanges()
        keys.items.removeAll()

        context.rollback()
        #expect(changes.items.count == 2)
        let rolledBack = try #require(changes.items.last)
        #expect(rolledBack.deleted == [cy])  // the new object leaves
        #expect(rolledBack.updated.contains(ann))
        #expect(rolledBack.changedKeys[ann] == ["name", "friends"])
        #expect(keys.items.map(\.key).sorted() == ["friends", "name"])
        #expect(keys.items.first { $0.key == "name" }?.newValue as? String == "Ann")
        let friends = try #require(keys.items.first { $0.key == "friends" })
        #expect(friends.inserted == [bob] && friends.removed == [cy])
        withExtendedLifetime((token, annToken)) {}
    }

    @Test func willSaveAndDidSaveCarryTheSavedChanges() throws {
        let store = InMemoryStore(model: TestModels.kinds)
        let context = ObjectContext(store: store)
        let kept = try context.insert("Person")
        try kept.setValue("Kept", forKey: "name")
        let gone = try context.insert("Person")
        try gone.setValue("Gone", forKey: "name")
        try context.save()

        var events: [String] = []
        var saved: [SaveChanges] = []
        let willToken = context.observeWillSave { events.append("will save") }
        let didToken = context.observeDidSave { changes in
            events.append("did save")
            saved.append(changes)
        }
        let added = try context.insert("Person")
        try added.setValue("Added", forKey: "name")
        try kept.setValue("Renamed", forKey: "name")
        try context.delete(gone)
        try context.save()
        #expect(events == ["will save", "did save"])
        let changes = try #require(saved.first)
        #expect(changes.storeIdentifier == store.identifier)
        #expect(changes.inserted == [added.objectID])
        #expect(changes.inserted.allSatisfy { !$0.isTemporary })
        #expect(changes.updated == [kept.objectID])
        #expect(changes.changedKeys[kept.objectID] == ["name"])
        #expect(changes.deleted == [gone.objectID])

        try context.save()  // nothing to save: no notifications
        #expect(events.count == 2)
        withExtendedLifetime((willToken, didToken)) {}
    }

    @Test(.timeLimit(.minutes(1))) func keyChangesAsAnAsyncSequence() async throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        let stream = try ann.changes(forKey: "name")
        try ann.setValue("Ann", forKey: "name")
        try ann.setValue("Anne", forKey: "name")
        var names: [String] = []
        for await change in stream {
            names.append(change.newValue as? String ?? "-")
            if names.count == 2 { break }
        }
        #expect(names == ["Ann", "Anne"])
    }

    @Test(.timeLimit(.minutes(1))) func aConsumerThatStopsEndsTheObservationAtTheNextChange() async throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        do {
            let stream = try ann.changes(forKey: "name")
            try ann.setValue("Ann", forKey: "name")
            for await _ in stream { break }
        }  // the consumer stops and lets the sequence go
        #expect(!context.observation.keyObservers.isEmpty)  // until the next change is delivered
        try ann.setValue("Anne", forKey: "name")
        #expect(context.observation.keyObservers.isEmpty)
    }

    @Test func observingNeedsTheObjectsContext() throws {
        var context: ObjectContext? = ObjectContext(model: TestModels.kinds)
        let ann = try context!.insert("Person")
        context = nil
        #expect(throws: GraftError.self) { try ann.observe("name") { _ in } }
        #expect(throws: GraftError.self) { try ann.changes(forKey: "name") }
    }

    @Test(.timeLimit(.minutes(1))) func contextChangesAndSavesAsAsyncSequences() async throws {
        var context: ObjectContext? = ObjectContext(model: TestModels.kinds)
        let changes = context!.changes()
        let saves = context!.didSaveEvents()
        let willSaves = context!.willSaveEvents()
        let ann = try context!.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        try context!.save()
        context = nil  // the sequences end with the context
        var changeSets: [ContextChanges] = []
        for await change in changes { changeSets.append(change) }
        var savedSets: [SaveChanges] = []
        for await saved in saves { savedSets.append(saved) }
        var willSaveCount = 0
        for await _ in willSaves { willSaveCount += 1 }
        #expect(changeSets.count == 1)
        #expect(changeSets.first?.inserted.count == 1)
        #expect(savedSets.count == 1)
        #expect(savedSets.first?.inserted.count == 1)
        #expect(willSaveCount == 1)
    }
}
