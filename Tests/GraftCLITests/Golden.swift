import Foundation
import Testing

/// Golden outputs: expected texts kept as Swift files in `Golden/`, one per text, so they need no
/// resources and show in review as the text itself.
///
/// Run the tests with `GRAFT_RECORD=1` to rewrite the golden files from the actual outputs (the tests that
/// record fail, so a recording run is never mistaken for a passing one), then build again and review the
/// change with `git diff`.
enum Golden {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    static var isRecording: Bool { ProcessInfo.processInfo.environment["GRAFT_RECORD"] == "1" }

    /// The Swift file that holds `text` as the golden output `name`.
    static func source(named name: String, text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.isEmpty ? "" : "        " + $0 }
        return """
            // The expected output `\(name)`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
            extension Golden {
                static let \(name) = #\"\"\"
            \(lines.joined(separator: "\n"))
                    \"\"\"#
            }

            """
    }
}

/// Expects `actual` to equal `expected`, the golden output `name`, showing a line diff when it does not.
///
/// With `GRAFT_RECORD=1`, writes `actual` to `Golden/<name>.swift` instead.
func expectGolden(
    _ actual: String, _ expected: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    if Golden.isRecording {
        let url = Golden.folder.appendingPathComponent(name + ".swift")
        do {
            try Golden.source(named: name, text: actual).write(to: url, atomically: true, encoding: .utf8)
            Issue.record(
                "Recorded Golden/\(name).swift; run again without GRAFT_RECORD.", sourceLocation: sourceLocation)
        } catch {
            Issue.record("Could not record Golden/\(name).swift: \(error)", sourceLocation: sourceLocation)
        }
        return
    }
    if actual != expected {
        let diff = lineDiff(expected, actual)
        Issue.record(
            "Output differs from Golden/\(name).swift (- expected, + actual; GRAFT_RECORD=1 re-records):\n\(diff)",
            sourceLocation: sourceLocation)
    }
}

/// The lines of `old` and `new` that differ, marked `-` and `+`, between unchanged lines marked ` `.
/// Trailing spaces are shown as `·` so they can be seen.
func lineDiff(_ old: String, _ new: String) -> String {
    let a = old.split(separator: "\n", omittingEmptySubsequences: false)
    let b = new.split(separator: "\n", omittingEmptySubsequences: false)
    // lengths[i][j]: the length of the longest common subsequence of a[i...] and b[j...].
    var lengths = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in stride(from: a.count - 1, through: 0, by: -1) {
        for j in stride(from: b.count - 1, through: 0, by: -1) {
            lengths[i][j] = a[i] == b[j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
        }
    }
    func show(_ line: Substring) -> String {
        let trimmed = line.reversed().drop { $0 == " " }.reversed()
        return String(trimmed) + String(repeating: "·", count: line.count - trimmed.count)
    }
    var lines: [String] = []
    var (i, j) = (0, 0)
    while i < a.count || j < b.count {
        if i < a.count && j < b.count && a[i] == b[j] {
            lines.append("  " + show(a[i]))
            (i, j) = (i + 1, j + 1)
        } else if i < a.count && (j == b.count || lengths[i + 1][j] >= lengths[i][j + 1]) {
            lines.append("- " + show(a[i]))
            i += 1
        } else {
            lines.append("+ " + show(b[j]))
            j += 1
        }
    }
    return lines.joined(separator: "\n")
}
