import CSQLite
import Foundation
import GraftCore

/// One connection to a SQLite database file, owned by this object and closed when it goes away.
///
/// Opening a user's store for reading never changes it: a store without a `-wal` (or `-journal`) file,
/// or with an empty one, is opened immutable (no locks, no `-shm`, nothing written); a store with one
/// that has content is read from a private copy of the store and its `-wal`, because SQLite would
/// otherwise checkpoint and delete the `-wal` on close.
final class SQLiteDatabase {
    let handle: OpaquePointer
    let path: String
    /// A private folder holding copies, removed on close.
    private let scratch: URL?

    private init(handle: OpaquePointer, path: String, scratch: URL?) {
        self.handle = handle
        self.path = path
        self.scratch = scratch
    }

    deinit {
        close()
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    /// Creates a new, empty database file at `url` (which must not exist) and opens it for writing.
    static func create(_ url: URL) throws -> SQLiteDatabase {
        try open(url.path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, displayPath: url.relativePath)
    }

    /// Opens an existing store for reading and writing (saving into it).
    static func openForWriting(_ url: URL) throws -> SQLiteDatabase {
        let kind = FileAccess.kind(of: url)
        guard kind.exists, !kind.isDirectory else {
            throw GraftError(.fileNotFound, "no such file", context: [.file(url.relativePath)])
        }
        let database = try open(url.path, flags: SQLITE_OPEN_READWRITE, displayPath: url.relativePath)
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
                components.string!, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, displayPath: url.relativePath)
            try database.checkIsSQLite()
            return database
        }
        let scratch = manager.temporaryDirectory.appendingPathComponent("graft-read-\(UUID().uuidString)")
        do {
            try manager.createDirectory(at: scratch, withIntermediateDirectories: true)
            let copy = scratch.appendingPathComponent(url.lastPathComponent)
            try manager.copyItem(at: url, to: copy)
            for suffix in ["-wal", "-journal"] where manager.fileExists(atPath: url.path + suffix) {
                try manager.copyItem(atPath: url.path + suffix, toPath: copy.path + suffix)
            }
            let database = try open(
                copy.path, flags: SQLITE_OPEN_READWRITE, displayPath: url.relativePath, scratch: scratch)
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
        _ name: String, flags: Int32, displayPath: String, scratch: URL? = nil
    ) throws -> SQLiteDatabase {
        var handle: OpaquePointer?
        let status = sqlite3_open_v2(name, &handle, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            if let handle { sqlite3_close_v2(handle) }
            if let scratch { try? FileManager.default.removeItem(at: scratch) }
            throw GraftError(.io, "cannot open the SQLite store: \(message)", context: [.file(displayPath)])
        }
        return SQLiteDatabase(handle: handle, path: displayPath, scratch: scratch)
    }

    /// Reads the schema once so that a file that is not SQLite fails here, with a clear message.
    private func checkIsSQLite() throws {
        do {
            _ = try prepare("SELECT count(*) FROM sqlite_master").step()
        } catch let error as GraftError {
            throw GraftError(.malformedInput, "is not a SQLite database (\(error.message))", context: [.file(path)])
        }
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
        if status != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? ""
            sqlite3_free(message)
            throw GraftError(.io, "SQLite failed: \(text)", context: [.file(path)])
        }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Whether a table with this name exists.
    func hasTable(_ name: String) throws -> Bool {
        let statement = try prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        try statement.bind(name, at: 1)
        return try statement.step()
    }

    func error(_ status: Int32, _ doing: String) -> GraftError {
        let message = String(cString: sqlite3_errmsg(handle))
        let code: GraftError.Code = status == SQLITE_CORRUPT || status == SQLITE_NOTADB ? .malformedInput : .io
        return GraftError(code, "\(doing): \(message)", context: [.file(path)])
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
    func validatedText(_ index: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, index) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(validating: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func data(_ index: Int32) -> Data? {
        guard sqlite3_column_type(statement, index) != SQLITE_NULL else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        guard count > 0, let pointer = sqlite3_column_blob(statement, index) else { return Data() }
        return Data(bytes: pointer, count: count)
    }
}
