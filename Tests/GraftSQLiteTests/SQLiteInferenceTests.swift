import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// Stores without a model Graft can read from them: no model cache, a cache that cannot be decoded, a
/// Core Data 1.0 document (entity names in lower case, no version hashes). Each is made from the example
/// Company store.
@Suite final class SQLiteInferenceTests {
    let folder: URL
    let url: URL
    /// The example store's model (Company 2).
    let model: Model

    init() throws {
        folder = try scratchFolder()
        url = folder.appendingPathComponent("Company.sqlite")
        try FileManager.default.copyItem(at: Project.url("examples/Company/Company.sqlite"), to: url)
        model = try ModelFile.load(Project.url("examples/Company/Company.xcdatamodeld")).current
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    func alter(_ statements: String...) throws {
        let database = try SQLiteDatabase.openForWriting(url)
        for statement in statements { try database.execute(statement) }
        database.close()
    }

    @Test func aStoreWithoutAModelCacheIsReadWithAModelInferredFromItsTables() throws {
        try alter("DELETE FROM Z_MODELCACHE")
        let reader = try SQLiteStoreReader(url: url, model: nil)
        #expect(reader.modelSource == .inferred)
        #expect(reader.warnings.first?.contains("the model was inferred from the store's tables") == true)
        let inferred = reader.model
        // Entities, numbers and inheritance from Z_PRIMARYKEY.
        #expect(inferred.descriptions.map(\.name) == model.descriptions.map(\.name))
        #expect(inferred.entity(named: "Manager")?.superentityIndex == inferred.entity(named: "Employee")?.index)
        // Attributes on the entity whose rows use them, typed by their columns.
        let department = try #require(inferred.entity(named: "Department"))
        #expect(department.declaration.attributes.map(\.name) == ["budget", "code", "location", "name"])
        #expect(department.declaration.attributes.map(\.type) == [.decimal, .integer64, .string, .string])
        // (In the example only managers have a badge or a homepage, so those land on Manager too.)
        #expect(inferred.entity(named: "Manager")?.declaration.attributes.map(\.name).contains("parkingspot") == true)
        #expect(inferred.entity(named: "Flunky")?.declaration.attributes.map(\.name) == ["coffeeorder"])
        #expect(inferred.entity(named: "Employee")?.declaration.attributes.map(\.name).contains("salary") == true)
        // To-ones by their key columns, destinations by name and keys; the many-to-many with both names.
        func relationship(_ entity: String, _ name: String) -> RelationshipDescription? {
            inferred.entity(named: entity).flatMap { entity in
                entity.relationshipIndexByName[name].map { entity.relationships[$0] }
            }
        }
        #expect(relationship("Employee", "department").map { inferred.destination(of: $0).name } == "Department")
        #expect(relationship("Employee", "manager").map { inferred.destination(of: $0).name } == "Manager")
        let members = try #require(relationship("Project", "members"))
        #expect(members.isToMany && inferred.inverse(of: members)?.name == "projects")
        // The to-many side of a to-one is not in the store.
        #expect(relationship("Department", "employees") == nil)

        // Every object, with the same values where the types agree.
        let original = try allSnapshots(
            SQLiteStoreReader(url: Project.url("examples/Company/Company.sqlite"), model: model))
        let read = try allSnapshots(reader)
        #expect(read.count == original.count)
        for (ref, snapshot) in original {
            let entity = model.descriptions[ref.entity]
            let again = try #require(read[ObjectRef(entity: inferred.entity(named: entity.name)!.index, key: ref.key)])
            let inferredEntity = inferred.descriptions[again.ref.entity]
            for (index, attribute) in entity.attributes.enumerated()
            where [.string, .date, .decimal].contains(attribute.type) {
                let other = try #require(inferredEntity.attributeIndexByName[attribute.name.lowercased()])
                #expect(
                    again.attributes[other] == snapshot.attributes[index],
                    "\(entity.name) p\(ref.key).\(attribute.name)")
            }
            for relationship in entity.relationships where !relationship.isToMany {
                let other = try #require(inferredEntity.relationshipIndexByName[relationship.name.lowercased()])
                #expect(
                    again.relationships[other].refs.map(\.key)
                        == snapshot.relationships[relationship.index].refs.map(\.key))
            }
        }
    }

    @Test func aModelCacheThatCannotBeDecodedFallsBackToInference() throws {
        try alter("UPDATE Z_MODELCACHE SET Z_CONTENT = x'7365637265740a'")
        let reader = try SQLiteStoreReader(url: url, model: nil)
        #expect(reader.modelSource == .inferred)
        #expect(reader.warnings.first?.contains("the store's model cache cannot be read") == true)
        #expect(try reader.counts().values.reduce(0, +) == 13)
        // Asked for the cache itself, the error says why.
        #expect(throws: GraftError.self) { try SQLiteStoreFile.read(url).cachedModel() }
    }

    /// Core Data 1.0 wrote entity names in lower case and recorded no version hashes.
    @Test func aCoreData1DocumentIsReadWithItsOwnModel() throws {
        let empty = PropertyList.dictionary([:]).encode(format: .binary)
        try alter(
            "UPDATE Z_PRIMARYKEY SET Z_NAME = lower(Z_NAME)", "DELETE FROM Z_MODELCACHE",
            "UPDATE Z_METADATA SET Z_PLIST = x'\(empty.map { String(format: "%02x", $0) }.joined())'")
        let reader = try SQLiteStoreReader(url: url, model: model)
        #expect(reader.modelSource == .given)
        #expect(reader.warnings.contains { $0.contains("records no version hashes") })
        #expect(try reader.counts() == ["Department": 2, "Employee": 4, "Flunky": 2, "Manager": 2, "Project": 3])
        #expect(try allSnapshots(reader).count == 13)
        // Without a model, the inferred one keeps the names as the document has them.
        let inferred = try SQLiteStoreReader(url: url, model: nil)
        #expect(inferred.model.descriptions.map(\.name).contains("department"))
    }

    @Test func aModelThatDoesNotFitTheTablesIsRefusedWhenThereAreNoHashesToCompare() throws {
        let empty = PropertyList.dictionary([:]).encode(format: .binary)
        try alter("UPDATE Z_METADATA SET Z_PLIST = x'\(empty.map { String(format: "%02x", $0) }.joined())'")
        var employee = model.entities.first { $0.name == "Employee" }!
        employee.attributes.append(Attribute(name: "nickname", type: .string))
        let wrong = try Model(entities: model.entities.map { $0.name == "Employee" ? employee : $0 })
        let error = try #require(throws: GraftError.self) { try SQLiteStoreReader(url: url, model: wrong) }
        #expect(error.code == .modelMismatch)
        #expect(error.message.contains("ZNICKNAME"))
    }
}
