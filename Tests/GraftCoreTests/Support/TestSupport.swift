import Foundation
import GraftCore
import GraftTestSupport
import Testing

/// The corpus files these tests read (`Corpus` itself comes from GraftTestSupport).
extension Corpus {
    /// Every compiled model, version-info plist and current-version marker in the corpus.
    static let propertyListFiles: [String] = paths { url in
        url.pathExtension == "mom" || url.lastPathComponent == "VersionInfo.plist"
            || url.lastPathComponent == ".xccurrentversion"
    }

    static let momFiles: [String] = propertyListFiles.filter { $0.hasSuffix(".mom") }

    /// SQLite stores (which may hold a model cache).
    static let stores: [String] = paths { url in
        url.pathExtension == "sqlite" || url.pathExtension == "wiredatabase"
    }
}

/// Command-line tools the cross-checks shell out to, when installed.
enum Tool {
    static let python3 = find("python3")
    static let plutil = find("plutil")

    static let python3Missing: Comment = "python3 is not installed"
    static let plutilMissing: Comment = "plutil is not installed"

    static func find(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    struct Result {
        var status: Int32
        var output: Data
        var errorOutput: String
    }

    /// Runs a tool to completion, collecting its output.
    static func run(_ tool: URL, _ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        let folder = try Scratch.folder()
        let outURL = folder.appendingPathComponent("stdout")
        let errURL = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        defer { try? FileManager.default.removeItem(at: folder) }
        return Result(
            status: process.terminationStatus, output: try Data(contentsOf: outURL),
            errorOutput: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }
}

/// Temporary folders for files handed to other tools.
enum Scratch {
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("graft-core-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes `data` to a new temporary file and passes its URL to `body`; the file is removed afterwards.
    static func withFile<T>(_ data: Data, name: String = "value.plist", _ body: (URL) throws -> T) throws -> T {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent(name)
        try data.write(to: url)
        return try body(url)
    }
}

/// Values that exercise every type and edge of the formats.
enum Samples {
    static let edgeValues: [(name: String, value: PropertyList)] = [
        ("empty string", ""),
        ("ascii string", "hello, world"),
        ("latin-1 string", "café"),
        ("astral string", "emoji 😀 and 𝄞 clef"),
        ("decomposed string", "e\u{301}"),
        ("markup string", "a < b && c > d \"quoted\" 'single'"),
        ("string with CR LF", "line one\r\nline two\rthree\n"),
        ("long string", .string(String(repeating: "abcdefghij", count: 1_000))),
        ("zero", 0),
        ("one", 1),
        ("255", 255),
        ("256", 256),
        ("65535", 65_535),
        ("65536", 65_536),
        ("UInt32.max", .integer(Int64(UInt32.max))),
        ("UInt32.max + 1", .integer(Int64(UInt32.max) + 1)),
        ("minus one", -1),
        ("Int64.min", .integer(Int64.min)),
        ("Int64.max", .integer(Int64.max)),
        ("Int64.max + 1", .unsignedInteger(UInt64(Int64.max) + 1)),
        ("UInt64.max", .unsignedInteger(UInt64.max)),
        ("real 0", 0.0),
        ("real -0", .real(-0.0)),
        ("real 0.1", 0.1),
        ("real 1", 1.0),
        ("real pi", .real(Double.pi)),
        ("real 1e-300", 1e-300),
        ("real 1e300", 1e300),
        ("real min subnormal", .real(Double.leastNonzeroMagnitude)),
        ("real max", .real(Double.greatestFiniteMagnitude)),
        ("NaN", .real(Double.nan)),
        ("+inf", .real(Double.infinity)),
        ("-inf", .real(-Double.infinity)),
        ("true", true),
        ("false", false),
        ("reference date", .date(Date(timeIntervalSinceReferenceDate: 0))),
        ("date 2024", .date(Date(timeIntervalSinceReferenceDate: 757_382_400))),
        ("date 1970", .date(Date(timeIntervalSince1970: 0))),
        ("date 1601", .date(Date(timeIntervalSinceReferenceDate: -12_622_780_800))),
        ("empty data", .data(Data())),
        ("short data", .data(Data([0, 1, 2, 0xFF]))),
        ("large data", .data(Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }))),
        ("empty array", []),
        ("empty dictionary", .dictionary([:])),
        ("uid 0", .uid(0)),
        ("uid 300", .uid(300)),
        ("uid UInt32.max", .uid(UInt64(UInt32.max))),
        ("uid max", .uid(UInt64.max)),
        ("nested", ["a": [1, 2, ["b": [true, false]]], "c": [:], "d": [[]]]),
        ("array of 20", .array((0..<20).map { .integer(Int64($0)) })),
        ("dictionary of 20", .dictionary(.init((0..<20).map { ("key\($0)", .integer(Int64($0))) }))),
        ("shared strings", ["x": "same", "y": "same", "same": "same"]),
    ]

    /// Values the XML format keeps exactly (whole-second dates).
    static var xmlSafe: [(name: String, value: PropertyList)] { edgeValues }

    /// A random property list for round trips.
    static func random(using generator: inout RepeatableRandomNumberGenerator, depth: Int = 0) -> PropertyList {
        let pick = Int.random(in: 0..<(depth > 3 ? 9 : 11), using: &generator)
        switch pick {
        case 0: return .string(randomString(using: &generator))
        case 1:
            return .integer(
                Int64.random(in: Int64.min...Int64.max, using: &generator)
                    >> UInt64.random(in: 0...63, using: &generator))
        case 2: return .unsignedInteger(UInt64.random(in: (UInt64(Int64.max) + 1)...UInt64.max, using: &generator))
        case 3: return .real(Double(bitPattern: generator.next()))
        case 4: return .bool(Bool.random(using: &generator))
        case 5:
            return .date(
                Date(
                    timeIntervalSinceReferenceDate: Double(
                        Int.random(in: -2_000_000_000...2_000_000_000, using: &generator))))
        case 6:
            return .data(
                Data(
                    (0..<Int.random(in: 0..<40, using: &generator)).map { _ in
                        UInt8.random(in: 0...255, using: &generator)
                    }))
        case 7: return .uid(UInt64.random(in: 0...1_000, using: &generator))
        case 8: return .string(["alpha", "beta", "gamma"].randomElement(using: &generator)!)
        case 9:
            return .array(
                (0..<Int.random(in: 0..<6, using: &generator)).map { _ in random(using: &generator, depth: depth + 1) })
        default:
            var dictionary = PropertyList.Dictionary()
            for _ in 0..<Int.random(in: 0..<6, using: &generator) {
                dictionary[randomString(using: &generator)] = random(using: &generator, depth: depth + 1)
            }
            return .dictionary(dictionary)
        }
    }

    static func randomString(using generator: inout RepeatableRandomNumberGenerator) -> String {
        let alphabet: [Character] = Array("abcXYZ019 _-<>&\"'éß€😀\n\t")
        return String(
            (0..<Int.random(in: 0..<12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
