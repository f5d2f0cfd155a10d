// The copy/paste benchmark of issue 4, on the generated Company document (1,000,000 objects by default):
//
// - `graft copy --all` to JSON and to a binary property list, and `graft paste` of each into an empty
//   SQLite store, each a separate process timed with its peak memory;
// - Graft's clipboard codecs alone (decoding and encoding the same documents in a process of their own);
// - copying 100 objects (four departments with their people) out of the document;
// - merging about 50,000 objects (2,000 departments with their people, values changed) back into a copy of
//   the document with `--on-conflict merge`, in microseconds per object;
// - baselines from the same run: Python's `json` and `plistlib` decoding and encoding the same
//   documents, and Foundation's JSONEncoder/JSONDecoder and PropertyListEncoder/PropertyListDecoder on
//   the same objects as Codable structs.
//
//   swift run -c release copypaste-benchmark [--objects N] [--runs N] [--work FOLDER] [--no-foundation]
//
// Targets (issue 7): the JSON codec at least 5× faster than Python's json, binary property lists at least
// 15× faster than plistlib; `copy --all` to JSON at least 3× faster than json.dumps alone, the paste of
// that JSON into a new SQLite store faster than json.loads alone, both under 200 MB; copying 100 objects
// under 0.2 s and 50 MB; the merge at most 10 µs an object.

import BenchmarkSupport
import Foundation
import Graft

/// `name seconds` lines a baseline printed.
func figures(_ text: String) -> [String: Double] {
    var figures: [String: Double] = [:]
    for line in text.split(separator: "\n") {
        let fields = line.split(separator: " ")
        if fields.count == 2, let value = Double(fields[1]) { figures[String(fields[0])] = value }
    }
    return figures
}

// `copypaste-benchmark --codec FILE`: decode the clipboard in FILE and encode it again in its own encoding,
// printing `<json|plist>-decode SECONDS` and `…-encode SECONDS`, the file read (mapped) and written as the Python
// baselines read and write theirs. The benchmark runs its codec rows this way, in a fresh process as those are.
if CommandLine.arguments.count == 3 && CommandLine.arguments[1] == "--codec" {
    let url = URL(fileURLWithPath: CommandLine.arguments[2])
    let name = url.pathExtension == "json" ? "json" : "plist"
    let (clipboard, decode) = try time { try ClipboardEncoding.decode(Data(contentsOf: url, options: .alwaysMapped)) }
    let encoding: ClipboardEncoding = name == "json" ? .json : .binaryPlist
    let copy = url.deletingPathExtension().appendingPathExtension("again." + url.pathExtension)
    let (_, encode) = try time {
        guard let file = fopen(copy.path, "wb") else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: copy.path])
        }
        defer { fclose(file) }
        try encoding.encode(clipboard) { chunk in
            guard fwrite(chunk.baseAddress, 1, chunk.count, file) == chunk.count else {
                throw CocoaError(.fileWriteOutOfSpace, userInfo: [NSFilePathErrorKey: copy.path])
            }
        }
    }
    // On standard error, which `measure` hands back.
    FileHandle.standardError.write(Data("\(name)-decode \(decode)\n\(name)-encode \(encode)\n".utf8))
    try? FileManager.default.removeItem(at: copy)
    exit(0)
}

let options = BenchmarkOptions(CommandLine.arguments, program: "copypaste-benchmark", flags: ["--no-foundation"])
let withFoundation = !options.flags.contains("--no-foundation")
let graft = try BenchmarkPaths.graft()
let work = try BenchmarkPaths.work(options.work)
let document = try CompanyDocument.url(objects: options.objects, in: work)
let json = work.appendingPathComponent("all.json"), plist = work.appendingPathComponent("all.bplist")
let pastedJSON = work.appendingPathComponent("pasted-json.sqlite")
let pastedPlist = work.appendingPathComponent("pasted-plist.sqlite")
let script = BenchmarkPaths.root.appendingPathComponent("Benchmarks/Baseline/clipboard_baseline.py").path
let foundationBaseline = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("foundation-baseline").path
let departments = (1...4).map { "'Department \($0)'" }.joined(separator: ", ")

func removeStore(_ url: URL) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
}

var steps: [String: [ProcessMeasurement]] = [:]
var codec: [String: [Double]] = [:]
var baseline: [String: [Double]] = [:]
var copied100 = ""
let mergeClipboard = work.appendingPathComponent("merge.json")
let mergeTarget = work.appendingPathComponent("merge-target.sqlite")
var mergedObjects = 0

/// About 50,000 objects of the document (departments with codes up to 50, about one in twenty, with their
/// people), with values changed that identify nothing, so that a merge has work to do.
func writeMergeClipboard() throws -> Int {
    _ = try measure(
        graft,
        [
            "copy", document.path, "--entity", "Department", "--where", "code <= 50", "--follow",
            "Department.employees", "-o", mergeClipboard.path, "--force", "-q",
        ])
    var clipboard = try ClipboardEncoding.decode(try Data(contentsOf: mergeClipboard))
    for index in clipboard.objects.indices {
        let isDepartment = clipboard.objects[index].entity == "Department"
        clipboard.objects[index].attributes = clipboard.objects[index].attributes.map { named in
            switch (isDepartment, named.name, named.value) {
            case (true, "code", _): return .init("code", .integer(777))
            case (false, "name", .string(let name)): return .init("name", .string(name + " (2)"))
            default: return named
            }
        }
    }
    try ClipboardEncoding.json.encode(clipboard).write(to: mergeClipboard)
    return clipboard.objects.count
}
for run in 1...options.runs {
    print("Run \(run) of \(options.runs)…")
    steps["copy-json", default: []].append(
        try measure(graft, ["copy", document.path, "--all", "--format", "json", "-o", json.path, "--force", "-q"]).0)
    steps["copy-plist", default: []].append(
        try measure(
            graft, ["copy", document.path, "--all", "--format", "binary-plist", "-o", plist.path, "--force", "-q"]
        ).0)
    removeStore(pastedJSON)
    removeStore(pastedPlist)
    steps["paste-json", default: []].append(
        try measure(graft, ["paste", json.path, "--into", pastedJSON.path, "-q"]).0)
    steps["paste-plist", default: []].append(
        try measure(graft, ["paste", plist.path, "--into", pastedPlist.path, "-q"]).0)
    let (small, said) = try measure(
        graft,
        [
            "copy", document.path, "--entity", "Department", "--where", "name IN {\(departments)}", "--follow",
            "Department.employees",
        ])
    steps["copy-100", default: []].append(small)
    if run == 1 { mergedObjects = try writeMergeClipboard() }
    removeStore(mergeTarget)
    try FileManager.default.copyItem(at: document, to: mergeTarget)
    // On the disk before the merge is timed: a copy just made is all dirty pages, and the merge's commit
    // (its checkpoint's flush of the store file) would otherwise write out the whole copy.
    let copied = try FileHandle(forWritingTo: mergeTarget)
    try copied.synchronize()
    try copied.close()
    steps["merge", default: []].append(
        try measure(graft, ["paste", mergeClipboard.path, "--into", mergeTarget.path, "--on-conflict", "merge", "-q"]).0
    )
    copied100 = said.trimmingCharacters(in: .whitespacesAndNewlines)

    // Graft's codecs alone, each encoding in a fresh process of this program (`--codec`).
    for url in [json, plist] {
        let (_, said) = try measure(URL(fileURLWithPath: CommandLine.arguments[0]).path, ["--codec", url.path])
        for (step, value) in figures(said) { codec[step, default: []].append(value) }
    }

    for name in ["json", "plist"] {
        let (_, said) = try measure(
            "/usr/bin/python3",
            [script, name, (name == "json" ? json : plist).path, work.appendingPathComponent("python.\(name)").path])
        for (step, value) in figures(said) { baseline[step, default: []].append(value) }
    }
    if withFoundation {
        let (_, said) = try measure(foundationBaseline, [json.path])
        for (step, value) in figures(said) { baseline[step, default: []].append(value) }
    }
}

func row(_ label: String, _ graftSeconds: Double, _ baseSeconds: Double?, target: Double?, peak: Double? = nil) {
    let ratio = baseSeconds.map { $0 / graftSeconds }
    let verdict = target.flatMap { target in ratio.map { $0 >= target ? "met" : "MISSED" } } ?? "—"
    print(
        String(
            format: "%-44@ %8.2f s %@ %@ %@ %@", label as NSString, graftSeconds,
            (baseSeconds.map { String(format: "%8.2f s", $0) } ?? "       —  ") as NSString,
            (ratio.map { String(format: "%6.1f×", $0) } ?? "     — ") as NSString,
            (target.map { String(format: "≥ %.0f× %@", $0, verdict) } ?? "") as NSString,
            (peak.map { String(format: "(peak %.0f MB)", $0) } ?? "") as NSString))
}

@MainActor func seconds(_ name: String) -> Double { median(steps[name]!.map(\.seconds)) }
@MainActor func peak(_ name: String) -> Double { median(steps[name]!.map(\.peakMegabytes)) }
@MainActor func base(_ name: String) -> Double? { baseline[name].map(median) }

print("")
print(
    "Company document: \(options.objects) objects, SQLite \(megabytes(document)); clipboards: JSON \(megabytes(json)), binary property list \(megabytes(plist)); median of \(options.runs) run(s)"
)
print("Ratios are baseline time / Graft time (how many times faster Graft is).")
print("")
print("Graft (end to end: store read or written too)          graft   Python    ratio  target")
row(
    "copy --all → JSON          vs json.dumps", seconds("copy-json"), base("json-encode"), target: 3,
    peak: peak("copy-json"))
row(
    "paste JSON → new SQLite    vs json.loads", seconds("paste-json"), base("json-decode"), target: 1,
    peak: peak("paste-json"))
row(
    "copy --all → binary plist  vs plistlib.dumps", seconds("copy-plist"), base("plist-encode"), target: nil,
    peak: peak("copy-plist"))
row(
    "paste binary plist → SQLite vs plistlib.loads", seconds("paste-plist"), base("plist-decode"), target: nil,
    peak: peak("paste-plist"))
print("")
print("Graft's codecs alone (same documents)                  graft   Python    ratio  target")
row("JSON encoding              vs json.dumps", median(codec["json-encode"]!), base("json-encode"), target: 5)
row("JSON decoding              vs json.loads", median(codec["json-decode"]!), base("json-decode"), target: 5)
row("binary plist encoding      vs plistlib.dumps", median(codec["plist-encode"]!), base("plist-encode"), target: 15)
row("binary plist decoding      vs plistlib.loads", median(codec["plist-decode"]!), base("plist-decode"), target: 15)
if withFoundation {
    print("")
    print("Beside Foundation (same objects as Codable structs)     graft  Foundation ratio")
    row(
        "JSON encoding              vs JSONEncoder", median(codec["json-encode"]!), base("foundation-json-encode"),
        target: nil)
    row(
        "JSON decoding              vs JSONDecoder", median(codec["json-decode"]!), base("foundation-json-decode"),
        target: nil)
    row(
        "binary plist encoding      vs PropertyListEncoder", median(codec["plist-encode"]!),
        base("foundation-plist-encode"), target: nil)
    row(
        "binary plist decoding      vs PropertyListDecoder", median(codec["plist-decode"]!),
        base("foundation-plist-decode"), target: nil)
}
print("")
let smallTime = seconds("copy-100"), smallPeak = peak("copy-100")
print(
    String(
        format: "copy of 100 objects: %.3f s (target < 0.2 s: %@), peak %.0f MB (target < 50 MB: %@) — graft said: %@",
        smallTime, (smallTime < 0.2 ? "met" : "MISSED") as NSString, smallPeak,
        (smallPeak < 50 ? "met" : "MISSED") as NSString,
        copied100 as NSString))
let mergeTime = seconds("merge"), perObject = mergeTime / Double(max(mergedObjects, 1)) * 1_000_000
print(
    String(
        format:
            "merge of %d objects into the %d-object store: %.2f s, %.1f µs an object (target ≤ 10 µs: %@), peak %.0f MB",
        mergedObjects, options.objects, mergeTime, perObject, (perObject <= 10 ? "met" : "MISSED") as NSString,
        peak("merge")))
