import Foundation

/// Files and folders made read-only for a test, in a way the system enforces even for root: with
/// permissions for an ordinary user, and with the immutable attribute (`chattr +i`) for root, whom
/// permissions do not stop.
public enum ReadOnlyFiles {
    /// Whether read-only files can be made here (`chattr` is needed when running as root).
    public static let isAvailable: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("graft-readonly-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: probe.path, contents: Data("x".utf8)) else { return false }
        defer {
            try? make(probe, readOnly: false)
            try? FileManager.default.removeItem(at: probe)
        }
        guard (try? make(probe, readOnly: true)) != nil else { return false }
        // Writing must fail now.
        let handle = FileHandle(forWritingAtPath: probe.path)
        try? handle?.close()
        return handle == nil
    }()

    /// Why tests that need read-only files are skipped, for `.enabled(if:_:)`.
    public static let unavailableMessage = "read-only files cannot be made here (as root, chattr +i is needed)"

    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    /// Makes `url` read-only (or writable again).
    public static func make(_ url: URL, readOnly: Bool) throws {
        if geteuid() == 0 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
            if !FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr") {
                process.executableURL = URL(fileURLWithPath: "/bin/chattr")
            }
            process.arguments = [readOnly ? "+i" : "-i", url.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw Failed(description: "chattr failed on \(url.path)") }
        } else {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder)
            let mode: Int16 = readOnly ? (isFolder.boolValue ? 0o555 : 0o444) : (isFolder.boolValue ? 0o755 : 0o644)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
        }
    }

    /// Runs `body` with `urls` read-only, making them writable again afterwards.
    public static func with<T>(_ urls: [URL], _ body: () throws -> T) throws -> T {
        var done: [URL] = []
        defer { for url in done.reversed() { try? make(url, readOnly: false) } }
        for url in urls {
            try make(url, readOnly: true)
            done.append(url)
        }
        return try body()
    }
}
