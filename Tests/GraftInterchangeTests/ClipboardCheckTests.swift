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
                name: "Department", versionHash: Data(repeating: 1, count: 32),
                attributes: [.init(name: "name", type: .string)],
                relationships: [.init(name: "employees", isToMany: true)]),
            .init(
                name: "Employee", versionHash: Data(repeating: 2, count: 32),
                attributes: [.init(name: "salary", type: .decimal)]),
        ],
        roots: ["o1"],
        objects: [
            .init(
                id: "o1", entity: "Department", attributes: [.init("name", "Sales")],
                relationships: [.init("employees", ["r1"])])
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

    /// Ids of any form work, Graft's own (`o12`, `r3`) and others, with spread-out numbers too.
    @Test(arguments: [
        ("o1", "r1"), ("dept", "emp-7"), ("o01", "r01"), ("o999999999999", "r1"), ("x1", "o2"),
    ])
    func idsOfAnyForm(object: String, reference: String) throws {
        var document = Self.document
        document.objects[0].id = object
        document.roots = [object]
        document.references[0].id = reference
        document.objects[0].relationships = [.init("employees", [reference])]
        try document.check()
        var missing = document
        missing.objects[0].relationships = [.init("employees", [reference + "0"])]
        #expect(throws: GraftError.self) { try missing.check() }
        var twice = document
        twice.references[0].id = object
        #expect(throws: GraftError.self) { try twice.check() }
        // A reference is not an object: it cannot be a root.
        var referenceRoot = document
        referenceRoot.roots = [reference]
        #expect(throws: GraftError.self) { try referenceRoot.check() }
    }

    @Test func aReferenceNamedLikeAnObjectIsStillAReference() {
        var document = Self.document
        document.references[0].id = "o2"
        document.objects[0].relationships = [.init("employees", ["o2"])]
        document.roots = ["o2"]
        #expect(throws: GraftError.self) { try document.check() }
        document.roots = ["o1"]
        #expect(throws: Never.self) { try document.check() }
    }
}
