import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftXML
import Testing

/// Ids that are not `z<number>` get the keys after the largest number an id has: when that number is
/// Int64's largest, there are none, and reading says so rather than trapping.
@Suite struct KeyLimitTests {
    @Test func noKeysLeftAfterTheLargestIdNumber() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let control = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Valid/company.xml")
        var text = try String(contentsOf: control, encoding: .utf8)
        // Ann's id at the end of Int64, Bob's not a z<number> id.
        text = text.replacingOccurrences(of: "z103", with: "z9223372036854775807")
        text = text.replacingOccurrences(of: "z104", with: "bob")
        let url = folder.appendingPathComponent("company.xml")
        try text.write(to: url, atomically: true, encoding: .utf8)
        let error = try #require(throws: GraftError.self) { try XMLStoreReader(url: url, model: Support.company) }
        #expect(error.code == .malformedInput)
        #expect(error.context == [.file(url.relativePath)])
        #expect(
            error.message
                == "no keys are left for the 1 object whose ids are not z<number>: the ids' numbers reach "
                + "9223372036854775807, and keys cannot pass 9223372036854775807")
    }
}
