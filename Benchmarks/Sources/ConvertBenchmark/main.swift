// The conversion benchmark of issue 3: a generated Company document of 1,000,000 objects converted
// SQLite → XML, XML → SQLite, SQLite → binary and binary → SQLite by `graft convert`, each step timed
// and its peak memory measured as a separate process, beside a C baseline doing the same raw work with
// libsqlite3 and libxml2 in the same run. For XML → SQLite the baseline writes the store Graft writes
// (Core Data's tables, seven indexes, bookkeeping rows, settings); the row "XML → SQLite, bare" times
// the earlier, lighter baseline (two tables, two indexes) for comparison.
//
//   swift run -c release convert-benchmark [--objects N] [--runs N] [--work FOLDER]
//
// Targets: Graft within 1.5× of the baseline's time; peak memory under 200 MB for SQLite ↔ XML.

import BenchmarkSupport
import Foundation
import Graft

let options = BenchmarkOptions(CommandLine.arguments, program: "convert-benchmark")
let work = try BenchmarkPaths.work(options.work)

// The programs under test: graft (release) and the C baseline.
let graft = try BenchmarkPaths.graft()
let baseline = try BenchmarkPaths.convertBaseline(in: work)

let source = try CompanyDocument.url(objects: options.objects, in: work)
let xml = work.appendingPathComponent("graft.xml")
let binary = work.appendingPathComponent("graft.binary")

struct Row {
    var name: String
    var graft: [ProcessMeasurement] = []
    var baseline: [ProcessMeasurement] = []
}
var rows = [
    Row(name: "SQLite → XML"), Row(name: "XML → SQLite"), Row(name: "SQLite → binary"), Row(name: "binary → SQLite"),
    Row(name: "XML → SQLite, bare"),
]
/// One timed step.
func step(_ executable: String, _ arguments: [String]) throws -> ProcessMeasurement {
    try measure(executable, arguments).0
}

for _ in 0..<options.runs {
    rows[0].graft.append(try step(graft, ["convert", source.path, xml.path, "--force", "--quiet"]))
    rows[0].baseline.append(
        try step(baseline, ["sqlite-to-xml", source.path, work.appendingPathComponent("baseline.xml").path]))
    rows[1].graft.append(
        try step(
            graft, ["convert", xml.path, work.appendingPathComponent("from-xml.sqlite").path, "--force", "--quiet"]))
    rows[1].baseline.append(
        try step(baseline, ["xml-to-sqlite", xml.path, work.appendingPathComponent("baseline.sqlite").path]))
    // The earlier baseline, which writes two tables and two indexes only: beside Graft's figure above.
    rows[4].baseline.append(
        try step(baseline, ["xml-to-sqlite-bare", xml.path, work.appendingPathComponent("baseline-bare.sqlite").path]))
    rows[4].graft.append(rows[1].graft.last!)
    rows[2].graft.append(try step(graft, ["convert", source.path, binary.path, "--force", "--quiet"]))
    rows[3].graft.append(
        try step(
            graft,
            ["convert", binary.path, work.appendingPathComponent("from-binary.sqlite").path, "--force", "--quiet"]))
}

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
print(
    "XML → SQLite: the baseline writes Core Data's layout as Graft does (all tables and columns, 7 indexes built after"
)
print(
    "the rows, Z_PRIMARYKEY, Z_METADATA, Z_MODELCACHE, 4096-byte pages, incremental auto-vacuum, WAL at the end);")
print("\"bare\" is the earlier baseline (2 tables, 2 indexes), Graft's same run beside it")
