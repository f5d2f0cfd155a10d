import Foundation
import GraftBinary
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

/// The Company example model and documents built on it, shared by the binary-store tests.
enum Company {
    static let file: ModelFile = {
        do {
            return try ModelFile.load(Project.url("examples/Company/Company.xcdatamodeld"))
        } catch {
            fatalError("cannot load the Company example model: \(error)")
        }
    }()

    static var model: Model { file.current }

    /// A version of the model other than the current one (different version hashes).
    static var otherVersion: Model {
        file.versions.first { $0.name != file.currentVersionName }!.model
    }

    static func entity(_ name: String) -> EntityDescription { model.entity(named: name)! }

    static func ref(_ entity: String, _ key: Int64) -> ObjectRef {
        ObjectRef(entity: self.entity(entity).index, key: key)
    }

    /// A snapshot with the given attribute and relationship values (by name).
    static func snapshot(
        _ entityName: String, _ key: Int64, _ attributes: [String: Value] = [:],
        _ relationships: [String: RelationshipValue] = [:]
    ) -> Snapshot {
        let entity = self.entity(entityName)
        var snapshot = Snapshot(entity: entity, key: key)
        for (name, value) in attributes {
            precondition(entity.attributeIndexByName[name] != nil, "\(entityName) has no attribute \(name)")
            snapshot[attribute: name, in: entity] = value
        }
        for (name, value) in relationships {
            precondition(entity.relationshipIndexByName[name] != nil, "\(entityName) has no relationship \(name)")
            snapshot[relationship: name, in: entity] = value
        }
        return snapshot
    }

    static func decimal(_ text: String) -> Value { .decimal(Decimal(string: text)!) }

    static func date(_ seconds: Double) -> Value { .date(Date(timeIntervalSinceReferenceDate: seconds)) }

    /// A small document with every attribute type, edge values, subentities reached through Employee
    /// relationships, an ordered to-many and a many-to-many; keys are unique across the document.
    static let edgeDocument: [Snapshot] = {
        let research = ref("Department", 1), sales = ref("Department", 2)
        let boss = ref("Manager", 10), helper = ref("Flunky", 11), ann = ref("Employee", 12), bob = ref("Employee", 13)
        let apollo = ref("Project", 20), gemini = ref("Project", 21), mercury = ref("Project", 22)
        let bytes = Data((0...255).map { UInt8($0) })
        return [
            snapshot(
                "Department", 1,
                [
                    "budget": decimal("12345678901234567890.123456789"), "code": 1, "location": "Headquarters",
                    "name": "Research",
                ],
                ["employees": .toMany([boss, helper, ann]), "projects": .toMany([gemini, apollo, mercury])]),
            snapshot(
                "Department", 2, ["budget": .decimal(.nan), "code": 999, "name": "Sales"],
                ["employees": .toMany([bob]), "projects": .toMany([])]),
            snapshot(
                "Manager", 10,
                [
                    "badge": .uuid(UUID(uuidString: "0C9F1B2A-3D4E-4F50-8A6B-7C8D9E0F1A2B")!),
                    "email": "boss@example.com",
                    "employeeID": .integer(Int64.max), "hireDate": date(-1_234_567.891_011), "isRemote": false,
                    "name": "Boss", "salary": decimal("-0.000000000000000000000000000000000001"),
                    "workload": .double(.infinity), "yearsOfService": .integer(Int64(Int32.max)),
                    "parkingSpot": .integer(Int64(Int16.min)), "rating": .double(Double(Float(4.7))),
                    "homepage": .uri(URL(string: "https://example.com/a%20b?q=1&r=%C3%A4#frag")!),
                ],
                [
                    "department": .toOne(research), "manager": .toOne(nil), "projects": .toMany([apollo]),
                    "directReports": .toMany([helper, ann, bob]),
                ]),
            snapshot(
                "Flunky", 11,
                [
                    "employeeID": .integer(Int64.min), "hireDate": date(0.000_001), "isRemote": true,
                    "name": "Hélène ☕️ 例え", "salary": decimal("79228162514264337593543950335"),
                    "workload": .double(-.infinity), "coffeeOrder": "flat white", "photo": .data(bytes),
                    "preferences": .data(Data()),
                ],
                ["department": .toOne(research), "manager": .toOne(boss), "projects": .toMany([apollo, gemini])]),
            snapshot(
                "Employee", 12,
                [
                    "employeeID": 0, "hireDate": date(.nan), "isRemote": false, "name": "", "salary": decimal("0"),
                    "workload": .double(.nan), "rating": .double(-0.0), "email": "\u{0}nul",
                    "homepage": .uri(URL(string: "file:///tmp/x%20y")!),
                ],
                ["department": .toOne(research), "manager": .toOne(boss), "projects": .toMany([gemini])]),
            snapshot(
                "Employee", 13,
                [
                    "employeeID": 13, "hireDate": date(757_382_400.5), "isRemote": true, "name": "Bob",
                    "salary": decimal("52000.50"), "workload": .double(.leastNonzeroMagnitude),
                    "yearsOfService": .integer(Int64(Int32.min)),
                ],
                ["department": .toOne(sales), "manager": .toOne(boss), "projects": .toMany([])]),
            snapshot(
                "Project", 20, ["title": "Apollo", "deadline": date(1e9)],
                ["department": .toOne(research), "members": .toMany([boss, helper])]),
            snapshot(
                "Project", 21, ["title": "Gemini"],
                ["department": .toOne(research), "members": .toMany([helper, ann])]),
            snapshot("Project", 22, ["title": "Mercury"], ["department": .toOne(research), "members": .toMany([])]),
        ]
    }()

    static func metadata(extra: PropertyList.Dictionary = [:]) -> StoreMetadata {
        StoreMetadata.make(
            for: model, storeType: .binary, identifier: "6F1C1D2E-0000-4000-8000-00000000CAFE", keeping: extra)
    }
}

/// A fresh folder per test, removed afterwards.
final class Scratch {
    let folder: URL

    init() {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-binary-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

    /// Every file in the folder, hidden ones included.
    var contents: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted() }
}

/// Writes snapshots as a binary store.
func writeStore(
    _ snapshots: [Snapshot], to url: URL, model: Model = Company.model, metadata: StoreMetadata = Company.metadata()
) throws {
    try BinaryStore.write(snapshots, to: url, model: model, metadata: metadata)
}

/// Every snapshot of a binary store, in reference order.
func readStore(_ url: URL, model: Model? = Company.model) throws -> [Snapshot] {
    var snapshots: [Snapshot] = []
    try BinaryStoreReader(url: url, model: model).forEachSnapshot { snapshots.append($0) }
    return snapshots.sorted { $0.ref < $1.ref }
}

/// Runs a command-line tool, if it is installed.
enum Tool {
    static func find(_ name: String) -> URL? {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let url = URL(fileURLWithPath: String(folder)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    static func run(_ tool: URL, _ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outputData, as: UTF8.self),
            String(decoding: errorData, as: UTF8.self)
        )
    }
}
