import Foundation
import GraftTestSupport
import Testing

/// `graft inspect`, run as a user runs it: the built binary, from the package folder.
@Suite(.enabled(if: GraftExecutable.url != nil, "the graft executable was not found; run `swift build` first"))
struct InspectTests {
    struct Result {
        var status: Int32
        var output: String
        var error: String
    }

    func graft(_ arguments: String...) throws -> Result { try run(arguments) }

    func run(_ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = GraftExecutable.url
        process.arguments = arguments
        process.currentDirectoryURL = Project.root
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-inspect-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outURL = folder.appendingPathComponent("out"), errURL = folder.appendingPathComponent("err")
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.run()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, output: try String(contentsOf: outURL, encoding: .utf8),
            error: try String(contentsOf: errURL, encoding: .utf8))
    }

    @Test func theCompanyModelAsText() throws {
        let result = try graft("inspect", "examples/Company/Company.xcdatamodeld")
        #expect(result.status == 0)
        #expect(result.error == "")
        expectGolden(result.output, Golden.inspectCompany, named: "inspectCompany")
    }

    @Test func theCompanyModelAsJSON() throws {
        let result = try graft("inspect", "examples/Company/Company.xcdatamodeld", "--json")
        #expect(result.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        let entities = try #require(json["entities"] as? [[String: Any]])
        #expect(entities.map { $0["name"] as? String } == ["Department", "Employee", "Flunky", "Manager", "Project"])
        let manager = try #require(entities.first { $0["name"] as? String == "Manager" })
        #expect(manager["parent"] as? String == "Employee")
        #expect(manager["abstract"] as? Bool == false)
        #expect((manager["versionHash"] as? String).flatMap { Data(base64Encoded: $0) }?.count == 32)
        let department = try #require(entities.first { $0["name"] as? String == "Department" })
        let employees = try #require(
            (department["relationships"] as? [[String: Any]])?.first { $0["name"] as? String == "employees" })
        #expect(employees["deleteRule"] as? String == "Deny")
        #expect(employees["minCount"] as? Int == 3)
        #expect(employees["maxCount"] as? Int == 40)
        #expect(json["versionChecksum"] as? String != nil)
        #expect(json["currentVersion"] as? String == "Company 2")
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func aStoresModelCacheAndACompiledModelGiveTheSameHashes() throws {
        let store = try graft(
            "inspect", "--json",
            Corpus.url("coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite").path)
        let momd = try graft(
            "inspect", "--json", Corpus.url("coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd").path)
        #expect(store.status == 0)
        #expect(momd.status == 0)
        func hashes(_ text: String) throws -> [String: String] {
            var json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            if let model = json?["model"] as? [String: Any] { json = model }  // a store nests its model
            let entities = json?["entities"] as? [[String: Any]] ?? []
            return Dictionary(
                uniqueKeysWithValues: entities.map { ($0["name"] as! String, $0["versionHash"] as! String) })
        }
        #expect(try hashes(store.output) == hashes(momd.output))
        #expect(try hashes(store.output).count == 4)
        let json = try JSONSerialization.jsonObject(with: Data(store.output.utf8)) as? [String: Any]
        #expect(json?["format"] as? String == "sqlite")
        #expect(json?["uuid"] as? String == "753753D3-A961-4901-AB05-8CC48B1D3853")
        #expect((json?["counts"] as? [String: Int])?.values.reduce(0, +) == 145)
        #expect((json?["metadata"] as? [String: Any])?["NSStoreType"] as? String == "SQLite")
    }

    @Test func problemsAreReportedWithThePathAndStatus1() throws {
        let missing = try graft("inspect", "no/such/model.xcdatamodeld")
        #expect(missing.status == 1)
        #expect(missing.output == "")
        #expect(missing.error == "error: no/such/model.xcdatamodeld: no such file or folder\n")

        let folder = try graft("inspect", "Sources")
        #expect(folder.status == 1)
        #expect(folder.error.contains("is a folder but not an .xcdatamodeld"))

        let notAModel = try graft("inspect", "Package.swift")
        #expect(notAModel.status == 1)
        #expect(notAModel.error.contains("Package.swift: is not a model Graft reads"))
    }

    @Test func aBrokenModelSaysWhereAndWhy() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "graft-broken-\(UUID().uuidString).xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let contents = """
            <?xml version="1.0" encoding="UTF-8"?>
            <model>
                <entity name="A">
                    <relationship name="b" maxCount="1" deletionRule="Nullify" destinationEntity="B"/>
                </entity>
            </model>
            """
        try contents.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let result = try graft("inspect", folder.path)
        #expect(result.status == 1)
        #expect(result.error.contains("A: b: destination entity 'B' does not exist"))
    }

    @Test func usageErrorsExit64() throws {
        let result = try graft("inspect")
        #expect(result.status == 64)
        #expect(result.error.hasPrefix("error: missing argument '<path>'"))
        let extra = try graft("inspect", "a", "b")
        #expect(extra.status == 64)
    }
}

/// Where `graft inspect` says a store's model came from.
@Suite(.enabled(if: GraftExecutable.url != nil, "the graft executable was not found; run `swift build` first"))
struct InspectModelSourceTests {
    func graft(_ arguments: String...) throws -> InspectTests.Result { try InspectTests().run(arguments) }

    @Test func aGivenModelIsNamedNotCalledTheStoresCache() throws {
        let store = "examples/Company/Company.sqlite"
        let own = try graft("inspect", store)
        #expect(own.output.contains("\nModel examples/Company/Company.sqlite (store model cache)\n"))
        let given = try graft("inspect", store, "--model", "examples/Company/Company.xcdatamodeld")
        #expect(given.status == 0, "\(given.error)")
        #expect(given.output.contains("\nModel version: Company 2 (the current version)\n"))
        #expect(given.output.contains("\nModel examples/Company/Company.xcdatamodeld (xcdatamodeld)\n"))
        #expect(!given.output.contains("store model cache"))
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func theVersionAStoreWasWrittenWithIsChosenAndNamed() throws {
        let folder = "wibosco-migration/CoreDataMigration-Example"
        let result = try graft(
            "inspect", Corpus.url(folder + "Tests/Resources/SQLite/CoreDataMigration_Example_2.sqlite").path, "--model",
            Corpus.url(folder + "/CoreData/Model/CoreDataMigration_Example.xcdatamodeld").path)
        #expect(result.status == 0, "\(result.error)")
        #expect(
            result.output.contains(
                "Model version: CoreDataMigration_Example 2 (the version whose hashes the store records; the current version is CoreDataMigration_Example 4)"
            ))
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func aStoreWithoutAModelCacheIsReadWithAnInferredModel() throws {
        let result = try graft("inspect", Corpus.url("plaso/test_data/ios/kik.sqlite").path)
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.hasPrefix("warning: the model was inferred from the store's tables"))
        #expect(result.output.contains("(inferred from the store)"))
        #expect(result.output.contains("  KikMessage          60\n"))
    }
}
