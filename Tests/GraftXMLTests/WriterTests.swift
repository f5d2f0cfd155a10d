import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import GraftXML
import Testing

/// The writer's layout, its id scheme, and that it leaves nothing behind when it does not finish.
@Suite struct WriterTests {
    /// A small model: notes with tags (ordered, many-to-many) and a parent note.
    static let model: Model = {
        let note = Entity(
            name: "Note",
            attributes: [
                Attribute(name: "title", type: .string), Attribute(name: "created", type: .date),
                Attribute(name: "body", type: .binary), Attribute(name: "count", type: .integer32),
                Attribute(name: "done", type: .boolean), Attribute(name: "score", type: .double),
                Attribute(name: "scratch", type: .string, isTransient: true),
            ],
            relationships: [
                Relationship(name: "tags", destination: "Tag", inverse: "notes", isToMany: true, isOrdered: true),
                Relationship(name: "parent", destination: "Note"),
            ])
        let tag = Entity(
            name: "Tag", attributes: [Attribute(name: "title", type: .string)],
            relationships: [Relationship(name: "notes", destination: "Note", inverse: "tags", isToMany: true)])
        return try! Model(entities: [note, tag])
    }()

    static var note: EntityDescription { model.entity(named: "Note")! }
    static var tag: EntityDescription { model.entity(named: "Tag")! }

    static let metadata = StoreMetadata(
        identifier: "00000000-1111-2222-3333-444444444444",
        values: [
            "Zeta": .array([]), "NSPersistenceFrameworkVersion": .integer(1344), "NSStoreType": .string("XML"),
            "NSStoreUUID": .string("00000000-1111-2222-3333-444444444444"),
        ])

    static func snapshots() -> [Snapshot] {
        var first = Snapshot(entity: note, key: 1)
        first[attribute: "title", in: note] = "R&D <notes>"
        first[attribute: "created", in: note] = .date(Date(timeIntervalSinceReferenceDate: 325_145_972.144_198))
        first[attribute: "body", in: note] = .data(Data((0..<100).map { UInt8($0) }))
        first[attribute: "count", in: note] = -7
        first[attribute: "done", in: note] = true
        first[attribute: "score", in: note] = 0.1
        first[relationship: "tags", in: note] = .toMany([ObjectRef(entity: tag.index, key: 1)])
        var second = Snapshot(entity: note, key: 2)
        second[attribute: "title", in: note] = ""
        second[relationship: "parent", in: note] = .toOne(ObjectRef(entity: note.index, key: 1))
        var label = Snapshot(entity: tag, key: 1)
        label[attribute: "title", in: tag] = "a\u{1}b"
        label[relationship: "notes", in: tag] = .toMany([
            ObjectRef(entity: note.index, key: 2), ObjectRef(entity: note.index, key: 1),
        ])
        return [first, second, label]
    }

    @Test func writesCoreDataLayout() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("Notes.xml")
        try Support.write(Self.snapshots(), model: Self.model, metadata: Self.metadata, to: url)
        let body = Data((0..<100).map { UInt8($0) }).base64EncodedString()
        let expected = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes" ?>
            <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

            <database>
                <databaseInfo>
                    <version>134481920</version>
                    <UUID>00000000-1111-2222-3333-444444444444</UUID>
                    <nextObjectID>101</nextObjectID>
                    <metadata>
                        <plist version="1.0">
                            <dict>
                                <key>NSPersistenceFrameworkVersion</key>
                                <integer>1344</integer>
                                <key>Zeta</key>
                                <array></array>
                            </dict>
                        </plist>
                    </metadata>
                </databaseInfo>
                <object type="NOTE" id="z1">
                    <attribute name="title" type="string">R&amp;D &lt;notes&gt;</attribute>
                    <attribute name="created" type="date">325145972.14419800043106079102</attribute>
                    <attribute name="body" type="binary">\(body.prefix(76))
            \(body.dropFirst(76))
            </attribute>
                    <attribute name="count" type="int32">-7</attribute>
                    <attribute name="done" type="bool">1</attribute>
                    <attribute name="score" type="double">0.1</attribute>
                    <relationship name="tags" type="0/0" destination="TAG" idrefs="z1-TAG"></relationship>
                    <relationship name="parent" type="0/1" destination="NOTE"></relationship>
                </object>
                <object type="NOTE" id="z2">
                    <attribute name="title" type="string"></attribute>
                    <relationship name="tags" type="0/0" destination="TAG"></relationship>
                    <relationship name="parent" type="0/1" destination="NOTE" idrefs="z1"></relationship>
                </object>
                <object type="TAG" id="z1-TAG">
                    <attribute name="title" type="string-base64">YQFi
            </attribute>
                    <relationship name="notes" type="0/0" destination="NOTE" idrefs="z2 z1"></relationship>
                </object>
            </database>

            """
        let written = try String(contentsOf: url, encoding: .utf8)
        #expect(written == expected)
        if written != expected {
            for (line, (a, b)) in zip(written.split(separator: "\n"), expected.split(separator: "\n")).enumerated()
            where a != b {
                Issue.record("line \(line + 1):\n  wrote    \(a)\n  expected \(b)")
                break
            }
        }
        // And it reads back.
        let reader = try XMLStoreReader(url: url, model: Self.model)
        #expect(try Support.snapshots(reader) == Self.snapshots())
        #expect(reader.metadata == Self.metadata)
    }

    @Test func anEmptyDocumentRoundTrips() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("empty.xml")
        try Support.write([], model: Self.model, metadata: Self.metadata, to: url)
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.hasSuffix("    </databaseInfo>\n</database>\n"))
        #expect(text.contains("<nextObjectID>101</nextObjectID>\n"))
        let reader = try XMLStoreReader(url: url, model: Self.model)
        #expect(reader.objectCount == 0)
        #expect(try Support.snapshots(reader).isEmpty)
        #expect(reader.metadata == Self.metadata)
    }

    @Test func nextObjectIDIsTheLargestKeyAndAtLeast101() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("ids.xml")
        var snapshots = Self.snapshots()
        snapshots[1].ref.key = 4_000
        snapshots[0][relationship: "parent", in: Self.note] = .toOne(ObjectRef(entity: Self.note.index, key: 4_000))
        snapshots[2][relationship: "notes", in: Self.tag] = .toMany([])
        try Support.write(snapshots, model: Self.model, metadata: Self.metadata, to: url)
        let reader = try XMLStoreReader(url: url, model: Self.model)
        #expect(reader.nextObjectID == 4_000)
        #expect(try Support.snapshots(reader) == snapshots)
    }

    @Test func aLargeDocumentKeepsNextObjectIDCorrect() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("large.xml")
        let count = 20_000
        let snapshots = (1...count).map { key -> Snapshot in
            var snapshot = Snapshot(entity: Self.tag, key: Int64(key))
            snapshot[attribute: "title", in: Self.tag] = .string("tag number \(key) with some text to make it longer")
            return snapshot
        }
        try Support.write(snapshots, model: Self.model, metadata: Self.metadata, to: url)
        #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as! Int > 1 << 20)
        let reader = try XMLStoreReader(url: url, model: Self.model)
        #expect(reader.nextObjectID == Int64(count))
        #expect(try Support.snapshots(reader) == snapshots)
        if let xmllint = Support.xmllint {
            #expect(try Support.run(xmllint, ["--noout", "--nonet", url.path]).status == 0)
        }
    }

    @Test func refusesToOverwriteUnlessAsked() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("existing.xml")
        try Data("keep me".utf8).write(to: url)
        #expect {
            _ = try XMLStoreWriter(url: url, model: Self.model, metadata: Self.metadata, overwrite: false)
        } throws: { ($0 as? GraftError)?.code == .alreadyExists }
        #expect(Support.contents(of: folder) == ["existing.xml"])
        #expect(try Data(contentsOf: url) == Data("keep me".utf8))

        var writer = try XMLStoreWriter(url: url, model: Self.model, metadata: Self.metadata, overwrite: true)
        for snapshot in Self.snapshots() { try writer.write(snapshot) }
        // Nothing is visible at the destination before finish().
        #expect(try Data(contentsOf: url) == Data("keep me".utf8))
        #expect(FileManager.default.fileExists(atPath: writer.temporaryURL.path))
        try writer.finish()
        #expect(Support.contents(of: folder) == ["existing.xml"])
        #expect(try Support.snapshots(XMLStoreReader(url: url, model: Self.model)) == Self.snapshots())
    }

    @Test func refusesWhenTheDestinationAppearsBeforeFinishing() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("race.xml")
        var writer = try XMLStoreWriter(url: url, model: Self.model, metadata: Self.metadata, overwrite: false)
        try Data("someone else".utf8).write(to: url)
        #expect { try writer.finish() } throws: { ($0 as? GraftError)?.code == .alreadyExists }
        #expect(Support.contents(of: folder) == ["race.xml"])
        #expect(try Data(contentsOf: url) == Data("someone else".utf8))
    }

    @Test func cancelLeavesNothing() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        var writer = try XMLStoreWriter(
            url: folder.appendingPathComponent("cancelled.xml"), model: Self.model, metadata: Self.metadata,
            overwrite: false)
        try writer.write(Self.snapshots()[0])
        #expect(Support.contents(of: folder).count == 1)  // the temporary file
        writer.cancel()
        #expect(Support.contents(of: folder).isEmpty)
        #expect { try writer.finish() } throws: { ($0 as? GraftError)?.code == .invalidOperation }
    }

    @Test func aDroppedWriterLeavesNothing() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        do {
            var writer = try XMLStoreWriter(
                url: folder.appendingPathComponent("dropped.xml"), model: Self.model, metadata: Self.metadata,
                overwrite: false)
            try writer.write(Self.snapshots()[0])
        }
        #expect(Support.contents(of: folder).isEmpty)
    }

    /// Snapshots a writer must refuse, and the code it refuses them with.
    static let badSnapshots: [(String, Snapshot, GraftError.Code)] = {
        var wrongType = Snapshot(entity: note, key: 9)
        wrongType[attribute: "count", in: note] = "seven"
        var tooLarge = Snapshot(entity: note, key: 9)
        tooLarge[attribute: "count", in: note] = .integer(Int64(Int32.max) + 1)
        var unloaded = Snapshot(entity: note, key: 9)
        unloaded[relationship: "tags", in: note] = .unloaded
        var wrongKind = Snapshot(entity: note, key: 9)
        wrongKind[relationship: "parent", in: note] = .toOne(ObjectRef(entity: tag.index, key: 1))
        var wrongShape = Snapshot(entity: note, key: 9)
        wrongShape.attributes.removeLast()
        return [
            ("a string in an integer attribute", wrongType, .typeMismatch),
            ("an Integer 32 out of range", tooLarge, .typeMismatch),
            ("an unloaded to-many", unloaded, .invalidOperation),
            ("a reference to the wrong entity", wrongKind, .typeMismatch),
            ("a snapshot that does not fit its entity", wrongShape, .malformedInput),
        ]
    }()

    @Test(arguments: 0..<5)
    func aFailedWriteLeavesNothing(case index: Int) throws {
        let (what, snapshot, code) = Self.badSnapshots[index]
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("failed.xml")
        var writer = try XMLStoreWriter(url: url, model: Self.model, metadata: Self.metadata, overwrite: false)
        try writer.write(Self.snapshots()[0])
        do {
            try writer.write(snapshot)
            Issue.record("\(what) was written")
        } catch let error as GraftError {
            #expect(error.code == code, "\(what): \(error)")
            #expect(error.context.first == .file(url.relativePath), "\(what): \(error)")
            #expect(error.context.contains(.entity("Note")), "\(what): \(error)")
        }
        #expect(Support.contents(of: folder).isEmpty)
        #expect { try writer.write(Self.snapshots()[1]) } throws: { ($0 as? GraftError)?.code == .invalidOperation }
        #expect { try writer.finish() } throws: { ($0 as? GraftError)?.code == .invalidOperation }
        #expect(Support.contents(of: folder).isEmpty)
    }

    @Test func refusesAnObjectWrittenTwice() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        var writer = try XMLStoreWriter(
            url: folder.appendingPathComponent("twice.xml"), model: Self.model, metadata: Self.metadata,
            overwrite: false)
        try writer.write(Self.snapshots()[0])
        #expect { try writer.write(Self.snapshots()[0]) } throws: {
            ($0 as? GraftError)?.code == .malformedInput && "\($0)".contains("written twice")
        }
        #expect(Support.contents(of: folder).isEmpty)
    }

    @Test func refusesADocumentThatRefersToObjectsItDoesNotHold() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        var writer = try XMLStoreWriter(
            url: folder.appendingPathComponent("dangling.xml"), model: Self.model, metadata: Self.metadata,
            overwrite: false)
        try writer.write(Self.snapshots()[0])  // refers to Tag 1, never written
        #expect { try writer.finish() } throws: {
            ($0 as? GraftError)?.code == .malformedInput && "\($0)".contains("Tag 1")
        }
        #expect(Support.contents(of: folder).isEmpty)
    }

    @Test func idsAreUniqueAcrossInheritanceTrees() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("ids.xml")
        // Tags first this time: the Tag tree claims key 1, the Note tree gets the suffix.
        let snapshots = Array(Self.snapshots().reversed())
        try Support.write(snapshots, model: Self.model, metadata: Self.metadata, to: url)
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains("<object type=\"TAG\" id=\"z1\">"))
        #expect(text.contains("<object type=\"NOTE\" id=\"z1-NOTE\">"))
        let ids = try NSRegularExpression(pattern: " id=\"([^\"]+)\"").matches(
            in: text, range: NSRange(text.startIndex..., in: text)
        )
        .map { String(text[Range($0.range(at: 1), in: text)!]) }
        #expect(Set(ids).count == ids.count)
        #expect(try Support.snapshots(XMLStoreReader(url: url, model: Self.model)) == snapshots)
    }

    @Test func namesThatCollideInCapitalsAreWrittenAsTheyAre() throws {
        let model = try Model(entities: [
            Entity(
                name: "Item",
                attributes: [Attribute(name: "size", type: .integer16), Attribute(name: "Size", type: .string)]),
            Entity(name: "ITEM", attributes: [Attribute(name: "label", type: .string)]),
        ])
        let item = model.entity(named: "Item")!
        let upper = model.entity(named: "ITEM")!
        var first = Snapshot(entity: item, key: 1)
        first[attribute: "size", in: item] = 3
        first[attribute: "Size", in: item] = "large"
        var second = Snapshot(entity: upper, key: 2)
        second[attribute: "label", in: upper] = "x"
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("names.xml")
        try Support.write(
            [first, second], model: model, metadata: StoreMetadata.make(for: model, storeType: .xml), to: url)
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains("<object type=\"Item\" id=\"z1\">"))
        #expect(text.contains("<attribute name=\"Size\" type=\"string\">large</attribute>"))
        #expect(text.contains("<object type=\"ITEM\" id=\"z2\">"))
        #expect(try Support.snapshots(XMLStoreReader(url: url, model: model)) == [first, second])
    }
}
