import Foundation
import GraftTestSupport
import Testing

@testable import GraftCore

/// How Graft writes and replaces files (`FileReplacement`, `FileAccess`), reads its inputs, and locks
/// documents (`FileLock`): temporary files named for their writer and cleaned after a killed one, links
/// written through, only regular files replaced, inputs read once and within a limit, writers waiting
/// for each other.
@Suite struct FileSafetyTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

    func contents() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() }

    /// The id of a process that has exited.
    static func deadProcess() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exit 0"]
        try process.run()
        process.waitUntilExit()
        let pid = process.processIdentifier
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "process \(pid) should be gone")
        return pid
    }

    // MARK: Temporary files

    @Test func theTemporaryFileIsNamedForItsWriterAndGoesAwayWithIt() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = url("out.json")
        var seen: [String] = []
        try FileAccess.writeAtomically(to: target) { write in
            seen = try contents()
            try Data("{}".utf8).withUnsafeBytes { try write($0) }
        }
        #expect(seen.count == 1)
        let name = try #require(seen.first)
        let prefix = ".out.json.graft-\(getpid())-"
        #expect(name.hasPrefix(prefix) && name.hasSuffix(".tmp"), "\(name)")
        #expect(UUID(uuidString: String(name.dropFirst(prefix.count).dropLast(4))) != nil, "\(name)")
        #expect(try contents() == ["out.json"])
        #expect(try Data(contentsOf: target) == Data("{}".utf8))
        // A failed write leaves nothing either.
        struct Stop: Error {}
        #expect(throws: GraftError.self) {
            try FileAccess.writeAtomically(to: url("other.json")) { _ in throw Stop() }
        }
        #expect(try contents() == ["out.json"])
    }

    @Test func theNextWriteRemovesWhatADeadWriterLeftAndKeepsALiveOnesFiles() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = url("Store.sqlite")
        let dead = try Self.deadProcess()
        let stale = ".Store.sqlite.graft-\(dead)-\(UUID().uuidString).tmp"
        let live = ".Store.sqlite.graft-\(getpid())-\(UUID().uuidString).tmp"
        // A dead writer's file that someone still holds locked is in use too.
        let held = ".Store.sqlite.graft-\(dead)-\(UUID().uuidString).tmp"
        // Other people's files that merely look alike.
        let unrelated = [".Store.sqlite.graft-notes.tmp", ".Other.sqlite.graft-\(dead)-\(UUID().uuidString).tmp"]
        for name in [stale, stale + "-journal", stale + ".old-wal", live, held] + unrelated {
            #expect(FileManager.default.createFile(atPath: url(name).path, contents: Data(repeating: 7, count: 64)))
        }
        let holder = open(url(held).path, O_RDONLY)
        #expect(flock(holder, LOCK_EX) == 0)
        defer { close(holder) }
        try FileAccess.writeAtomically(Data("new".utf8), to: target)
        #expect(try contents() == ([live, held, "Store.sqlite"] + unrelated).sorted())
        // Once its lock is released, the dead writer's file goes too.
        flock(holder, LOCK_UN)
        #expect(FileReplacement.removeStaleTemporaryFiles(for: target) == [held])
    }

    // MARK: What is replaced

    @Test func aSymbolicLinkIsWrittenThroughToTheFileItNames() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: url("real"), withIntermediateDirectories: true)
        let real = url("real/data.xml")
        try Data("old".utf8).write(to: real)
        // A relative link to a link.
        try FileManager.default.createSymbolicLink(atPath: url("first.xml").path, withDestinationPath: "real/data.xml")
        try FileManager.default.createSymbolicLink(atPath: url("second.xml").path, withDestinationPath: "first.xml")
        try FileAccess.writeAtomically(Data("new".utf8), to: url("second.xml"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: url("second.xml").path) == "first.xml")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: url("first.xml").path) == "real/data.xml")
        #expect(try Data(contentsOf: real) == Data("new".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: url("real").path) == ["data.xml"])
        // Without overwrite, a link to an existing file counts as existing.
        #expect(throws: GraftError.self) {
            try FileAccess.writeAtomically(Data("again".utf8), to: url("second.xml"), overwrite: false)
        }
    }

    @Test func onlyRegularFilesAreReplacedEvenWithOverwrite() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(mkfifo(url("pipe").path, 0o644) == 0)
        try FileManager.default.createDirectory(at: url("folder"), withIntermediateDirectories: true)
        for (target, kind) in [
            (url("pipe"), "a FIFO (named pipe)"), (url("folder"), "a folder"),
            (URL(fileURLWithPath: "/dev/null"), "a character device"),
        ] {
            let error = #expect(throws: GraftError.self) {
                try FileAccess.writeAtomically(Data("x".utf8), to: target, overwrite: true)
            }
            #expect(error?.code == .alreadyExists)
            #expect(
                error?.message == "is \(kind), not a regular file; Graft only ever replaces regular files (--force too)"
            )
        }
        #expect(FileAccess.fileKind(of: url("pipe")) == .fifo)
        #expect(FileAccess.fileKind(of: url("folder")) == .directory)
        #expect(FileAccess.fileKind(of: URL(fileURLWithPath: "/dev/null")) == .characterDevice)
        #expect(try contents() == ["folder", "pipe"])
    }

    @Test func aReplacedFileKeepsItsPermissions() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = url("kept.xml")
        try Data("old".utf8).write(to: target)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: target.path)
        try FileAccess.writeAtomically(Data("new".utf8), to: target)
        let mode = try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int
        #expect(mode == 0o640)
    }

    @Test func sameFileIsToldByDeviceAndInode() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("x".utf8).write(to: url("a"))
        try FileManager.default.linkItem(at: url("a"), to: url("hard"))
        try FileManager.default.createSymbolicLink(atPath: url("soft").path, withDestinationPath: "a")
        try Data("x".utf8).write(to: url("copy"))
        #expect(FileAccess.isSameFile(url("a"), url("hard")))
        #expect(FileAccess.isSameFile(url("a"), url("soft")))
        #expect(FileAccess.isSameFile(url("a"), folder.appendingPathComponent("../\(folder.lastPathComponent)/a")))
        #expect(!FileAccess.isSameFile(url("a"), url("copy")))
        #expect(!FileAccess.isSameFile(url("a"), url("missing")))
    }

    // MARK: Reading inputs

    /// Runs `body` on another thread and waits for it at most `seconds`; `nil` when it did not finish.
    func finishing<T: Sendable>(
        within seconds: Double, _ body: @escaping @Sendable () throws -> T
    ) -> Result<
        T, any Error
    >? {
        Background(body).wait(seconds)
    }

    @Test func aFIFOIsOpenedOnceAndReadToItsEnd() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = url("clipboard")
        #expect(mkfifo(fifo.path, 0o644) == 0)
        let payload = Data((0..<300_000).map { UInt8($0 % 251) })
        let path = fifo.path
        let writer = Background { () -> Bool in
            let descriptor = open(path, O_WRONLY)
            defer { close(descriptor) }
            return payload.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == payload.count
        }
        let read = finishing(within: 30) { try FileAccess.read(fifo) }
        guard let read else {
            // A reader that opened the FIFO a second time is waiting for a writer that will never come.
            let release = open(path, O_WRONLY | O_NONBLOCK)
            if release >= 0 { close(release) }
            Issue.record("reading the FIFO did not finish")
            return
        }
        #expect(try read.get() == payload)
        #expect(try writer.wait(30)?.get() == true)
    }

    @Test func aLimitStopsReadingAnEndlessInput() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = finishing(within: 30) { try FileAccess.read(URL(fileURLWithPath: "/dev/zero"), maxSize: 3 << 20) }
        let error = #expect(throws: GraftError.self) { try result?.get() }
        #expect(result != nil, "reading /dev/zero did not stop")
        #expect(error?.code == .invalidOperation)
        #expect(error?.message == "holds more than 3 MiB, the most accepted; reading stopped there")
        #expect(error?.remedy?.kind == .raiseLimit)
        // A regular file over the limit fails before it is read; one at the limit is read.
        try Data(count: 1000).write(to: url("big"))
        #expect(throws: GraftError.self) { try FileAccess.read(url("big"), maxSize: 999) }
        #expect(try FileAccess.read(url("big"), maxSize: 1000).count == 1000)
        // A descriptor too.
        let descriptor = open(url("big").path, O_RDONLY)
        defer { close(descriptor) }
        let fromDescriptor = #expect(throws: GraftError.self) {
            try FileAccess.read(fileDescriptor: descriptor, maxSize: 10, name: "standard input")
        }
        #expect(
            fromDescriptor?.description
                == "standard input: holds more than 10 bytes, the most accepted; reading stopped there "
                + "(a larger size limit allows it)")
    }

    @Test func readingAFolderOrNothingSaysSo() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(throws: GraftError(.io, "is a folder, not a file", context: [.file(folder.path)])) {
            try FileAccess.read(folder)
        }
        #expect(throws: GraftError(.fileNotFound, "no such file", context: [.file(url("none").path)])) {
            try FileAccess.read(url("none"))
        }
    }

    // MARK: Locks

    @Test func aSecondWriterWaitsForTheFirstAndFailsAsBusyAfterItsWait() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let document = url("doc.xml")
        try Data("v1".utf8).write(to: document)
        let first = try FileLock(document, wait: 0)
        let started = Date()
        let error = #expect(throws: GraftError.self) { try FileLock(document, wait: 0.3) }
        #expect(Date().timeIntervalSince(started) >= 0.3)
        #expect(error?.code == .busy)
        #expect(
            error?.message
                == "is busy: another writer holds its lock and did not release it within 0.3 s; nothing was written (--wait sets how long to wait)"
        )
        // Released within the wait, the lock goes to the waiting writer.
        let waiter = Background { try FileLock(document, wait: 10).version }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(!waiter.isFinished)
        first.release()
        let version = try #require(waiter.wait(30)).get()
        #expect(version == FileAccess.version(of: document))
    }

    @Test func appendedBytesPassingTheWritebackIntervalArriveWholeAndInOrder() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let document = url("large.bin")
        try Data("old".utf8).write(to: document)
        // Chunks of uneven sizes, past the interval at which the disk is asked to start writing twice over.
        var expected = Data()
        let replacement = try FileReplacement(replacing: document, overwrite: true)
        var size = 1
        while expected.count < 2 * FileReplacement.writebackInterval + 12_345 {
            let chunk = Data((0..<size).map { UInt8(truncatingIfNeeded: expected.count + $0 * 7) })
            try chunk.withUnsafeBytes { try replacement.append($0) }
            expected += chunk
            size = size * 3 % 1_048_573 + 1
        }
        replacement.startWriteback()
        let lock = try replacement.commit()
        replacement.startWriteback()  // after the commit: nothing to do, no error
        lock.release()
        #expect(try Data(contentsOf: document) == expected)
        #expect(try contents() == ["large.bin"])
    }

    @Test func aFileWrittenAtomicallyInChunksIsTheirBytesAndAFailedOneLeavesTheOldFile() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let document = url("doc.json")
        try FileAccess.writeAtomically(to: document, overwrite: false) { write in
            for part in ["{", "\"a\": 1", "}"] { try Data(part.utf8).withUnsafeBytes { try write($0) } }
        }
        #expect(try String(contentsOf: document, encoding: .utf8) == "{\"a\": 1}")
        struct Stop: Error {}
        #expect(throws: GraftError.self) {
            try FileAccess.writeAtomically(to: document, overwrite: true) { write in
                try Data("half".utf8).withUnsafeBytes { try write($0) }
                throw Stop()
            }
        }
        #expect(try String(contentsOf: document, encoding: .utf8) == "{\"a\": 1}")
        #expect(try contents() == ["doc.json"])
    }

    @Test func aWriterWaitingOnAReplacedDocumentLocksTheNewOne() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let document = url("doc.xml")
        try Data("v1".utf8).write(to: document)
        let old = try FileLock(document, wait: 0)
        let waiter = Background { try FileLock(document, wait: 10).version }
        Thread.sleep(forTimeInterval: 0.2)
        // The holder replaces the document and keeps the lock on the new file while it releases the old.
        let replacement = try FileReplacement(replacing: document, overwrite: true)
        try replacement.handle.write(contentsOf: Data("v2".utf8))
        let new = try replacement.commit()
        old.release()
        Thread.sleep(forTimeInterval: 0.3)
        // The waiter got the old file's lock, saw it was no longer the document, and waits on the new one.
        #expect(!waiter.isFinished)
        #expect(new.isHeld)
        new.release()
        let version = try #require(waiter.wait(30)).get()
        #expect(version == FileAccess.version(of: document))
        #expect(try Data(contentsOf: document) == Data("v2".utf8))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock")))
    func theBusyErrorNamesTheProcessHoldingTheLock() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let document = url("doc.xml")
        try Data("v1".utf8).write(to: document)
        // Another process takes the lock and keeps it for a while.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        // flock takes the lock and runs cat, which ends when its input is closed.
        holder.arguments = ["--exclusive", document.path, "cat"]
        let input = Pipe()
        holder.standardInput = input
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        defer {
            try? input.fileHandleForWriting.close()
            holder.waitUntilExit()
        }
        var error: GraftError?
        for _ in 0..<100 where error == nil {
            do {
                let lock = try FileLock(document, wait: 0)
                lock.release()
                Thread.sleep(forTimeInterval: 0.05)
            } catch let busy as GraftError {
                error = busy
            }
        }
        let busy = try #require(error)
        #expect(busy.code == .busy)
        #expect(
            busy.message.hasPrefix(
                "is busy: another writer (process \(holder.processIdentifier), flock) holds its lock"),
            "\(busy.message)")
    }
}
