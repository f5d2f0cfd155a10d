import CSQLiteFuzz
import Foundation
import Graft

/// The sqlite-values target: a real store with some of its values replaced, then read by Graft.
///
/// Mutating a SQLite file byte by byte mostly yields files SQLite itself refuses, so the store reader's
/// value decoding is seldom reached. Here the input is a list of edits instead, applied with SQL to a
/// copy of one of the real stores in `Seeds/sqlite-store`: any table, any column, any row, any value of
/// any SQLite type (text in an integer column, a real beyond Decimal's range, a key at INT64_MAX, a
/// model cache that is not deflate). Graft then reads the copy as `graft convert` would.
///
/// An input is: one byte choosing the store (and, with its high bit, dropping dangling references),
/// then edits of four bytes — table, column, row, kind — each followed by its value: nothing (NULL),
/// 8 bytes (an integer or a real, little-endian), a length byte and that many bytes (text or a blob), or
/// one byte choosing one of `SQLiteValueEdits.awkward(_:)`.
enum SQLiteValueEdits {
    /// A table of a base store, with what an edit can choose.
    struct Table {
        var name: String
        var columns: [String]
        var rows: Int
    }

    struct Base {
        var url: URL
        var tables: [Table]
    }

    /// Values that have broken readers before, or are at the edge of a type (a function, not a table:
    /// see `__lsan_disable` in main.swift).
    static func awkward(_ choice: UInt8) -> SQLValue {
        switch choice % 28 {
        case 0: return .integer(Int64.max)
        case 1: return .integer(Int64.min)
        case 2: return .integer(0)
        case 3: return .integer(-1)
        case 4: return .integer(Int64(Int32.max) + 1)
        case 5: return .integer(Int64(Int16.max) + 1)
        case 6: return .integer(1 << 53 + 1)
        case 7: return .real(.infinity)
        case 8: return .real(-.infinity)
        case 9: return .real(.nan)
        case 10: return .real(-0.0)
        case 11: return .real(1e308)
        case 12: return .real(5e-324)
        case 13: return .real(10.5)
        case 14: return .text("1e999999")
        case 15: return .text("-1e999999")
        case 16: return .text("NaN")
        case 17: return .text("abc")
        case 18: return .text("")
        case 19: return .text("10.5")
        case 20: return .text("99999999999999999999999")
        case 21: return .text("0x10")
        case 22: return .text("\u{FFFD}")
        case 23: return .blob(Data())
        case 24: return .blob(Data([0xFF, 0xFE, 0x00]))
        case 25: return .blob(Data(repeating: 0xFF, count: 33))
        case 26: return .text("NSStoreType")
        default: return .text("not-a-uuid")
        }
    }

    enum SQLValue {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob(Data)
    }

    /// The stores edits start from: the real stores of the sqlite-store seeds, found beside this file.
    static let bases: [Base] = {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Seeds/sqlite-store").standardizedFileURL
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().compactMap { name in
            let url = folder.appendingPathComponent(name)
            guard let tables = try? describe(url) else { return nil }
            return Base(url: url, tables: tables)
        }
    }()

    static func run(_ data: Data) throws {
        guard !bases.isEmpty else { fatalError("sqlite-values: no stores in Seeds/sqlite-store") }
        var input = ByteReader(data)
        let first = input.byte() ?? 0
        let base = bases[Int(first & 0x7F) % bases.count]
        let url = try Scratch.file(named: "store.sqlite", contents: Data(contentsOf: base.url))
        try apply(&input, to: url, base: base)
        let reader = try SQLiteStoreReader(
            url: url, model: nil, missingExternalData: .omit, danglingReferences: first & 0x80 != 0 ? .drop : .keep)
        _ = try reader.counts()
        _ = reader.keyOffsets
        try reader.forEachSnapshot { _ in }
    }

    /// Applies up to 16 edits; an edit SQLite refuses (a constraint) is skipped, as a damaged store
    /// could hold anything.
    static func apply(_ input: inout ByteReader, to url: URL, base: Base) throws {
        let database = try Connection(url)
        try database.execute("PRAGMA journal_mode=DELETE")
        for _ in 0..<16 {
            guard let tableByte = input.byte(), let columnByte = input.byte(), let rowByte = input.byte(),
                let kind = input.byte()
            else { break }
            let table = base.tables[Int(tableByte) % base.tables.count]
            guard !table.columns.isEmpty else { continue }
            let column = table.columns[Int(columnByte) % table.columns.count]
            let value: SQLValue
            switch kind % 6 {
            case 0: value = .null
            case 1: value = .integer(Int64(bitPattern: input.word()))
            case 2: value = .real(Double(bitPattern: input.word()))
            case 3: value = .text(String(decoding: input.bytes(Int(input.byte() ?? 0)), as: UTF8.self))
            case 4: value = .blob(input.bytes(Int(input.byte() ?? 0)))
            default: value = awkward(input.byte() ?? 0)
            }
            let row = table.rows == 0 ? 0 : Int(rowByte) % table.rows
            if FuzzTarget.verbose {
                FuzzTarget.say(
                    "sqlite-values: \(base.url.lastPathComponent): \(table.name).\(column) row \(row) = \(value)")
            }
            try? database.update(table: table.name, column: column, row: row, to: value)
        }
    }

    /// The tables of a store, their columns and row counts.
    static func describe(_ url: URL) throws -> [Table] {
        let scratch = try Scratch.file(named: "describe.sqlite", contents: Data(contentsOf: url))
        let database = try Connection(scratch)
        var tables: [Table] = []
        for name in try database.strings("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
            let columns = try database.strings("SELECT name FROM pragma_table_info('\(name)') ORDER BY cid")
            let rows = Int(try database.strings("SELECT count(*) FROM \"\(name)\"").first ?? "0") ?? 0
            tables.append(Table(name: name, columns: columns, rows: rows))
        }
        return tables
    }

    /// A read-write connection to a scratch copy.
    final class Connection {
        let handle: OpaquePointer

        init(_ url: URL) throws {
            var handle: OpaquePointer?
            guard sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else {
                sqlite3_close(handle)
                throw GraftError(.io, "sqlite-values: cannot open \(url.path)")
            }
            self.handle = handle
        }

        deinit { sqlite3_close(handle) }

        func execute(_ sql: String) throws {
            guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
                throw GraftError(.io, "sqlite-values: \(String(cString: sqlite3_errmsg(handle)))")
            }
        }

        func strings(_ sql: String) throws -> [String] {
            let statement = try prepare(sql)
            defer { sqlite3_finalize(statement) }
            var result: [String] = []
            while sqlite3_step(statement) == SQLITE_ROW {
                result.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "")
            }
            return result
        }

        func update(table: String, column: String, row: Int, to value: SQLValue) throws {
            let statement = try prepare(
                "UPDATE \"\(table)\" SET \"\(column)\" = ?1 WHERE rowid = (SELECT rowid FROM \"\(table)\" LIMIT 1 OFFSET ?2)"
            )
            defer { sqlite3_finalize(statement) }
            switch value {
            case .null: sqlite3_bind_null(statement, 1)
            case .integer(let integer): sqlite3_bind_int64(statement, 1, integer)
            case .real(let real): sqlite3_bind_double(statement, 1, real)
            case .text(let text): sqlite3_bind_text(statement, 1, text, -1, csqlitefuzz_transient())
            case .blob(let blob):
                _ = blob.withUnsafeBytes { bytes in
                    sqlite3_bind_blob(statement, 1, bytes.baseAddress, Int32(bytes.count), csqlitefuzz_transient())
                }
            }
            sqlite3_bind_int64(statement, 2, Int64(row))
            guard sqlite3_step(statement) == SQLITE_DONE else {
                throw GraftError(.io, "sqlite-values: \(String(cString: sqlite3_errmsg(handle)))")
            }
        }

        private func prepare(_ sql: String) throws -> OpaquePointer {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                throw GraftError(.io, "sqlite-values: \(String(cString: sqlite3_errmsg(handle)))")
            }
            return statement
        }
    }
}

/// Reads an input from the front: bytes, little-endian words; zeros once it runs out.
struct ByteReader {
    private let data: Data
    private var position: Int

    init(_ data: Data) {
        self.data = data
        position = data.startIndex
    }

    mutating func byte() -> UInt8? {
        guard position < data.endIndex else { return nil }
        defer { position += 1 }
        return data[position]
    }

    mutating func word() -> UInt64 {
        var word: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { word |= UInt64(byte() ?? 0) << UInt64(shift) }
        return word
    }

    mutating func bytes(_ count: Int) -> Data {
        let end = min(position + count, data.endIndex)
        defer { position = end }
        return data[position..<end]
    }
}
