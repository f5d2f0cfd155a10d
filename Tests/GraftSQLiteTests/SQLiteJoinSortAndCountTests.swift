import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// Sorts through to-ones (`department.name`) in SQL with left joins, and counts with `COUNT(*)`.
@Suite struct SQLiteJoinSortAndCountTests {
    /// Departments (Division a subentity) and employees (Manager a subentity), in one store.
    static let model: Model = {
        let department = Entity(
            name: "Department",
            attributes: [Attribute(name: "name", type: .string), Attribute(name: "budget", type: .integer64)],
            relationships: [
                Relationship(name: "employees", destination: "Employee", inverse: "department", isToMany: true),
                Relationship(name: "head", destination: "Employee", inverse: "headOf"),
            ])
        let division = Entity(
            name: "Division", parent: "Department", attributes: [Attribute(name: "region", type: .string)])
        let employee = Entity(
            name: "Employee",
            attributes: [Attribute(name: "name", type: .string), Attribute(name: "salary", type: .integer64)],
            relationships: [
                Relationship(name: "department", destination: "Department", inverse: "employees"),
                Relationship(name: "headOf", destination: "Department", inverse: "head"),
            ])
        let manager = Entity(
            name: "Manager", parent: "Employee", attributes: [Attribute(name: "bonus", type: .integer64)])
        return try! Model(entities: [department, division, employee, manager])
    }()

    /// A store whose departments have names that case and diacritics order differently, one department
    /// without a name, and employees spread over them, some without a department.
    static func company(in folder: URL, employees: Int = 60) throws -> URL {
        let url = folder.appendingPathComponent("Company.sqlite")
        let store = try SQLiteStore.create(url, model: model)
        let context = ObjectContext(store: store)
        let names: [String?] = ["sales", "Sales", "Ésales", "eSales", nil, "Zeta", "alpha", "Álpha"]
        var departments: [ManagedObject] = []
        for (index, name) in names.enumerated() {
            let department = try context.insert(index % 3 == 0 ? "Division" : "Department")
            try department.setValue(name, forKey: "name")
            try department.setValue(Int64(index % 4), forKey: "budget")
            departments.append(department)
        }
        for index in 0..<employees {
            let employee = try context.insert(index % 4 == 0 ? "Manager" : "Employee")
            try employee.setValue("E\(index % 7)", forKey: "name")
            try employee.setValue(Int64((index * 37) % 11), forKey: "salary")
            if index % 5 != 0 {
                try employee.setValue(departments[(index * 3) % departments.count], forKey: "department")
            }
            if index < departments.count && index % 2 == 1 { try departments[index].setValue(employee, forKey: "head") }
        }
        try context.save()
        return url
    }

    static let sorts: [[String]] = [
        ["department.name"],
        ["department.name desc"],
        ["department.name ci"],
        ["department.name cd desc", "name"],
        ["department.budget", "salary desc"],
        ["department.head.name", "salary"],
        ["name", "department.name ci"],
    ]

    /// `key [ci|cd] [desc]`: `ci` compares case-insensitively, `cd` also diacritic-insensitively.
    static func descriptors(_ texts: [String]) throws -> [GraftSortDescriptor] {
        try texts.map { text in
            let words = text.split(separator: " ").map(String.init)
            var options: ComparisonOptions = []
            if words.contains("ci") || words.contains("cd") { options.insert(.caseInsensitive) }
            if words.contains("cd") { options.insert(.diacriticInsensitive) }
            return try GraftSortDescriptor(words[0], ascending: !words.contains("desc"), options: options)
        }
    }

    @Test(arguments: sorts, ["Employee", "Manager"])
    func aSortThroughAToOneRunsInSQLAndAgreesWithMemory(sort: [String], entityName: String) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore.open(try Self.company(in: folder), model: Self.model)
        let entity = try #require(store.model.entity(named: entityName))
        let descriptors = try Self.descriptors(sort)
        let entities = [entity.index] + entity.descendantIndices
        let answer = try store.fetch(StoreFetch(entities: entities, sortDescriptors: descriptors))
        #expect(answer.sortedAndLimited, "the sort ran in SQL")

        // The same order as sorting in memory (stable, from key order).
        let context = ObjectContext(store: store)
        let all = try context.fetch(FetchRequest(entityName: entityName)).sorted { $0.objectID < $1.objectID }
        let inMemory = try GraftSortDescriptor.sort(all, by: descriptors).map(\.objectID.ref)
        #expect(answer.refs == inMemory)
        #expect(answer.refs.count == all.count, "every row once, with or without a department")

        // And through the context, with a limit: the store returns only the rows asked for.
        let limited = try store.fetch(StoreFetch(entities: entities, sortDescriptors: descriptors, limit: 7))
        #expect(limited.sortedAndLimited)
        #expect(limited.snapshots.count == 7)
        #expect(limited.refs == Array(inMemory.prefix(7)))
        var request = FetchRequest(entityName: entityName, sortDescriptors: descriptors)
        request.fetchLimit = 7
        #expect(try ObjectContext(store: store).fetch(request).map(\.objectID.ref) == Array(inMemory.prefix(7)))
    }

    @Test func aSortThroughAToOneWithAPredicateKeepsTheFilter() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore.open(try Self.company(in: folder), model: Self.model)
        let employee = try #require(store.model.entity(named: "Employee"))
        let descriptors = try Self.descriptors(["department.name ci", "name"])
        let predicate = try GraftPredicate(format: "salary > 4 AND department.budget < 3")
        let answer = try store.fetch(
            StoreFetch(
                entities: [employee.index] + employee.descendantIndices, predicate: predicate,
                sortDescriptors: descriptors))
        #expect(answer.sortedAndLimited && answer.predicateApplied)
        let context = ObjectContext(store: store)
        let all = try context.fetch(FetchRequest(entityName: "Employee")).sorted { $0.objectID < $1.objectID }
        let matching = try all.filter { try predicate.evaluate(with: $0) }
        #expect(answer.refs == (try GraftSortDescriptor.sort(matching, by: descriptors)).map(\.objectID.ref))
    }

    @Test func aSortThroughAToManyStaysInMemory() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore.open(try Self.company(in: folder), model: Self.model)
        let department = try #require(store.model.entity(named: "Department"))
        let answer = try store.fetch(
            StoreFetch(entities: [department.index], sortDescriptors: try Self.descriptors(["employees.name"])))
        #expect(!answer.sortedAndLimited)
    }

    // MARK: Counting

    @Test(arguments: [
        "salary > 4", "department.name BEGINSWITH[c] 's'", "department == nil", "name IN {'E1', 'E2'}",
        "TRUEPREDICATE",
    ])
    func aTranslatedPredicateIsCountedInSQL(format: String) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore.open(try Self.company(in: folder), model: Self.model)
        let employee = try #require(store.model.entity(named: "Employee"))
        let predicate = try GraftPredicate(format: format)
        let context = ObjectContext(store: store)
        let fetched = try context.fetch(FetchRequest(entityName: "Employee", predicate: predicate)).count
        let stored = try store.count(
            StoreFetch(entities: [employee.index] + employee.descendantIndices, predicate: predicate), excluding: [])
        #expect(stored == fetched, "the store counts it in SQL")
        #expect(
            try ObjectContext(store: store).count(for: FetchRequest(entityName: "Employee", predicate: predicate))
                == fetched)
        // Managers only: the entity column narrows the count.
        let managers = try context.fetch(FetchRequest(entityName: "Manager", predicate: predicate)).count
        #expect(
            try ObjectContext(store: store).count(for: FetchRequest(entityName: "Manager", predicate: predicate))
                == managers)
    }

    @Test func countingReadsNoObjectAndSeesPendingChanges() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore.open(try Self.company(in: folder), model: Self.model)
        let context = ObjectContext(store: store)
        let request = FetchRequest(entityName: "Employee", predicate: try GraftPredicate(format: "salary > 4"))
        let before = try context.count(for: request)
        #expect(context.registeredObjects.isEmpty, "counted in SQL: no object was read")

        // Pending changes are judged from memory: one raised above, one lowered below, one new, one deleted.
        let low = try #require(
            try context.fetch(
                FetchRequest(entityName: "Employee", predicate: try GraftPredicate(format: "salary <= 4"))
            )
            .first)
        try low.setValue(Int64(10), forKey: "salary")
        let high = try context.fetch(request)
        try high[0].setValue(Int64(0), forKey: "salary")
        try context.delete(high[1])
        let newcomer = try context.insert("Manager")
        try newcomer.setValue(Int64(9), forKey: "salary")
        let expected = before + 1 - 1 - 1 + 1
        #expect(try context.count(for: request) == expected)
        #expect(try context.fetch(request).count == expected)

        var limited = request
        limited.fetchOffset = 2
        limited.fetchLimit = 3
        #expect(try context.count(for: limited) == min(3, expected - 2))
    }

    @Test func aPredicateSQLCannotDecideIsCountedByFetching() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore.open(try Self.company(in: folder), model: Self.model)
        let employee = try #require(store.model.entity(named: "Employee"))
        let predicate = try GraftPredicate(format: "uppercase:(name) == 'E3'")
        #expect(try store.count(StoreFetch(entities: [employee.index], predicate: predicate), excluding: []) == nil)
        let context = ObjectContext(store: store)
        #expect(
            try context.count(for: FetchRequest(entityName: "Employee", predicate: predicate))
                == (try context.fetch(FetchRequest(entityName: "Employee", predicate: predicate)).count))
    }
}
