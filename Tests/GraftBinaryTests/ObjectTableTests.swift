import Foundation
import GraftBinary
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

/// The writer keeps its objects by tree and key (pages of keys, a dictionary for keys far from the
/// others) and the reader only each node's entity by key: documents whose keys sit at the edges of those
/// structures must come back as they were written, with the object map in key order.
@Suite struct ObjectTableTests {
    /// Writes `snapshots` and reads them back in map order.
    func roundTrip(_ snapshots: [Snapshot], model: Model) throws -> (read: [Snapshot], header: BinaryStoreHeader) {
        let scratch = Scratch()
        let url = scratch.url("Keys.binary")
        try BinaryStore.write(
            snapshots, to: url, model: model, metadata: StoreMetadata.make(for: model, storeType: .binary))
        let reader = try BinaryStoreReader(url: url, model: model)
        var read: [Snapshot] = []
        try reader.forEachSnapshot { read.append($0) }
        #expect(reader.objectCount == snapshots.count)
        return (read, reader.header)
    }

    @Test func anEmptyStore() throws {
        let (read, header) = try roundTrip([], model: Fleet.model)
        #expect(read.isEmpty)
        #expect(header.primaryKeyCounter == 0)
    }

    /// Keys at page boundaries, far beyond the pages, negative and next to Int64's largest value, in a
    /// tree with one entity (Person) and one with subentities (Vehicle), related both ways.
    @Test(
        arguments: [
            [0, 1, 4095, 4096, 4097, 8191],
            [1, 1 << 20 + 10, 1 << 40, Int64.max - 1, Int64.max],
            [-5, -1, 3, Int64.min + 1, 70_000],
        ] as [[Int64]])
    func keysAtTheEdges(_ personKeys: [Int64]) throws {
        let model = Fleet.model
        // Vehicles get keys no person has, so that the document needs no offsets.
        let carKeys = personKeys.map { $0 == .max ? Int64.max - 2 : $0 &+ 100_003 }
        var snapshots: [Snapshot] = []
        for (person, car) in zip(personKeys, carKeys) {
            snapshots.append(
                Fleet.snapshot(
                    "Person", person, ["name": .string("P\(person)")],
                    ["vehicles": .toMany([Fleet.ref("Car", car)]), "formerVehicles": .toMany([])]))
            snapshots.append(
                Fleet.snapshot(
                    "Car", car, ["model": .string("C\(car)")],
                    [
                        "owner": .toOne(Fleet.ref("Person", person)), "previousOwners": .toMany([]),
                        "depots": .toMany([]),
                    ]
                ))
        }
        let (read, header) = try roundTrip(snapshots, model: model)
        // The map is in key order, and every object is as it was written.
        #expect(read.map(\.ref.key) == snapshots.map(\.ref.key).sorted())
        #expect(read.sorted { $0.ref < $1.ref } == snapshots.sorted { $0.ref < $1.ref })
        #expect(header.primaryKeyCounter == UInt64(max(0, (personKeys + carKeys).max()!)))
    }

    /// A key first met while it lay beyond the pages is kept aside, and still found once the pages reach
    /// it: the object is not taken for a new one.
    @Test func aKeyMetBeforeThePagesReachedIt() throws {
        let model = Fleet.model
        let far: Int64 = 1 << 20 + 10
        let scratch = Scratch()
        var writer = try BinaryStoreWriter(
            url: scratch.url("Keys.binary"), model: model, metadata: StoreMetadata.make(for: model, storeType: .binary))
        // Met first as a related object, while one object is known.
        try writer.write(
            Fleet.snapshot("Car", 1, [:], ["owner": .toOne(Fleet.ref("Person", far))]))
        for key in Int64(2)...4 { try writer.write(Fleet.snapshot("Person", key)) }
        try writer.write(Fleet.snapshot("Person", far + 1))  // its page now exists
        try writer.write(Fleet.snapshot("Person", far))
        let error = #expect(throws: GraftError.self) { try writer.write(Fleet.snapshot("Person", far)) }
        #expect(error?.message.contains("written twice") == true)
    }

    @Test func aKeyMetBeforeThePagesReachedItIsWrittenOnce() throws {
        let model = Fleet.model
        let far: Int64 = 1 << 20 + 10
        var snapshots = [Fleet.snapshot("Car", 1, [:], ["owner": .toOne(Fleet.ref("Person", far))])]
        for key in Int64(2)...4 { snapshots.append(Fleet.snapshot("Person", key)) }
        snapshots += [Fleet.snapshot("Person", far + 1), Fleet.snapshot("Person", far)]
        let (read, _) = try roundTrip(snapshots, model: model)
        #expect(read.map(\.ref.key) == [1, 2, 3, 4, far, far + 1])
        #expect(read[0].relationships == snapshots[0].relationships)
    }

    /// Many inheritance trees sharing keys: the writer finds that they collide, moves each tree above the
    /// ones before it, and the reader moves them back.
    @Test func manyTreesSharingKeys() throws {
        let trees = 300
        let model = try Model(
            entities: (0..<trees).map { index in
                Entity(
                    name: "Tree\(index)", attributes: [Attribute(name: "n", type: .integer64)],
                    relationships: [
                        Relationship(
                            name: "next", destination: "Tree\((index + 1) % trees)",
                            inverse: "previous"),
                        Relationship(
                            name: "previous", destination: "Tree\((index + trees - 1) % trees)",
                            inverse: "next"),
                    ])
            })
        var snapshots: [Snapshot] = []
        for index in 0..<trees {
            let entity = model.entity(named: "Tree\(index)")!
            for key in Int64(1)...3 {
                var snapshot = Snapshot(entity: entity, key: key)
                snapshot[attribute: "n", in: entity] = .integer(Int64(index) * 10 + key)
                let next = model.entity(named: "Tree\((index + 1) % trees)")!
                let previous = model.entity(named: "Tree\((index + trees - 1) % trees)")!
                snapshot[relationship: "next", in: entity] = .toOne(ObjectRef(entity: next.index, key: key))
                snapshot[relationship: "previous", in: entity] = .toOne(ObjectRef(entity: previous.index, key: key))
                snapshots.append(snapshot)
            }
        }
        let (read, header) = try roundTrip(snapshots, model: model)
        #expect(read.count == snapshots.count)
        #expect(read.sorted { $0.ref < $1.ref } == snapshots.sorted { $0.ref < $1.ref })
        #expect(header.primaryKeyCounter == UInt64(3 * trees))
    }
}
