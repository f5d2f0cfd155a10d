import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel
import Testing

@Suite struct ClipboardCheckTests {
    static let document = Clipboard(
        entities: [
            .init(
                name: "Department", versionHash: Data(repeating: 1, count: 32), attributes: [.init(name: "name", type: .string)],
                relationships: [.init(name: "employees", isToMany: true)]),
            .init(name: "Employee", versionHash: Data(repeating: 2, count: 32), attributes: [.init(name: "salary", type: .decimal)]),
        ],
        roots: ["o1"],
        objects: [
            .init(id: "o1", entity: "Department", attributes: [.init("name", "Sales")], relationships: [.init("employees", ["r1"])])
        ],
        references: [.init(id: "r1", entity: "Employee", identity: [.init("salary", .decimal(5))])])

    @Test func aConsistentDocumentPasses() throws {
        try Self.document.check()
    }

    @Test func brokenDocumentsSayWhere() {
        var duplicate = Self.document
        duplicate.references[0].id = "o1"
        #expect(throws: GraftError.self) { try duplicate.check() }
        var wrongType = Self.document
        wrongType.objects[0].attributes = [.init("name", .integer(3))]
        #expect(throws: GraftError.self) { try wrongType.check() }
        var dangling = Self.document
        dangling.objects[0].relationships = [.init("employees", ["o9"])]
        #expect(throws: GraftError.self) { try dangling.check() }
        var unknown = Self.document
        unknown.objects[0].entity = "Nowhere"
        #expect(throws: GraftError.self) { try unknown.check() }
    }
}
