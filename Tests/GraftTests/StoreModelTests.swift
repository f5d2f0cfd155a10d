import Foundation
import Graft
import GraftTestSupport
import Testing

/// The model a store is read with, from a model file with several versions, and what Graft says of it.
@Suite struct StoreModelTests {
    static let models = Project.url("examples/Company/Company.xcdatamodeld")

    /// An empty store written with `version` of the Company model, in `format`.
    func store(_ version: String, format: StoreFormat) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-version-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("store.\(format.rawValue)")
        let model = try #require(try ModelFile.load(Self.models).version(named: version))
        var writer = try format.driver.writer(
            at: url, model: model,
            metadata: StoreMetadata.make(for: model, storeType: format.storeType),
            overwrite: false)
        try writer.finish()
        return url
    }

    @Test(arguments: StoreFormat.allCases)
    func theVersionWhoseHashesTheStoreRecordsIsChosen(format: StoreFormat) throws {
        let old = try store("Company", format: format)
        defer { try? FileManager.default.removeItem(at: old.deletingLastPathComponent()) }
        let chosen = try ModelLoading.model(at: Self.models, forStoreAt: old)
        #expect(chosen.versionName == "Company")
        #expect(chosen.chosenByHashes)
        #expect(StoreReport.versionNote(chosen)?.contains("the current version is Company 2") == true)
        let reader = try format.driver.reader(at: old, model: chosen.model, options: StoreReadOptions())
        #expect(reader.modelSource == .given)
        let file = StoreReport.modelFile(of: reader, at: old, format: format, given: chosen)
        #expect(file.format == .xcdatamodeld)
        #expect(file.currentVersionName == "Company")

        let current = try store("Company 2", format: format)
        defer { try? FileManager.default.removeItem(at: current.deletingLastPathComponent()) }
        let same = try ModelLoading.model(at: Self.models, forStoreAt: current)
        #expect(same.versionName == "Company 2")
        #expect(!same.chosenByHashes)
    }

    @Test func aStoreReadWithItsOwnModelSaysSo() throws {
        let url = try store("Company 2", format: .sqlite)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let reader = try StoreFormat.sqlite.driver.reader(at: url, model: nil, options: StoreReadOptions())
        #expect(reader.modelSource == .modelCache)
        #expect(StoreReport.modelFile(of: reader, at: url, format: .sqlite, given: nil).format == .storeModelCache)
    }
}
