import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel
import GraftTestSupport
import Testing

/// A Company store whose objects already break the model's rules, as real stores' objects do: the
/// department Tiny has two employees where the model asks for at least three, and Zed belongs to no
/// department, which every employee must.
enum ImperfectCompany {
    static let identifier = "50DACE00-0000-4000-8000-00000000BAD1"

    static func snapshots(model: Model = Company.v2) -> [Snapshot] {
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
            people.append(person)
        }
        for index in 0..<2 {
            people[index][relationship: "department", in: employee] = .toOne(tiny.ref)
        }
        tiny[relationship: "employees", in: department] = .toMany(people.prefix(2).map(\.ref))
        return [tiny] + people
    }

    static func store() throws -> InMemoryStore {
        try InMemoryStore(model: Company.v2, identifier: identifier, snapshots: snapshots())
    }

    /// What the store breaks, as (entity, key, property, rule).
    static let broken: Set<Broken> = [
        Broken("Department", 1, "employees", .minimumCount), Broken("Employee", 3, "department", .required),
    ]

    struct Broken: Hashable, CustomStringConvertible {
        var entity: String
        var key: Int64
        var property: String
        var rule: RuleViolation.Rule

        init(_ entity: String, _ key: Int64, _ property: String, _ rule: RuleViolation.Rule) {
            self.entity = entity
            self.key = key
            self.property = property
            self.rule = rule
        }

        init(_ found: StoreValidation.Violation) {
            self.init(found.violation.entity, found.ref.key, found.violation.property, found.violation.rule)
        }

        var description: String { "\(entity) p\(key) \(property) \(rule)" }
    }
}

@Suite struct StoreValidationTests {
    @Test(arguments: StoreFormat.allCases)
    func everyRuleTheObjectsBreakIsFound(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("imperfect.\(format.rawValue)")
        try format.driver.write(
            ImperfectCompany.snapshots(), to: url, model: Company.v2,
            metadata: StoreMetadata.make(for: Company.v2, storeType: format.storeType), overwrite: false)
        let store = try StoreFormat.openForReading(url, model: nil)
        let report = try StoreValidation.check(store)
        #expect(report.objects == 4)
        #expect(Set(report.violations.map(ImperfectCompany.Broken.init)) == ImperfectCompany.broken)
        #expect(report.violations.count == 2)
        #expect(report.objectsBreakingRules == 2)
        let tiny = try #require(report.violations.first { $0.violation.entity == "Department" })
        #expect(tiny.line == "Department p1 employees (minimumCount): holds 2 objects, fewer than the minimum 3")
        #expect(tiny.uri == "x-coredata://\(store.identifier)/Department/p1")
        #expect(report.summary == "4 objects, 2 rules broken by 2 of them")
    }

    @Test func aStoreThatFollowsItsModelBreaksNothing() throws {
        let report = try StoreValidation.check(try Company.store())
        #expect(report.objects == 12)
        #expect(report.violations.isEmpty)
        #expect(report.summary == "12 objects, no rule broken")
        #expect(
            report.json
                == .object([("objects", .int(12)), ("objectsBreakingRules", .int(0)), ("violations", .array([]))]))
    }

    @Test func uniquenessIsCheckedAcrossTheStore() throws {
        var snapshots = ImperfectCompany.snapshots()
        let employee = Company.v2.entity(named: "Employee")!
        // A second Ann, with Ann's employeeID, in Tiny (which then has its three).
        var again = snapshots[1]
        again.ref.key = 4
        snapshots[0][relationship: "employees", in: Company.v2.entity(named: "Department")!] = .toMany(
            [snapshots[1].ref, snapshots[2].ref, again.ref])
        again[relationship: "department", in: employee] = .toOne(snapshots[0].ref)
        snapshots.append(again)
        let report = try StoreValidation.check(try InMemoryStore(model: Company.v2, snapshots: snapshots))
        #expect(
            Set(report.violations.map(ImperfectCompany.Broken.init)) == [
                ImperfectCompany.Broken("Employee", 3, "department", .required),
                ImperfectCompany.Broken("Employee", 4, "employeeID", .uniqueness),
            ])
        let twin = try #require(report.violations.first { $0.violation.rule == .uniqueness })
        #expect(twin.violation.message.contains("another Employee (Employee p1) already has employeeID = 101"))
    }

    @Test func theJSONNamesEachViolationsObjectPropertyAndRule() throws {
        let report = try StoreValidation.check(try ImperfectCompany.store())
        guard case .object(let members) = report.json,
            case .array(let list)? = members.first(where: { $0.0 == "violations" })?.1
        else {
            Issue.record("not an object with a violations list: \(report.json.text())")
            return
        }
        #expect(members.map(\.0) == ["objects", "objectsBreakingRules", "violations"])
        #expect(list.count == 2)
        for item in list {
            guard case .object(let fields) = item else {
                Issue.record("not an object: \(item.text())")
                continue
            }
            #expect(fields.map(\.0) == ["entity", "key", "uri", "property", "rule", "message"])
        }
    }
}

@Suite struct PasteValidationTests {
    typealias Target = PasteIsomorphismTests.Target

    /// Pastes `clipboard` in the way `kind` names, into a new file in `folder`; returns the report and
    /// the store as written.
    func paste(
        _ clipboard: Clipboard, _ kind: Target, format: StoreFormat, options: PasteOptions, in folder: URL
    ) throws -> (PasteReport, URL) {
        let url = folder.appendingPathComponent("target.\(format.rawValue)")
        let paster = Paster(options: options)
        switch kind {
        case .newDocument:
            return (try paster.paste(clipboard, intoNewStoreAt: url, format: format), url)
        case .emptyStore:
            return (
                try paster.paste(clipboard, into: try format.driver.create(url, model: Company.v2)), url
            )
        case .storeWithObjects:
            if !FileManager.default.fileExists(atPath: url.path) {
                try Self.makeStoreWithObjects(at: url, format: format)
            }
            return (try paster.paste(clipboard, into: try StoreFormat.open(url, model: Company.v2)), url)
        }
    }

    static func makeStoreWithObjects(at url: URL, format: StoreFormat) throws {
        try Company.addElsewhere(to: try format.driver.create(url, model: Company.v2))
    }

    func folderContents(_ folder: URL) throws -> [String: Data] {
        var contents: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            contents[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return contents
    }

    @Test(arguments: Target.allCases, StoreFormat.allCases)
    func violationsTheClipboardAlreadyHadAreNamedWhenAPasteIsRefused(kind: Target, format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clipboard = try Copier(source: StoreSource(try ImperfectCompany.store())).copy(Selection(roots: [.all]))
        let url = folder.appendingPathComponent("target.\(format.rawValue)")
        if kind == .storeWithObjects { try Self.makeStoreWithObjects(at: url, format: format) }
        let before = try folderContents(folder)
        let error = try #require(throws: GraftError.self) {
            _ = try paste(clipboard, kind, format: format, options: PasteOptions(), in: folder)
        }
        #expect(error.code == .validationFailed)
        #expect(
            error.message.contains(
                "would break 2 rules, all of which the copied objects already broke in the clipboard"))
        #expect(error.message.contains("--no-validate"))
        #expect(error.underlying.count == 2)
        #expect(error.underlying.allSatisfy { $0.message.hasSuffix("(already broken in the clipboard)") })
        #expect(error.underlying.contains { $0.context.contains(.key("employees")) })
        #expect(error.underlying.contains { $0.context.contains(.key("department")) })
        #expect(try folderContents(folder) == before)
    }

    @Test(arguments: Target.allCases)
    func violationsThePasteCausesAreToldApart(kind: Target) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The three people: Ann and Bob link to Tiny, a reference the target lacks, so dropping those links
        // leaves them without the department they had; Zed had none in the clipboard already.
        let clipboard = try Copier(source: StoreSource(try ImperfectCompany.store())).copy(
            Selection(roots: [.predicate(entity: "Employee", format: "")]))
        let error = try #require(throws: GraftError.self) {
            _ = try paste(clipboard, kind, format: .sqlite, options: PasteOptions(dangling: .drop), in: folder)
        }
        #expect(
            error.message.contains("would break 3 rules, 1 of which the copied objects already broke in the clipboard"))
        let marked = error.underlying.filter { $0.message.hasSuffix("(already broken in the clipboard)") }
        #expect(marked.count == 1)
        let zed = try #require(clipboard.objects.first { $0[attribute: "name"] == .string("Zed") })
        #expect(marked.first?.context.first == .object("\(zed.id) (Employee)"))
    }

    @Test func aSingleViolationThePasteCausesIsNotMarked() throws {
        // Ann alone, her department dropped: the README's example.
        let ann = try Copier(source: try Company.source()).copy(
            Selection(roots: [.predicate(entity: "Employee", format: "name == 'Ann'")]))
        let error = try #require(throws: GraftError.self) {
            try Paster(options: PasteOptions(dangling: .drop)).paste(ann, into: InMemoryStore(model: Company.v2))
        }
        #expect(
            error.message
                == "the pasted objects would break 1 rule; nothing was pasted (--no-validate pastes them as they are, with a warning for each broken rule)"
        )
        #expect(error.underlying.map(\.description) == ["o1 (Employee): department: is required but is empty"])
    }

    @Test(arguments: Target.allCases, StoreFormat.allCases)
    func withoutValidationTheObjectsArePastedAsTheyAre(kind: Target, format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clipboard = try Copier(source: StoreSource(try ImperfectCompany.store())).copy(Selection(roots: [.all]))
        let (report, url) = try paste(
            clipboard, kind, format: format, options: PasteOptions(validates: false), in: folder)
        #expect(report.inserted.values.reduce(0, +) == 4)
        #expect(
            Set(report.violations.map { "\($0.property) \($0.rule)" }) == [
                "employees minimumCount", "department required",
            ])
        let written = try StoreFormat.openForReading(url, model: Company.v2)
        try expectPasted(clipboard, report, in: written)
        // The pasted objects now break the same rules in the store, and nothing more (the department
        // already in the store, saved with no validation, has no code).
        let pasted = Set(report.idMap.map(\.uri))
        let found = try StoreValidation.check(written).violations.filter { pasted.contains($0.uri) }
        #expect(
            found.map { "\($0.violation.property) \($0.violation.rule)" }.sorted() == [
                "department required", "employees minimumCount",
            ])
    }

    @Test(arguments: Target.allCases)
    func aDryRunWithoutValidationReportsTheViolationsAndWritesNothing(kind: Target) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clipboard = try Copier(source: StoreSource(try ImperfectCompany.store())).copy(Selection(roots: [.all]))
        let url = folder.appendingPathComponent("target.xml")
        if kind == .storeWithObjects { try Self.makeStoreWithObjects(at: url, format: .xml) }
        let before = try folderContents(folder)
        let (report, _) = try paste(
            clipboard, kind, format: .xml, options: PasteOptions(dryRun: true, validates: false), in: folder)
        #expect(report.dryRun)
        #expect(report.violations.count == 2)
        #expect(try folderContents(folder) == before)
    }
}
