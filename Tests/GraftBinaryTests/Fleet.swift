import Foundation
import GraftGraph
import GraftModel

/// A small model with every kind of property that decides the property order: stored and transient
/// attributes, stored and transient relationships (to-one, to-many, ordered to-many), a fetched
/// property, and inheritance — a subentity with relationships (Car) and one without (Sticker, whose
/// own attribute sorts before the inherited one).
enum Fleet {
    /// The model, its properties declared in the given order (forwards or backwards).
    static func make(reversed: Bool = false, transient: Bool = true) -> Model {
        func ordered<T>(_ items: [T]) -> [T] { reversed ? items.reversed() : items }
        var vehicleAttributes = [
            Attribute(name: "wheels", type: .integer16), Attribute(name: "name", type: .string),
            Attribute(name: "Serial", type: .string),
        ]
        var vehicleRelationships = [
            Relationship(name: "owner", destination: "Person", inverse: "vehicles"),
            Relationship(
                name: "previousOwners", destination: "Person", inverse: "formerVehicles", isToMany: true,
                isOrdered: true),
            Relationship(name: "depots", destination: "Depot", inverse: "vehicles", isToMany: true),
        ]
        var personRelationships = [
            Relationship(name: "vehicles", destination: "Vehicle", inverse: "owner", isToMany: true),
            Relationship(name: "formerVehicles", destination: "Vehicle", inverse: "previousOwners", isToMany: true),
        ]
        if transient {
            vehicleAttributes.append(Attribute(name: "cache", type: .string, isTransient: true))
            vehicleRelationships.append(
                Relationship(name: "watcher", destination: "Person", inverse: "watched", isTransient: true))
            personRelationships.append(
                Relationship(
                    name: "watched", destination: "Vehicle", inverse: "watcher", isToMany: true, isTransient: true))
        }
        let fetched =
            transient
            ? [FetchedProperty(name: "namesakes", entity: "Vehicle", predicate: "name == $FETCH_SOURCE.name")] : []
        do {
            return try Model(
                entities: ordered([
                    Entity(
                        name: "Vehicle", isAbstract: true, attributes: ordered(vehicleAttributes),
                        relationships: ordered(vehicleRelationships), fetchedProperties: fetched),
                    Entity(
                        name: "Car", parent: "Vehicle",
                        attributes: ordered([
                            Attribute(name: "model", type: .string), Attribute(name: "colour", type: .string),
                        ]),
                        relationships: [Relationship(name: "garage", destination: "Depot", inverse: "parked")]),
                    Entity(
                        name: "Person", attributes: [Attribute(name: "name", type: .string)],
                        relationships: ordered(personRelationships)),
                    Entity(
                        name: "Depot", attributes: [Attribute(name: "city", type: .string)],
                        relationships: ordered([
                            Relationship(name: "vehicles", destination: "Vehicle", inverse: "depots", isToMany: true),
                            Relationship(name: "parked", destination: "Car", inverse: "garage", isToMany: true),
                        ])),
                    Entity(name: "Label", attributes: [Attribute(name: "text", type: .string)]),
                    Entity(name: "Sticker", parent: "Label", attributes: [Attribute(name: "colour", type: .string)]),
                ]))
        } catch {
            fatalError("the Fleet model is invalid: \(error)")
        }
    }

    static let model = make()

    static func entity(_ name: String, in model: Model = model) -> EntityDescription { model.entity(named: name)! }

    static func ref(_ entity: String, _ key: Int64, in model: Model = model) -> ObjectRef {
        ObjectRef(entity: self.entity(entity, in: model).index, key: key)
    }

    /// A snapshot with the given attribute and relationship values (by name).
    static func snapshot(
        _ entityName: String, _ key: Int64, _ attributes: [String: Value] = [:],
        _ relationships: [String: RelationshipValue] = [:], in model: Model = model
    ) -> Snapshot {
        let entity = self.entity(entityName, in: model)
        var snapshot = Snapshot(entity: entity, key: key)
        for (name, value) in attributes { snapshot[attribute: name, in: entity] = value }
        for (name, value) in relationships { snapshot[relationship: name, in: entity] = value }
        return snapshot
    }

    /// A document of every concrete entity, keys unique across the document.
    static func document(in model: Model = model) -> [Snapshot] {
        func ref(_ entity: String, _ key: Int64) -> ObjectRef { Fleet.ref(entity, key, in: model) }
        let car = ref("Car", 1), ann = ref("Person", 2), bob = ref("Person", 3), depot = ref("Depot", 4)
        return [
            snapshot(
                "Car", 1, ["wheels": 4, "name": "Beetle", "Serial": "VW-1", "model": "1302", "colour": "yellow"],
                [
                    "owner": .toOne(ann), "previousOwners": .toMany([bob, ann]), "depots": .toMany([depot]),
                    "garage": .toOne(depot),
                ], in: model),
            snapshot(
                "Person", 2, ["name": "Ann"], ["vehicles": .toMany([car]), "formerVehicles": .toMany([car])],
                in: model),
            snapshot("Person", 3, ["name": "Bob"], ["formerVehicles": .toMany([car])], in: model),
            snapshot(
                "Depot", 4, ["city": "Lyon"], ["vehicles": .toMany([car]), "parked": .toMany([car])], in: model),
            snapshot("Sticker", 5, ["text": "Fragile", "colour": "red"], in: model),
            snapshot("Label", 6, ["text": "This way up"], in: model),
            snapshot("Car", 7, ["wheels": 3], in: model),
        ]
    }
}
