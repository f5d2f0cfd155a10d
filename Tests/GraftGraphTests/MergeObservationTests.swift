import Foundation
import GraftCore
import GraftModel
import Testing

@testable import GraftGraph

/// Values the store brings into objects (refresh, merging another context's save, merge policies) reach
/// key observers once each, and change observers get the objects as refreshed or deleted; a reset is
/// reported as every object invalidated.
@Suite struct MergeObservationTests {
    typealias Office = ManyContextsTests.Office

    final class Received<Element> {
        var items: [Element] = []
        func add(_ item: Element) { items.append(item) }
    }

    /// B moves Alan to Support and saves.
    static func moveAlanInB(_ office: Office) throws -> SaveChanges {
        try office.alan(in: office.b).setValue(office.b.object(with: office.supportID), forKey: "department")
        return try office.b.save()
    }

    @Test func aRefreshThatMergesSendsTheStoresValuesOnce() throws {
        let office = try Office()
        let alan = office.alan(in: office.a)
        let sales = office.a.object(with: office.salesID)
        try alan.setValue("Alan A", forKey: "name")
        office.a.processPendingChanges()
        _ = try Self.moveAlanInB(office)

        let alanChanges = Received<KeyChange>()
        let salesChanges = Received<KeyChange>()
        let contextChanges = Received<ContextChanges>()
        let tokens = [
            try alan.observe(nil, alanChanges.add), try sales.observe("employees", salesChanges.add),
            office.a.observeChanges(contextChanges.add),
        ]
        try office.a.refresh(alan, mergeChanges: true)
        office.a.processPendingChanges()
        withExtendedLifetime(tokens) {}

        #expect(alanChanges.items.map(\.key) == ["department"])  // the name is A's own change, kept
        let department = try #require(alanChanges.items.first)
        #expect((department.oldValue as? ManagedObject) === sales)
        #expect((department.newValue as? ManagedObject)?.objectID == office.supportID)
        #expect(salesChanges.items.count == 1)
        #expect(salesChanges.items.first?.kind == .removal)
        #expect(salesChanges.items.first?.removed.map(\.objectID) == [office.alanID])
        #expect(contextChanges.items.count == 1)
        let changes = try #require(contextChanges.items.first)
        #expect(changes.updated.isEmpty)
        #expect(Set(changes.refreshed.map(\.objectID)) == [office.alanID, office.salesID])
    }

    @Test func anObservedObjectTurnedIntoAFaultSendsTheValuesItWillRead() throws {
        let office = try Office()
        let alan = office.alan(in: office.a)
        try office.alan(in: office.b).setValue("Alan B", forKey: "name")
        try office.b.save()
        let received = Received<KeyChange>()
        let token = try alan.observe(nil, received.add)
        try office.a.refresh(alan, mergeChanges: true)
        #expect(alan.isFault)
        #expect(received.items.map(\.description) == ["\(alan.label).name: Alan → Alan B"])
        #expect(alan.string("name") == "Alan B")  // reading it again sends nothing more
        #expect(received.items.count == 1)
        withExtendedLifetime(token) {}
    }

    @Test func aRefreshThatDiscardsChangesSendsEachKeyItChanges() throws {
        let office = try Office()
        let alan = office.alan(in: office.a)
        try alan.setValue("Alan A", forKey: "name")
        try office.alan(in: office.b).setValue("Alan B", forKey: "name")
        try office.b.save()
        let received = Received<KeyChange>()
        let token = try alan.observe("name", received.add)
        try office.a.refresh(alan, mergeChanges: false)
        // Back to the value read, then the store's: both are values an observer could have read.
        #expect(received.items.map { $0.newValue as? String } == ["Alan", "Alan B"])
        withExtendedLifetime(token) {}
    }

    @Test func mergingASaveIsOneChangeSetWithItsDeletions() throws {
        let office = try Office()
        let sales = office.a.object(with: office.salesID)
        let bea = try #require(sales.related("employees").first { $0.string("name") == "Bea" })
        let alan = office.alan(in: office.a)

        let salesB = office.b.object(with: office.salesID)
        try office.alan(in: office.b).setValue(office.b.object(with: office.supportID), forKey: "department")
        try office.b.delete(try #require(salesB.related("employees").first { $0.string("name") == "Bea" }))
        let cy = try office.b.insert("Employee")
        try cy.setValue("Cy", forKey: "name")
        try cy.setValue(salesB, forKey: "department")
        let saved = try office.b.save()

        let salesChanges = Received<KeyChange>()
        let alanChanges = Received<KeyChange>()
        let contextChanges = Received<ContextChanges>()
        let tokens = [
            try sales.observe("employees", salesChanges.add), try alan.observe(nil, alanChanges.add),
            office.a.observeChanges(contextChanges.add),
        ]
        try office.a.merge(changesFrom: saved)  // processes its changes itself
        withExtendedLifetime(tokens) {}

        #expect(contextChanges.items.count == 1)
        let changes = try #require(contextChanges.items.first)
        #expect(changes.deleted.count == 1 && changes.deleted.first === bea)
        #expect(changes.inserted.isEmpty && changes.updated.isEmpty)
        #expect(Set(changes.refreshed.map(\.objectID)).isSuperset(of: [office.salesID, office.alanID]))
        // Sales lost Alan and Bea and gained Cy: one change for the key.
        #expect(salesChanges.items.count == 1)
        let employees = try #require(salesChanges.items.first)
        #expect(employees.kind == .replacement)
        #expect(Set(employees.removed.map(ObjectIdentifier.init)) == [ObjectIdentifier(alan), ObjectIdentifier(bea)])
        #expect(employees.inserted.map(\.objectID) == [cy.objectID])
        #expect(alanChanges.items.map(\.key) == ["department"])
        #expect(!office.a.hasChanges)
        try office.a.checkInvariants()
    }

    @Test func aMergePolicyThatTakesTheStoresValueSendsIt() throws {
        let office = try Office()
        let alan = office.alan(in: office.a)
        try alan.setValue("Alan A", forKey: "name")
        try office.alan(in: office.b).setValue("Alan B", forKey: "name")
        try office.b.save()
        office.a.mergePolicy = .mergeByPropertyStoreTrump
        let received = Received<KeyChange>()
        let token = try alan.observe("name", received.add)
        try office.a.save()
        #expect(received.items.map { "\($0.oldValue ?? "nil") → \($0.newValue ?? "nil")" } == ["Alan A → Alan B"])
        withExtendedLifetime(token) {}
    }

    @Test func aResetInvalidatesEveryObjectInOneChangeSet() throws {
        let office = try Office()
        let alan = office.alan(in: office.a)
        try alan.setValue("Alan A", forKey: "name")  // not processed yet: a reset discards it unreported
        let keyChanges = Received<KeyChange>()
        let contextChanges = Received<ContextChanges>()
        let tokens = [try alan.observe(nil, keyChanges.add), office.a.observeChanges(contextChanges.add)]
        office.a.reset()
        office.a.processPendingChanges()
        withExtendedLifetime(tokens) {}
        #expect(contextChanges.items.count == 1)
        let changes = try #require(contextChanges.items.first)
        #expect(changes.invalidatedAll)
        #expect(changes.inserted.isEmpty && changes.updated.isEmpty && changes.deleted.isEmpty)
        #expect(keyChanges.items.isEmpty)
    }
}

/// Delete rules when another context's deletion is merged.
@Suite struct MergedDeletionTests {
    static let model: Model = {
        let department = Entity(
            name: "Department", attributes: [Attribute(name: "name", type: .string)],
            relationships: [
                Relationship(
                    name: "employees", destination: "Employee", inverse: "department", isToMany: true,
                    deleteRule: .cascade)
            ])
        let employee = Entity(
            name: "Employee", attributes: [Attribute(name: "name", type: .string)],
            relationships: [Relationship(name: "department", destination: "Department", inverse: "employees")])
        return try! Model(entities: [department, employee])
    }()

    @Test func newObjectsADeletedObjectCascadesToGoWithIt() throws {
        let store = InMemoryStore(model: Self.model)
        let setup = ObjectContext(store: store)
        let sales = try setup.insert("Department")
        try sales.setValue("Sales", forKey: "name")
        try setup.save()
        let a = ObjectContext(store: store)
        let b = ObjectContext(store: store)
        let salesA = try a.existingObject(with: sales.objectID)
        let newcomer = try a.insert("Employee")
        try newcomer.setValue(salesA, forKey: "department")
        try b.delete(try b.existingObject(with: sales.objectID))
        let saved = try b.save()

        try a.merge(changesFrom: saved)
        #expect(salesA.context == nil)
        #expect(newcomer.isDeleted || newcomer.context == nil)
        #expect(!a.hasChanges)  // the newcomer was only here: nothing is left to save
        try a.checkInvariants()
    }
}

extension MergeObservationTests {
    @Test func theOverwritePolicySendsOnlyTheNetChangeOfTheOtherSide() throws {
        let office = try Office()
        let alan = office.alan(in: office.a)
        let sales = office.a.object(with: office.salesID)
        try alan.setValue("Alan A", forKey: "name")
        _ = try Self.moveAlanInB(office)
        office.a.mergePolicy = .overwrite
        let received = Received<KeyChange>()
        let token = try sales.observe("employees", received.add)
        try office.a.save()
        // Sales held Alan before the save and holds him after: the store's removal and this context's
        // insertion again fold into nothing.
        #expect(received.items.isEmpty)
        #expect(sales.related("employees").contains(alan))
        withExtendedLifetime(token) {}
        #expect(try office.stored() == ("Alan A", "Sales"))
    }
}

extension MergedDeletionTests {
    @Test func anObjectMovedHereIntoADeletedObjectGoesWithIt() throws {
        let store = InMemoryStore(model: Self.model)
        let setup = ObjectContext(store: store)
        let sales = try setup.insert("Department")
        let support = try setup.insert("Department")
        let ann = try setup.insert("Employee")
        try ann.setValue(support, forKey: "department")
        try setup.save()
        let a = ObjectContext(store: store)
        let b = ObjectContext(store: store)
        let annA = try a.existingObject(with: ann.objectID)
        try annA.setValue(a.object(with: sales.objectID), forKey: "department")  // moved here, unsaved
        try b.delete(try b.existingObject(with: sales.objectID))
        let saved = try b.save()
        #expect(saved.deleted == [sales.objectID])  // in the store, Ann was not in Sales

        try a.merge(changesFrom: saved)
        #expect(annA.isDeleted)  // in A she was: the cascade takes her, as delete(_:) would
        #expect(a.deletedObjects == [annA])
        try a.checkInvariants()
    }
}

extension MergedDeletionTests {
    @Test func aCascadeHereIsReportedWithTheMergeInOneChangeSet() throws {
        let store = InMemoryStore(model: Self.model)
        let setup = ObjectContext(store: store)
        let sales = try setup.insert("Department")
        try setup.save()
        let a = ObjectContext(store: store)
        let b = ObjectContext(store: store)
        let received = MergeObservationTests.Received<ContextChanges>()
        let token = a.observeChanges(received.add)
        let salesA = try a.existingObject(with: sales.objectID)
        let ann = try a.insert("Employee")
        try ann.setValue(salesA, forKey: "department")
        a.processPendingChanges()  // Ann is told as inserted
        #expect(received.items.count == 1)

        try b.delete(try b.existingObject(with: sales.objectID))
        try a.merge(changesFrom: try b.save())
        withExtendedLifetime(token) {}
        #expect(received.items.count == 2)
        let merged = try #require(received.items.last)
        // Sales left with the merge; the cascade here took Ann with it: one change set.
        #expect(Set(merged.deleted.map(ObjectIdentifier.init)) == [ObjectIdentifier(salesA), ObjectIdentifier(ann)])
        #expect(merged.inserted.isEmpty && merged.updated.isEmpty)
        #expect(!a.hasChanges)
    }
}
