import Foundation
import GraftCore
import GraftModel
import Testing

@testable import GraftGraph

/// Uniqueness constraints in a context's validation: a save never stores two objects with the same
/// values, as this context sees the store (objects it deleted or changed count with their new state).
@Suite struct UniquenessValidationTests {
    /// Tags unique by name; labels unique by name and colour together, a subentity of Tag sharing its
    /// constraints.
    static let model = try! Model(entities: [
        Entity(
            name: "Tag",
            attributes: [Attribute(name: "name", type: .string), Attribute(name: "colour", type: .string)],
            uniquenessConstraints: [["name"]]),
        Entity(name: "Label", parent: "Tag", uniquenessConstraints: [["name", "colour"]]),
    ])

    static func store(with names: [String]) throws -> InMemoryStore {
        let store = InMemoryStore(model: model)
        let context = ObjectContext(store: store)
        for name in names { try context.insert("Tag").setValue(name, forKey: "name") }
        try context.save()
        return store
    }

    func uniquenessErrors(_ error: GraftError) -> [GraftError] {
        error.underlying.filter { $0.message.contains("the uniqueness constraint forbids a second") }
    }

    @Test func twoNewObjectsWithTheSameValueAreRefused() throws {
        let context = ObjectContext(store: try Self.store(with: []))
        try context.insert("Tag").setValue("red", forKey: "name")
        try context.insert("Label").setValue("red", forKey: "name")  // a subentity shares its root's constraint
        try context.insert("Tag").setValue("blue", forKey: "name")
        let error = try #require(throws: GraftError.self) { try context.save() }
        let found = uniquenessErrors(error)
        #expect(found.count == 1)
        #expect(found.first?.message.hasPrefix("another new Tag") == true)
        #expect(found.first?.context.contains(.key("name")) == true)
    }

    @Test func aNewObjectWithAStoredObjectsValueIsRefused() throws {
        let context = ObjectContext(store: try Self.store(with: ["red", "green"]))
        try context.insert("Tag").setValue("green", forKey: "name")
        let error = try #require(throws: GraftError.self) { try context.save() }
        #expect(uniquenessErrors(error).first?.message.hasPrefix("an existing Tag (x-coredata://") == true)
    }

    @Test func aValueFreedInThisContextCanBeTaken() throws {
        let store = try Self.store(with: ["red", "green"])
        let context = ObjectContext(store: store)
        let tags = try context.fetch(FetchRequest(entityName: "Tag"))
        let red = try #require(tags.first { $0.value(forKey: "name") as? String == "red" })
        let green = try #require(tags.first { $0.value(forKey: "name") as? String == "green" })
        try red.setValue("crimson", forKey: "name")
        try context.delete(green)
        try context.insert("Tag").setValue("red", forKey: "name")
        try context.insert("Tag").setValue("green", forKey: "name")
        try context.save()
        #expect(try context.fetch(FetchRequest(entityName: "Tag")).count == 3)
    }

    @Test func aChangedObjectIsCheckedToo() throws {
        let context = ObjectContext(store: try Self.store(with: ["red", "green"]))
        let green = try #require(
            try context.fetch(FetchRequest(entityName: "Tag")).first { $0.value(forKey: "name") as? String == "green" })
        try green.setValue("red", forKey: "name")
        let error = try #require(throws: GraftError.self) { try context.save() }
        #expect(uniquenessErrors(error).count == 1)
    }

    @Test func compoundConstraintsNeedEveryValueTheSame() throws {
        let context = ObjectContext(store: try Self.store(with: []))
        for (name, colour) in [("a", "red"), ("b", "red")] {
            let label = try context.insert("Label")
            try label.setValue(name, forKey: "name")
            try label.setValue(colour, forKey: "colour")
        }
        try context.save()
        let again = try context.insert("Label")
        try again.setValue("c", forKey: "name")
        try again.setValue("red", forKey: "colour")
        try context.save()
        // An object without a value for a constraint's attribute is not checked against it.
        try context.insert("Tag").setValue(nil, forKey: "name")
        try context.insert("Tag").setValue(nil, forKey: "name")
        try context.save()
    }
}
