import Foundation
import GraftBinary
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

/// The writer is atomic: nothing appears at the destination before `finish()`, and nothing is left
/// behind when it is cancelled, fails or is dropped.
@Suite struct WriterTests {
    @Test func refusesToOverwriteWithoutPermission() throws {
        let scratch = Scratch()
        let url = scratch.url("Company.binary")
        try Data("keep me".utf8).write(to: url)
        let error = #expect(throws: GraftError.self) { try writeStore(Company.edgeDocument, to: url) }
        #expect(error?.code == .alreadyExists)
        #expect(try Data(contentsOf: url) == Data("keep me".utf8))
        #expect(scratch.contents == ["Company.binary"])
    }

    @Test func overwritesWhenAllowed() throws {
        let scratch = Scratch()
        let url = scratch.url("Company.binary")
        try Data("old".utf8).write(to: url)
        try BinaryStore.write(
            Company.edgeDocument, to: url, model: Company.model, metadata: Company.metadata(), overwrite: true)
        #expect(try readStore(url).count == Company.edgeDocument.count)
        #expect(scratch.contents == ["Company.binary"])
    }

    @Test func nothingAppearsBeforeFinish() throws {
        let scratch = Scratch()
        let url = scratch.url("Company.binary")
        var writer = try BinaryStoreWriter(url: url, model: Company.model, metadata: Company.metadata())
        for snapshot in Company.edgeDocument { try writer.write(snapshot) }
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(scratch.contents.count == 1 && scratch.contents[0].hasPrefix(".Company.binary.graft-"))
        try writer.finish()
        #expect(scratch.contents == ["Company.binary"])
    }

    @Test func cancelLeavesNothing() throws {
        let scratch = Scratch()
        var writer = try BinaryStoreWriter(
            url: scratch.url("Company.binary"), model: Company.model, metadata: Company.metadata())
        for snapshot in Company.edgeDocument.prefix(3) { try writer.write(snapshot) }
        writer.cancel()
        #expect(scratch.contents.isEmpty)
        #expect(throws: GraftError.self) { try writer.finish() }
        #expect(scratch.contents.isEmpty)
    }

    @Test func droppedWriterLeavesNothing() throws {
        let scratch = Scratch()
        do {
            var writer = try BinaryStoreWriter(
                url: scratch.url("Company.binary"), model: Company.model, metadata: Company.metadata())
            try writer.write(Company.edgeDocument[0])
        }
        #expect(scratch.contents.isEmpty)
    }

    struct BadDocument: CustomTestStringConvertible, Sendable {
        let name: String
        let code: GraftError.Code
        let fragment: String
        let snapshots: [Snapshot]
        var testDescription: String { name }
    }

    static let badDocuments: [BadDocument] = {
        let employee = Company.entity("Employee")
        var wrongShape = Company.snapshot("Project", 1)
        wrongShape.attributes.removeLast()
        var unloaded = Company.snapshot("Department", 1, ["name": "D"])
        unloaded[relationship: "employees", in: Company.entity("Department")] = .unloaded
        _ = employee
        return [
            BadDocument(
                name: "relationship to an object never written", code: .malformedInput,
                fragment: "Project p99, which is not in the document",
                snapshots: [
                    Company.snapshot(
                        "Department", 1, ["name": "D"], ["projects": .toMany([Company.ref("Project", 99)])])
                ]),
            BadDocument(
                name: "string where an integer belongs", code: .typeMismatch, fragment: "employeeID",
                snapshots: [Company.snapshot("Employee", 1, ["employeeID": "seven"])]),
            BadDocument(
                name: "double where a decimal belongs", code: .typeMismatch, fragment: "where a Decimal value belongs",
                snapshots: [Company.snapshot("Employee", 1, ["salary": .double(1.5)])]),
            BadDocument(
                name: "related object of the wrong entity", code: .typeMismatch, fragment: "where a Manager belongs",
                snapshots: [Company.snapshot("Employee", 1, [:], ["manager": .toOne(Company.ref("Flunky", 2))])]),
            BadDocument(
                name: "one object under two entities", code: .typeMismatch, fragment: "elsewhere in the document",
                snapshots: [
                    Company.snapshot("Employee", 1, [:], ["manager": .toOne(Company.ref("Manager", 2))]),
                    Company.snapshot("Flunky", 2),
                ]),
            BadDocument(
                name: "object written twice", code: .malformedInput, fragment: "written twice",
                snapshots: [Company.snapshot("Project", 1), Company.snapshot("Project", 1)]),
            BadDocument(
                name: "snapshot of the wrong shape", code: .malformedInput, fragment: "Project has",
                snapshots: [wrongShape]),
            BadDocument(
                name: "unloaded to-many", code: .invalidOperation, fragment: "not loaded", snapshots: [unloaded]),
        ]
    }()

    @Test(arguments: badDocuments)
    func failedWriteLeavesNothing(document: BadDocument) throws {
        let scratch = Scratch()
        let url = scratch.url("Company.binary")
        let error = #expect(throws: GraftError.self) { try writeStore(document.snapshots, to: url) }
        #expect(error?.code == document.code, "\(String(describing: error))")
        #expect(error?.description.contains(document.fragment) == true, "\(String(describing: error))")
        #expect(error?.context.first == .file(url.relativePath))
        #expect(scratch.contents.isEmpty)
    }

    @Test func writerIsUnusableAfterAFailure() throws {
        let scratch = Scratch()
        var writer = try BinaryStoreWriter(
            url: scratch.url("Company.binary"), model: Company.model, metadata: Company.metadata())
        #expect(throws: GraftError.self) { try writer.write(Company.snapshot("Employee", 1, ["employeeID": "x"])) }
        let error = #expect(throws: GraftError.self) { try writer.write(Company.snapshot("Project", 2)) }
        #expect(error?.code == .invalidOperation)
        #expect(scratch.contents.isEmpty)
    }

    @Test func missingFolderIsAnIOError() throws {
        let scratch = Scratch()
        let error = #expect(throws: GraftError.self) {
            try writeStore(Company.edgeDocument, to: scratch.url("no/such/folder/Company.binary"))
        }
        #expect(error?.code == .io)
        #expect(scratch.contents.isEmpty)
    }

    @Test func failedSaveKeepsTheDocument() throws {
        let scratch = Scratch()
        let url = scratch.url("Company.binary")
        try writeStore(Company.edgeDocument, to: url)
        let before = try Data(contentsOf: url)
        let store = try BinaryStore.open(url: url, model: Company.model)
        // A Department whose to-many refers to a Project that does not exist: the writer refuses it.
        var broken = Company.snapshot("Department", 1, ["name": "Research"])
        broken[relationship: "projects", in: Company.entity("Department")] = .toMany([Company.ref("Project", 404)])
        #expect(throws: GraftError.self) { try store.save(StoreChanges(updated: [broken])) }
        #expect(try Data(contentsOf: url) == before)
        #expect(scratch.contents == ["Company.binary"])
    }

    @Test func aSaveAfterAnotherWritersSaveFailsAndAnExclusiveStoreHoldsOthersOff() throws {
        let scratch = Scratch()
        let url = scratch.url("Company.binary")
        try writeStore(Company.edgeDocument, to: url)
        let one = try BinaryStore.open(url: url, model: Company.model, wait: 0.2)
        let other = try BinaryStore.open(url: url, model: Company.model)
        let renamed = Company.snapshot("Department", 1, ["name": "Renamed"])
        try one.save(StoreChanges(updated: [renamed]))
        let after = try Data(contentsOf: url)
        let error = #expect(throws: GraftError.self) {
            try other.save(StoreChanges(updated: [Company.snapshot("Department", 1, ["name": "Lost"])]))
        }
        #expect(error?.code == .busy)
        #expect(error?.message.hasPrefix("was changed by another writer since it was read") == true)
        #expect(try Data(contentsOf: url) == after)
        // Exclusive: other writers wait, then fail as busy.
        let holder = try BinaryStore.open(url: url, model: Company.model, exclusive: true)
        let busy = #expect(throws: GraftError.self) {
            _ = try BinaryStore.open(url: url, model: Company.model, wait: 0.2, exclusive: true)
        }
        #expect(busy?.code == .busy)
        try holder.save(StoreChanges(updated: [Company.snapshot("Department", 1, ["name": "Held"])]))
        #expect(throws: GraftError.self) { try one.save(StoreChanges(updated: [renamed])) }
        #expect(scratch.contents == ["Company.binary"])
    }
}
