import Foundation
import GraftCore
import GraftGraph
import Testing

/// A pair of values and how the first orders against the second (nil: not comparable).
struct OrderCase: CustomTestStringConvertible, Sendable {
    var lhs: any Sendable
    var rhs: any Sendable
    var expected: ComparisonResult?
    var options: ComparisonOptions = []

    var testDescription: String { "\(lhs) vs \(rhs)\(options.formatSuffix)" }
}

@Suite struct ValueComparisonTests {
    static let numbers: [OrderCase] = [
        OrderCase(lhs: Int64(2), rhs: Int64(3), expected: .orderedAscending),
        OrderCase(lhs: Int64(3), rhs: 3.0, expected: .orderedSame),
        OrderCase(lhs: 3.5, rhs: Int64(3), expected: .orderedDescending),
        OrderCase(lhs: Decimal(string: "2.50")!, rhs: 2.5, expected: .orderedSame),
        OrderCase(lhs: Decimal(3), rhs: Int64(3), expected: .orderedSame),
        OrderCase(lhs: Int64(4), rhs: Decimal(string: "3.99")!, expected: .orderedDescending),
        OrderCase(lhs: true, rhs: Int64(1), expected: .orderedSame),
        OrderCase(lhs: false, rhs: 0.0, expected: .orderedSame),
        OrderCase(lhs: true, rhs: false, expected: .orderedDescending),
        OrderCase(lhs: 7, rhs: Int64(7), expected: .orderedSame),
        OrderCase(lhs: Int32(-1), rhs: UInt8(1), expected: .orderedAscending),
        OrderCase(lhs: Float(0.5), rhs: 0.5, expected: .orderedSame),
        OrderCase(lhs: NSNumber(value: 12), rhs: Int64(12), expected: .orderedSame),
        // Integers beyond 2^53 are not rounded to the nearest double.
        OrderCase(lhs: Int64.max, rhs: 9_223_372_036_854_775_807.0, expected: .orderedAscending),
        OrderCase(lhs: Int64(9_007_199_254_740_993), rhs: 9_007_199_254_740_992.0, expected: .orderedDescending),
        OrderCase(lhs: Int64.min, rhs: -9_223_372_036_854_775_808.0, expected: .orderedSame),
        OrderCase(lhs: Double.nan, rhs: Double.nan, expected: nil),
        OrderCase(lhs: Int64(1), rhs: Double.infinity, expected: .orderedAscending),
    ]

    static let strings: [OrderCase] = [
        OrderCase(lhs: "apple", rhs: "banana", expected: .orderedAscending),
        OrderCase(lhs: "Apple", rhs: "apple", expected: .orderedAscending),
        OrderCase(lhs: "Apple", rhs: "apple", expected: .orderedSame, options: .caseInsensitive),
        OrderCase(lhs: "café", rhs: "cafe", expected: .orderedDescending),
        OrderCase(lhs: "café", rhs: "cafe", expected: .orderedSame, options: .diacriticInsensitive),
        OrderCase(
            lhs: "CAFÉ", rhs: "cafe", expected: .orderedSame, options: [.caseInsensitive, .diacriticInsensitive]),
        OrderCase(lhs: "CAFÉ", rhs: "cafe", expected: .orderedDescending, options: .caseInsensitive),
        // Canonically equivalent spellings are equal.
        OrderCase(lhs: "e\u{301}", rhs: "\u{E9}", expected: .orderedSame),
        OrderCase(lhs: "Straße", rhs: "STRASSE", expected: .orderedSame, options: .caseInsensitive),
    ]

    static let others: [OrderCase] = [
        OrderCase(lhs: Company.date(10), rhs: Company.date(20), expected: .orderedAscending),
        OrderCase(lhs: Company.date(10), rhs: Company.date(10), expected: .orderedSame),
        OrderCase(
            lhs: UUID(uuidString: "00000000-0000-0000-0000-0000000000FF")!,
            rhs: UUID(uuidString: "00000000-0000-0000-0000-000000000100")!, expected: .orderedAscending),
        OrderCase(lhs: Data([1, 2]), rhs: Data([1, 2, 0]), expected: .orderedAscending),
        OrderCase(lhs: Data([2]), rhs: Data([1, 9]), expected: .orderedDescending),
        OrderCase(
            lhs: URL(string: "https://a.example")!, rhs: URL(string: "https://b.example")!,
            expected: .orderedAscending),
        // Unrelated kinds are not comparable.
        OrderCase(lhs: "1", rhs: Int64(1), expected: nil),
        OrderCase(lhs: Company.date(1), rhs: 1.0, expected: nil),
        OrderCase(lhs: UUID(), rhs: "x", expected: nil),
    ]

    @Test(arguments: numbers + strings + others)
    func compares(_ pair: OrderCase) {
        #expect(ValueComparison.compare(pair.lhs, pair.rhs, options: pair.options) == pair.expected)
        #expect(ValueComparison.isEqual(pair.lhs, pair.rhs, options: pair.options) == (pair.expected == .orderedSame))
        let reverse: ComparisonResult? = pair.expected.map {
            $0 == .orderedAscending ? .orderedDescending : $0 == .orderedDescending ? .orderedAscending : .orderedSame
        }
        #expect(ValueComparison.compare(pair.rhs, pair.lhs, options: pair.options) == reverse)
    }

    @Test func nilEqualsOnlyNil() {
        #expect(ValueComparison.compare(nil, nil) == .orderedSame)
        #expect(ValueComparison.compare(nil, Int64(0)) == nil)
        #expect(ValueComparison.compare("", nil) == nil)
        #expect(ValueComparison.isEqual(nil, nil))
        #expect(!ValueComparison.isEqual(nil, ""))
        #expect(ValueComparison.isEqual(NSNull(), nil))
        let missing: String? = nil
        #expect(ValueComparison.isEqual(missing as Any, nil))
    }

    @Test func objectsAreEqualOnlyToThemselves() {
        let (a, b) = (Record(["name": "a"]), Record(["name": "a"]))
        #expect(ValueComparison.isEqual(a, a))
        #expect(!ValueComparison.isEqual(a, b))
        #expect(ValueComparison.compare(a, b) == nil)
    }

    @Test func collectionsAreEqualAsMultisets() {
        #expect(ValueComparison.isEqual([Int64(1), Int64(2), Int64(2)], [2.0, 1.0, 2.0]))
        #expect(!ValueComparison.isEqual([Int64(1), Int64(2), Int64(2)], [Int64(1), Int64(1), Int64(2)]))
        #expect(ValueComparison.isEqual(Set(["a", "b"]), ["b", "a"]))
        // Empty arrays of any element type are empty collections (an empty array casts to [UInt8]).
        #expect(ValueComparison.isEqual([String](), [Int64]()))
        #expect(!ValueComparison.isEqual([String](), Data()))
        // A byte array is data.
        #expect(ValueComparison.isEqual([UInt8]([1, 2]), Data([1, 2])))
    }

    @Test func sortOrderIsTotal() {
        #expect(ValueComparison.sortOrder(nil, Int64(1)) == .orderedAscending)
        #expect(ValueComparison.sortOrder("a", nil) == .orderedDescending)
        #expect(ValueComparison.sortOrder(nil, nil) == .orderedSame)
        #expect(ValueComparison.sortOrder(Double.nan, -Double.infinity) == .orderedAscending)
        #expect(ValueComparison.sortOrder(Double.nan, Double.nan) == .orderedSame)
        // Numbers before strings before dates.
        #expect(ValueComparison.sortOrder("0", Int64(99)) == .orderedDescending)
        #expect(ValueComparison.sortOrder(Company.date(0), "z") == .orderedDescending)
    }
}

@Suite struct SortDescriptorTests {
    let graph = Company()

    func names(_ records: [Record]) -> [String] { records.map { $0["name"] as! String } }

    @Test func sortsByOneKey() throws {
        #expect(
            names(try graph.employees.sorted(using: [GraftSortDescriptor("salary")])) == [
                "Bob", "Cy", "Ann", "eve", "Dée",
            ])
        #expect(
            names(try graph.employees.sorted(using: [GraftSortDescriptor("salary", ascending: false)]))
                == ["Dée", "eve", "Ann", "Cy", "Bob"])
        #expect(
            names(try graph.employees.sorted(using: [GraftSortDescriptor("hireDate")])) == [
                "Dée", "Ann", "Cy", "Bob", "eve",
            ])
    }

    @Test func sortsStringsWithOptions() throws {
        #expect(
            names(try graph.employees.sorted(using: [GraftSortDescriptor("name")])) == [
                "Ann", "Bob", "Cy", "Dée", "eve",
            ])
        let records = ["b", "C", "a", "É", "d"].map { Record(["name": $0]) }
        #expect(names(try records.sorted(using: [GraftSortDescriptor("name")])) == ["C", "a", "b", "d", "É"])
        #expect(
            names(
                try records.sorted(using: [
                    GraftSortDescriptor("name", options: [.caseInsensitive, .diacriticInsensitive])
                ]))
                == ["a", "b", "C", "d", "É"])
    }

    @Test func sortsBySeveralKeysThroughToOnes() throws {
        let descriptors = [
            try GraftSortDescriptor("department.name"), try GraftSortDescriptor("salary", ascending: false),
        ]
        #expect(names(try graph.employees.sorted(using: descriptors)) == ["Dée", "eve", "Ann", "Cy", "Bob"])
        #expect(descriptors.map(\.description) == ["department.name ascending", "salary descending"])
    }

    @Test func nilSortsFirstAscendingAndLastDescending() throws {
        #expect(
            names(try graph.employees.sorted(using: [GraftSortDescriptor("manager.name")])).prefix(2) == ["Ann", "Dée"])
        let descending = names(
            try graph.employees.sorted(using: [GraftSortDescriptor("manager.name", ascending: false)]))
        #expect(descending == ["eve", "Bob", "Cy", "Ann", "Dée"])
    }

    @Test func sortIsStable() throws {
        let records = (0..<50).map { Record(["name": "r\($0)", "group": Int64($0 % 3)]) }
        let sorted = try records.sorted(using: [GraftSortDescriptor("group")])
        for group in 0..<3 {
            let members = sorted.filter { $0["group"] as? Int64 == Int64(group) }
            #expect(
                members.map { $0["name"] as! String }
                    == records.filter { $0["group"] as? Int64 == Int64(group) }.map { $0["name"] as! String })
        }
    }

    @Test func comparesTwoObjects() throws {
        let bySalary = try GraftSortDescriptor("salary")
        #expect(try bySalary.compare(graph.bob, graph.ann) == .orderedAscending)
        #expect(try GraftSortDescriptor("salary", ascending: false).compare(graph.bob, graph.ann) == .orderedDescending)
        #expect(try bySalary.compare(graph.ann, graph.ann) == .orderedSame)
    }

    @Test func errorsPropagate() {
        #expect(throws: GraftError.self) { try GraftSortDescriptor("a..b") }
        #expect(throws: GraftError.self) { try self.graph.employees.sorted(using: [GraftSortDescriptor("name.first")]) }
    }
}
