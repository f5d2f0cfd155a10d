// The migration benchmark of issue 10: `graft migrate` of a 1,000,000-object Company store written with
// version 1 of the test model (`Tests/Fixtures/Migration/Company.xcdatamodeld`) one lightweight step to
// version 2 (a new attribute with its default, a new optional to-one entity), timed with its peak memory
// as a separate process, beside, in the same run, `graft convert` of the same store to a new SQLite store.
//
//   swift run -c release migration-benchmark [--objects N] [--runs N] [--work FOLDER]
//
// Target: within 1.5× of the conversion's time, in bounded memory (the peak barely growing from a tenth of
// the objects to all of them). Also measured: `--in-place` of a store of the example model's version 1,
// whose step to version 2 only adds an attribute, so the SQLite store gains a column where it is.

import BenchmarkSupport
import Foundation
import Graft

let options = BenchmarkOptions(CommandLine.arguments, program: "migration-benchmark")
let root = BenchmarkPaths.root
let work = try BenchmarkPaths.work(options.work)
let graft = try BenchmarkPaths.graft()
let model = root.appendingPathComponent("Tests/Fixtures/Migration/Company.xcdatamodeld").path

/// A store of `objects` objects written with version 1 (departments of 25: the department, its manager
/// and 23 employees), made once with `graft fixtures`.
func oldStore(objects: Int, model: String = model, name: String = "migration-v1") throws -> URL {
    let url = work.appendingPathComponent("\(name)-\(objects).sqlite")
    guard !FileManager.default.fileExists(atPath: url.path) else { return url }
    let departments = objects / 25
    let counts = [
        "Department=\(departments)", "Manager=\(departments)", "Employee=\(objects - 2 * departments)", "Flunky=0",
        "Project=0",
    ].flatMap { ["--count", $0] }
    try measure(graft, ["fixtures", "--model", model, "--version", "Company"] + counts + ["-o", url.path, "-q"])
    return url
}

let exampleModel = root.appendingPathComponent("examples/Company/Company.xcdatamodeld").path
let exampleStore = try oldStore(objects: options.objects, model: exampleModel, name: "migration-example-v1")
let inPlace = work.appendingPathComponent("in-place.sqlite")
let tenth = try oldStore(objects: options.objects / 10)
let store = try oldStore(objects: options.objects)
let migrated = work.appendingPathComponent("migrated.sqlite")
let converted = work.appendingPathComponent("converted.sqlite")
let migrateArguments = { (input: URL) in
    ["migrate", input.path, "--model", model, "--version", "Company 2", "-o", migrated.path, "--force", "-q"]
}

var migrations: [ProcessMeasurement] = [], conversions: [ProcessMeasurement] = [], small: [ProcessMeasurement] = []
var inPlaceRuns: [ProcessMeasurement] = []
for _ in 0..<options.runs {
    try? FileManager.default.removeItem(at: inPlace)
    try FileManager.default.copyItem(at: exampleStore, to: inPlace)
    inPlaceRuns.append(
        try measure(graft, ["migrate", inPlace.path, "--model", exampleModel, "--in-place", "-q"]).0)
    migrations.append(try measure(graft, migrateArguments(store)).0)
    conversions.append(try measure(graft, ["convert", store.path, converted.path, "--force", "-q"]).0)
    small.append(try measure(graft, migrateArguments(tenth)).0)
}

let time = median(migrations.map(\.seconds)), baseTime = median(conversions.map(\.seconds))
let ratio = time / baseTime
let peak = median(migrations.map(\.peakMegabytes)), smallPeak = median(small.map(\.peakMegabytes))
print("")
print(
    "Migration of \(options.objects) Company objects, version 1 → 2 (SQLite \(megabytes(store))); median of "
        + "\(options.runs) run(s)")
print("step                                    graft   baseline  ratio  target       graft peak")
print(
    String(
        format: "%-36@ %8.2f s %8.2f s %6.2f  ≤ 1.5× %@   %6.0f MB (%.0f MB at a tenth of the objects)",
        "migrate vs convert of the same store" as NSString, time, baseTime, ratio,
        (ratio <= 1.5 ? "met" : "MISSED") as NSString, peak, smallPeak))
let inPlaceTime = median(inPlaceRuns.map(\.seconds))
print(
    String(
        format: "%-36@ %8.2f s %8.2f s %6.2f  (a column added where the store is)   %6.0f MB",
        "migrate --in-place vs convert" as NSString, inPlaceTime, baseTime, inPlaceTime / baseTime,
        median(inPlaceRuns.map(\.peakMegabytes))))
print("")
print("convert: graft convert of the version-1 store to a new SQLite store, the same objects, in the same run.")
for file in [migrated, converted, inPlace] { try? FileManager.default.removeItem(at: file) }
