// The fetch benchmark of issue 11: from a generated Company document of 1,000,000 objects whose
// `Employee.employeeID` is indexed, fetch the 1,000 employees from an ID on, sorted by ID, with a limit,
// and fault in each one's department and manager (reading a property of each) — through a fresh
// `ObjectContext` on a `SQLiteStore` each run, timed in this process — beside a C baseline running the
// same SQL with libsqlite3 in the same run (`Baseline/fetch_baseline.c`: the same rows read, every
// column copied out, each related row read once).
//
//   swift run -c release fetch-benchmark [--objects N] [--runs N] [--work FOLDER]
//
// Target: Graft within 3× of the baseline's time.

import BenchmarkSupport
import Foundation
import Graft

let options = BenchmarkOptions(CommandLine.arguments, program: "fetch-benchmark")
let root = BenchmarkPaths.root
let work = try BenchmarkPaths.work(options.work)
let runs = max(options.runs, 15)
let limit = 1_000

// The Company model with employeeID indexed, and a document written with it (so that it has the index).
let base = try CompanyDocument.model()
var entities = base.entities
for e in entities.indices where entities[e].name == "Employee" {
    for a in entities[e].attributes.indices where entities[e].attributes[a].name == "employeeID" {
        entities[e].attributes[a].isIndexed = true
    }
}
let model = try Model(
    entities: entities, configurations: base.configurations, fetchRequestTemplates: base.fetchRequestTemplates,
    versionIdentifiers: base.versionIdentifiers)
let url = work.appendingPathComponent("company-indexed-\(options.objects).sqlite")
if !FileManager.default.fileExists(atPath: url.path) {
    print("Generating \(url.lastPathComponent) (\(options.objects) objects, employeeID indexed)…")
    try CompanyDocument.generate(url, objects: options.objects, model: model)
}
// The middle of the document: 1,000 of the employees from there on.
let people = options.objects / CompanyDocument.objectsPerDepartment * (CompanyDocument.objectsPerDepartment - 1)
let firstID = Int64(people / 2)

// The baseline, compiled in this run.
let baseline = work.appendingPathComponent("fetch_baseline").path
try measure(
    "/usr/bin/cc",
    ["-O2", "-o", baseline, root.appendingPathComponent("Benchmarks/Baseline/fetch_baseline.c").path, "-lsqlite3"])

// Graft.
let store = try SQLiteStore.openForReading(url, model: model)
let predicate = try GraftPredicate(format: "employeeID >= %lld", firstID)
var request = FetchRequest(entityName: "Employee", predicate: predicate)
request.sortDescriptors = [try GraftSortDescriptor("employeeID")]
request.fetchLimit = limit

func fetchAndFault(
    _ store: SQLiteStore, _ request: FetchRequest, startingAt firstID: Int64
) throws -> (rows: Int, related: Int) {
    let context = ObjectContext(store: store)
    let employees = try context.fetch(request)
    var related = Set<ObjectIdentifier>()
    for employee in employees {
        for key in ["department", "manager"] {
            guard let object = employee.value(forKey: key) as? ManagedObject else { continue }
            _ = object.value(forKey: "name")
            related.insert(ObjectIdentifier(object))
        }
    }
    guard let first = employees.first?.value(forKey: "employeeID") as? Int64, first == firstID else {
        throw GraftError(.invalidOperation, "the fetch did not start at employee \(firstID)")
    }
    return (employees.count, related.count)
}

_ = try fetchAndFault(store, request, startingAt: firstID)  // warm the page cache and the prepared statements, as the baseline's own runs do
var graftTimes: [Double] = []
var answer = (rows: 0, related: 0)
for _ in 0..<runs {
    let (result, seconds) = try time { try fetchAndFault(store, request, startingAt: firstID) }
    answer = result
    graftTimes.append(seconds * 1e6)
}

let (_, output) = try measure(
    baseline, [url.path, String(firstID), String(limit), String(runs)],
    output: work.appendingPathComponent("fetch_baseline.out"))
_ = output
let printed = (try? String(contentsOf: work.appendingPathComponent("fetch_baseline.out"), encoding: .utf8)) ?? ""
var fields: [String: Double] = [:]
for part in printed.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
    let pair = part.split(separator: "=")
    if pair.count == 2 { fields[String(pair[0])] = Double(pair[1]) }
}
guard let baselineMicroseconds = fields["median_us"], let baselineRows = fields["rows"] else {
    throw GraftError(.io, "the baseline printed no figures: \(printed)")
}

let graftMicroseconds = median(graftTimes)
let ratio = graftMicroseconds / baselineMicroseconds
print("")
print(
    "Company document: \(options.objects) objects (\(megabytes(url))); employees with employeeID >= \(firstID), "
        + "sorted by employeeID, limit \(limit); median of \(runs) runs")
print("")
print("                          rows  related   graft time  baseline time  ratio  target")
print(
    String(
        format: "fetch + fault to-ones  %6d  %7d  %8.2f ms  %10.2f ms  %5.2f  %@", answer.rows, answer.related,
        graftMicroseconds / 1000, baselineMicroseconds / 1000, ratio, (ratio <= 3 ? "met" : "MISSED") as NSString))
if Int(baselineRows) != answer.rows {
    print("warning: the baseline read \(Int(baselineRows)) rows, Graft \(answer.rows)")
}
