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

    /// The hashes-only check says "may clash" exactly where the exact check finds a clash: a subentity
    /// shares its root's constraint, compound constraints need every value, and an object without a value
    /// for a constraint's attribute is not checked against it.
    @Test func hashesOnlyMayClashWhereTheExactCheckClashes() throws {
        let tag = try #require(Self.model.entity(named: "Tag"))
        let label = try #require(Self.model.entity(named: "Label"))
        func object(_ entity: EntityDescription, _ key: Int64, _ name: String?, _ colour: String? = nil) -> Snapshot {
            var snapshot = Snapshot(entity: entity, key: key)
            snapshot[attribute: "name", in: entity] = name.map(Value.string)
            snapshot[attribute: "colour", in: entity] = colour.map(Value.string)
            return snapshot
        }
        let objects = [
            object(tag, 1, "red"), object(label, 2, "blue", "dark"), object(tag, 3, nil), object(tag, 4, nil),
            object(label, 5, "green", "dark"), object(label, 6, "red", "light"), object(label, 7, "blue", "light"),
            object(label, 8, "blue", "dark"),
        ]
        var exact = UniquenessCheck(model: Self.model)
        var hashes = UniquenessHashes(model: Self.model, objectsPerEntity: [4, 4])
        let clashing = objects.enumerated().map { !exact.add($0.element, at: $0.offset).isEmpty }
        let mayClash = objects.map { !hashes.add($0) }
        #expect(clashing == [false, false, false, false, false, true, true, true])
        #expect(mayClash == clashing)
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
