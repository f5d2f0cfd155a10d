import Foundation
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftInterchange

/// The stream between a producing thread and its consumer gives the consumer exactly what a serial loop
/// would, while the producer reuses its snapshots' storage and the batches go round.
@Suite struct SnapshotStreamTests {
    /// Attributes per entity: entities of different shapes, as the tables of a store have.
    static let attributeCounts = [2, 3, 1, 4]

    /// The entity of the object at `position`: mostly entity 0 with 1 and 2 mixed in at uneven intervals
    /// (a table of several entities, whose order no batch repeats), then a run of entity 3 alone (a
    /// table of its own), then the mix again.
    static func entity(at position: Int) -> Int {
        if (3_000..<7_000).contains(position) { return 3 }
        if position % 7 == 0 { return 1 }
        if position % 13 == 0 { return 2 }
        return 0
    }

    /// What the object at `position` holds: values and a to-many of a length that varies.
    static func expected(at position: Int) -> Snapshot {
        let entity = entity(at: position)
        let attributes = (0..<attributeCounts[entity]).map { Value.integer(Int64(position * 10 + $0)) }
        let refs = (0..<(position % 5)).map { ObjectRef(entity: 0, key: Int64(position + $0)) }
        return Snapshot(
            ref: ObjectRef(entity: entity, key: Int64(position + 1)), attributes: attributes,
            relationships: [.toMany(refs), .toOne(ObjectRef(entity: 1, key: Int64(position)))])
    }

    /// Hands over `count` objects as a store reader does: one snapshot per entity, filled again in place
    /// for each object of its entity, and replaced when what comes back is of another entity.
    static func handOver(_ count: Int, _ emit: (inout Snapshot) throws -> Void) throws {
        var current: [Snapshot?] = Array(repeating: nil, count: attributeCounts.count)
        for position in 0..<count {
            let entity = entity(at: position)
            let wanted = expected(at: position)
            var snapshot =
                current[entity]
                ?? Snapshot(
                    ref: ObjectRef(entity: entity, key: 0),
                    attributes: Array(repeating: nil, count: attributeCounts[entity]),
                    relationships: [.toMany([]), .toOne(nil)])
            current[entity] = nil
            snapshot.ref = wanted.ref
            for index in snapshot.attributes.indices { snapshot.attributes[index] = wanted.attributes[index] }
            var refs = snapshot.takeToMany(at: 0)
            refs.append(contentsOf: wanted.relationships[0].refs)
            snapshot.relationships[0] = .toMany(refs)
            snapshot.relationships[1] = wanted.relationships[1]
            try emit(&snapshot)
            // What comes back is filled with the next object of its entity; one of another is let go.
            if snapshot.ref.entity == entity { current[entity] = snapshot }
        }
    }

    @Test(arguments: [false, true])
    func theConsumerSeesEveryObjectInOrderWhateverTheEntitiesOfTheBatchesGivenBack(keeping: Bool) throws {
        let count = 20_000
        var seen: [Snapshot] = []
        var position = 0
        var mismatches: [Int] = []
        try SnapshotStream.run(handingOver: { emit in try Self.handOver(count, emit) }) { snapshot in
            if snapshot != Self.expected(at: position) { mismatches.append(position) }
            // A consumer that keeps what it is given must keep it unchanged by later objects.
            if keeping { seen.append(snapshot) }
            position += 1
        }
        #expect(position == count)
        #expect(mismatches.isEmpty, "first mismatches at \(mismatches.prefix(5))")
        if keeping {
            let changed = seen.indices.filter { seen[$0] != Self.expected(at: $0) }
            #expect(changed.isEmpty, "kept snapshots changed at \(changed.prefix(5))")
        }
    }

    @Test func aProducersErrorComesAfterEveryObjectMadeBeforeIt() throws {
        struct Broken: Error {}
        var received = 0
        #expect(throws: Broken.self) {
            try SnapshotStream.run(handingOver: { emit in
                try Self.handOver(5_000, emit)
                throw Broken()
            }) { _ in received += 1 }
        }
        #expect(received == 5_000)
    }

    @Test func aConsumersErrorStopsTheProducer() throws {
        struct Enough: Error {}
        var received = 0
        #expect(throws: Enough.self) {
            try SnapshotStream.run(handingOver: { emit in try Self.handOver(1_000_000, emit) }) { _ in
                received += 1
                if received == 3_000 { throw Enough() }
            }
        }
        #expect(received == 3_000)
    }

    @Test(arguments: ["sqlite", "xml"])
    func workMeanwhileComesBeforeTheFirstBatchAndItsErrorStopsTheReading(format: String) throws {
        let reader = try Copier.reader(for: Project.url("examples/Company/Company.\(format)"), model: nil)
        var events: [String] = []
        try SnapshotStream.forEachBatch(of: reader, size: 4, meanwhile: { events.append("meanwhile") }) { batch in
            events.append("batch of \(batch.count)")
        }
        #expect(events == ["meanwhile", "batch of 4", "batch of 4", "batch of 4", "batch of 1"])
        struct Refused: Error {}
        var batches = 0
        #expect(throws: Refused.self) {
            try SnapshotStream.forEachBatch(of: reader, size: 4, meanwhile: { throw Refused() }) { _ in batches += 1 }
        }
        #expect(batches == 0)
    }
}
