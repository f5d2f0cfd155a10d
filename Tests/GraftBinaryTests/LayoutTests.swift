import Foundation
import GraftBinary
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

/// The layout decisions that depend on the model: which properties have slots, in which order.
@Suite struct LayoutTests {
    /// The same entity declared with its attributes in two orders, plus a transient attribute.
    static func model(reversed: Bool, transient: Bool) throws -> Model {
        var attributes = [
            Attribute(name: "zeta", type: .string), Attribute(name: "alpha", type: .integer32),
            Attribute(name: "Mid", type: .double),
        ]
        if transient { attributes.append(Attribute(name: "cache", type: .string, isTransient: true)) }
        if reversed { attributes.reverse() }
        return try Model(entities: [
            Entity(name: "Base", attributes: [Attribute(name: "name", type: .string)]),
            Entity(name: "Thing", parent: "Base", attributes: attributes),
        ])
    }

    @Test func slotsFollowThePropertyOrder() throws {
        let model = try Self.model(reversed: false, transient: true)
        let thing = try #require(model.entity(named: "Thing"))
        let slots = BinaryStoreLayout.AttributeSlots(entity: thing, model: model)
        // Inherited first, then the entity's own by name; the transient attribute after the stored ones.
        #expect(slots.properties.map { thing.name(of: $0) } == ["name", "Mid", "alpha", "zeta", "cache"])
        #expect(slots.storedAttributes.map { thing.attributes[$0.index].name } == ["name", "Mid", "alpha", "zeta"])
        // Graft's first layout, still read: the stored attributes sorted by name.
        #expect(
            slots.legacyStoredAttributes.map { thing.attributes[$0.index].name } == ["Mid", "alpha", "name", "zeta"])
        #expect(slots.isAmbiguous)
    }

    @Test(arguments: [false, true])
    func documentsReadAcrossDeclarationOrderAndTransients(reversed: Bool) throws {
        let writing = try Self.model(reversed: false, transient: false)
        let reading = try Self.model(reversed: reversed, transient: true)
        #expect(writing.versionHashes == reading.versionHashes)
        let thing = try #require(writing.entity(named: "Thing"))
        var snapshot = Snapshot(entity: thing, key: 1)
        snapshot[attribute: "zeta", in: thing] = "z"
        snapshot[attribute: "alpha", in: thing] = 7
        snapshot[attribute: "Mid", in: thing] = 0.5
        snapshot[attribute: "name", in: thing] = "n"
        let scratch = Scratch()
        let url = scratch.url("things.binary")
        try BinaryStore.write(
            [snapshot], to: url, model: writing, metadata: StoreMetadata.make(for: writing, storeType: .binary))
        let read = try readStore(url, model: reading)
        let readThing = try #require(reading.entity(named: "Thing"))
        let back = try #require(read.first)
        #expect(back[attribute: "zeta", in: readThing] == "z")
        #expect(back[attribute: "alpha", in: readThing] == 7)
        #expect(back[attribute: "Mid", in: readThing] == 0.5)
        #expect(back[attribute: "name", in: readThing] == "n")
        #expect(back[attribute: "cache", in: readThing] == nil)
    }

    @Test func headerRoundTrips() throws {
        let header = BinaryStoreHeader(
            metadataOffset: 1000, metadataLength: 24, mapLength: 936, primaryKeyCounter: 0x0102_0304_0506_0708)
        let bytes = header.encoded
        #expect(bytes.count == 64)
        #expect(Array(bytes.prefix(16)) == Array("CoreData".utf8) + [0, 0, 0, 1, 0x08, 0x04, 0x08, 0x00])
        #expect(Array(bytes[48..<56]) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(try BinaryStoreHeader(decoding: bytes, fileSize: 1024) == header)
    }
}
