internal import CSQLite
import Foundation
@_spi(GraftInternal) import GraftCore

/// One connection to a SQLite database file, owned by this object and closed when it goes away.
///
/// Opening a user's store for reading never changes it: a store without a `-wal` (or `-journal`) file,
/// or with an empty one, is opened immutable (no locks, no `-shm`, nothing written); a store with one
/// that has content is read from a private copy of the store and its `-wal`, because SQLite would
/// otherwise checkpoint and delete the `-wal` on close.
///
/// Opening a store for writing waits for other connections' locks up to a busy timeout, and a
/// connection that wrote nothing leaves a `-wal` with content as it found it on close (no checkpoint,
/// so a refused paste changes neither the store nor its `-wal`).
///
/// Failures are told from SQLite's extended result codes (see ``SQLiteFailure``): busy, read-only file
/// or folder, disk full, damaged, not a database.
final class SQLiteDatabase {
    let handle: OpaquePointer
    let path: String
    /// A private folder holding copies, removed on close.
    private let scratch: URL?
    /// The store's file (for telling a read-only folder and who holds a lock); `nil` for a private copy.
    let url: URL?
    /// How long a statement waits for another connection's lock, in seconds.
    private(set) var busyTimeout: TimeInterval = 0

    /// The files SQLite keeps beside a database, by suffix.
    static let sideFileSuffixes = ["-wal", "-shm", "-journal"]

    /// The name and flags this connection was opened with, for ``sibling()``.
    private var opening: (name: String, flags: Int32) = ("", 0)

    private init(handle: OpaquePointer, path: String, scratch: URL?, url: URL?) {
        self.handle = handle
        self.path = path
        self.scratch = scratch
        self.url = url
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit {
        close()
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
        if scratchLock >= 0 { closeDescriptor(scratchLock) }
    }

    /// What the private folders of copies are named after: `graft-read-PID-UUID`.
    static let scratchPrefix = "graft-read-"
    /// A descriptor on the private folder, locked while it is in use.
    private var scratchLock: Int32 = -1

    /// Creates a new, empty database file at `url` (which must not exist, or be empty) and opens it for
    /// writing.
    ///
    /// - Parameter displayPath: what errors call the file (the store it will become); by default its path.
    static func create(_ url: URL, displayPath: String? = nil) throws -> SQLiteDatabase {
        try open(
            url.path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, displayPath: displayPath ?? url.relativePath,
            url: url)
    }

    /// Opens an existing store for reading and writing (saving into it).
    ///
    /// - Parameter wait: how long a statement waits for another connection's lock, in seconds.
    /// - Throws: `GraftError.fileNotFound`; `GraftError.malformedInput` when the file is not a SQLite
    ///   database or is damaged; `GraftError.io` when the store is read-only, or cannot be opened;
    ///   `GraftError.busy` when another connection holds it longer than `wait`.
    static func openForWriting(_ url: URL, wait: TimeInterval = FileLock.defaultWait) throws -> SQLiteDatabase {
        guard let kind = FileAccess.fileKind(of: url) else {
            throw GraftError(.fileNotFound, "no such file", context: [.file(url.relativePath)])
        }
        guard kind == .regular else {
            throw GraftError(
                .malformedInput, "is \(kind.rawValue), not a SQLite store", context: [.file(url.relativePath)])
        }
        // A -wal with content stays as it is unless this connection writes (a dry run or a refused paste
        // must not fold it into the store).
        let keepsWAL = sideFileHasContent(url.path + "-wal")
        let database = try open(url.path, flags: SQLITE_OPEN_READWRITE, displayPath: url.relativePath, url: url)
        database.setBusyTimeout(wait)
        if keepsWAL { database.setCheckpointsOnClose(false) }
        // Told before anything is read: a read-only connection that reads a WAL store makes a `-wal` and
        // `-shm` beside it, which it cannot remove when it closes.
        if sqlite3_db_readonly(database.handle, "main") == 1 {
            throw SQLiteFailure.readOnly.error(
                status: SQLITE_READONLY, doing: "cannot be written", database: database)
        }
        try database.checkIsSQLite()
        return database
    }

    private var isOpen = true

    /// Closes the connection now (also done when the object goes away); further use is an error.
    /// Statements still alive keep SQLite's side open until they are finalized.
    func close() {
        guard isOpen else { return }
        isOpen = false
        sqlite3_close_v2(handle)
    }

    /// Sets how long a statement waits for another connection's lock before failing as busy.
    ///
    /// The corresponding C function is `sqlite3_busy_timeout`.
    func setBusyTimeout(_ seconds: TimeInterval) {
        busyTimeout = max(0, seconds)
        sqlite3_busy_timeout(handle, Int32(min(busyTimeout * 1000, Double(Int32.max))))
    }

    /// Whether closing the connection checkpoints the `-wal` into the store (and deletes it), as SQLite
    /// does by default when the last connection closes. Off for a connection that has written nothing
    /// into a store whose `-wal` has content; on again once it commits a change.
    ///
    /// The corresponding C option is `SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`.
    func setCheckpointsOnClose(_ on: Bool) {
        _ = csqlite_set_no_checkpoint_on_close(handle, on ? 0 : 1)
    }

    /// Opens a store for reading without modifying it, its `-wal` or its `-shm`: in place when it has no
    /// `-wal` or `-journal` with content, else from a private copy.
    ///
    /// - Throws: `GraftError.fileNotFound`, or `GraftError.malformedInput` when the file is not SQLite.
    static func openForReading(_ url: URL) throws -> SQLiteDatabase {
        let kind = FileAccess.kind(of: url)
        guard kind.exists else { throw GraftError(.fileNotFound, "no such file", context: [.file(url.relativePath)]) }
        guard !kind.isDirectory else {
            throw GraftError(.malformedInput, "is a folder, not a SQLite store", context: [.file(url.relativePath)])
        }
        let manager = FileManager.default
        // An empty `-wal` or `-journal` holds nothing the main file lacks (a WAL store that a read-only
        // connection opened and closed leaves an empty `-wal` behind): such a store is read as it is.
        let hasSideFiles = ["-wal", "-journal"].contains { sideFileHasContent(url.path + $0) }
        if !hasSideFiles {
            var components = URLComponents()
            components.scheme = "file"
            components.path = url.standardizedFileURL.path
            components.queryItems = [URLQueryItem(name: "immutable", value: "1")]
            let database = try open(
                components.string!, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, displayPath: url.relativePath,
                url: url)
            try database.checkIsSQLite()
            return database
        }
        // Named with this process's id and locked while in use, so that what a killed reader left can
        // be told and removed by the next one.
        FileReplacement.removeStaleFiles(in: manager.temporaryDirectory, prefix: scratchPrefix, suffix: "")
        let scratch = manager.temporaryDirectory.appendingPathComponent(
            "\(scratchPrefix)\(getpid())-\(UUID().uuidString)")
        do {
            try manager.createDirectory(at: scratch, withIntermediateDirectories: true)
            let copy = scratch.appendingPathComponent(url.lastPathComponent)
            try manager.copyItem(at: url, to: copy)
            for suffix in ["-wal", "-journal"] where manager.fileExists(atPath: url.path + suffix) {
                try manager.copyItem(atPath: url.path + suffix, toPath: copy.path + suffix)
            }
            let database = try open(
                copy.path, flags: SQLITE_OPEN_READWRITE, displayPath: url.relativePath, scratch: scratch, url: nil)
            database.scratchLock = openDescriptor(scratch.path, O_RDONLY | O_CLOEXEC)
            if database.scratchLock >= 0 { _ = flock(database.scratchLock, LOCK_EX | LOCK_NB) }
            try database.checkIsSQLite()
            return database
        } catch {
            try? manager.removeItem(at: scratch)
            if let error = error as? GraftError { throw error }
            throw GraftError(
                .io, "cannot make a private copy to read: \(error.localizedDescription)",
                context: [.file(url.relativePath)])
        }
    }

    /// Whether a file exists at `path` and is not empty (a file that cannot be examined counts as having
    /// content, so that reading goes the careful way).
    private static func sideFileHasContent(_ path: String) -> Bool {
        var info = stat()
        if stat(path, &info) == 0 { return info.st_size != 0 }
        return errno != ENOENT && errno != ENOTDIR
    }

    private static func open(
        _ name: String, flags: Int32, displayPath: String, scratch: URL? = nil, url: URL?
    ) throws -> SQLiteDatabase {
        var handle: OpaquePointer?
        let status = sqlite3_open_v2(name, &handle, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            let system = handle.map { sqlite3_system_errno($0) } ?? 0
            let extended = handle.map { sqlite3_extended_errcode($0) } ?? status
            if let handle { sqlite3_close_v2(handle) }
            if let scratch { try? FileManager.default.removeItem(at: scratch) }
            let failure = SQLiteFailure(
                code: extended, systemError: system,
                folderIsWritable: url.map { access($0.deletingLastPathComponent().path, W_OK) == 0 } ?? true)
            throw failure.error(
                status: extended, doing: "cannot open the SQLite store", message: message, systemError: system,
                path: displayPath, url: url, wait: 0)
        }
        SQLiteFunctions.register(on: handle)
        let database = SQLiteDatabase(handle: handle, path: displayPath, scratch: scratch, url: url)
        database.opening = (name, flags)
        return database
    }

    /// A second connection to the file this one reads (the store, or the private copy of it this one
    /// made), for reading on another thread; it must be closed before this one is.
    func sibling() throws -> SQLiteDatabase {
        try Self.open(opening.name, flags: opening.flags & ~SQLITE_OPEN_CREATE, displayPath: path, url: url)
    }

    /// Reads the schema once so that a file that is not SQLite fails here, with a clear message.
    private func checkIsSQLite() throws {
        var statement: OpaquePointer?
        var status = sqlite3_prepare_v2(handle, "SELECT count(*) FROM sqlite_master", -1, &statement, nil)
        if status == SQLITE_OK { status = sqlite3_step(statement) }
        sqlite3_finalize(statement)
        guard status != SQLITE_ROW else { return }
        throw error(status, "cannot be opened")
    }

    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else {
            throw error(status, "cannot prepare \(sql)")
        }
        return SQLiteStatement(statement: statement, database: self)
    }

    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        sqlite3_free(message)
        if status != SQLITE_OK { throw error(status, "SQLite failed") }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Whether a transaction is open (SQLite is not in autocommit mode).
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Whether a table with this name exists.
    func hasTable(_ name: String) throws -> Bool {
        let statement = try prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        try statement.bind(name, at: 1)
        return try statement.step()
    }

    /// The error for a failed call that returned `status`, saying what happened (see ``SQLiteFailure``).
    func error(_ status: Int32, _ doing: String) -> GraftError {
        let system = sqlite3_system_errno(handle)
        // With extended result codes on, `status` is extended already; the connection's last code is the
        // same failure, told at least as precisely.
        let last = sqlite3_extended_errcode(handle)
        let code = (last & 0xff) == (status & 0xff) ? last : status
        let failure = SQLiteFailure(
            code: code, systemError: system,
            folderIsWritable: url.map { access($0.deletingLastPathComponent().path, W_OK) == 0 } ?? true)
        return failure.error(status: code, doing: doing, database: self)
    }
}

/// What a failed SQLite call means, told from its extended result code and the system error behind it,
/// so that a locked, read-only, full or damaged store is reported as what it is.
enum SQLiteFailure: Equatable {
    /// Another connection holds a lock this one needs, for longer than the busy timeout. The C codes are
    /// `SQLITE_BUSY` (5, with extended forms such as `SQLITE_BUSY_SNAPSHOT`) and `SQLITE_LOCKED` (6).
    case busy
    /// The store's file cannot be written: `SQLITE_READONLY` (8) and its extended forms, `SQLITE_PERM`
    /// (3), or an I/O error whose system error is `EROFS`.
    case readOnly
    /// SQLite cannot create its journal, `-wal` or `-shm` beside the store: `SQLITE_READONLY_DIRECTORY`
    /// (1544), or `SQLITE_CANTOPEN` (14) in a folder that cannot be written.
    case readOnlyFolder
    /// No room left: `SQLITE_FULL` (13), or an I/O error whose system error is `ENOSPC` or `EDQUOT`.
    case diskFull
    /// The database is damaged: `SQLITE_CORRUPT` (11) and its extended forms.
    case corrupt
    /// The file is not a SQLite database: `SQLITE_NOTADB` (26).
    case notADatabase
    /// The file (or its journal) cannot be opened, for another reason: `SQLITE_CANTOPEN` (14).
    case cannotOpen
    /// Reading or writing failed at the system level: `SQLITE_IOERR` (10) and its extended forms.
    case ioError
    /// A constraint refused a change: `SQLITE_CONSTRAINT` (19) and its extended forms.
    case constraintViolation
    /// Anything else (`SQLITE_ERROR`, `SQLITE_NOMEM`, …), told by SQLite's own message.
    case other

    /// `SQLITE_READONLY_DIRECTORY`, whose C macro does not import into Swift.
    static let readOnlyDirectory: Int32 = SQLITE_READONLY | (6 << 8)

    init(code: Int32, systemError: Int32, folderIsWritable: @autoclosure () -> Bool) {
        switch code & 0xff {
        case SQLITE_BUSY, SQLITE_LOCKED: self = .busy
        case SQLITE_READONLY: self = code == Self.readOnlyDirectory ? .readOnlyFolder : .readOnly
        case SQLITE_PERM: self = .readOnly
        case SQLITE_FULL: self = .diskFull
        case SQLITE_CORRUPT: self = .corrupt
        case SQLITE_NOTADB: self = .notADatabase
        case SQLITE_CANTOPEN: self = folderIsWritable() ? .cannotOpen : .readOnlyFolder
        case SQLITE_IOERR:
            switch systemError {
            case ENOSPC, EDQUOT: self = .diskFull
            case EROFS: self = .readOnly
            default: self = .ioError
            }
        case SQLITE_CONSTRAINT: self = .constraintViolation
        default: self = .other
        }
    }

    /// The error to report for this failure on `database`.
    func error(status: Int32, doing: String, database: SQLiteDatabase) -> GraftError {
        error(
            status: status, doing: doing, message: String(cString: sqlite3_errmsg(database.handle)),
            systemError: sqlite3_system_errno(database.handle), path: database.path, url: database.url,
            wait: database.busyTimeout)
    }

    /// The error to report, from SQLite's message and the system error.
    func error(
        status: Int32, doing: String, message: String, systemError: Int32, path: String, url: URL?, wait: TimeInterval
    ) -> GraftError {
        let system = systemError != 0 ? String(cString: strerror(systemError)) : nil
        func detail() -> String { system.map { "\(message): \($0)" } ?? message }
        switch self {
        case .busy:
            let holder = url.flatMap { url -> LockHolder? in
                for suffix in ["", "-shm"] {
                    if let identity = FileAccess.identity(of: URL(fileURLWithPath: url.path + suffix)),
                        let holder = FileLock.holder(of: identity)
                    {
                        return holder
                    }
                }
                return nil
            }
            return GraftError(
                .busy,
                "is busy: another connection\(holder.map { " (\($0))" } ?? "") holds a lock on the store and did "
                    + "not release it within \(FileLock.describeSeconds(wait)); nothing was written (--wait sets "
                    + "how long to wait)",
                context: [.file(path)])
        case .readOnly:
            return GraftError(
                .io,
                "cannot be written: the store is read-only (its permissions or its file system do not allow writing)",
                context: [.file(path)])
        case .readOnlyFolder:
            let folder = url?.deletingLastPathComponent().relativePath ?? "its folder"
            return GraftError(
                .io,
                "cannot be written: the folder \(folder.isEmpty ? "." : folder) is read-only, and SQLite must create "
                    + "the store's journal (-journal, or -wal and -shm) in it",
                context: [.file(path)])
        case .diskFull:
            return GraftError(.io, "cannot be written: the disk is full (\(detail()))", context: [.file(path)])
        case .corrupt:
            return GraftError(.malformedInput, "is a damaged SQLite database (\(message))", context: [.file(path)])
        case .notADatabase:
            return GraftError(.malformedInput, "is not a SQLite database", context: [.file(path)])
        case .cannotOpen:
            return GraftError(.io, "cannot be opened (\(detail()))", context: [.file(path)])
        case .ioError:
            return GraftError(.io, "\(doing): disk I/O error (\(detail()))", context: [.file(path)])
        case .constraintViolation, .other:
            return GraftError(.io, "\(doing): \(message)", context: [.file(path)])
        }
    }
}

/// A prepared statement, finalized when it goes away.
final class SQLiteStatement {
    private let statement: OpaquePointer
    var statementHandle: OpaquePointer { statement }
    private let database: SQLiteDatabase

    init(statement: OpaquePointer, database: SQLiteDatabase) {
        self.statement = statement
        self.database = database
    }

    deinit { sqlite3_finalize(statement) }

    /// Advances to the next row; `false` when there are no more rows.
    func step() throws -> Bool {
        let status = sqlite3_step(statement)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error(status, "cannot read")
        }
    }

    func reset() { sqlite3_reset(statement) }

    /// Sets every parameter back to NULL.
    func clearBindings() { sqlite3_clear_bindings(statement) }

    func bind(_ text: String, at index: Int32) throws {
        var text = text
        let status = text.withUTF8 { bytes in
            sqlite3_bind_text(
                statement, index,
                UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                    .assumingMemoryBound(to: CChar.self), Int32(bytes.count), csqlite_transient())
        }
        guard status == SQLITE_OK else { throw database.error(status, "cannot bind") }
    }

    func bind(_ value: Double, at index: Int32) throws {
        let status = sqlite3_bind_double(statement, index, value)
        guard status == SQLITE_OK else { throw database.error(status, "cannot bind") }
    }

    func bind(_ data: Data, at index: Int32) throws {
        let status = data.withUnsafeBytes { bytes in
            sqlite3_bind_blob(
                statement, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, Int32(bytes.count),
                csqlite_transient())
        }
        guard status == SQLITE_OK else { throw database.error(status, "cannot bind") }
    }

    func bindNull(at index: Int32) throws {
        let status = sqlite3_bind_null(statement, index)
        guard status == SQLITE_OK else { throw database.error(status, "cannot bind") }
    }

    /// Runs a statement that returns no rows, then resets it for the next use.
    func run() throws {
        defer { reset() }
        let status = sqlite3_step(statement)
        guard status == SQLITE_DONE || status == SQLITE_ROW else { throw database.error(status, "cannot write") }
    }

    func bind(_ value: Int64, at index: Int32) throws {
        let status = sqlite3_bind_int64(statement, index, value)
        guard status == SQLITE_OK else { throw database.error(status, "cannot bind") }
    }

    var columnCount: Int32 { sqlite3_column_count(statement) }

    func columnName(_ index: Int32) -> String { String(cString: sqlite3_column_name(statement, index)) }

    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }

    func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(statement, index) }

    func double(_ index: Int32) -> Double { sqlite3_column_double(statement, index) }

    func text(_ index: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, index) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// The column's text, or `nil` when its bytes are not UTF-8 (``text(_:)`` would repair them with
    /// U+FFFD) or it is NULL.
    func validatedText(_ index: Int32) -> String? { column(index).validatedText() }

    /// The column's bytes, or `nil` when it is NULL.
    func data(_ index: Int32) -> Data? { column(index).data() }

    /// Column `index` of the current row, valid until the next step or reset.
    func column(_ index: Int32) -> SQLiteColumn { SQLiteColumn(value: sqlite3_column_value(statement, index)) }
}

/// One column of a statement's current row, read through its `sqlite3_value`: each `sqlite3_column_*`
/// call finds the column again (and checks the connection's state), which for a row's type check and
/// value costs as much as SQLite's own decoding of the row. Valid until the statement steps or resets;
/// like the statement, used on one thread at a time (SQLite's own condition for the unprotected value
/// `sqlite3_column_value` gives).
struct SQLiteColumn {
    let value: OpaquePointer?

    /// `SQLITE_INTEGER`, `SQLITE_FLOAT`, `SQLITE_TEXT`, `SQLITE_BLOB` or `SQLITE_NULL`.
    var type: Int32 { sqlite3_value_type(value) }

    var isNull: Bool { type == SQLITE_NULL }

    var int64: Int64 { sqlite3_value_int64(value) }

    var double: Double { sqlite3_value_double(value) }

    /// The text, or `nil` when its bytes are not UTF-8 (rather than repaired with U+FFFD) or it is NULL.
    func validatedText() -> String? {
        guard let pointer = sqlite3_value_text(value) else { return nil }
        let count = Int(sqlite3_value_bytes(value))
        return ByteText.string(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// The bytes, or `nil` for NULL.
    func data() -> Data? {
        guard !isNull else { return nil }
        let count = Int(sqlite3_value_bytes(value))
        guard count > 0, let pointer = sqlite3_value_blob(value) else { return Data() }
        return Data(bytes: pointer, count: count)
    }
}

/// `open(2)` and `close(2)`, under names the connection's own `open` and `close` do not hide.
private func openDescriptor(_ path: String, _ flags: Int32) -> Int32 { open(path, flags) }
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
