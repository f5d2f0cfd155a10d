import Foundation
import GraftGraph
import GraftModel
import Testing

@Suite struct ValueConversionTests {
    static let values: [Value] = [
        .integer(7), .integer(Int64.max), .double(1.5), .double(0.1), .double(.nan), .decimal(Decimal(string: "2.50")!),
        .string("text"), .string("https://example.com/a"), .bool(true), .date(Date(timeIntervalSinceReferenceDate: 3)),
        .data(Data([1, 2])), .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        .uri(URL(string: "https://example.com")!),
    ]
    /// A paste uses a value unconverted where `holdsAsIs` says so: coercing it must give it back unchanged,
    /// and every value `coerce` gives back as it is should be recognised (or the paste converts for nothing).
    @Test(arguments: AttributeType.allCases)
    func heldAsIsMeansCoercedUnchanged(type: AttributeType) {
        for value in Self.values {
            let coerced = ValueConversion.coerce(value, to: type)
            if ValueConversion.holdsAsIs(value, type) {
                #expect(coerced == value, "\(value) as \(type.modelName)")
            } else if type != .float {
                #expect(coerced != value, "\(value) as \(type.modelName) is held as it is")
            }
        }
        // Single precision is the one type whose matching values may change.
        #expect(!ValueConversion.holdsAsIs(.double(0.1), .float))
        #expect(ValueConversion.coerce(.double(0.1), to: .float) != .double(0.1))
    }
}
