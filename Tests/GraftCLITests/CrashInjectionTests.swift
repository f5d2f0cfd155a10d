import Foundation
import Graft
import GraftTestSupport
import Testing

/// `graft convert` and `graft paste` killed with SIGKILL at seeded random moments: after every kill the
/// input is byte for byte as it was, the output is either as it was before (absent, or the target's old
/// content) or complete and valid, and the next run leaves no temporary file behind.
///
/// Each case runs 12 kills; `GRAFT_CRASH_ROUNDS` sets another number, `GRAFT_SEED` replays a schedule.
@Suite(.enabled(if: GraftExecutable.url != nil, "the graft executable was not found; run `swift build` first"))
struct CrashInjectionTests {
    static let rounds = ProcessInfo.processInfo.environment["GRAFT_CRASH_ROUNDS"].flatMap { Int($0) } ?? 12
    static let model = try! ModelFile.load(Project.url("examples/Company/Company.xcdatamodeld")).current
    static let departments = 60, employeesEach = 30

    /// What one case runs and what its output should hold when complete.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var output: String
        /// The store the output starts as (copied from the examples), or nil for a new output.
        var startingAs: String?
        var testDescription: String { name }
    }

    static let cases = [
        Case(name: "convert to a new XML store", output: "out.xml", startingAs: nil),
        Case(name: "convert to a new SQLite store", output: "out.sqlite", startingAs: nil),
        Case(name: "paste into an XML store", output: "target.xml", startingAs: "examples/Company/Company.xml"),
        Case(name: "paste into a SQLite store", output: "target.sqlite", startingAs: "examples/Company/Company.sqlite"),
    ]

    /// A valid Company store of a few thousand objects: departments with a manager and employees.
    static func writeSource(to url: URL) throws {
        let department = model.entity(named: "Department")!
        let employee = model.entity(named: "Employee")!
        let manager = model.entity(named: "Manager")!
        let writer = try SQLiteStoreWriter(
            url: url, model: model, metadata: StoreMetadata.make(for: model, storeType: .sqlite), overwrite: false)
        var key: Int64 = 0
        for d in 1...departments {
            var staff: [ObjectRef] = []
            var people: [Snapshot] = []
            for e in 0..<employeesEach {
                key += 1
                var person = Snapshot(entity: e == 0 ? manager : employee, key: key)
                let entity = e == 0 ? manager : employee
                person[attribute: "name", in: entity] = .string("Person \(key)")
                person[attribute: "employeeID", in: entity] = .integer(10_000 + key)
                person[attribute: "hireDate", in: entity] = .date(
                    Date(timeIntervalSinceReferenceDate: 600_000_000 + Double(key)))
                person[attribute: "salary", in: entity] = .decimal(Decimal(30_000 + Int(key)))
                person[attribute: "isRemote", in: entity] = .bool(key % 3 == 0)
                person[relationship: "department", in: entity] = .toOne(
                    ObjectRef(entity: department.index, key: Int64(d)))
                if e > 0 { person[relationship: "manager", in: entity] = .toOne(staff[0]) }
                staff.append(person.ref)
                people.append(person)
            }
            people[0][relationship: "directReports", in: manager] = .toMany(Array(staff.dropFirst()))
            var unit = Snapshot(entity: department, key: Int64(d))
            unit[attribute: "name", in: department] = .string("Department \(d)")
            unit[attribute: "code", in: department] = .integer(Int64(100 + d))
            unit[relationship: "employees", in: department] = .toMany(staff)
            try writer.write(unit)
            for person in people { try writer.write(person) }
        }
        try writer.finish()
    }

    func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = GraftExecutable.url
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    func objects(in url: URL) throws -> Int {
        try Graft.StoreFormat.detect(url).driver.reader(at: url, model: nil, options: StoreReadOptions()).counts()
            .values.reduce(0, +)
    }

    func snapshot(_ url: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        for suffix in ["", "-wal", "-shm"] {
            files[suffix] = try? Data(contentsOf: URL(fileURLWithPath: url.path + suffix))
        }
        return files
    }

    /// Files in `folder` that look like a writer's temporary files.
    func temporaryFiles(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".graft-") }
    }

    @Test(arguments: cases)
    func aKilledWriteLeavesTheInputAsItWasAndTheOutputWholeOrAsBefore(_ job: Case) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("source.sqlite")
        try Self.writeSource(to: source)
        let total = Self.departments * (Self.employeesEach + 1)
        let clipboard = folder.appendingPathComponent("whole.json")
        let copy = try start(["copy", source.path, "--all", "-o", clipboard.path])
        copy.waitUntilExit()
        try #require(copy.terminationStatus == 0)
        let inputs = [source, clipboard].map { ($0, snapshot($0)) }
        let output = folder.appendingPathComponent(job.output)
        let arguments =
            job.startingAs == nil
            ? ["convert", source.path, output.path, "--force", "--quiet"]
            : ["paste", clipboard.path, "--into", output.path]
        func reset() throws {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                try? FileManager.default.removeItem(atPath: output.path + suffix)
            }
            if let start = job.startingAs { try FileManager.default.copyItem(at: Project.url(start), to: output) }
        }
        try reset()
        let before = job.startingAs == nil ? 0 : try objects(in: output)
        // How long an undisturbed run takes sets the window the kills fall in.
        let started = Date()
        let whole = try start(arguments)
        whole.waitUntilExit()
        try #require(whole.terminationStatus == 0, "\(arguments)")
        let duration = Date().timeIntervalSince(started)
        #expect(try objects(in: output) == before + total)

        var random = RepeatableRandomNumberGenerator(seed: RepeatableRandomNumberGenerator.seed(default: 0x6_72A4_F7))
        for round in 0..<Self.rounds {
            try reset()
            let delay = Double.random(in: 0...(duration * 1.2), using: &random)
            let process = try start(arguments)
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let label =
                "\(job.name), round \(round) (seed \(random.seed)), killed after \(String(format: "%.3f", delay)) s"
            for (url, files) in inputs { #expect(snapshot(url) == files, "\(label): \(url.lastPathComponent) changed") }
            if FileAccess.kind(of: output).exists {
                let found = try objects(in: output)
                #expect(found == before || found == before + total, "\(label): \(found) objects")
            } else {
                #expect(job.startingAs == nil, "\(label): the target is gone")
            }
            // The next write to the same output finds what the killed one left, and leaves nothing of it.
            let next = try start(arguments)
            next.waitUntilExit()
            if job.startingAs == nil { #expect(next.terminationStatus == 0, "\(label): the next run failed") }
            let left = try temporaryFiles(in: folder)
            #expect(left.isEmpty, "\(label): \(left)")
        }
    }
}
