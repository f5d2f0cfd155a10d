import Foundation
import GraftCore
import GraftModel
import Testing

@testable import GraftGraph

@Suite struct FetchTests {
    /// Sales (3 employees, one of them a manager of the others) and Support (4), saved; then edits.
    private func company() throws -> (ObjectContext, InMemoryStore) {
        let store = InMemoryStore(model: TestModels.company)
        let context = ObjectContext(store: store)
        let sales = try makeDepartment(context, name: "Sales", employees: 3)
        try makeDepartment(context, name: "Support", employees: 4, firstID: 10)
        let boss = try context.insert("Manager")
        try boss.setValue("Boss", forKey: "name")
        try boss.setValue(Int64(100), forKey: "employeeID")
        try boss.setValue(Date(timeIntervalSinceReferenceDate: 760_000_000), forKey: "hireDate")
        try boss.setValue(sales, forKey: "department")
        try boss.setValue(200_000, forKey: "salary")
        for employee in sales.related("employees") where employee !== boss {
            try employee.setValue(boss, forKey: "manager")
        }
        try context.save()
        return (context, store)
    }

    @Test func predicatesSortsAndLimits() throws {
        let (context, _) = try company()
        var request = FetchRequest(entityName: "Employee")
        request.predicate = try GraftPredicate(format: "department.name == %@", "Sales")
        request.sortDescriptors = [try GraftSortDescriptor("name", ascending: false)]
        let sales = try context.fetch(request)
        #expect(sales.map { $0.string("name") } == ["Sales 2", "Sales 1", "Sales 0", "Boss"])
        request.fetchLimit = 2
        request.fetchOffset = 1
        #expect(try context.fetch(request).map { $0.string("name") } == ["Sales 1", "Sales 0"])
    }

    /// A fresh context on the saved store: nothing registered yet.
    @Test func fetchedObjectsKeepTheirRowsAndBatchesFillTogether() throws {
        let (_, store) = try company()
        let reader = ObjectContext(store: store)
        let all = try reader.fetch(
            FetchRequest(entityName: "Employee", sortDescriptors: [try GraftSortDescriptor("name")]))
        #expect(all.count == 8)
        #expect(all.allSatisfy { !$0.isFault })

        let batched = ObjectContext(store: store)
        var request = FetchRequest(entityName: "Employee", sortDescriptors: [try GraftSortDescriptor("employeeID")])
        request.fetchBatchSize = 3
        let objects = try batched.fetch(request)
        #expect(objects.count == 8)
        // The in-memory store reads every row to apply the sort, so those objects are filled already;
        // with faults asked for and nothing to evaluate, objects stay faults until used.
        let faulting = ObjectContext(store: store)
        var faults = FetchRequest(entityName: "Employee")
        faults.fetchBatchSize = 3
        faults.returnsObjectsAsFaults = true
        let lazy = try faulting.fetch(faults)
        #expect(lazy.count == 8)
        #expect(lazy.map { $0.value(forKey: "employeeID") as? Int64 }.compactMap { $0 }.count == 8)
    }

    @Test func comparisonsThatCanNeverBeDecidedFailBeforeAnyObjectIsRead() throws {
        let context = ObjectContext(store: InMemoryStore(model: TestModels.company))
        for (format, message) in [
            ("name > 5", "> needs two values of one kind, but name is a String (a String attribute of Employee)"),
            ("hireDate < 'x'", "hireDate is a Date"),
            ("department.name BEGINSWITH 1", "BEGINSWITH needs strings, but department.name is a String"),
            ("ANY projects.deadline BETWEEN {1, 2}", "projects.deadline is a Date"),
            ("5 < salary AND name LIKE 3", "LIKE needs strings"),
        ] {
            var request = FetchRequest(entityName: "Employee")
            request.predicate = try GraftPredicate(format: format)
            let error = #expect(throws: GraftError.self, "\(format)") { try context.fetch(request) }
            #expect(error?.message.contains(message) == true, "\(String(describing: error))")
            #expect(error?.context.first == .entity("Employee"))
        }
        var fine = FetchRequest(entityName: "Employee")
        fine.predicate = try GraftPredicate(format: "name == 5 OR salary > 5 OR name BEGINSWITH nil")
        #expect(try context.fetch(fine).isEmpty)
    }

    @Test func subentitiesAreIncludedUnlessAskedNot() throws {
        let (context, _) = try company()
        #expect(try context.count(for: FetchRequest(entityName: "Employee")) == 8)
        #expect(try context.count(for: FetchRequest(entityName: "Manager")) == 1)
        var request = FetchRequest(entityName: "Employee")
        request.includesSubentities = false
        #expect(try context.count(for: request) == 7)
    }

    @Test func pendingChangesAreSeen() throws {
        let (context, _) = try company()
        let request = FetchRequest(
            entityName: "Department", predicate: try GraftPredicate(format: "name BEGINSWITH 'S'"))
        #expect(try context.count(for: request) == 2)
        let support = try #require(try context.fetch(request).first { $0.string("name") == "Support" })
        try support.setValue("Helpdesk", forKey: "name")
        let newOne = try context.insert("Department")
        try newOne.setValue("Shipping", forKey: "name")
        #expect(Set(try context.fetch(request).compactMap { $0.string("name") }) == ["Sales", "Shipping"])
        try context.delete(newOne)
        #expect(try context.fetch(request).compactMap { $0.string("name") } == ["Sales"])
    }

    @Test func keyPathsWithCollectionOperatorsOnManagedObjects() throws {
        let (context, _) = try company()
        let sales = try #require(
            try context.fetch(
                FetchRequest(entityName: "Department", predicate: try GraftPredicate(format: "name == 'Sales'"))
            ).first)
        #expect(try sales.value(forKeyPath: "employees.@count") as? Int64 == 4)
        #expect(try sales.value(forKeyPath: "employees.@max.salary") as? Decimal == 200_000)
        let worker = try #require(sales.related("employees").first { $0.entity.name == "Employee" })
        #expect(try worker.value(forKeyPath: "manager.department.name") as? String == "Sales")
        #expect(try worker.value(forKeyPath: "manager.directReports.@count") as? Int64 == 3)
        let rich = FetchRequest(
            entityName: "Department", predicate: try GraftPredicate(format: "ANY employees.salary > 100000"))
        #expect(try context.fetch(rich).map { $0.string("name") } == ["Sales"])
        let big = FetchRequest(entityName: "Department", predicate: try GraftPredicate(format: "employees.@count >= 4"))
        #expect(try context.count(for: big) == 2)
    }

    @Test func fetchedPropertiesBindFetchSource() throws {
        let (context, _) = try company()
        let sales = try #require(
            try context.fetch(
                FetchRequest(entityName: "Department", predicate: try GraftPredicate(format: "name == 'Sales'"))
            ).first)
        // recentHires: department == $FETCH_SOURCE AND hireDate >= 2025-01-01; only Boss was hired then.
        let recent = try #require(sales.value(forKey: "recentHires") as? [ManagedObject])
        #expect(recent.map { $0.string("name") } == ["Boss"])
    }

    @Test func aBadKeyPathIsAnErrorNotACrash() throws {
        let (context, _) = try company()
        let request = FetchRequest(
            entityName: "Employee", predicate: try GraftPredicate(format: "employees.name == 'x'"))
        #expect(throws: GraftError.self) { try context.fetch(request) }
    }
}
