import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Which objects a copy takes: roots, and the rules that decide how far from them the copy reaches.
///
/// By default the copy follows the model: relationships whose delete rule is Cascade (the objects a root
/// owns) are followed; every other relationship leaves the selection, and its objects become
/// *references* — a to-one to an object shared by many, such as an employee's department, links to the
/// existing object when pasted instead of copying it. An object already taken is never taken twice, so
/// cycles end. `follow`, `stop` and `depth` override the rules.
///
/// For example:
///
/// ```swift
/// var selection = Selection(roots: [.predicate(entity: "Department", format: "name == 'Sales'")])
/// selection.follow = ["Department.employees"]     // take the employees too
/// selection.stop = ["Project"]                     // never copy projects: reference them
/// ```
public struct Selection: Sendable {
    public enum Roots: Sendable {
        /// Every object of the source (a whole-document clipboard).
        case all
        /// Objects of an entity (and its subentities) matching a predicate in Apple's format (empty: all).
        case predicate(entity: String, format: String)
        /// Objects named by URI (`x-coredata://…/Entity/p12`).
        case uris([String])
        /// Objects of an entity by primary key.
        case keys(entity: String, [Int64])
        /// Objects by reference.
        case refs([ObjectRef])
    }

    public var roots: [Roots]
    /// Relationships to follow even though their delete rule is not Cascade: `Entity.relationship`, or
    /// `relationship` for that name on every entity.
    public var follow: [String]
    /// Entities whose objects are never copied (they become references), or relationships
    /// (`Entity.relationship` or `relationship`) never followed.
    public var stop: [String]
    /// Follow relationships at most this many steps from a root (nil: no limit).
    public var depth: Int?
    /// Attributes that identify objects of an entity, overriding its uniqueness constraint:
    /// entity name → attribute names.
    public var identities: [String: [String]]

    public init(
        roots: [Roots], follow: [String] = [], stop: [String] = [], depth: Int? = nil,
        identities: [String: [String]] = [:]
    ) {
        self.roots = roots
        self.follow = follow
        self.stop = stop
        self.depth = depth
        self.identities = identities
    }

    /// Whether the selection takes every object of its source as it is: every object is a root and no
    /// entity is stopped, so nothing becomes a reference and no relationship needs following.
    public var takesEverything: Bool {
        stop.isEmpty && roots.contains { if case .all = $0 { true } else { false } }
    }

    /// Why a relationship was, or was not, followed.
    public enum Rule: Hashable, Sendable, CustomStringConvertible {
        case cascade
        case followed
        case notOwned(DeleteRule)
        case stoppedEntity(String)
        case stoppedRelationship(String)
        case depth(Int)

        public var description: String {
            switch self {
            case .cascade: return "Cascade delete rule: owned, copied"
            case .followed: return "--follow: copied"
            case .notOwned(let rule): return "\(rule.modelName) delete rule: not owned, referenced"
            case .stoppedEntity(let name): return "--stop \(name): referenced"
            case .stoppedRelationship(let name): return "--stop \(name): referenced"
            case .depth(let depth): return "beyond --depth \(depth): referenced"
            }
        }
    }

    /// Checks the names used in `follow`, `stop` and `identities` against the model.
    ///
    /// - Throws: `GraftError.notFound` naming the unknown entity, relationship or attribute.
    public func check(against model: Model) throws {
        func checkRelationshipPath(_ path: String, option: String) throws {
            let parts = path.split(separator: ".").map(String.init)
            if parts.count == 2 {
                let entity = try model.requireEntity(parts[0])
                guard entity.relationship(named: parts[1]) != nil else {
                    throw GraftError(.notFound, "\(option) \(path): \(parts[0]) has no relationship '\(parts[1])'")
                }
            } else if parts.count == 1 {
                guard model.descriptions.contains(where: { $0.relationship(named: parts[0]) != nil }) else {
                    throw GraftError(.notFound, "\(option) \(path): no entity has a relationship '\(path)'")
                }
            } else {
                throw GraftError(
                    .notFound, "\(option) \(path): write a relationship as Entity.relationship or relationship")
            }
        }
        for path in follow { try checkRelationshipPath(path, option: "--follow") }
        for name in stop where model.entity(named: name) == nil { try checkRelationshipPath(name, option: "--stop") }
        for (name, attributes) in identities {
            let entity = try model.requireEntity(name)
            for attribute in attributes where entity.attribute(named: attribute) == nil {
                throw GraftError(.notFound, "--identity \(name)=…: \(name) has no attribute '\(attribute)'")
            }
        }
        if let depth, depth < 0 { throw GraftError(.invalidOperation, "--depth must be 0 or more") }
    }

    /// How the relationship `relationship` of `entity` is treated at `depth` steps from a root.
    func rule(
        for relationship: RelationshipDescription, of entity: EntityDescription, destination: EntityDescription,
        target: EntityDescription, depth current: Int, model: Model
    ) -> Rule {
        let qualified = "\(entity.name).\(relationship.name)"
        let declarer = entity.ancestorIndices.map { model.descriptions[$0].name }.map { "\($0).\(relationship.name)" }
        func matches(_ list: [String]) -> Bool {
            list.contains(relationship.name) || list.contains(qualified) || declarer.contains { list.contains($0) }
        }
        if let stopped = stop.first(where: { name in
            model.entity(named: name).map { model.isKind(target, of: $0) } ?? false
        }) {
            return .stoppedEntity(stopped)
        }
        if matches(stop) { return .stoppedRelationship(qualified) }
        if let depth, current >= depth { return .depth(depth) }
        if matches(follow) { return .followed }
        if relationship.deleteRule == .cascade { return .cascade }
        return .notOwned(relationship.deleteRule)
    }

    /// The attributes that identify objects of `entity`: `identities`, else its first uniqueness
    /// constraint made of attributes only (inherited ones included); empty when there is none.
    public func identity(of entity: EntityDescription, in model: Model) -> [String] {
        for name in [entity.name] + entity.ancestorIndices.map({ model.descriptions[$0].name }) {
            if let attributes = identities[name] { return attributes }
        }
        for constraint in entity.uniquenessConstraints
        where constraint.allSatisfy({ entity.attribute(named: $0) != nil }) {
            return constraint
        }
        return []
    }
}
