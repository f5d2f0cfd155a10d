// The conversion benchmark of issue 3: a generated Company document of 1,000,000 objects converted
// SQLite → XML, XML → SQLite, SQLite → binary and binary → SQLite by `graft convert`, each step timed
// and its peak memory measured as a separate process, beside a C baseline doing the same raw work with
// libsqlite3 and libxml2 in the same run.
//
//   swift run -c release convert-benchmark [--objects N] [--runs N] [--work FOLDER]
//
// Targets: Graft within 1.5× of the baseline's time; peak memory under 200 MB for SQLite ↔ XML.

import Foundation
import Graft

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Options {
    var objects = 1_000_000
    var runs = 1
    /// Where generated documents and outputs go; `Benchmarks/.work` in the package by default.
    var work: URL?

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--objects": objects = Int(iterator.next() ?? "") ?? objects
            case "--runs": runs = max(1, Int(iterator.next() ?? "") ?? runs)
            case "--work": work = iterator.next().map { URL(fileURLWithPath: $0) }
            default:
                FileHandle.standardError.write(
                    Data("usage: convert-benchmark [--objects N] [--runs N] [--work FOLDER]\n".utf8))
                exit(64)
            }
        }
    }
}

/// Wall time, processor time (user + system, every thread) and peak resident memory of a child process.
struct Measurement {
    var seconds: Double
    var cpuSeconds: Double
    var peakMegabytes: Double
}

/// Runs a program to completion under `/usr/bin/time`, which reports its wall time, processor time and
/// peak resident memory as the kernel counts them for that process alone.
///
/// Dirty pages are flushed first (`sync`, not timed), so that the writeback of one step's output does
/// not slow whichever step comes next.
func measure(_ executable: String, _ arguments: [String]) throws -> Measurement {
    sync()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
    process.arguments = ["-f", "graft-benchmark %e %M %U %S", executable] + arguments
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0,
        let line = output.split(separator: "\n").last(where: { $0.hasPrefix("graft-benchmark ") })
    else {
        throw GraftError(.io, "\(executable) \(arguments.joined(separator: " ")) failed:\n\(output)")
    }
    let fields = line.split(separator: " ").map { Double($0) ?? 0 }
    return Measurement(seconds: fields[1], cpuSeconds: fields[3] + fields[4], peakMegabytes: fields[2] / 1024)
}

/// The Company document: departments of 99 employees, the first of each a manager of the others.
func generate(_ url: URL, objects: Int, model: Model) throws {
    let department = model.entity(named: "Department")!
    let employee = model.entity(named: "Employee")!
    let manager = model.entity(named: "Manager")!
    let departments = max(1, objects / 100)
    let writer = try SQLiteStoreWriter(
        url: url, model: model, metadata: StoreMetadata.make(for: model, storeType: .sqlite), overwrite: true)
    var employeeKey: Int64 = 0
    for index in 0..<departments {
        let key = Int64(index + 1)
        var snapshot = Snapshot(entity: department, key: key)
        snapshot[attribute: "name", in: department] = .string("Department \(index + 1)")
        snapshot[attribute: "code", in: department] = .integer(Int64(index % 999 + 1))
        snapshot[attribute: "budget", in: department] = .decimal(Decimal(100_000 + index))
        try writer.write(snapshot)
        let bossKey = employeeKey + 1
        for member in 0..<99 {
            employeeKey += 1
            let entity = member == 0 ? manager : employee
            var person = Snapshot(entity: entity, key: employeeKey)
            person[attribute: "name", in: entity] = .string("Employee \(employeeKey)")
            person[attribute: "employeeID", in: entity] = .integer(employeeKey)
            person[attribute: "salary", in: entity] = .decimal(Decimal(30_000 + Int(employeeKey % 50_000)))
            person[attribute: "hireDate", in: entity] = .date(
                Date(timeIntervalSinceReferenceDate: 600_000_000 + Double(employeeKey) * 97.25))
            person[attribute: "isRemote", in: entity] = .bool(employeeKey % 3 == 0)
            person[attribute: "rating", in: entity] = .double(Double(Float(Double(employeeKey % 50) / 10)))
            person[relationship: "department", in: entity] = .toOne(ObjectRef(entity: department.index, key: key))
            if member > 0 {
                person[relationship: "manager", in: entity] = .toOne(ObjectRef(entity: manager.index, key: bossKey))
            }
            try writer.write(person)
        }
    }
    try writer.finish()
}

func megabytes(_ url: URL) -> String {
    let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
    return String(format: "%.0f MB", Double(size) / 1_048_576)
}

let options = Options(CommandLine.arguments)
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
let work = options.work ?? root.appendingPathComponent("Benchmarks/.work")
try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)

// The programs under test: graft (release) and the C baseline.
let graft = root.appendingPathComponent(".build/release/graft").path
guard FileManager.default.isExecutableFile(atPath: graft) else {
    print("Build graft first: swift build -c release --product graft (from \(root.path))")
    exit(1)
}
let baseline = work.appendingPathComponent("convert_baseline").path
_ = try measure(
    "/usr/bin/cc",
    [
        "-O2", "-I/usr/include/libxml2", "-o", baseline,
        root.appendingPathComponent("Benchmarks/Baseline/convert_baseline.c").path,
        "-lsqlite3", "-lxml2",
    ])

let model = try ModelFile.load(root.appendingPathComponent("examples/Company/Company.xcdatamodeld")).version(
    named: "Company")!
let source = work.appendingPathComponent("company-\(options.objects).sqlite")
if !FileManager.default.fileExists(atPath: source.path) {
    print("Generating \(source.lastPathComponent) (\(options.objects) objects)…")
    try generate(source, objects: options.objects, model: model)
}
let xml = work.appendingPathComponent("graft.xml")
let binary = work.appendingPathComponent("graft.binary")

struct Row {
    var name: String
    var graft: [Measurement] = []
    var baseline: [Measurement] = []
}
var rows = [
    Row(name: "SQLite → XML"), Row(name: "XML → SQLite"), Row(name: "SQLite → binary"), Row(name: "binary → SQLite"),
]
for _ in 0..<options.runs {
    rows[0].graft.append(try measure(graft, ["convert", source.path, xml.path, "--force", "--quiet"]))
    rows[0].baseline.append(
        try measure(baseline, ["sqlite-to-xml", source.path, work.appendingPathComponent("baseline.xml").path]))
    rows[1].graft.append(
        try measure(
            graft, ["convert", xml.path, work.appendingPathComponent("from-xml.sqlite").path, "--force", "--quiet"]))
    rows[1].baseline.append(
        try measure(baseline, ["xml-to-sqlite", xml.path, work.appendingPathComponent("baseline.sqlite").path]))
    rows[2].graft.append(try measure(graft, ["convert", source.path, binary.path, "--force", "--quiet"]))
    rows[3].graft.append(
        try measure(
            graft,
            ["convert", binary.path, work.appendingPathComponent("from-binary.sqlite").path, "--force", "--quiet"]))
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

print("")
print(
    "Company document: \(options.objects) objects; SQLite \(megabytes(source)), XML \(megabytes(xml)), binary \(megabytes(binary)); median of \(options.runs) run(s)"
)
print("")
print(
    "step               graft time  baseline time  ratio  target   graft peak  baseline peak  target   graft cpu  baseline cpu"
)
for row in rows {
    let time = median(row.graft.map(\.seconds))
    let cpu = median(row.graft.map(\.cpuSeconds))
    let peak = median(row.graft.map(\.peakMegabytes))
    let sqliteXML = row.name.contains("XML")
    if row.baseline.isEmpty {
        print(
            String(
                format: "%-17@  %8.2f s  %13@  %5@  %6@  %8.0f MB  %13@  %6@  %8.2f s  %12@", row.name as NSString,
                time, "—" as NSString, "—" as NSString, "—" as NSString, peak, "—" as NSString, "—" as NSString, cpu,
                "—" as NSString))
        continue
    }
    let baseTime = median(row.baseline.map(\.seconds))
    let baseCPU = median(row.baseline.map(\.cpuSeconds))
    let basePeak = median(row.baseline.map(\.peakMegabytes))
    let ratio = time / baseTime
    print(
        String(
            format: "%-17@  %8.2f s  %11.2f s  %5.2f  %6@  %8.0f MB  %10.0f MB  %6@  %8.2f s  %10.2f s",
            row.name as NSString, time, baseTime, ratio,
            (ratio <= 1.5 ? "met" : "MISSED") as NSString, peak, basePeak,
            (sqliteXML ? (peak < 200 ? "met" : "MISSED") : "—") as NSString, cpu, baseCPU))
}
print("")
print("cpu: user + system time of every thread (graft reads and writes on two threads; the baseline uses one)")
