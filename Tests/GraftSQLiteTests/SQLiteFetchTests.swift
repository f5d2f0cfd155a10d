import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// What a fetch reads from SQLite: the rows it reads are kept, faults when asked for, batches, and a
/// limit applied in SQL even with a string sort.
@Suite struct SQLiteFetchTests {
    /// A store of `count` people (`Person` of ``PredicateGuideTests/model``) written straight through the
    /// store's inserter, named so that case and diacritics matter to the order.
    static func people(_ count: Int, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("People.sqlite")
        let store = try SQLiteStore.create(url, model: PredicateGuideTests.model)
        let person = try #require(PredicateGuideTests.model.entity(named: "Person"))
        let keys = try store.allocateKeys(rootEntity: person.index, count: count)
        let stems = ["adams", "Adams", "Ådams", "Baker", "bäcker", "Zed", "éclair", "Eclair", "mole", "Mole"]
        var inserter = try store.inserter()
        for (index, key) in keys.enumerated() {
            var snapshot = Snapshot(entity: person, key: key)
            snapshot.attributes[person.attributeIndexByName["lastName"]!] = .string(
                stems[index % stems.count] + String(count - index))
            snapshot.attributes[person.attributeIndexByName["firstName"]!] = .string("P\(index)")
            snapshot.attributes[person.attributeIndexByName["age"]!] = .integer(Int64(index % 90))
            try inserter.write(snapshot)
        }
        try inserter.finish()
        return url
    }

    @Test func fetchedObjectsComeBackFilled() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.people(200, in: folder)
        let context = ObjectContext(store: try SQLiteStore.open(url, model: PredicateGuideTests.model))
        let request = FetchRequest(entityName: "Person", predicate: try GraftPredicate(format: "age < 10"))
        let found = try context.fetch(request)
        #expect(found.count == 30)
        #expect(found.allSatisfy { !$0.isFault })
        // Also when the predicate is evaluated in memory.
        let inMemory = try context.fetch(
            FetchRequest(
                entityName: "Person", predicate: try GraftPredicate(format: "uppercase:(lastName) BEGINSWITH 'ZED'")))
        #expect(inMemory.count == 20)
        #expect(inMemory.allSatisfy { !$0.isFault })
    }

    /// A fetch that may come in any order finds the same objects with the same values as one in key order
    /// (SQLite then skips sorting them), and says they are as asked.
    @Test func aFetchInAnyOrderFindsTheSameObjects() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.people(120, in: folder)
        let store = try SQLiteStore.open(url, model: PredicateGuideTests.model)
        let person = try #require(store.model.entity(named: "Person"))
        let predicate = try GraftPredicate(format: "age IN {3, 7, 11, 42}")
        let ordered = try store.fetch(StoreFetch(entities: [person.index], predicate: predicate))
        var request = StoreFetch(entities: [person.index], predicate: predicate)
        request.inAnyOrder = true
        let unordered = try store.fetch(request)
        #expect(ordered.refs.count == 7)
        #expect(ordered.refs == ordered.refs.sorted())
        #expect(Set(unordered.refs) == Set(ordered.refs))
        #expect(Set(unordered.snapshots) == Set(ordered.snapshots))
        #expect(unordered.predicateApplied && unordered.sortedAndLimited)
    }

    @Test func objectsAsFaultsReadOnlyKeys() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.people(50, in: folder)
        let store = try SQLiteStore.open(url, model: PredicateGuideTests.model)
        let person = try #require(store.model.entity(named: "Person"))
        let keysOnly = try store.fetch(
            StoreFetch(
                entities: [person.index], predicate: try GraftPredicate(format: "age < 20"), includesValues: false))
        #expect(keysOnly.snapshots.isEmpty)
        #expect(keysOnly.refs.count == 20)

        let context = ObjectContext(store: store)
        var request = FetchRequest(entityName: "Person", predicate: try GraftPredicate(format: "age < 20"))
        request.returnsObjectsAsFaults = true
        let faults = try context.fetch(request)
        #expect(faults.count == 20)
        #expect(faults.allSatisfy { $0.isFault })
        #expect(faults[3].value(forKey: "firstName") as? String == "P3")
        #expect(!faults[3].isFault)
        #expect(faults[4].isFault)
    }

    @Test func batchesFillOnFirstUse() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.people(25, in: folder)
        let context = ObjectContext(store: try SQLiteStore.open(url, model: PredicateGuideTests.model))
        var request = FetchRequest(entityName: "Person", sortDescriptors: [GraftSortDescriptor(keyPath: "age")])
        request.fetchBatchSize = 10
        let all = try context.fetch(request)
        #expect(all.count == 25)
        #expect(all.allSatisfy { $0.isFault })
        #expect(all[12].value(forKey: "age") as? Int64 == 12)
        #expect(all[10..<20].allSatisfy { !$0.isFault })
        #expect(all[0..<10].allSatisfy { $0.isFault })
        #expect(all[20..<25].allSatisfy { $0.isFault })
        #expect(all[24].value(forKey: "firstName") as? String == "P24")
        #expect(all[20..<25].allSatisfy { !$0.isFault })
        #expect(all.map { $0.value(forKey: "age") as? Int64 } == (0..<25).map { Int64($0) })
    }

    /// A limit of 5 with a case-insensitive string sort over 120,000 rows reads 5 rows.
    @Test func aLimitWithAStringSortReadsOnlyTheRowsReturned() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let count = 120_000
        let url = try Self.people(count, in: folder)
        let store = try SQLiteStore.open(url, model: PredicateGuideTests.model)
        let person = try #require(store.model.entity(named: "Person"))
        let sort = [GraftSortDescriptor(keyPath: "lastName", options: [.caseInsensitive, .diacriticInsensitive])]
        let answer = try store.fetch(StoreFetch(entities: [person.index], sortDescriptors: sort, limit: 5))
        #expect(answer.sortedAndLimited)
        #expect(answer.snapshots.count == 5)

        var request = FetchRequest(entityName: "Person", sortDescriptors: sort)
        request.fetchLimit = 5
        let context = ObjectContext(store: store)
        let first = try context.fetch(request).compactMap { $0.value(forKey: "lastName") as? String }
        // The same five as sorting every name in memory.
        let stems = ["adams", "Adams", "Ådams", "Baker", "bäcker", "Zed", "éclair", "Eclair", "mole", "Mole"]
        var smallest: [String] = []
        for index in 0..<count {
            let name = stems[index % stems.count] + String(count - index)
            let position = smallest.firstIndex {
                ValueComparison.compare(name, $0, options: sort[0].options) == .orderedAscending
            }
            if let position { smallest.insert(name, at: position) } else if smallest.count < 5 { smallest.append(name) }
            if smallest.count > 5 { smallest.removeLast() }
        }
        #expect(first == smallest)
    }
}
