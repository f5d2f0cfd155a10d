import Foundation
import Graft
import GraftTestSupport
import Testing

/// The small Company document kept in `examples/Company` in every store format.
///
/// The tests build it in a context, check that every example file holds exactly it, and convert the
/// files into each other. Run with `GRAFT_RECORD=1` to write the example files afresh.
@Suite struct ExampleDocumentsTests {
    static let folder = Project.url("examples/Company")
    static let model = try! ModelFile.load(folder.appendingPathComponent("Company.xcdatamodeld")).current
    static let storeIdentifier = "0C0FFEE0-C0DE-4A7A-B1E5-5AFE5EED0001"

    /// Two departments, their employees (managers of managers, flunkies), and projects with members.
    static func buildDocument() throws -> InMemoryStore {
        let store = InMemoryStore(model: model, identifier: storeIdentifier)
        let context = ObjectContext(store: store)
        context.isUndoEnabled = false
        func employee(
            _ entity: String, _ name: String, id: Int64, salary: Int, hired: Double, department: ManagedObject
        ) throws
            -> ManagedObject
        {
            let person = try context.insert(entity)
            try person.setValue(name, forKey: "name")
            try person.setValue(id, forKey: "employeeID")
            try person.setValue(Decimal(salary), forKey: "salary")
            try person.setValue(Date(timeIntervalSinceReferenceDate: hired), forKey: "hireDate")
            try person.setValue(
                "\(name.lowercased().replacingOccurrences(of: " ", with: "."))@example.com", forKey: "email")
            try person.setValue(department, forKey: "department")
            return person
        }
        let sales = try context.insert("Department")
        try sales.setValue("Sales", forKey: "name")
        try sales.setValue(Int64(10), forKey: "code")
        try sales.setValue(Decimal(string: "1250000.50")!, forKey: "budget")
        try sales.setValue("Lisbon", forKey: "location")
        let research = try context.insert("Department")
        try research.setValue("Research & Development", forKey: "name")
        try research.setValue(Int64(20), forKey: "code")
        try research.setValue(Decimal(string: "2400000")!, forKey: "budget")

        let chief = try employee(
            "Manager", "Ada Lovelace", id: 1, salary: 185_000, hired: 600_000_000, department: research)
        try chief.setValue(Int64(7), forKey: "parkingSpot")
        try chief.setValue(UUID(uuidString: "5E1A4A2C-1D3F-4C6B-9A0E-0123456789AB")!, forKey: "badge")
        try chief.setValue(URL(string: "https://example.com/~ada")!, forKey: "homepage")
        let lead = try employee(
            "Manager", "Grace Hopper", id: 2, salary: 150_000, hired: 620_000_000.25, department: sales)
        try lead.setValue(chief, forKey: "manager")  // a manager of a manager
        try lead.setValue(0.9, forKey: "rating")
        let staff: [(String, String, Int64, Int, Double, ManagedObject, ManagedObject)] = [
            ("Employee", "Alan Turing", 3, 120_000, 640_000_000, research, chief),
            ("Flunky", "Charles Babbage", 4, 61_000, 650_000_000, research, chief),
            ("Employee", "Edsger Dijkstra", 5, 118_500, 758_000_000, research, chief),
            ("Employee", "Barbara Liskov", 6, 99_000, 700_000_000, sales, lead),
            ("Flunky", "Dennis Ritchie", 7, 58_000, 759_000_000.5, sales, lead),
            ("Employee", "Frances Allen", 8, 101_000, 710_000_000, sales, lead),
        ]
        var people: [ManagedObject] = []
        for (entity, name, id, salary, hired, department, manager) in staff {
            let person = try employee(entity, name, id: id, salary: salary, hired: hired, department: department)
            try person.setValue(manager, forKey: "manager")
            people.append(person)
        }
        try people[1].setValue("flat white", forKey: "coffeeOrder")
        try people[4].setValue("espresso", forKey: "coffeeOrder")
        try people[0].setValue(true, forKey: "isRemote")
        try people[0].setValue(Data([0x89, 0x50, 0x4E, 0x47]), forKey: "photo")
        try people[2].setValue(0.75, forKey: "workload")
        try people[3].setValue(Int64(12), forKey: "yearsOfService")

        let engine = try context.insert("Project")
        try engine.setValue("Analytical Engine", forKey: "title")
        try engine.setValue(Date(timeIntervalSinceReferenceDate: 800_000_000), forKey: "deadline")
        try engine.setValue([chief, people[0], people[1]], forKey: "members")
        let compiler = try context.insert("Project")
        try compiler.setValue("Compiler", forKey: "title")
        try compiler.setValue([lead, people[3], people[0]], forKey: "members")
        let fair = try context.insert("Project")
        try fair.setValue("Trade Fair", forKey: "title")
        try fair.setValue([people[4]], forKey: "members")
        try research.setValue([engine], forKey: "projects")
        try sales.setValue([fair, compiler], forKey: "projects")  // ordered: the fair first
        try context.save()
        return store
    }

    static let formats: [(StoreFormat, String)] = [
        (.sqlite, "Company.sqlite"), (.xml, "Company.xml"), (.binary, "Company.binary"),
    ]

    @Test(arguments: formats.map(\.1))
    func everyExampleHoldsTheDocument(name: String) throws {
        let expected = try Self.buildDocument()
        let url = Self.folder.appendingPathComponent(name)
        let format = Self.formats.first { $0.1 == name }!.0
        if ProcessInfo.processInfo.environment["GRAFT_RECORD"] == "1" {
            var metadata = StoreMetadata.make(
                for: Self.model, storeType: format.storeType, identifier: Self.storeIdentifier)
            DocumentKeys.record(format == .binary ? expected.keyOffsets : [:], model: Self.model, in: &metadata)
            var writer = try format.driver.writer(at: url, model: Self.model, metadata: metadata, overwrite: true)
            try expected.forEachSnapshot { try writer.write($0) }
            try writer.finish()
        }
        let reader = try format.driver.reader(at: url, model: nil, options: StoreReadOptions())
        #expect(try StoreFormat.detect(url) == format)
        #expect(reader.metadata.identifier == Self.storeIdentifier)
        #expect(reader.model.versionHashes == Self.model.versionHashes)
        let differences = try Verification.differences(between: expected, and: reader)
        #expect(differences.isEmpty, "\(differences)")
    }
}
