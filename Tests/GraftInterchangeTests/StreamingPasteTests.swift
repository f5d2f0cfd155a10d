import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftSQLite
import GraftTestSupport
import Testing

@testable import GraftInterchange

/// The streaming paste into a new document writes what the paste engine writes, object for object and
/// key for key, and leaves to the engine the documents it cannot stream.
@Suite struct StreamingPasteTests {
    static let model = Company.v2

    static func everything() throws -> Clipboard {
        try Copier(source: try Company.source()).copy(Selection(roots: [.all]))
    }

    /// The clipboard pasted by the streaming paste, or nil when it hands the paste to the engine.
    static func streamed(_ clipboard: Clipboard, format: StoreFormat, to url: URL) throws -> PasteReport? {
        var source = ClipboardObjects(clipboard)
        let metadata = StoreMetadata.make(for: model, storeType: format.storeType)
        switch try StreamingPaste<ClipboardObjects>(model: model, options: PasteOptions(dangling: .drop)).run(
            &source, into: url, format: format, metadata: metadata, progress: nil)
        {
        case .pasted(let report): return report
        case .needsEngine: return nil
        }
    }

    /// The same clipboard pasted by the engine in memory.
    static func engine(_ clipboard: Clipboard, format: StoreFormat, to url: URL) throws {
        let metadata = StoreMetadata.make(for: model, storeType: format.storeType)
        var plan = try PastePlan(clipboard: clipboard, model: model, options: PasteOptions(dangling: .drop))
        try plan.resolve(using: EmptyTarget(model: model, identifier: metadata.identifier))
        var next: Int64 = 0
        let result = try PasteEngine(plan: plan).run(on: EmptyTarget(model: model, identifier: metadata.identifier)) {
            _, count in
            defer { next += Int64(count) }
            return (1...Int64(max(count, 1))).prefix(count).map { next + $0 }
        }
        try format.driver.write(result.inserted, to: url, model: model, metadata: metadata, overwrite: false)
    }

    /// Every object of the document at `url`, to-manys as sets unless ordered.
    static func contents(_ url: URL) throws -> [String] {
        let store = try StoreFormat.openForReading(url, model: model)
        var lines: [String] = []
        for entity in model.descriptions where !entity.isAbstract {
            for ref in try store.fetch(StoreFetch(entities: [entity.index])).refs {
                let snapshot = try #require(try store.snapshot(for: ref))
                var line = "\(entity.name) p\(ref.key): \(snapshot.attributes)"
                for relationship in entity.relationships {
                    var refs = snapshot.relationships[relationship.index].refs
                    if case .unloaded = snapshot.relationships[relationship.index] {
                        refs = try store.relatedRefs(of: ref, relationship: relationship.index)
                    }
                    let shown = refs.map { "\($0.entity)/\($0.key)" }
                    line += " \(relationship.name)=\(relationship.isOrdered ? shown : shown.sorted())"
                }
                lines.append(line)
            }
        }
        return lines.sorted()
    }

    @Test(arguments: StoreFormat.allCases)
    func streamingWritesWhatTheEngineWrites(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clipboard = try Self.everything()
        let streamedURL = folder.appendingPathComponent("streamed.\(format.driver.fileExtensions[0])")
        let engineURL = folder.appendingPathComponent("engine.\(format.driver.fileExtensions[0])")
        let report = try #require(try Self.streamed(clipboard, format: format, to: streamedURL))
        try Self.engine(clipboard, format: format, to: engineURL)
        #expect(try Self.contents(streamedURL) == Self.contents(engineURL))
        #expect(report.inserted.values.reduce(0, +) == clipboard.objects.count)
        #expect(report.idMapCount == clipboard.objects.count)
        try expectPasted(clipboard, report, in: try StoreFormat.openForReading(streamedURL, model: Self.model))
    }

    /// From a file, whose second pass reads the values alone (the first found where the links point), the
    /// paste writes what the engine writes, in every encoding.
    @Test(arguments: [ClipboardEncoding.json, .plist, .binaryPlist, .xml])
    func aFileStreamsWhatTheEngineWrites(_ encoding: ClipboardEncoding) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clipboard = try Self.everything()
        let file = folder.appendingPathComponent("clipboard.\(encoding.fileExtension)")
        try encoding.encode(clipboard).write(to: file)
        let streamedURL = folder.appendingPathComponent("streamed.sqlite")
        let engineURL = folder.appendingPathComponent("engine.sqlite")
        let report = try Paster(options: PasteOptions(dangling: .drop)).paste(
            clipboardAt: file, intoStoreAt: streamedURL, model: Self.model)
        try Self.engine(clipboard, format: .sqlite, to: engineURL)
        #expect(report.inserted.values.reduce(0, +) == clipboard.objects.count)
        #expect(try Self.contents(streamedURL) == Self.contents(engineURL))
    }

    /// A reader that skips relationships gives the objects without them, values and all, and still refuses
    /// a relationships member that is not a dictionary, naming the object.
    @Test(arguments: [ClipboardEncoding.json, .plist, .binaryPlist])
    func aPassWithoutLinksReadsTheValues(_ encoding: ClipboardEncoding) throws {
        let clipboard = ClipboardSamples.company(objects: 60)
        var reader = try ClipboardReader(data: try encoding.encode(clipboard))
        reader.skipsLinks = true
        for object in clipboard.objects {
            var unlinked = object
            unlinked.relationships = []
            #expect(try reader.next() == unlinked)
        }
        #expect(try reader.next() == nil)

        var text = String(decoding: try ClipboardEncoding.json.encode(ClipboardSamples.small), as: UTF8.self)
        let member = try #require(text.range(of: "\"relationships\": {"))
        // Still JSON, so that the reader is made; the member's value is a number.
        text.replaceSubrange(member, with: "\"relationships\": 7, \"ignored\": {")
        var broken = try ClipboardReader(data: Data(text.utf8))
        broken.skipsLinks = true
        let error = try #require(throws: GraftError.self) { try Self.objectsOf(&broken) }
        #expect(error.context.contains(.object(ClipboardSamples.small.objects[0].id)), "\(error)")
    }

    /// A reader made with a visit hands it, while it reads the header, each object as a pass without
    /// values reads it — in the encodings that do not count their objects up front — and its objects are
    /// then read as ever. A document that breaks a rule is visited for nothing, and fails where it always
    /// fails, with the same error.
    @Test(arguments: [ClipboardEncoding.json, .plist, .binaryPlist, .xml])
    func theHeaderPassVisitsTheObjects(_ encoding: ClipboardEncoding) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clipboard = ClipboardSamples.company(objects: 60)
        let file = folder.appendingPathComponent("clipboard.\(encoding.fileExtension)")
        try encoding.encode(clipboard).write(to: file)
        var visited: [Clipboard.Object] = []
        var reader = try ClipboardReader(contentsOf: file) { object, entities in
            #expect(entities == clipboard.entities)
            visited.append(object)
        }
        let visits = encoding == .json || encoding == .plist
        #expect(reader.visitedObjects == visits)
        var plain = try ClipboardReader(contentsOf: file)
        plain.skipsValues = true
        let shapes = try Self.objectsOf(&plain)
        #expect(visited == (visits ? shapes : []))
        #expect(try Self.objectsOf(&reader) == clipboard.objects)

        // A target no object has: the visit counts for nothing, and the last call of next() says so.
        var missing = clipboard
        let linked = try #require(missing.objects.firstIndex { !$0.relationships.isEmpty })
        missing.objects[linked].relationships[0].targets[0] = "o999999"
        let broken = folder.appendingPathComponent("broken.\(encoding.fileExtension)")
        try encoding.encode(missing).write(to: broken)
        var brokenReader = try ClipboardReader(contentsOf: broken) { _, _ in }
        #expect(!brokenReader.visitedObjects)
        var plainBroken = try ClipboardReader(contentsOf: broken)
        let expected = try #require(throws: GraftError.self) { try Self.objectsOf(&plainBroken) }
        let error = try #require(throws: GraftError.self) { try Self.objectsOf(&brokenReader) }
        #expect(error.message == expected.message && error.context == expected.context)
    }

    /// A long JSON document is visited in short runs read on several threads; the visit still sees every
    /// object once, in order, as one thread would hand it on. A fault in a later run (an id used twice, a
    /// cut-short line) makes the visit count for nothing, and the objects fail as they always fail.
    @Test func aLongDocumentIsVisitedInOrder() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clipboard = ClipboardSamples.company(objects: 30_000)
        let json = try ClipboardEncoding.json.encode(clipboard)
        let file = folder.appendingPathComponent("clipboard.json")
        try json.write(to: file)
        var visited: [Clipboard.Object] = []
        var reader = try ClipboardReader(contentsOf: file) { object, _ in visited.append(object) }
        #expect(reader.visitedObjects)
        var plain = try ClipboardReader(contentsOf: file)
        plain.skipsValues = true
        #expect(visited == (try Self.objectsOf(&plain)))
        #expect(try Self.objectsOf(&reader) == clipboard.objects)

        let text = String(decoding: json, as: UTF8.self)
        let faults = [
            text.replacingOccurrences(of: "{\"id\": \"o29000\"", with: "{\"id\": \"o3\""),
            text.replacingOccurrences(of: "{\"id\": \"o20000\", \"entity\": \"", with: "{\"id\": \"o20000\",\n"),
        ]
        for (index, fault) in faults.enumerated() {
            #expect(fault != text)
            let broken = folder.appendingPathComponent("broken\(index).json")
            try Data(fault.utf8).write(to: broken)
            var calls = 0
            var brokenReader: ClipboardReader
            do {
                brokenReader = try ClipboardReader(contentsOf: broken) { _, _ in calls += 1 }
            } catch let error as GraftError {
                // Made again without the visit, the reader fails where reading in order fails.
                let expected = try #require(throws: GraftError.self) { try ClipboardReader(contentsOf: broken) }
                #expect(error == expected)
                continue
            }
            #expect(!brokenReader.visitedObjects)
            var plainBroken = try ClipboardReader(contentsOf: broken)
            let expected = try #require(throws: GraftError.self) { try Self.objectsOf(&plainBroken) }
            let error = try #require(throws: GraftError.self) { try Self.objectsOf(&brokenReader) }
            #expect(error.message == expected.message && error.context == expected.context)
        }
    }

    /// The id map's lines, made as bytes, are the map's entries, whatever form the ids have.
    @Test func theIDMapLinesAreTheEntries() throws {
        var report = PasteReport(dryRun: false)
        report.idMapStorage = .compact(
            PasteReport.CompactIDMap(
                ids: LocalIDList(["o1", "o20", "x-3", "o07", "r4"]), entities: [0, 1, 1, 0, 1], keys: [1, 2, 30, 4, 5],
                entityNames: ["Department", "Employee"], storeIdentifier: "S"))
        var lines = Data()
        try report.writeIDMapLines { lines.append(contentsOf: $0) }
        var expected = ""
        report.forEachIDMapEntry { expected += "\($0)\t\($1)\n" }
        #expect(String(decoding: lines, as: UTF8.self) == expected)
        #expect(expected.hasPrefix("o1\tx-coredata://S/Department/p1\no20\tx-coredata://S/Employee/p2\nx-3\t"))
        #expect(expected.contains("\no07\tx-coredata://S/Department/p4\nr4\tx-coredata://S/Employee/p5\n"))
        report.idMap = [("a", "x-coredata://S/Department/p9")]
        lines = Data()
        try report.writeIDMapLines { lines.append(contentsOf: $0) }
        #expect(String(decoding: lines, as: UTF8.self) == "a\tx-coredata://S/Department/p9\n")
    }

    static func objectsOf(_ reader: inout ClipboardReader) throws -> [Clipboard.Object] {
        var objects: [Clipboard.Object] = []
        while let object = try reader.next() { objects.append(object) }
        return objects
    }

    /// Links stated on one side only get their other side, as the engine gives them; ids of any form work.
    @Test(arguments: StoreFormat.allCases)
    func oneSidedLinksAndOtherIDsStream(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var clipboard = try Self.everything()
        // Departments no longer list their employees, nor managers their reports; ids take another form
        // (`x-2`), or Graft's with numbers beyond 2³¹ (`o3000000001`).
        func renamed(_ id: String) -> String {
            guard id.hasPrefix("o"), let number = Int(id.dropFirst()) else { return id }
            return number % 2 == 0 ? "x-\(number)" : "o\(3_000_000_000 + number)"
        }
        for index in clipboard.objects.indices {
            clipboard.objects[index].id = renamed(clipboard.objects[index].id)
            clipboard.objects[index].relationships = clipboard.objects[index].relationships.compactMap { link in
                ["employees", "directReports"].contains(link.name) ? nil : .init(link.name, link.targets.map(renamed))
            }
        }
        clipboard.roots = clipboard.roots.map(renamed)
        let streamedURL = folder.appendingPathComponent("streamed.\(format.driver.fileExtensions[0])")
        let engineURL = folder.appendingPathComponent("engine.\(format.driver.fileExtensions[0])")
        #expect(try Self.streamed(clipboard, format: format, to: streamedURL) != nil)
        try Self.engine(try Self.everything(), format: format, to: engineURL)
        #expect(try Self.contents(streamedURL) == Self.contents(engineURL))
    }

    /// A target named twice by one link, its other side unstated, is linked once, as the engine links it.
    @Test(arguments: StoreFormat.allCases)
    func aTargetNamedTwiceIsLinkedOnce(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var clipboard = try Self.everything()
        // Employees no longer list their projects; projects name each member twice, departments each employee.
        for index in clipboard.objects.indices {
            clipboard.objects[index].relationships = clipboard.objects[index].relationships.compactMap { link in
                if link.name == "projects" && clipboard.objects[index].entity != "Department" { return nil }
                return ["members", "employees"].contains(link.name)
                    ? .init(link.name, link.targets + link.targets) : link
            }
        }
        let streamedURL = folder.appendingPathComponent("streamed.\(format.driver.fileExtensions[0])")
        let engineURL = folder.appendingPathComponent("engine.\(format.driver.fileExtensions[0])")
        #expect(try Self.streamed(clipboard, format: format, to: streamedURL) != nil)
        try Self.engine(try Self.everything(), format: format, to: engineURL)
        #expect(try Self.contents(streamedURL) == Self.contents(engineURL))
    }

    @Test func contradictionsAndBrokenRulesGoToTheEngine() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clipboard = try Self.everything()
        // An employee listed by a department other than the one her own link names.
        var contradicting = clipboard
        let departments = contradicting.objects.indices.filter { contradicting.objects[$0].entity == "Department" }
        let first = contradicting.objects[departments[0]]
        let stranger = try #require(
            contradicting.objects[departments[1]].relationships.first { $0.name == "employees" }?.targets.first)
        contradicting.objects[departments[0]].relationships = first.relationships.map {
            $0.name == "employees" ? .init("employees", $0.targets + [stranger]) : $0
        }
        let url = folder.appendingPathComponent("a.sqlite")
        #expect(try Self.streamed(contradicting, format: .sqlite, to: url) == nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        // A name longer than the model allows.
        var broken = clipboard
        broken.objects[departments[0]].attributes = broken.objects[departments[0]].attributes.map {
            $0.name == "name" ? .init("name", .string(String(repeating: "n", count: 70))) : $0
        }
        #expect(try Self.streamed(broken, format: .xml, to: folder.appendingPathComponent("b.xml")) == nil)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("b.xml").path))
        // Through the public call, the engine then names what is wrong.
        let refused = try #require(throws: GraftError.self) {
            try Paster().paste(broken, intoNewStoreAt: folder.appendingPathComponent("c.xml"), format: .xml)
        }
        #expect(refused.code == .validationFailed)
        let contradicted = try #require(throws: GraftError.self) {
            try Paster().paste(contradicting, intoNewStoreAt: folder.appendingPathComponent("d.xml"), format: .xml)
        }
        #expect(contradicted.message.contains("contradict"))
    }

    /// Two objects with the values of a uniqueness constraint: the stream hands the paste over when the
    /// second comes, leaving nothing behind, and the engine names both.
    @Test(arguments: StoreFormat.allCases)
    func valuesThatMayClashGoToTheEngine(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var clipboard = try Self.everything()
        let departments = clipboard.objects.indices.filter { clipboard.objects[$0].entity == "Department" }
        let name = try #require(clipboard.objects[departments[0]].attributes.first { $0.name == "name" })
        clipboard.objects[departments[1]].attributes = clipboard.objects[departments[1]].attributes.map {
            $0.name == "name" ? name : $0
        }
        let url = folder.appendingPathComponent("a.\(format.driver.fileExtensions[0])")
        #expect(try Self.streamed(clipboard, format: format, to: url) == nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        let refused = try #require(throws: GraftError.self) {
            try Paster().paste(clipboard, intoNewStoreAt: url, format: format)
        }
        #expect(refused.code == .validationFailed)
        #expect(refused.underlying.contains { $0.message.contains("another new Department") })
    }

    /// Into an empty SQLite store the objects stream in one transaction, ordered to-manys and join rows
    /// included, and give the store what the engine gives an empty store.
    @Test func anEmptySQLiteStoreTakesTheObjectsAsAStream() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clipboard = try Self.everything()
        let streamedURL = folder.appendingPathComponent("streamed.sqlite")
        let report = try Paster().paste(clipboard, into: try SQLiteStore.create(streamedURL, model: Self.model))
        #expect(report.inserted.values.reduce(0, +) == clipboard.objects.count)
        try expectPasted(clipboard, report, in: try StoreFormat.openForReading(streamedURL, model: Self.model))
        // The engine, into an empty store in memory with the same key sequences, written out as it is.
        let memory = InMemoryStore(model: Self.model)
        _ = try Paster().paste(clipboard, into: memory)
        let engineURL = folder.appendingPathComponent("engine.sqlite")
        try StoreFormat.sqlite.driver.write(
            memory.allSnapshots, to: engineURL, model: Self.model,
            metadata: StoreMetadata.make(for: Self.model, storeType: .sqlite), overwrite: false)
        #expect(try Self.contents(streamedURL) == Self.contents(engineURL))
    }

    /// A paste the engine must make after all gets the keys the store gave the streamed attempt.
    @Test func withoutValidationAnEmptyStoreKeepsItsFirstKeys() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var clipboard = try Self.everything()
        let department = try #require(clipboard.objects.firstIndex { $0.entity == "Department" })
        clipboard.objects[department].attributes = clipboard.objects[department].attributes.map {
            $0.name == "code" ? .init("code", .integer(5000)) : $0
        }
        let url = folder.appendingPathComponent("store.sqlite")
        let report = try Paster(options: PasteOptions(validates: false)).paste(
            clipboard, into: try SQLiteStore.create(url, model: Self.model))
        #expect(report.violations.count == 1)
        let keys = try report.idMap.map { try ObjectID.parse(uri: $0.uri, model: Self.model).1.key }
        #expect(keys.min() == 1)
    }
}
