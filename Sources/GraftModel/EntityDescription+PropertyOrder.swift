import Foundation

/// One property of an entity, by kind and position in the entity's resolved lists
/// (`EntityDescription.attributes`, `relationships`, `fetchedProperties`).
public enum PropertyReference: Hashable, Sendable {
    case attribute(Int)
    case relationship(Int)
    case fetchedProperty(Int)
}

/// The groups of Core Data's property order, in the order they come.
///
/// `-[NSEntityDescription _createCachesAndOptimizeState]` files every property of an entity (its own
/// and, once `_flattenProperties` has copied them in, its inherited ones) into one of these groups and
/// lays the groups end to end; the ranges it records (`_propertyRangesByType`) are ranges of this list.
/// Derived attributes and composite attributes go with the attributes; a derived attribute is never
/// transient (`-[NSDerivedAttributeDescription isTransient]` is `NO`); a fetched property always is.
public enum PropertyGroup: Int, CaseIterable, Comparable, Sendable {
    case storedAttributes
    case transientAttributes
    case storedToOnes
    case storedToManys
    case storedOrderedToManys
    case transientToOnes
    case transientToManys
    case transientOrderedToManys
    case fetchedProperties

    public static func < (lhs: PropertyGroup, rhs: PropertyGroup) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension EntityDescription {
    /// The name of a property of this entity.
    public func name(of property: PropertyReference) -> String {
        switch property {
        case .attribute(let index): return attributes[index].name
        case .relationship(let index): return relationships[index].name
        case .fetchedProperty(let index): return fetchedProperties[index].name
        }
    }

    /// The property with this name (own or inherited), of any kind.
    public func property(named name: String) -> PropertyReference? {
        if let index = attributeIndexByName[name] { return .attribute(index) }
        if let index = relationshipIndexByName[name] { return .relationship(index) }
        return fetchedProperties.firstIndex { $0.name == name }.map(PropertyReference.fetchedProperty)
    }

    /// The group a property falls in (see ``PropertyGroup``).
    public func group(of property: PropertyReference) -> PropertyGroup {
        switch property {
        case .attribute(let index):
            let attribute = attributes[index]
            return attribute.isTransient && !attribute.isDerived ? .transientAttributes : .storedAttributes
        case .relationship(let index):
            let relationship = relationships[index]
            // The ordered flag counts for to-manys only: a to-one is a to-one whatever its flag says.
            switch (relationship.isToMany, relationship.isTransient, relationship.isOrdered) {
            case (false, false, _): return .storedToOnes
            case (false, true, _): return .transientToOnes
            case (true, false, false): return .storedToManys
            case (true, false, true): return .storedOrderedToManys
            case (true, true, false): return .transientToManys
            case (true, true, true): return .transientOrderedToManys
            }
        case .fetchedProperty:
            return .fetchedProperties
        }
    }

    /// Every property of the entity, own and inherited, in no particular order.
    var allProperties: [PropertyReference] {
        attributes.indices.map(PropertyReference.attribute) + relationships.indices.map(PropertyReference.relationship)
            + fetchedProperties.indices.map(PropertyReference.fetchedProperty)
    }
}

extension Model {
    /// Core Data's order of an entity's properties: the order of its property search mapping, which
    /// the framework's node classes and managed objects index their values by.
    ///
    /// The rule, from `-[NSEntityDescription _createCachesAndOptimizeState]`: the properties fall into
    /// the groups of ``PropertyGroup``, laid end to end in that order. A root entity's groups are each
    /// sorted by name (`_comparePropertiesByName`, `-[NSString compare:]`). A subentity's group starts
    /// with its superentity's group, in the superentity's order, and continues with the subentity's own
    /// properties of that group, sorted by name. The order therefore depends on the names, kinds and
    /// flags of the properties and on the inheritance, never on the order they were declared in or
    /// archived in.
    ///
    /// Names are compared as Swift strings, as the version hashes do; for the ASCII names Xcode allows
    /// this is `-[NSString compare:]`'s order (by character code: `Z` before `a`).
    public func flattenedProperties(of entity: EntityDescription) -> [PropertyReference] {
        var groups = Array(repeating: [PropertyReference](), count: PropertyGroup.allCases.count)
        var inherited = Set<String>()
        if let parentIndex = entity.superentityIndex, descriptions.indices.contains(parentIndex) {
            let parent = descriptions[parentIndex]
            for property in flattenedProperties(of: parent) {
                let name = parent.name(of: property)
                guard let own = entity.property(named: name) else { continue }
                groups[entity.group(of: own).rawValue].append(own)
                inherited.insert(name)
            }
        }
        let own = entity.allProperties.filter { !inherited.contains(entity.name(of: $0)) }
            .sorted { entity.name(of: $0) < entity.name(of: $1) }
        for property in own { groups[entity.group(of: property).rawValue].append(property) }
        return groups.flatMap { $0 }
    }
}
