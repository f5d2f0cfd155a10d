import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import GraftXML
import Testing

/// Helpers shared by the XML store tests.
enum Support {
    /// The Company example model (current version).
    static let company: Model = {
        do {
            return try ModelFile.load(Project.url("examples/Company/Company.xcdatamodeld")).current
        } catch {
            fatalError("cannot load the Company model: \(error)")
        }
    }()

    /// A fresh folder for one test's files, removed by `cleanUp`.
    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-xml-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func cleanUp(_ folder: URL) {
        try? FileManager.default.removeItem(at: folder)
    }

    /// The names in a folder (hidden ones included), sorted.
    static func contents(of folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    /// Every snapshot a reader gives, in order.
    static func snapshots(_ reader: XMLStoreReader) throws -> [Snapshot] {
        var all: [Snapshot] = []
        try reader.forEachSnapshot { all.append($0) }
        return all
    }

    /// Writes `snapshots` to `url` with a fresh writer.
    static func write(_ snapshots: [Snapshot], model: Model, metadata: StoreMetadata, to url: URL) throws {
        var writer = try XMLStoreWriter(url: url, model: model, metadata: metadata, overwrite: true)
        for snapshot in snapshots { try writer.write(snapshot) }
        try writer.finish()
    }

    /// Streams a reader into a writer at `url`, cancelling the writer on any error (as `graft convert`
    /// does).
    static func convert(_ reader: XMLStoreReader, to url: URL) throws {
        var writer = try XMLStoreWriter(url: url, model: reader.model, metadata: reader.metadata, overwrite: false)
        do {
            try reader.forEachSnapshot { try writer.write($0) }
            try writer.finish()
        } catch {
            writer.cancel()
            throw error
        }
    }

    /// The object counts per entity that a plain regular-expression count of `<object type="…"` gives,
    /// independent of the reader.
    static func objectCountsByRegex(_ url: URL) throws -> [String: Int] {
        let text = try String(contentsOf: url, encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: "<object\\s+type=[\"']([^\"']+)[\"']")
        var counts: [String: Int] = [:]
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let name = String(text[Range(match.range(at: 1), in: text)!]).uppercased()
            counts[name, default: 0] += 1
        }
        return counts
    }

    /// Reads `url`, writes it to a new file, reads that back, and checks that both reads give the same
    /// snapshots and metadata (the model given, or inferred both times).
    @discardableResult
    static func expectRoundTrip(
        _ url: URL, model: Model?, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (first: [Snapshot], second: [Snapshot], copy: URL) {
        let folder = try temporaryFolder()
        let first = try XMLStoreReader(url: url, model: model)
        let firstSnapshots = try snapshots(first)
        let copy = folder.appendingPathComponent("copy.xml")
        try write(firstSnapshots, model: first.model, metadata: first.metadata, to: copy)
        let second = try XMLStoreReader(url: copy, model: model)
        let secondSnapshots = try snapshots(second)
        #expect(
            second.model == first.model || model == nil && second.model.versionHashes == first.model.versionHashes,
            "the model read back differs", sourceLocation: sourceLocation)
        #expect(firstSnapshots.count == secondSnapshots.count, sourceLocation: sourceLocation)
        for (a, b) in zip(firstSnapshots, secondSnapshots) where a != b {
            Issue.record("snapshot \(a.ref) differs after the round trip:\n\(a)\n\(b)", sourceLocation: sourceLocation)
            break
        }
        #expect(first.metadata == second.metadata, "metadata differs", sourceLocation: sourceLocation)
        return (firstSnapshots, secondSnapshots, copy)
    }

    /// Whether `xmllint` is installed.
    static let xmllint: String? = {
        for folder in ["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"] {
            let path = folder + "/xmllint"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }()

    /// Runs a program; returns its exit status and standard error.
    static func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
