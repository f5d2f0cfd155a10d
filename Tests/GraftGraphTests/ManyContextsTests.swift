import Foundation
import GraftCore
import GraftModel
import Testing

@testable import GraftGraph

/// Two contexts on one store: optimistic locking, merge policies, merging saved changes, refresh.
@Suite struct ManyContextsTests {
    /// Departments and employees, without rules that would get in the way of the scenarios.
    static let office: Model = {
        let department = Entity(
            name: "Department", attributes: [Attribute(name: "name", type: .string)],
            relationships: [
                Relationship(name: "employees", destination: "Employee", inverse: "department", isToMany: true)
            ])
        let employee = Entity(
            name: "Employee",
            attributes: [Attribute(name: "name", type: .string), Attribute(name: "salary", type: .integer64)],
            relationships: [Relationship(name: "department", destination: "Department", inverse: "employees")])
        return try! Model(entities: [department, employee])
    }()

    /// A store with Sales (Alan, Bea) and Support (nobody); the contexts `a` and `b` on it, each holding
    /// Alan with his department loaded.
    struct Office {
        let store = InMemoryStore(model: ManyContextsTests.office)
        let a: ObjectContext
        let b: ObjectContext
        let alanID: ObjectID
        let salesID: ObjectID
        let supportID: ObjectID

        init() throws {
            let setup = ObjectContext(store: store)
            let sales = try setup.insert("Department")
            try sales.setValue("Sales", forKey: "name")
            let support = try setup.insert("Department")
            try support.setValue("Support", forKey: "name")
            for name in ["Alan", "Bea"] {
                let employee = try setup.insert("Employee")
                try employee.setValue(name, forKey: "name")
                try employee.setValue(sales, forKey: "department")
            }
            try setup.save()
            alanID = try #require(setup.registeredObjects.first { $0.string("name") == "Alan" }).objectID
            salesID = sales.objectID
            supportID = support.objectID
            a = ObjectContext(store: store)
            b = ObjectContext(store: store)
            for context in [a, b] {
                let alan = try context.existingObject(with: alanID)
                _ = alan.one("department")?.related("employees")
            }
        }

        /// Alan as `context` has him.
        func alan(in context: ObjectContext) -> ManagedObject { context.object(with: alanID) }

        /// Alan's name and department name as a new context reads them from the store.
        func stored() throws -> (name: String?, department: String?) {
            let reader = ObjectContext(store: store)
            let alan = try reader.existingObject(with: alanID)
            return (alan.string("name"), alan.one("department")?.string("name"))
        }
    }

    // MARK: Lost updates

    @Test func aStaleSaveFailsWithAMergeConflictAndWritesNothing() throws {
        let office = try Office()
        let alanB = office.alan(in: office.b)
        try alanB.setValue(office.b.object(with: office.supportID), forKey: "department")
        try office.b.save()

        try office.alan(in: office.a).setValue("Alan Turing", forKey: "name")
        let error = try #require(throws: GraftError.self) { try office.a.save() }
        #expect(error.code == .mergeConflict)
        #expect(error.underlying.count == 1)
        let conflict = try #require(error.underlying.first)
        #expect(conflict.context == [.object("Employee p1")])
        #expect(conflict.message.contains("read at version 1, now 2"))
        #expect(conflict.message.contains("department: stored p2, in memory p1 (changed in the store)"))
        #expect(conflict.message.contains("name: stored \"Alan\", in memory \"Alan Turing\" (changed here)"))
        #expect(try office.stored() == ("Alan", "Support"))  // B's change was not reverted
        #expect(office.a.hasChanges)  // the context is as before
    }

    @Test func theConflictErrorListsEveryObject() throws {
        let office = try Office()
        let staffA = office.a.object(with: office.salesID).related("employees")
        for person in staffA { _ = person.string("name") }  // A reads them before B saves
        let staffB = office.b.object(with: office.salesID).related("employees")
        for person in staffB { try person.setValue(1, forKey: "salary") }
        try office.b.save()
        for person in office.a.object(with: office.salesID).related("employees") {
            try person.setValue(2, forKey: "salary")
        }
        let error = try #require(throws: GraftError.self) { try office.a.save() }
        #expect(error.message.hasPrefix("2 objects changed in the store since this context read them"))
        #expect(error.underlying.map(\.context) == [[.object("Employee p1")], [.object("Employee p2")]])
        #expect(
            error.underlying.allSatisfy {
                $0.message.contains("salary: stored 1, in memory 2 (changed here and in the store)")
            })
    }

    /// B renames Alan and moves him to Support; A, holding Alan from before, renames him too.
    @Test(arguments: [
        (MergePolicy.mergeByPropertyStoreTrump, "Alan B", "Support"),
        (.mergeByPropertyObjectTrump, "Alan A", "Support"),
        (.overwrite, "Alan A", "Sales"),
        (.rollback, "Alan B", "Support"),
    ])
    func eachMergePolicyResolvesAStaleSave(policy: MergePolicy, name: String, department: String) throws {
        let office = try Office()
        let alanB = office.alan(in: office.b)
        try alanB.setValue("Alan B", forKey: "name")
        try alanB.setValue(office.b.object(with: office.supportID), forKey: "department")
        try office.b.save()

        office.a.mergePolicy = policy
        let alanA = office.alan(in: office.a)
        try alanA.setValue("Alan A", forKey: "name")
        try office.a.save()
        #expect(try office.stored() == (name, department))
        #expect(!office.a.hasChanges)
        try office.a.checkInvariants()
        // The store's two sides agree: Alan is in his department's employees and in no other's.
        let reader = ObjectContext(store: office.store)
        for id in [office.salesID, office.supportID] {
            let members = try reader.existingObject(with: id).related("employees").compactMap { $0.string("name") }
            #expect(members.contains(name) == (reader.object(with: id).string("name") == department))
        }
        // A's Alan shows what was saved.
        #expect(alanA.string("name") == name)
        #expect(alanA.one("department")?.string("name") == department)
        // And a second save from A, after the first, conflicts with nothing.
        try alanA.setValue(7, forKey: "salary")
        try office.a.save()
    }

    @Test func onlyTheObjectsChangedOnBothSidesConflict() throws {
        let office = try Office()
        let alanB = office.alan(in: office.b)
        try alanB.setValue(1, forKey: "salary")
        try office.b.save()
        // A changes Sales only, which B did not save: no conflict.
        let sales = office.a.object(with: office.salesID)
        try sales.setValue("Sales & Marketing", forKey: "name")
        try office.a.save()
        #expect(try office.stored().department == "Sales & Marketing")
    }

    @Test(arguments: [
        (MergePolicy.mergeByPropertyStoreTrump, false), (.mergeByPropertyObjectTrump, false), (.overwrite, true),
        (.rollback, false),
    ])
    func anObjectDeletedInTheStoreIsDeletedOrWrittenAgain(policy: MergePolicy, survives: Bool) throws {
        let office = try Office()
        try office.b.delete(office.alan(in: office.b))
        try office.b.save()

        office.a.mergePolicy = policy
        try office.alan(in: office.a).setValue("Alan A", forKey: "name")
        try office.a.save()
        let reader = ObjectContext(store: office.store)
        let found = (try? reader.existingObject(with: office.alanID)) != nil
        #expect(found == survives)
        if survives { #expect(try office.stored() == ("Alan A", "Sales")) }
        try office.a.checkInvariants()
    }

    @Test func theDefaultPolicyReportsAnObjectDeletedInTheStore() throws {
        let office = try Office()
        try office.b.delete(office.alan(in: office.b))
        try office.b.save()
        try office.alan(in: office.a).setValue("Alan A", forKey: "name")
        let error = try #require(throws: GraftError.self) { try office.a.save() }
        #expect(error.code == .mergeConflict)
        #expect(error.underlying.first?.message.contains("deleted in the store since it was read") == true)
        #expect(error.underlying.first?.message.contains("since deleted") == true)
    }

    @Test func aDeletionOfAnObjectChangedInTheStoreConflicts() throws {
        let office = try Office()
        try office.alan(in: office.b).setValue(9, forKey: "salary")
        try office.b.save()
        try office.a.delete(office.alan(in: office.a))
        #expect(throws: GraftError.self) { try office.a.save() }
        office.a.mergePolicy = .mergeByPropertyStoreTrump  // the store's change stands: Alan is kept
        try office.a.save()
        #expect(try office.stored() == ("Alan", "Sales"))
        #expect(office.alan(in: office.a).one("department")?.string("name") == "Sales")
        try office.a.checkInvariants()
    }

    @Test(arguments: [MergePolicy.mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump])
    func aToManyChangedOnBothSidesGetsBothSidesChanges(policy: MergePolicy) throws {
        let office = try Office()
        // B moves Bea out of Sales; A, holding Sales from before, hires Cy into it.
        let salesB = office.b.object(with: office.salesID)
        let beaB = try #require(salesB.related("employees").first { $0.string("name") == "Bea" })
        try beaB.setValue(office.b.object(with: office.supportID), forKey: "department")
        try office.b.save()
        let cy = try office.a.insert("Employee")
        try cy.setValue("Cy", forKey: "name")
        try cy.setValue(office.a.object(with: office.salesID), forKey: "department")
        #expect(throws: GraftError.self) { try office.a.save() }  // Sales changed on both sides
        office.a.mergePolicy = policy
        try office.a.save()
        let reader = ObjectContext(store: office.store)
        let sales = try reader.existingObject(with: office.salesID)
        #expect(sales.related("employees").compactMap { $0.string("name") }.sorted() == ["Alan", "Cy"])
        let support = try reader.existingObject(with: office.supportID)
        #expect(support.related("employees").compactMap { $0.string("name") } == ["Bea"])
        try office.a.checkInvariants()
    }

    // MARK: Merging another context's save

    @Test func mergingASaveShowsItsChangesAndKeepsOwnOnes() throws {
        let office = try Office()
        let alanB = office.alan(in: office.b)
        try alanB.setValue(office.b.object(with: office.supportID), forKey: "department")
        let cy = try office.b.insert("Employee")
        try cy.setValue("Cy", forKey: "name")
        try cy.setValue(office.b.object(with: office.salesID), forKey: "department")
        let bea = try #require(
            office.b.object(with: office.salesID).related("employees").first { $0.string("name") == "Bea" })
        let beaID = bea.objectID
        let beaInA = try office.a.existingObject(with: beaID)
        try office.b.delete(bea)
        let saved = try office.b.save()
        #expect(saved.storeIdentifier == office.store.identifier)
        #expect(saved.inserted == [cy.objectID])
        #expect(saved.deleted == [beaID])
        #expect(Set(saved.updated) == [office.alanID, office.salesID, office.supportID])
        #expect(saved.changedKeys[office.alanID] == ["department"])

        let alanA = office.alan(in: office.a)
        try alanA.setValue("Alan A", forKey: "name")  // pending in A
        try office.a.merge(changesFrom: saved)
        #expect(alanA.string("name") == "Alan A")
        #expect(alanA.one("department")?.string("name") == "Support")
        #expect(beaInA.context == nil)
        let sales = office.a.object(with: office.salesID)
        #expect(sales.related("employees").compactMap { $0.string("name") }.sorted() == ["Cy"])
        try office.a.checkInvariants()
        try office.a.save()  // no conflict: A now counts from the store's version
        #expect(try office.stored() == ("Alan A", "Support"))
    }

    @Test func mergingChangesOfAnotherStoreFails() throws {
        let office = try Office()
        let other = SaveChanges(storeIdentifier: "another store", updated: [office.alanID])
        #expect(throws: GraftError.self) { try office.a.merge(changesFrom: other) }
    }

    // MARK: Refresh

    @Test func refreshWithPendingChangesTakesTheStoresRelationships() throws {
        let office = try Office()
        let alanA = office.alan(in: office.a)
        try alanA.setValue("Alan A", forKey: "name")  // A renames Alan (unsaved)
        try office.alan(in: office.b).setValue(office.b.object(with: office.supportID), forKey: "department")
        try office.b.save()  // B moves him

        try office.a.refresh(alanA, mergeChanges: true)
        #expect(alanA.string("name") == "Alan A")
        #expect(alanA.one("department")?.string("name") == "Support")
        // The departments A holds follow.
        #expect(!office.a.object(with: office.salesID).related("employees").contains(alanA))
        try office.a.checkInvariants()
        try office.a.save()  // writes the name, not the old department, and conflicts with nothing
        #expect(try office.stored() == ("Alan A", "Support"))
    }

    @Test func refreshWithoutPendingChangesReadsTheStoreAgain() throws {
        let office = try Office()
        let alanA = office.alan(in: office.a)
        try office.alan(in: office.b).setValue(office.b.object(with: office.supportID), forKey: "department")
        try office.b.save()
        try office.a.refresh(alanA, mergeChanges: true)
        #expect(alanA.isFault)
        #expect(alanA.one("department")?.string("name") == "Support")
    }

    @Test func refreshKeepsChangesToARelationshipMadeHere() throws {
        let office = try Office()
        let alanA = office.alan(in: office.a)
        try alanA.setValue(office.a.object(with: office.supportID), forKey: "department")
        try office.alan(in: office.b).setValue("Alan B", forKey: "name")
        try office.b.save()
        try office.a.refresh(alanA, mergeChanges: true)
        #expect(alanA.string("name") == "Alan B")
        #expect(alanA.one("department")?.string("name") == "Support")
        try office.a.save()
        #expect(try office.stored() == ("Alan B", "Support"))
    }

    @Test func refreshWithoutMergingTurnsTheObjectIntoAFaultAndReleasesWhatItHeld() throws {
        let office = try Office()
        let context = ObjectContext(store: office.store)
        context.isUndoEnabled = false
        weak var employee: ManagedObject?
        let sales = try context.existingObject(with: office.salesID)
        do {
            let staff = sales.related("employees")
            #expect(staff.count == 2)
            employee = staff.first
            try sales.setValue("Sales!", forKey: "name")
        }
        #expect(employee != nil)  // held by Sales
        try context.refresh(sales, mergeChanges: false)
        #expect(sales.isFault)
        #expect(employee == nil)  // released with Sales' values
        #expect(!context.hasChanges)
        #expect(sales.string("name") == "Sales")
    }

    @Test func retainedObjectsStayUntilRetainingStops() throws {
        let office = try Office()
        let context = ObjectContext(store: office.store)
        context.retainsRegisteredObjects = true
        weak var alan: ManagedObject?
        do { alan = try context.existingObject(with: office.alanID) }
        #expect(alan != nil)
        #expect(context.registeredObject(for: office.alanID) != nil)
        context.retainsRegisteredObjects = false
        #expect(alan == nil)
    }

    // MARK: Undo

    @Test func undoRegistrationCanBePausedWithoutClearingTheStack() throws {
        let context = ObjectContext(model: Self.office)
        let sales = try context.insert("Department")
        try sales.setValue("Sales", forKey: "name")
        #expect(context.undoCount == 2)
        let hidden = try context.withoutUndoRegistration {
            let hidden = try context.insert("Employee")
            try hidden.setValue(sales, forKey: "department")
            return hidden
        }
        #expect(context.undoCount == 2)  // kept, and nothing added
        context.undo()
        #expect(sales.string("name") == nil)
        #expect(hidden.one("department") === sales)  // not undone
        context.undo()
        #expect(sales.isDeleted)
        #expect(!context.canUndo)
        context.redo()
        context.redo()
        #expect(sales.string("name") == "Sales")
    }

    @Test func theUndoStackCanBeLimitedAndCleared() throws {
        let context = ObjectContext(model: Self.office)
        let sales = try context.insert("Department")
        for name in ["A", "B", "C", "D"] { try sales.setValue(name, forKey: "name") }
        #expect(context.undoCount == 5)
        context.levelsOfUndo = 2  // the oldest steps go at once
        #expect(context.undoCount == 2)
        try sales.setValue("E", forKey: "name")
        #expect(context.undoCount == 2)
        context.undo()
        context.undo()
        #expect(sales.string("name") == "C")
        #expect(!context.canUndo)
        context.redo()
        context.removeAllUndoActions()
        #expect(!context.canUndo && !context.canRedo)
        #expect(sales.string("name") == "D")
    }
}
