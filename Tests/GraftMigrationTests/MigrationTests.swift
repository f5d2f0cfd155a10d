import Foundation
import GraftCore
import GraftFixtures
import GraftGraph
import GraftInterchange
import GraftMigration
import GraftModel
import GraftTestSupport
import Testing

/// The test model: the example's version 1; version 2 adds `Department.location` (with a default) and
/// an optional to-one `Office`; version 3 renames `Project` to `Initiative` and `Manager.parkingSpot` to
/// `parkingBay`, widens `yearsOfService`, makes `email` required with a default, makes
/// `Department.projects` unordered and `Office.department` a to-many `departments`, and removes `Flunky`.
let migrationModels = try! ModelFile.load(Project.url("Tests/Fixtures/Migration/Company.xcdatamodeld"))

/// Every object of a store, by entity name and key.
func objects(of url: URL, model: Model? = nil) throws -> [String: [Int64: Snapshot]] {
    let reader = try StoreFormat.detect(url).driver.reader(at: url, model: model, options: StoreReadOptions())
    var objects: [String: [Int64: Snapshot]] = [:]
    try reader.forEachSnapshot { objects[reader.model.descriptions[$0.ref.entity].name, default: [:]][$0.ref.key] = $0 }
    return objects
}

/// A fixture store written with `version` of the test model.
func store(version: String, format: StoreFormat = .sqlite, in folder: URL, seed: UInt64 = 7) throws -> URL {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let url = folder.appendingPathComponent("old.\(format.driver.fileExtensions[0])")
    try FixtureGenerator(model: migrationModels.version(named: version)!, seed: seed).write(to: url)
    return url
}

@Suite struct MigrationTests {
    @Test func versionsAreInVersionOrder() {
        let names = [
            "zmessaging2.10", "zmessaging", "zmessaging2.9", "zmessaging1.27", "zmessaging2.100.0", "zmessaging2.24.1",
        ]
        #expect(
            names.sorted(by: ModelFile.isOrderedBefore)
                == [
                    "zmessaging", "zmessaging1.27", "zmessaging2.9", "zmessaging2.10", "zmessaging2.24.1",
                    "zmessaging2.100.0",
                ])
        #expect(ModelFile.isOrderedBefore("Company", "Company 2"))
        #expect(!ModelFile.isOrderedBefore("Company 10", "Company 2"))
        #expect(migrationModels.versions.map(\.name) == ["Company", "Company 2", "Company 3"])
    }

    /// The seed case: a store of version 1 opens with version 2 — the new attribute takes its default,
    /// the new optional to-one is empty, everything else is as it was.
    @Test(arguments: [StoreFormat.sqlite, .xml, .binary])
    func aVersion1StoreMigratesToVersion2(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try store(version: "Company", format: format, in: folder)
        let before = try Data(contentsOf: old)
        let plan = try MigrationPlan(store: old, model: migrationModels, version: "Company 2")
        #expect(plan.storeVersion == "Company")
        #expect(plan.steps.map(\.from) == ["Company"])
        #expect(
            Set(plan.steps[0].changes.map(\.description)) == [
                "Department.location: added, default 'Headquarters'", "Office: added",
                "Department.office: added, empty",
            ])
        let output = folder.appendingPathComponent("new.\(format.driver.fileExtensions[0])")
        let report = try Migration.migrate(plan, to: .file(output), verify: true)
        #expect(report.differences.isEmpty)
        #expect(try Data(contentsOf: old) == before, "the store migrated from is unchanged")

        let v2 = migrationModels.version(named: "Company 2")!
        #expect(try format.driver.recordedVersionHashes(at: output) == v2.versionHashes)
        let oldReader = try format.driver.reader(at: old, model: nil, options: StoreReadOptions())
        let newReader = try format.driver.reader(at: output, model: v2, options: StoreReadOptions())
        #expect(newReader.metadata.identifier == oldReader.metadata.identifier, "the store keeps its UUID")
        let was = try objects(of: old, model: migrationModels.version(named: "Company")!)
        let now = try objects(of: output, model: v2)
        #expect(now["Office"] == nil)
        for (entityName, byKey) in was {
            #expect(Set(now[entityName]?.keys ?? [:].keys) == Set(byKey.keys), "\(entityName) keeps its keys")
            let oldEntity = migrationModels.version(named: "Company")!.entity(named: entityName)!
            let newEntity = v2.entity(named: entityName)!
            for (key, snapshot) in byKey {
                let migrated = try #require(now[entityName]?[key])
                for attribute in oldEntity.attributes {
                    #expect(
                        migrated[attribute: attribute.name, in: newEntity]
                            == snapshot[attribute: attribute.name, in: oldEntity])
                }
                if entityName == "Department" {
                    #expect(migrated[attribute: "location", in: newEntity] == .string("Headquarters"))
                    #expect(migrated[relationship: "office", in: newEntity] == .toOne(nil))
                }
            }
        }
    }

    /// Two steps in one pass: renames, a wider type, required with a default, to-one → to-many,
    /// ordered → unordered, a removed entity whose objects go and whose references are left out.
    @Test func twoStepsRunInOnePass() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try store(version: "Company 2", in: folder)
        let plan = try MigrationPlan(store: old, model: migrationModels)
        #expect(plan.targetVersion == "Company 3")
        #expect(plan.steps.count == 1)
        let changes = Set(plan.steps[0].changes.map(\.description))
        for expected in [
            "Initiative: renamed from Project", "Manager.parkingBay: renamed from parkingSpot",
            "Employee.yearsOfService: Integer 32 → Integer 64, each value converted",
            "Employee.email: optional → required: objects without a value get 'unknown@example.com'",
            "Office.departments: renamed from department", "Office.departments: to-one → to-many",
            "Department.projects: ordered → unordered", "Flunky: removed: its objects are not carried",
        ] {
            #expect(changes.contains(expected), "\(expected) in \(changes.sorted())")
        }
        let output = folder.appendingPathComponent("new.sqlite")
        let report = try Migration.migrate(plan, to: .file(output), verify: true)
        let v2 = migrationModels.version(named: "Company 2")!
        let v3 = migrationModels.version(named: "Company 3")!
        let was = try objects(of: old, model: v2)
        let now = try objects(of: output, model: v3)
        #expect(now["Flunky"] == nil)
        #expect(now["Initiative"]?.count == was["Project"]?.count)
        #expect(report.counts["Initiative"] == was["Project"]?.count)
        let manager2 = v2.entity(named: "Manager")!
        let manager3 = v3.entity(named: "Manager")!
        for (key, snapshot) in was["Manager"] ?? [:] {
            #expect(
                now["Manager"]?[key]?[attribute: "parkingBay", in: manager3]
                    == snapshot[attribute: "parkingSpot", in: manager2])
        }
        let flunkies = Set((was["Flunky"] ?? [:]).keys)
        #expect(!flunkies.isEmpty)
        let department3 = v3.entity(named: "Department")!
        for (_, department) in now["Department"] ?? [:] {
            let staff = department[relationship: "employees", in: department3]?.refs ?? []
            #expect(staff.allSatisfy { v3.descriptions[$0.entity].name != "Flunky" })
        }
        let office3 = v3.entity(named: "Office")!
        let office2 = v2.entity(named: "Office")!
        for (key, office) in was["Office"] ?? [:] {
            let before = office[relationship: "department", in: office2]?.refs.map(\.key) ?? []
            #expect(now["Office"]?[key]?[relationship: "departments", in: office3]?.refs.map(\.key) == before)
        }
        #expect(report.warnings.contains { $0.contains("left out") })
    }

    @Test func aChangeNoInferenceCarriesIsRefusedNamingIt() throws {
        let v1 = migrationModels.version(named: "Company")!
        var entities = v1.entities
        let employee = entities.firstIndex { $0.name == "Employee" }!
        let hireDate = entities[employee].attributes.firstIndex { $0.name == "hireDate" }!
        entities[employee].attributes[hireDate].type = .string
        let changed = try Model(entities: entities)
        #expect {
            try MappingInference.infer(from: v1, to: changed)
        } throws: { error in
            let error = error as! GraftError
            return error.code == .migrationBlocked
                && error.underlying.map(\.description).contains {
                    $0.contains("Employee") && $0.contains("hireDate") && $0.contains("from Date to String")
                }
        }
    }
}

/// `version` of the test model with one more entity attribute: `Employee.<name>`, required, of `type`,
/// with `defaultValue` (none when `nil`).
func model(_ version: String, addingRequired name: String, type: AttributeType, defaultValue: Value?) throws -> Model {
    var entities = migrationModels.version(named: version)!.entities
    let employee = entities.firstIndex { $0.name == "Employee" }!
    entities[employee].attributes.append(
        Attribute(name: name, type: type, isOptional: false, defaultValue: defaultValue))
    entities[employee].attributes.sort { $0.name < $1.name }
    return try Model(entities: entities)
}

@Suite struct MigrationSafetyTests {
    /// In place: the store is replaced by the migrated one, keeping its UUID and its objects' keys; no
    /// temporary file is left beside it.
    @Test(arguments: [StoreFormat.sqlite, .xml, .binary])
    func inPlaceReplacesTheStoreWhenComplete(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try store(version: "Company", format: format, in: folder)
        let uuid = try format.driver.reader(at: old, model: nil, options: StoreReadOptions()).metadata
            .identifier
        let keys = try objects(of: old).mapValues { Set($0.keys) }
        let report = try Migration.migrate(
            MigrationPlan(store: old, model: migrationModels), to: .inPlace, verify: true)
        #expect(report.output == old)
        #expect(try StoreFormat.recordedVersionHashes(of: old) == migrationModels.current.versionHashes)
        let reader = try format.driver.reader(
            at: old, model: migrationModels.current, options: StoreReadOptions())
        #expect(reader.metadata.identifier == uuid)
        let now = try objects(of: old, model: migrationModels.current).mapValues { Set($0.keys) }
        #expect(now["Employee"] == keys["Employee"])
        #expect(now["Initiative"] == keys["Project"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [old.lastPathComponent])
    }

    /// A step that only adds attributes (the example's version 2 adds `Department.location`): a SQLite
    /// store is migrated where it is — the same file, a new column filled with the default, the new
    /// hashes and model cache — and reads back as the rewriting migration writes it.
    @Test func aSQLiteStoreGainsColumnsWhereItIs() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let models = try ModelFile.load(Project.url("examples/Company/Company.xcdatamodeld"))
        let old = folder.appendingPathComponent("old.sqlite")
        try FixtureGenerator(model: models.version(named: "Company")!, seed: 5).write(to: old)
        let copy = try copyOfStore(old, in: folder, named: "copy.sqlite")
        let inode = try FileManager.default.attributesOfItem(atPath: old.path)[.systemFileNumber] as? Int
        let plan = try MigrationPlan(store: old, model: models)
        #expect(
            Migration.inPlaceAdditions(plan) == [
                AttributeAddition(entity: "Department", attribute: "location", value: .string("Headquarters"))
            ])
        _ = try Migration.migrate(plan, to: .inPlace)
        #expect(try FileManager.default.attributesOfItem(atPath: old.path)[.systemFileNumber] as? Int == inode)
        #expect(try StoreFormat.recordedVersionHashes(of: old) == models.current.versionHashes)
        // The same objects as the migration that rewrites the store gives.
        let rewritten = folder.appendingPathComponent("rewritten.sqlite")
        _ = try Migration.migrate(MigrationPlan(store: copy, model: models), to: .file(rewritten))
        #expect(try objects(of: old, model: models.current) == objects(of: rewritten, model: models.current))
        let reader = try StoreFormat.sqlite.driver.reader(at: old, model: nil, options: StoreReadOptions())
        #expect(reader.model.versionHashes == models.current.versionHashes, "the model cache is the new version")
        #expect(try StoreValidation.check(StoreFormat.openForReading(old, model: models.current)).violations.isEmpty)
    }

    /// Where it is, a rule the migrated objects would break stops the migration before anything changes.
    @Test func aSQLiteStoreThatWouldBreakARuleIsLeftAsItWas() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = migrationModels.version(named: "Company")!
        let old = folder.appendingPathComponent("old.sqlite")
        try FixtureGenerator(model: v1, seed: 5).write(to: old)
        var entities = v1.entities
        let employee = entities.firstIndex { $0.name == "Employee" }!
        entities[employee].attributes.append(Attribute(name: "nickname", type: .string, isOptional: true))
        let name = entities[employee].attributes.firstIndex { $0.name == "name" }!
        entities[employee].attributes[name].regularExpression = "[0-9]+"
        entities[employee].attributes.sort { $0.name < $1.name }
        let strict = try Model(entities: entities)
        let plan = try Migration.plan(for: old, to: strict)
        #expect(Migration.inPlaceAdditions(plan)?.count == 1)
        let before = try Data(contentsOf: old)
        #expect {
            try Migration.migrate(plan, to: .inPlace)
        } throws: { error in
            (error as! GraftError).code == .validationFailed
                && (error as! GraftError).underlying.contains { $0.description.contains("name") }
        }
        #expect(try Data(contentsOf: old) == before)
        #expect(try StoreFormat.recordedVersionHashes(of: old) == v1.versionHashes)
    }

    /// A required attribute without a default and objects without a value: the migration stops naming
    /// the object and the attribute, and neither the store nor anything beside it changes.
    @Test(arguments: [false, true])
    func aFailedMigrationLeavesEverythingAsItWas(inPlace: Bool) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try store(version: "Company", in: folder)
        let before = try Data(contentsOf: old)
        let target = try model("Company", addingRequired: "nickname", type: .string, defaultValue: nil)
        let plan = try Migration.plan(for: old, to: target)
        #expect(plan.steps.count == 1)
        #expect(
            plan.steps[0].changes.map(\.description).contains("Employee.nickname: added, required without a default"))
        let output = folder.appendingPathComponent("new.sqlite")
        #expect {
            try Migration.migrate(plan, to: inPlace ? .inPlace : .file(output))
        } throws: { error in
            let error = error as! GraftError
            return error.code == .migrationBlocked && error.description.contains("Employee.nickname is required")
                && error.context.contains(.key("nickname"))
        }
        #expect(try Data(contentsOf: old) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["old.sqlite"])
    }

    /// A store of a version the model file does not have, which carries no model of its own (Apple's
    /// Recipes sample store has no model cache): refused, saying so, rather than guessed.
    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func aStoreOfAnUnknownVersionWithoutItsModelIsRefused() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = try copyOfStore(Corpus.url("recipes/Recipes.sqlite"), in: folder)
        #expect {
            try MigrationPlan(store: copy, model: migrationModels)
        } throws: { error in
            (error as! GraftError).code == .migrationBlocked
                && (error as! GraftError).message.contains("does not carry its model")
        }
    }

    /// Removing an entity whose objects the new model still counts: the departments would keep too few
    /// employees, which the store's objects did not break, so the migration stops and names them.
    @Test func aRuleTheMigrationWouldBreakStopsIt() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try store(version: "Company 2", in: folder)
        var entities = migrationModels.version(named: "Company 3")!.entities
        let department = entities.firstIndex { $0.name == "Department" }!
        let employees = entities[department].relationships.firstIndex { $0.name == "employees" }!
        entities[department].relationships[employees].minCount = 3
        let strict = try Model(entities: entities)
        #expect {
            try Migration.migrate(
                Migration.plan(for: old, to: strict), to: .file(folder.appendingPathComponent("n.sqlite")))
        } throws: { error in
            let error = error as! GraftError
            return error.code == .validationFailed
                && error.underlying.contains { $0.description.contains("Department p1: employees") }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["old.sqlite"])
    }

    /// Two inheritance trees put under one new root share one key sequence: the second tree's keys move
    /// above the first's, with a warning, and every reference follows.
    @Test func treesMergedUnderOneRootKeepDistinctKeys() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let name = Attribute(name: "name", type: .string, isOptional: true)
        let v1 = try Model(entities: [
            Entity(
                name: "Cat", attributes: [name],
                relationships: [
                    Relationship(
                        name: "friend", destination: "Dog", inverse: "friend", isToMany: false, isOptional: true)
                ]),
            Entity(
                name: "Dog", attributes: [name],
                relationships: [
                    Relationship(
                        name: "friend", destination: "Cat", inverse: "friend", isToMany: false, isOptional: true)
                ]),
        ])
        var entities = v1.entities
        entities[0].parent = "Animal"
        entities[1].parent = "Animal"
        entities.insert(Entity(name: "Animal", isAbstract: true, attributes: [name]), at: 0)
        entities[1].attributes = []
        entities[2].attributes = []
        let v2 = try Model(entities: entities)
        let old = folder.appendingPathComponent("old.sqlite")
        try FixtureGenerator(model: v1, seed: 3, spec: FixtureSpec(counts: ["Cat": 3, "Dog": 3])).write(to: old)
        let plan = try Migration.plan(for: old, to: v2)
        let output = folder.appendingPathComponent("new.sqlite")
        let report = try Migration.migrate(plan, to: .file(output), verify: true)
        #expect(report.warnings.contains { $0.contains("the keys of Dog") && $0.contains("move up by 3") })
        let was = try objects(of: old, model: v1)
        let now = try objects(of: output, model: v2)
        #expect(Set(now["Cat"]!.keys) == [1, 2, 3])
        #expect(Set(now["Dog"]!.keys) == [4, 5, 6])
        for (key, dog) in was["Dog"]! {
            let friend = dog[relationship: "friend", in: v1.entity(named: "Dog")!]?.firstRef?.key
            #expect(
                now["Dog"]![key + 3]![relationship: "friend", in: v2.entity(named: "Dog")!]?.firstRef?.key == friend)
            #expect(
                now["Dog"]![key + 3]![attribute: "name", in: v2.entity(named: "Dog")!]
                    == dog[attribute: "name", in: v1.entity(named: "Dog")!])
        }
    }

    /// Opening from Swift with a newer model migrates the store first (lightweight), or reports what it
    /// would take; a store already at the model's version opens as it is.
    @Test func openingWithANewerModelMigratesOrReports() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try store(version: "Company", in: folder)
        let before = try Data(contentsOf: old)
        let v2 = migrationModels.version(named: "Company 2")!
        #expect {
            try Migration.open(old, model: v2, versions: migrationModels, automatic: .report)
        } throws: { error in
            let error = error as! GraftError
            return error.code == .migrationBlocked && error.description.contains("version 'Company'")
                && error.underlying.contains { $0.description.contains("Department.location: added") }
        }
        #expect(try Data(contentsOf: old) == before, "reporting changes nothing")
        let opened = try Migration.open(old, model: v2, versions: migrationModels)
        let context = ObjectContext(store: opened)
        let departments = try context.fetch(FetchRequest(entityName: "Department"))
        #expect(!departments.isEmpty)
        #expect(try departments.allSatisfy { try $0.value(forKey: "location") as? String == "Headquarters" })
        // Without the model file: from the model the store carries, in one step.
        let other = try store(version: "Company", in: folder.appendingPathComponent("other", isDirectory: true))
        _ = try Migration.open(other, model: v2)
        #expect(try StoreFormat.recordedVersionHashes(of: other) == v2.versionHashes)
    }
}

/// A mapping model written in Swift: every entity of `source` copied to the entity of the same name in
/// `destination`, each attribute by `$source.name` and each relationship through its source relationship,
/// except the expressions and filters given.
func mappingModel(
    from source: Model, to destination: Model, expressions: [String: String] = [:], filters: [String: String] = [:]
) -> MappingModel {
    MappingModel(
        entityMappings: destination.descriptions.map { entity in
            let name = entity.name
            let old = source.entity(named: name)
            return EntityMapping(
                name: "\(name)To\(name)", kind: .transform, sourceEntity: old == nil ? nil : name,
                sourceEntityVersionHash: old?.versionHash, destinationEntity: name,
                destinationEntityVersionHash: entity.versionHash, filterPredicate: filters[name] ?? "TRUEPREDICATE",
                attributeMappings: entity.attributes.map { attribute in
                    PropertyMapping(
                        name: attribute.name,
                        valueExpression: expressions["\(name).\(attribute.name)"]
                            ?? (old?.attributeIndexByName[attribute.name] != nil ? "$source.\(attribute.name)" : nil))
                },
                relationshipMappings: entity.relationships.map { relationship in
                    let key = relationship.declaration.name
                    return PropertyMapping(
                        name: key,
                        valueExpression:
                            "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"\(key)\", $source.\(key))"
                    )
                })
        })
}

@Suite struct MappingModelMigrationTests {
    /// Value expressions of the source object's values and of related objects' (`$source.department.name`),
    /// and a filter that leaves objects out: references to them are left out too.
    @Test func expressionsAndFiltersOfAMappingModelRun() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try store(version: "Company", in: folder)
        let v1 = migrationModels.version(named: "Company")!
        var entities = v1.entities
        let employee = entities.firstIndex { $0.name == "Employee" }!
        entities[employee].attributes += [
            Attribute(name: "departmentName", type: .string, isOptional: true),
            Attribute(name: "doubleYears", type: .integer64, isOptional: true),
        ]
        entities[employee].attributes.sort { $0.name < $1.name }
        let v2 = try Model(entities: entities)
        let mapping = mappingModel(
            from: v1, to: v2,
            expressions: [
                "Employee.departmentName": "$source.department.name",
                "Manager.departmentName": "$source.department.name", "Flunky.departmentName": "$source.department.name",
                "Employee.doubleYears": "$source.yearsOfService * 2",
                "Manager.doubleYears": "$source.yearsOfService * 2",
                "Flunky.doubleYears": "$source.yearsOfService * 2",
            ],
            filters: ["Project": "deadline != nil"])
        let file = ModelFile(
            url: folder.appendingPathComponent("Two.xcdatamodeld"), format: .xcdatamodeld,
            versions: [.init(name: "One", model: v1), .init(name: "Two", model: v2)], currentVersionName: "Two")
        let plan = try MigrationPlan(store: old, model: file, mappings: [mapping])
        #expect(plan.steps.map(\.method) == [.mappingModel("mapping model 1 given")])
        #expect(
            plan.steps[0].changes.map(\.description).contains(
                "Employee.departmentName: computed as $source.department.name"))
        let output = folder.appendingPathComponent("new.sqlite")
        let report = try Migration.migrate(plan, to: .file(output), verify: true)
        // A reader with a filter counts its objects once it has handed them on, as the writer did.
        let reader = try MigratingReader(
            StoreFormat.sqlite.driver.reader(at: old, model: v1, options: StoreReadOptions()), plan: plan,
            lookup: { _ in nil })
        #expect(throws: GraftError.self) { try reader.counts() }
        try reader.forEachSnapshot { _ in }
        #expect(try reader.counts().filter { $0.value > 0 } == report.counts)
        let was = try objects(of: old, model: v1)
        let now = try objects(of: output, model: v2)
        let (e1, e2) = (v1.entity(named: "Employee")!, v2.entity(named: "Employee")!)
        for (key, person) in was["Employee"] ?? [:] {
            let department = try #require(person[relationship: "department", in: e1]?.firstRef)
            let name = was["Department"]?[department.key]?[attribute: "name", in: v1.entity(named: "Department")!]
            #expect(now["Employee"]?[key]?[attribute: "departmentName", in: e2] == name)
            let years = person[attribute: "yearsOfService", in: e1].flatMap { $0.doubleValue }
            #expect(now["Employee"]?[key]?[attribute: "doubleYears", in: e2] == years.map { .integer(Int64($0) * 2) })
        }
        let kept = Set(
            (was["Project"] ?? [:]).filter { $0.value[attribute: "deadline", in: v1.entity(named: "Project")!] != nil }
                .keys)
        #expect(Set((now["Project"] ?? [:]).keys) == kept)
        #expect(kept.count < (was["Project"]?.count ?? 0), "the filter leaves some projects out")
        for department in (now["Department"] ?? [:]).values {
            let projects = department[relationship: "projects", in: v2.entity(named: "Department")!]?.refs ?? []
            #expect(projects.allSatisfy { kept.contains($0.key) })
        }
    }

    /// An expression that reads another variable than `$source`, and a policy no Swift code answers for,
    /// are refused when the plan is made, each named.
    @Test func whatGraftCannotRunIsRefusedNamingIt() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try store(version: "Company", in: folder)
        let v1 = migrationModels.version(named: "Company")!
        let v2 = migrationModels.version(named: "Company 2")!
        var mapping = mappingModel(
            from: v1, to: v2, expressions: ["Department.name": "FUNCTION($entityPolicy, \"nameFor:\", $source.name)"])
        let department = mapping.entityMappings.firstIndex { $0.destinationEntity == "Department" }!
        mapping.entityMappings[department].migrationPolicyClassName = "App.DepartmentPolicy"
        let file = ModelFile(
            url: folder.appendingPathComponent("Two.xcdatamodeld"), format: .xcdatamodeld,
            versions: [.init(name: "One", model: v1), .init(name: "Two", model: v2)], currentVersionName: "Two")
        #expect {
            try MigrationPlan(store: old, model: file, mappings: [mapping])
        } throws: { error in
            let reasons = (error as! GraftError).underlying.map(\.description)
            return reasons.contains { $0.contains("$entityPolicy") && $0.contains("name") }
                && reasons.contains { $0.contains("App.DepartmentPolicy") }
        }
    }
}

@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
struct CorpusMigrationTests {
    static let wire = "wire-ios-data-model/Resources/zmessaging.xcdatamodeld"
    static let wibosco =
        "wibosco-migration/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
    /// The wibosco stores written before version 3, whose step to version 3 makes `Post.color` a required
    /// relationship to a new `Color` entity: the app runs that step with a mapping model and a custom
    /// policy (not in the corpus), and no inferred mapping can give the posts their colours.
    static let wiboscoBeforeVersion3 = ["1", "2"].map {
        "wibosco-migration/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_\($0).sqlite"
    }
    static let chains: [(model: String, stores: [String])] = [
        (wire, Corpus.sqliteStores.filter { $0.hasPrefix("wire-ios-data-model/") }),
        (
            wibosco,
            Corpus.sqliteStores.filter { $0.hasPrefix("wibosco-migration/") && !wiboscoBeforeVersion3.contains($0) }
        ),
    ]

    /// Each model file read once for all its stores.
    static let files = Dictionary(
        uniqueKeysWithValues: chains.map { ($0.model, try! ModelFile.load(Corpus.url($0.model))) })

    /// Each store migrates, in one pass through every step, to the newest version: the store's hashes
    /// become the version's, and the store migrated in memory reads back the same. (The corpus keeps the
    /// Wire stores without their external-data folders: those values are read as none, with a warning.)
    @Test(arguments: chains.flatMap { chain in chain.stores.map { (chain.model, $0) } })
    func storesMigrateToTheNewestVersion(model: String, store: String) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = try copyOfStore(Corpus.url(store), in: folder)
        let file = Self.files[model]!
        let plan = try MigrationPlan(store: copy, model: file)
        let output = folder.appendingPathComponent("migrated.sqlite")
        let report: Migration.Report
        do {
            report = try Migration.migrate(
                plan, to: .file(output), reading: StoreReadOptions(missingExternalData: .omit), verify: true)
        } catch let error as GraftError {
            Issue.record(Comment(rawValue: ([error] + error.underlying).map(\.description).joined(separator: "\n")))
            return
        }
        #expect(report.differences.isEmpty)
        #expect(try StoreFormat.sqlite.driver.recordedVersionHashes(at: output) == file.current.versionHashes)
        try expectCarried(from: copy, readWith: plan.sourceModel, to: output, readWith: file.current)
    }

    /// Stores written before wibosco's version 3 are refused on the way to it, naming the rule the
    /// migrated objects would break, and nothing is written; each migrates to version 2.
    @Test(arguments: wiboscoBeforeVersion3)
    func aStepThatWouldBreakARuleIsRefused(store: String) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = try copyOfStore(Corpus.url(store), in: folder)
        let file = Self.files[Self.wibosco]!
        let output = folder.appendingPathComponent("migrated.sqlite")
        #expect {
            try Migration.migrate(MigrationPlan(store: copy, model: file), to: .file(output))
        } throws: { error in
            let error = error as! GraftError
            return error.code == .validationFailed
                && error.underlying.first?.description == "Post p1: color: is required but is empty"
        }
        #expect(!FileManager.default.fileExists(atPath: output.path))
        let plan = try MigrationPlan(store: copy, model: file, version: "CoreDataMigration_Example 2")
        _ = try Migration.migrate(plan, to: .file(output), verify: true)
        try expectCarried(from: copy, readWith: plan.sourceModel, to: output, readWith: plan.targetModel)
    }

    /// The same stores migrate to the newest version with a Swift policy that does what the app's step to
    /// version 3 does: a `Color` for each post's `hexColor` (version 1 calls it `color` and has no
    /// renaming identifier, so its colours do not reach version 2: those posts get no colour object).
    @Test(arguments: wiboscoBeforeVersion3)
    func aSwiftPolicyRunsAStepInferenceCannot(store: String) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = try copyOfStore(Corpus.url(store), in: folder)
        let file = Self.files[Self.wibosco]!
        let colors = MigrationPolicy(step: "CoreDataMigration_Example 3", entity: "Post") { post in
            let hex = post.sourceValue("hexColor") ?? .string("#000000")
            try post.link("color", to: try post.object("Color", with: ["hex": hex]))
        }
        let plan = try MigrationPlan(store: copy, model: file, policies: [colors])
        let output = folder.appendingPathComponent("migrated.sqlite")
        let report = try Migration.migrate(plan, to: .file(output), verify: true)
        #expect(report.differences.isEmpty)
        let now = try objects(of: output, model: file.current)
        let post = file.current.entity(named: "Post")!
        let posts = try #require(now["Post"])
        #expect(posts.values.allSatisfy { $0[relationship: "color", in: post]?.firstRef != nil })
        let colorsMade = try #require(now["Color"])
        #expect(colorsMade.count <= posts.count && !colorsMade.isEmpty)
        try expectCarried(from: copy, readWith: plan.sourceModel, to: output, readWith: file.current)
    }

    static let sampleModel = "coredataplus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"
    static let makerPolicy = MigrationPolicy(className: "V2to3MakerPolicy") { object in
        // As CoreDataPlus's V2to3MakerPolicy: a car's maker text becomes its Maker, one per name.
        guard case .string(let name)? = object.sourceValue("maker") else { return }
        let maker = try object.object("Maker", with: ["name": .string(name)])
        try object.link("createdBy", to: maker)
    }

    /// CoreDataPlus's chain: version 1 → 2 is inferred (an entity renamed through its renaming
    /// identifier); version 2 → 3 is run by the mapping model beside the model, whose car mappings name
    /// the app's policy `V2to3MakerPolicy`: refused naming it, and run with an equivalent Swift policy —
    /// each car then has the `Maker` its old `maker` text named, one per name.
    @Test(arguments: ["SampleModel_V1", "SampleModel_V2"])
    func aMappingModelWithACustomPolicyRunsWithASwiftPolicy(store: String) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = try copyOfStore(
            Corpus.url("coredataplus/Tests/Resources/SampleModel/Fixtures/\(store).sqlite"), in: folder)
        let file = try ModelFile.load(Corpus.url(Self.sampleModel))
        #expect {
            try MigrationPlan(store: copy, model: file, version: "SampleModel3")
        } throws: { error in
            let error = error as! GraftError
            return error.code == .migrationBlocked
                && error.underlying.contains {
                    $0.context.contains(.entity("Car")) && $0.message.contains("REPLACE_AT_RUNTIME.V2to3MakerPolicy")
                }
        }
        let plan = try MigrationPlan(store: copy, model: file, version: "SampleModel3", policies: [Self.makerPolicy])
        #expect(plan.steps.last?.method.description.contains("V2toV3") == true)
        if store == "SampleModel_V1" {
            #expect(plan.steps.map(\.method).first == .inferred)
            #expect(plan.steps[0].changes.map(\.description).contains("LuxuryCar: renamed from ExpensiveSportCar"))
        }
        let output = folder.appendingPathComponent("migrated.sqlite")
        let report = try Migration.migrate(plan, to: .file(output), verify: true)
        #expect(report.differences.isEmpty)
        let v3 = file.version(named: "SampleModel3")!
        #expect(try StoreFormat.recordedVersionHashes(of: output) == v3.versionHashes)
        let was = try objects(of: copy, model: plan.sourceModel)
        let now = try objects(of: output, model: v3)
        let source = plan.sourceModel
        var makerNames: [Int64: String] = [:]
        for (key, maker) in now["Maker"] ?? [:] {
            if case .string(let name)? = maker[attribute: "name", in: v3.entity(named: "Maker")!] {
                makerNames[key] = name
            }
        }
        #expect(Set(makerNames.values).count == makerNames.count, "one maker per name")
        var linked = 0
        for entityName in ["Car", "SportCar"] {
            let oldEntity = source.entity(named: entityName)!
            let newEntity = v3.entity(named: entityName)!
            for (key, car) in was[entityName] ?? [:] {
                let migrated = try #require(now[entityName]?[key], "\(entityName) p\(key) keeps its key")
                guard case .string(let maker)? = car[attribute: "maker", in: oldEntity] else { continue }
                let makerRef = try #require(migrated[relationship: "createdBy", in: newEntity]?.firstRef)
                #expect(makerNames[makerRef.key] == maker)
                linked += 1
            }
        }
        #expect(linked > 0)
    }

    /// CoreDataPlus's SampleModel3: the app's custom stage makes a `Pet` for each user's `petName`
    /// before version 3 drops it; a Swift policy on the step to version 3 does the same.
    @Test func aSwiftPolicyDoesWhatACustomStageDid() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = try copyOfStore(
            Corpus.url("coredataplus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"), in: folder)
        let file = try ModelFile.load(Corpus.url("coredataplus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld"))
        let pets = MigrationPolicy(step: "SampleModel3_v3", entity: "User") { user in
            guard let name = user.sourceValue("petName") else { return }
            try user.link("pet", to: try user.newObject("Pet", with: ["name": name]))
        }
        let plan = try MigrationPlan(store: copy, model: file, version: "SampleModel3_v3", policies: [pets])
        let output = folder.appendingPathComponent("migrated.sqlite")
        _ = try Migration.migrate(plan, to: .file(output), verify: true)
        let v1 = plan.sourceModel
        let v3 = file.version(named: "SampleModel3_v3")!
        let was = try objects(of: copy, model: v1)
        let now = try objects(of: output, model: v3)
        let petNames = Dictionary(
            uniqueKeysWithValues: (now["Pet"] ?? [:]).map {
                ($0.key, $0.value[attribute: "name", in: v3.entity(named: "Pet")!])
            })
        var withPets = 0
        for (key, user) in was["User"] ?? [:] {
            let pet = now["User"]?[key]?[relationship: "pet", in: v3.entity(named: "User")!]?.firstRef
            if let name = user[attribute: "petName", in: v1.entity(named: "User")!] {
                #expect(pet.flatMap { petNames[$0.key] } == name)
                withPets += 1
            } else {
                #expect(pet == nil)
            }
        }
        #expect(withPets > 0)
        #expect(now["Pet"]?.count == withPets)
    }

    /// The WAL store, migrated in place: its `-wal` (which holds most of its objects) is read, and the
    /// store is whole afterwards, without side files.
    @Test func aStoreWithAWriteAheadLogMigratesInPlace() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let original = Corpus.url(
            "wibosco-migration/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_WAL.sqlite")
        let copy = try copyOfStore(original, in: folder)
        let witness = try copyOfStore(original, in: folder, named: "witness.sqlite")
        let file = Self.files[Self.wibosco]!
        let plan = try MigrationPlan(store: copy, model: file)
        _ = try Migration.migrate(plan, to: .inPlace, verify: true)
        #expect(!FileManager.default.fileExists(atPath: copy.path + "-wal"))
        try expectCarried(from: witness, readWith: plan.sourceModel, to: copy, readWith: file.current)
    }

    /// Objects of entities that keep their name keep their keys, and their attributes that keep name and
    /// type keep their values; the store keeps its UUID.
    func expectCarried(from old: URL, readWith oldModel: Model, to new: URL, readWith newModel: Model) throws {
        let options = StoreReadOptions(missingExternalData: .omit)
        let oldReader = try StoreFormat.sqlite.driver.reader(at: old, model: oldModel, options: options)
        let newReader = try StoreFormat.sqlite.driver.reader(at: new, model: newModel, options: options)
        #expect(newReader.metadata.identifier == oldReader.metadata.identifier)
        // Metadata keys Graft does not set (Wire's access token and the like) are kept as they were.
        let set: Set<String> = [
            "NSStoreType", "NSStoreModelVersionHashes", "NSStoreModelVersionHashesVersion",
            "NSStoreModelVersionHashesDigest", "NSStoreModelVersionChecksumKey", "NSStoreModelVersionIdentifiers",
            "NSPersistenceFrameworkVersion", "NSStoreUUID", "_NSAutoVacuumLevel",
        ]
        for (key, value) in oldReader.metadata.values where !set.contains(key) {
            #expect(newReader.metadata.values[key] == value, "metadata \(key)")
        }
        var was: [String: [Int64: Snapshot]] = [:]
        try oldReader.forEachSnapshot { was[oldModel.descriptions[$0.ref.entity].name, default: [:]][$0.ref.key] = $0 }
        var now: [String: [Int64: Snapshot]] = [:]
        try newReader.forEachSnapshot { now[newModel.descriptions[$0.ref.entity].name, default: [:]][$0.ref.key] = $0 }
        var compared = 0
        for (name, objects) in was {
            guard let oldEntity = oldModel.entity(named: name), let newEntity = newModel.entity(named: name) else {
                continue
            }
            #expect(Set(now[name]?.keys ?? [:].keys) == Set(objects.keys), "\(name) keeps its objects and keys")
            let kept = oldEntity.attributes.filter { attribute in
                !attribute.isTransient
                    && newEntity.attributes.contains {
                        $0.name == attribute.name && $0.type == attribute.type && !$0.isTransient
                    }
                    && !(newEntity.attributes.first { $0.name == attribute.name }!.isOptional == false
                        && attribute.isOptional)
            }
            for (key, snapshot) in objects {
                guard let migrated = now[name]?[key] else { continue }
                for attribute in kept {
                    #expect(
                        migrated[attribute: attribute.name, in: newEntity]
                            == snapshot[attribute: attribute.name, in: oldEntity],
                        "\(name) p\(key).\(attribute.name)")
                    compared += 1
                }
            }
        }
        #expect(compared > 0)
    }
}
