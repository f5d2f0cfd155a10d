import Foundation

/// Test helpers shared by every test target.

/// The shared corpus of real Apple-written files, at `../shared/corpus/coredata` beside the checkout.
public enum Corpus {
    public static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["GRAFT_CORPUS"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus/coredata")
    }()

    public static var isAvailable: Bool { FileManager.default.fileExists(atPath: root.path) }

    /// Why corpus tests are skipped, for `.enabled(if:_:)`.
    public static let unavailableMessage = "the corpus is not at \(root.path) (set GRAFT_CORPUS to its folder)"

    /// Files and folders under the corpus whose names satisfy `matches`, sorted, as paths relative to the root.
    public static func paths(where matches: (URL) -> Bool) -> [String] {
        guard isAvailable, let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else {
            return []
        }
        var found: [String] = []
        for case let url as URL in walker where matches(url) {
            found.append(String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1)))
        }
        return found.sorted()
    }

    public static func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }

    /// Every SQLite database in the corpus, recognised by its first 16 bytes (`SQLite format 3` and a
    /// NUL), not by its extension: stores are named `.sqlite`, `.wiredatabase`, `.review`, … Sorted,
    /// relative to the root.
    public static var sqliteStores: [String] {
        paths(where: { url in
            guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
            defer { try? handle.close() }
            return (try? handle.read(upToCount: 16)) == Data("SQLite format 3\0".utf8)
        })
    }
}

/// The project's own files (examples, formats).
public enum Project {
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }
}
