import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel
import Testing

/// The lost-update scenario on every store format, each context through its own store opened on the
/// same document (two connections to a SQLite store; two in-memory copies of an XML or binary document):
/// the second save finds the first one by the row's `Z_OPT` or the document's version.
@Suite struct ManyWritersTests {
    static let model: Model = {
        let department = Entity(
            name: "Department", attributes: [Attribute(name: "name", type: .string)],
            relationships: [
                Relationship(name: "employees", destination: "Employee", inverse: "department", isToMany: true)
            ])
        let employee = Entity(
            name: "Employee", attributes: [Attribute(name: "name", type: .string)],
            relationships: [Relationship(name: "department", destination: "Department", inverse: "employees")])
        return try! Model(entities: [department, employee])
    }()

    /// A document with Sales (Alan, Bea) and Support.
    func document(_ format: StoreFormat, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("office.\(format.driver.fileExtensions[0])")
        let department = try #require(Self.model.entity(named: "Department"))
        let employee = try #require(Self.model.entity(named: "Employee"))
        var sales = Snapshot(entity: department, key: 1)
        sales[attribute: "name", in: department] = .string("Sales")
        sales[relationship: "employees", in: department] = .toMany([
            ObjectRef(entity: employee.index, key: 1), ObjectRef(entity: employee.index, key: 2),
        ])
        var support = Snapshot(entity: department, key: 2)
        support[attribute: "name", in: department] = .string("Support")
        var people: [Snapshot] = []
        for (key, name) in [(Int64(1), "Alan"), (2, "Bea")] {
            var person = Snapshot(entity: employee, key: key)
            person[attribute: "name", in: employee] = .string(name)
            person[relationship: "department", in: employee] = .toOne(sales.ref)
            people.append(person)
        }
        try format.driver.write(
            [sales, support] + people, to: url, model: Self.model,
            metadata: StoreMetadata.make(for: Self.model, storeType: format.storeType), overwrite: false)
        return url
    }

    /// Alan's name and department as a reader of the document finds them.
    func stored(_ url: URL) throws -> (name: String?, department: String?) {
        let context = ObjectContext(store: try StoreFormat.openForReading(url, model: Self.model))
        let employee = try #require(Self.model.entity(named: "Employee"))
        let alan = try context.existingObject(with: ObjectID(entity: employee.index, key: 1))
        return (
            alan.value(forKey: "name") as? String,
            (try alan.relatedObject(forKey: "department"))?.value(forKey: "name") as? String
        )
    }

    static let outcomes: [(MergePolicy, String, String)] = [
        (.mergeByPropertyStoreTrump, "Alan B", "Support"),
        (.mergeByPropertyObjectTrump, "Alan A", "Support"),
        (.overwrite, "Alan A", "Sales"),
        (.rollback, "Alan B", "Support"),
    ]

    /// B renames Bea and hires Cy into Support; A, from before, renames Alan and hires Dee into Sales: no
    /// object changed on both sides, so both saves keep everything, under the default policy, and the new
    /// objects get distinct keys.
    @Test(arguments: StoreFormat.allCases)
    func savesOfDifferentObjectsKeepBothWriters(format: StoreFormat) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try document(format, in: folder)
        let employee = try #require(Self.model.entity(named: "Employee"))
        let department = try #require(Self.model.entity(named: "Department"))
        let a = ObjectContext(store: try StoreFormat.open(url, model: Self.model))
        let b = ObjectContext(store: try StoreFormat.open(url, model: Self.model))
        func hire(_ name: String, into key: Int64, in context: ObjectContext) throws {
            let person = try context.insert("Employee")
            try person.setValue(name, forKey: "name")
            try person.setValue(
                context.object(with: ObjectID(entity: department.index, key: key)), forKey: "department")
        }
        let alan = try a.existingObject(with: ObjectID(entity: employee.index, key: 1))
        let bea = try b.existingObject(with: ObjectID(entity: employee.index, key: 2))
        try bea.setValue("Bea B", forKey: "name")
        try hire("Cy", into: 2, in: b)
        try b.save()
        try alan.setValue("Alan A", forKey: "name")
        try hire("Dee", into: 1, in: a)
        try a.save()

        let reader = ObjectContext(store: try StoreFormat.openForReading(url, model: Self.model))
        let names = try reader.fetch(FetchRequest(entityName: "Employee")).compactMap {
            $0.value(forKey: "name") as? String
        }
        #expect(names.sorted() == ["Alan A", "Bea B", "Cy", "Dee"])
        for (key, staff) in [(Int64(1), ["Alan A", "Bea B", "Dee"]), (2, ["Cy"])] {
            let unit = try reader.existingObject(with: ObjectID(entity: department.index, key: key))
            let names = try unit.relatedObjects(forKey: "employees").allObjects().compactMap {
                $0.value(forKey: "name") as? String
            }
            #expect(names.sorted() == staff)
        }
        try reader.checkInvariants()
    }

    /// B renames Alan and moves him to Support and saves; A, holding Alan from before, renames him.
    @Test(arguments: StoreFormat.allCases, [MergePolicy.error] + outcomes.map(\.0))
    func aStaleSaveConflictsOrResolves(format: StoreFormat, policy: MergePolicy) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try document(format, in: folder)
        let employee = try #require(Self.model.entity(named: "Employee"))
        let department = try #require(Self.model.entity(named: "Department"))
        let alanID = ObjectID(entity: employee.index, key: 1)

        let a = ObjectContext(store: try StoreFormat.open(url, model: Self.model))
        a.mergePolicy = policy
        let alanA = try a.existingObject(with: alanID)
        #expect(try alanA.relatedObject(forKey: "department")?.value(forKey: "name") as? String == "Sales")

        do {
            let b = ObjectContext(store: try StoreFormat.open(url, model: Self.model))
            let alanB = try b.existingObject(with: alanID)
            try alanB.setValue("Alan B", forKey: "name")
            try alanB.setValue(b.object(with: ObjectID(entity: department.index, key: 2)), forKey: "department")
            try b.save()
        }

        try alanA.setValue("Alan A", forKey: "name")
        guard let outcome = Self.outcomes.first(where: { $0.0 == policy }) else {
            let error = try #require(throws: GraftError.self) { try a.save() }
            #expect(error.code == .mergeConflict)
            #expect(error.underlying.map(\.context) == [[.object("Employee p1")]])
            let message = error.underlying.first?.message ?? ""
            #expect(message.contains("name: stored \"Alan B\", in memory \"Alan A\" (changed here and in the store)"))
            #expect(message.contains("department: stored p2, in memory p1 (changed in the store)"))
            #expect(try stored(url) == ("Alan B", "Support"))
            return
        }
        try a.save()
        #expect(try stored(url) == (outcome.1, outcome.2))
        // The document's two sides agree.
        let reader = ObjectContext(store: try StoreFormat.openForReading(url, model: Self.model))
        for key in [Int64(1), 2] {
            let unit = try reader.existingObject(with: ObjectID(entity: department.index, key: key))
            let names = try unit.relatedObjects(forKey: "employees").allObjects().compactMap {
                $0.value(forKey: "name") as? String
            }
            #expect(names.contains(outcome.1) == (unit.value(forKey: "name") as? String == outcome.2))
        }
        try reader.checkInvariants()
    }
}
