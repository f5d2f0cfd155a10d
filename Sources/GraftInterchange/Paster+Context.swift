import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Identity lookups in a context (which sees its unsaved changes too).
///
/// When the store answers fetches in SQL, each identity is one indexed query; otherwise every object of
/// the entity is read once into an index, so a large paste does not scan the store per object.
final class ContextTarget: PasteTarget {
    let context: ObjectContext
    private var indexes: [Int: [[Value]: ObjectRef]] = [:]
    private var answersInSQL: [Int: Bool] = [:]

    init(context: ObjectContext) { self.context = context }

    var model: Model { context.model }
    var identifier: String { context.store.identifier }

    func exists(_ ref: ObjectRef) throws -> Bool {
        if let object = context.registeredObject(for: ObjectID(entity: ref.entity, key: ref.key)) {
            return !object.isDeleted
        }
        return try context.store.snapshot(for: ref) != nil
    }

    func find(_ entity: EntityDescription, attributes: [Int], among values: IdentityValues) throws -> [ObjectRef?] {
        var found: [IdentityKey: ObjectRef?] = [:]
        return try (0..<values.count).map { position in
            let key = values.key(at: position)
            if let known = found[key] { return known }
            let ref = try find(entity, Array(zip(attributes, values[position])))
            found[key] = ref
            return ref
        }
    }

    /// The object of `entity` (or a subentity) whose attributes equal `values`, as the context sees them.
    private func find(_ entity: EntityDescription, _ values: [(Int, Value)]) throws -> ObjectRef? {
        let entities = [entity.index] + entity.descendantIndices
        if answersInSQL[entity.index] == nil {
            let probe = try context.store.fetch(
                StoreFetch(entities: entities, predicate: predicate(entity, values), limit: 1))
            answersInSQL[entity.index] = probe.predicateApplied
        }
        if answersInSQL[entity.index] == true {
            var request = FetchRequest(entityName: entity.name, predicate: predicate(entity, values))
            request.fetchLimit = 1
            return try context.fetch(request).first?.objectID.ref
        }
        if indexes[entity.index] == nil {
            var index: [[Value]: ObjectRef] = [:]
            for object in try context.fetch(FetchRequest(entityName: entity.name)) {
                let key = try values.map { try object.attributeValue(forKey: entity.attributes[$0.0].name) }
                if key.allSatisfy({ $0 != nil }) { index[key.map { $0! }] = object.objectID.ref }
            }
            indexes[entity.index] = index
        }
        return indexes[entity.index]![values.map(\.1)]
    }

    private func predicate(_ entity: EntityDescription, _ values: [(Int, Value)]) -> GraftPredicate {
        .and(
            values.map {
                .comparison(
                    GraftPredicate.Comparison(
                        .keyPath(KeyValuePath(key: entity.attributes[$0.0].name)), .equalTo, .constant($0.1)))
            })
    }
}

/// Carries out a plan in a context: inserts the copies, merges, links, and checks the result.
struct ContextWork {
    let context: ObjectContext
    let plan: PastePlan

    /// What a paste through a context did.
    struct Result {
        /// Clipboard id → the object it became, in document order.
        var objects: [(id: String, object: ManagedObject)]
        /// The rules the objects break, when the paste goes ahead anyway (validation off).
        var violations: [RuleViolation]
    }

    /// Performs the paste. Throws `validationFailed` listing every rule the objects the paste changed
    /// break, unless validation is off (the caller reverts).
    func apply() throws -> Result {
        let pendingBefore = Set((context.insertedObjects + context.updatedObjects).map(ObjectIdentifier.init))
        var objects: [String: ManagedObject] = [:]
        objects.reserveCapacity(plan.clipboard.objects.count)
        var touched: [ObjectIdentifier: ManagedObject] = [:]
        // Objects first, so that links can reach any of them.
        for (object, action) in zip(plan.clipboard.objects, plan.actions) {
            guard let mapping = plan.mappings[object.entity] else { continue }
            switch action {
            case .insert:
                let created = try context.insert(mapping.target)
                try setAttributes(of: created, from: object, mapping: mapping)
                objects[object.id] = created
            case .merge(let ref):
                let existing = try context.existingObject(with: ObjectID(entity: ref.entity, key: ref.key))
                try setAttributes(of: existing, from: object, mapping: mapping)
                objects[object.id] = existing
            case .skip(let ref):
                objects[object.id] = try context.existingObject(with: ObjectID(entity: ref.entity, key: ref.key))
            }
            touched[ObjectIdentifier(objects[object.id]!)] = objects[object.id]!
        }
        // Links, from every pasted or merged object; the context keeps the other sides.
        for (object, action) in zip(plan.clipboard.objects, plan.actions) {
            guard let mapping = plan.mappings[object.entity], let source = objects[object.id] else { continue }
            if case .skip = action { continue }
            for link in object.relationships {
                guard let index = mapping.relationships[link.name] else { continue }
                let relationship = mapping.target.relationships[index]
                var targets: [ManagedObject] = []
                for id in link.targets {
                    if let copied = objects[id] {
                        targets.append(copied)
                    } else if case .reference(let at) = plan.ids.position(of: id), let ref = plan.references[at] {
                        let existing = try context.existingObject(with: ObjectID(entity: ref.entity, key: ref.key))
                        touched[ObjectIdentifier(existing)] = existing
                        targets.append(existing)
                    }
                }
                do {
                    if relationship.isToMany {
                        let set = try source.relatedObjects(forKey: relationship.name)
                        for target in targets where !set.contains(target) { try set.insert(target) }
                    } else if let target = targets.first {
                        if let previous = try source.relatedObject(forKey: relationship.name), previous !== target {
                            touched[ObjectIdentifier(previous)] = previous
                        }
                        try source.setValue(target, forKey: relationship.name)
                    }
                } catch let error as GraftError {
                    throw error.at(.object(object.id))
                }
            }
        }
        // Every object the paste changed: those it named, and those whose inverses changed with them.
        for object in context.insertedObjects + context.updatedObjects
        where !pendingBefore.contains(ObjectIdentifier(object)) {
            touched[ObjectIdentifier(object)] = object
        }
        var clipboardIDs: [ObjectIdentifier: String] = [:]
        for object in plan.clipboard.objects.reversed() {
            if let pasted = objects[object.id] { clipboardIDs[ObjectIdentifier(pasted)] = object.id }
        }
        let violations = try check(Array(touched.values), clipboardIDs: clipboardIDs)
        return Result(
            objects: plan.clipboard.objects.compactMap { object in objects[object.id].map { (object.id, $0) } },
            violations: violations)
    }

    /// Gives the object the copy's values: every attribute the clipboard's entity has, including the ones
    /// the copy has no value for (so that a new object does not keep a default its original did not have).
    private func setAttributes(
        of target: ManagedObject, from object: Clipboard.Object, mapping: PastePlan.EntityMapping
    ) throws {
        var given = Set<Int>()
        for named in object.attributes {
            guard let index = mapping.attributes[named.name] else { continue }
            let attribute = mapping.target.attributes[index]
            try target.setValue(try plan.convert(named.value, to: attribute, object: object.id), forKey: attribute.name)
            given.insert(index)
        }
        for index in Set(mapping.attributes.values).subtracting(given) {
            try target.setValue(nil, forKey: mapping.target.attributes[index].name)
        }
    }

    /// Validation of every object the paste changed, and uniqueness of new objects' identities, settled
    /// by the plan. Objects copied from the clipboard are named by their clipboard ids.
    private func check(_ touched: [ManagedObject], clipboardIDs: [ObjectIdentifier: String]) throws -> [RuleViolation] {
        func label(_ object: ManagedObject) -> String {
            clipboardIDs[ObjectIdentifier(object)].map { "\($0) (\(object.entity.name))" } ?? object.label
        }
        var found: [PasteViolation] = []
        for object in touched.sorted(by: { $0.objectID < $1.objectID }) where !object.isDeleted {
            for violation in context.ruleViolations(for: object) {
                var violation = violation
                violation.object = label(object)
                found.append(PasteViolation(violation, clipboardID: clipboardIDs[ObjectIdentifier(object)]))
            }
        }
        // New objects whose constraint values another object already has.
        found += try context.uniquenessViolations(of: touched.filter(\.isInserted), label: label).map {
            PasteViolation($0.violation, clipboardID: clipboardIDs[ObjectIdentifier($0.object)])
        }
        return try plan.settle(found)
    }

}
