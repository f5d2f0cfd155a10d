import Foundation
import Graft

/// The Company document the benchmarks share: departments of 25 objects — the department, a manager,
/// a flunky and 21 employees reporting to the manager, and a project with five of them as members —
/// every object valid under the model (3 to 40 employees per department, unique names and IDs).
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
        let manager = model.entity(named: "Manager")!, flunky = model.entity(named: "Flunky")!
        let project = model.entity(named: "Project")!
        let writer = try SQLiteStoreWriter(
            url: url, model: model, metadata: StoreMetadata.make(for: model, storeType: .sqlite), overwrite: true)
        var personKey: Int64 = 0
        for index in 0..<max(1, objects / objectsPerDepartment) {
            let key = Int64(index + 1)
            var snapshot = Snapshot(entity: department, key: key)
            snapshot[attribute: "name", in: department] = .string("Department \(key)")
            snapshot[attribute: "code", in: department] = .integer(Int64(index % 999 + 1))
            snapshot[attribute: "budget", in: department] = .decimal(Decimal(100_000 + index))
            snapshot[relationship: "projects", in: department] = .toMany([ObjectRef(entity: project.index, key: key)])
            try writer.write(snapshot)
            let bossKey = personKey + 1
            var members: [ObjectRef] = []
            for member in 0..<(objectsPerDepartment - 2) {
                personKey += 1
                let entity = member == 0 ? manager : member == 1 ? flunky : employee
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
                if member % 5 == 0 {
                    person[relationship: "projects", in: entity] = .toMany([ObjectRef(entity: project.index, key: key)])
                    members.append(person.ref)
                }
                try writer.write(person)
            }
            var work = Snapshot(entity: project, key: key)
            work[attribute: "title", in: project] = .string("Project \(key)")
            work[attribute: "deadline", in: project] = .date(Date(timeIntervalSinceReferenceDate: 800_000_000 + Double(key)))
            work[relationship: "department", in: project] = .toOne(ObjectRef(entity: department.index, key: key))
            work[relationship: "members", in: project] = .toMany(members)
            try writer.write(work)
        }
        try writer.finish()
    }
}
