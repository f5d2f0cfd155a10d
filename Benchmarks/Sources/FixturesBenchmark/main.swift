// The fixtures benchmark of issue 8: `graft fixtures` generating 1,000,000 Company objects (departments of
// 25: the department, its manager and 23 employees, as the convert benchmark's document) into a SQLite
// store and into a JSON clipboard, each timed with its peak memory as a separate process, beside, in the
// same run, the convert benchmark's C insert baseline (libxml2 SAX + libsqlite3 writing Core Data's layout
// from the same number of objects) and `graft copy --all` of the generated store to JSON.
//
//   swift run -c release fixtures-benchmark [--objects N] [--runs N] [--work FOLDER]
//
// Targets: SQLite within 1.5× of the C baseline's time and under 150 MB peak; the JSON clipboard at least
// as fast as `graft copy --all` of the same objects.

import BenchmarkSupport
import Foundation
import Graft

let options = BenchmarkOptions(CommandLine.arguments, program: "fixtures-benchmark")
let root = BenchmarkPaths.root
let work = try BenchmarkPaths.work(options.work)
let graft = try BenchmarkPaths.graft()
let baseline = try BenchmarkPaths.convertBaseline(in: work)

// The baseline's input: the convert benchmark's document as XML, converted once.
let source = try CompanyDocument.url(objects: options.objects, in: work)
let xml = work.appendingPathComponent("graft.xml")
if !FileManager.default.fileExists(atPath: xml.path) {
    try measure(graft, ["convert", source.path, xml.path, "--force", "--quiet"])
}

let model = root.appendingPathComponent("examples/Company/Company.xcdatamodeld").path
let departments = options.objects / 25
let counts = [
    "Department=\(departments)", "Manager=\(departments)", "Employee=\(options.objects - 2 * departments)",
    "Flunky=0", "Project=0",
].flatMap { ["--count", $0] }
let fixtureStore = work.appendingPathComponent("fixture.sqlite")
let fixtureJSON = work.appendingPathComponent("fixture.json")
let copiedJSON = work.appendingPathComponent("fixture-copy.json")

var sqlite: [ProcessMeasurement] = [], json: [ProcessMeasurement] = []
var cBaseline: [ProcessMeasurement] = [], copyAll: [ProcessMeasurement] = []
for _ in 0..<options.runs {
    sqlite.append(
        try measure(graft, ["fixtures", "--model", model] + counts + ["-o", fixtureStore.path, "--force", "-q"]).0)
    cBaseline.append(
        try measure(baseline, ["xml-to-sqlite", xml.path, work.appendingPathComponent("baseline.sqlite").path]).0)
    json.append(
        try measure(graft, ["fixtures", "--model", model] + counts + ["-o", fixtureJSON.path, "--force", "-q"]).0)
    copyAll.append(
        try measure(graft, ["copy", fixtureStore.path, "--all", "-o", copiedJSON.path, "--force", "-q"]).0)
}

func row(_ label: String, _ graft: [ProcessMeasurement], _ base: [ProcessMeasurement], limit: Double, peak: Double?) {
    let time = median(graft.map(\.seconds)), baseTime = median(base.map(\.seconds))
    let ratio = time / baseTime
    let peakMB = median(graft.map(\.peakMegabytes))
    print(
        String(
            format: "%-36@ %8.2f s %8.2f s %6.2f  ≤ %.1f× %@   %6.0f MB %@", label as NSString, time, baseTime, ratio,
            limit, (ratio <= limit ? "met" : "MISSED") as NSString, peakMB,
            (peak.map { peakMB < $0 ? "(< \(Int($0)) MB met)" : "(< \(Int($0)) MB MISSED)" } ?? "") as NSString))
}

print("")
print(
    "Fixtures of \(options.objects) Company objects (\(departments) departments of 25); SQLite \(megabytes(fixtureStore)), JSON \(megabytes(fixtureJSON)); median of \(options.runs) run(s)"
)
print("step                                    graft   baseline  ratio  target       graft peak")
row("fixtures → SQLite vs C insert baseline", sqlite, cBaseline, limit: 1.5, peak: 150)
row("fixtures → JSON vs copy --all to JSON", json, copyAll, limit: 1.0, peak: nil)
print("")
print("C insert baseline: convert_baseline xml-to-sqlite on the convert benchmark's document of as many objects")
print("(SAX parse + Core Data's layout); copy --all: graft copy of the generated store, the same objects.")
for file in [fixtureJSON, copiedJSON] { try? FileManager.default.removeItem(at: file) }
