import Foundation

/// A new, empty folder under the temporary directory, for a test to remove when it ends.
public func scratchFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("graft-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A copy of a store with its side files (`-wal`, `-shm`) in `folder`, named `name` (corpus stores are
/// never opened in place: SQLite removes a `-wal` when it closes a database).
public func copyOfStore(_ url: URL, in folder: URL, named name: String = "source.sqlite") throws -> URL {
    let copy = folder.appendingPathComponent(name)
    try FileManager.default.copyItem(at: url, to: copy)
    for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: url.path + suffix) {
        try FileManager.default.copyItem(atPath: url.path + suffix, toPath: copy.path + suffix)
    }
    return copy
}
