import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// A whole SQLite store large enough that the streamed copy writes in rounds on several threads and the
/// reader's snapshots are handed over in batches: the same document as the copy made in memory.
@Suite struct LargeCopyTests {
    /// Departments of 25 (the department, a manager, 23 employees reporting to the manager, every fifth a
    /// flunky), with some text that needs escaping: `objects` objects in all, their keys `keyStep` apart.
    static func store(objects: Int, keyStep: Int64 = 1, in folder: URL) throws -> URL {
        let model = Company.v2
        let department = model.entity(named: "Department")!, employee = model.entity(named: "Employee")!
        let manager = model.entity(named: "Manager")!, flunky = model.entity(named: "Flunky")!
        var snapshots: [Snapshot] = []
        var personKey: Int64 = 0
        for index in 0..<(objects / 25) {
            let key = Int64(index + 1) * keyStep
            var unit = Snapshot(entity: department, key: key)
            unit[attribute: "name", in: department] = .string("Department \(key) \"Ünit\"\t\\")
            unit[attribute: "code", in: department] = .integer(Int64(index % 999 + 1))
            unit[attribute: "budget", in: department] = .decimal(Decimal(string: "\(100_000 + index).5")!)
            snapshots.append(unit)
            let bossKey = personKey + keyStep
            for member in 0..<24 {
                personKey += keyStep
                let entity = member == 0 ? manager : member % 5 == 0 ? flunky : employee
                var person = Snapshot(entity: entity, key: personKey)
                person[attribute: "name", in: entity] = .string("Employee \(personKey)")
                person[attribute: "employeeID", in: entity] = .integer(personKey)
                person[attribute: "salary", in: entity] = .decimal(Decimal(30_000 + Int(personKey % 500)))
                person[attribute: "hireDate", in: entity] = .date(
                    Date(timeIntervalSinceReferenceDate: 600_000_000 + Double(personKey) * 97.25))
                person[attribute: "rating", in: entity] = .double(Double(Float(Double(personKey % 50) / 10)))
                person[relationship: "department", in: entity] = .toOne(ObjectRef(entity: department.index, key: key))
                if entity.name == "Flunky" { person[attribute: "coffeeOrder", in: entity] = .string("flat white ☕") }
                if member > 0 {
                    person[relationship: "manager", in: entity] = .toOne(ObjectRef(entity: manager.index, key: bossKey))
                }
                snapshots.append(person)
            }
        }
        let url = folder.appendingPathComponent("large.sqlite")
        try StoreFormat.sqlite.driver.write(
            snapshots, to: url, model: model, metadata: StoreMetadata.make(for: model, storeType: .sqlite),
            overwrite: false)
        return url
    }

    @Test func aLargeStoreStreamedIsItsCopyInMemory() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.store(objects: 40_000, in: folder)
        let copied = try Copier.copyAll(from: Copier.reader(for: url, model: nil))
        #expect(copied.objects.count == 40_000)
        for encoding in [ClipboardEncoding.json, .xml, .binaryPlist] {
            var bytes = Data()
            let streamed = try Copier.copyAll(
                from: Copier.reader(for: url, model: nil), encoding: encoding, to: { bytes.append(contentsOf: $0) })
            #expect(bytes == (try encoding.encode(copied)), "\(encoding)")
            #expect(streamed.counts == copied.counts)
        }
    }

    /// To-manys read ahead on threads and connections of their own (as cursors over tables of 65,536
    /// rows or more are) give the snapshots read in step, table after table; a read stopped part way by
    /// its consumer ends them, and the reader reads again whole.
    @Test func cursorsReadAheadGiveTheSnapshotsReadInStep() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.store(objects: 5_000, in: folder)
        let inStep = try SQLiteStoreReader(url: url, model: nil)
        inStep.cursorReadAheadRows = .max
        var expected: [Snapshot] = []
        try inStep.forEachSnapshot { expected.append($0) }
        #expect(expected.count == 5_000)
        #expect(
            expected.contains {
                $0.relationships.contains { if case .toMany(let refs) = $0 { !refs.isEmpty } else { false } }
            })

        let ahead = try SQLiteStoreReader(url: url, model: nil)
        ahead.cursorReadAheadRows = 0
        // The first snapshot that differs, if any (not the whole lists, which fill the log).
        func firstDifference(_ snapshots: [Snapshot]) -> Int? {
            snapshots.count != expected.count ? -1 : snapshots.indices.first { snapshots[$0] != expected[$0] }
        }
        var got: [Snapshot] = []
        try ahead.forEachSnapshot { got.append($0) }
        #expect(firstDifference(got) == nil)
        struct Enough: Error {}
        var seen = 0
        #expect(throws: Enough.self) {
            try ahead.forEachSnapshot { _ in
                seen += 1
                if seen == 300 { throw Enough() }
            }
        }
        var again: [Snapshot] = []
        try ahead.forEachSnapshot { again.append($0) }
        #expect(firstDifference(again) == nil)
    }

    /// The refs the SQLite reader reads without the objects are those of its snapshots, in order; the
    /// snapshots read after them are the same as without. Keys far apart take the reader's other way.
    @Test(arguments: [1, 1_000_000] as [Int64]) func theRefsComeInTheSnapshotsOrder(keyStep: Int64) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.store(objects: 500, keyStep: keyStep, in: folder)
        let reader = try SQLiteStoreReader(url: url, model: nil)
        var snapshots: [Snapshot] = []
        try reader.forEachSnapshot { snapshots.append($0) }
        var refs: [ObjectRef] = []
        #expect(try reader.forEachRef { refs.append($0) })
        #expect(refs == snapshots.map(\.ref))
        var again: [Snapshot] = []
        try reader.forEachSnapshot { again.append($0) }
        #expect(again == snapshots)
    }
}
