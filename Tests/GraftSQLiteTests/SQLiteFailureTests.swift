import CSQLite
import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// SQLite failures reported as what they are — busy, read-only file or folder, disk full, damaged, not
/// a database — from SQLite's extended result codes; and a second writer waiting for the first.
@Suite final class SQLiteFailureTests {
    let folder: URL
    let url: URL

    init() throws {
        folder = try scratchFolder()
        url = folder.appendingPathComponent("Company.sqlite")
        try FileManager.default.copyItem(at: Project.url("examples/Company/Company.sqlite"), to: url)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    // MARK: Codes

    struct Mapping: CustomTestStringConvertible, Sendable {
        var name: String
        var code: Int32
        var systemError: Int32 = 0
        var folderIsWritable = true
        var failure: SQLiteFailure
        var testDescription: String { name }
    }

    static let mappings: [Mapping] = [
        Mapping(name: "SQLITE_BUSY", code: SQLITE_BUSY, failure: .busy),
        Mapping(name: "SQLITE_BUSY_SNAPSHOT", code: SQLITE_BUSY | (2 << 8), failure: .busy),
        Mapping(name: "SQLITE_LOCKED", code: SQLITE_LOCKED, failure: .busy),
        Mapping(name: "SQLITE_READONLY", code: SQLITE_READONLY, failure: .readOnly),
        Mapping(name: "SQLITE_READONLY_CANTINIT", code: SQLITE_READONLY | (5 << 8), failure: .readOnly),
        Mapping(name: "SQLITE_READONLY_DIRECTORY", code: SQLITE_READONLY | (6 << 8), failure: .readOnlyFolder),
        Mapping(name: "SQLITE_PERM", code: SQLITE_PERM, failure: .readOnly),
        Mapping(name: "SQLITE_FULL", code: SQLITE_FULL, failure: .diskFull),
        Mapping(
            name: "SQLITE_IOERR_WRITE with ENOSPC", code: SQLITE_IOERR | (3 << 8), systemError: ENOSPC,
            failure: .diskFull),
        Mapping(
            name: "SQLITE_IOERR_FSYNC with EDQUOT", code: SQLITE_IOERR | (4 << 8), systemError: EDQUOT,
            failure: .diskFull),
        Mapping(
            name: "SQLITE_IOERR_WRITE with EROFS", code: SQLITE_IOERR | (3 << 8), systemError: EROFS, failure: .readOnly
        ),
        Mapping(name: "SQLITE_IOERR_READ with EIO", code: SQLITE_IOERR | (1 << 8), systemError: EIO, failure: .ioError),
        Mapping(name: "SQLITE_CORRUPT", code: SQLITE_CORRUPT, failure: .corrupt),
        Mapping(name: "SQLITE_CORRUPT_INDEX", code: SQLITE_CORRUPT | (3 << 8), failure: .corrupt),
        Mapping(name: "SQLITE_NOTADB", code: SQLITE_NOTADB, failure: .notADatabase),
        Mapping(name: "SQLITE_CANTOPEN", code: SQLITE_CANTOPEN, systemError: ENOENT, failure: .cannotOpen),
        Mapping(
            name: "SQLITE_CANTOPEN in a read-only folder", code: SQLITE_CANTOPEN, systemError: EACCES,
            folderIsWritable: false, failure: .readOnlyFolder),
        Mapping(name: "SQLITE_CONSTRAINT_UNIQUE", code: SQLITE_CONSTRAINT | (8 << 8), failure: .constraintViolation),
        Mapping(name: "SQLITE_ERROR", code: SQLITE_ERROR, failure: .other),
    ]

    @Test(arguments: mappings)
    func resultCodesAreToldApart(_ mapping: Mapping) {
        #expect(
            SQLiteFailure(
                code: mapping.code, systemError: mapping.systemError, folderIsWritable: mapping.folderIsWritable)
                == mapping.failure)
    }

    // MARK: Busy

    /// A connection of its own that takes the store's write lock and holds it until told.
    final class Holder: @unchecked Sendable {
        let taken = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let work: Background<Bool>

        init(_ url: URL, exclusive: Bool = false) {
            let (taken, release) = (taken, release)
            work = Background {
                let database = try SQLiteDatabase.openForWriting(url, wait: 0)
                try database.execute(exclusive ? "BEGIN EXCLUSIVE" : "BEGIN IMMEDIATE")
                try database.execute("UPDATE ZDEPARTMENT SET ZLOCATION = 'held' WHERE Z_PK = 1")
                taken.signal()
                release.wait()
                try database.execute("ROLLBACK")
                return true
            }
            _ = taken.wait(timeout: .now() + 30)
        }

        func finish() throws {
            release.signal()
            #expect(try work.wait(30)?.get() == true)
        }
    }

    @Test func aSecondWriterFailsAsBusyAfterItsWaitSayingSo() throws {
        let holder = Holder(url)
        defer { try? holder.finish() }
        let store = try SQLiteStore.open(url, model: nil, wait: 0.3)
        let started = Date()
        let error = #expect(throws: GraftError.self) { try store.beginExclusiveAccess() }
        #expect(Date().timeIntervalSince(started) >= 0.3)
        #expect(error?.code == .busy)
        #expect(
            error?.description
                == "\(url.relativePath): is busy: another connection holds a lock on the store and did not release it within 0.3 s; nothing was written (--wait sets how long to wait)"
        )
    }

    @Test func aStoreLockedAgainstReadersIsBusyWhenOpened() throws {
        // A rollback-journal store under an exclusive lock cannot even be read.
        let database = try SQLiteDatabase.openForWriting(url)
        try database.execute("PRAGMA journal_mode = DELETE")
        database.close()
        let holder = Holder(url, exclusive: true)
        defer { try? holder.finish() }
        let error = #expect(throws: GraftError.self) { try SQLiteStore.open(url, model: nil, wait: 0.2) }
        #expect(error?.code == .busy)
        #expect(error?.message.hasPrefix("is busy: another connection holds a lock on the store") == true)
    }

    @Test func aSecondWriterWaitsForTheFirstToFinish() throws {
        let holder = Holder(url)
        let store = try SQLiteStore.open(url, model: nil, wait: 30)
        let started = Date()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { holder.release.signal() }
        try store.beginExclusiveAccess()
        #expect(Date().timeIntervalSince(started) >= 0.4)
        #expect(try holder.work.wait(30)?.get() == true)
        // The transaction is the paste's: its save commits it.
        let context = ObjectContext(store: store)
        let department = try context.insert("Department")
        try department.setValue("Waited", forKey: "name")
        try department.setValue(Int64(77), forKey: "code")
        try context.save(validating: false)
        #expect(!store.holdsExclusiveAccess)
        let check = try SQLiteDatabase.openForReading(url)
        let names = try check.prepare("SELECT count(*) FROM ZDEPARTMENT WHERE ZNAME = 'Waited'")
        #expect(try names.step() && names.int64(0) == 1)
    }

    // MARK: Read-only

    @Test(.enabled(if: ReadOnlyFiles.isAvailable, Comment(rawValue: ReadOnlyFiles.unavailableMessage)))
    func aReadOnlyStoreIsReportedAsReadOnly() throws {
        let before = try Data(contentsOf: url)
        try ReadOnlyFiles.with([url]) {
            let error = #expect(throws: GraftError.self) { try SQLiteStore.open(url, model: nil) }
            #expect(error?.code == .io)
            #expect(
                error?.description
                    == "\(url.relativePath): cannot be written: the store is read-only (its permissions or its file system do not allow writing)"
            )
            // Reading needs no write access.
            let reading = try SQLiteStore.openForReading(url, model: nil)
            #expect(!reading.identifier.isEmpty)
        }
        #expect(try Data(contentsOf: url) == before)
    }

    @Test(.enabled(if: ReadOnlyFiles.isAvailable, Comment(rawValue: ReadOnlyFiles.unavailableMessage)))
    func aStoreInAReadOnlyFolderSaysTheFolderIsReadOnly() throws {
        let expected =
            "\(url.relativePath): cannot be written: the folder \(folder.relativePath) is read-only, and SQLite must create the store's journal (-journal, or -wal and -shm) in it"
        // A WAL store needs its -wal and -shm to be opened at all.
        try ReadOnlyFiles.with([folder]) {
            let error = #expect(throws: GraftError.self) { try SQLiteStore.open(url, model: nil) }
            #expect(error?.description == expected)
        }
        // A rollback-journal store opens, and fails when a save needs its journal.
        let database = try SQLiteDatabase.openForWriting(url)
        try database.execute("PRAGMA journal_mode = DELETE")
        database.close()
        try ReadOnlyFiles.with([folder]) {
            let store = try SQLiteStore.open(url, model: nil)
            let context = ObjectContext(store: store)
            let department = try context.insert("Department")
            try department.setValue("Nowhere", forKey: "name")
            try department.setValue(Int64(5), forKey: "code")
            let error = #expect(throws: GraftError.self) { try context.save(validating: false) }
            #expect(error?.description == expected)
        }
    }

    // MARK: Full, damaged, not a database

    @Test func aFullDiskIsReportedAsFull() throws {
        let database = try SQLiteDatabase.openForWriting(url)
        // SQLite's own limit on the file's size fails a write just as a full disk does (SQLITE_FULL).
        try database.execute("PRAGMA max_page_count = \(try Data(contentsOf: url).count / 4096)")
        let error = #expect(throws: GraftError.self) {
            try database.execute("CREATE TABLE filler (x BLOB)")
            try database.execute("INSERT INTO filler VALUES (zeroblob(1000000))")
        }
        #expect(error?.code == .io)
        #expect(
            error?.description == "\(url.relativePath): cannot be written: the disk is full (database or disk is full)")
    }

    @Test func aDamagedStoreAndAFileThatIsNotSQLiteAreToldApart() throws {
        var bytes = try Data(contentsOf: url)
        // The first page's b-tree header, just after the 100-byte database header.
        bytes.replaceSubrange(100..<108, with: Data(repeating: 0xFF, count: 8))
        let damaged = folder.appendingPathComponent("Damaged.sqlite")
        try bytes.write(to: damaged)
        let text = folder.appendingPathComponent("Text.sqlite")
        try Data(String(repeating: "not a database\n", count: 300).utf8).write(to: text)
        for open in [{ try SQLiteDatabase.openForReading($0) }, { try SQLiteDatabase.openForWriting($0) }] {
            let broken = #expect(throws: GraftError.self) { _ = try open(damaged) }
            #expect(broken?.code == .malformedInput)
            #expect(
                broken?.description
                    == "\(damaged.relativePath): is a damaged SQLite database (database disk image is malformed)")
            let other = #expect(throws: GraftError.self) { _ = try open(text) }
            #expect(other?.code == .malformedInput)
            #expect(other?.description == "\(text.relativePath): is not a SQLite database")
        }
    }
}
