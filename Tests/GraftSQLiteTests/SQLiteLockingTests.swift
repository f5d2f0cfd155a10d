import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// Optimistic locking through `Z_OPT`, as Core Data's SQLite store does it.
@Suite struct SQLiteLockingTests {
    static let model: Model = {
        let department = Entity(
            name: "Department", attributes: [Attribute(name: "name", type: .string)],
            relationships: [
                Relationship(name: "employees", destination: "Employee", inverse: "department", isToMany: true)
            ])
        let employee = Entity(
            name: "Employee", attributes: [Attribute(name: "name", type: .string)],
            relationships: [Relationship(name: "department", destination: "Department", inverse: "employees")])
        return try! Model(entities: [department, employee])
    }()

    /// A store with Sales (Alan) and Support; returns it and Alan's ID.
    func office(in folder: URL) throws -> (SQLiteStore, ObjectID, ObjectID) {
        let store = try SQLiteStore.create(folder.appendingPathComponent("office.sqlite"), model: Self.model)
        let context = ObjectContext(store: store)
        let sales = try context.insert("Department")
        try sales.setValue("Sales", forKey: "name")
        let support = try context.insert("Department")
        try support.setValue("Support", forKey: "name")
        let alan = try context.insert("Employee")
        try alan.setValue("Alan", forKey: "name")
        try alan.setValue(sales, forKey: "department")
        try context.save()
        return (store, alan.objectID, support.objectID)
    }

    func zOPT(_ store: SQLiteStore, _ id: ObjectID) throws -> Int64 {
        let statement = try store.database.prepare("SELECT Z_OPT FROM ZEMPLOYEE WHERE Z_PK = \(id.key)")
        _ = try statement.step()
        return statement.int64(0)
    }

    /// A reading sibling works on another thread while the store holds its write transaction; it sees
    /// what is saved and not what is written but uncommitted, and it cannot save.
    @Test func aReadingSiblingSeesWhatIsSavedAndSavesNothing() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, alanID, _) = try office(in: folder)
        let employee = try #require(Self.model.entity(named: "Employee"))
        try store.beginExclusiveAccess()
        try store.database.execute("UPDATE ZEMPLOYEE SET ZNAME = 'uncommitted' WHERE Z_PK = \(alanID.key)")
        let sibling = try store.readingSibling()
        let read = BackgroundWork { try sibling.snapshot(for: alanID.ref)?[attribute: "name", in: employee] }
        #expect(try read.wait() == .string("Alan"))
        #expect(try store.snapshot(for: alanID.ref)?[attribute: "name", in: employee] == .string("uncommitted"))
        var renamed = try #require(try sibling.snapshot(for: alanID.ref))
        renamed[attribute: "name", in: employee] = .string("Alan T.")
        let refused = try #require(throws: GraftError.self) {
            try sibling.save(StoreChanges(updated: [renamed]))
        }
        #expect(refused.code == .invalidOperation)
    }

    @Test func snapshotsCarryZOPTAndSavesCountIt() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, alanID, _) = try office(in: folder)
        #expect(try store.snapshot(for: alanID.ref)?.version == 1)
        #expect(try zOPT(store, alanID) == 1)
        let context = ObjectContext(store: store)
        let alan = try context.existingObject(with: alanID)
        try alan.setValue("Alan T.", forKey: "name")
        try context.save()
        try alan.setValue("Alan Turing", forKey: "name")
        try context.save()  // the context counts its own saves: no conflict with itself
        #expect(try zOPT(store, alanID) == 3)
        #expect(try store.snapshot(for: alanID.ref)?.version == 3)
    }

    @Test func twoContextsOnOneStoreDoNotLoseAnUpdate() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, alanID, supportID) = try office(in: folder)
        let a = ObjectContext(store: store)
        let b = ObjectContext(store: store)
        let alanA = try a.existingObject(with: alanID)
        let alanB = try b.existingObject(with: alanID)
        try alanB.setValue(b.object(with: supportID), forKey: "department")
        try b.save()
        try alanA.setValue("Alan Turing", forKey: "name")
        let error = try #require(throws: GraftError.self) { try a.save() }
        #expect(error.code == .mergeConflict)
        #expect(error.underlying.first?.message.contains("department: stored p2, in memory p1") == true)
        #expect(try zOPT(store, alanID) == 2)  // nothing written
        a.mergePolicy = .mergeByPropertyObjectTrump
        try a.save()
        let reader = ObjectContext(store: store)
        let alan = try reader.existingObject(with: alanID)
        #expect(alan.value(forKey: "name") as? String == "Alan Turing")
        #expect(try alan.relatedObject(forKey: "department")?.objectID == supportID)
    }

    @Test func aContextMergingAnothersSaveSavesWithoutConflict() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, alanID, supportID) = try office(in: folder)
        let a = ObjectContext(store: store)
        let b = ObjectContext(store: try SQLiteStore.open(store.url, model: Self.model))  // another connection
        let alanA = try a.existingObject(with: alanID)
        try alanA.setValue("Alan A", forKey: "name")
        let alanB = try b.existingObject(with: alanID)
        try alanB.setValue(b.object(with: supportID), forKey: "department")
        let saved = try b.save()
        #expect(saved.updated.contains(alanID))
        try a.merge(changesFrom: saved)
        #expect(try alanA.relatedObject(forKey: "department")?.objectID == supportID)
        try a.save()
        #expect(try zOPT(store, alanID) == 3)
        let reader = ObjectContext(store: store)
        let alan = try reader.existingObject(with: alanID)
        #expect(alan.value(forKey: "name") as? String == "Alan A")
        #expect(try alan.relatedObject(forKey: "department")?.objectID == supportID)
    }

    @Test func aRowChangedByAnotherProgramConflictsToo() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, alanID, _) = try office(in: folder)
        let context = ObjectContext(store: store)
        let alan = try context.existingObject(with: alanID)
        // What Core Data does when it saves the row: new values, Z_OPT counted.
        try store.database.execute("UPDATE ZEMPLOYEE SET ZNAME = 'Alan (Core Data)', Z_OPT = Z_OPT + 1")
        try alan.setValue("Alan (Graft)", forKey: "name")
        let error = try #require(throws: GraftError.self) { try context.save() }
        #expect(
            error.underlying.first?.message.contains("stored \"Alan (Core Data)\", in memory \"Alan (Graft)\"") == true)
        context.mergePolicy = .rollback
        try context.save()
        #expect(alan.value(forKey: "name") as? String == "Alan (Core Data)")
        #expect(!context.hasChanges)
    }

    @Test func aRowDeletedByAnotherConnectionConflicts() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, alanID, _) = try office(in: folder)
        let context = ObjectContext(store: store)
        let alan = try context.existingObject(with: alanID)
        let other = try SQLiteStore.open(store.url, model: Self.model)
        let remover = ObjectContext(store: other)
        try remover.delete(remover.existingObject(with: alanID))
        try remover.save()
        try alan.setValue("Alan again", forKey: "name")
        #expect(throws: GraftError.self) { try context.save() }
        context.mergePolicy = .overwrite  // written again, under its key
        try context.save()
        let reader = ObjectContext(store: store)
        #expect(try reader.existingObject(with: alanID).value(forKey: "name") as? String == "Alan again")
    }
}
