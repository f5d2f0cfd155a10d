import Foundation
import GraftCore
import GraftFixtures
import GraftGraph
import GraftInterchange
import GraftModel
import GraftTestSupport
import Testing

@Suite struct FixtureSubsetTests {
    let source = Project.url("examples/Company/Company.sqlite")

    /// Two employees bring their department (required), which brings all its staff (at least 3), whose
    /// departments are the same: the subset validates, and the example store is unchanged.
    @Test func aSubsetTakesWhatTheModelNeedsAndValidates() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Data(contentsOf: source)
        let subset = FixtureSubset(storeAt: source, entity: "Employee", limit: 2)
        let (plan, model) = try subset.plan()
        let taken = Dictionary(grouping: plan.objects) { model.descriptions[$0.entity].name }.mapValues(\.count)
        #expect(taken["Department"] == 1)
        let output = folder.appendingPathComponent("Subset.sqlite")
        let (written, inherited) = try subset.write(to: output)
        #expect(inherited.isEmpty)
        #expect(written.objects == plan.objects.count)
        #expect(try violations(ofStoreAt: output).isEmpty)
        // Every department of the subset has its minimum of staff.
        let staff = try rows("SELECT count(*) FROM ZEMPLOYEE GROUP BY ZDEPARTMENT", in: output)
        #expect(staff.allSatisfy { Int($0[0]!)! >= 3 })
        #expect(try Data(contentsOf: source) == before)
    }

    @Test func aClipboardSubsetKeepsReferencesAndPastesBack() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let subset = FixtureSubset(storeAt: source, entity: "Project", predicate: "title != nil", limit: 1)
        let output = folder.appendingPathComponent("Subset.json")
        try subset.write(to: output)
        let clipboard = try ClipboardEncoding.decode(try Data(contentsOf: output))
        #expect(clipboard.objects.map(\.entity) == ["Project"])
        #expect(!clipboard.references.isEmpty)
    }

    @Test func mistakesAreNamed() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("Subset.sqlite")
        #expect(throws: GraftError.self) { try FixtureSubset(storeAt: source, entity: "Nobody").write(to: output) }
        let error = #expect(throws: GraftError.self) {
            try FixtureSubset(storeAt: source, entity: "Employee", predicate: "name ==").write(to: output)
        }
        #expect(error?.context.contains(.other("--where")) == true)
        #expect(throws: GraftError.self) { try FixtureSubset(storeAt: source, entity: "Employee").write(to: source) }
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
}

/// Values replaced for anonymity: of the same kind, the same for the same value and seed, different for
/// different values, the other attributes untouched.
@Suite struct FixtureAnonymizationTests {
    let source = Project.url("examples/Company/Company.sqlite")

    /// The values of `name` in objects of these entities (people by default).
    func attributes(
        _ clipboard: Clipboard, _ name: String, of entities: Set<String> = ["Employee", "Manager", "Flunky"]
    )
        -> [Value]
    {
        clipboard.objects.filter { entities.contains($0.entity) }.compactMap { object in
            object.attributes.first { $0.name == name }?.value
        }
    }

    @Test func automaticReplacesPersonalValuesAlikeForAlikeAndKeepsTheRest() throws {
        let original = try FixtureSubset(storeAt: source, entity: "Employee").clipboard()
        let subset = FixtureSubset(storeAt: source, entity: "Employee", anonymizing: .automatic, seed: 4)
        let anonymized = try subset.clipboard()
        #expect(try subset.clipboard() == anonymized)
        let model = try StoreFormat.openForReading(source, model: nil).model
        #expect(
            try FixtureAnonymization(model: model, seed: 4, attributes: .automatic).attributes == [
                "Employee.email", "Employee.name",
            ])
        let names = attributes(original, "name"), newNames = attributes(anonymized, "name")
        #expect(names.count == newNames.count)
        #expect(Set(names).isDisjoint(with: Set(newNames)))
        // Distinct in, distinct out (a name shared by two objects would stay shared).
        #expect(Set(names).count == Set(newNames).count)
        #expect(attributes(original, "employeeID") == attributes(anonymized, "employeeID"))
        for case .string(let email) in attributes(anonymized, "email") { #expect(email.contains("@example.")) }
        // Department names are not personal: kept.
        #expect(
            original.objects.filter { $0.entity == "Department" }.map(\.attributes)
                == anonymized.objects.filter { $0.entity == "Department" }.map(\.attributes))
        let other = try FixtureSubset(storeAt: source, entity: "Employee", anonymizing: .automatic, seed: 5).clipboard()
        #expect(attributes(other, "name") != newNames)
    }

    @Test func namedAttributesAndWhatTheyRefuse() throws {
        let model = try StoreFormat.openForReading(source, model: nil).model
        let chosen = try FixtureAnonymization(model: model, seed: 1, attributes: .named(["Department.name"]))
        #expect(chosen.attributes == ["Department.name"])
        var clipboard = try FixtureSubset(storeAt: source, entity: "Department").clipboard()
        let before = attributes(clipboard, "name", of: ["Department"])
        try chosen.apply(to: &clipboard)
        #expect(Set(before).isDisjoint(with: Set(attributes(clipboard, "name", of: ["Department"]))))
        #expect(throws: GraftError.self) {
            try FixtureAnonymization(model: model, seed: 1, attributes: .named(["Employee.wage"]))
        }
        // A unique attribute stays unique, so the subset validates.
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("Anonymous.sqlite")
        try FixtureSubset(
            storeAt: source, entity: "Employee", anonymizing: .named(["Department.name", "Employee.name"])
        )
        .write(to: output)
        #expect(try violations(ofStoreAt: output).isEmpty)
    }
}

/// Every SQLite store of the corpus: a subset of its first entity with objects opens on its own and breaks
/// no rule its source did not already break (the paste refuses a new one; those kept are reported).
@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
struct CorpusSubsetTests {
    @Test(arguments: Corpus.sqliteStores)
    func aSubsetOfEveryStoreValidatesOnItsOwn(path: String) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try copyOfStore(Corpus.url(path), in: folder)
        let counts = try StoreFormat.detect(store).driver.reader(at: store, model: nil, options: StoreReadOptions())
            .counts()
        guard let entity = counts.filter({ $0.value > 0 }).keys.sorted().first else { return }
        let output = folder.appendingPathComponent("subset.sqlite")
        let (written, inherited) = try FixtureSubset(storeAt: store, entity: entity, limit: 5).write(to: output)
        #expect(written.objects > 0, "\(path)")
        #expect(try violations(ofStoreAt: output).count == inherited.count, "\(path)")
    }
}
