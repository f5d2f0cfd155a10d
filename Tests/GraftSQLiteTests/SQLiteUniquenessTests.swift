import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftSQLite
import GraftTestSupport
import Testing

/// Uniqueness constraints in a context's validation on a SQLite store, whose objects are looked up with
/// one indexed query per new object rather than read.
@Suite struct SQLiteUniquenessTests {
    static let model = try! Model(entities: [
        Entity(
            name: "Tag", attributes: [Attribute(name: "name", type: .string)], uniquenessConstraints: [["name"]])
    ])

    func store(with names: [String]) throws -> (URL, SQLiteStore) {
        let folder = try scratchFolder()
        let url = folder.appendingPathComponent("tags.sqlite")
        let store = try SQLiteStore.create(url, model: Self.model)
        let context = ObjectContext(store: store)
        for name in names { try context.insert("Tag").setValue(name, forKey: "name") }
        try context.save()
        return (folder, store)
    }

    @Test func aNewObjectWithAStoredValueIsRefused() throws {
        let (folder, store) = try store(with: ["red", "green"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let context = ObjectContext(store: store)
        try context.insert("Tag").setValue("green", forKey: "name")
        let error = try #require(throws: GraftError.self) { try context.save() }
        #expect(error.underlying.contains { $0.message.hasPrefix("an existing Tag (x-coredata://") })
    }

    @Test func aValueFreedInThisContextCanBeTaken() throws {
        let (folder, store) = try store(with: ["red", "green"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let context = ObjectContext(store: store)
        let tags = try context.fetch(FetchRequest(entityName: "Tag"))
        try #require(tags.first { $0.value(forKey: "name") as? String == "red" }).setValue("crimson", forKey: "name")
        try context.delete(try #require(tags.first { $0.value(forKey: "name") as? String == "green" }))
        try context.insert("Tag").setValue("red", forKey: "name")
        try context.insert("Tag").setValue("green", forKey: "name")
        try context.save()
        let reopened = try SQLiteStore.openForReading(folder.appendingPathComponent("tags.sqlite"), model: nil)
        let reading = ObjectContext(store: reopened)
        let names = try reading.fetch(FetchRequest(entityName: "Tag")).map { try $0.attributeValue(forKey: "name") }
        #expect(
            names.compactMap { if case .string(let name)? = $0 { name } else { nil } }.sorted() == [
                "crimson", "green", "red",
            ])
    }
}
