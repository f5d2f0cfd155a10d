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

    // MARK: The reader's id table

    func insert(_ id: String, _ entity: Int32, into table: ObjectIDTable) -> Bool {
        var id = id
        return id.withUTF8 { table.insert($0.baseAddress!, $0.count, entity: entity) }
    }

    @Test func anIDTableFindsANumberAddedBeforeThePagesReachedIt() {
        let table = ObjectIDTable()
        #expect(insert("z2000000", 1, into: table))  // beyond the pages: kept aside
        for number in 1...300_000 { _ = insert("z\(number)", 0, into: table) }
        #expect(insert("z2000001", 2, into: table))  // the page holding 2,000,000 now exists
        #expect(table.lookup("z2000000")?.entity == 1)
        #expect(table.lookup("z2000001")?.entity == 2)
        #expect(!insert("z2000000", 1, into: table))
        #expect(table.lookup("z2000002") == nil)
        #expect(table.count == 300_002)
        #expect(table.largestNumber == 2_000_001)
    }

    @Test func anIDTableKeepsNumbersAtTheEdges() throws {
        let table = ObjectIDTable()
        let numbers: [Int64] = [0, 65_535, 65_536, 1 << 40, .max]
        for (entity, number) in numbers.enumerated() { #expect(insert("z\(number)", Int32(entity), into: table)) }
        for (entity, number) in numbers.enumerated() {
            #expect(table.lookup("z\(number)")?.entity == entity)
            #expect(table.lookup("z\(number)")?.key == number)
        }
        // Not canonical: kept by their text.
        #expect(insert("z01", 0, into: table))
        #expect(table.lookup("z01")?.entity == 0)
        #expect(table.lookup("z1") == nil)
        // No key is left above z9223372036854775807 for it.
        #expect(throws: GraftError.self) { try table.assignKeys { $0 } }
    }

    /// `z<number>-<suffix>` ids are kept as their number and suffix; their keys are their numbers unless
    /// that key is taken in their tree.
    @Test func suffixedIDsKeepTheirNumbers() throws {
        let table = ObjectIDTable()
        #expect(insert("z5", 0, into: table))
        #expect(insert("z5-EMPLOYEE", 1, into: table))
        #expect(insert("z5-PROJECT", 2, into: table))
        #expect(insert("z5-EMPLOYEE-X", 1, into: table))
        #expect(insert("z7-EMPLOYEE", 0, into: table))  // the key 7 is free in tree 0
        #expect(insert("z8-", 2, into: table))
        #expect(!insert("z5-EMPLOYEE", 1, into: table))
        #expect(table.lookup("z5-EMPLOYEE")?.entity == 1)
        #expect(table.lookup("z5-PROJECT")?.entity == 2)
        #expect(table.lookup("z6-EMPLOYEE") == nil)
        #expect(table.lookup("z5-OTHER") == nil)
        try table.assignKeys { $0 }
        #expect(table.lookup("z5-EMPLOYEE")?.key == 5)
        #expect(table.lookup("z5-PROJECT")?.key == 5)
        #expect(table.lookup("z7-EMPLOYEE")?.key == 7)
        #expect(table.lookup("z8-")?.key == 8)
        // Its tree has key 5 already: a fresh key above every number.
        #expect(table.lookup("z5-EMPLOYEE-X")?.key == 9)
        let extents = table.keyExtents { $0 }
        #expect(extents.collide)
        #expect(extents.maxKeys == [0: 7, 1: 9, 2: 8])
    }

    @Test func suffixedIDsOfOneTreeDoNotCollide() throws {
        let table = ObjectIDTable()
        #expect(insert("z1", 0, into: table))
        #expect(insert("z2-PROJECT", 1, into: table))
        try table.assignKeys { $0 }
        #expect(table.lookup("z2-PROJECT")?.key == 2)
        #expect(!table.keyExtents { $0 }.collide)
    }

    /// Past the table of suffixes, further suffixed ids are kept by their text, with the same keys.
    @Test func moreSuffixesThanTheTableHolds() throws {
        let table = ObjectIDTable()
        let count = 5000
        for index in 0..<count { #expect(insert("z\(index + 1)-S\(index)", 0, into: table)) }
        for index in 0..<count { #expect(!insert("z\(index + 1)-S\(index)", 0, into: table)) }
        try table.assignKeys { $0 }
        for index in stride(from: 0, to: count, by: 97) {
            #expect(table.lookup("z\(index + 1)-S\(index)")?.key == Int64(index + 1))
        }
        #expect(table.lookup("z1-S1") == nil)
        #expect(table.count == count)
    }
}
