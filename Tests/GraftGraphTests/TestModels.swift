import Foundation
import GraftCore
import GraftModel
import Testing

@testable import GraftGraph

/// Models shared by the graph tests.
enum TestModels {
    /// The example Company model (`examples/Company`), version 1.
    static let company: Model = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("examples/Company/Company.xcdatamodeld/Company.xcdatamodel/contents")
        return try! XcdatamodelReader.read(contentsOf: url)
    }()

    /// Every relationship kind and delete rule, in one small model.
    ///
    /// - Person.passport ↔ Passport.holder: one-to-one, Cascade from the person.
    /// - Person.spouse ↔ itself: one-to-one, its own inverse.
    /// - Person.friends ↔ itself: many-to-many, its own inverse.
    /// - Playlist.songs ↔ Song.playlists: ordered many-to-many.
    /// - Album.tracks ↔ Song.album: ordered one-to-many, Cascade.
    /// - Person.notes ↔ Note.author: one-to-many, No Action.
    /// - Node.parent ↔ Node.children: one-to-many tree, Cascade down (cycles through `link`).
    static let kinds: Model = {
        let person = Entity(
            name: "Person",
            attributes: [Attribute(name: "name", type: .string, isOptional: false)],
            relationships: [
                Relationship(name: "passport", destination: "Passport", inverse: "holder", deleteRule: .cascade),
                Relationship(name: "spouse", destination: "Person", inverse: "spouse"),
                Relationship(name: "friends", destination: "Person", inverse: "friends", isToMany: true),
                Relationship(
                    name: "notes", destination: "Note", inverse: "author", isToMany: true, deleteRule: .noAction),
            ])
        let passport = Entity(
            name: "Passport", attributes: [Attribute(name: "number", type: .string)],
            relationships: [Relationship(name: "holder", destination: "Person", inverse: "passport")])
        let note = Entity(
            name: "Note", attributes: [Attribute(name: "text", type: .string)],
            relationships: [Relationship(name: "author", destination: "Person", inverse: "notes")])
        let playlist = Entity(
            name: "Playlist", attributes: [Attribute(name: "title", type: .string)],
            relationships: [
                Relationship(name: "songs", destination: "Song", inverse: "playlists", isToMany: true, isOrdered: true)
            ])
        let album = Entity(
            name: "Album", attributes: [Attribute(name: "title", type: .string)],
            relationships: [
                Relationship(
                    name: "tracks", destination: "Song", inverse: "album", isToMany: true, isOrdered: true,
                    deleteRule: .cascade)
            ])
        let song = Entity(
            name: "Song", attributes: [Attribute(name: "title", type: .string)],
            relationships: [
                Relationship(
                    name: "playlists", destination: "Playlist", inverse: "songs", isToMany: true, isOrdered: true),
                Relationship(name: "album", destination: "Album", inverse: "tracks"),
            ])
        let node = Entity(
            name: "Node", attributes: [Attribute(name: "label", type: .string)],
            relationships: [
                Relationship(name: "parent", destination: "Node", inverse: "children"),
                Relationship(
                    name: "children", destination: "Node", inverse: "parent", isToMany: true, deleteRule: .cascade),
                Relationship(name: "link", destination: "Node", inverse: "linkedFrom", deleteRule: .cascade),
                Relationship(name: "linkedFrom", destination: "Node", inverse: "link", isToMany: true),
            ])
        return try! Model(entities: [person, passport, note, playlist, album, song, node])
    }()
}

extension ManagedObject {
    /// Objects of a to-many relationship, for assertions.
    func related(_ key: String) -> [ManagedObject] {
        (try? relatedObjects(forKey: key).allObjects()) ?? []
    }

    func one(_ key: String) -> ManagedObject? {
        try? relatedObject(forKey: key)
    }

    func string(_ key: String) -> String? {
        value(forKey: key) as? String
    }
}

/// Inserts a department with `count` employees, each valid, so that saving succeeds.
@discardableResult
func makeDepartment(
    _ context: ObjectContext, name: String, employees count: Int, firstID: Int64 = 1
) throws
    -> ManagedObject
{
    let department = try context.insert("Department")
    try department.setValue(name, forKey: "name")
    for offset in 0..<count {
        let employee = try context.insert("Employee")
        try employee.setValue("\(name) \(offset)", forKey: "name")
        try employee.setValue(firstID + Int64(offset), forKey: "employeeID")
        try employee.setValue(Date(timeIntervalSinceReferenceDate: 700_000_000), forKey: "hireDate")
        try employee.setValue(department, forKey: "department")
    }
    return department
}
