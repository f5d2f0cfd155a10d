import Foundation
import GraftBinary
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

/// The forms a node's attributes come in — Core Data's array of one slot per property, the older
/// `NSAttributes` dictionary, Graft's first layout — each read from a small document made here, and
/// what Graft writes.
@Suite struct NodeFormTests {
    typealias Node = HandMade.Node

    /// Writes a hand-made document and reads it with the Fleet model.
    static func read(
        _ nodes: [Node], writer: HandMade.Writer = .coreData, model: Model = Fleet.model
    ) throws -> [Snapshot] {
        let scratch = Scratch()
        let url = scratch.url("hand.binary")
        try HandMade.file(map: HandMade.map(nodes), metadata: HandMade.metadata(for: model, writer: writer))
            .write(to: url)
        return try readStore(url, model: model)
    }

    /// The Beetle of `Fleet.document()` as Core Data writes it: the stored attributes, then `NSNull`
    /// for the transient attribute, the relationships and the fetched property.
    static let beetle = Node(
        key: 1, entity: "Car",
        attributes: .slots([
            "VW-1", "Beetle", 4, "yellow", "1302", .nsNull, .nsNull, .nsNull, .nsNull, .nsNull, .nsNull, .nsNull,
        ]),
        related: ["owner": [2], "previousOwners": [3, 2], "depots": [4], "garage": [4]])
    static let people = [
        Node(
            key: 2, entity: "Person", attributes: .slots(["Ann", .nsNull, .nsNull, .nsNull]),
            related: ["vehicles": [1], "formerVehicles": [1]]),
        Node(
            key: 3, entity: "Person", attributes: .slots(["Bob", .nsNull, .nsNull, .nsNull]),
            related: ["formerVehicles": [1]]),
        Node(
            key: 4, entity: "Depot", attributes: .slots(["Lyon", .nsNull, .nsNull]),
            related: ["vehicles": [1], "parked": [1]]),
    ]

    static func expectBeetle(_ snapshots: [Snapshot], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let car = Fleet.entity("Car")
        let beetle = try #require(snapshots.first { $0.ref == Fleet.ref("Car", 1) }, sourceLocation: sourceLocation)
        #expect(beetle[attribute: "Serial", in: car] == "VW-1", sourceLocation: sourceLocation)
        #expect(beetle[attribute: "name", in: car] == "Beetle", sourceLocation: sourceLocation)
        #expect(beetle[attribute: "wheels", in: car] == 4, sourceLocation: sourceLocation)
        #expect(beetle[attribute: "colour", in: car] == "yellow", sourceLocation: sourceLocation)
        #expect(beetle[attribute: "model", in: car] == "1302", sourceLocation: sourceLocation)
        #expect(beetle[attribute: "cache", in: car] == nil, sourceLocation: sourceLocation)
        #expect(
            beetle[relationship: "previousOwners", in: car]
                == .toMany([Fleet.ref("Person", 3), Fleet.ref("Person", 2)]), sourceLocation: sourceLocation)
        #expect(
            beetle[relationship: "garage", in: car] == .toOne(Fleet.ref("Depot", 4)), sourceLocation: sourceLocation)
    }

    @Test(arguments: HandMade.Writer.allCases)
    func coreDataSlotsWithNullsForEveryOtherProperty(writer: HandMade.Writer) throws {
        try Self.expectBeetle(Self.read([Self.beetle] + Self.people, writer: writer))
    }

    @Test func missingValuesAndRelationshipsAreEmpty() throws {
        // A Car with one value: NSNull in the other stored slots, and no NSRelatedNodes at all.
        let trike = Node(
            key: 7, entity: "Car",
            attributes: .slots([.nsNull, .nsNull, 3] + Array(repeating: HandMade.Slot.nsNull, count: 9)))
        let read = try #require(try Self.read([trike]).first)
        let car = Fleet.entity("Car")
        #expect(read == Fleet.snapshot("Car", 7, ["wheels": 3]))
        #expect(read[relationship: "owner", in: car] == .toOne(nil))
        #expect(read[relationship: "depots", in: car] == .toMany([]))
    }

    @Test(arguments: [BinaryStoreLayout.attributesByNameKey, BinaryStoreLayout.NodeKey.attributeValues])
    func attributesByName(key: String) throws {
        // Older stores: a dictionary from property name to value, in any order, NSNull or absent for nothing.
        let beetle = Node(
            key: 1, entity: "Car",
            attributes: .byName(
                [
                    ("model", "1302"), ("colour", "yellow"), ("wheels", 4), ("name", "Beetle"), ("Serial", "VW-1"),
                    ("cache", .nsNull), ("owner", .nsNull),
                ], key: key),
            related: Self.beetle.related)
        try Self.expectBeetle(Self.read([beetle] + Self.people))
    }

    @Test func graftsFirstLayout() throws {
        // One slot per stored attribute, sorted by name, $null where empty, every relationship written:
        // a Car needs nine slots in Core Data's layout, so five can only be Graft's first one.
        let beetle = Node(
            key: 1, entity: "Car", values: ["VW-1", "yellow", "1302", "Beetle", 4],
            related: ["owner": [2], "previousOwners": [3, 2], "depots": [4], "garage": [4]])
        let people = [
            Node(key: 2, entity: "Person", values: ["Ann"], related: ["vehicles": [1], "formerVehicles": [1]]),
            Node(key: 3, entity: "Person", values: ["Bob"], related: ["formerVehicles": [1], "vehicles": []]),
            Node(key: 4, entity: "Depot", values: [nil], related: ["vehicles": [1], "parked": [1]]),
        ]
        for writer in HandMade.Writer.allCases {
            let read = try Self.read([beetle] + people, writer: writer)
            try Self.expectBeetle(read)
            #expect(
                read.first { $0.ref == Fleet.ref("Depot", 4) }?[attribute: "city", in: Fleet.entity("Depot")] == nil)
        }
    }

    /// A Sticker's two slots are its two stored attributes in either layout, in different orders
    /// (Core Data: text, colour; Graft's first: colour, text): the metadata tells which.
    @Test(arguments: [
        (HandMade.Writer.coreData, "Fragile", "red"), (.firstGraft, "red", "Fragile"), (.graft, "Fragile", "red"),
    ])
    func ambiguousSlotsFollowTheWriter(writer: HandMade.Writer, text: String, colour: String) throws {
        let sticker = Node(key: 5, entity: "Sticker", attributes: .slots(["Fragile", "red"]))
        let read = try #require(try Self.read([sticker], writer: writer).first)
        let entity = Fleet.entity("Sticker")
        #expect(read[attribute: "text", in: entity] == .string(text))
        #expect(read[attribute: "colour", in: entity] == .string(colour))
    }

    @Test func transientPropertiesNeedNotMatch() throws {
        // Version hashes do not cover transient properties or fetched properties: a document written
        // with more or fewer of them has more or fewer null slots after the stored attributes.
        let without = Fleet.make(transient: false)
        #expect(without.versionHashes == Fleet.model.versionHashes)
        let scratch = Scratch()
        for (writing, reading) in [(Fleet.model, without), (without, Fleet.model)] {
            let url = scratch.url("transients-\(writing === Fleet.model).binary")
            try BinaryStore.write(
                Fleet.document(in: writing), to: url, model: writing,
                metadata: StoreMetadata.make(for: writing, storeType: .binary))
            #expect(try readStore(url, model: reading) == Fleet.document(in: reading).sorted { $0.ref < $1.ref })
        }
    }

    @Test(arguments: [false, true])
    func roundTrip(reversed: Bool) throws {
        // Written with the model declared one way, read with it declared the other.
        let scratch = Scratch()
        let url = scratch.url("fleet.binary")
        let model = Fleet.make(reversed: reversed)
        try BinaryStore.write(
            Fleet.document(in: model), to: url, model: model,
            metadata: StoreMetadata.make(for: model, storeType: .binary))
        #expect(try readStore(url, model: Fleet.model) == Fleet.document().sorted { $0.ref < $1.ref })
        let copy = scratch.url("copy.binary")
        try InvalidInputTests.convert(url, into: copy, model: Fleet.model)
        #expect(try readStore(copy, model: Fleet.model) == Fleet.document().sorted { $0.ref < $1.ref })
    }

    // MARK: What Graft writes

    /// The written object map, read back with GraftCore's keyed-archive reader.
    static func writtenNodes() throws -> (nodes: [Int64: ArchivedObject], metadata: PropertyList.Dictionary) {
        let scratch = Scratch()
        let url = scratch.url("fleet.binary")
        try BinaryStore.write(
            Fleet.document(), to: url, model: Fleet.model,
            metadata: StoreMetadata.make(for: Fleet.model, storeType: .binary))
        let bytes = try Data(contentsOf: url)
        let header = try BinaryStoreHeader(decoding: bytes, fileSize: bytes.count)
        let map = try KeyedArchive(data: bytes.subdata(in: header.mapRange))
        var nodes: [Int64: ArchivedObject] = [:]
        for (key, node) in try #require(try map.topObject(forKey: "mapData")).decodeDictionary() {
            nodes[try key.decodeInteger()] = node
        }
        let metadata = try #require(
            try KeyedArchive(data: bytes.subdata(in: header.metadataRange)).topObject(forKey: "metadata")?
                .decodePropertyList().dictionaryValue)
        return (nodes, metadata)
    }

    @Test func writerFollowsCoreDatasLayout() throws {
        let (nodes, metadata) = try Self.writtenNodes()
        let beetle = try #require(nodes[1])
        let slots = try #require(try beetle["NSAttributeValues"]?.decodeArray())
        #expect(slots.count == 12)
        #expect(try slots.prefix(5).map { try $0.decodePropertyList() } == ["VW-1", "Beetle", 4, "yellow", "1302"])
        for slot in slots.dropFirst(5) { #expect(slot.className == "NSNull") }
        let related = try #require(try beetle["NSRelatedNodes"]?.decodeDictionary())
        #expect(Set(try related.map { try $0.key.decodeString() }) == ["owner", "previousOwners", "depots", "garage"])
        // A Car with no relationships and one value: NSNull in the empty stored slots, no NSRelatedNodes.
        let trike = try #require(nodes[7])
        #expect(try trike["NSRelatedNodes"] == nil)
        let trikeSlots = try #require(try trike["NSAttributeValues"]?.decodeArray())
        #expect(trikeSlots.count == 12)
        #expect(
            trikeSlots.enumerated().filter { $0.element.className == "NSNull" }.map(\.offset) == [0, 1] + Array(3..<12))
        // Bob's empty `vehicles` has no entry.
        let bob = try #require(try nodes[3]?["NSRelatedNodes"]?.decodeDictionary())
        #expect(try bob.map { try $0.key.decodeString() } == ["formerVehicles"])
        #expect(metadata[BinaryStoreLayout.layoutMetadataKey] == .integer(BinaryStoreLayout.layoutVersion))
    }

    @Test func layoutMarkIsNotHandedOn() throws {
        let scratch = Scratch()
        let url = scratch.url("fleet.binary")
        try BinaryStore.write(
            Fleet.document(), to: url, model: Fleet.model,
            metadata: StoreMetadata.make(for: Fleet.model, storeType: .binary))
        let reader = try BinaryStoreReader(url: url, model: Fleet.model)
        #expect(reader.metadata.values[BinaryStoreLayout.layoutMetadataKey] == nil)
    }

    // MARK: What is refused

    struct Refusal: CustomTestStringConvertible, Sendable {
        let name: String
        let code: GraftError.Code
        let fragment: String
        let nodes: [Node]
        var writer: HandMade.Writer = .coreData
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = {
        func car(_ slots: [HandMade.Slot]) -> Node { Node(key: 7, entity: "Car", attributes: .slots(slots)) }
        let nulls = { (count: Int) in Array(repeating: HandMade.Slot.nsNull, count: count) }
        return [
            Refusal(
                name: "fewer slots than stored attributes", code: .malformedInput, fragment: "has 4 values",
                nodes: [car(nulls(4))]),
            Refusal(
                name: "between Graft's first layout and Core Data's", code: .malformedInput,
                fragment: "has 7 values; Car has 12 properties", nodes: [car(nulls(7))]),
            Refusal(
                name: "a value in a relationship's slot", code: .malformedInput,
                fragment: "slot 6 holds a value, but it is the slot of the relationship 'owner'",
                nodes: [car(nulls(6) + ["Ann"] + nulls(5))]),
            Refusal(
                name: "a value in a transient attribute's slot", code: .malformedInput,
                fragment: "the transient attribute 'cache'", nodes: [car(nulls(5) + ["cached"] + nulls(6))]),
            Refusal(
                name: "a value beyond every property", code: .malformedInput,
                fragment: "beyond the 12 properties of Car", nodes: [car(nulls(12) + [1])]),
            Refusal(
                name: "a name the entity does not have", code: .modelMismatch,
                fragment: "a value for 'mileage', which Car does not have",
                nodes: [Node(key: 7, entity: "Car", attributes: .byName([("mileage", 12)]))]),
            Refusal(
                name: "a value for a relationship by name", code: .malformedInput,
                fragment: "a value for the relationship 'garage'",
                nodes: [Node(key: 7, entity: "Car", attributes: .byName([("garage", 4)]))]),
            Refusal(
                name: "a value of the wrong type", code: .typeMismatch, fragment: "where an Integer 16 value belongs",
                nodes: [car([.nsNull, .nsNull, "four"] + nulls(9))]),
        ]
    }()

    @Test(arguments: refusals)
    func refused(refusal: Refusal) throws {
        let error = #expect(throws: GraftError.self) { try Self.read(refusal.nodes, writer: refusal.writer) }
        #expect(error?.code == refusal.code, "\(String(describing: error))")
        #expect(error?.description.contains(refusal.fragment) == true, "\(String(describing: error))")
        #expect(error?.description.contains("Car p7") == true || error?.description.contains("p7") == true)
    }

    @Test func unknownLayoutMarkIsRefused() throws {
        let scratch = Scratch()
        let url = scratch.url("future.binary")
        let metadata = HandMade.metadata(
            for: Fleet.model, writer: .coreData, extra: [BinaryStoreLayout.layoutMetadataKey: .integer(3)])
        try HandMade.file(map: HandMade.map([Self.beetle] + Self.people), metadata: metadata).write(to: url)
        let error = #expect(throws: GraftError.self) { try readStore(url, model: Fleet.model) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.description.contains("layout 3") == true, "\(String(describing: error))")
    }
}
