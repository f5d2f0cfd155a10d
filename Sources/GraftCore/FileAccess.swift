import Foundation

/// Reading and writing files with errors that say which file and why.
public enum FileAccess {
    /// The whole contents of a file.
    ///
    /// - Throws: `GraftError.fileNotFound` when nothing is at `url`; `GraftError.io` when it cannot be read.
    public static func read(_ url: URL) throws -> Data {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw GraftError(.fileNotFound, "no such file", context: [.file(url.relativePath)])
        }
        if isDirectory.boolValue {
            throw GraftError(.io, "is a folder, not a file", context: [.file(url.relativePath)])
        }
        do {
            return try Data(contentsOf: url)
        } catch {
            throw GraftError(.io, "cannot be read: \(error.localizedDescription)", context: [.file(url.relativePath)])
        }
    }

    /// Whether something exists at `url`, and whether it is a folder.
    public static func kind(of url: URL) -> (exists: Bool, isDirectory: Bool) {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
        return (exists, isDirectory.boolValue)
    }

    /// Writes `data` to `url` atomically: into a temporary file in the same folder, flushed to disk,
    /// then renamed over the destination. A failure leaves nothing behind.
    ///
    /// - Parameter overwrite: when `false`, an existing file at `url` is an error.
    public static func writeAtomically(_ data: Data, to url: URL, overwrite: Bool = true) throws {
        try writeAtomically(to: url, overwrite: overwrite) { handle in
            try handle.write(contentsOf: data)
        }
    }

    /// Writes a file atomically through `body`, which receives a handle to a temporary file in the
    /// destination's folder. The temporary file is flushed, closed and renamed over `url` when `body`
    /// returns, and removed if `body` throws.
    public static func writeAtomically(
        to url: URL, overwrite: Bool = true, _ body: (FileHandle) throws -> Void
    ) throws {
        let folder = url.deletingLastPathComponent()
        if !overwrite && kind(of: url).exists {
            throw GraftError(
                .alreadyExists, "already exists (use --force to replace it)", context: [.file(url.relativePath)])
        }
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).graft-\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw GraftError(.io, "cannot create a file in \(folder.path)", context: [.file(url.relativePath)])
        }
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            do {
                try body(handle)
                try handle.synchronize()
                try handle.close()
            } catch {
                try? handle.close()
                throw error
            }
            if !overwrite && kind(of: url).exists {
                throw GraftError(
                    .alreadyExists, "already exists (use --force to replace it)", context: [.file(url.relativePath)])
            }
            guard rename(temporary.path, url.path) == 0 else {
                throw GraftError(
                    .io, "cannot rename the finished file into place: \(String(cString: strerror(errno)))",
                    context: [.file(url.relativePath)])
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            if let error = error as? GraftError { throw error }
            throw GraftError(
                .io, "cannot be written: \(error.localizedDescription)", context: [.file(url.relativePath)])
        }
    }
}
