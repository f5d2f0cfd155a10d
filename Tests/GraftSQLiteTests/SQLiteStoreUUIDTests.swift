import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// A store's `Z_METADATA.Z_UUID` is its identity (object IDs carry it): text that is not a UUID is an error
/// naming the file and the column, not an identity taken as it comes. Made from the example Company store.
@Suite final class SQLiteStoreUUIDTests {
    let folder: URL
    let url: URL

    init() throws {
        folder = try scratchFolder()
        url = folder.appendingPathComponent("Company.sqlite")
        try FileManager.default.copyItem(at: Project.url("examples/Company/Company.sqlite"), to: url)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    func setUUID(_ literal: String) throws {
        let database = try SQLiteDatabase.openForWriting(url)
        try database.execute("UPDATE Z_METADATA SET Z_UUID = \(literal)")
        database.close()
    }

    @Test(arguments: [
        ("'not-a-uuid'", "'not-a-uuid'"), ("'NSStoreType'", "'NSStoreType'"), ("42", "'42'"),
        ("'{5A1D7C1E-0000-4000-8000-000000000001}'", "'{5A1D7C1E-0000-4000-8000-000000000001}'"),
        ("' 5A1D7C1E-0000-4000-8000-000000000001'", "' 5A1D7C1E-0000-4000-8000-000000000001'"),
    ])
    func aUUIDThatIsNotOneIsAnErrorNamingTheColumn(literal: String, shown: String) throws {
        try setUUID(literal)
        let error = try #require(throws: GraftError.self) { try SQLiteStoreReader(url: url, model: nil) }
        #expect(error.code == .malformedInput)
        #expect(error.context == [.file(url.relativePath), .key("Z_METADATA.Z_UUID")])
        #expect(error.message.hasPrefix("the store's UUID \(shown) is not a UUID"), "\(error)")
    }

    @Test func aUUIDInLowerCaseIsKeptAsWritten() throws {
        try setUUID("'5a1d7c1e-0000-4000-8000-00000000000b'")
        #expect(try SQLiteStoreFile.read(url).identifier == "5a1d7c1e-0000-4000-8000-00000000000b")
        #expect(
            try SQLiteStoreReader(url: url, model: nil).metadata.identifier == "5a1d7c1e-0000-4000-8000-00000000000b")
    }
}
