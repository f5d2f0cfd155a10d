import Foundation
import GraftCore
import GraftModel
import Testing

@testable import GraftGraph

@Suite struct UndoTests {
    @Test func attributeEditsUndoAndRedo() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        try ann.setValue("Anne", forKey: "name")
        context.undo()
        #expect(ann.string("name") == "Ann")
        context.undo()
        #expect(ann.string("name") == nil)
        context.redo()
        context.redo()
        #expect(ann.string("name") == "Anne")
        #expect(!context.canRedo)
    }

    @Test func insertAndDeleteWithCascadesUndo() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let album = try context.insert("Album")
        let tracks = try (0..<3).map { _ in try context.insert("Song") }
        try album.setValue(tracks, forKey: "tracks")
        try context.delete(album)
        #expect(tracks.allSatisfy { $0.isDeleted })
        context.undo()  // the deletion and its cascade, in one step
        #expect(!album.isDeleted)
        #expect(tracks.allSatisfy { !$0.isDeleted })
        #expect(album.related("tracks") == tracks)
        #expect(tracks.allSatisfy { $0.one("album") === album })
        context.undo()  // the relationship edit
        #expect(album.related("tracks").isEmpty)
        for _ in 0..<4 { context.undo() }  // the four inserts
        #expect(context.insertedObjects.isEmpty)
        #expect(!context.hasChanges)
        for _ in 0..<6 { context.redo() }
        #expect(album.isDeleted)
        #expect(context.insertedObjects.isEmpty)  // inserted, then deleted: nothing to save
        try context.checkInvariants()
    }

    @Test func groupsUndoAsOneStep() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        let bob = try context.insert("Person")
        try context.undoGroup {
            try ann.setValue("Ann", forKey: "name")
            try ann.setValue(bob, forKey: "spouse")
            try ann.relatedObjects(forKey: "friends").insert(bob)
        }
        context.undo()
        #expect(ann.string("name") == nil)
        #expect(bob.one("spouse") == nil)
        #expect(bob.related("friends").isEmpty)
        context.redo()
        #expect(bob.one("spouse") === ann)
        #expect(bob.related("friends") == [ann])
        try context.checkInvariants()
    }

    @Test func orderedEditsUndoToTheSameOrder() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let list = try context.insert("Playlist")
        let songs = try (0..<5).map { _ in try context.insert("Song") }
        try list.setValue(songs, forKey: "songs")
        try list.relatedObjects(forKey: "songs").insert(songs[4], at: 1)
        try list.relatedObjects(forKey: "songs").remove(songs[2])
        let edited = list.related("songs")
        context.undo()
        context.undo()
        #expect(list.related("songs") == songs)
        context.redo()
        context.redo()
        #expect(list.related("songs") == edited)
    }

    @Test func aFailedOperationLeavesNoTrace() throws {
        let context = ObjectContext(model: TestModels.company)
        let department = try makeDepartment(context, name: "Sales", employees: 3)
        let before = context.canUndo
        #expect(throws: GraftError.self) { try context.delete(department) }
        #expect(context.canUndo == before)
        context.undo()  // undoes the last real edit, not the refused deletion
        try context.checkInvariants()
    }

    @Test func undoAfterSaveMakesTheContextDirtyAgain() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        try context.save()
        try ann.setValue("Anna", forKey: "name")
        try context.save()
        context.undo()
        #expect(ann.string("name") == "Ann")
        #expect(ann.state == .changed)
    }
}
