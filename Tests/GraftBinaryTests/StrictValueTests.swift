import Foundation
import GraftBinary
import GraftCore
import GraftGraph
import GraftModel
import Testing

/// Strict reading of a binary store's values, as every store format reads them: a value that is not of
/// its attribute's type, or outside its range, is an error naming the object, the attribute and the
/// value, or (`ValueReading.lenient`) no value with one warning per attribute. Each case is a hand-made
/// document of one node whose attributes are given by name.
@Suite struct StrictValueTests {
    struct Refused: CustomTestStringConvertible, Sendable {
        var entity: String
        var attribute: String
        var value: PropertyList
        var message: String
        var testDescription: String { "\(entity).\(attribute) = \(value)" }
    }

    static let refused: [Refused] = [
        Refused(
            entity: "Department", attribute: "code", value: .integer(70_000),
            message: "holds 70000, which is beyond the range of Integer 16 (-32768…32767)"),
        // Decimal(Double.infinity) traps: the value is refused before.
        Refused(
            entity: "Department", attribute: "budget", value: .real(.infinity),
            message: "holds inf, which is beyond the range of Decimal"),
        Refused(
            entity: "Department", attribute: "budget", value: .real(1e300),
            message: "holds 1e+300, which is beyond the range of Decimal"),
        Refused(
            entity: "Department", attribute: "code", value: .string("7"),
            message: "holds a string where an Integer 16 value belongs"),
        Refused(
            entity: "Employee", attribute: "rating", value: .real(1e300),
            message: "holds 1e+300, which is beyond the range of Float"),
        Refused(
            entity: "Employee", attribute: "isRemote", value: .integer(2),
            message: "holds 2, which is not a Boolean value (0 or 1)"),
        Refused(
            entity: "Employee", attribute: "workload", value: .integer(9_007_199_254_740_993),
            message: "holds 9007199254740993, which cannot be held exactly by a Double"),
    ]

    /// A document of one object, p1, whose `attribute` holds `value` (and, for employees, a name).
    static func document(_ refused: Refused, in scratch: Scratch) throws -> URL {
        var values: [(name: String, value: HandMade.Slot)] = [(refused.attribute, .value(refused.value))]
        if refused.entity == "Employee" { values.append(("name", "Ann")) }
        let node = HandMade.Node(key: 1, entity: refused.entity, attributes: .byName(values), related: [:])
        let url = scratch.url("store.binary")
        try InvalidInputTests.assemble(map: InvalidInputTests.handMap([node])).write(to: url)
        return url
    }

    @Test(arguments: refused)
    func strictReadingNamesTheObjectTheAttributeAndTheValue(_ case: Refused) throws {
        let scratch = Scratch()
        let url = try Self.document(`case`, in: scratch)
        let reader = try BinaryStoreReader(url: url, model: Company.model)
        let error = try #require(throws: GraftError.self) { try reader.forEachSnapshot { _ in } }
        #expect(error.code == .typeMismatch)
        #expect(
            error.context == [.file(url.relativePath), .entity(`case`.entity), .object("p1"), .key(`case`.attribute)])
        #expect(error.message.hasPrefix(`case`.message), "\(error.message)")
    }

    @Test(arguments: refused)
    func lenientReadingReadsItAsNoValueWithOneWarning(_ case: Refused) throws {
        let scratch = Scratch()
        let url = try Self.document(`case`, in: scratch)
        let reader = try BinaryStoreReader(url: url, model: Company.model, valueReading: .lenient)
        var read: [Snapshot] = []
        try reader.forEachSnapshot { read.append($0) }
        let entity = Company.entity(`case`.entity)
        #expect(read.count == 1)
        #expect(read.first?[attribute: `case`.attribute, in: entity] == nil)
        if `case`.entity == "Employee" { #expect(read.first?[attribute: "name", in: entity] == "Ann") }
        #expect(reader.warnings.count == 1)
        let type = entity.attributes[entity.attributeIndexByName[`case`.attribute]!].type
        #expect(
            reader.warnings.first?.hasPrefix(
                "\(`case`.entity).\(`case`.attribute) (\(type)): 1 stored value is not of the attribute's type or range "
                    + "and was read as no value: p1 (") == true, "\(reader.warnings)")
    }
}
