import Foundation
import Graft
import GraftTestSupport
import Testing

/// Every corpus store through every format and back, compared object by object with the original.
@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
struct ConversionCorpusTests {
    static let sqliteStores = Corpus.sqliteStores

    static let xmlStores = Corpus.paths {
        ["xml", "mslice"].contains($0.pathExtension) && $0.path.contains("xml-stores")
    }

    func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("graft-chain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test(arguments: sqliteStores)
    func sqliteToXMLToBinaryToSQLiteLosesNothing(path: String) throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = Corpus.url(path)
        var options = Conversion.Options(reading: StoreReadOptions(missingExternalData: .omit))
        options.verify = true
        let xml = folder.appendingPathComponent("a.xml"), binary = folder.appendingPathComponent("b.binary")
        let last = folder.appendingPathComponent("c.sqlite")
        _ = try Conversion.convert(from: source, to: xml, options: options)
        options.reading.missingExternalData = .fail
        _ = try Conversion.convert(from: xml, to: binary, options: options)
        _ = try Conversion.convert(from: binary, to: last, options: options)
        // References to missing objects cannot be written to XML: they are left out from the start.
        let first = try SQLiteStoreReader(
            url: source, model: nil, missingExternalData: .omit, danglingReferences: .drop)
        let differences = try Verification.differences(between: first, and: SQLiteStoreReader(url: last, model: nil))
        #expect(differences.isEmpty, "\(differences.prefix(5))")
        #expect(try SQLiteStoreReader(url: last, model: nil).metadata.identifier == first.metadata.identifier)
    }

    @Test(arguments: xmlStores)
    func xmlToSQLiteAndBackLosesNothing(path: String) throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = Corpus.url(path)
        let original = try XMLStoreReader(url: source, model: nil)  // a model inferred from the document
        let options = Conversion.Options(verify: true)
        let sqlite = folder.appendingPathComponent("a.sqlite"), back = folder.appendingPathComponent("b.xml")
        let report = try Conversion.convert(from: source, to: sqlite, options: options)
        #expect(report.objects > 0)
        _ = try Conversion.convert(from: sqlite, to: back, options: options)
        // The document now carries the model it was written with (its properties in name order).
        #expect(try XMLStoreReader(url: back, model: nil).model.versionHashes == original.model.versionHashes)
        let again = try XMLStoreReader(url: back, model: original.model)
        let differences = try Verification.differences(between: original, and: again)
        #expect(differences.isEmpty, "\(differences.prefix(5))")
        // Unknown metadata keys come through.
        for key in original.metadata.values.keys where !key.hasPrefix("NS") {
            #expect(again.metadata.values[key] == original.metadata.values[key], "\(key)")
        }
    }
}
