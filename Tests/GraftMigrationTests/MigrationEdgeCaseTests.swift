import CSQLite
import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftMigration
import GraftModel
import GraftTestSupport
import Testing

/// One object of a store made by hand: its entity, key, values, and the objects each of its
/// relationships names (the inverses are filled in from these).
struct HandObject {
    var entity: String
    var key: Int64
    var values: [String: Value] = [:]
    var links: [String: [(String, Int64)]] = [:]
}

/// A store of `model` in `format` holding exactly `objects`, each relationship's inverse filled in.
func handMadeStore(
    _ model: Model, _ objects: [HandObject], format: StoreFormat, in folder: URL, name: String = "old"
) throws -> URL {
    func ref(_ entity: String, _ key: Int64) throws -> ObjectRef {
        ObjectRef(entity: try #require(model.entity(named: entity), "no entity \(entity)").index, key: key)
    }
    var snapshots: [ObjectRef: Snapshot] = [:]
    var order: [ObjectRef] = []
    for object in objects {
        let entity = try #require(model.entity(named: object.entity))
        var snapshot = Snapshot(entity: entity, key: object.key)
        for (name, value) in object.values {
            snapshot.attributes[try #require(entity.attributeIndexByName[name], "no \(object.entity).\(name)")] = value
        }
        snapshots[snapshot.ref] = snapshot
        order.append(snapshot.ref)
    }
    func add(_ target: ObjectRef, to index: Int, of owner: ObjectRef) {
        let entity = model.descriptions[owner.entity]
        if entity.relationships[index].isToMany {
            let refs = snapshots[owner]!.relationships[index].refs
            if !refs.contains(target) { snapshots[owner]!.relationships[index] = .toMany(refs + [target]) }
        } else {
            snapshots[owner]!.relationships[index] = .toOne(target)
        }
    }
    for object in objects {
        let owner = try ref(object.entity, object.key)
        let entity = model.descriptions[owner.entity]
        for (name, targets) in object.links {
            let index = try #require(entity.relationshipIndexByName[name], "no \(object.entity).\(name)")
            let relationship = entity.relationships[index]
            for (targetEntity, key) in targets {
                let target = try ref(targetEntity, key)
                add(target, to: index, of: owner)
                guard let inverse = relationship.inverseIndex else { continue }
                let inverseName = model.descriptions[relationship.destinationIndex].relationships[inverse].declaration
                    .name
                add(owner, to: model.descriptions[target.entity].relationshipIndexByName[inverseName]!, of: target)
            }
        }
    }
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let url = folder.appendingPathComponent("\(name).\(format.driver.fileExtensions[0])")
    let store = try InMemoryStore(model: model, snapshots: order.map { snapshots[$0]! })
    _ = try Conversion.write(store, to: url, format: format)
    return url
}

/// A store's objects read back with a model, for assertions by entity name and key.
struct ReadBack {
    let model: Model
    let objects: [String: [Int64: Snapshot]]

    init(_ url: URL, model: Model) throws {
        self.model = model
        objects = try GraftMigrationTests.objects(of: url, model: model)
    }

    func keys(_ entity: String) -> [Int64] { (objects[entity] ?? [:]).keys.sorted() }

    func value(_ entity: String, _ key: Int64, _ attribute: String) -> Value? {
        objects[entity]?[key]?[attribute: attribute, in: model.entity(named: entity)!]
    }

    /// The objects a relationship names, as `Entity pKey`: in order for an ordered to-many, else sorted.
    func refs(_ entity: String, _ key: Int64, _ relationship: String) -> [String]? {
        let description = model.entity(named: entity)!
        guard let value = objects[entity]?[key]?[relationship: relationship, in: description] else { return nil }
        let names = value.refs.map { "\(model.descriptions[$0.entity].name) p\($0.key)" }
        let ordered = description.relationships[description.relationshipIndexByName[relationship]!].declaration
            .isOrdered
        return ordered ? names : names.sorted()
    }
}

/// A model file of the versions given, in that order, for plans over hand-made models.
func versions(_ models: [(String, Model)], in folder: URL) -> ModelFile {
    ModelFile(
        url: folder.appendingPathComponent("Hand.xcdatamodeld"), format: .xcdatamodeld,
        versions: models.map { .init(name: $0.0, model: $0.1) }, currentVersionName: models.last!.0)
}

/// Every description an error gives, its underlying errors' included.
func reasons(_ error: any Error) -> String {
    guard let error = error as? GraftError else { return "\(error)" }
    return ([error] + error.underlying).map(\.description).joined(separator: "\n")
}

/// Runs `body`, expecting a `GraftError` of `code` whose descriptions mention every one of `words`.
func expectError(
    _ code: GraftError.Code, mentioning words: [String], sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record("expected \(code), mentioning \(words); nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as GraftError {
        #expect(error.code == code, "\(reasons(error))", sourceLocation: sourceLocation)
        for word in words {
            #expect(reasons(error).contains(word), "'\(word)' in: \(reasons(error))", sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("expected a GraftError, got \(error)", sourceLocation: sourceLocation)
    }
}

let allFormats: [StoreFormat] = [.sqlite, .xml, .binary]

func string(_ name: String, _ extra: (inout Attribute) -> Void = { _ in }) -> Attribute {
    var attribute = Attribute(name: name, type: .string)
    extra(&attribute)
    return attribute
}

@Suite struct MigrationEdgeCaseTests {
    // MARK: Hierarchies

    /// Version 1: an abstract `Animal` (name) with `Dog` (breed, tag) and `Cat` (lives); `Puppy` its own
    /// root; `Owner.pets` → Animal. Version 2 moves `tag` up to Animal and `name` down into Dog and Cat,
    /// and gives Puppy the parent Dog (its tree joins Animal's: its keys move up above the animals').
    static func hierarchyModels() throws -> (Model, Model) {
        let pets = Relationship(name: "pets", destination: "Animal", inverse: "owner", isToMany: true)
        let owner = Relationship(name: "owner", destination: "Owner", inverse: "pets")
        let v1 = try Model(entities: [
            Entity(name: "Animal", isAbstract: true, attributes: [string("name")], relationships: [owner]),
            Entity(
                name: "Dog", parent: "Animal",
                attributes: [string("breed"), Attribute(name: "tag", type: .integer32)]),
            Entity(name: "Cat", parent: "Animal", attributes: [Attribute(name: "lives", type: .integer16)]),
            Entity(name: "Owner", attributes: [string("name")], relationships: [pets]),
            Entity(name: "Puppy", attributes: [string("name"), string("toy")]),
        ])
        let v2 = try Model(entities: [
            Entity(
                name: "Animal", isAbstract: true, attributes: [Attribute(name: "tag", type: .integer32)],
                relationships: [owner]),
            Entity(name: "Dog", parent: "Animal", attributes: [string("breed"), string("name")]),
            Entity(
                name: "Cat", parent: "Animal",
                attributes: [Attribute(name: "lives", type: .integer16), string("name")]),
            Entity(name: "Owner", attributes: [string("name")], relationships: [pets]),
            Entity(name: "Puppy", parent: "Dog", attributes: [string("toy")]),
        ])
        return (v1, v2)
    }

    @Test(arguments: allFormats)
    func propertiesMovedInTheHierarchyKeepTheirValues(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (v1, v2) = try Self.hierarchyModels()
        let old = try handMadeStore(
            v1,
            [
                HandObject(
                    entity: "Dog", key: 1,
                    values: ["name": .string("Rex"), "breed": .string("Lab"), "tag": .integer(7)]),
                HandObject(entity: "Cat", key: 2, values: ["name": .string("Tom"), "lives": .integer(9)]),
                HandObject(
                    entity: "Owner", key: 1, values: ["name": .string("Ann")],
                    links: ["pets": [("Dog", 1), ("Cat", 2)]]),
                HandObject(
                    entity: "Puppy", key: 1, values: ["name": .string("Bit"), "toy": .string("ball")]),
            ], format: format, in: folder)
        let plan = try MigrationPlan(store: old, model: versions([("1", v1), ("2", v2)], in: folder))
        let changes = plan.steps[0].changes.map(\.description)
        #expect(changes.contains("Puppy: parent none → Dog"), "\(changes)")
        let output = folder.appendingPathComponent("new.\(format.driver.fileExtensions[0])")
        let report = try Migration.migrate(plan, to: .file(output), verify: true)
        #expect(report.warnings.contains { $0.contains("the keys of Puppy") }, "\(report.warnings)")
        let now = try ReadBack(output, model: v2)
        #expect(now.value("Dog", 1, "name") == .string("Rex"))
        #expect(now.value("Dog", 1, "tag") == .integer(7))
        #expect(now.value("Dog", 1, "breed") == .string("Lab"))
        #expect(now.value("Cat", 2, "name") == .string("Tom"))
        #expect(now.value("Cat", 2, "tag") == nil)
        #expect(now.value("Cat", 2, "lives") == .integer(9))
        // Puppy's key moves above the animals' (2); its own name becomes Dog's, inherited.
        #expect(now.keys("Puppy") == [3])
        #expect(now.value("Puppy", 3, "name") == .string("Bit"))
        #expect(now.value("Puppy", 3, "toy") == .string("ball"))
        #expect(now.value("Puppy", 3, "breed") == nil)
        #expect(now.refs("Owner", 1, "pets") == ["Cat p2", "Dog p1"])
        #expect(now.refs("Dog", 1, "owner") == ["Owner p1"])
        #expect(now.refs("Cat", 2, "owner") == ["Owner p1"])
    }

    /// An entity made abstract while the store has objects of its own: such objects cannot exist in
    /// the new version, so the migration stops naming one of them, and nothing is written.
    @Test(arguments: allFormats)
    func objectsOfAnEntityMadeAbstractAreRefused(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = try Model(entities: [
            Entity(name: "Animal", attributes: [string("name")]), Entity(name: "Dog", parent: "Animal"),
        ])
        let v2 = try Model(entities: [
            Entity(name: "Animal", isAbstract: true, attributes: [string("name")]),
            Entity(name: "Dog", parent: "Animal"),
        ])
        let old = try handMadeStore(
            v1, [HandObject(entity: "Dog", key: 1), HandObject(entity: "Animal", key: 2)], format: format, in: folder)
        let plan = try MigrationPlan(store: old, model: versions([("1", v1), ("2", v2)], in: folder))
        let output = folder.appendingPathComponent("new.\(format.driver.fileExtensions[0])")
        let before = try Data(contentsOf: old)
        for destination in [Migration.Destination.file(output), .inPlace] {
            expectError(.migrationBlocked, mentioning: ["Animal", "p2", "abstract"]) {
                _ = try Migration.migrate(plan, to: destination)
            }
        }
        #expect(try Data(contentsOf: old) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [old.lastPathComponent])
    }

    // MARK: Transient properties

    /// Transient properties carry nothing, in either version: a stored attribute become transient is
    /// not written; a transient one become stored takes its default; a new transient relationship is empty.
    @Test(arguments: allFormats)
    func transientPropertiesCarryNothing(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let friend = Relationship(name: "friend", destination: "Person", inverse: "friend")
        let v1 = try Model(entities: [
            Entity(
                name: "Person",
                attributes: [
                    string("name"), string("nickname"), string("cache") { $0.isTransient = true },
                ],
                relationships: [friend])
        ])
        let v2 = try Model(entities: [
            Entity(
                name: "Person",
                attributes: [
                    string("name"), string("nickname") { $0.isTransient = true },
                    string("cache") { $0.defaultValue = .string("empty") },
                ],
                relationships: [
                    friend,
                    Relationship(name: "crush", destination: "Person", isTransient: true),
                ])
        ])
        let old = try handMadeStore(
            v1,
            [
                HandObject(entity: "Person", key: 1, values: ["name": .string("A"), "nickname": .string("a")]),
                HandObject(
                    entity: "Person", key: 2, values: ["name": .string("B"), "nickname": .string("b")],
                    links: ["friend": [("Person", 1)]]),
            ], format: format, in: folder)
        let plan = try MigrationPlan(store: old, model: versions([("1", v1), ("2", v2)], in: folder))
        let output = folder.appendingPathComponent("new.\(format.driver.fileExtensions[0])")
        _ = try Migration.migrate(plan, to: .file(output), verify: true)
        let now = try ReadBack(output, model: v2)
        #expect(now.value("Person", 1, "name") == .string("A"))
        #expect(now.value("Person", 1, "nickname") == nil)
        #expect(now.value("Person", 2, "cache") == .string("empty"))
        #expect(now.refs("Person", 1, "friend") == ["Person p2"])
        #expect(now.refs("Person", 2, "friend") == ["Person p1"])
        #expect(now.refs("Person", 2, "crush") == [])
    }

    // MARK: Cardinality

    /// `Person.pets` (to-many) becomes `Person.pet` (to-one, renaming identifier `pets`).
    static func toManyBecomesToOne() throws -> (Model, Model) {
        let v1 = try Model(entities: [
            Entity(
                name: "Person", attributes: [string("name")],
                relationships: [Relationship(name: "pets", destination: "Pet", inverse: "owner", isToMany: true)]),
            Entity(
                name: "Pet", attributes: [string("name")],
                relationships: [Relationship(name: "owner", destination: "Person", inverse: "pets")]),
        ])
        let v2 = try Model(entities: [
            Entity(
                name: "Person", attributes: [string("name")],
                relationships: [
                    Relationship(name: "pet", destination: "Pet", inverse: "owner", renamingIdentifier: "pets")
                ]),
            Entity(
                name: "Pet", attributes: [string("name")],
                relationships: [Relationship(name: "owner", destination: "Person", inverse: "pet")]),
        ])
        return (v1, v2)
    }

    @Test(arguments: allFormats)
    func aToManyBecomesAToOneWithNoneOrOneObject(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (v1, v2) = try Self.toManyBecomesToOne()
        let old = try handMadeStore(
            v1,
            [
                HandObject(entity: "Person", key: 1),
                HandObject(entity: "Person", key: 2, links: ["pets": [("Pet", 5)]]),
                HandObject(entity: "Pet", key: 5, values: ["name": .string("Rex")]),
            ], format: format, in: folder)
        let plan = try MigrationPlan(store: old, model: versions([("1", v1), ("2", v2)], in: folder))
        #expect(plan.steps[0].changes.map(\.description).contains { $0.hasPrefix("Person.pet: to-many → to-one") })
        let output = folder.appendingPathComponent("new.\(format.driver.fileExtensions[0])")
        _ = try Migration.migrate(plan, to: .file(output), verify: true)
        let now = try ReadBack(output, model: v2)
        #expect(now.refs("Person", 1, "pet") == [])
        #expect(now.refs("Person", 2, "pet") == ["Pet p5"])
        #expect(now.refs("Pet", 5, "owner") == ["Person p2"])
    }

    /// Two objects in a to-many become a to-one: the migration stops naming the object and the
    /// relationship, and nothing is written, whichever side the output's format stores.
    @Test(arguments: allFormats)
    func aToManyOfTwoCannotBecomeAToOne(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (v1, v2) = try Self.toManyBecomesToOne()
        let old = try handMadeStore(
            v1,
            [
                HandObject(entity: "Person", key: 1, links: ["pets": [("Pet", 1), ("Pet", 2)]]),
                HandObject(entity: "Pet", key: 1), HandObject(entity: "Pet", key: 2),
            ], format: format, in: folder)
        let plan = try MigrationPlan(store: old, model: versions([("1", v1), ("2", v2)], in: folder))
        for output in allFormats.map({ folder.appendingPathComponent("new.\($0.driver.fileExtensions[0])") }) {
            expectError(.migrationBlocked, mentioning: ["Person", "p1", "pet", "2 objects"]) {
                _ = try Migration.migrate(plan, to: .file(output))
            }
            #expect(!FileManager.default.fileExists(atPath: output.path), "\(output.lastPathComponent)")
        }
        expectError(.migrationBlocked, mentioning: ["Person", "p1", "pet"]) {
            _ = try Migration.migrate(plan, to: .inPlace)
        }
        #expect(try StoreFormat.recordedVersionHashes(of: old) == v1.versionHashes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [old.lastPathComponent])
    }

    /// To-one → to-many (a set of one), unordered → ordered and ordered → unordered: every object
    /// keeps its related objects, an ordered to-many its order.
    @Test(arguments: allFormats)
    func toOneBecomesToManyAndOrderChanges(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = try Model(entities: [
            Entity(
                name: "List",
                relationships: [
                    Relationship(name: "items", destination: "Item", inverse: "list", isToMany: true, isOrdered: true),
                    Relationship(name: "tags", destination: "Tag", inverse: "list", isToMany: true),
                ]),
            Entity(
                name: "Item", attributes: [string("name")],
                relationships: [Relationship(name: "list", destination: "List", inverse: "items")]),
            Entity(
                name: "Tag", attributes: [string("name")],
                relationships: [Relationship(name: "list", destination: "List", inverse: "tags")]),
        ])
        let v2 = try Model(entities: [
            Entity(
                name: "List",
                relationships: [
                    Relationship(name: "items", destination: "Item", inverse: "lists", isToMany: true),
                    Relationship(name: "tags", destination: "Tag", inverse: "list", isToMany: true, isOrdered: true),
                ]),
            Entity(
                name: "Item", attributes: [string("name")],
                relationships: [
                    Relationship(
                        name: "lists", destination: "List", inverse: "items", isToMany: true, renamingIdentifier: "list"
                    )
                ]),
            Entity(
                name: "Tag", attributes: [string("name")],
                relationships: [Relationship(name: "list", destination: "List", inverse: "tags")]),
        ])
        let old = try handMadeStore(
            v1,
            [
                HandObject(entity: "List", key: 1, links: ["items": [("Item", 3), ("Item", 1), ("Item", 2)]]),
                HandObject(entity: "List", key: 2, links: ["tags": [("Tag", 1)]]),
                HandObject(entity: "Item", key: 1), HandObject(entity: "Item", key: 2),
                HandObject(entity: "Item", key: 3), HandObject(entity: "Item", key: 4),
                HandObject(entity: "Tag", key: 1),
            ], format: format, in: folder)
        let plan = try MigrationPlan(store: old, model: versions([("1", v1), ("2", v2)], in: folder))
        let output = folder.appendingPathComponent("new.\(format.driver.fileExtensions[0])")
        _ = try Migration.migrate(plan, to: .file(output), verify: true)
        let now = try ReadBack(output, model: v2)
        #expect(now.refs("List", 1, "items") == ["Item p1", "Item p2", "Item p3"])
        #expect(now.refs("Item", 3, "lists") == ["List p1"])
        #expect(now.refs("Item", 4, "lists") == [])
        #expect(now.refs("List", 2, "tags") == ["Tag p1"])
        #expect(now.refs("Tag", 1, "list") == ["List p2"])

        // And back: the order an ordered to-many is read in is the order it was written.
        let v3 = try Model(entities: [
            Entity(
                name: "List",
                relationships: [
                    Relationship(name: "items", destination: "Item", inverse: "lists", isToMany: true, isOrdered: true),
                    Relationship(name: "tags", destination: "Tag", inverse: "list", isToMany: true, isOrdered: true),
                ]),
            v2.entities[1], v2.entities[2],
        ])
        let ordered = try handMadeStore(
            v2,
            [
                HandObject(entity: "List", key: 1, links: ["tags": [("Tag", 2), ("Tag", 3), ("Tag", 1)]]),
                HandObject(entity: "Tag", key: 1), HandObject(entity: "Tag", key: 2), HandObject(entity: "Tag", key: 3),
            ], format: format, in: folder, name: "ordered")
        let again = folder.appendingPathComponent("again.\(format.driver.fileExtensions[0])")
        _ = try Migration.migrate(
            MigrationPlan(store: ordered, model: versions([("2", v2), ("3", v3)], in: folder)), to: .file(again),
            verify: true)
        #expect(try ReadBack(again, model: v3).refs("List", 1, "tags") == ["Tag p2", "Tag p3", "Tag p1"])
    }

    // MARK: Many-to-many and renamed destinations

    /// A many-to-many (a join table in SQLite) renamed on both sides, whose destination entity is
    /// renamed too: every pair is kept, seen from either side.
    @Test(arguments: allFormats)
    func aManyToManyRenamedOnBothSidesKeepsItsPairs(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = try Model(entities: [
            Entity(
                name: "Student", attributes: [string("name")],
                relationships: [
                    Relationship(name: "courses", destination: "Course", inverse: "students", isToMany: true)
                ]),
            Entity(
                name: "Course", attributes: [string("title")],
                relationships: [
                    Relationship(name: "students", destination: "Student", inverse: "courses", isToMany: true)
                ]),
        ])
        let v2 = try Model(entities: [
            Entity(
                name: "Student", attributes: [string("name")],
                relationships: [
                    Relationship(
                        name: "classes", destination: "Lesson", inverse: "pupils", isToMany: true,
                        renamingIdentifier: "courses")
                ]),
            Entity(
                name: "Lesson", attributes: [string("title")],
                relationships: [
                    Relationship(
                        name: "pupils", destination: "Student", inverse: "classes", isToMany: true,
                        renamingIdentifier: "students")
                ], renamingIdentifier: "Course"),
        ])
        let old = try handMadeStore(
            v1,
            [
                HandObject(entity: "Student", key: 1, links: ["courses": [("Course", 1), ("Course", 2)]]),
                HandObject(entity: "Student", key: 2, links: ["courses": [("Course", 2)]]),
                HandObject(entity: "Student", key: 3),
                HandObject(entity: "Course", key: 1, values: ["title": .string("Maths")]),
                HandObject(entity: "Course", key: 2, values: ["title": .string("Art")]),
            ], format: format, in: folder)
        let plan = try MigrationPlan(store: old, model: versions([("1", v1), ("2", v2)], in: folder))
        let changes = plan.steps[0].changes.map(\.description)
        #expect(changes.contains("Lesson: renamed from Course"), "\(changes)")
        #expect(changes.contains("Student.classes: renamed from courses"), "\(changes)")
        #expect(changes.contains("Lesson.pupils: renamed from students"), "\(changes)")
        let output = folder.appendingPathComponent("new.\(format.driver.fileExtensions[0])")
        _ = try Migration.migrate(plan, to: .file(output), verify: true)
        let now = try ReadBack(output, model: v2)
        #expect(now.value("Lesson", 1, "title") == .string("Maths"))
        #expect(now.refs("Student", 1, "classes") == ["Lesson p1", "Lesson p2"])
        #expect(now.refs("Student", 2, "classes") == ["Lesson p2"])
        #expect(now.refs("Student", 3, "classes") == [])
        #expect(now.refs("Lesson", 1, "pupils") == ["Student p1"])
        #expect(now.refs("Lesson", 2, "pupils") == ["Student p1", "Student p2"])
    }

    // MARK: Type changes

    /// `Reading` with one attribute `value` of `type`.
    static func reading(_ type: AttributeType) throws -> Model {
        try Model(entities: [Entity(name: "Reading", attributes: [Attribute(name: "value", type: type)])])
    }

    /// What a type change gives: the values converted, or an error of this code naming the object.
    enum Outcome: Sendable {
        case values([Value])
        case fails(GraftError.Code)
    }

    /// Stores of `from` values migrated to `to`: each value converted, or the migration refused naming
    /// the second object, whose value does not convert (an integer out of the new type's range breaks
    /// a rule of the new model; a value that cannot convert at all blocks the migration), with nothing
    /// written.
    @Test(
        arguments: [
            (
                AttributeType.integer16, AttributeType.integer64, [Value.integer(-32768), .integer(32767)],
                Outcome.values([.integer(-32768), .integer(32767)])
            ),
            (.integer64, .integer16, [.integer(5), .integer(70000)], .fails(.validationFailed)),
            (.integer32, .double, [.integer(3), .integer(-12)], .values([.double(3), .double(-12)])),
            (.double, .integer32, [.double(4), .double(2.5)], .fails(.migrationBlocked)),
            (.double, .integer64, [.double(4), .double(-9)], .values([.integer(4), .integer(-9)])),
            (
                .string, .uuid, [.string("0D6F9D5E-3D52-4C0B-9B1C-8A2D7A2B5C11"), .string("not a UUID")],
                .fails(.migrationBlocked)
            ),
            (.boolean, .integer16, [.bool(true), .bool(false)], .values([.integer(1), .integer(0)])),
            (.boolean, .double, [.bool(true), .bool(false)], .values([.double(1), .double(0)])),
            (.boolean, .decimal, [.bool(true), .bool(false)], .values([.decimal(1), .decimal(0)])),
            (.integer16, .boolean, [.integer(1), .integer(0)], .values([.bool(true), .bool(false)])),
            (.integer16, .boolean, [.integer(1), .integer(2)], .fails(.migrationBlocked)),
            (.double, .boolean, [.double(0), .double(1)], .values([.bool(false), .bool(true)])),
            (.double, .boolean, [.double(1), .double(0.5)], .fails(.migrationBlocked)),
        ] as [(AttributeType, AttributeType, [Value], Outcome)])
    func aTypeChangeConvertsEachValueOrNamesTheObject(
        from: AttributeType, to: AttributeType, values: [Value], expected: Outcome
    ) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (v1, v2) = (try Self.reading(from), try Self.reading(to))
        let old = try handMadeStore(
            v1,
            values.enumerated().map {
                HandObject(entity: "Reading", key: Int64($0.offset + 1), values: ["value": $0.element])
            }, format: .sqlite, in: folder)
        let plan = try MigrationPlan(store: old, model: versions([("1", v1), ("2", v2)], in: folder))
        #expect(plan.steps[0].changes.map(\.kind) == [.typeChanged])
        let output = folder.appendingPathComponent("new.sqlite")
        switch expected {
        case .fails(let code):
            expectError(code, mentioning: ["Reading", "p2", "value"]) {
                _ = try Migration.migrate(plan, to: .file(output))
            }
            #expect(!FileManager.default.fileExists(atPath: output.path))
        case .values(let expected):
            _ = try Migration.migrate(plan, to: .file(output), verify: true)
            let now = try ReadBack(output, model: v2)
            #expect(now.keys("Reading").map { now.value("Reading", $0, "value") } == expected)
        }
    }

    // MARK: Removed entities

    /// An entity removed while others still refer to its objects (through their parent): the references
    /// are left out, counted in a warning, and the new document reads back.
    @Test(arguments: allFormats)
    func referencesToARemovedEntityAreLeftOut(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (v1, _) = try Self.hierarchyModels()
        var entities = v1.entities
        entities.removeAll { $0.name == "Cat" }
        let v2 = try Model(entities: entities)
        let old = try handMadeStore(
            v1,
            [
                HandObject(entity: "Dog", key: 1), HandObject(entity: "Cat", key: 2), HandObject(entity: "Cat", key: 3),
                HandObject(entity: "Owner", key: 1, links: ["pets": [("Dog", 1), ("Cat", 2)]]),
                HandObject(entity: "Owner", key: 2, links: ["pets": [("Cat", 3)]]),
            ], format: format, in: folder)
        let plan = try MigrationPlan(store: old, model: versions([("1", v1), ("2", v2)], in: folder))
        let output = folder.appendingPathComponent("new.\(format.driver.fileExtensions[0])")
        let report = try Migration.migrate(plan, to: .file(output), verify: true)
        #expect(report.warnings.contains { $0.contains("left out") }, "\(report.warnings)")
        let now = try ReadBack(output, model: v2)
        #expect(now.keys("Dog") == [1])
        #expect(now.refs("Owner", 1, "pets") == ["Dog p1"])
        #expect(now.refs("Owner", 2, "pets") == [])
        #expect(now.refs("Dog", 1, "owner") == ["Owner p1"])
        #expect(try StoreValidation.check(StoreFormat.openForReading(output, model: v2)).violations.isEmpty)
    }

    // MARK: Several steps

    /// A property and an entity renamed in version 2 and renamed again in version 3, each renaming
    /// identifier naming the original name as Apple documents: both a version 1 and a version 2 store
    /// reach version 3 with their values.
    @Test(arguments: ["1", "2"])
    func renamesInTwoStepsCarry(start: String) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = try Model(entities: [Entity(name: "Item", attributes: [string("title")])])
        let v2 = try Model(entities: [
            Entity(
                name: "Entry", attributes: [string("heading") { $0.renamingIdentifier = "title" }],
                renamingIdentifier: "Item")
        ])
        let v3 = try Model(entities: [
            Entity(
                name: "Record", attributes: [string("caption") { $0.renamingIdentifier = "title" }],
                renamingIdentifier: "Item")
        ])
        let file = versions([("1", v1), ("2", v2), ("3", v3)], in: folder)
        let old = try handMadeStore(
            start == "1" ? v1 : v2,
            [
                HandObject(
                    entity: start == "1" ? "Item" : "Entry", key: 4,
                    values: [start == "1" ? "title" : "heading": .string("Hello")])
            ], format: .sqlite, in: folder)
        let plan = try MigrationPlan(store: old, model: file)
        #expect(plan.steps.count == (start == "1" ? 2 : 1))
        let output = folder.appendingPathComponent("new.sqlite")
        _ = try Migration.migrate(plan, to: .file(output), verify: true)
        #expect(try ReadBack(output, model: v3).value("Record", 4, "caption") == .string("Hello"))
    }
}

/// A copy of the SQLite store at `url` named `name` whose last change (`sql`) is only in its `-wal`:
/// the store is put in WAL mode, changed, and copied with its side files while the connection that
/// wrote is still open (closing it would check the log into the database and remove it).
func storeWithWriteAheadLog(_ url: URL, changing sql: String, named name: String) throws -> URL {
    var database: OpaquePointer?
    guard sqlite3_open_v2(url.path, &database, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
        throw GraftError(.io, "cannot open \(url.path)")
    }
    defer { sqlite3_close(database) }
    for statement in ["PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0", sql] {
        guard sqlite3_exec(database, statement, nil, nil, nil) == SQLITE_OK else {
            throw GraftError(.io, String(cString: sqlite3_errmsg(database)))
        }
    }
    let copy = try copyOfStore(url, in: url.deletingLastPathComponent(), named: name)
    #expect(FileManager.default.fileExists(atPath: copy.path + "-wal"))
    return copy
}

@Suite struct MigrationInPlaceEdgeCaseTests {
    /// Version 1: `Animal` (name, an optional colour) with subentities `Dog` and `Cat`. Version 2 adds
    /// `Dog.collar` (default "red") and `Cat.collar` (default "none") and makes `Animal.color` required
    /// with the default "grey": steps a SQLite store can take where it is.
    static func additionModels() throws -> (Model, Model) {
        let v1 = try Model(entities: [
            Entity(name: "Animal", attributes: [string("name"), string("color")]),
            Entity(name: "Dog", parent: "Animal", attributes: [string("breed")]),
            Entity(name: "Cat", parent: "Animal"),
        ])
        let v2 = try Model(entities: [
            Entity(
                name: "Animal",
                attributes: [
                    string("name"),
                    string("color") {
                        $0.isOptional = false
                        $0.defaultValue = .string("grey")
                    },
                ]),
            Entity(
                name: "Dog", parent: "Animal",
                attributes: [string("breed"), string("collar") { $0.defaultValue = .string("red") }]),
            Entity(name: "Cat", parent: "Animal", attributes: [string("collar") { $0.defaultValue = .string("none") }]),
        ])
        return (v1, v2)
    }

    static let animals = [
        HandObject(entity: "Animal", key: 1, values: ["name": .string("Blob")]),
        HandObject(entity: "Dog", key: 2, values: ["name": .string("Rex"), "color": .string("black")]),
        HandObject(entity: "Cat", key: 3, values: ["name": .string("Tom")]),
        HandObject(entity: "Dog", key: 4, values: ["name": .string("Fido")]),
    ]

    /// Added attributes on subentities become columns of the root table, filled only in their
    /// entities' rows; an attribute become required gets its default where it had no value; the store
    /// reads back object for object as the rewriting migration writes it.
    @Test(arguments: [false, true])
    func subentityColumnsAndFilledDefaultsWhereTheStoreIs(withWriteAheadLog: Bool) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (v1, v2) = try Self.additionModels()
        var old = try handMadeStore(v1, Self.animals, format: .sqlite, in: folder)
        if withWriteAheadLog {
            old = try storeWithWriteAheadLog(
                old, changing: "UPDATE ZANIMAL SET ZNAME = 'Rexy' WHERE Z_PK = 2", named: "wal.sqlite")
        }
        let file = versions([("1", v1), ("2", v2)], in: folder)
        let witness = try copyOfStore(old, in: folder, named: "witness.sqlite")
        let plan = try MigrationPlan(store: old, model: file)
        #expect(
            Set(Migration.inPlaceAdditions(plan) ?? []) == [
                AttributeAddition(entity: "Dog", attribute: "collar", value: .string("red")),
                AttributeAddition(entity: "Cat", attribute: "collar", value: .string("none")),
                AttributeAddition(entity: "Animal", attribute: "color", value: .string("grey"), onlyWhereNil: true),
            ])
        let inode = try FileManager.default.attributesOfItem(atPath: old.path)[.systemFileNumber] as? Int
        _ = try Migration.migrate(plan, to: .inPlace)
        #expect(try FileManager.default.attributesOfItem(atPath: old.path)[.systemFileNumber] as? Int == inode)
        #expect(try StoreFormat.recordedVersionHashes(of: old) == v2.versionHashes)
        let now = try ReadBack(old, model: v2)
        #expect(now.value("Dog", 2, "name") == .string(withWriteAheadLog ? "Rexy" : "Rex"))
        #expect(now.value("Dog", 2, "color") == .string("black"))
        #expect(now.value("Dog", 4, "color") == .string("grey"))
        #expect(now.value("Animal", 1, "color") == .string("grey"))
        #expect(now.value("Dog", 2, "collar") == .string("red"))
        #expect(now.value("Cat", 3, "collar") == .string("none"))
        // One table for the tree; the plain animal's row has no collar.
        let columns = try rows("PRAGMA table_info(ZANIMAL)", in: old).compactMap { $0[1] }
        #expect(columns.filter { $0.hasPrefix("ZCOLLAR") }.count == 2, "\(columns)")
        #expect(
            try rows("SELECT Z_PK FROM ZANIMAL WHERE ZCOLLAR IS NOT NULL OR ZCOLLAR1 IS NOT NULL", in: old)
                == [["2"], ["3"], ["4"]])
        let rewritten = folder.appendingPathComponent("rewritten.sqlite")
        _ = try Migration.migrate(MigrationPlan(store: witness, model: file), to: .file(rewritten))
        #expect(try objects(of: old, model: v2) == objects(of: rewritten, model: v2))
        #expect(try StoreValidation.check(StoreFormat.openForReading(old, model: v2)).violations.isEmpty)
    }

    /// An attribute added to a subentity that comes before a sibling already having a column of that
    /// name: a new store of version 2 gives the new attribute the plain name and the sibling's the
    /// suffixed one, so the store cannot keep its columns where they are. It is rewritten instead, and
    /// each entity keeps its own values.
    @Test func anAddedColumnASiblingsColumnWouldHaveToMakeWayForIsRewritten() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = try Model(entities: [
            Entity(name: "Animal", attributes: [string("name")]),
            Entity(name: "Cat", parent: "Animal"),
            Entity(
                name: "Dog", parent: "Animal", attributes: [string("collar")],
                relationships: [Relationship(name: "toy", destination: "Toy", inverse: "dog")]),
            Entity(name: "Toy", relationships: [Relationship(name: "dog", destination: "Dog", inverse: "toy")]),
        ])
        let v2 = try Model(entities: [
            v1.entities[0],
            Entity(
                name: "Cat", parent: "Animal",
                attributes: [string("collar") { $0.defaultValue = .string("none") }, string("toy")]),
            v1.entities[2], v1.entities[3],
        ])
        let old = try handMadeStore(
            v1,
            [
                HandObject(entity: "Cat", key: 1),
                HandObject(
                    entity: "Dog", key: 2, values: ["collar": .string("red")], links: ["toy": [("Toy", 1)]]),
                HandObject(entity: "Toy", key: 1),
            ], format: .sqlite, in: folder)
        let file = versions([("1", v1), ("2", v2)], in: folder)
        let witness = try copyOfStore(old, in: folder, named: "witness.sqlite")
        let inode = try FileManager.default.attributesOfItem(atPath: old.path)[.systemFileNumber] as? Int
        _ = try Migration.migrate(MigrationPlan(store: old, model: file), to: .inPlace)
        #expect(try FileManager.default.attributesOfItem(atPath: old.path)[.systemFileNumber] as? Int != inode)
        let now = try ReadBack(old, model: v2)
        #expect(now.value("Cat", 1, "collar") == .string("none"))
        #expect(now.value("Cat", 1, "toy") == nil)
        #expect(now.value("Dog", 2, "collar") == .string("red"))
        #expect(now.refs("Dog", 2, "toy") == ["Toy p1"])
        #expect(now.refs("Toy", 1, "dog") == ["Dog p2"])
        let rewritten = folder.appendingPathComponent("rewritten.sqlite")
        _ = try Migration.migrate(MigrationPlan(store: witness, model: file), to: .file(rewritten))
        #expect(try objects(of: old, model: v2) == objects(of: rewritten, model: v2))
    }

    /// The wibosco store of version 3, given a `-wal` that holds its last change, altered in place to
    /// version 4: the change in the log is kept, and the store reads back object for object as the
    /// rewriting migration of the same store writes it.
    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func aCorpusStoreWithAWriteAheadLogIsAlteredWhereItIs() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let original = try copyOfStore(
            Corpus.url(
                "wibosco-migration/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_3.sqlite"),
            in: folder, named: "original.sqlite")
        let store = try storeWithWriteAheadLog(
            original, changing: "UPDATE ZPOST SET ZPOSTID = 'from-the-wal' WHERE Z_PK = 1", named: "store.sqlite")
        let witness = try copyOfStore(store, in: folder, named: "witness.sqlite")
        let file = CorpusMigrationTests.files[CorpusMigrationTests.wibosco]!
        let plan = try MigrationPlan(store: store, model: file)
        #expect(Migration.inPlaceAdditions(plan)?.isEmpty == false)
        let inode = try FileManager.default.attributesOfItem(atPath: store.path)[.systemFileNumber] as? Int
        _ = try Migration.migrate(plan, to: .inPlace)
        #expect(try FileManager.default.attributesOfItem(atPath: store.path)[.systemFileNumber] as? Int == inode)
        let rewritten = folder.appendingPathComponent("rewritten.sqlite")
        _ = try Migration.migrate(MigrationPlan(store: witness, model: file), to: .file(rewritten))
        let now = try objects(of: store, model: file.current)
        #expect(now == (try objects(of: rewritten, model: file.current)))
        let post = file.current.entity(named: "Post")!
        #expect(now["Post"]?[1]?[attribute: "postID", in: post] == .string("from-the-wal"))
    }

    /// Opening from Swift: `.report` says what migrating takes and changes nothing; `.migrate` migrates
    /// the store in place (XML and binary documents are rewritten) and opens it with the new version.
    @Test(arguments: allFormats)
    func openingReportsOrMigrates(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (v1, v2) = try Self.additionModels()
        let old = try handMadeStore(v1, Self.animals, format: format, in: folder)
        let file = versions([("1", v1), ("2", v2)], in: folder)
        let before = try Data(contentsOf: old)
        expectError(.migrationBlocked, mentioning: ["version '1'", "Dog.collar: added, default 'red'"]) {
            _ = try Migration.open(old, model: v2, versions: file, automatic: .report)
        }
        #expect(try Data(contentsOf: old) == before)
        let store = try Migration.open(old, model: v2, versions: file, automatic: .migrate)
        let context = ObjectContext(store: store)
        let dogs = try context.fetch(FetchRequest(entityName: "Dog"))
        #expect(try dogs.map { try $0.value(forKey: "collar") as? String } == ["red", "red"])
        #expect(try StoreFormat.recordedVersionHashes(of: old) == v2.versionHashes)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(left.allSatisfy { $0.hasPrefix(old.lastPathComponent) }, "nothing but the store: \(left)")
        // Once migrated, the store opens as it is.
        _ = try Migration.open(old, model: v2, versions: file, automatic: .report)
    }
}

/// Mapping models written in Swift whose expressions, filters or constants cannot give what the new
/// model asks: each refused naming the mapping, object and property, with nothing written.
@Suite struct MappingModelEdgeCaseTests {
    static let v1 = migrationModels.version(named: "Company")!
    /// Version 1 with `Employee.score`, an optional Integer 64.
    static let v2 = try! {
        var entities = v1.entities
        let employee = entities.firstIndex { $0.name == "Employee" }!
        entities[employee].attributes.append(Attribute(name: "score", type: .integer64))
        entities[employee].attributes.sort { $0.name < $1.name }
        return try Model(entities: entities)
    }()

    /// The plan of a version 1 store's step to `v2` by a mapping model with these expressions (for
    /// `score`, in Employee and its subentities) and filters, and where its output would go.
    func plan(
        score: String? = nil, filters: [String: String] = [:], format: StoreFormat = .sqlite, in folder: URL
    ) throws -> (plan: MigrationPlan, output: URL) {
        let old = try store(version: "Company", format: format, in: folder)
        var expressions: [String: String] = [:]
        for entity in ["Employee", "Manager", "Flunky"] { expressions["\(entity).score"] = score }
        let mapping = mappingModel(from: Self.v1, to: Self.v2, expressions: expressions, filters: filters)
        let file = versions([("One", Self.v1), ("Two", Self.v2)], in: folder)
        return (
            try MigrationPlan(store: old, model: file, mappings: [mapping]), folder.appendingPathComponent("new.sqlite")
        )
    }

    func expectNothingWritten(in folder: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["old.sqlite"],
            sourceLocation: sourceLocation)
    }

    @Test func anExpressionThatFailsToEvaluateNamesTheObject() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (plan, output) = try plan(score: "$source.name * 2", in: folder)
        expectError(.migrationBlocked, mentioning: ["p1", "score", "$source.name * 2"]) {
            _ = try Migration.migrate(plan, to: .file(output))
        }
        try expectNothingWritten(in: folder)
    }

    @Test func aConstantOfTheWrongTypeIsRefusedNamingTheProperty() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        expectError(.migrationBlocked, mentioning: ["Employee", "score", "abc"]) {
            let (plan, output) = try plan(score: "\"abc\"", in: folder)
            _ = try Migration.migrate(plan, to: .file(output))
        }
        try expectNothingWritten(in: folder)
    }

    /// A filter that leaves out every department: each employee's required department is left out
    /// with it, which the new model does not allow; nothing is written.
    @Test func aFilterLeavingOutObjectsRequiredToOnesNameFailsValidation() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (plan, output) = try plan(filters: ["Department": "name == 'no such department'"], in: folder)
        expectError(.validationFailed, mentioning: ["p1: department: is required but is empty"]) {
            _ = try Migration.migrate(plan, to: .file(output))
        }
        try expectNothingWritten(in: folder)
    }

    /// Expressions through relationships and filters read XML and binary stores as they read SQLite
    /// ones: the store is read once for the filter, then again for the objects.
    @Test(arguments: allFormats)
    func expressionsAndFiltersRunOnEveryFormat(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (plan, output) = try plan(
            score: "$source.department.code + $source.yearsOfService", filters: ["Project": "deadline != nil"],
            format: format, in: folder)
        _ = try Migration.migrate(plan, to: .file(output), verify: true)
        let old = plan.store
        let was = try ReadBack(old, model: Self.v1)
        let now = try ReadBack(output, model: Self.v2)
        #expect(now.keys("Project") == was.keys("Project").filter { was.value("Project", $0, "deadline") != nil })
        #expect(!now.keys("Project").isEmpty && now.keys("Project") != was.keys("Project"))
        for key in was.keys("Employee") {
            let department = try #require(was.refs("Employee", key, "department")?.first)
            let code = was.value("Department", Int64(department.dropFirst("Department p".count))!, "code")
            let years = was.value("Employee", key, "yearsOfService")
            let expected = code?.doubleValue.flatMap { code in
                years?.doubleValue.map { Value.integer(Int64(code + $0)) }
            }
            #expect(now.value("Employee", key, "score") == expected, "Employee p\(key)")
        }
    }
}
