import Foundation
import Graft
import GraftCLI
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// What `graft` promises about the files it writes: concurrent pastes all land, a busy store is
/// reported as busy, dry runs and refused pastes change nothing (a SQLite store's `-wal` included),
/// temporary files left by killed runs are removed, only regular files are replaced, links are written
/// through, and clipboard input is read once and within a limit.
@Suite(.enabled(if: GraftExecutable.url != nil, "the graft executable was not found; run `swift build` first"))
struct SafeWriteCommandTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-safe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

    func contents() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() }

    func graft(_ arguments: [String], input: Data = Data()) -> InProcessRun { InProcessRun(arguments, input: input) }

    /// The example store of `format`, copied into the folder.
    func example(_ format: String, as name: String? = nil) throws -> URL {
        let copy = url(name ?? "Company.\(format)")
        try FileManager.default.copyItem(at: Project.url("examples/Company/Company.\(format)"), to: copy)
        return copy
    }

    /// A clipboard of a department (with its projects, and references to its people) named `name`.
    static let salesClipboard: Data = {
        let run = InProcessRun([
            "copy", Project.url("examples/Company/Company.sqlite").path, "--entity", "Department", "--where",
            "name == 'Sales'",
        ])
        return run.output
    }()

    static func clipboard(named name: String) -> Data {
        Data(
            String(decoding: salesClipboard, as: UTF8.self).replacingOccurrences(of: "\"Sales\"", with: "\"\(name)\"")
                .utf8)
    }

    /// A running `graft`.
    final class Running {
        let process = Process()
        let output = Pipe()
        let error = Pipe()

        init(_ arguments: [String], input: FileHandle = FileHandle.nullDevice) throws {
            process.executableURL = GraftExecutable.url
            process.arguments = arguments
            process.standardOutput = output
            process.standardError = error
            process.standardInput = input
            try process.run()
        }

        /// Waits for the end (killing the process after `seconds`): status, output, error.
        func finish(within seconds: Double = 60) -> (status: Int32, output: String, error: String) {
            let pid = process.processIdentifier
            let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: watchdog)
            let outputData = output.fileHandleForReading.readDataToEndOfFile()
            let errorData = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            watchdog.cancel()
            return (
                process.terminationReason == .exit ? process.terminationStatus : -1,
                String(decoding: outputData, as: UTF8.self), String(decoding: errorData, as: UTF8.self)
            )
        }
    }

    // MARK: Concurrent writers

    @Test(arguments: ["xml", "sqlite"])
    func twoPastesAtOnceBothLand(format: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try example(format)
        var printed: [String] = []
        let rounds = 20
        for round in 0..<rounds {
            let names = ["A\(round)", "B\(round)"]
            for name in names { try Self.clipboard(named: name).write(to: url("\(name).json")) }
            let runs = try names.map {
                try Running(["paste", url("\($0).json").path, "--into", store.path, "--dangling", "drop", "-q"])
            }
            for (name, run) in zip(names, runs) {
                let result = run.finish()
                #expect(result.status == 0, "round \(round), \(name): \(result.error)")
                printed += result.output.split(separator: "\n").map { String($0.split(separator: "\t")[1]) }
            }
        }
        // Every object either paste reported is in the store, and every department pasted is there.
        let opened = try Graft.StoreFormat.openForReading(store, model: nil)
        for uri in printed {
            let (_, id) = try ObjectID.parse(uri: uri, model: opened.model)
            #expect(try opened.snapshot(for: id.ref) != nil, "\(uri) is not in the store")
        }
        let context = ObjectContext(store: opened)
        let names = try context.fetch(FetchRequest(entityName: "Department")).compactMap {
            $0.value(forKey: "name") as? String
        }
        for round in 0..<rounds {
            #expect(names.contains("A\(round)") && names.contains("B\(round)"), "round \(round) lost a paste")
        }
        #expect(printed.count == rounds * 2 * 3)
        #expect(try contents().filter { $0.contains(".graft-") }.isEmpty)
    }

    @Test func aPasteIntoAStoreAnotherWriterHoldsFailsAsBusyNamingTheHolder() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try Self.clipboard(named: "Busy").write(to: url("busy.json"))
        let xml = try example("xml")
        let before = try Data(contentsOf: xml)
        let lock = try FileLock(xml, wait: 0)
        let started = Date()
        let refused = try Running(["paste", url("busy.json").path, "--into", xml.path, "--wait", "0.5"]).finish()
        #expect(Date().timeIntervalSince(started) >= 0.5)
        #expect(refused.status == 1)
        #expect(
            refused.error.hasPrefix(
                "error: \(xml.path): is busy: another writer (process \(getpid())"),
            "\(refused.error)")
        #expect(
            refused.error.hasSuffix(
                "holds its lock and did not release it within 0.5 s; nothing was written (--wait sets how long to wait)\n"
            ))
        lock.release()
        #expect(try Data(contentsOf: xml) == before)

        let sqlite = try example("sqlite")
        let holder = try SQLiteDatabase.openForWriting(sqlite)
        try holder.execute("BEGIN IMMEDIATE")
        let busy = try Running(["paste", url("busy.json").path, "--into", sqlite.path, "--wait", "0.5"]).finish()
        #expect(busy.status == 1)
        #expect(
            busy.error.hasPrefix("error: \(sqlite.path): is busy: another connection (process \(getpid())"),
            "\(busy.error)")
        #expect(busy.error.contains("holds a lock on the store and did not release it within 0.5 s"))
        try holder.execute("ROLLBACK")
        holder.close()
    }

    // MARK: Dry runs and refused pastes

    /// A copy of the example SQLite store in WAL mode whose `-wal` holds a change the main file lacks.
    func storeWithWAL(_ name: String) throws -> URL {
        let work = url("work-\(name)")
        try FileManager.default.copyItem(at: Project.url("examples/Company/Company.sqlite"), to: work)
        let database = try SQLiteDatabase.openForWriting(work)
        try database.execute("PRAGMA journal_mode = WAL")
        try database.execute("PRAGMA wal_autocheckpoint = 0")
        try database.execute("UPDATE ZDEPARTMENT SET ZLOCATION = 'in the wal' WHERE ZNAME = 'Sales'")
        // Copied while the connection is open: the main file and a -wal with the change in it.
        let store = url(name)
        try FileManager.default.copyItem(at: work, to: store)
        try FileManager.default.copyItem(atPath: work.path + "-wal", toPath: store.path + "-wal")
        database.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: work.path + suffix) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.path + "-wal")).count > 0)
        return store
    }

    func files(of store: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        for suffix in ["", "-wal", "-journal"] {
            files[suffix] = try? Data(contentsOf: URL(fileURLWithPath: store.path + suffix))
        }
        return files
    }

    @Test func aDryRunAndARefusedPasteLeaveAStoreAndItsWALByteForByte() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try storeWithWAL("Wal.sqlite")
        let before = files(of: store)
        #expect(before["-wal"] != nil)
        let listing = try contents()
        let clipboard = Self.clipboard(named: "Dry")
        let dry = graft(["paste", "--into", store.path, "--dangling", "drop", "--dry-run"], input: clipboard)
        #expect(dry.status == 0, "\(dry.error)")
        #expect(dry.text.hasPrefix("Dry run: nothing was written to \(store.path).\nWould insert 3 objects"))
        #expect(files(of: store) == before)
        #expect(try contents() == listing)
        // Refused: a department named Sales exists.
        let refused = graft(["paste", "--into", store.path, "--dangling", "drop"], input: Self.salesClipboard)
        #expect(refused.status == 1)
        #expect(refused.error.contains("a Department with name = Sales already exists"), "\(refused.error)")
        #expect(files(of: store) == before)
        // A paste that goes ahead sees what the -wal holds.
        let pasted = graft(["paste", "--into", store.path, "--dangling", "drop", "-q"], input: clipboard)
        #expect(pasted.status == 0, "\(pasted.error)")
        let opened = ObjectContext(store: try Graft.StoreFormat.openForReading(store, model: nil))
        let locations = try opened.fetch(FetchRequest(entityName: "Department")).compactMap {
            $0.value(forKey: "location") as? String
        }
        #expect(locations.contains("in the wal"))
    }

    @Test(.enabled(if: ReadOnlyFiles.isAvailable, Comment(rawValue: ReadOnlyFiles.unavailableMessage)))
    func aDryRunNeedsNoWriteAccess() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let sqlite = try storeWithWAL("ReadOnly.sqlite")
        let xml = try example("xml")
        let before = [files(of: sqlite), files(of: xml)]
        let clipboard = Self.clipboard(named: "Dry")
        try ReadOnlyFiles.with([sqlite, URL(fileURLWithPath: sqlite.path + "-wal"), xml, folder]) {
            for store in [sqlite, xml] {
                let dry = graft(["paste", "--into", store.path, "--dangling", "drop", "--dry-run"], input: clipboard)
                #expect(dry.status == 0, "\(store.lastPathComponent): \(dry.error)")
                #expect(dry.text.hasPrefix("Dry run: nothing was written"))
            }
            // A real paste says why it cannot write.
            let refused = graft(["paste", "--into", sqlite.path, "--dangling", "drop"], input: clipboard)
            #expect(refused.status == 1)
            #expect(refused.error.contains("read-only"), "\(refused.error)")
        }
        #expect([files(of: sqlite), files(of: xml)] == before)
    }

    // MARK: Temporary files

    @Test(arguments: ["xml", "sqlite"])
    func theNextWriteRemovesWhatAKilledOneLeft(format: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try example(format, as: "Target.\(format)")
        let dead = Process()
        dead.executableURL = URL(fileURLWithPath: "/bin/sh")
        dead.arguments = ["-c", "exit 0"]
        try dead.run()
        dead.waitUntilExit()
        let stale = ".Target.\(format).graft-\(dead.processIdentifier)-\(UUID().uuidString).tmp"
        let live = ".Target.\(format).graft-\(getpid())-\(UUID().uuidString).tmp"
        for name in [stale, stale + "-journal", live] {
            #expect(FileManager.default.createFile(atPath: url(name).path, contents: Data(count: 4096)))
        }
        // A paste into an XML store replaces it, so it cleans up; a SQLite store is written in place, so
        // the next conversion to it does.
        if format == "xml" {
            let run = graft(
                ["paste", "--into", store.path, "--dangling", "drop", "-q"], input: Self.clipboard(named: "T"))
            #expect(run.status == 0, "\(run.error)")
        } else {
            let run = graft(["convert", Project.url("examples/Company/Company.xml").path, store.path, "--force", "-q"])
            #expect(run.status == 0, "\(run.error)")
        }
        #expect(try contents() == [live, "Target.\(format)"].sorted())
    }

    // MARK: What is replaced

    @Test func copyRefusesToWriteOverTheStoreItReads() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try example("sqlite", as: "S.sqlite")
        try FileManager.default.createSymbolicLink(atPath: url("link.sqlite").path, withDestinationPath: "S.sqlite")
        try FileManager.default.linkItem(at: store, to: url("hard.sqlite"))
        let before = try Data(contentsOf: store)
        for output in ["S.sqlite", "link.sqlite", "hard.sqlite", "./S.sqlite"] {
            let run = graft(["copy", store.path, "--all", "-o", url(output).path, "--force"])
            #expect(run.status == 1)
            #expect(
                run.error
                    == "error: \(url(output).path): is the store being copied (or one of its files); choose another output\n"
            )
        }
        // Through the link, the other way round, and onto its -wal.
        let wal = try storeWithWAL("W.sqlite")
        let walBefore = files(of: wal)
        for (source, output) in [(url("link.sqlite").path, store.path), (wal.path, wal.path + "-wal")] {
            let run = graft(["copy", source, "--all", "-o", output, "--force"])
            #expect(run.status == 1, "\(output)")
            #expect(run.error.contains("is the store being copied"), "\(run.error)")
        }
        let convert = graft(["convert", url("link.sqlite").path, url("hard.sqlite").path, "--force"])
        #expect(convert.status == 1)
        #expect(try Data(contentsOf: store) == before)
        #expect(files(of: wal) == walBefore)
    }

    @Test func theIDMapNeverReplacesTheStoreOrTheClipboard() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try example("xml")
        try FileManager.default.createSymbolicLink(atPath: url("link.xml").path, withDestinationPath: "Company.xml")
        let clipboard = url("in.json")
        try Self.clipboard(named: "Mapped").write(to: clipboard)
        let before = [try Data(contentsOf: store), try Data(contentsOf: clipboard)]
        for map in [store.path, url("link.xml").path, clipboard.path] {
            let run = graft(["paste", clipboard.path, "--into", store.path, "--dangling", "drop", "--id-map", map])
            #expect(run.status == 1)
            #expect(run.error == "error: \(map): --id-map names the store or the clipboard; choose another file\n")
        }
        #expect([try Data(contentsOf: store), try Data(contentsOf: clipboard)] == before)
    }

    @Test func forceNeverReplacesAFIFOAFolderOrADevice() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(mkfifo(url("pipe.json").path, 0o644) == 0)
        try FileManager.default.createDirectory(at: url("folder.json"), withIntermediateDirectories: true)
        let company = Project.url("examples/Company/Company.sqlite").path
        for (output, kind) in [
            (url("pipe.json").path, "a FIFO (named pipe)"), (url("folder.json").path, "a folder"),
            ("/dev/null", "a character device"),
        ] {
            let copy = graft(["copy", company, "--all", "-o", output, "--force"])
            #expect(copy.status == 1)
            #expect(
                copy.error
                    == "error: \(output): is \(kind), not a regular file; Graft only ever replaces regular files (--force too)\n"
            )
            let convert = graft(["convert", company, output, "--to", "xml", "--force"])
            #expect(convert.status == 1)
            #expect(convert.error.contains("is \(kind), not a regular file"), "\(convert.error)")
        }
        #expect(FileAccess.fileKind(of: url("pipe.json")) == .fifo)
        #expect(FileAccess.fileKind(of: url("folder.json")) == .directory)
        #expect(FileAccess.fileKind(of: URL(fileURLWithPath: "/dev/null")) == .characterDevice)
        #expect(try contents() == ["folder.json", "pipe.json"])
    }

    @Test(arguments: ["xml", "sqlite", "binary"])
    func aPasteIntoALinkedStoreWritesTheStoreItPointsTo(format: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: url("stores"), withIntermediateDirectories: true)
        let real = url("stores/Real.\(format)")
        let first = graft(
            ["paste", "--into", real.path, "--dangling", "drop", "-q"], input: Self.clipboard(named: "First"))
        #expect(first.status == 0, "\(first.error)")
        try FileManager.default.createSymbolicLink(
            atPath: url("Link.\(format)").path, withDestinationPath: "stores/Real.\(format)")
        let run = graft(
            ["paste", "--into", url("Link.\(format)").path, "--dangling", "drop", "-q"],
            input: Self.clipboard(named: "Second"))
        #expect(run.status == 0, "\(run.error)")
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: url("Link.\(format)").path)
                == "stores/Real.\(format)")
        let context = ObjectContext(store: try Graft.StoreFormat.openForReading(real, model: nil))
        let names = try context.fetch(FetchRequest(entityName: "Department")).compactMap {
            $0.value(forKey: "name") as? String
        }
        #expect(names.sorted() == ["First", "Second"])
        #expect(try contents() == ["Link.\(format)", "stores"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: url("stores").path).filter { $0.contains(".graft-") }
                .isEmpty)
    }

    // MARK: Clipboard input

    @Test func aFIFOAsClipboardIsReadOnce() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = url("clipboard.json")
        #expect(mkfifo(fifo.path, 0o644) == 0)
        let clipboard = Self.clipboard(named: "Piped")
        let path = fifo.path
        let writer = Background { () -> Bool in
            let descriptor = open(path, O_WRONLY)
            defer { close(descriptor) }
            return clipboard.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == clipboard.count
        }
        let run = try Running(["paste", fifo.path, "--into", url("new.xml").path, "--dangling", "drop", "-q"])
            .finish(within: 30)
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.split(separator: "\n").count == 3)
        #expect(try writer.wait(30)?.get() == true)
    }

    @Test func clipboardInputStopsAtItsLimit() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let zero = try #require(FileHandle(forReadingAtPath: "/dev/zero"))
        let run = try Running(["paste", "-", "--into", url("new.xml").path, "--max-size", "4M"], input: zero)
            .finish(within: 30)
        #expect(run.status == 1)
        #expect(
            run.error
                == "error: standard input: holds more than 4 MiB, the most accepted; reading stopped there (--max-size sets the limit)\n"
        )
        let file = url("big.json")
        try Self.salesClipboard.write(to: file)
        let refused = graft(["paste", file.path, "--into", url("new.xml").path, "--max-size", "1K"])
        #expect(refused.status == 1)
        #expect(refused.error.contains("\(file.path): holds more than 1 KiB"), "\(refused.error)")
        let piped = graft(["paste", "--into", url("new.xml").path, "--max-size", "100"], input: Self.salesClipboard)
        #expect(piped.error.contains("standard input: holds more than 100 bytes"), "\(piped.error)")
        #expect(try contents() == ["big.json"])
        // Sizes are bytes or K, M, G, T; anything else is a usage error.
        for bad in ["0", "-1", "1.5G", "12X", "M", "99999999999999T"] {
            #expect(
                graft(["paste", file.path, "--into", url("new.xml").path, "--max-size", bad]).status == 64, "\(bad)")
        }
        #expect(graft(["paste", file.path, "--into", url("new.xml").path, "--wait", "-3"]).status == 64)
        let fits = graft([
            "paste", file.path, "--into", url("new.xml").path, "--max-size", "1m", "--dangling", "drop", "-q",
        ])
        #expect(fits.status == 0, "\(fits.error)")
    }
}
