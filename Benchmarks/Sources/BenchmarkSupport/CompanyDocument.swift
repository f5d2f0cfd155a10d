import Foundation
import Graft

/// The Company document both benchmarks use: departments of 25 objects — the department, its manager
/// and 23 employees reporting to the manager — valid under the model (3 to 40 employees per department,
/// unique names and IDs), so that it can be pasted as well as converted. (Departments and employees only,
/// the shape the conversion benchmark's C baseline reads and writes.)
public enum CompanyDocument {
    /// The Company model, version 1.
    public static func model() throws -> Model {
        try ModelFile.load(BenchmarkPaths.root.appendingPathComponent("examples/Company/Company.xcdatamodeld"))
            .version(named: "Company")!
    }

    /// The document with about `objects` objects in `folder` (generated the first time).
    public static func url(objects: Int, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("company-\(objects).sqlite")
        if !FileManager.default.fileExists(atPath: url.path) {
            print("Generating \(url.lastPathComponent) (\(objects) objects)…")
            try generate(url, objects: objects, model: try model())
        }
        return url
    }

    public static let objectsPerDepartment = 25

    public static func generate(_ url: URL, objects: Int, model: Model) throws {
        let department = model.entity(named: "Department")!, employee = model.entity(named: "Employee")!
        let manager = model.entity(named: "Manager")!
        let writer = try SQLiteStoreWriter(
            url: url, model: model, metadata: StoreMetadata.make(for: model, storeType: .sqlite), overwrite: true)
        var personKey: Int64 = 0
        for index in 0..<max(1, objects / objectsPerDepartment) {
            let key = Int64(index + 1)
            var snapshot = Snapshot(entity: department, key: key)
            snapshot[attribute: "name", in: department] = .string("Department \(key)")
            snapshot[attribute: "code", in: department] = .integer(Int64(index % 999 + 1))
            snapshot[attribute: "budget", in: department] = .decimal(Decimal(100_000 + index))
            try writer.write(snapshot)
            let bossKey = personKey + 1
            for member in 0..<(objectsPerDepartment - 1) {
                personKey += 1
                let entity = member == 0 ? manager : employee
                var person = Snapshot(entity: entity, key: personKey)
                person[attribute: "name", in: entity] = .string("Employee \(personKey)")
                person[attribute: "employeeID", in: entity] = .integer(personKey)
                person[attribute: "salary", in: entity] = .decimal(Decimal(30_000 + Int(personKey % 50_000)))
                person[attribute: "hireDate", in: entity] = .date(
                    Date(timeIntervalSinceReferenceDate: 600_000_000 + Double(personKey) * 97.25))
                person[attribute: "isRemote", in: entity] = .bool(personKey % 3 == 0)
                person[attribute: "rating", in: entity] = .double(Double(Float(Double(personKey % 50) / 10)))
                person[relationship: "department", in: entity] = .toOne(ObjectRef(entity: department.index, key: key))
                if member > 0 {
                    person[relationship: "manager", in: entity] = .toOne(ObjectRef(entity: manager.index, key: bossKey))
                }
                try writer.write(person)
            }
        }
        try writer.finish()
    }
}
