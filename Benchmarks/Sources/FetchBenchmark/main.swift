// The fetch benchmark of issue 11: from a generated Company document of 1,000,000 objects whose
// `Employee.employeeID` is indexed, fetch the 1,000 employees from an ID on, sorted by ID, with a limit,
// and fault in each one's department and manager (reading a property of each) — through a fresh
// `ObjectContext` on a `SQLiteStore` each run, timed in this process — beside a C baseline running the
// same SQL with libsqlite3 in the same run (`Baseline/fetch_baseline.c`: the same rows read, every
// column copied out, each related row read once).
//
//   swift run -c release fetch-benchmark [--objects N] [--runs N] [--work FOLDER]
//
// Target: Graft within 3× of the baseline's time (judged on each run's processor time; wall times are
// printed too). Graft and the baseline take turns so that both meet the same load.

import BenchmarkSupport
import Foundation
import Graft

#if canImport(Glibc)
    import Glibc
#endif

/// Processor time of this thread, in microseconds: what a run costs, whatever else the machine runs.
func threadCPUMicroseconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) * 1e6 + Double(ts.tv_nsec) / 1e3
}

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

/// One run: the fetch in a new context, then each employee's department and manager faulted in (a
/// property of each read). The context is returned so that its teardown falls outside the timing, as
/// the baseline frees its copies after its timer stops.
func fetchAndFault(
    _ store: SQLiteStore, _ request: FetchRequest, startingAt firstID: Int64
) throws -> (rows: Int, related: Int, context: ObjectContext) {
    let context = ObjectContext(store: store)
    let employees = try context.fetch(request)
    var related = Set<ObjectIdentifier>()
    for employee in employees {
        for key in ["department", "manager"] {
            guard let object = try employee.relatedObject(forKey: key) else { continue }
            _ = try object.attributeValue(forKey: "name")
            related.insert(ObjectIdentifier(object))
        }
    }
    guard case .integer(let first)? = try employees.first?.attributeValue(forKey: "employeeID"), first == firstID
    else {
        throw GraftError(.invalidOperation, "the fetch did not start at employee \(firstID)")
    }
    return (employees.count, related.count, context)
}

// Warm the page cache and the prepared statements, as the baseline's own runs do.
_ = try fetchAndFault(store, request, startingAt: firstID)

// Graft and the baseline take turns, a few runs each, so that both meet the same load on a shared
// machine; the medians are over every run of each.
let rounds = 5
let perRound = max(1, runs / rounds)
var graftTimes: [Double] = []
var baselineTimes: [Double] = []
var graftCPU: [Double] = []
var baselineCPU: [Double] = []
var answer = (rows: 0, related: 0)
var baselineRows = 0
for _ in 0..<rounds {
    for _ in 0..<perRound {
        let cpuStart = threadCPUMicroseconds()
        let (result, seconds) = try time { try fetchAndFault(store, request, startingAt: firstID) }
        graftCPU.append(threadCPUMicroseconds() - cpuStart)
        answer = (result.rows, result.related)
        graftTimes.append(seconds * 1e6)
        withExtendedLifetime(result.context) {}
    }
    let printed = work.appendingPathComponent("fetch_baseline.out")
    try measure(baseline, [url.path, String(firstID), String(limit), String(perRound)], output: printed)
    let text = (try? String(contentsOf: printed, encoding: .utf8)) ?? ""
    var fields: [String: String] = [:]
    for part in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
        let pair = part.split(separator: "=", maxSplits: 1)
        if pair.count == 2 { fields[String(pair[0])] = String(pair[1]) }
    }
    guard let times = fields["times_us"], let cpu = fields["cpu_us"], let rows = fields["rows"].flatMap({ Int($0) })
    else {
        throw GraftError(.io, "the baseline printed no figures: \(text)")
    }
    baselineTimes += times.split(separator: ",").compactMap { Double($0) }
    baselineCPU += cpu.split(separator: ",").compactMap { Double($0) }
    baselineRows = rows
}
print("")
print(
    "Company document: \(options.objects) objects (\(megabytes(url))); employees with employeeID >= \(firstID), "
        + "sorted by employeeID, limit \(limit); \(graftTimes.count) runs each, in \(rounds) turns")
print("\(answer.rows) employees fetched, \(answer.related) departments and managers faulted in")
print("")
print("fetch + fault to-ones      graft      baseline   ratio  target")
func row(_ name: String, _ graft: Double, _ base: Double, target: Bool) {
    let ratio = graft / base
    print(
        String(
            format: "%@ %7.2f ms  %9.2f ms  %5.2f  %@", name.padding(toLength: 22, withPad: " ", startingAt: 0),
            graft / 1000, base / 1000, ratio,
            (target ? (ratio <= 3 ? "met" : "MISSED") : "") as NSString))
}
row("processor time, median", median(graftCPU), median(baselineCPU), target: true)
row("wall time, median", median(graftTimes), median(baselineTimes), target: false)
row("wall time, fastest", graftTimes.min()!, baselineTimes.min()!, target: false)
print("")
print(
    "target on processor time (each run's own thread): on a machine shared with other work, preemption "
        + "lengthens the wall time of the longer runs more")
if baselineRows != answer.rows {
    print("warning: the baseline read \(baselineRows) rows, Graft \(answer.rows)")
}
