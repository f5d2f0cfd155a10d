import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftXML
import Testing

/// Reading a document once (`readsOnceInAnyOrder`, `forEachSnapshotInAnyOrder`): the snapshots of the
/// two-pass read, those of objects that refer to objects further on handed on last, and the same errors.
@Suite struct OnePassTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    static func controlText() throws -> String {
        try String(contentsOf: folder.appendingPathComponent("Valid/company.xml"), encoding: .utf8)
    }

    /// `text` read in document order, and read once.
    static func readBothWays(_ text: String) throws -> (ordered: [Snapshot], once: [Snapshot], reader: XMLStoreReader) {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("store.xml")
        try Data(text.utf8).write(to: url)
        let ordered = try Support.snapshots(try XMLStoreReader(url: url, model: Support.company))
        let reader = try XMLStoreReader(url: url, model: Support.company, readsOnceInAnyOrder: true)
        #expect(reader.objectCount == nil)
        var once: [Snapshot] = []
        try reader.forEachSnapshotInAnyOrder { once.append($0) }
        #expect(reader.objectCount == ordered.count)
        return (ordered, once, reader)
    }

    static func sorted(_ snapshots: [Snapshot]) -> [Snapshot] {
        snapshots.sorted { ($0.ref.entity, $0.ref.key) < ($1.ref.entity, $1.ref.key) }
    }

    @Test func objectsThatReferToObjectsFurtherOnComeLast() throws {
        let (ordered, once, _) = try Self.readBothWays(Self.controlText())
        // The department lists both people, the manager the flunky after it: only the flunky is settled
        // when read.
        #expect(ordered.map(\.ref.key) == [102, 103, 104])
        #expect(once.map(\.ref.key) == [104, 102, 103])
        #expect(Self.sorted(once) == Self.sorted(ordered))
    }

    @Test(arguments: [
        // A suffixed id after its number's object, of another tree: its key is certain at once.
        ["z104": "z102-EMPLOYEE"],
        // A suffixed id before its number's object: settled at the end (no clash: another tree).
        ["z102": "z103-DEPARTMENT"],
        // A clash within a tree, and ids that are not numbers: fresh keys above the largest number.
        ["z104": "z103-FLUNKY"], ["z104": "bob", "z102": "research"],
    ])
    func keysAreThoseOfTheTwoPassRead(_ replacements: [String: String]) throws {
        var text = try Self.controlText()
        for (old, new) in replacements { text = text.replacingOccurrences(of: "\"\(old)\"", with: "\"\(new)\"") }
        for (old, new) in replacements {
            text = text.replacingOccurrences(of: "\(old) ", with: "\(new) ").replacingOccurrences(
                of: " \(old)\"", with: " \(new)\""
            )
            .replacingOccurrences(of: "\"\(old)\"", with: "\"\(new)\"")
        }
        let (ordered, once, _) = try Self.readBothWays(text)
        #expect(ordered.count == 3)
        #expect(Self.sorted(once) == Self.sorted(ordered))
    }

    /// The manager as `z104-EMPLOYEE` before the flunky `z104`, of the same tree: the manager's key, 104
    /// when read, is proved wrong by the flunky (the two-pass read gives it a fresh one).
    static func contradictingText() throws -> String {
        try controlText().replacingOccurrences(of: "\"z103\"", with: "\"z104-EMPLOYEE\"").replacingOccurrences(
            of: "z102 z103 z104", with: "z102 z104-EMPLOYEE z104"
        )
        .replacingOccurrences(of: "idrefs=\"z103 z104\"", with: "idrefs=\"z104-EMPLOYEE z104\"")
        .replacingOccurrences(of: "idrefs=\"z103\"", with: "idrefs=\"z104-EMPLOYEE\"")
    }

    @Test func idsThatContradictAKeyGivenEarlierAskForAReadInOrder() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("store.xml")
        try Data(try Self.contradictingText().utf8).write(to: url)
        let reader = try XMLStoreReader(url: url, model: Support.company, readsOnceInAnyOrder: true)
        #expect(throws: OrderedReadNeeded.self) { try reader.forEachSnapshotInAnyOrder { _ in } }
        // The same reader then reads in order, from no ids.
        let ordered = try Support.snapshots(reader)
        #expect(ordered.map(\.ref.key) == [102, 105, 104])
        #expect(ordered == (try Support.snapshots(try XMLStoreReader(url: url, model: Support.company))))
    }

    @Test func aLongDocumentSetsObjectsAsideInATemporaryFileAndRemovesIt() throws {
        // 2,000 departments first, each listing its employee, who come after them all: far more text set
        // aside than a chunk holds.
        var text = try Self.controlText()
        let start = text.range(of: "    <object type=\"DEPARTMENT\"")!.lowerBound
        let end = text.range(of: "</database>")!.lowerBound
        var objects = ""
        let count = 2000
        for index in 0..<count {
            objects += """
                    <object type="DEPARTMENT" id="z\(index + 1)">
                        <attribute name="code" type="int16">7</attribute>
                        <attribute name="name" type="string">Department \(index) \(String(repeating: "x", count: 100))</attribute>
                        <relationship name="employees" type="3/40" destination="EMPLOYEE" idrefs="z\(count + index + 1)"></relationship>
                    </object>

                """
        }
        for index in 0..<count {
            objects += """
                    <object type="\(index % 2 == 0 ? "EMPLOYEE" : "MANAGER")" id="z\(count + index + 1)">
                        <attribute name="name" type="string">Employee \(index)</attribute>
                        <relationship name="department" type="0/1" destination="DEPARTMENT" idrefs="z\(index + 1)"></relationship>
                    </object>

                """
        }
        text.replaceSubrange(start..<end, with: objects)
        let spills = { () -> Set<String> in
            Set(
                ((try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path))
                    ?? []).filter { $0.hasPrefix("graft-xml-") && $0.hasSuffix(".spill") })
        }
        let before = spills()
        let (ordered, once, _) = try Self.readBothWays(text)
        #expect(once.count == 2 * count)
        #expect(once.prefix(count).allSatisfy { $0.ref.entity != Support.company.entity(named: "Department")!.index })
        #expect(Self.sorted(once) == Self.sorted(ordered))
        #expect(spills().subtracting(before).isEmpty)
    }

    /// Every relationship of the Company model but the to-manys a SQLite store keeps in their inverses'
    /// columns (a department's employees, a manager's direct reports).
    static let leavingOutToManys = RelationshipSelection(model: Support.company) { entity, index in
        !["employees", "directReports"].contains(Support.company.descriptions[entity].relationships[index].name)
    }

    /// `text` read once, leaving out `leavingOutToManys`.
    static func readOnceLeavingOut(_ text: String) throws -> [Snapshot] {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("store.xml")
        try Data(text.utf8).write(to: url)
        let reader = try XMLStoreReader(url: url, model: Support.company, readsOnceInAnyOrder: true)
        var once: [Snapshot] = []
        try reader.forEachSnapshotInAnyOrder(reading: Self.leavingOutToManys) { once.append($0) }
        return once
    }

    @Test func relationshipsLeftOutHoldNoObjectBackAndAreHandedOnUnloaded() throws {
        let (ordered, _, _) = try Self.readBothWays(Self.controlText())
        let once = try Self.readOnceLeavingOut(Self.controlText())
        // In document order: the department and the manager wait for nobody.
        #expect(once.map(\.ref.key) == [102, 103, 104])
        let expected = ordered.map { snapshot in
            var snapshot = snapshot
            let entity = Support.company.descriptions[snapshot.ref.entity]
            for index in entity.relationships.indices
            where !Self.leavingOutToManys.includes(entity: entity.index, relationship: index) {
                snapshot.relationships[index] = .unloaded
            }
            return snapshot
        }
        #expect(once == expected)
    }

    @Test(arguments: [
        // An object further on that the document lacks, and one of another entity.
        ("idrefs=\"z103 z104\"", "idrefs=\"z103 z104 z999\"", GraftError.Code.malformedInput),
        ("idrefs=\"z104\"", "idrefs=\"z104 z105\"", GraftError.Code.typeMismatch),
    ])
    func aRelationshipLeftOutNamingAWrongObjectFurtherOnAsksForAReadInOrder(
        _ old: String, _ new: String, _ code: GraftError.Code
    ) throws {
        var text = try Self.controlText().replacingOccurrences(of: old, with: new)
        // A department further on, for the manager's direct reports to name.
        text = text.replacingOccurrences(
            of: "</database>",
            with: "    <object type=\"DEPARTMENT\" id=\"z105\"><attribute name=\"code\" type=\"int16\">8</attribute>"
                + "</object>\n</database>")
        #expect(throws: OrderedReadNeeded.self) { _ = try Self.readOnceLeavingOut(text) }
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("store.xml")
        try Data(text.utf8).write(to: url)
        let error = #expect(throws: GraftError.self) {
            try XMLStoreReader(url: url, model: Support.company).forEachSnapshotInAnyOrder(
                reading: Self.leavingOutToManys
            ) { _ in }
        }
        #expect(error?.code == code)
    }

    @Test func aRelationshipLeftOutNamingAnIdOfAnotherFormFurtherOnHoldsItsObjectBack() throws {
        // The department lists `bob`, who comes last: the department waits for every id to be known.
        let text = try Self.controlText().replacingOccurrences(of: "idrefs=\"z103 z104\"", with: "idrefs=\"z103 bob\"")
            .replacingOccurrences(
                of: "</database>",
                with:
                    "    <object type=\"EMPLOYEE\" id=\"bob\"><attribute name=\"name\" type=\"string\">Bob</attribute>"
                    + "</object>\n</database>")
        let once = try Self.readOnceLeavingOut(text)
        #expect(once.map(\.ref.key) == [103, 104, 102, 105])
        let missing = text.replacingOccurrences(of: "idrefs=\"z103 bob\"", with: "idrefs=\"z103 bob ann\"")
        let error = #expect(throws: GraftError.self) { _ = try Self.readOnceLeavingOut(missing) }
        #expect(error?.code == .malformedInput)
    }

    @Test func aRelationshipLeftOutNamingAnObjectOfAnotherEntityEarlierIsRefusedAtOnce() throws {
        // The flunky's department is the manager.
        let text = try Self.controlText().replacingOccurrences(
            of:
                "destination=\"DEPARTMENT\" idrefs=\"z102\"></relationship>\n        <relationship name=\"manager\" type=\"0/1\" destination=\"MANAGER\" idrefs=\"z103\"",
            with:
                "destination=\"DEPARTMENT\" idrefs=\"z103\"></relationship>\n        <relationship name=\"manager\" type=\"0/1\" destination=\"MANAGER\" idrefs=\"z103\""
        )
        #expect(text != (try Self.controlText()))
        let selection = RelationshipSelection(model: Support.company) { entity, index in
            Support.company.descriptions[entity].relationships[index].name != "department"
        }
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("store.xml")
        try Data(text.utf8).write(to: url)
        let reader = try XMLStoreReader(url: url, model: Support.company, readsOnceInAnyOrder: true)
        let error = #expect(throws: GraftError.self) {
            try reader.forEachSnapshotInAnyOrder(reading: selection) { _ in }
        }
        #expect(error?.code == .typeMismatch)
    }

    @Test(arguments: InvalidInputTests.cases)
    func errorsAreThoseOfTheTwoPassRead(_ expected: InvalidInputTests.Case) throws {
        let url = Self.folder.appendingPathComponent("Invalid").appendingPathComponent(expected.file)
        do {
            let reader = try XMLStoreReader(url: url, model: Support.company, readsOnceInAnyOrder: true)
            try reader.forEachSnapshotInAnyOrder { _ in }
            Issue.record("\(expected.file) was read without an error")
        } catch let error as GraftError {
            InvalidInputTests.check(error, is: expected, of: url)
        }
    }
}
