import Foundation
import GraftCore
import GraftInterchange
import Testing

/// The small document in every encoding, byte for byte: the golden files in `ClipboardGolden/` are Swift
/// sources (so the test target needs no resources) holding each encoding's text, or for the binary
/// property list its base64. `GRAFT_RECORD=1 swift test` rewrites them; review the change with `git diff`.
@Suite struct ClipboardGoldenTests {
    @Test(arguments: ClipboardEncoding.allCases)
    func smallDocument(_ encoding: ClipboardEncoding) throws {
        let data = try encoding.encode(ClipboardSamples.small)
        let text =
            encoding == .binaryPlist
            ? data.base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed]) + "\n"
            : String(decoding: data, as: UTF8.self)
        let name = "small" + encoding.rawValue.replacingOccurrences(of: "-", with: "").capitalized
        expectClipboardGolden(text, ClipboardGolden.texts[name] ?? "", named: name)
        // The golden document also decodes to the document.
        if let golden = ClipboardGolden.texts[name] {
            let goldenData =
                encoding == .binaryPlist
                ? Data(base64Encoded: golden, options: .ignoreUnknownCharacters)! : Data(golden.utf8)
            #expect(try ClipboardEncoding.decode(goldenData) == ClipboardSamples.small)
        }
    }
}

/// Golden texts by name, filled in by the files in `ClipboardGolden/`.
enum ClipboardGolden {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "ClipboardGolden")

    static var isRecording: Bool { ProcessInfo.processInfo.environment["GRAFT_RECORD"] == "1" }

    static let texts: [String: String] = [
        "smallPlist": smallPlist, "smallBinaryplist": smallBinaryplist, "smallJson": smallJson, "smallXml": smallXml,
    ]

    /// The Swift file that holds `text` as the golden text `name`.
    static func source(named name: String, text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.isEmpty ? "" : "        " + $0
        }
        return """
            // The expected output `\(name)`, checked by ClipboardGoldenTests; `GRAFT_RECORD=1 swift test` rewrites it.
            extension ClipboardGolden {
                static let \(name) = #\"\"\"
            \(lines.joined(separator: "\n"))
                    \"\"\"#
            }

            """
    }
}

/// Expects `actual` to equal the golden text `name`, showing the lines that differ; with `GRAFT_RECORD=1`,
/// writes `actual` to `ClipboardGolden/<name>.swift` instead (and fails, so a recording run never passes).
func expectClipboardGolden(
    _ actual: String, _ expected: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    if ClipboardGolden.isRecording {
        let url = ClipboardGolden.folder.appendingPathComponent(name + ".swift")
        do {
            try ClipboardGolden.source(named: name, text: actual).write(to: url, atomically: true, encoding: .utf8)
            Issue.record(
                "Recorded ClipboardGolden/\(name).swift; run again without GRAFT_RECORD.",
                sourceLocation: sourceLocation)
        } catch {
            Issue.record("Could not record ClipboardGolden/\(name).swift: \(error)", sourceLocation: sourceLocation)
        }
        return
    }
    guard actual != expected else { return }
    let old = expected.split(separator: "\n", omittingEmptySubsequences: false)
    let new = actual.split(separator: "\n", omittingEmptySubsequences: false)
    var lines: [String] = []
    for index in 0..<max(old.count, new.count) {
        let before = index < old.count ? String(old[index]) : nil
        let after = index < new.count ? String(new[index]) : nil
        if before == after { continue }
        if let before { lines.append("\(index + 1) - \(before)") }
        if let after { lines.append("\(index + 1) + \(after)") }
        if lines.count > 40 { break }
    }
    Issue.record(
        "Output differs from ClipboardGolden/\(name).swift (GRAFT_RECORD=1 re-records):\n\(lines.joined(separator: "\n"))",
        sourceLocation: sourceLocation)
}
