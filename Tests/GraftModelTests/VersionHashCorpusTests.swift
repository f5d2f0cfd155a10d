import Foundation
import GraftCore
import GraftTestSupport
import Testing

@testable import GraftModel

/// Checks Graft's version hashes against every hash Apple's tools recorded in the corpus.
@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
struct VersionHashCorpusTests {
    static let bundles = Corpus.paths { $0.pathExtension == "momd" }

    /// The `.xcdatamodeld` with the same name as a `.momd`, anywhere in the same project of the corpus.
    static func sourceBundle(for momd: String) -> String? {
        let name = URL(fileURLWithPath: momd).deletingPathExtension().lastPathComponent
        let project = momd.split(separator: "/").first.map(String.init) ?? ""
        return Corpus.paths { $0.lastPathComponent == "\(name).xcdatamodeld" }.first { $0.hasPrefix(project + "/") }
    }

    @Test(arguments: bundles)
    func compiledModelsMatchTheirVersionInfo(momd: String) throws {
        let file = try ModelFile.load(Corpus.url(momd))
        let source = try Self.sourceBundle(for: momd).map { try ModelFile.load(Corpus.url($0)) }
        for version in file.versions {
            let recorded = file.recordedVersionHashes[version.name] ?? [:]
            for (entity, hash) in recorded {
                #expect(
                    version.model.entity(named: entity)?.versionHash == hash, "\(momd) \(version.name).mom: \(entity)")
                if let model = source?.version(named: version.name) {
                    #expect(model.entity(named: entity)?.versionHash == hash, "\(version.name).xcdatamodel: \(entity)")
                }
            }
            if !recorded.isEmpty { #expect(Set(recorded.keys) == Set(version.model.versionHashes.keys)) }
            if let checksum = file.recordedVersionChecksums[version.name] {
                #expect(version.model.versionChecksum == checksum, "\(momd) \(version.name): checksum")
                if let model = source?.version(named: version.name) { #expect(model.versionChecksum == checksum) }
            }
        }
        if momd.contains("EmployeeDirectory") {
            // Its VersionInfo.plist (OpenStep text) records only the current version's name.
            #expect(file.recordedVersionHashes.isEmpty)
        } else {
            #expect(!file.recordedVersionHashes.isEmpty, "\(momd) records no hashes")
        }
    }
}
