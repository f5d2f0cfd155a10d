import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive advisory lock on a document, held by a writer for the whole of a read-change-replace
/// (a paste into an XML or binary store, or a context's save), so that two writers never both read the
/// same document and the second one's replacement discards the first one's work.
///
/// The lock is `flock(2)` on the document itself, not a lock file beside it:
/// - nothing is added to the user's folder, and nothing is left behind by a writer that is killed (the
///   system drops the lock with the process);
/// - a `flock` lock belongs to the open file, so two threads of one process exclude each other too, and
///   opening and closing the document elsewhere in the process (its readers do) does not drop it, as it
///   would drop a POSIX `fcntl` lock;
/// - Graft replaces a document by renaming a new file over it, so a waiting writer may get the lock on a
///   file that is no longer the document: it then checks that the path still names the file it locked,
///   and if not, locks the new one. A writer that replaces a document it holds locked keeps the lock on
///   the new file (``FileReplacement/commit()`` returns it), so no one can slip in between.
///
/// SQLite stores are not locked this way: SQLite's own locks, which Core Data respects too, guard them,
/// with a busy timeout of the same length.
///
/// For example:
///
/// ```swift
/// let lock = try FileLock(url, wait: FileLock.defaultWait)   // waits for another writer, up to 5 s
/// defer { lock.release() }
/// ```
public final class FileLock {
    /// How long a writer waits for another one by default, in seconds.
    public static let defaultWait: TimeInterval = 5

    /// The document, as the caller named it.
    public let url: URL
    /// The locked file as it was when locked (or, for a lock a writer handed over, when written).
    package let version: FileVersion
    private var descriptor: Int32

    /// Locks the document at `url` (symbolic links followed), waiting up to `wait` seconds while another
    /// writer holds it.
    ///
    /// - Throws: `GraftError.fileNotFound` when nothing is at `url`; `GraftError.busy` when the lock is
    ///   still held after `wait` seconds, naming the process that holds it where the system tells;
    ///   `GraftError.io` when the file cannot be opened or locked (a file system without locks, say), or
    ///   is not a regular file.
    public init(_ url: URL, wait: TimeInterval) throws {
        self.url = url
        let name = url.relativePath
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(Int64(max(0, min(wait, 1e9)) * 1000)))
        var pause = 0.005
        while true {
            let descriptor = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard descriptor >= 0 else {
                if errno == ENOENT || errno == ENOTDIR {
                    throw GraftError(.fileNotFound, "no such file", context: [.file(name)])
                }
                throw GraftError(
                    .io, "cannot be opened to lock it: \(FileAccess.systemError())", context: [.file(name)])
            }
            var info = stat()
            guard fstat(descriptor, &info) == 0, FileKind(mode: info.st_mode) == .regular else {
                let kind = FileKind(mode: info.st_mode)
                _ = close(descriptor)
                throw GraftError(.io, "is \(kind.rawValue), not a document", context: [.file(name)])
            }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                // Still the document? A writer may have renamed a new file over it while this one waited.
                var now = stat()
                var locked = stat()
                if stat(url.path, &now) == 0, fstat(descriptor, &locked) == 0,
                    FileIdentity(now) == FileIdentity(locked)
                {
                    self.descriptor = descriptor
                    version = FileVersion(locked)
                    return
                }
                _ = close(descriptor)
                continue
            }
            let failure = errno
            if failure == EINTR {
                _ = close(descriptor)
                continue
            }
            guard failure == EWOULDBLOCK || failure == EAGAIN else {
                _ = close(descriptor)
                throw GraftError(
                    .io, "cannot be locked: \(FileAccess.systemError(failure))", context: [.file(name)])
            }
            let remaining = deadline - clock.now
            if remaining <= .zero {
                let holder = Self.holder(of: FileIdentity(info))
                _ = close(descriptor)
                throw Self.busy(name, holder: holder, wait: wait)
            }
            _ = close(descriptor)
            let seconds = min(
                pause, Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18)
            usleep(UInt32(max(seconds, 0.001) * 1_000_000))
            pause = min(pause * 2, 0.1)
        }
    }

    /// A lock already held on `descriptor` (a writer's new file, now at `url`).
    init(adopting descriptor: Int32, url: URL, version: FileVersion) {
        self.descriptor = descriptor
        self.url = url
        self.version = version
    }

    deinit { release() }

    /// Whether the lock is still held.
    public var isHeld: Bool { descriptor >= 0 }

    /// Releases the lock (also done when the lock goes away).
    public func release() {
        guard descriptor >= 0 else { return }
        _ = close(descriptor)
        descriptor = -1
    }

    /// The error for a document another writer held for longer than `wait` seconds.
    static func busy(_ name: String, holder: LockHolder?, wait: TimeInterval) -> GraftError {
        GraftError(
            .busy,
            "is busy: another writer\(holder.map { " (\($0))" } ?? "") holds its lock and did not release it "
                + "within \(describeSeconds(wait)); nothing was written (--wait sets how long to wait)",
            context: [.file(name)])
    }

    /// `5 s`, `0.5 s`.
    public static func describeSeconds(_ seconds: TimeInterval) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? "\(Int(seconds)) s" : "\(seconds) s"
    }

    // MARK: Who holds it

    /// The process holding a lock on the file with this identity, other than this one, as the system
    /// lists it (`/proc/locks` on Linux; `nil` where there is no such list or no other holder).
    package static func holder(of identity: FileIdentity) -> LockHolder? {
        guard let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        // Linux's encoding of a device number: major in bits 8–19 and 32–43, minor in bits 0–7 and 20–31.
        let device = identity.device
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        let own = getpid()
        for line in text.split(separator: "\n") {
            // "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1311 0 EOF"; blocked waiters have "->" after the number.
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] != "->", let pid = Int32(fields[4]), pid > 0, pid != own else {
                continue
            }
            let place = fields[5].split(separator: ":")
            guard place.count == 3, UInt64(place[0], radix: 16) == major, UInt64(place[1], radix: 16) == minor,
                UInt64(place[2]) == identity.inode
            else { continue }
            let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return LockHolder(pid: pid, name: name?.isEmpty == false ? name : nil)
        }
        return nil
    }
}

/// A process that holds a lock, as far as the system tells.
public struct LockHolder: Hashable, Sendable, CustomStringConvertible {
    public var pid: Int32
    /// The program's name, when known.
    public var name: String?

    public var description: String { "process \(pid)" + (name.map { ", \($0)" } ?? "") }
}

/// How a store that rewrites its whole document on every save (XML, binary) keeps other writers' work.
///
/// Either the document is locked from the start, before it is read, until the store goes away
/// (`exclusive`, for a paste: other writers wait), or it is locked only while a save writes, and a save
/// fails if the document is no longer the one that was read. Either way a save never replaces changes
/// it did not see. A new document (nothing at `url` when the store was made) is created only if nothing
/// has appeared there meanwhile.
package final class DocumentGuard {
    package let url: URL
    package let wait: TimeInterval
    private let exclusive: Bool
    private var lock: FileLock?
    /// The document as read; `nil` when there was none.
    private var expected: FileVersion?

    /// Call before reading the document.
    ///
    /// - Throws: what ``FileLock/init(_:wait:)`` throws, for an `exclusive` guard of an existing document.
    package init(url: URL, wait: TimeInterval, exclusive: Bool) throws {
        self.url = url
        self.wait = wait
        self.exclusive = exclusive
        if exclusive && FileAccess.fileKind(of: url) != nil {
            let lock = try FileLock(url, wait: wait)
            self.lock = lock
            expected = lock.version
        } else {
            expected = FileAccess.version(of: url)
        }
    }

    /// The document read again through `read` when another writer has replaced it since it was read
    /// (or last saved) here; `nil` when it has not, when it is gone, or when the guard holds it locked
    /// (no one else can have changed it). Afterwards a save expects the document as read now, so that a
    /// store that takes the other writer's work in can save over it; a writer that replaces it again
    /// meanwhile still makes the save fail.
    package func readIfChanged<T>(_ read: () throws -> T) throws -> T? {
        guard lock == nil, let expected, let now = FileAccess.version(of: url), now != expected else { return nil }
        let value = try read()
        self.expected = now
        return value
    }

    /// Saves through `write`, which writes the whole document (replacing the file only when given
    /// `true`) and returns the lock on the file it placed.
    ///
    /// - Throws: `GraftError.busy` when another writer holds the document longer than `wait`, or changed
    ///   or created it since it was read; what `write` throws.
    package func save(_ write: (_ overwrite: Bool) throws -> FileLock) throws {
        guard let expected else {
            do {
                let written = try write(false)
                self.expected = written.version
                if exclusive { lock = written }
            } catch let error as GraftError where error.code == .alreadyExists {
                throw GraftError(
                    .busy, "was created by another writer while this one worked; nothing was written",
                    context: [.file(url.relativePath)])
            }
            return
        }
        let held = try lock ?? FileLock(url, wait: wait)
        guard FileAccess.version(of: url) == expected else {
            throw GraftError(
                .busy,
                "was changed by another writer since it was read; nothing was written (read it again and redo the change)",
                context: [.file(url.relativePath)])
        }
        let written = try write(true)
        self.expected = written.version
        if exclusive { lock = written }
        held.release()
    }
}
