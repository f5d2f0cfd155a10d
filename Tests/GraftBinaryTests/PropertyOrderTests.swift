import Foundation
import GraftBinary
import GraftCore
import GraftModel
import GraftTestSupport
import Testing

/// Core Data's property order (`Model.flattenedProperties(of:)`), which `NSAttributeValues` follows:
/// groups by kind, a superentity's properties first within each group, the rest by name.
@Suite struct PropertyOrderTests {
    static func names(_ entity: String, in model: Model = Fleet.model) -> [String] {
        let description = Fleet.entity(entity, in: model)
        return model.flattenedProperties(of: description).map { description.name(of: $0) }
    }

    @Test func rootEntityIsGroupedByKindThenSortedByName() {
        #expect(
            Self.names("Vehicle") == [
                "Serial", "name", "wheels",  // stored attributes, by character code ("S" before "n")
                "cache",  // transient attributes
                "owner",  // stored to-ones
                "depots",  // stored to-manys
                "previousOwners",  // stored ordered to-manys
                "watcher",  // transient to-ones
                "namesakes",  // fetched properties
            ])
        #expect(Self.names("Person") == ["name", "formerVehicles", "vehicles", "watched"])
    }

    @Test func subentityKeepsItsSuperentitysOrderFirstInEachGroup() {
        #expect(
            Self.names("Car") == [
                "Serial", "name", "wheels", "colour", "model", "cache", "owner", "garage", "depots", "previousOwners",
                "watcher", "namesakes",
            ])
        // Sticker's own attribute sorts before the inherited one, and still comes after it.
        #expect(Self.names("Sticker") == ["text", "colour"])
    }

    @Test(arguments: [false, true])
    func orderDoesNotDependOnDeclarationOrder(reversed: Bool) {
        let model = Fleet.make(reversed: reversed)
        for entity in ["Vehicle", "Car", "Person", "Depot", "Label", "Sticker"] {
            #expect(Self.names(entity, in: model) == Self.names(entity), "\(entity)")
        }
    }

    @Test func slotsPutTheStoredAttributesFirst() {
        let model = Fleet.model
        let car = Fleet.entity("Car")
        let slots = BinaryStoreLayout.AttributeSlots(entity: car, model: model)
        #expect(slots.properties.count == 12)
        #expect(
            slots.storedAttributes.map { car.attributes[$0.index].name } == [
                "Serial", "name", "wheels", "colour", "model",
            ])
        #expect(slots.minimumCount == 9)  // five stored attributes, four stored relationships
        #expect(
            slots.legacyStoredAttributes.map { car.attributes[$0.index].name } == [
                "Serial", "colour", "model", "name", "wheels",
            ])
        #expect(!slots.isAmbiguous)
        let sticker = BinaryStoreLayout.AttributeSlots(entity: Fleet.entity("Sticker"), model: model)
        #expect(sticker.isAmbiguous)
        #expect(!BinaryStoreLayout.AttributeSlots(entity: Fleet.entity("Label"), model: model).isAmbiguous)
    }

    /// A compiled model from the corpus archives an entity's properties in hash-table order
    /// (`-[NSEntityDescription encodeWithCoder:]` copies them into an `NSMutableDictionary`), which is
    /// neither the declared order nor the property order; the property order comes out the same.
    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func compiledModelsArchiveOrderIsNotThePropertyOrder() throws {
        let path = "coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd/SampleModel3.mom"
        let model = try CompiledModelReader.read(Data(contentsOf: Corpus.url(path)), path: path)
        let car = try #require(model.entity(named: "Car"))
        let archived = car.declaration.attributes.map(\.name) + car.declaration.relationships.map(\.name)
        let order = model.flattenedProperties(of: car).map { car.name(of: $0) }
        #expect(order == ["markedForDeletionAsOf", "model", "numberPlate", "createdBy", "owner", "previousOwners"])
        #expect(Set(archived) == Set(order))
        let luxury = try #require(model.entity(named: "LuxuryCar"))
        #expect(
            model.flattenedProperties(of: luxury).map { luxury.name(of: $0) } == [
                "markedForDeletionAsOf", "model", "numberPlate", "isLimitedEdition", "createdBy", "owner",
                "previousOwners",
            ])
    }
}
