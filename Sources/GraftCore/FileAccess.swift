import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading and writing files with errors that say which file and why.
package enum FileAccess {
    /// The whole contents of a file, read through one descriptor opened once (so a FIFO or a device
    /// such as `/dev/stdin` works: it is read to its end).
    ///
    /// For example:
    ///
    /// ```swift
    /// let data = try FileAccess.read(url, maxSize: 1 << 30)
    /// ```
    ///
    /// - Parameter maxSize: the most bytes accepted, enforced while reading (a regular file larger than
    ///   this fails before anything is read); `nil` for no limit.
    /// - Throws: `GraftError.fileNotFound` when nothing is at `url`; `GraftError.io` when it is a folder or
    ///   cannot be read; `GraftError.invalidOperation` when it holds more than `maxSize` bytes.
    package static func read(_ url: URL, maxSize: Int? = nil) throws -> Data {
        try reading(url, maxSize: maxSize) { descriptor, expected in
            try read(fileDescriptor: descriptor, maxSize: maxSize, expectedSize: expected, name: url.relativePath)
        }
    }

    /// Reads the file at `url` (a regular file, a pipe, a device) to its end in chunks of 1 MiB, handing
    /// each to `body`; returns the number of bytes read. Throws as ``read(_:maxSize:)`` does.
    @discardableResult
    package static func forEachChunk(
        of url: URL, maxSize: Int?, _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Int {
        try reading(url, maxSize: maxSize) { descriptor, _ in
            try forEachChunk(fileDescriptor: descriptor, maxSize: maxSize, name: url.relativePath, body)
        }
    }

    /// Opens `url` for reading and runs `body` with the descriptor and, for a regular file, its size; a
    /// regular file larger than `maxSize` fails before anything is read.
    private static func reading<T>(
        _ url: URL, maxSize: Int?, _ body: (_ descriptor: Int32, _ size: Int?) throws -> T
    ) throws -> T {
        let name = url.relativePath
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT || errno == ENOTDIR {
                throw GraftError(.fileNotFound, "no such file", context: [.file(name)])
            }
            throw GraftError(.io, "cannot be read: \(systemError())", context: [.file(name)])
        }
        defer { _ = close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw GraftError(.io, "cannot be read: \(systemError())", context: [.file(name)])
        }
        if FileKind(mode: info.st_mode) == .directory {
            throw GraftError(.io, "is a folder, not a file", context: [.file(name)])
        }
        let expected = FileKind(mode: info.st_mode) == .regular ? Int(info.st_size) : nil
        if let maxSize, let expected, expected > maxSize { throw tooLarge(name, limit: maxSize) }
        return try body(descriptor, expected)
    }

    /// Everything left to read from an open descriptor (standard input, say), up to `maxSize` bytes.
    ///
    /// The corresponding C function is `read`.
    ///
    /// - Parameters:
    ///   - expectedSize: how many bytes are likely to come, to allocate once.
    ///   - name: what to call the source in errors, such as "standard input".
    /// - Throws: `GraftError.io` when reading fails; `GraftError.invalidOperation` once more than
    ///   `maxSize` bytes have come (reading stops there).
    package static func read(
        fileDescriptor descriptor: Int32, maxSize: Int?, expectedSize: Int? = nil, name: String
    ) throws -> Data {
        let limit = maxSize ?? Int.max
        var data = Data(count: min(max(expectedSize ?? 0, 0), limit))
        var filled = 0
        var chunk = 1 << 20
        while true {
            if filled == data.count {
                if filled > limit { throw tooLarge(name, limit: limit) }
                // Room for more, at most one byte past the limit (which tells a source that is too large).
                let left = limit - filled
                let room = left >= chunk ? chunk : left + 1
                data.count += room
                chunk = min(chunk * 2, 64 << 20)
            }
            let count = data.withUnsafeMutableBytes { bytes in
                systemRead(descriptor, bytes.baseAddress! + filled, bytes.count - filled)
            }
            if count > 0 {
                filled += count
                if filled > limit { throw tooLarge(name, limit: limit) }
            } else if count == 0 {
                data.count = filled
                return data
            } else if errno != EINTR {
                throw GraftError(.io, "cannot be read: \(systemError())", context: [.file(name)])
            }
        }
    }

    /// Reads `descriptor` to its end in chunks of 1 MiB, handing each to `body`, without holding more than
    /// one; returns the number of bytes read.
    ///
    /// - Throws: what ``read(fileDescriptor:maxSize:expectedSize:name:)`` throws, and what `body` throws.
    @discardableResult
    package static func forEachChunk(
        fileDescriptor descriptor: Int32, maxSize: Int?, name: String, _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Int {
        let limit = maxSize ?? Int.max
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var total = 0
        while true {
            let count = systemRead(descriptor, buffer.baseAddress!, buffer.count)
            if count > 0 {
                total += count
                if total > limit { throw tooLarge(name, limit: limit) }
                try body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            } else if count == 0 {
                return total
            } else if errno != EINTR {
                throw GraftError(.io, "cannot be read: \(systemError())", context: [.file(name)])
            }
        }
    }

    /// The error for a source larger than the limit a reader allows.
    package static func tooLarge(_ name: String, limit: Int) -> GraftError {
        GraftError(
            .invalidOperation, "holds more than \(describeSize(limit)), the most accepted; reading stopped there",
            context: [.file(name)], remedy: .init(.raiseLimit, "a larger size limit allows it"))
    }

    /// A byte count as people read it: `512 bytes`, `64 MiB`, `1.5 GiB`.
    package static func describeSize(_ bytes: Int) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard bytes >= 1024 else { return Wording.counted(bytes, "byte") }
        var value = Double(bytes)
        var unit = -1
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let text = value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
        return "\(text) \(units[unit])"
    }

    /// Whether something exists at `url`, and whether it is a folder.
    package static func kind(of url: URL) -> (exists: Bool, isDirectory: Bool) {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
        return (exists, isDirectory.boolValue)
    }

    /// What is at `url` (symbolic links followed), or `nil` when nothing is.
    package static func fileKind(of url: URL) -> FileKind? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return FileKind(mode: info.st_mode)
    }

    /// The file at `url` (symbolic links followed) as its device and inode, or `nil` when nothing is
    /// there. Two paths name the same file — through links, hard links or `..` — exactly when their
    /// identities are equal.
    package static func identity(of url: URL) -> FileIdentity? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return FileIdentity(info)
    }

    /// The file at `url` (symbolic links followed) with its size and modification time, or `nil` when
    /// nothing is there: what changes when the file is replaced or written to.
    package static func version(of url: URL) -> FileVersion? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return FileVersion(info)
    }

    /// Whether two paths name the same existing file (same device and inode).
    package static func isSameFile(_ first: URL, _ second: URL) -> Bool {
        guard let one = identity(of: first), let other = identity(of: second) else { return false }
        return one == other
    }

    /// Writes `data` to `url` atomically: into a temporary file in the same folder, flushed to disk,
    /// then renamed over the destination. A failure leaves nothing behind.
    ///
    /// - Parameter overwrite: when `false`, an existing file at `url` is an error.
    /// - Throws: what ``FileReplacement/init(replacing:overwrite:sideFiles:)`` and
    ///   ``FileReplacement/commit()`` throw; `GraftError.io` when writing fails.
    package static func writeAtomically(_ data: Data, to url: URL, overwrite: Bool = true) throws {
        try writeAtomically(to: url, overwrite: overwrite) { write in
            try data.withUnsafeBytes { try write($0) }
        }
    }

    /// Writes a file atomically through `body`, which is given a function that appends bytes to a
    /// temporary file beside the destination (``FileReplacement/append(_:)``). The temporary file is
    /// flushed and renamed over `url` when `body` returns, and removed if `body` throws. A symbolic link
    /// at `url` is written through: the file it points to is replaced. Only a regular file is ever
    /// replaced.
    package static func writeAtomically(
        to url: URL, overwrite: Bool = true, _ body: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws {
        let replacement = try FileReplacement(replacing: url, overwrite: overwrite)
        do {
            try body { bytes in
                do {
                    try replacement.append(bytes)
                } catch let error as GraftError {
                    throw error.inFile(url.relativePath)
                }
            }
            _ = try replacement.commit()
        } catch {
            replacement.discard()
            if let error = error as? GraftError { throw error }
            throw GraftError(
                .io, "cannot be written: \(error.localizedDescription)", context: [.file(url.relativePath)])
        }
    }

    /// The text of the C library's last error (`strerror(errno)`).
    static func systemError(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}

/// `read(2)`, under a name `FileAccess.read` does not hide.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// What a path names: a regular file, a folder, or one of the special files Graft never replaces.
package enum FileKind: String, Sendable {
    case regular = "a regular file"
    case directory = "a folder"
    case symbolicLink = "a symbolic link"
    case fifo = "a FIFO (named pipe)"
    case characterDevice = "a character device"
    case blockDevice = "a block device"
    case socket = "a socket"

    init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symbolicLink
        case S_IFIFO: self = .fifo
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        case S_IFSOCK: self = .socket
        default: self = .regular
        }
    }
}

/// A file as the system knows it: its device and inode.
package struct FileIdentity: Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// A file and the state of its contents: its identity, size and modification time. A file replaced
/// by a rename has a new identity; one written in place, a new size or time.
package struct FileVersion: Hashable, Sendable {
    package var identity: FileIdentity
    package var size: Int64
    package var modifiedSeconds: Int64
    package var modifiedNanoseconds: Int64

    init(_ info: stat) {
        identity = FileIdentity(info)
        size = Int64(info.st_size)
        #if canImport(Darwin)
            modifiedSeconds = Int64(info.st_mtimespec.tv_sec)
            modifiedNanoseconds = Int64(info.st_mtimespec.tv_nsec)
        #else
            modifiedSeconds = Int64(info.st_mtim.tv_sec)
            modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
        #endif
    }
}
