import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// Small stores made for each rule of Core Data's layout that real stores showed Graft: join tables named
/// by the side met first, reflexive join tables, to-manys without inverse, join tables found by their
/// columns. The corpus tests check the same rules on Apple's files.
@Suite final class SQLiteLayoutTests {
    let folder: URL

    init() throws { folder = try scratchFolder() }
    deinit { try? FileManager.default.removeItem(at: folder) }

    /// An album model shaped like Photos': `GenericAlbum` with the subentity `Album`; `AlbumList.albums`
    /// (ordered) ↔ `GenericAlbum.albumLists`; `Person.mergeCandidates` its own inverse;
    /// `Asset.contributors` a to-many without inverse; `Album.assets` (ordered) ↔ `Asset.albums`.
    static let albums: Model = try! Model(entities: [
        Entity(
            name: "AlbumList", attributes: [Attribute(name: "title", type: .string)],
            relationships: [
                Relationship(
                    name: "albums", destination: "GenericAlbum", inverse: "albumLists", isToMany: true, isOrdered: true)
            ]),
        Entity(
            name: "GenericAlbum", attributes: [Attribute(name: "name", type: .string)],
            relationships: [
                Relationship(name: "albumLists", destination: "AlbumList", inverse: "albums", isToMany: true)
            ]),
        Entity(
            name: "Album", parent: "GenericAlbum",
            relationships: [
                Relationship(name: "assets", destination: "Asset", inverse: "albums", isToMany: true, isOrdered: true)
            ]),
        Entity(
            name: "Asset", attributes: [Attribute(name: "fileName", type: .string)],
            relationships: [
                Relationship(name: "albums", destination: "Album", inverse: "assets", isToMany: true),
                Relationship(name: "contributors", destination: "Contributor", isToMany: true),
            ]),
        Entity(name: "Contributor", attributes: [Attribute(name: "name", type: .string)]),
        Entity(
            name: "Person", attributes: [Attribute(name: "name", type: .string)],
            relationships: [
                Relationship(name: "mergeCandidates", destination: "Person", inverse: "mergeCandidates", isToMany: true)
            ]),
    ])

    @Test func joinTablesAreNamedByTheSideCoreDataMeetsFirst() throws {
        let schema = SQLiteSchema(model: Self.albums)
        let numbers = Dictionary(
            uniqueKeysWithValues: Self.albums.descriptions.map { ($0.name, schema.entityNumbers[$0.index]) })
        // Core Data's numbers: AlbumList 1, Asset 2, Contributor 3, GenericAlbum 4, Album 5, Person 6.
        #expect(numbers == ["AlbumList": 1, "Asset": 2, "Contributor": 3, "GenericAlbum": 4, "Album": 5, "Person": 6])
        let joins = Dictionary(uniqueKeysWithValues: schema.joinTables.map { ($0.name, $0) })
        // Album (visited first, by name) inherits albumLists from GenericAlbum: the table takes GenericAlbum's
        // number, though AlbumList's is lower (Photos 10.15: Z_25ALBUMLISTS, not Z_3ALBUMS).
        let lists = try #require(joins["Z_4ALBUMLISTS"])
        #expect(lists.sourceColumn == "Z_4ALBUMS")
        #expect(lists.destinationColumn == "Z_1ALBUMLISTS")
        // AlbumList.albums is ordered: the albums' positions, in the column named after theirs.
        #expect(lists.destinationOrderColumn == "Z_FOK_4ALBUMS")
        #expect(lists.sourceOrderColumn == nil)
        // Album.assets (ordered): Album is met before Asset.
        let assets = try #require(joins["Z_5ASSETS"])
        #expect(
            [assets.sourceColumn, assets.destinationColumn, assets.sourceOrderColumn] == [
                "Z_5ALBUMS", "Z_2ASSETS", "Z_FOK_2ASSETS",
            ])
        // A relationship that is its own inverse pairs its column with REFLEXIVE.
        let merge = try #require(joins["Z_6MERGECANDIDATES"])
        #expect([merge.sourceColumn, merge.destinationColumn] == ["Z_6MERGECANDIDATES", "REFLEXIVE"])
        // A to-many without inverse: a hidden to-one in the destination's table, indexed.
        let contributor = try #require(schema.tables.first { $0.name == "ZCONTRIBUTOR" })
        #expect(contributor.columns.map(\.name).contains("Z2CONTRIBUTORS"))
        #expect(schema.joinTables.count == 3)
        #expect(schema.indexStatements.contains { $0.contains("ZCONTRIBUTOR_Z2CONTRIBUTORS_INDEX") })
    }

    /// Objects of every kind, related every way.
    func documentSnapshots() -> [Snapshot] {
        let model = Self.albums
        func snapshot(
            _ entity: String, _ key: Int64, _ values: [String: Value] = [:], _ related: [String: [ObjectRef]] = [:]
        )
            -> Snapshot
        {
            let description = model.entity(named: entity)!
            var snapshot = Snapshot(entity: description, key: key)
            for (name, value) in values { snapshot.attributes[description.attributeIndexByName[name]!] = value }
            for (name, refs) in related {
                let index = description.relationshipIndexByName[name]!
                snapshot.relationships[index] =
                    description.relationships[index].isToMany ? .toMany(refs) : .toOne(refs.first)
            }
            return snapshot
        }
        func ref(_ entity: String, _ key: Int64) -> ObjectRef {
            ObjectRef(entity: model.entity(named: entity)!.index, key: key)
        }
        return [
            snapshot("AlbumList", 1, ["title": .string("Top")], ["albums": [ref("Album", 2), ref("GenericAlbum", 1)]]),
            snapshot("GenericAlbum", 1, ["name": .string("All")], ["albumLists": [ref("AlbumList", 1)]]),
            snapshot(
                "Album", 2, ["name": .string("Trip")],
                ["albumLists": [ref("AlbumList", 1)], "assets": [ref("Asset", 2), ref("Asset", 1)]]),
            snapshot(
                "Asset", 1, ["fileName": .string("a.jpg")],
                ["albums": [ref("Album", 2)], "contributors": [ref("Contributor", 1), ref("Contributor", 2)]]),
            snapshot("Asset", 2, ["fileName": .string("b.jpg")], ["albums": [ref("Album", 2)]]),
            snapshot("Contributor", 1, ["name": .string("Ann")]),
            snapshot("Contributor", 2, ["name": .string("Bo")]),
            snapshot("Person", 1, ["name": .string("P1")], ["mergeCandidates": [ref("Person", 2), ref("Person", 3)]]),
            snapshot("Person", 2, ["name": .string("P2")], ["mergeCandidates": [ref("Person", 1)]]),
            snapshot("Person", 3, ["name": .string("P3")], ["mergeCandidates": [ref("Person", 1)]]),
        ]
    }

    func write(_ snapshots: [Snapshot], to url: URL) throws -> [String] {
        let metadata = StoreMetadata.make(for: Self.albums, storeType: .sqlite)
        let writer = try SQLiteStoreWriter(url: url, model: Self.albums, metadata: metadata, overwrite: false)
        for snapshot in snapshots { try writer.write(snapshot) }
        try writer.finish()
        return writer.warnings
    }

    func expectSame(_ written: [Snapshot], _ url: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let read = try allSnapshots(SQLiteStoreReader(url: url, model: nil))
        let expected = Dictionary(uniqueKeysWithValues: written.map { ($0.ref, $0) })
        let diff = differences(
            normalized(read, model: Self.albums), normalized(expected, model: Self.albums), model: Self.albums)
        #expect(diff.isEmpty, "\(diff)", sourceLocation: sourceLocation)
    }

    /// A to-many kept in its to-one inverse's column is the one relationship the writer does not read:
    /// ordered, its order keys come from it, and every other kind needs rows written from its side.
    @Test func theWriterReadsEveryRelationshipButAToManyKeptInItsInversesColumn() throws {
        let model = try Model(entities: [
            Entity(
                name: "Team", attributes: [Attribute(name: "name", type: .string)],
                relationships: [
                    Relationship(name: "players", destination: "Player", inverse: "team", isToMany: true),
                    Relationship(
                        name: "lineup", destination: "Player", inverse: "lineupOf", isToMany: true, isOrdered: true),
                ]),
            Entity(
                name: "Player", attributes: [Attribute(name: "name", type: .string)],
                relationships: [
                    Relationship(name: "team", destination: "Team", inverse: "players"),
                    Relationship(name: "lineupOf", destination: "Team", inverse: "lineup"),
                ]),
        ])
        let url = folder.appendingPathComponent("teams.sqlite")
        let writer = try SQLiteStoreWriter(
            url: url, model: model, metadata: StoreMetadata.make(for: model, storeType: .sqlite), overwrite: false)
        defer { writer.cancel() }
        let read = writer.relationshipsRead
        let team = model.entity(named: "Team")!
        let player = model.entity(named: "Player")!
        #expect(!read.includes(entity: team.index, relationship: team.relationshipIndexByName["players"]!))
        #expect(read.includes(entity: team.index, relationship: team.relationshipIndexByName["lineup"]!))
        #expect(read.includes(entity: player.index, relationship: player.relationshipIndexByName["team"]!))
        #expect(read.includes(entity: player.index, relationship: player.relationshipIndexByName["lineupOf"]!))
        // The albums' to-manys are each written from their side.
        let albums = try SQLiteStoreWriter(
            url: folder.appendingPathComponent("albums-read.sqlite"), model: Self.albums,
            metadata: StoreMetadata.make(for: Self.albums, storeType: .sqlite), overwrite: false)
        defer { albums.cancel() }
        #expect(albums.relationshipsRead.isAll)
    }

    @Test func everyKindOfToManyRoundTripsInCoreDatasLayout() throws {
        let url = folder.appendingPathComponent("albums.sqlite")
        let snapshots = documentSnapshots()
        #expect(try write(snapshots, to: url).isEmpty)
        try expectSame(snapshots, url)
        let database = try SQLiteDatabase.openForReading(url)
        func rows(_ sql: String) throws -> [[Int64]] {
            let statement = try database.prepare(sql)
            var result: [[Int64]] = []
            while try statement.step() {
                result.append((0..<statement.columnCount).map { statement.int64($0) })
            }
            return result
        }
        // A reflexive pair is one row, the lower key first.
        #expect(
            try rows("SELECT Z_6MERGECANDIDATES, REFLEXIVE FROM Z_6MERGECANDIDATES ORDER BY 1, 2") == [
                [1, 2], [1, 3],
            ])
        // The owner of each contributor is in the contributor's row.
        #expect(try rows("SELECT Z_PK, Z2CONTRIBUTORS FROM ZCONTRIBUTOR ORDER BY Z_PK") == [[1, 1], [2, 1]])
        // Positions in the album's ordered assets: b.jpg first.
        #expect(
            try rows("SELECT Z_2ASSETS, Z_FOK_2ASSETS FROM Z_5ASSETS ORDER BY Z_FOK_2ASSETS") == [
                [2, 2048], [1, 3072],
            ])
    }

    @Test func aSecondOwnerOfAnObjectWithoutInverseIsKeptAndSaidSo() throws {
        let url = folder.appendingPathComponent("owners.sqlite")
        var snapshots = documentSnapshots()
        let asset = Self.albums.entity(named: "Asset")!
        let contributors = asset.relationshipIndexByName["contributors"]!
        // b.jpg shares Ann with a.jpg: Core Data's layout has room for one owner.
        snapshots[4].relationships[contributors] = .toMany([
            ObjectRef(entity: Self.albums.entity(named: "Contributor")!.index, key: 1)
        ])
        let warnings = try write(snapshots, to: url)
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("Asset.contributors has no inverse") == true)
        #expect(warnings.first?.contains("Z_2CONTRIBUTORS") == true)
        try expectSame(snapshots, url)
    }

    /// A to-many without inverse that subentities inherit keeps one owner column for the whole tree: an
    /// object owned by a `Shelf` and by a `Cabinet` (a subentity) has a second owner, kept and said so.
    @Test func aSecondOwnerFromASubentityIsKeptAndSaidSo() throws {
        let model = try Model(entities: [
            Entity(
                name: "Shelf", attributes: [Attribute(name: "label", type: .string)],
                relationships: [Relationship(name: "books", destination: "Book", isToMany: true)]),
            Entity(name: "Cabinet", parent: "Shelf"),
            Entity(name: "Book", attributes: [Attribute(name: "title", type: .string)]),
        ])
        let shelf = model.entity(named: "Shelf")!, cabinet = model.entity(named: "Cabinet")!
        let book = model.entity(named: "Book")!
        let books = shelf.relationshipIndexByName["books"]!
        var first = Snapshot(entity: shelf, key: 1)
        first.relationships[books] = .toMany([ObjectRef(entity: book.index, key: 1)])
        let cabinetBooks = cabinet.relationshipIndexByName["books"]!
        var second = Snapshot(entity: cabinet, key: 2)
        second.relationships[cabinetBooks] = .toMany([
            ObjectRef(entity: book.index, key: 1), ObjectRef(entity: book.index, key: 2),
        ])
        let snapshots = [first, second, Snapshot(entity: book, key: 1), Snapshot(entity: book, key: 2)]
        let url = folder.appendingPathComponent("shelves.sqlite")
        let writer = try SQLiteStoreWriter(
            url: url, model: model, metadata: StoreMetadata.make(for: model, storeType: .sqlite), overwrite: false)
        for snapshot in snapshots { try writer.write(snapshot) }
        try writer.finish()
        #expect(writer.warnings.count == 1)
        #expect(writer.warnings.first?.contains("Shelf.books has no inverse") == true)
        let read = try allSnapshots(SQLiteStoreReader(url: url, model: model))
        // Unordered: compared as sets.
        #expect(read[first.ref].map { Set($0.relationships[books].refs) } == [ObjectRef(entity: book.index, key: 1)])
        #expect(
            read[second.ref].map { Set($0.relationships[cabinetBooks].refs) }
                == [ObjectRef(entity: book.index, key: 1), ObjectRef(entity: book.index, key: 2)])
    }

    @Test func storesGraftWroteWithAJoinTableForAToManyWithoutInverseStillRead() throws {
        let url = folder.appendingPathComponent("legacy.sqlite")
        let snapshots = documentSnapshots()
        _ = try write(snapshots, to: url)
        // The layout Graft wrote before: a join table, and no column in the destination's table.
        let database = try SQLiteDatabase.openForWriting(url)
        try database.execute(
            "CREATE TABLE Z_2CONTRIBUTORS (Z_2INVERSE_CONTRIBUTORS INTEGER, Z_3CONTRIBUTORS INTEGER, PRIMARY KEY (Z_2INVERSE_CONTRIBUTORS, Z_3CONTRIBUTORS))"
        )
        try database.execute("INSERT INTO Z_2CONTRIBUTORS SELECT Z2CONTRIBUTORS, Z_PK FROM ZCONTRIBUTOR")
        try database.execute("DROP INDEX ZCONTRIBUTOR_Z2CONTRIBUTORS_INDEX")
        try database.execute("ALTER TABLE ZCONTRIBUTOR DROP COLUMN Z2CONTRIBUTORS")
        database.close()
        try expectSame(snapshots, url)
    }

    @Test func aJoinTableUnderAnotherNameIsFoundByItsColumns() throws {
        let url = folder.appendingPathComponent("renamed.sqlite")
        let snapshots = documentSnapshots()
        _ = try write(snapshots, to: url)
        // A store migrated from an older model keeps an older table name; older stores keep both
        // directions of a reflexive pair.
        let database = try SQLiteDatabase.openForWriting(url)
        try database.execute("ALTER TABLE Z_4ALBUMLISTS RENAME TO Z_9OLDNAME")
        try database.execute(
            "INSERT INTO Z_6MERGECANDIDATES SELECT REFLEXIVE, Z_6MERGECANDIDATES FROM Z_6MERGECANDIDATES")
        database.close()
        let reader = try SQLiteStoreReader(url: url, model: nil)
        #expect(
            reader.warnings.contains {
                $0.contains("AlbumList.albums is Z_9OLDNAME, found by its columns")
                    || $0.contains("GenericAlbum.albumLists is Z_9OLDNAME")
            })
        try expectSame(snapshots, url)
        // Without the table, the error says which columns were looked for.
        let broken = try SQLiteDatabase.openForWriting(url)
        try broken.execute("DROP TABLE Z_9OLDNAME")
        broken.close()
        let error = try #require(throws: GraftError.self) { try SQLiteStoreReader(url: url, model: nil) }
        #expect(error.code == .modelMismatch)
        #expect(error.message.contains("no table has columns Z_4ALBUMS and Z_1ALBUMLISTS"))
    }

    @Test func savingThroughAContextKeepsEachLayout() throws {
        let url = folder.appendingPathComponent("edit.sqlite")
        let snapshots = documentSnapshots()
        _ = try write(snapshots, to: url)
        let context = ObjectContext(store: try SQLiteStore.open(url, model: nil))
        var request = FetchRequest(entityName: "Asset")
        request.predicate = try GraftPredicate(format: "fileName == 'b.jpg'")
        let b = try #require(try context.fetch(request).first)
        var people = FetchRequest(entityName: "Contributor")
        people.predicate = try GraftPredicate(format: "name == 'Bo'")
        let bo = try #require(try context.fetch(people).first)
        // b.jpg gets Bo too (a.jpg keeps him: without an inverse, nothing takes him from a.jpg, and the
        // store keeps the second owner in Graft's join table); P3 is no longer a merge candidate of P1.
        try b.setValue([bo], forKey: "contributors")
        var persons = FetchRequest(entityName: "Person")
        persons.predicate = try GraftPredicate(format: "name == 'P3'")
        let p3 = try #require(try context.fetch(persons).first)
        try p3.setValue([ManagedObject](), forKey: "mergeCandidates")
        try context.save()
        var expected = snapshots
        let asset = Self.albums.entity(named: "Asset")!
        let person = Self.albums.entity(named: "Person")!
        let contributor = Self.albums.entity(named: "Contributor")!.index
        expected[4].relationships[asset.relationshipIndexByName["contributors"]!] = .toMany([
            ObjectRef(entity: contributor, key: 2)
        ])
        expected[7].relationships[person.relationshipIndexByName["mergeCandidates"]!] = .toMany([
            ObjectRef(entity: person.index, key: 2)
        ])
        expected[9].relationships[person.relationshipIndexByName["mergeCandidates"]!] = .toMany([])
        try expectSame(expected, url)
        #expect(try SQLiteDatabase.openForReading(url).hasTable("Z_2CONTRIBUTORS"))
    }
}
