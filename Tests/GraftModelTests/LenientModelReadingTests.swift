import Foundation
import GraftCore
import GraftTestSupport
import Testing

@_spi(GraftInternal) @testable import GraftModel

/// Model files hold what a model built in code or by a newer Xcode can hold, and Core Data reads more
/// than it would let an editor write: a maximum count of -1 on a to-many, an `ordered` flag on a to-one.
/// Graft reads them as Core Data does, says so in a warning, and keeps what the version hash needs.
@Suite struct LenientModelReadingTests {
    /// A compiled model of two entities, `Event` and `Net`, joined by `Event.net` (to-one) and
    /// `Net.events` (to-many), archived by hand with the relationships' `_P` words and counts given.
    static func archive(
        toOneFlags: Int64 = 0xF1, toManyFlags: Int64 = 0xF3, toManyMaximum: Int64 = 0, toOneMinimum: Int64 = 1
    ) -> Data {
        var archiver = KeyedArchiver()
        let relationshipChain = ["NSRelationshipDescription", "NSPropertyDescription", "NSObject"]
        let entityChain = ["NSEntityDescription", "NSObject"]
        func relationship(
            _ name: String, to destination: String, inverse: String, flags: Int64, minimum: Int64, maximum: Int64
        ) -> KeyedArchiver.UID {
            archiver.encodeObject(
                classChain: relationshipChain,
                fields: [
                    "NSPropertyName": archiver.encode(name).propertyList,
                    "_NSDestinationEntityName": archiver.encode(destination).propertyList,
                    "_NSInverseRelationshipName": archiver.encode(inverse).propertyList, "_P": .integer(flags),
                    "NSMinCount": .integer(minimum), "NSMaxCount": .integer(maximum), "NSDeleteRule": 1,
                ])
        }
        func entity(_ name: String, _ properties: KeyValuePairs<String, KeyedArchiver.UID>) -> KeyedArchiver.UID {
            let list = archiver.encodeDictionary(properties, mutable: true)
            return archiver.encodeObject(
                classChain: entityChain,
                fields: [
                    "NSEntityName": archiver.encode(name).propertyList, "NSProperties": list.propertyList,
                    "NSSuperentity": KeyedArchiver.UID.null.propertyList,
                ])
        }
        let net = relationship(
            "net", to: "Net", inverse: "events", flags: toOneFlags, minimum: toOneMinimum, maximum: 1)
        let events = relationship(
            "events", to: "Event", inverse: "net", flags: toManyFlags, minimum: 0, maximum: toManyMaximum)
        let event = entity("Event", ["net": net])
        let netEntity = entity("Net", ["events": events])
        let entities = archiver.encodeDictionary(["Event": event, "Net": netEntity])
        let model = archiver.encodeObject(
            classChain: ["NSManagedObjectModel", "NSObject"], fields: ["NSEntities": entities.propertyList])
        return BinaryPropertyList.encode(archiver.finish(top: ["root": model]))
    }

    /// The relationship hash spelled out: SHA-256(SHA-256(name ‖ flags) ‖ destination ‖ inverse ‖ max ‖ min ‖ ordered).
    static func relationshipHash(
        _ name: String, flags: UInt16, destination: String, inverse: String, maximum: Int32, minimum: Int32,
        ordered: Bool
    ) -> [UInt8] {
        var property = Array(name.utf8)
        property += [UInt8(flags & 0xFF), UInt8(flags >> 8)]
        var bytes = VersionHasher.sha256(property) + Array(destination.utf8) + Array(inverse.utf8)
        withUnsafeBytes(of: maximum.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: minimum.littleEndian) { bytes += $0 }
        if ordered { bytes += [1, 0] }
        return VersionHasher.sha256(bytes)
    }

    @Test func aToOneMarkedOrderedIsReadAsAToOneWithAWarning() throws {
        var warnings: [String] = []
        let model = try CompiledModelReader.read(
            Self.archive(toOneFlags: 0x4F1), path: "small.mom", warnings: &warnings)
        let net = try #require(model.entity(named: "Event")?.relationship(named: "net"))
        #expect(!net.isToMany)
        #expect(!net.isOrdered)
        #expect(net.inapplicable.isOrdered)
        #expect(warnings.count == 1)
        #expect(warnings.first?.hasPrefix("small.mom: Event.net: ") == true, "\(warnings)")
        #expect(warnings.first?.contains("ordered") == true)
        // The flag still takes part in the hash, as DataUsage.sqlite's recorded hashes show.
        let expected = Self.relationshipHash(
            "net", flags: 0, destination: "Net", inverse: "events", maximum: 1, minimum: 1, ordered: true)
        #expect(VersionHasher.hash(of: net.declaration, owner: "Event") == expected)
    }

    @Test func aMaximumCountOfMinusOneIsUnbounded() throws {
        var warnings: [String] = []
        let model = try CompiledModelReader.read(Self.archive(toManyMaximum: -1), warnings: &warnings)
        let events = try #require(model.entity(named: "Net")?.relationship(named: "events"))
        #expect(events.isToMany)
        #expect(events.maxCount == 0)
        #expect(events.inapplicable.maxCount == -1)
        #expect(warnings == ["Net.events: its maximum count -1 is read as unbounded, as Core Data reads it"])
        // -[NSRelationshipDescription _versionHash:inStyle:proxyContext:] hashes the count Core Data
        // decoded, -1, not 0.
        let expected = Self.relationshipHash(
            "events", flags: 1, destination: "Event", inverse: "net", maximum: -1, minimum: 0, ordered: false)
        #expect(VersionHasher.hash(of: events.declaration, owner: "Net") == expected)
        let unbounded = try CompiledModelReader.read(Self.archive(toManyMaximum: 0))
        #expect(unbounded.versionHashes["Net"] != model.versionHashes["Net"])
    }

    @Test func theReadWithoutWarningsIsJustAsLenient() throws {
        let model = try CompiledModelReader.read(Self.archive(toOneFlags: 0x4F1, toManyMaximum: -1))
        #expect(model.entity(named: "Event")?.relationship(named: "net")?.inapplicable.isOrdered == true)
        #expect(model.entity(named: "Net")?.relationship(named: "events")?.inapplicable.maxCount == -1)
    }

    @Test(arguments: CompiledModelWriter.Layout.allCases)
    func writtenBackTheyAreWhatCoreDataKept(layout: CompiledModelWriter.Layout) throws {
        let model = try CompiledModelReader.read(Self.archive(toOneFlags: 0x4F1, toManyMaximum: -1))
        let archive = CompiledModelWriter.archive(model, layout: layout)
        var warnings: [String] = []
        let again = try CompiledModelReader.read(archive, warnings: &warnings)
        #expect(again.versionHashes == model.versionHashes)
        #expect(warnings.count == 2)
        let root = try #require(try KeyedArchive(data: archive).topObject(forKey: "root"))
        let entities = try #require(try root["NSEntities"]?.decodeStringKeyedDictionary())
        func property(_ entity: String, _ name: String) throws -> ArchivedObject {
            let owner = try #require(entities.first { $0.key == entity }?.value)
            let properties = try #require(try owner["NSProperties"]?.decodeStringKeyedDictionary())
            return try #require(properties.first { $0.key == name }?.value)
        }
        #expect(try property("Event", "net").bool(forKey: "NSIsOrdered") == true)
        #expect(try property("Event", "net").rawField("_P")?.int64Value == 0x4F1)
        #expect(try property("Net", "events").integer(forKey: "NSMaxCount") == -1)
    }

    @Test func aNegativeMinimumCountIsAnError() {
        #expect {
            try CompiledModelReader.read(Self.archive(toOneMinimum: -2), path: "bad.mom")
        } throws: { error in
            (error as? GraftError)?.code == .malformedInput && "\(error)".contains("negative")
                && "\(error)".contains("bad.mom")
        }
    }

    @Test func modelsBuiltInCodeStillRefuseWhatDoesNotApply() {
        let ordered = Entity(
            name: "A", relationships: [Relationship(name: "b", destination: "A", inverse: "b", isOrdered: true)])
        #expect(throws: GraftError.self) { try Model(entities: [ordered]) }
        let negative = Entity(
            name: "A", relationships: [Relationship(name: "b", destination: "A", isToMany: true, maxCount: -1)])
        #expect(throws: GraftError.self) { try Model(entities: [negative]) }
    }

    // MARK: .xcdatamodel

    static let contents = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Event" syncable="YES">
                <relationship name="net" maxCount="1" ordered="YES" deletionRule="Nullify" destinationEntity="Net" inverseName="events" inverseEntity="Net"/>
            </entity>
            <entity name="Net" syncable="YES">
                <relationship name="events" optional="YES" toMany="YES" maxCount="-1" deletionRule="Nullify" destinationEntity="Event" inverseName="net" inverseEntity="Event"/>
            </entity>
        </model>
        """

    @Test func anXcdatamodelIsReadAsLeniently() throws {
        var warnings: [String] = []
        let model = try XcdatamodelReader.read(Data(Self.contents.utf8), path: "Net.xcdatamodel", warnings: &warnings)
        #expect(warnings.count == 2)
        #expect(warnings.contains { $0.hasPrefix("Net.xcdatamodel: Event.net: ") && $0.contains("ordered") })
        #expect(warnings.contains { $0.hasPrefix("Net.xcdatamodel: Net.events: ") && $0.contains("-1") })
        let compiled = try CompiledModelReader.read(
            Self.archive(toOneFlags: 0x4F1, toManyMaximum: -1, toOneMinimum: 0))
        // The same declarations hash alike however they were written down.
        #expect(model.versionHashes == compiled.versionHashes)
        // And the .xcdatamodel Graft writes keeps them.
        let again = try XcdatamodelReader.read(XcdatamodelWriter.contents(of: model))
        #expect(again.versionHashes == model.versionHashes)
        #expect(again == model)
    }

    @Test func modelFilesCarryTheirWarnings() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-lenient-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let version = folder.appendingPathComponent("Net.xcdatamodeld/Net.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Data(Self.contents.utf8).write(to: version.appendingPathComponent("contents"))
        let file = try ModelFile.load(folder.appendingPathComponent("Net.xcdatamodeld"))
        #expect(file.warnings.count == 2)
        #expect(file.warnings.allSatisfy { $0.contains("Net.xcdatamodel/contents: ") }, "\(file.warnings)")
        let mom = folder.appendingPathComponent("Net.mom")
        try CompiledModelWriter.write(file.current, to: mom)
        #expect(try ModelFile.load(mom).warnings.count == 2)
    }

    // MARK: Compressed data

    @Test func aTruncatedModelCacheIsAnErrorNotACrash() throws {
        let model = try CompiledModelReader.read(Self.archive())
        let cache = try CompiledModelWriter.modelCache(model)
        for length in [0, 1, cache.count / 2, cache.count - 1] {
            #expect {
                try RawDeflate.inflate(cache.prefix(length))
            } throws: { error in
                (error as? GraftError)?.code == .malformedInput
            }
        }
        #expect {
            try RawDeflate.inflate(cache.prefix(cache.count / 2))
        } throws: { error in
            "\(error)".contains("the compressed data is truncated")
        }
    }
}
