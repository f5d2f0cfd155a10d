import Foundation
import Graft
import GraftCLI
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// Stores whose data is already imperfect, as real stores' data is: `graft validate` lists what they
/// break, `graft paste --no-validate` pastes it as it is, and `graft copy --omit-missing-external-data`
/// copies values whose external file is gone as no value.
@Suite struct ImperfectStoreCommandTests {
    let folder: URL
    static let model = try! ModelFile.load(Project.url("examples/Company/Company.xcdatamodeld")).current

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-imperfect-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func graft(_ arguments: [String], input: Data = Data()) -> InProcessRun { InProcessRun(arguments, input: input) }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A Company store whose department Tiny has two employees (the model asks for at least three) and
    /// whose Zed belongs to no department (every employee must); with `photo`, Ann's photo is kept in an
    /// external file that is not there.
    func imperfectStore(_ name: String, missingPhoto: Bool = false) throws -> String {
        let model = Self.model
        let department = model.entity(named: "Department")!
        let employee = model.entity(named: "Employee")!
        var tiny = Snapshot(entity: department, key: 1)
        tiny[attribute: "name", in: department] = .string("Tiny")
        tiny[attribute: "code", in: department] = .integer(7)
        var people: [Snapshot] = []
        for (key, name) in [(1, "Ann"), (2, "Bob"), (3, "Zed")] {
            var person = Snapshot(entity: employee, key: Int64(key))
            person[attribute: "name", in: employee] = .string(name)
            person[attribute: "employeeID", in: employee] = .integer(Int64(100 + key))
            person[attribute: "hireDate", in: employee] = .date(Date(timeIntervalSinceReferenceDate: 700_000_000))
            person[attribute: "salary", in: employee] = .decimal(1000)
            person[attribute: "isRemote", in: employee] = .bool(false)
            if key < 3 { person[relationship: "department", in: employee] = .toOne(tiny.ref) }
            people.append(person)
        }
        people[1][attribute: "photo", in: employee] = .data(Data([1, 2, 3]))
        tiny[relationship: "employees", in: department] = .toMany(people.prefix(2).map(\.ref))
        let url = folder.appendingPathComponent(name)
        let format = Graft.StoreFormat.forExtension(url)!
        try format.driver.write(
            [tiny] + people, to: url, model: model,
            metadata: StoreMetadata.make(for: model, storeType: format.storeType), overwrite: false)
        if missingPhoto {
            // 0x02 and a file name: the value is in `.<store>_SUPPORT/_EXTERNAL_DATA/<name>`, which is missing.
            let database = try SQLiteDatabase.openForWriting(url)
            try database.execute(
                "UPDATE ZEMPLOYEE SET ZPHOTO = X'02\(Data("0F1E2D3C-AAAA-4BBB-8CCC-DDDDEEEEFFFF".utf8).map { String(format: "%02X", $0) }.joined())00' WHERE Z_PK = 1"
            )
        }
        return url.path
    }

    // MARK: graft validate

    @Test(arguments: ["imperfect.sqlite", "imperfect.xml", "imperfect.binary"])
    func validateListsEveryRuleBrokenAndExits1(name: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try imperfectStore(name)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let run = graft(["validate", store])
        #expect(run.status == 1)
        #expect(
            run.text.split(separator: "\n").sorted() == [
                "Department p1 employees (minimumCount): holds 2 objects, fewer than the minimum 3",
                "Employee p3 department (required): is required but is empty",
            ])
        #expect(run.error == "\(store): 4 objects, 2 rules broken by 2 of them\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }

    @Test func validateOfAStoreThatFollowsItsModelExits0() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = graft(["validate", Project.url("examples/Company/Company.sqlite").path])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.text.isEmpty)
        #expect(run.error.hasSuffix(": 13 objects, no rule broken\n"))
    }

    @Test func validateJSONIsAListOfViolationsForPrograms() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try imperfectStore("imperfect.sqlite")
        let run = graft([
            "validate", store, "--json", "--model", Project.url("examples/Company/Company.xcdatamodeld").path,
        ])
        #expect(run.status == 1)
        #expect(run.error.isEmpty)
        let json = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
        #expect(json["objects"] as? Int == 4)
        #expect(json["objectsBreakingRules"] as? Int == 2)
        let violations = try #require(json["violations"] as? [[String: Any]])
        #expect(violations.count == 2)
        for violation in violations {
            #expect(Set(violation.keys) == ["entity", "key", "uri", "property", "rule", "message"])
            #expect((violation["uri"] as? String)?.hasPrefix("x-coredata://") == true)
        }
        let tiny = try #require(violations.first { $0["entity"] as? String == "Department" })
        #expect(tiny["key"] as? Int == 1)
        #expect(tiny["property"] as? String == "employees")
        #expect(tiny["rule"] as? String == "minimumCount")
        #expect(tiny["message"] as? String == "holds 2 objects, fewer than the minimum 3")
        #expect((tiny["uri"] as? String)?.hasSuffix("/Department/p1") == true)
    }

    @Test func validateUsageAndErrors() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = graft(["validate"])
        #expect(missing.status == 64)
        #expect(missing.error.contains("usage: graft validate"))
        let absent = graft(["validate", path("nothing.sqlite")])
        #expect(absent.status == 1)
        #expect(absent.error.hasPrefix("error: "))
        #expect(absent.error.contains("no such file"))
        #expect(graft(["validate", "-"]).status == 64)
    }

    // MARK: graft paste --no-validate

    @Test func aPasteOfObjectsThatAlreadyBreakRulesIsRefusedSayingSo() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = graft(["copy", try imperfectStore("imperfect.sqlite"), "--all", "-q"])
        #expect(copy.status == 0, "\(copy.error)")
        let target = path("new.sqlite")
        let refused = graft(["paste", "--into", target], input: copy.output)
        #expect(refused.status == 1)
        #expect(
            refused.error.contains(
                "the pasted objects would break 2 rules, all of which the copied objects already broke in the clipboard; nothing was pasted (--no-validate pastes them as they are"
            ))
        #expect(
            refused.error.contains(
                "employees: holds 2 objects, fewer than the minimum 3 (already broken in the clipboard)"))
        #expect(refused.error.contains("department: is required but is empty (already broken in the clipboard)"))
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test(arguments: ["new.sqlite", "new.xml", "new.binary"])
    func pasteWithNoValidatePastesThemAsTheyAreWithWarnings(name: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = graft(["copy", try imperfectStore("imperfect.sqlite"), "--all", "-q"])
        let target = path(name)
        let paste = graft(["paste", "--into", target, "--no-validate"], input: copy.output)
        #expect(paste.status == 0, "\(paste.error)")
        let warnings = paste.error.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        #expect(
            warnings.sorted() == [
                "warning: o1 (Department): employees: holds 2 objects, fewer than the minimum 3",
                "warning: o4 (Employee): department: is required but is empty",
            ])
        #expect(paste.error.contains("inserted 4 (Department 1, Employee 3), linked 0 references, 2 rules broken"))
        #expect(paste.text.split(separator: "\n").count == 4)
        // The new store holds the objects as they were, rules broken and all.
        let check = graft(["validate", target])
        #expect(check.status == 1)
        #expect(check.text.split(separator: "\n").count == 2)
        // Into a store that has objects, too: a dry run lists what the copies would break, their own two
        // rules and, as duplicates, the uniqueness constraints of the four objects pasted before.
        let dry = graft(
            ["paste", "--into", target, "--no-validate", "--on-conflict", "duplicate", "-n"], input: copy.output)
        #expect(dry.status == 0, "\(dry.error)")
        #expect(dry.text.contains("Would break 6 rules, pasting the objects as they are:\n"))
        #expect(dry.text.contains("o3 (Employee): employeeID: an existing Employee (x-coredata://"))
        // XML and binary documents take the duplicates; a SQLite store's unique indexes (which Core Data
        // creates for uniqueness constraints) refuse them, and the store is left as it was.
        let before = try Data(contentsOf: URL(fileURLWithPath: target))
        let again = graft(
            ["paste", "--into", target, "--no-validate", "--on-conflict", "duplicate", "-q"], input: copy.output)
        if name.hasSuffix(".sqlite") {
            #expect(again.status == 1)
            #expect(again.error.contains("UNIQUE constraint failed"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before)
        } else {
            #expect(again.status == 0, "\(again.error)")
            #expect(graft(["validate", target]).text.split(separator: "\n").count == 8)
        }
    }

    // MARK: graft copy --omit-missing-external-data

    @Test(arguments: [["--all"], ["--entity", "Employee"]])
    func aMissingExternalFileStopsACopyNamingTheOption(selection: [String]) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try imperfectStore("photos.sqlite", missingPhoto: true)
        let refused = graft(["copy", store] + selection)
        #expect(refused.status == 1)
        #expect(refused.error.contains("Employee p1: photo: "))
        #expect(
            refused.error.contains(
                "_EXTERNAL_DATA/0F1E2D3C-AAAA-4BBB-8CCC-DDDDEEEEFFFF: the value is kept in an external file that is missing"
            ))
        #expect(refused.error.contains("--omit-missing-external-data"))
        #expect(refused.output.isEmpty)

        let copy = graft(["copy", store, "--omit-missing-external-data"] + selection)
        #expect(copy.status == 0, "\(copy.error)")
        #expect(copy.error.contains("warning: external file "))
        #expect(copy.error.contains("0F1E2D3C-AAAA-4BBB-8CCC-DDDDEEEEFFFF is missing; its value is read as no value"))
        let clipboard = try ClipboardEncoding.decode(copy.output)
        let people = clipboard.objects.filter { $0.entity == "Employee" }
        #expect(people.count == 3)
        let ann = try #require(people.first { $0[attribute: "name"] == .string("Ann") })
        let bob = try #require(people.first { $0[attribute: "name"] == .string("Bob") })
        #expect(ann[attribute: "photo"] == nil)
        #expect(bob[attribute: "photo"] == .data(Data([1, 2, 3])))
    }

    /// A copy that fails part way leaves no file at `-o`, nor a temporary one beside it, in any encoding.
    @Test(arguments: ClipboardEncoding.allCases)
    func aFailedCopyLeavesNoFile(_ encoding: ClipboardEncoding) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try imperfectStore("photos.sqlite", missingPhoto: true)
        let before = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        let refused = graft(["copy", store, "--all", "--format", encoding.rawValue, "-o", path("all.clipboard")])
        #expect(refused.status == 1)
        #expect(refused.error.contains("--omit-missing-external-data"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == before)
    }
}
