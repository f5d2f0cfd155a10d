import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel
import GraftTestSupport
import Testing

/// Writers in one process, on two threads, never undo each other's work: stores opened with
/// `StoreFormat.openExclusively` read, change and save one at a time, and `Paster.paste(_:intoStoreAt:)`
/// pastes that way.
@Suite struct ConcurrentWriterTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-writers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func example(_ format: String) throws -> URL {
        let url = folder.appendingPathComponent("Company.\(format)")
        try FileManager.default.copyItem(at: Project.url("examples/Company/Company.\(format)"), to: url)
        return url
    }

    static func salesCode(_ url: URL) throws -> Int64? {
        let context = ObjectContext(store: try StoreFormat.openForReading(url, model: nil))
        var request = FetchRequest(entityName: "Department")
        request.predicate = try GraftPredicate(format: "name == 'Sales'")
        return try context.fetch(request).first?.value(forKey: "code") as? Int64
    }

    /// Each of two threads adds 1 to the Sales department's code `rounds` times: read, change, save.
    @Test(arguments: ["xml", "binary", "sqlite"])
    func readChangeSaveRoundsOnTwoThreadsLoseNoUpdate(format: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try example(format)
        let start = try #require(try Self.salesCode(url))
        let rounds = 20
        let threads = (0..<2).map { _ in
            Background { () -> Int in
                for _ in 0..<rounds {
                    let context = ObjectContext(store: try StoreFormat.openExclusively(url, model: nil, wait: 60))
                    var request = FetchRequest(entityName: "Department")
                    request.predicate = try GraftPredicate(format: "name == 'Sales'")
                    let sales = try #require(try context.fetch(request).first)
                    let code = try #require(sales.value(forKey: "code") as? Int64)
                    try sales.setValue(code + 1, forKey: "code")
                    try context.save()
                }
                return rounds
            }
        }
        for thread in threads { #expect(try thread.wait(120)?.get() == rounds) }
        #expect(try Self.salesCode(url) == start + Int64(2 * rounds))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".graft-") }.isEmpty)
    }

    @Test func pastesOnTwoThreadsIntoOneDocumentAllLand() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try example("xml")
        let source = try StoreFormat.openForReading(Project.url("examples/Company/Company.sqlite"), model: nil)
        let copier = Copier(source: StoreSource(source))
        let selection = Selection(roots: [.predicate(entity: "Project", format: "title == 'Compiler'")], depth: 0)
        let data = try ClipboardEncoding.json.encode(
            try copier.clipboard(for: try copier.plan(selection), selection: selection))
        let rounds = 20
        let threads = (0..<2).map { _ in
            Background { () -> [String] in
                var uris: [String] = []
                for _ in 0..<rounds {
                    let clipboard = try ClipboardEncoding.decode(data)
                    let paster = Paster(options: PasteOptions(dangling: .drop, wait: 60))
                    uris += try paster.paste(clipboard, intoStoreAt: url).idMap.map(\.uri)
                }
                return uris
            }
        }
        var uris: [String] = []
        for thread in threads { uris += try #require(thread.wait(120)).get() }
        #expect(uris.count == 2 * rounds)
        #expect(Set(uris).count == uris.count)
        let store = try StoreFormat.openForReading(url, model: nil)
        for uri in uris {
            let (_, id) = try ObjectID.parse(uri: uri, model: store.model)
            #expect(try store.snapshot(for: id.ref) != nil, "\(uri) is not in the store")
        }
    }
}
