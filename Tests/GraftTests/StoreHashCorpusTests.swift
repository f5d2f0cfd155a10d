import Foundation
import Graft
import GraftTestSupport
import Testing

/// Checks the version hashes Graft computes for SQLite stores against the ones their metadata records:
/// from the store's own model cache, and from the `.xcdatamodel` the corpus manifest names as its match.
@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
struct StoreHashCorpusTests {
    /// One SQLite store in the manifest, with the `.xcdatamodel` it names as its match.
    struct StoreCase: CustomTestStringConvertible, Sendable {
        let path: String
        let matchingModel: String?
        var testDescription: String { path }
    }

    static let stores: [StoreCase] = {
        guard let manifest = try? String(contentsOf: Corpus.url("MANIFEST.txt"), encoding: .utf8) else { return [] }
        return manifest.split(separator: "\n").compactMap { line -> StoreCase? in
            let columns = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard columns.count >= 7, !line.hasPrefix("#"),
                columns[0].hasSuffix(".sqlite") || columns[0].hasSuffix(".wiredatabase")
            else { return nil }
            let match = columns[6].split(separator: " ").first { $0.hasPrefix("xcdatamodel-match:") }
            var name = match.map { String($0.dropFirst("xcdatamodel-match:".count)) }
            // Names with spaces ("CoreDataMigration_Example 2.xcdatamodel") continue past the split.
            if let start = columns[6].range(of: "xcdatamodel-match:"),
                let end = columns[6].range(of: ".xcdatamodel", range: start.upperBound..<columns[6].endIndex)
            {
                name = String(columns[6][start.upperBound..<end.upperBound])
            }
            return StoreCase(path: columns[0], matchingModel: name)
        }
    }()

    /// Entities whose recorded hash no model file in the corpus reproduces, with the reason.
    static let knownExceptions: [String: String] = [
        "wire-ios-data-model/Tests/Resources/store1-24.wiredatabase":
            "written by model version 1.24, which is not in the corpus; zmessaging1.27 shares only 3 of its 10 entities"
    ]

    @Test(arguments: stores)
    func storeMetadataMatchesItsModelCacheAndModelFile(store: StoreCase) throws {
        let file = try SQLiteStoreFile.read(Corpus.url(store.path))
        let recorded = file.recordedVersionHashes
        #expect(!recorded.isEmpty, "\(store.path) records no hashes")
        if file.modelCache != nil {
            let cache = try file.cachedModel()
            #expect(Set(cache.versionHashes.keys) == Set(recorded.keys))
            for (entity, hash) in recorded {
                #expect(cache.entity(named: entity)?.versionHash == hash, "\(store.path) model cache: \(entity)")
            }
            if let digest = file.metadata["NSStoreModelVersionHashesDigest"]?.stringValue {
                #expect(cache.versionHashesDigest == digest)
            }
            if let checksum = file.metadata["NSStoreModelVersionChecksumKey"]?.stringValue {
                #expect(cache.versionChecksum == checksum)
            }
        }
        guard let name = store.matchingModel else { return }
        // The same name may appear in several projects and folders: take the one nearest the store.
        func shared(_ path: String) -> Int { zip(path, store.path).prefix { $0 == $1 }.count }
        let candidates = Corpus.paths { $0.lastPathComponent == name && $0.pathExtension == "xcdatamodel" }
            .sorted { shared($0) > shared($1) }
        let path = try #require(candidates.first, "no \(name) in the corpus")
        let model = try ModelFile.load(Corpus.url(path)).current
        let mismatched = recorded.keys.sorted().filter { model.entity(named: $0)?.versionHash != recorded[$0] }
        if let reason = Self.knownExceptions[store.path] {
            #expect(!mismatched.isEmpty, "\(store.path) is listed as an exception (\(reason)) but now matches")
        } else {
            #expect(mismatched.isEmpty, "\(store.path) vs \(name): \(mismatched)")
        }
    }
}
