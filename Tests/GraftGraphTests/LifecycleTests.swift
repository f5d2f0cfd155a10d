import Foundation
import GraftCore
import GraftModel
import Testing

@testable import GraftGraph

/// What the life-cycle methods of the test classes were called for, in order, for the running test.
final class Journal: @unchecked Sendable {
    @TaskLocal static var current: Journal?
    private let lock = NSLock()
    private var recorded: [String] = []

    /// What was noted, in order; assigning replaces it.
    var entries: [String] {
        get { lock.withLock { recorded } }
        set { lock.withLock { recorded = newValue } }
    }

    static func note(_ entry: String) { current?.entries.append(entry) }

    func run<T>(_ body: () throws -> T) rethrows -> T {
        try Journal.$current.withValue(self) { try body() }
    }
}

/// A person that writes every life-cycle call into the journal, names itself when inserted, and can be
/// told to refuse deletion or to keep changing in `willSave()`.
final class JournaledPerson: ManagedObject {
    var refusesDeletion = false
    var restlessUntil = 0
    var heldAtDeletion: [String: Int] = [:]
    /// An object `willSave()` deletes (as Apple's own classes do).
    var deletesInWillSave: ManagedObject?

    private var name: String { (value(forKey: "name") as? String) ?? "?" }

    override func awakeFromInsert() {
        Journal.note("awakeFromInsert")
        try? setValue("Newcomer", forKey: "name")
    }

    override func awakeFromFetch() {
        Journal.note("awakeFromFetch \(name)")
    }

    override func willSave() throws {
        Journal.note("willSave \(name)")
        if value(forKey: "name") == nil { try setValue("Named in willSave", forKey: "name") }
        if let doomed = deletesInWillSave, !doomed.isDeleted { try context?.delete(doomed) }
        if restlessUntil > 0 {
            restlessUntil -= 1
            try setValue("\(name)!", forKey: "name")
        }
    }

    override func didSave() {
        Journal.note("didSave \(name) \(objectID.isTemporary ? "temporary" : "permanent")")
    }

    override func prepareForDeletion() throws {
        Journal.note("prepareForDeletion \(name)")
        heldAtDeletion = ["friends": related("friends").count, "passport": one("passport") == nil ? 0 : 1]
        if refusesDeletion { throw GraftError(.deleteDenied, "\(name) stays") }
    }

    override func willTurnIntoFault() { Journal.note("willTurnIntoFault \(name)") }
    override func didTurnIntoFault() { Journal.note("didTurnIntoFault \(isFault)") }
}

final class JournaledPassport: ManagedObject {
    override func prepareForDeletion() throws { Journal.note("prepareForDeletion passport") }
}

/// A person that, when read from the store, gives itself a note if it has none (the seed case's shape).
final class NotedPerson: ManagedObject {
    override func awakeFromFetch() {
        guard let context, related("notes").isEmpty, let note = try? context.insert("Note") else { return }
        try? relatedObjects(forKey: "notes").insert(note)
    }
}

/// Registered by the Company model's class name.
final class Department: ManagedObject {}

@Suite struct LifecycleTests {
    func context(_ store: InMemoryStore? = nil) throws -> ObjectContext {
        let context = ObjectContext(store: store ?? InMemoryStore(model: TestModels.kinds))
        try context.register(JournaledPerson.self, forEntity: "Person")
        try context.register(JournaledPassport.self, forEntity: "Passport")
        return context
    }

    @Test func classesAreRegisteredByTheModelsClassNameOrExplicitly() throws {
        let store = InMemoryStore(model: TestModels.company)
        let context = ObjectContext(store: store)
        try context.register(Department.self)
        #expect(try context.insert("Department") is Department)
        #expect(!(try context.insert("Project") is Department))
        context.rollback()
        let sales = try makeDepartment(context, name: "Sales", employees: 3)
        try context.save()
        let other = ObjectContext(store: store)
        try other.register(Department.self)
        #expect(other.object(with: sales.objectID) is Department)
        #expect(other.objectClass(for: sales.entity) == Department.self)

        // No entity of the kinds model has the class name Department; an explicit entity is needed.
        let kinds = ObjectContext(model: TestModels.kinds)
        #expect(throws: GraftError.self) { try kinds.register(Department.self) }
        #expect(throws: GraftError.self) { try kinds.register(Department.self, forEntity: "Nothing") }
        try kinds.register(Department.self, forEntity: "Album")
        #expect(try kinds.insert("Album") is Department)
    }

    @Test func awakeFromInsertRunsOnceInsideTheInsertionsUndoStep() throws {
        let journal = Journal()
        try journal.run {
            let context = try context()
            let ann = try context.insert("Person")
            #expect(ann is JournaledPerson)
            #expect(ann.string("name") == "Newcomer")
            context.undo()  // the insertion and what awakeFromInsert did, together
            #expect(context.insertedObjects.isEmpty)
            context.redo()
            #expect(ann.string("name") == "Newcomer")
            #expect(!context.canRedo)
        }
        #expect(journal.entries == ["awakeFromInsert"])
    }

    @Test func awakeFromFetchRunsEachTimeValuesAreReadAndRegistersNoUndo() throws {
        let store = InMemoryStore(model: TestModels.kinds)
        let journal = Journal()
        try journal.run {
            let setup = try context(store)
            let ann = try setup.insert("Person")
            try ann.setValue("Ann", forKey: "name")
            try setup.save()
            journal.entries.removeAll()

            let context = try context(store)
            let fault = context.object(with: ann.objectID)
            #expect(fault.isFault)
            #expect(journal.entries.isEmpty)
            #expect(fault.string("name") == "Ann")  // fires the fault
            #expect(journal.entries == ["awakeFromFetch Ann"])
            #expect(!context.canUndo)
            try context.refresh(fault, mergeChanges: false)
            #expect(fault.isFault)
            #expect(fault.string("name") == "Ann")
            #expect(
                journal.entries == [
                    "awakeFromFetch Ann", "willTurnIntoFault Ann", "didTurnIntoFault true", "awakeFromFetch Ann",
                ])
            var request = FetchRequest(entityName: "Person")
            request.predicate = nil
            _ = try context.fetch(request)
            #expect(journal.entries.count == 4)  // already filled: not awoken again
        }
    }

    @Test func changesMadeByAwakeFromFetchDoNotChangeWhatAFetchFinds() throws {
        let store = InMemoryStore(model: TestModels.kinds)
        let setup = ObjectContext(store: store)
        for name in ["Ann", "Bob", "Cy"] { try setup.insert("Person").setValue(name, forKey: "name") }
        try setup.save()

        let context = ObjectContext(store: store)
        try context.register(NotedPerson.self, forEntity: "Person")
        let people = try context.fetch(
            FetchRequest(entityName: "Person", sortDescriptors: [GraftSortDescriptor(keyPath: "name")]))
        #expect(people.map { $0.string("name") } == ["Ann", "Bob", "Cy"])
        #expect(people.allSatisfy { $0.related("notes").count == 1 })
        #expect(context.insertedObjects.count == 3)  // the notes, saved with the next save
        #expect(!context.canUndo)  // but no undo step: the document does not look edited
        try context.save()
        let again = ObjectContext(store: store)
        try again.register(NotedPerson.self, forEntity: "Person")
        #expect(try again.fetch(FetchRequest(entityName: "Person")).allSatisfy { $0.related("notes").count == 1 })
        #expect(!again.hasChanges)
    }

    @Test func willSaveRunsBeforeValidationAndDidSaveAfterTheStoreWrote() throws {
        let journal = Journal()
        var events: [String] = []
        try journal.run {
            let context = try context()
            let willToken = context.observeWillSave { Journal.note("will-save observers") }
            let didToken = context.observeDidSave { _ in Journal.note("did-save observers") }
            let ann = try context.insert("Person")
            try ann.setValue(nil, forKey: "name")  // invalid (name is required) until willSave names it
            journal.entries.removeAll()
            try context.save()
            events = journal.entries
            #expect(ann.string("name") == "Named in willSave")
            withExtendedLifetime((willToken, didToken)) {}
        }
        #expect(
            events == [
                "will-save observers", "willSave ?", "willSave Named in willSave",
                "didSave Named in willSave permanent", "did-save observers",
            ])
    }

    @Test func willSaveIsAskedAgainUntilNothingChangesAndALoopIsAnError() throws {
        let journal = Journal()
        try journal.run {
            let context = try context()
            let ann = try context.insert("Person")
            (ann as? JournaledPerson)?.restlessUntil = 2
            journal.entries.removeAll()
            try context.save()
            #expect(ann.string("name") == "Newcomer!!")
            #expect(journal.entries.filter { $0.hasPrefix("willSave") }.count == 3)

            (ann as? JournaledPerson)?.restlessUntil = 1000
            try ann.setValue("Ann", forKey: "name")
            #expect {
                try context.save()
            } throws: { error in
                (error as? GraftError)?.code == .invalidOperation
            }
        }
    }

    @Test func anObjectDeletedInWillSaveIsAskedTooAndLeavesWithTheSave() throws {
        let store = InMemoryStore(model: TestModels.kinds)
        let journal = Journal()
        try journal.run {
            let context = try context(store)
            let ann = try context.insert("Person")
            try ann.setValue("Ann", forKey: "name")
            let old = try context.insert("Person")
            try old.setValue("Old", forKey: "name")
            try context.save()
            (ann as? JournaledPerson)?.deletesInWillSave = old
            try ann.setValue("Anne", forKey: "name")
            journal.entries.removeAll()
            try context.save()
            #expect(journal.entries.filter { $0.hasPrefix("willSave") } == ["willSave Anne", "willSave Old"])
            #expect(journal.entries.contains("prepareForDeletion Old"))
            #expect(try ObjectContext(store: store).fetch(FetchRequest(entityName: "Person")).count == 1)
        }
    }

    @Test func prepareForDeletionRunsBeforeTheDeleteRulesForEveryObjectDeleted() throws {
        let journal = Journal()
        try journal.run {
            let context = try context()
            let ann = try context.insert("Person")
            try ann.setValue("Ann", forKey: "name")
            let bob = try context.insert("Person")
            try ann.relatedObjects(forKey: "friends").insert(bob)
            try ann.setValue(try context.insert("Passport"), forKey: "passport")  // Cascade
            journal.entries.removeAll()
            try context.delete(ann)
            #expect(journal.entries == ["prepareForDeletion Ann", "prepareForDeletion passport"])
            // Relationships were still whole when it ran.
            #expect((ann as? JournaledPerson)?.heldAtDeletion == ["friends": 1, "passport": 1])
            #expect(ann.related("friends").isEmpty)
        }
    }

    @Test func prepareForDeletionCanRefuseTheDeletion() throws {
        let context = try context()
        let ann = try context.insert("Person")
        let passport = try context.insert("Passport")
        try ann.setValue(passport, forKey: "passport")
        (ann as? JournaledPerson)?.refusesDeletion = true
        #expect(throws: GraftError.self) { try context.delete(ann) }
        #expect(!ann.isDeleted)
        #expect(!passport.isDeleted)
        #expect(ann.one("passport") === passport)
        try context.checkInvariants()
    }

    @Test func withoutUndoRegistrationPausesWithoutClearing() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        try ann.setValue("Anne", forKey: "name")
        context.undo()  // back to "Ann"; "Anne" can be redone
        let note = try context.withoutUndoRegistration {
            let note = try context.insert("Note")
            try note.setValue("unrecorded", forKey: "text")
            return note
        }
        #expect(context.canRedo)  // nothing was cleared
        #expect(context.canUndo)
        #expect(context.hasChanges)
        context.undo()  // undoes "Ann", not the note
        #expect(ann.string("name") == nil)
        #expect(note.string("text") == "unrecorded")
        #expect(!note.isDeleted)
        context.undo()  // the insertion of Ann
        #expect(context.insertedObjects == [note])
        context.redo()
        context.redo()
        #expect(ann.string("name") == "Ann")
    }

    @Test func withoutUndoRegistrationInsideAGroupLeavesTheGroupsOtherChanges() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        try context.undoGroup {
            try ann.setValue("Ann", forKey: "name")
            try context.withoutUndoRegistration { try ann.setValue("hidden", forKey: "name") }
            try ann.setValue("Anne", forKey: "name")
        }
        context.undo()
        // The group held "nil → Ann" and "hidden → Anne"; undone backwards, they leave no name.
        #expect(ann.string("name") == nil)
        #expect(context.insertedObjects == [ann])
    }
}
