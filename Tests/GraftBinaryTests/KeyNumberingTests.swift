import Foundation
import GraftBinary
import GraftCore
import GraftGraph
import GraftModel
import Testing

/// Key offsets recorded in the metadata that do not fit the objects written: `finish()` names the
/// first problem a pass over the objects in the order they were written meets.
@Suite struct KeyNumberingTests {
    func finish(_ refs: [(entity: String, key: Int64)], offsets: [String: Int64]) throws {
        let model = Company.model
        var metadata = Company.metadata()
        DocumentKeys.record(
            Dictionary(uniqueKeysWithValues: offsets.map { (model.entity(named: $0.key)!.index, $0.value) }),
            model: model, in: &metadata)
        let scratch = Scratch()
        var writer = try BinaryStoreWriter(url: scratch.url("Keys.binary"), model: model, metadata: metadata)
        for ref in refs { try writer.write(Snapshot(entity: model.entity(named: ref.entity)!, key: ref.key)) }
        try writer.finish()
    }

    func message(_ refs: [(entity: String, key: Int64)], offsets: [String: Int64]) -> String? {
        #expect(throws: GraftError.self) { try finish(refs, offsets: offsets) }
        do {
            try finish(refs, offsets: offsets)
            return nil
        } catch let error as GraftError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func twoObjectsSharingAKey() {
        let text = message([("Employee", 6), ("Department", 1), ("Department", 2)], offsets: ["Department": 5])
        #expect(text?.hasPrefix("Employee p6 and Department p1 would share key 6 in the document") == true)
    }

    @Test func theClashWhoseSecondObjectComesFirst() {
        let text = message(
            [("Department", 3), ("Employee", 7), ("Employee", 9), ("Department", 4), ("Employee", 8)],
            offsets: ["Department": 5])
        // 3 + 5 = 8 (fifth), 4 + 5 = 9 (fourth, met first).
        #expect(text?.hasPrefix("Employee p9 and Department p4 would share key 9 in the document") == true)
    }

    @Test func aKeyTooLargeBeforeAClash() {
        let text = message(
            [("Project", 2), ("Employee", 6), ("Department", 1)], offsets: ["Department": 5, "Project": Int64.max])
        #expect(text == "key 2 is too large to give every object its own key")
    }

    @Test func aClashBeforeAKeyTooLarge() {
        let text = message(
            [("Employee", 6), ("Department", 1), ("Project", 2)], offsets: ["Department": 5, "Project": Int64.max])
        #expect(text?.hasPrefix("Employee p6 and Department p1 would share key 6 in the document") == true)
    }

    /// Trees whose keys reach Int64's largest value cannot all be moved apart: the offsets saturate
    /// rather than trap, and the writer says the keys do not fit.
    @Test func treesAtTheEndOfInt64() {
        let offsets = DocumentKeys.offsets(maxKeys: [0: .max, 1: .max, 2: 5], collide: true)
        #expect(offsets == [0: 0, 1: .max, 2: .max])
        let text = message([("Department", .max), ("Employee", 1), ("Department", 1)], offsets: [:])
        #expect(text?.hasSuffix("is too large to give every object its own key") == true, "\(text ?? "")")
    }

    /// A key that its tree's recorded offset would move past Int64's smallest value: an error when the
    /// document is opened, not a trap when it is read.
    @Test func aKeyTheOffsetCannotMoveBack() throws {
        var values = try #require(
            try KeyedArchive(data: InvalidInputTests.validMetadata).topObject(forKey: "metadata")?
                .decodePropertyList().dictionaryValue)
        var model = Company.metadata()
        DocumentKeys.record([Company.model.entity(named: "Project")!.index: 5], model: Company.model, in: &model)
        values[DocumentKeys.metadataKey] = model.values[DocumentKeys.metadataKey]
        var archiver = KeyedArchiver()
        let root = archiver.encodePropertyList(.dictionary(values))
        let metadata = archiver.finish(top: ["metadata": root]).encode(format: .binary)
        let node = HandMade.Node(key: .min, entity: "Project", attributes: .byName([("title", "Apollo")]), related: [:])
        let scratch = Scratch()
        let url = scratch.url("keys.binary")
        try InvalidInputTests.assemble(map: InvalidInputTests.handMap([node]), metadata: metadata).write(to: url)
        let error = try #require(throws: GraftError.self) { try BinaryStoreReader(url: url, model: Company.model) }
        #expect(error.code == .malformedInput)
        #expect(
            error.message
                == "object map: the primary key -9223372036854775808 cannot be moved back by the offset 5 that "
                + "GraftKeyOffsets records for its entity's tree (it would pass -9223372036854775808)")
    }
}
