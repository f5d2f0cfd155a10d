import CSQLite
import Foundation

/// A query SQLite itself refused, or a file it could not open.
public struct SQLiteQueryFailed: Error, CustomStringConvertible {
    public var description: String
}

/// Rows of a query on a SQLite file, each column as text (`nil` for NULL), read with SQLite's own C
/// interface rather than Graft's reader, for tests that check what a store holds.
public func rows(_ sql: String, in url: URL) throws -> [[String?]] {
    var database: OpaquePointer?
    guard sqlite3_open_v2(url.path, &database, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
        sqlite3_close(database)
        throw SQLiteQueryFailed(description: "cannot open \(url.path)")
    }
    defer { sqlite3_close(database) }
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK else {
        throw SQLiteQueryFailed(description: String(cString: sqlite3_errmsg(database)))
    }
    defer { sqlite3_finalize(statement) }
    var found: [[String?]] = []
    while sqlite3_step(statement) == SQLITE_ROW {
        found.append(
            (0..<sqlite3_column_count(statement)).map { column in
                sqlite3_column_text(statement, column).map { String(cString: $0) }
            })
    }
    return found
}
