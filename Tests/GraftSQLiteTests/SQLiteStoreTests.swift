import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// The example Company model, version 1.
let companyModel: Model = try! ModelFile.load(Project.url("examples/Company/Company.xcdatamodeld")).version(
    named: "Company")!

@Suite final class SQLiteStoreTests {
    let folder: URL
    let url: URL

    init() throws {
        folder = try scratchFolder()
        url = folder.appendingPathComponent("Company.sqlite")
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// Sales and Support with employees, a manager, projects (ordered) with members (many-to-many).
    func populate(_ context: ObjectContext, departments: Int = 2, employeesEach: Int = 3) throws {
        var nextID: Int64 = 1
        for d in 0..<departments {
            let department = try context.insert("Department")
            try department.setValue(d == 0 ? "Sales" : "Dept \(d)", forKey: "name")
            try department.setValue(Int64(d + 1), forKey: "code")
            var staff: [ManagedObject] = []
            for e in 0..<employeesEach {
                let employee = try context.insert(e == 0 ? "Manager" : "Employee")
                try employee.setValue("E\(d)-\(e)", forKey: "name")
                try employee.setValue(nextID, forKey: "employeeID")
                nextID += 1
                try employee.setValue(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(e)), forKey: "hireDate")
                try employee.setValue(Decimal(40_000 + 1_000 * e), forKey: "salary")
                try employee.setValue(department, forKey: "department")
                if e > 0 { try employee.setValue(staff[0], forKey: "manager") }
                staff.append(employee)
            }
            for p in 0..<2 {
                let project = try context.insert("Project")
                try project.setValue("P\(d)-\(p)", forKey: "title")
                try project.setValue(department, forKey: "department")
                try project.setValue(Array(staff.prefix(p + 1)), forKey: "members")
            }
        }
    }

    @Test func savesAndReadsBackThroughANewContext() throws {
        let store = try SQLiteStore.create(url, model: companyModel)
        let context = ObjectContext(store: store)
        try populate(context)
        try context.save()

        let reopened = try SQLiteStore.open(url, model: nil)  // the model cache
        let reader = ObjectContext(store: reopened)
        let sales = try #require(
            try reader.fetch(
                FetchRequest(entityName: "Department", predicate: try GraftPredicate(format: "name == 'Sales'"))
            ).first)
        #expect(sales.related("employees").count == 3)
        #expect(sales.related("projects").map { $0.string("title") } == ["P0-0", "P0-1"])
        let project = sales.related("projects")[1]
        #expect(Set(project.related("members").compactMap { $0.string("name") }) == ["E0-0", "E0-1"])
        let manager = try #require(sales.related("employees").first { $0.entity.name == "Manager" })
        #expect(manager.related("directReports").count == 2)
        #expect(try reader.count(for: FetchRequest(entityName: "Employee")) == 6)
        #expect(try reader.count(for: FetchRequest(entityName: "Manager")) == 2)
    }

    @Test func editsDeletesAndReorderingsAreSavedIncrementally() throws {
        let context = ObjectContext(store: try SQLiteStore.create(url, model: companyModel))
        try populate(context)
        try context.save()

        let store = try SQLiteStore.open(url, model: companyModel)
        let editor = ObjectContext(store: store)
        let sales = try #require(
            try editor.fetch(FetchRequest(entityName: "Department", predicate: try GraftPredicate(format: "code == 1")))
                .first)
        try sales.setValue("Global Sales", forKey: "name")
        let projects = sales.related("projects")
        try sales.setValue(projects.reversed(), forKey: "projects")
        let leaving = try #require(sales.related("employees").first { $0.string("name") == "E0-2" })
        try editor.delete(leaving)
        let joining = try editor.insert("Employee")
        try joining.setValue("New", forKey: "name")
        try joining.setValue(Int64(99), forKey: "employeeID")
        try joining.setValue(Date(), forKey: "hireDate")
        try joining.setValue(sales, forKey: "department")
        try projects[0].relatedObjects(forKey: "members").insert(joining)
        try editor.save()

        let check = try SQLiteDatabase.openForReading(url)
        let opt = try check.prepare("SELECT Z_OPT, ZNAME FROM ZDEPARTMENT WHERE ZCODE = 1")
        #expect(try opt.step())
        #expect(opt.int64(0) == 2)  // inserted, then changed once
        #expect(opt.text(1) == "Global Sales")

        let reader = ObjectContext(store: try SQLiteStore.open(url, model: nil))
        let again = try #require(
            try reader.fetch(FetchRequest(entityName: "Department", predicate: try GraftPredicate(format: "code == 1")))
                .first)
        #expect(again.string("name") == "Global Sales")
        #expect(again.related("projects").map { $0.string("title") } == ["P0-1", "P0-0"])
        #expect(Set(again.related("employees").compactMap { $0.string("name") }) == ["E0-0", "E0-1", "New"])
        let first = try #require(again.related("projects").last)
        #expect(Set(first.related("members").compactMap { $0.string("name") }) == ["E0-0", "New"])
        // New keys continue after the highest key, also in Z_PRIMARYKEY.
        #expect(joining.objectID.key == 7)
        let zmax = try check.prepare("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Employee'")
        #expect(try zmax.step())
        #expect(zmax.int64(0) == 7)
    }

    /// An update that gives the object as it was read writes only the columns whose values differ from
    /// it (with one more change in `Z_OPT`); one that does not writes every column.
    @Test func anUpdateWritesOnlyTheColumnsThatDifferFromTheObjectAsRead() throws {
        let context = ObjectContext(store: try SQLiteStore.create(url, model: companyModel))
        try populate(context)
        try context.save()
        let store = try SQLiteStore.open(url, model: companyModel)
        let department = try #require(companyModel.entity(named: "Department"))
        let ref = try #require(try store.fetch(StoreFetch(entities: [department.index])).refs.first)
        let read = try #require(try store.snapshot(for: ref))
        // A column changed behind the reader's back, which the update leaves as it is.
        try store.database.execute("UPDATE ZDEPARTMENT SET ZCODE = 41")
        var renamed = read
        renamed[attribute: "name", in: department] = .string("Renamed")

        try store.save(StoreChanges(updated: [renamed], updatedFrom: [read]))
        var row = try #require(try store.snapshot(for: ref))
        #expect(row[attribute: "name", in: department] == .string("Renamed"))
        #expect(row[attribute: "code", in: department] == .integer(41))
        #expect(row.version == read.version.map { $0 + 1 })

        try store.save(StoreChanges(updated: [renamed]))
        row = try #require(try store.snapshot(for: ref))
        #expect(row[attribute: "code", in: department] == .integer(1))
        #expect(row.version == read.version.map { $0 + 2 })
    }

    @Test func aFailedSaveLeavesTheStoreAsItWas() throws {
        let context = ObjectContext(store: try SQLiteStore.create(url, model: companyModel))
        try populate(context)
        try context.save()
        let before = try Data(contentsOf: url)

        let editor = ObjectContext(store: try SQLiteStore.open(url, model: nil))
        let sales = try #require(
            try editor.fetch(FetchRequest(entityName: "Department", predicate: try GraftPredicate(format: "code == 1")))
                .first)
        try sales.setValue("Renamed", forKey: "name")
        // A second department named "Dept 1" breaks the store's unique index on name.
        let clash = try editor.insert("Department")
        try clash.setValue("Dept 1", forKey: "name")
        #expect(throws: GraftError.self) { try editor.save() }
        #expect(editor.hasChanges)

        let reader = ObjectContext(store: try SQLiteStore.open(url, model: nil))
        #expect(try reader.count(for: FetchRequest(entityName: "Department")) == 2)
        #expect(
            try reader.count(
                for: FetchRequest(entityName: "Department", predicate: try GraftPredicate(format: "name == 'Renamed'")))
                == 0)
        _ = before
    }

    @Test func fetchesRunInSQLAndReadOnlyTheRowsAskedFor() throws {
        let context = ObjectContext(store: try SQLiteStore.create(url, model: companyModel))
        context.isUndoEnabled = false
        try populate(context, departments: 40, employeesEach: 25)
        try context.save()

        let store = try SQLiteStore.open(url, model: nil)
        let employee = try #require(store.model.entity(named: "Employee"))
        let limited = try store.fetch(
            StoreFetch(
                entities: [employee.index] + employee.descendantIndices,
                predicate: try GraftPredicate(format: "salary >= 50000"), limit: 100))
        #expect(limited.predicateApplied)
        #expect(limited.sortedAndLimited)
        #expect(limited.snapshots.count == 100)  // 100 rows read, not 1,000

        let reader = ObjectContext(store: store)
        var request = FetchRequest(
            entityName: "Employee",
            predicate: try GraftPredicate(format: "department.name == 'Sales' AND salary > 45000"))
        request.sortDescriptors = [try GraftSortDescriptor("salary", ascending: false)]
        let rich = try reader.fetch(request)
        let salaries: [Decimal] = rich.compactMap { $0.value(forKey: "salary") as? Decimal }
        let expected: [Decimal] = (6..<25).reversed().map { Decimal(40_000 + 1_000 * $0) }
        #expect(salaries == expected)

        // The same answers whether the predicate runs in SQL or in memory.
        for format in [
            "name BEGINSWITH 'E1-'", "name ENDSWITH '-3'", "name CONTAINS '7-1'", "salary BETWEEN {41000, 43000}",
            "employeeID IN {1, 2, 3, 999}", "manager == nil", "manager != nil", "NOT (salary < 50000)",
            "department.code == 3 OR employeeID < 5", "name ==[c] 'e0-0'", "name LIKE 'E1?-1'", "salary != 40000",
        ] {
            let predicate = try GraftPredicate(format: format)
            let inSQL = try reader.fetch(FetchRequest(entityName: "Employee", predicate: predicate)).map(\.objectID)
            let inMemory = try ObjectContext(
                store: InMemoryStore(
                    model: store.model, snapshots: Array(allSnapshots(SQLiteStoreReader(url: url, model: nil)).values))
            )
            .fetch(FetchRequest(entityName: "Employee", predicate: predicate)).map(\.objectID)
            #expect(Set(inSQL) == Set(inMemory), "\(format)")
        }
        let managers = try reader.fetch(
            FetchRequest(entityName: "Manager", predicate: try GraftPredicate(format: "directReports.@count == 24")))
        #expect(managers.count == 40)
    }
}

extension ManagedObject {
    func related(_ key: String) -> [ManagedObject] { (try? relatedObjects(forKey: key).allObjects()) ?? [] }
    func string(_ key: String) -> String? { value(forKey: key) as? String }
}
