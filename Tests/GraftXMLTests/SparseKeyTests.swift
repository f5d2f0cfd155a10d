import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftXML

/// Keys first seen far beyond the dense tables (kept aside in a dictionary or set) must still be found
/// once the tables have grown past them.
@Suite struct SparseKeyTests {
    @Test func aKeySetFindsAKeyAddedBeforeTheBitmapGrewPastIt() {
        var set = ObjectTally.KeySet()
        var inserted = set.insert(2_000_000)  // beyond the bitmap's reach: kept aside
        #expect(inserted)
        for key in Int64(1)...300_000 { _ = set.insert(key) }
        inserted = set.insert(2_100_000)  // the bitmap now grows past 2,000,000
        #expect(inserted)
        let found = set.contains(2_000_000)
        #expect(found)
        inserted = set.insert(2_000_000)
        #expect(!inserted)
        let missing = set.subtracting(ObjectTally.KeySet(), limit: 3)
        #expect(missing == [1, 2, 3])
    }

    @Test func anIDWriterKeepsTheFirstTreeOfAKeyClaimedBeforeTheTableGrew() throws {
        let model = try ModelFile.load(Project.url("examples/Company/Company.xcdatamodeld")).current
        let department = model.entity(named: "Department")!.index
        let employee = model.entity(named: "Employee")!.index
        var writer = ObjectIDWriter(model: model)
        let output = ByteBuffer()
        func id(_ entity: Int, _ key: Int64) -> String {
            output.removeAll()
            writer.append(entity: entity, key: key, to: output)
            return Bytes.string(output.bytes)
        }
        #expect(id(department, 2_000_000) == "z2000000")
        for key in Int64(1)...300_000 { _ = id(department, key) }
        #expect(id(department, 2_100_000) == "z2100000")
        // Key 2,000,000 belongs to the Department tree: an Employee with it gets a suffix.
        #expect(id(employee, 2_000_000) == "z2000000-EMPLOYEE")
        #expect(id(department, 2_000_000) == "z2000000")
    }
}
