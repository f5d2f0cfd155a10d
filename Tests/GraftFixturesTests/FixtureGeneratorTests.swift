import Foundation
import GraftCore
import GraftFixtures
import GraftGraph
import GraftInterchange
import GraftModel
import GraftTestSupport
import Testing

let companyModel = try! ModelFile.load(Project.url("examples/Company/Company.xcdatamodeld")).current

/// Every rule a store's objects break, as `graft validate` reports them.
func violations(ofStoreAt url: URL) throws -> [String] {
    let store = try StoreFormat.openForReading(url, model: nil, options: StoreReadOptions())
    return try StoreValidation.check(store).violations.map(\.line)
}

@Suite struct FixtureGeneratorTests {
    @Test(arguments: ["sqlite", "xml", "binary"])
    func theCompanyFixtureBreaksNoRuleInEveryFormat(format: String) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Company.\(format)")
        let written = try FixtureGenerator(model: companyModel).write(to: url)
        #expect(written.counts == ["Department": 10, "Employee": 10, "Flunky": 10, "Manager": 10, "Project": 10])
        #expect(try violations(ofStoreAt: url).isEmpty)
        // And it converts to the other formats with nothing changed.
        for other in ["sqlite", "xml", "binary"] where other != format {
            let converted = folder.appendingPathComponent("again.\(other)")
            let report = try Conversion.convert(from: url, to: converted, options: .init(verify: true))
            #expect(report.differences.isEmpty)
            #expect(report.objects == 50)
        }
    }

    /// The store read with SQLite itself: every employee in a department, each department's staff within
    /// the model's 3 to 40, every employee ID and department name different, every email and code as the
    /// model says.
    @Test func theSQLiteTablesHoldWhatTheModelAsks() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Company.sqlite")
        let spec = FixtureSpec(counts: ["Department": 7, "Employee": 60, "Manager": 9, "Flunky": 12])
        try FixtureGenerator(model: companyModel, seed: 42, spec: spec).write(to: url)
        #expect(try rows("SELECT count(*) FROM ZEMPLOYEE", in: url) == [["81"]])
        #expect(try rows("SELECT count(*) FROM ZEMPLOYEE WHERE ZDEPARTMENT IS NULL", in: url) == [["0"]])
        let staff = try rows("SELECT ZDEPARTMENT, count(*) FROM ZEMPLOYEE GROUP BY ZDEPARTMENT", in: url)
        #expect(staff.count == 7)
        #expect(staff.allSatisfy { (3...40).contains(Int($0[1]!)!) })
        #expect(
            try rows("SELECT count(DISTINCT ZEMPLOYEEID), count(*) FROM ZEMPLOYEE", in: url) == [["81", "81"]])
        #expect(try rows("SELECT count(DISTINCT ZNAME), count(*) FROM ZDEPARTMENT", in: url) == [["7", "7"]])
        let departmentKeys = Set(try rows("SELECT Z_PK FROM ZDEPARTMENT", in: url).map { $0[0]! })
        #expect(Set(staff.map { $0[0]! }) == departmentKeys)
        let email = try NSRegularExpression(pattern: "^[^@ ]+@[^@ ]+\\.[a-z]+$")
        for row in try rows("SELECT ZEMAIL FROM ZEMPLOYEE WHERE ZEMAIL IS NOT NULL", in: url) {
            let text = row[0]!
            #expect(email.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil, "\(text)")
        }
        #expect(try rows("SELECT count(*) FROM ZDEPARTMENT WHERE ZCODE < 1 OR ZCODE > 999", in: url) == [["0"]])
        // Every manager reference names a manager (entity 4 in this model's Z_PRIMARYKEY order).
        let managers = try rows(
            "SELECT count(*) FROM ZEMPLOYEE e WHERE e.ZMANAGER IS NOT NULL AND NOT EXISTS "
                + "(SELECT 1 FROM ZEMPLOYEE m WHERE m.Z_PK = e.ZMANAGER AND m.Z_ENT = "
                + "(SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Manager'))", in: url)
        #expect(managers == [["0"]])
        #expect(try violations(ofStoreAt: url).isEmpty)
    }

    @Test(arguments: ["sqlite", "xml", "binary", "json", "plist", "bplist"])
    func theSameSeedGivesTheSameBytes(format: String) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let spec = FixtureSpec(counts: ["Department": 3, "Employee": 20])
        var files: [Data] = []
        for run in 0..<2 {
            let url = folder.appendingPathComponent("run\(run).\(format)")
            try FixtureGenerator(model: companyModel, seed: 9, spec: spec).write(to: url)
            files.append(try Data(contentsOf: url))
        }
        #expect(files[0] == files[1])
        let other = folder.appendingPathComponent("other.\(format)")
        try FixtureGenerator(model: companyModel, seed: 10, spec: spec).write(to: other)
        #expect(try Data(contentsOf: other) != files[0])
    }

    /// Objects in a context, for tests that want objects: what a paste of the fixture inserts, valid.
    @Test func aContextIsFilledWithTheFixture() throws {
        let context = ObjectContext(model: companyModel)
        let generator = try FixtureGenerator(model: companyModel, seed: 2, spec: FixtureSpec(counts: ["Department": 3]))
        let report = try generator.fill(context)
        #expect(report.inserted == generator.counts.filter { $0.value > 0 })
        let departments = try context.fetch(FetchRequest(entityName: "Department"))
        #expect(departments.count == 3)
        for department in departments {
            let staff = try department.value(forKeyPath: "employees.@count") as? Int64 ?? 0
            #expect((3...40).contains(staff))
        }
        try context.save()
    }

    @Test func theStoreUUIDComesFromTheSeed() throws {
        let first = try FixtureGenerator(model: companyModel, seed: 3)
        #expect(first.storeIdentifier == (try FixtureGenerator(model: companyModel, seed: 3)).storeIdentifier)
        #expect(first.storeIdentifier != (try FixtureGenerator(model: companyModel, seed: 4)).storeIdentifier)
        #expect(UUID(uuidString: first.storeIdentifier) != nil)
    }

    /// One more employee leaves every other object's values as they were.
    @Test func oneMoreObjectLeavesTheOthersValues() throws {
        let before = try FixtureGenerator(model: companyModel, seed: 5, spec: FixtureSpec(counts: ["Employee": 30]))
        let after = try FixtureGenerator(model: companyModel, seed: 5, spec: FixtureSpec(counts: ["Employee": 31]))
        #expect(after.counts["Employee"] == 31)
        for entity in companyModel.descriptions where !entity.isAbstract {
            for index in 0..<before.counts[entity.name]! {
                let old = try before.snapshot(entity: entity.index, index: index)
                let new = try after.snapshot(entity: entity.index, index: index)
                #expect(old.attributes == new.attributes, "\(entity.name) \(index)")
            }
        }
    }

    @Test func countsThatCannotSatisfyTheModelAreRefusedWithCountsThatCan() throws {
        let spec = FixtureSpec(counts: ["Department": 5, "Employee": 2, "Manager": 0, "Flunky": 0])
        let error = #expect(throws: GraftError.self) { try FixtureGenerator(model: companyModel, spec: spec) }
        #expect(error?.code == .validationFailed)
        #expect(error?.message.contains("Department.employees (3 to 40)") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("needs at least 15") == true)
        #expect(error?.message.contains("--count Employee=15") == true)
        // The suggestion works.
        var working = spec
        working.counts["Employee"] = 15
        #expect(try FixtureGenerator(model: companyModel, spec: working).counts["Employee"] == 15)
    }

    @Test func countsLeftToTheGeneratorAreRaisedToWhatTheModelNeeds() throws {
        let generator = try FixtureGenerator(model: companyModel, spec: FixtureSpec(counts: ["Department": 20]))
        let staff = generator.counts["Employee"]! + generator.counts["Manager"]! + generator.counts["Flunky"]!
        #expect(staff == 60)
        // Large requests are planned, not mistaken for rules without end.
        let large = try FixtureGenerator(
            model: companyModel, spec: FixtureSpec(counts: ["Department": 30_000_000, "Project": 0]))
        #expect(large.counts["Employee"]! + 20 == 90_000_000)
    }

    /// Two entities that each need more of the other than the other allows: no counts can do.
    @Test func aModelWhoseRulesCannotBeSatisfiedIsExplained() throws {
        func relationship(
            _ name: String, to destination: String, inverse: String, toMany: Bool, min: Int = 0
        )
            -> Relationship
        {
            Relationship(
                name: name, destination: destination, inverse: inverse, isToMany: toMany, minCount: min,
                maxCount: toMany ? 0 : 1, isOptional: toMany)
        }
        let model = try Model(entities: [
            Entity(
                name: "Hen",
                relationships: [
                    relationship("eggs", to: "Egg", inverse: "layer", toMany: true, min: 2),
                    relationship("egg", to: "Egg", inverse: "hens", toMany: false),
                ]),
            Entity(
                name: "Egg",
                relationships: [
                    relationship("layer", to: "Hen", inverse: "eggs", toMany: false),
                    relationship("hens", to: "Hen", inverse: "egg", toMany: true, min: 2),
                ]),
        ])
        let error = #expect(throws: GraftError.self) { try FixtureGenerator(model: model) }
        #expect(error?.message.contains("cannot be satisfied with any objects") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("Hen.eggs") == true)
        #expect(error?.message.contains("Egg.hens") == true)
    }

    @Test func aSpecPinsValuesDrawsFromListsAndSetsFanOut() throws {
        let json = Data(
            """
            {
              "seed": 11,
              "counts": {"Department": 4},
              "set": {"Employee.isRemote": false, "Project.deadline": "2025-06-30"},
              "choices": {"Department.location": ["Berlin", "Lisbon"]},
              "fanOut": {"Department.employees": "5...6"}
            }
            """.utf8)
        let spec = try FixtureSpec(json: json)
        let generator = try FixtureGenerator(model: companyModel, spec: spec)
        #expect(generator.seed == 11)
        let snapshots = try generator.snapshots()
        let employee = companyModel.entity(named: "Employee")!, department = companyModel.entity(named: "Department")!
        let project = companyModel.entity(named: "Project")!
        for snapshot in snapshots
        where companyModel.isKind(companyModel.descriptions[snapshot.ref.entity], of: employee) {
            #expect(snapshot[attribute: "isRemote", in: companyModel.descriptions[snapshot.ref.entity]] == .bool(false))
        }
        for snapshot in snapshots where snapshot.ref.entity == department.index {
            let location = snapshot[attribute: "location", in: department]
            #expect(location == .string("Berlin") || location == .string("Lisbon"))
            let staff = snapshot[relationship: "employees", in: department]!.refs.count
            #expect((5...6).contains(staff), "\(staff)")
        }
        for snapshot in snapshots where snapshot.ref.entity == project.index {
            #expect(
                snapshot[attribute: "deadline", in: project] == .date(Date(timeIntervalSinceReferenceDate: 772_934_400))
            )
        }
    }

    @Test func specMistakesAreNamed() throws {
        func message(_ json: String) -> String {
            do {
                _ = try FixtureGenerator(
                    model: companyModel, spec: try FixtureSpec(json: Data(json.utf8), file: "f.json"))
                return ""
            } catch let error as GraftError {
                return error.description
            } catch {
                return "\(error)"
            }
        }
        #expect(message("[1]").contains("is not a JSON object"))
        #expect(message(#"{"count": {}}"#).contains("'count' that a spec does not have"))
        #expect(message(#"{"counts": {"Department": -1}}"#).contains("counts.Department"))
        #expect(message(#"{"counts": {"Nobody": 1}}"#).contains("no entity 'Nobody'"))
        #expect(message(#"{"set": {"Employee.wage": 1}}"#).contains("Employee has no attribute 'wage'"))
        #expect(message(#"{"set": {"Department.code": 1000}}"#).contains("above the maximum 999"))
        #expect(message(#"{"set": {"Employee.name": null}}"#).contains("cannot be left empty"))
        #expect(message(#"{"fanOut": {"Department.employees": "1...2"}}"#).contains("outside what the model allows"))
        #expect(message(#"{"fanOut": {"Department.name": 3}}"#).contains("no to-many relationship 'name'"))
        #expect(message(#"{"choices": {"Department.name": ["A", "B"]}}"#).contains("choices cannot go round"))
    }

    @Test func aPatternBeyondTheGeneratorIsNamed() throws {
        let model = try Model(entities: [
            Entity(
                name: "Tag",
                attributes: [Attribute(name: "label", type: .string, isOptional: false, regularExpression: "(?=a)a+")])
        ])
        let error = #expect(throws: GraftError.self) { try FixtureGenerator(model: model) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.description.contains("lookahead") == true, "\(error?.description ?? "")")
    }

    /// Subentities share their parent's uniqueness constraint: their numbers interleave, so no two
    /// objects of the tree have the same employee ID whatever the counts.
    @Test func uniqueValuesStayUniqueAcrossSubentities() throws {
        let generator = try FixtureGenerator(
            model: companyModel, spec: FixtureSpec(counts: ["Employee": 50, "Manager": 3, "Flunky": 7]))
        var seen = Set<Value>()
        for snapshot in try generator.snapshots() {
            let entity = companyModel.descriptions[snapshot.ref.entity]
            guard let id = snapshot[attribute: "employeeID", in: entity], entity.attribute(named: "employeeID") != nil
            else { continue }
            #expect(seen.insert(id).inserted, "\(id)")
        }
        #expect(seen.count == 60)
    }
}

/// A model that asks for every kind of relationship rule at once: the generated graph breaks none.
@Suite struct FixtureRulesTests {
    static func relationship(
        _ name: String, to destination: String, inverse: String?, toMany: Bool, optional: Bool = true,
        min: Int = 0, max: Int? = nil, ordered: Bool = false
    ) -> Relationship {
        Relationship(
            name: name, destination: destination, inverse: inverse, isToMany: toMany, isOrdered: ordered,
            minCount: min, maxCount: max ?? (toMany ? 0 : 1), isOptional: optional)
    }

    static let model = try! Model(entities: [
        // Compound uniqueness, a pattern, lengths, an abstract parent with two kinds.
        Entity(
            name: "Member", isAbstract: true,
            attributes: [
                Attribute(
                    name: "givenName", type: .string, isOptional: false, minValue: .integer(2), maxValue: .integer(12)),
                Attribute(name: "familyName", type: .string, isOptional: false),
                Attribute(name: "code", type: .string, isOptional: false, regularExpression: "[A-Z]{2}-[0-9]{3}"),
                Attribute(
                    name: "score", type: .integer16, isOptional: false, minValue: .integer(-5), maxValue: .integer(5)),
            ],
            relationships: [
                // Symmetric to-many, at least 2; symmetric to-one.
                relationship("friends", to: "Member", inverse: "friends", toMany: true, min: 2),
                relationship("partner", to: "Member", inverse: "partner", toMany: false),
                // Many-to-many with minimums on both sides.
                relationship("clubs", to: "Club", inverse: "members", toMany: true, min: 1, max: 3),
            ],
            uniquenessConstraints: [["givenName", "familyName"]]),
        Entity(name: "Player", parent: "Member"),
        Entity(name: "Coach", parent: "Member"),
        Entity(
            name: "Club",
            attributes: [Attribute(name: "title", type: .string, isOptional: false)],
            relationships: [
                relationship("members", to: "Member", inverse: "clubs", toMany: true, min: 4, ordered: true),
                // One-to-one, required on both sides.
                relationship("ground", to: "Ground", inverse: "club", toMany: false, optional: false),
                // To-many with a maximum, whose inverse to-one is required.
                relationship("teams", to: "Team", inverse: "club", toMany: true, max: 2),
            ],
            uniquenessConstraints: [["title"]]),
        Entity(
            name: "Ground", attributes: [Attribute(name: "city", type: .string)],
            relationships: [relationship("club", to: "Club", inverse: "ground", toMany: false, optional: false)]),
        Entity(
            name: "Team", attributes: [Attribute(name: "name", type: .string, isOptional: false)],
            relationships: [relationship("club", to: "Club", inverse: "teams", toMany: false, optional: false)]),
    ])

    @Test(arguments: [
        FixtureSpec(), FixtureSpec(counts: ["Club": 3, "Team": 6]), FixtureSpec(counts: ["Member": 41]),
        FixtureSpec(counts: ["Club": 7], fanOut: ["Club.members": 5...9]),
    ])
    func everyRuleHolds(spec: FixtureSpec) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let generator = try FixtureGenerator(model: Self.model, seed: 13, spec: spec)
        #expect(generator.counts["Member"] == nil)  // abstract: none of its own
        let url = folder.appendingPathComponent("rules.sqlite")
        let written = try generator.write(to: url)
        let members = generator.counts["Player"]! + generator.counts["Coach"]!
        #expect(members >= 4)
        #expect(generator.counts["Ground"] == generator.counts["Club"])
        #expect(written.objects == generator.objectCount && written.objects > 0)
        #expect(try violations(ofStoreAt: url).isEmpty, "\(spec)")
        // Every member has at least two friends, each of whom counts them as a friend.
        let table = try #require(
            try rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z_%FRIENDS'", in: url).first?
                .first ?? nil)
        let friendships = try rows("SELECT count(*) FROM \(table)", in: url)
        #expect(Int(friendships.first?.first.flatMap { $0 } ?? "0")! >= members)
        let xml = folder.appendingPathComponent("rules.xml")
        #expect(try Conversion.convert(from: url, to: xml, options: .init(verify: true)).differences.isEmpty)
    }

    /// Uniqueness the values cannot give is refused before anything is made: a constraint on a Boolean
    /// alone, unique codes of at most two characters for more objects than that allows.
    @Test func uniquenessTheValuesCannotGiveIsRefused() throws {
        let flags = try Model(entities: [
            Entity(
                name: "Flag", attributes: [Attribute(name: "on", type: .boolean, isOptional: false)],
                uniquenessConstraints: [["on"]])
        ])
        #expect(try FixtureGenerator(model: flags, spec: FixtureSpec(counts: ["Flag": 2])).objectCount == 2)
        let error = #expect(throws: GraftError.self) {
            try FixtureGenerator(model: flags, spec: FixtureSpec(counts: ["Flag": 3]))
        }
        #expect(error?.message.contains("Boolean") == true, "\(error?.message ?? "")")
        let codes = try Model(entities: [
            Entity(
                name: "Code",
                attributes: [Attribute(name: "text", type: .string, isOptional: false, maxValue: .integer(2))],
                uniquenessConstraints: [["text"]])
        ])
        #expect(try FixtureGenerator(model: codes, spec: FixtureSpec(counts: ["Code": 99])).objectCount == 99)
        #expect(throws: GraftError.self) {
            try FixtureGenerator(model: codes, spec: FixtureSpec(counts: ["Code": 100]))
        }
    }

    /// Counts the one-to-one cannot take (a club per ground, both required) are refused.
    @Test func aRequiredOneToOneNeedsAsManyOnBothSides() throws {
        let error = #expect(throws: GraftError.self) {
            try FixtureGenerator(model: Self.model, spec: FixtureSpec(counts: ["Club": 3, "Ground": 5]))
        }
        #expect(error?.message.contains("Ground.club") == true || error?.message.contains("Club.ground") == true)
    }
}

/// Every model of the corpus and of the examples: the default fixture breaks none of its rules.
@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
struct CorpusFixtureTests {
    static let models: [String] = Corpus.paths { url in
        let name = url.lastPathComponent, parent = url.deletingLastPathComponent().pathExtension
        return (name.hasSuffix(".xcdatamodeld") || name.hasSuffix(".momd"))
            || ((name.hasSuffix(".xcdatamodel") || name.hasSuffix(".mom")) && parent != "xcdatamodeld"
                && parent != "momd")
    }

    @Test(arguments: models)
    func theDefaultFixtureOfEveryModelBreaksNoRule(path: String) throws {
        let file: ModelFile
        do {
            file = try ModelFile.load(Corpus.url(path))
        } catch let error as GraftError {
            // Folders named like models that hold none (no version inside) are not models to generate from.
            #expect(error.message.contains("holds no"), "\(path): \(error)")
            return
        }
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("fixture.sqlite")
        try FixtureGenerator(model: file.current).write(to: url)
        #expect(try violations(ofStoreAt: url).isEmpty, "\(path)")
        // Through all three formats, each step verified object by object.
        var from = url
        for name in ["fixture.xml", "fixture.binary", "again.sqlite"] {
            let to = folder.appendingPathComponent(name)
            let report = try Conversion.convert(from: from, to: to, options: .init(verify: true))
            #expect(report.differences.isEmpty, "\(path) → \(name)")
            from = to
        }
    }

    @Test func theExampleModelsToo() throws {
        for path in ["examples/Company/Company.xcdatamodeld", "examples/Offices/Company.xcdatamodeld"] {
            let model = try ModelFile.load(Project.url(path)).current
            let folder = try scratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let url = folder.appendingPathComponent("fixture.sqlite")
            try FixtureGenerator(model: model).write(to: url)
            #expect(try violations(ofStoreAt: url).isEmpty, "\(path)")
        }
    }
}
