import Foundation
import GraftBinary
import GraftCore
import GraftGraph
@_spi(GraftInternal) import GraftModel
import GraftTestSupport
import Testing

/// A store that carries its model (`GraftModelCache`: a compiled model, raw deflate) can be read
/// without one: an Apple-compiled `.mom` from the corpus, or the cache Graft writes itself.
@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
struct ModelCacheTests {
    static let moms = [
        "models/FreeCoreData/Examples/EmployeeDirectory/EmployeeDirectory.momd/EmployeeDirectory.mom",
        "coredataplus/Tests/Resources/SampleModel3/Fixtures/SampleModel3.momd/SampleModel3.mom",
    ]

    @Test(arguments: moms)
    func storeIsReadWithTheModelItCarries(mom: String) throws {
        let compiled = try Data(contentsOf: Corpus.url(mom))
        let model = try CompiledModelReader.read(compiled, path: mom)
        let entities = model.descriptions.filter { !$0.isAbstract }
        let snapshots = entities.enumerated().map { Snapshot(entity: $1, key: Int64($0 + 1)) }
        var metadata = StoreMetadata.make(for: model, storeType: .binary)
        metadata.values[StoreMetadata.graftModelKey] = .data(try RawDeflate.deflate(compiled))
        let scratch = Scratch()
        let url = scratch.url("cached.binary")
        try BinaryStore.write(snapshots, to: url, model: model, metadata: metadata)
        let reader = try BinaryStoreReader(url: url, model: nil)
        #expect(reader.model.versionHashes == model.versionHashes)
        #expect(try readStore(url, model: nil) == snapshots.sorted { $0.ref < $1.ref })
        #expect(reader.metadata.values[StoreMetadata.graftModelKey] != nil)
    }

    @Test func documentsCarryTheirModel() throws {
        let scratch = Scratch()
        let url = scratch.url("carried.binary")
        try writeStore(Company.edgeDocument, to: url)
        let reader = try BinaryStoreReader(url: url, model: nil)
        #expect(reader.model.versionHashes == Company.model.versionHashes)
    }
}
