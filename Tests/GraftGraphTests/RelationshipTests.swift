import Foundation
import GraftCore
import GraftModel
import Testing

@testable import GraftGraph

@Suite struct RelationshipTests {
    let context = ObjectContext(model: TestModels.kinds)

    @Test func oneToOneSetsBothSidesAndReleasesThePreviousPartner() throws {
        let ann = try context.insert("Person")
        let bob = try context.insert("Person")
        let first = try context.insert("Passport")
        try ann.setValue(first, forKey: "passport")
        #expect(first.one("holder") === ann)

        // Giving the passport to Bob takes it away from Ann.
        try first.setValue(bob, forKey: "holder")
        #expect(bob.one("passport") === first)
        #expect(ann.one("passport") == nil)

        // A new passport for Bob releases the old one.
        let second = try context.insert("Passport")
        try bob.setValue(second, forKey: "passport")
        #expect(first.one("holder") == nil)
        #expect(second.one("holder") === bob)
        try context.checkInvariants()
    }

    @Test func oneToOneThatIsItsOwnInverse() throws {
        let ann = try context.insert("Person")
        let bob = try context.insert("Person")
        let cid = try context.insert("Person")
        try ann.setValue(bob, forKey: "spouse")
        #expect(bob.one("spouse") === ann)
        try cid.setValue(bob, forKey: "spouse")
        #expect(bob.one("spouse") === cid)
        #expect(ann.one("spouse") == nil)
        try cid.setValue(nil, forKey: "spouse")
        #expect(bob.one("spouse") == nil)
        try context.checkInvariants()
    }

    @Test func oneToManyFromEitherSideAndMovingBetweenOwners() throws {
        let rock = try context.insert("Album")
        let jazz = try context.insert("Album")
        let song = try context.insert("Song")
        try rock.relatedObjects(forKey: "tracks").insert(song)
        #expect(song.one("album") === rock)

        // Setting the to-one moves the song from one album's to-many to the other's.
        try song.setValue(jazz, forKey: "album")
        #expect(rock.related("tracks").isEmpty)
        #expect(jazz.related("tracks") == [song])

        // Inserting into the other to-many moves it back.
        try rock.relatedObjects(forKey: "tracks").insert(song)
        #expect(jazz.related("tracks").isEmpty)
        #expect(song.one("album") === rock)

        try rock.relatedObjects(forKey: "tracks").remove(song)
        #expect(song.one("album") == nil)
        try context.checkInvariants()
    }

    @Test func manyToManyKeepsBothSides() throws {
        let ann = try context.insert("Person")
        let bob = try context.insert("Person")
        let cid = try context.insert("Person")
        try ann.relatedObjects(forKey: "friends").insert(bob)
        try cid.setValue([ann, bob], forKey: "friends")
        #expect(Set(ann.related("friends")) == [bob, cid])
        #expect(Set(bob.related("friends")) == [ann, cid])
        #expect(Set(cid.related("friends")) == [ann, bob])
        try bob.relatedObjects(forKey: "friends").removeAll()
        #expect(ann.related("friends") == [cid])
        #expect(cid.related("friends") == [ann])
        try context.checkInvariants()
    }

    @Test func orderedRelationshipsKeepOrderAndPositions() throws {
        let list = try context.insert("Playlist")
        let songs = try (0..<4).map { index -> ManagedObject in
            let song = try context.insert("Song")
            try song.setValue("s\(index)", forKey: "title")
            return song
        }
        let set = try list.relatedObjects(forKey: "songs")
        for song in songs { try set.insert(song) }
        #expect(list.related("songs").map { $0.string("title") } == ["s0", "s1", "s2", "s3"])
        try set.insert(songs[3], at: 0)  // a move
        #expect(list.related("songs").map { $0.string("title") } == ["s3", "s0", "s1", "s2"])
        try set.remove(songs[0])
        #expect(list.related("songs").map { $0.string("title") } == ["s3", "s1", "s2"])
        try list.setValue([songs[2], songs[0], songs[1]], forKey: "songs")
        #expect(list.related("songs").map { $0.string("title") } == ["s2", "s0", "s1"])
        #expect(songs[3].related("playlists").isEmpty)
        #expect(songs[0].related("playlists") == [list])
        try context.checkInvariants()
    }

    @Test func inheritedRelationshipsWorkOnSubentities() throws {
        let context = ObjectContext(model: TestModels.company)
        let boss = try context.insert("Manager")
        let worker = try context.insert("Flunky")
        let middle = try context.insert("Manager")
        try worker.setValue(middle, forKey: "manager")
        try middle.setValue(boss, forKey: "manager")  // a manager of managers
        #expect(boss.related("directReports") == [middle])
        #expect(middle.related("directReports") == [worker])
        #expect(try worker.value(forKeyPath: "manager.manager") as? ManagedObject === boss)
        try context.checkInvariants()
    }

    @Test func wrongValuesAreRefusedWithTheirKey() throws {
        let context = ObjectContext(model: TestModels.company)
        let employee = try context.insert("Employee")
        let department = try context.insert("Department")
        let error = try #require(throws: GraftError.self) { try employee.setValue(department, forKey: "manager") }
        #expect(error.code == .typeMismatch)
        #expect(error.description.contains("manager"))
        let typeError = try #require(throws: GraftError.self) { try employee.setValue("lots", forKey: "salary") }
        #expect(typeError.code == .typeMismatch)
        #expect(typeError.description.contains("salary"))
        let unknown = try #require(throws: GraftError.self) { try employee.setValue(1, forKey: "nosuch") }
        #expect(unknown.code == .notFound)
        #expect(throws: GraftError.self) { try context.insert("Nosuch") }
    }

    @Test func objectsFromAnotherContextAreRefused() throws {
        let other = ObjectContext(model: TestModels.kinds)
        let ann = try context.insert("Person")
        let stranger = try other.insert("Person")
        let error = try #require(throws: GraftError.self) { try ann.setValue(stranger, forKey: "spouse") }
        #expect(error.code == .invalidOperation)
    }

    @Test func numbersConvertToTheAttributesType() throws {
        let context = ObjectContext(model: TestModels.company)
        let employee = try context.insert("Employee")
        try employee.setValue(52000, forKey: "salary")
        #expect(employee.value(forKey: "salary") as? Decimal == Decimal(52000))
        try employee.setValue(0.1, forKey: "rating")
        #expect(employee.value(forKey: "rating") as? Double == Double(Float(0.1)))
        try employee.setValue(7.0, forKey: "yearsOfService")
        #expect(employee.value(forKey: "yearsOfService") as? Int64 == 7)
        #expect(throws: GraftError.self) { try employee.setValue(7.5, forKey: "yearsOfService") }
        // Defaults are applied on insert.
        #expect(employee.value(forKey: "isRemote") as? Bool == false)
        #expect(employee.value(forKey: "employeeID") as? Int64 == 0)
    }
}
