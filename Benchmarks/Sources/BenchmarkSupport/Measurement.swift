import Foundation
import Graft

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Wall time, processor time (user + system, every thread) and peak resident memory of a child process.
public struct ProcessMeasurement: Sendable {
    public var seconds: Double
    public var cpuSeconds: Double
    public var peakMegabytes: Double
}

/// Runs a program to completion under `/usr/bin/time`, which reports its wall time, processor time and
/// peak resident memory as the kernel counts them for that process alone. Standard output goes to
/// `output` (or is discarded); the program's own standard error is returned with the measurement.
///
/// Dirty pages are flushed first (`sync`, not timed), so that the writeback of one step's output does
/// not slow whichever step comes next.
@discardableResult
public func measure(
    _ executable: String, _ arguments: [String], output: URL? = nil
) throws -> (ProcessMeasurement, String) {
    sync()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
    process.arguments = ["-f", "graft-benchmark %e %M %U %S", executable] + arguments
    let errors = Pipe()
    process.standardError = errors
    if let output {
        guard FileManager.default.createFile(atPath: output.path, contents: nil) else {
            throw GraftError(.io, "cannot create \(output.path) for the output of \(executable)")
        }
        process.standardOutput = try FileHandle(forWritingTo: output)
    } else {
        process.standardOutput = FileHandle.nullDevice
    }
    try process.run()
    let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0,
        let line = text.split(separator: "\n").last(where: { $0.hasPrefix("graft-benchmark ") })
    else {
        throw GraftError(.io, "\(executable) \(arguments.joined(separator: " ")) failed:\n\(text)")
    }
    let fields = line.split(separator: " ").map { Double($0) ?? 0 }
    let rest = text.split(separator: "\n").filter { !$0.hasPrefix("graft-benchmark ") }.joined(separator: "\n")
    return (
        ProcessMeasurement(seconds: fields[1], cpuSeconds: fields[3] + fields[4], peakMegabytes: fields[2] / 1024), rest
    )
}

/// Seconds `body` takes, measured in this process.
public func time<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = DispatchTime.now().uptimeNanoseconds
    let result = try body()
    return (result, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}

public func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

public func megabytes(_ url: URL) -> String {
    let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
    return String(format: "%.0f MB", Double(size) / 1_048_576)
}

/// Where things are: the package root (two levels above `Benchmarks/Sources/…`), the `graft` built in
/// release mode there, and the work folder.
public enum BenchmarkPaths {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The release `graft`, or a message saying how to build it.
    public static func graft() throws -> String {
        let graft = root.appendingPathComponent(".build/release/graft").path
        guard FileManager.default.isExecutableFile(atPath: graft) else {
            throw GraftError(.notFound, "build graft first: swift build -c release --product graft (in \(root.path))")
        }
        return graft
    }

    /// The convert benchmark's C baseline (`Baseline/convert_baseline.c`), compiled into `work`.
    public static func convertBaseline(in work: URL) throws -> String {
        let baseline = work.appendingPathComponent("convert_baseline").path
        try measure(
            "/usr/bin/cc",
            [
                "-O2", "-I/usr/include/libxml2", "-o", baseline,
                root.appendingPathComponent("Benchmarks/Baseline/convert_baseline.c").path, "-lsqlite3", "-lxml2",
            ])
        return baseline
    }

    /// The work folder (`Benchmarks/.work` unless given), created if needed.
    public static func work(_ given: URL?) throws -> URL {
        let work = given ?? root.appendingPathComponent("Benchmarks/.work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        return work
    }
}

/// The options every benchmark takes — `--objects N`, `--runs N`, `--work FOLDER` — and the flags a
/// benchmark names itself; anything else prints the usage and exits with 64.
public struct BenchmarkOptions {
    public var objects = 1_000_000
    public var runs = 1
    /// Where generated documents and outputs go; `Benchmarks/.work` in the package by default.
    public var work: URL?
    /// The flags given, of those in `flags`.
    public var flags: Set<String> = []

    public init(_ arguments: [String], program: String, flags known: [String] = []) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--objects": objects = Int(iterator.next() ?? "") ?? objects
            case "--runs": runs = max(1, Int(iterator.next() ?? "") ?? runs)
            case "--work": work = iterator.next().map { URL(fileURLWithPath: $0) }
            case let flag where known.contains(flag): flags.insert(flag)
            default:
                let extra = known.map { " [\($0)]" }.joined()
                FileHandle.standardError.write(
                    Data("usage: \(program) [--objects N] [--runs N] [--work FOLDER]\(extra)\n".utf8))
                exit(64)
            }
        }
    }
}
