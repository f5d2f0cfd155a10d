import Foundation
import GraftCore
import GraftModel
import Testing

@testable import GraftGraph

@Suite struct StateTests {
    @Test func statesFollowTheObjectsLife() throws {
        let store = InMemoryStore(model: TestModels.kinds)
        let context = ObjectContext(store: store)
        let ann = try context.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        #expect(ann.state == .new)
        #expect(context.insertedObjects == [ann])
        try context.save()
        #expect(ann.state == .unchanged)
        #expect(!ann.objectID.isTemporary)
        #expect(ann.uri == "x-coredata://\(store.identifier)/Person/p1")

        try ann.setValue("Anna", forKey: "name")
        #expect(ann.state == .changed)
        #expect(context.updatedObjects == [ann])
        #expect(ann.changedValues()["name"] as? String == "Anna")
        // Setting the saved value back makes it unchanged again.
        try ann.setValue("Ann", forKey: "name")
        #expect(ann.state == .unchanged)
        #expect(!context.hasChanges)

        try context.delete(ann)
        #expect(ann.state == .deleted)
        #expect(context.deletedObjects == [ann])
        try context.save()
        #expect(store.count == 0)
        #expect(ann.context == nil)
    }

    @Test func rollbackRestoresSavedValuesAndDropsNewObjects() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        let bob = try context.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        try bob.setValue("Bob", forKey: "name")
        try ann.setValue(bob, forKey: "spouse")
        try context.save()

        let cid = try context.insert("Person")
        try cid.setValue("Cid", forKey: "name")
        try cid.setValue(ann, forKey: "spouse")
        try bob.setValue("Robert", forKey: "name")
        try context.delete(bob)
        context.rollback()
        #expect(!context.hasChanges)
        #expect(bob.string("name") == "Bob")
        #expect(!bob.isDeleted)
        #expect(ann.one("spouse") === bob)
        #expect(bob.one("spouse") === ann)
        #expect(cid.context == nil)
        try context.checkInvariants()
    }

    @Test func faultsFillFromTheStoreAndUniquingHolds() throws {
        let store = InMemoryStore(model: TestModels.kinds)
        let writer = ObjectContext(store: store)
        let ann = try writer.insert("Person")
        let bob = try writer.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        try bob.setValue("Bob", forKey: "name")
        try ann.setValue(bob, forKey: "spouse")
        try writer.save()

        let reader = ObjectContext(store: store)
        let annAgain = try reader.existingObject(with: ann.objectID)
        let spouse = try #require(annAgain.one("spouse"))
        #expect(spouse.isFault)
        #expect(spouse.string("name") == "Bob")
        #expect(!spouse.isFault)
        #expect(reader.object(with: bob.objectID) === spouse)
        #expect(try reader.object(forURI: bob.uri) === spouse)
    }

    @Test func refreshTurnsObjectsIntoFaultsKeepingOrDroppingChanges() throws {
        let store = InMemoryStore(model: TestModels.kinds)
        let context = ObjectContext(store: store)
        let ann = try context.insert("Person")
        let bob = try context.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        try bob.setValue("Bob", forKey: "name")
        try context.save()

        try context.refresh(ann, mergeChanges: false)
        #expect(ann.isFault)
        #expect(ann.string("name") == "Ann")

        try ann.setValue("Anna", forKey: "name")
        try context.refresh(ann, mergeChanges: true)
        #expect(ann.string("name") == "Anna")  // kept

        try ann.setValue(bob, forKey: "spouse")
        try context.refresh(ann, mergeChanges: false)
        #expect(ann.isFault)
        #expect(ann.string("name") == "Ann")
        #expect(bob.one("spouse") == nil)  // the relationship edit was undone on both sides
        #expect(!context.hasChanges)
        try context.checkInvariants()
    }

    @Test func unchangedObjectsNobodyHoldsAreReleased() throws {
        let store = InMemoryStore(model: TestModels.kinds)
        let context = ObjectContext(store: store)
        context.isUndoEnabled = false  // undo history would keep the inserted objects alive
        for index in 0..<100 {
            let person = try context.insert("Person")
            try person.setValue("P\(index)", forKey: "name")
        }
        try context.save()
        weak var released: ManagedObject?
        do {
            let person = try context.existingObject(
                with: ObjectID(entity: TestModels.kinds.entity(named: "Person")!.index, key: 1))
            released = person
            #expect(person.string("name") == "P0")
        }
        #expect(released == nil)
    }

    @Test func aFailingStoreLeavesTheContextAsItWas() throws {
        let store = InMemoryStore(model: TestModels.kinds)
        let context = ObjectContext(store: store)
        let ann = try context.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        store.failNextSave = GraftError(.io, "disk full")
        #expect(throws: GraftError.self) { try context.save() }
        #expect(ann.state == .new)
        #expect(store.count == 0)
        try context.save()
        #expect(store.count == 1)
    }
}
