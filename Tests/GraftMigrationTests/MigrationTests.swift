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
    let url = folder.appendingPathComponent("old.\(format.driver.fileExtensions[0])")
    try FixtureGenerator(model: migrationModels.version(named: version)!, seed: seed).write(to: url)
    return url
}

@Suite struct MigrationTests {
    @Test func versionsAreInVersionOrder() {
        let names = ["zmessaging2.10", "zmessaging", "zmessaging2.9", "zmessaging1.27", "zmessaging2.100.0", "zmessaging2.24.1"]
        #expect(
            names.sorted(by: ModelFile.isOrderedBefore)
                == ["zmessaging", "zmessaging1.27", "zmessaging2.9", "zmessaging2.10", "zmessaging2.24.1", "zmessaging2.100.0"])
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
                "Department.location: added, default 'Headquarters'", "Office: added", "Department.office: added, empty",
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
                        migrated[attribute: attribute.name, in: newEntity] == snapshot[attribute: attribute.name, in: oldEntity])
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
            #expect(now["Manager"]?[key]?[attribute: "parkingBay", in: manager3] == snapshot[attribute: "parkingSpot", in: manager2])
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

@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
struct CorpusMigrationTests {
    static let chains: [(model: String, stores: [String])] = [
        (
            "wire-ios-data-model/Resources/zmessaging.xcdatamodeld",
            Corpus.sqliteStores.filter { $0.hasPrefix("wire-ios-data-model/") }
        ),
        (
            "wibosco-migration/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld",
            Corpus.sqliteStores.filter { $0.hasPrefix("wibosco-migration/") }
        ),
    ]

    /// Each model file read once for all its stores.
    static let files = Dictionary(uniqueKeysWithValues: chains.map { ($0.model, try! ModelFile.load(Corpus.url($0.model))) })

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
    }
}
