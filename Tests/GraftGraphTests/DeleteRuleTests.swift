import Foundation
import GraftCore
import GraftModel
import Testing

@testable import GraftGraph

@Suite struct DeleteRuleTests {
    @Test func denyRefusesWhileTheRelationshipHoldsObjects() throws {
        let context = ObjectContext(model: TestModels.company)
        let department = try makeDepartment(context, name: "Sales", employees: 3)
        let error = try #require(throws: GraftError.self) { try context.delete(department) }
        #expect(error.code == .deleteDenied)
        #expect(error.description.contains("employees"))
        #expect(!department.isDeleted)
        #expect(department.related("employees").count == 3)

        // Once the employees are gone, the department can go.
        for employee in department.related("employees") { try context.delete(employee) }
        #expect(department.related("employees").isEmpty)
        try context.delete(department)
        #expect(department.isDeleted)
    }

    @Test func denyDoesNotRefuseWhenTheHeldObjectsAreDeletedToo() throws {
        let context = ObjectContext(model: TestModels.company)
        let department = try makeDepartment(context, name: "Sales", employees: 3)
        try context.delete([department] + department.related("employees"))
        #expect(department.isDeleted)
    }

    @Test func nullifyRemovesTheObjectFromTheInverse() throws {
        let context = ObjectContext(model: TestModels.company)
        let department = try makeDepartment(context, name: "Sales", employees: 4)
        let leaver = department.related("employees")[0]
        try context.delete(leaver)
        #expect(department.related("employees").count == 3)
        #expect(!department.related("employees").contains(leaver))
        try context.checkInvariants()
    }

    @Test func cascadeDeletesRecursivelyAndOnceEachThroughCycles() throws {
        let context = ObjectContext(model: TestModels.kinds)
        // A tree of nodes, plus `link`s (also Cascade) that point back up and across: a cycle.
        let root = try context.insert("Node")
        var all = [root]
        for _ in 0..<3 {
            let child = try context.insert("Node")
            try child.setValue(root, forKey: "parent")
            all.append(child)
            for _ in 0..<2 {
                let grandchild = try context.insert("Node")
                try grandchild.setValue(child, forKey: "parent")
                try grandchild.setValue(root, forKey: "link")  // cycle: root → … → grandchild → root
                all.append(grandchild)
            }
        }
        let outsider = try context.insert("Node")
        try outsider.setValue(all[1], forKey: "link")
        try context.delete(all[4])  // a grandchild: its link cascades to root, which cascades to everything
        #expect(all.allSatisfy { $0.isDeleted })
        #expect(!outsider.isDeleted)
        #expect(outsider.one("link") == nil)  // Node.linkedFrom nullifies the outsider's link
        try context.checkInvariants()
    }

    @Test func cascadeFromOneToOne() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        let passport = try context.insert("Passport")
        try ann.setValue(passport, forKey: "passport")
        try context.delete(ann)
        #expect(passport.isDeleted)
    }

    @Test func noActionLeavesTheOtherSideAlone() throws {
        let context = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        let note = try context.insert("Note")
        try note.setValue(ann, forKey: "author")
        try context.delete(ann)
        #expect(ann.isDeleted)
        #expect(!note.isDeleted)
        #expect(note.one("author") === ann)  // still pointing at the deleted person
    }

    @Test func aRefusedDeletionChangesNothing() throws {
        let context = ObjectContext(model: TestModels.company)
        let department = try makeDepartment(context, name: "Sales", employees: 3)
        let project = try context.insert("Project")
        try project.setValue("Launch", forKey: "title")
        try department.relatedObjects(forKey: "projects").insert(project)
        // Deleting the department would cascade to the project, but Deny refuses first.
        #expect(throws: GraftError.self) { try context.delete(department) }
        #expect(!project.isDeleted)
        #expect(project.one("department") === department)
        try context.checkInvariants()
    }
}
