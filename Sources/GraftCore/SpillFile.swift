import Foundation

/// A temporary file a stream is written to and read back from: the objects of a streamed copy while its
/// header waits for them, a clipboard piped into a paste that reads it in several passes. It lives in the
/// system's temporary folder (`TMPDIR`), readable by its owner alone, until ``remove()``.
package final class SpillFile {
    package let url: URL
    private let handle: FileHandle
    /// How many bytes have been written.
    package private(set) var size = 0

    /// - Parameter prefix: the start of the file's name, saying what made it (`graft-copy`).
    package init(prefix: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString).spill")
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
        else {
            throw GraftError(.io, "cannot create a temporary file", context: [.file(url.path)])
        }
        handle = try FileHandle(forUpdating: url)
    }

    package func write(_ chunk: UnsafeRawBufferPointer) throws {
        guard let base = chunk.baseAddress, !chunk.isEmpty else { return }
        do {
            try handle.write(
                contentsOf: Data(
                    bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: chunk.count, deallocator: .none))
        } catch {
            throw GraftError(
                .io, "cannot be written (is the temporary folder full? TMPDIR chooses another)",
                context: [.file(url.path)])
        }
        size += chunk.count
    }

    /// Hands the file's bytes to `sink`, from the first, in chunks of 1 MiB.
    package func copy(to sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        try handle.seek(toOffset: 0)
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            try chunk.withUnsafeBytes { try sink($0) }
        }
    }

    /// Closes and deletes the file.
    package func remove() {
        try? handle.close()
        try? FileManager.default.removeItem(at: url)
    }
}
