import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import GraftXML
import Testing

/// Every Apple-written (and hand-edited) XML store in the corpus reads, with an inferred model, and
/// round-trips.
@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
struct CorpusTests {
    static let stores: [String] = Corpus.paths { url in
        url.path.contains("/xml-stores/") && ["xml", "mslice"].contains(url.pathExtension)
    }

    @Test func theCorpusHasXMLStores() {
        #expect(Self.stores.count >= 6, "found \(Self.stores)")
    }

    @Test(arguments: stores)
    func readsEveryObject(path: String) throws {
        let url = Corpus.url(path)
        let reader = try XMLStoreReader(url: url, model: nil)
        #expect(reader.modelSource == .inferred)
        #expect(!reader.warnings.isEmpty)
        var counts: [String: Int] = [:]
        try reader.forEachSnapshot { snapshot in
            counts[reader.model.descriptions[snapshot.ref.entity].name.uppercased(), default: 0] += 1
        }
        #expect(counts == (try Support.objectCountsByRegex(url)))
        #expect(reader.objectCount == counts.values.reduce(0, +))
    }

    @Test func entityNamesTakeTheirCaseFromTheVersionHashes() throws {
        let reader = try XMLStoreReader(url: Corpus.url("xml-stores/ThingerMajigger/data/Database.xml"), model: nil)
        let names = Set(reader.model.descriptions.map(\.name))
        #expect(names.isSubset(of: Set(reader.metadata.versionHashes.keys)), "\(names)")
        #expect(reader.model.entity(named: "ToDo")?.superentityIndex == reader.model.entity(named: "Note")?.index)
        #expect(reader.model.entity(named: "Focus")?.superentityIndex == reader.model.entity(named: "Thing")?.index)
        #expect(reader.model.entity(named: "ToDo")?.attribute(named: "recurrenceruledata")?.type == .binary)
    }

    @Test(arguments: stores)
    func roundTripsWithAnInferredModel(path: String) throws {
        let (first, _, copy) = try Support.expectRoundTrip(Corpus.url(path), model: nil)
        #expect(!first.isEmpty)
        defer { Support.cleanUp(copy.deletingLastPathComponent()) }
    }
}
