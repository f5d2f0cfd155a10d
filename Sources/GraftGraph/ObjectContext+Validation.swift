import Foundation
import GraftCore
import GraftModel

/// One rule an object breaks: which object and property, which rule, and what is wrong, in words.
///
/// Validation of a context (``ObjectContext/validate()``), of a paste and of a whole store (`graft
/// validate`) all report what they find as these, made by the same checks.
///
/// For example:
///
/// ```swift
/// for violation in context.ruleViolations(for: department) {
///     print(violation.property, violation.rule, violation.message)   // employees minimumCount holds 2 objects, …
/// }
/// ```
public struct RuleViolation: Hashable, Sendable, CustomStringConvertible {
    /// The kinds of rule a model sets for its objects.
    public enum Rule: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
        /// A required attribute with no value, or a required relationship that is empty.
        case required
        /// A value of another type than its attribute's.
        case type
        /// An integer outside the range of its attribute's type (Integer 16, 32 or 64).
        case range
        /// A value, string length or data size below its attribute's minimum.
        case minimum
        /// A value, string length or data size above its attribute's maximum.
        case maximum
        /// A string that does not match its attribute's regular expression.
        case pattern
        /// A relationship holding an object of an entity that is not its destination (or a subentity).
        case destination
        /// A to-many holding fewer objects than its minimum count.
        case minimumCount
        /// A to-many holding more objects than its maximum count.
        case maximumCount
        /// Values of a uniqueness constraint that another object of the same inheritance tree has too.
        case uniqueness

        public var description: String { rawValue }
    }

    /// The object's entity.
    public var entity: String
    /// The object, as the caller names it (`Department p3`, a URI, a clipboard id).
    public var object: String
    /// The attribute or relationship (for a uniqueness constraint, its attributes joined by ", ").
    public var property: String
    public var rule: Rule
    /// What is wrong: "holds 2 objects, fewer than the minimum 3".
    public var message: String

    public init(entity: String, object: String, property: String, rule: Rule, message: String) {
        self.entity = entity
        self.object = object
        self.property = property
        self.rule = rule
        self.message = message
    }

    /// The violation as an error naming the object and the key.
    public var error: GraftError {
        GraftError(.validationFailed, message, context: [.object(object), .key(property)])
    }

    public var description: String { error.description }
}

extension ObjectContext {
    /// Checks every pending object against the model and reports every failure at once.
    ///
    /// Attributes: type, optionality, integer range, minimum and maximum (values, string lengths, data
    /// sizes, dates), regular expressions. Relationships: optionality, minimum and maximum counts, and
    /// destination entity. Uniqueness constraints, against the store's objects and each other (see
    /// ``uniquenessViolations(of:label:)``). Deleted objects: Deny rules.
    ///
    /// - Throws: `GraftError.validationFailed` whose `underlying` errors each name the object and key;
    ///   the store's errors, looking up objects with the same constraint values.
    public func validate() throws {
        var errors: [GraftError] = []
        let objects = pending.values.sorted { $0.objectID < $1.objectID }
        var changed: [ManagedObject] = []
        for object in objects {
            if object.isDeletedFlag {
                if !object.isInsertedFlag { errors += denyErrors(for: object) }
            } else if object.storage != nil && (object.isInsertedFlag || object.hasPersistentChanges) {
                errors += validationErrors(for: object)
                changed.append(object)
            }
        }
        errors += try uniquenessViolations(of: changed).map(\.violation.error)
        guard !errors.isEmpty else { return }
        let objectsFailing = Set(errors.compactMap { $0.context.first }).count
        throw GraftError(
            .validationFailed,
            "\(Wording.counted(errors.count, "validation error")) in \(Wording.counted(objectsFailing, "object"))",
            underlying: errors)
    }

    /// The objects among `objects` whose values for a uniqueness constraint another object has too:
    /// one the store holds (as this context sees it: objects deleted here or changed to other values do
    /// not count), or one earlier in `objects`. Subentities share their root entity's constraints, and an
    /// object without a value for one of a constraint's attributes is not checked against it.
    ///
    /// A store that answers predicates itself (SQLite) is asked once per object and constraint, with an
    /// indexed query; for any other store, the constraint's tree is read once.
    ///
    /// - Parameter label: how violations name objects (by default ``ManagedObject/label``).
    /// - Throws: the store's errors.
    public func uniquenessViolations(
        of objects: [ManagedObject], label: (ManagedObject) -> String = { $0.label }
    ) throws -> [(object: ManagedObject, violation: RuleViolation)] {
        let checked = objects.filter { !$0.isDeleted }.sorted { $0.objectID < $1.objectID }
        let candidates = Set(checked.map(ObjectIdentifier.init))
        var found: [(object: ManagedObject, violation: RuleViolation)] = []
        var groups: [String: (entity: EntityDescription, names: [String], objects: [ManagedObject])] = [:]
        for object in checked {
            for constraint in object.entity.uniquenessConstraints
            where constraint.allSatisfy({ object.entity.attribute(named: $0) != nil }) {
                let root = model.descriptions[object.entity.rootIndex]
                let group = "\(root.name).\(constraint.joined(separator: ","))"
                groups[group, default: (root, constraint, [])].objects.append(object)
            }
        }
        for (_, group) in groups.sorted(by: { $0.key < $1.key }) {
            func values(of object: ManagedObject) throws -> [Value]? {
                let values = try group.names.map { try object.attributeValue(forKey: $0) }
                return values.allSatisfy { $0 != nil } ? values.map { $0! } : nil
            }
            let entities = [group.entity.index] + group.entity.descendantIndices
            let inSQL = try store.fetch(StoreFetch(entities: entities, predicate: .falsePredicate, limit: 1))
                .predicateApplied
            // The objects already there with each combination of values, as this context sees them.
            var taken: [[Value]: ManagedObject] = [:]
            if !inSQL {
                for object in try fetch(FetchRequest(entityName: group.entity.name))
                where !candidates.contains(ObjectIdentifier(object)) {
                    if let key = try values(of: object) { taken[key] = object }
                }
            }
            for object in group.objects {
                guard let key = try values(of: object) else { continue }
                if inSQL, taken[key] == nil {
                    let predicate = GraftPredicate.and(
                        zip(group.names, key).map {
                            .comparison(.init(.keyPath(KeyValuePath(key: $0.0)), .equalTo, .constant($0.1)))
                        })
                    // The saved objects with these values, straight from the store; one found here may have
                    // been deleted or changed in this context since, and candidates are checked below.
                    for ref in try store.fetch(StoreFetch(entities: entities, predicate: predicate, limit: 3)).refs {
                        let existing = self.object(with: ObjectID(entity: ref.entity, key: ref.key))
                        if existing.isDeleted || candidates.contains(ObjectIdentifier(existing)) { continue }
                        if try values(of: existing) == key {
                            taken[key] = existing
                            break
                        }
                    }
                }
                if let other = taken[key], other !== object {
                    let isNew = candidates.contains(ObjectIdentifier(other)) && other.isInserted
                    let earlier =
                        "\(isNew ? "another new" : "an existing") \(other.entity.name) (\(isNew ? label(other) : other.uri))"
                    found.append(
                        (
                            object,
                            UniquenessCheck.violation(
                                names: group.names, values: key, entity: object.entity.name, object: label(object),
                                earlier: earlier)
                        ))
                }
                taken[key] = object
            }
        }
        return found
    }

    /// Every rule `object` breaks, each error naming the object and the key: the model's rules, then the
    /// per-key rules of the object's class (``ManagedObject/propertyValidators``).
    public func validationErrors(for object: ManagedObject) -> [GraftError] {
        ruleViolations(for: object).map(\.error) + propertyValidatorErrors(for: object)
    }

    /// The errors of the per-key rules of the object's class, run on its current values (replacement
    /// values they offer are not used: a save does not change what it validates).
    func propertyValidatorErrors(for object: ManagedObject) -> [GraftError] {
        guard let validators = lifecycle.validators[object.entity.index], object.storage != nil else { return [] }
        var errors: [GraftError] = []
        for key in validators.keys.sorted() {
            var value = object.value(forKey: key)
            for validator in validators[key]! {
                do {
                    try validator.validate(object, &value)
                } catch {
                    errors.append(Self.validationError(error, object: object, key: key))
                }
            }
        }
        return errors
    }

    /// A per-key rule's error as a validation error naming the object and the key.
    static func validationError(_ error: any Error, object: ManagedObject, key: String) -> GraftError {
        var found = (error as? GraftError) ?? GraftError(.validationFailed, "\(error)")
        if found.code != .validationFailed {
            found = GraftError(.validationFailed, found.message, context: found.context, underlying: found.underlying)
        }
        if !found.context.contains(.key(key)) { found.context.insert(.key(key), at: 0) }
        if !found.context.contains(.object(object.label)) { found.context.insert(.object(object.label), at: 0) }
        return found
    }

    /// Every rule `object` breaks, each naming the object by its label (`Department p3`).
    public func ruleViolations(for object: ManagedObject) -> [RuleViolation] {
        guard let storage = object.storage else { return [] }
        let entity = object.entity
        var found: [RuleViolation] = []
        func fail(_ key: String, _ broken: RuleViolation.Broken) {
            found.append(
                RuleViolation(
                    entity: entity.name, object: object.label, property: key, rule: broken.rule,
                    message: broken.message))
        }
        for (index, attribute) in entity.attributes.enumerated() {
            for broken in AttributeRules.broken(storage.attributes[index], for: attribute) {
                fail(attribute.name, broken)
            }
        }
        for (index, relationship) in entity.relationships.enumerated() {
            let contents = storage.relationships[index]
            if case .unloaded = contents { continue }
            let targets = contents.objects
            let destination = model.destination(of: relationship)
            for target in targets where !model.isKind(target.entity, of: destination) {
                fail(relationship.name, RelationshipRules.wrongDestination(target.entity, destination))
            }
            if let broken = RelationshipRules.broken(count: targets.count, for: .init(relationship.declaration)) {
                fail(relationship.name, broken)
            }
        }
        return found
    }

    /// Deny rules a deleted object still breaks (its relationship holds objects that are not deleted).
    private func denyErrors(for object: ManagedObject) -> [GraftError] {
        guard let committed = object.committed else { return [] }
        var errors: [GraftError] = []
        for (index, relationship) in object.entity.relationships.enumerated() where relationship.deleteRule == .deny {
            let remaining = (object.storage ?? committed).relationships[index].objects.filter { !$0.isDeletedFlag }
            if !remaining.isEmpty {
                errors.append(
                    GraftError(
                        .validationFailed,
                        "is deleted while '\(relationship.name)' still holds \(remaining.count) object(s) (Deny rule)",
                        context: [.object(object.label), .key(relationship.name)]))
            }
        }
        return errors
    }
}

extension RuleViolation {
    /// A rule broken and what is wrong, before it is said of which object.
    public struct Broken: Hashable, Sendable {
        public var rule: Rule
        public var message: String

        public init(_ rule: Rule, _ message: String) {
            self.rule = rule
            self.message = message
        }
    }

    /// Every rule a snapshot breaks, each naming `object` (`label` of the object) and the key: attribute
    /// rules, required attributes and relationships, relationship counts and destinations. Transient
    /// properties, which snapshots do not hold, and to-manys left `.unloaded` are not checked.
    ///
    /// To check many snapshots, make one ``RuleCheck`` and ask it, which reads the model once.
    public static func find(in snapshot: Snapshot, model: Model, object label: String) -> [RuleViolation] {
        RuleCheck(model: model).violations(in: snapshot, object: label)
    }
}

/// The rules of a model's entities, read from their descriptions once, for checking many snapshots
/// (`RuleViolation.find(in:model:object:)` says which rules): the common cases — no value where none is
/// required, a value of the right type where no other rule applies, a relationship holding an allowed
/// number of objects — are settled from a few facts per property, and only a rule that may be broken
/// reads the property's description, as handing it to the rules copies it, retaining every string.
///
/// For example:
///
/// ```swift
/// let rules = RuleCheck(model: model)
/// for snapshot in snapshots { violations += rules.violations(in: snapshot, object: label(snapshot)) }
/// ```
public struct RuleCheck: Sendable {
    private let model: Model
    /// Per entity (by model index): its attributes' and relationships' facts, transient ones left out.
    private let attributes: [[AttributeFacts]]
    private let relationships: [[RelationshipFacts]]

    private struct AttributeFacts: Sendable {
        var index: Int
        var type: AttributeType
        var isOptional: Bool
        /// Whether the attribute has no rule but its type and integer range (no minimum, maximum or pattern).
        var typeOnly: Bool
        var range: ClosedRange<Int64>?
    }

    private struct RelationshipFacts: Sendable {
        /// The relationship's position among the entity's and its index in a snapshot.
        var position: Int
        var index: Int
        var destination: Int
        var counts: RelationshipRules.Counts
    }

    public init(model: Model) {
        self.model = model
        attributes = model.descriptions.map { entity in
            entity.attributes.indices.compactMap { index in
                let attribute = entity.attributes[index]
                guard !attribute.isTransient else { return nil }
                return AttributeFacts(
                    index: index, type: attribute.type, isOptional: attribute.isOptional,
                    typeOnly: attribute.minValue == nil && attribute.maxValue == nil
                        && attribute.regularExpression == nil,
                    range: attribute.type.integerRange)
            }
        }
        relationships = model.descriptions.map { entity in
            entity.relationships.indices.compactMap { position in
                let relationship = entity.relationships[position]
                guard !relationship.isTransient else { return nil }
                return RelationshipFacts(
                    position: position, index: relationship.index, destination: relationship.destinationIndex,
                    counts: RelationshipRules.Counts(relationship.declaration))
            }
        }
    }

    /// Every rule `snapshot` breaks, each naming `object` (`label` of the object) and the key, as
    /// `RuleViolation.find(in:model:object:)` finds them.
    public func violations(in snapshot: Snapshot, object label: String) -> [RuleViolation] {
        let entityIndex = snapshot.ref.entity
        var found: [RuleViolation] = []
        func fail(_ key: String, _ broken: RuleViolation.Broken) {
            found.append(
                RuleViolation(
                    entity: model.descriptions[entityIndex].name, object: label, property: key, rule: broken.rule,
                    message: broken.message))
        }
        for facts in attributes[entityIndex] {
            let value = snapshot.attributes[facts.index]
            if let value {
                if facts.typeOnly, ValueConversion.matches(value, facts.type) {
                    guard let range = facts.range, case .integer(let number) = value else { continue }
                    if range.contains(number) { continue }
                }
            } else if facts.isOptional {
                continue
            }
            let attribute = model.descriptions[entityIndex].attributes[facts.index]
            for broken in AttributeRules.broken(value, for: attribute) { fail(attribute.name, broken) }
        }
        for facts in relationships[entityIndex] {
            let value = snapshot.relationships[facts.index]
            if case .unloaded = value { continue }
            func check(_ target: ObjectRef) {
                guard target.entity != facts.destination,
                    !model.descriptions[target.entity].ancestorIndices.contains(facts.destination)
                else { return }
                fail(
                    model.descriptions[entityIndex].relationships[facts.position].name,
                    RelationshipRules.wrongDestination(
                        model.descriptions[target.entity], model.descriptions[facts.destination]))
            }
            // Without `value.refs`, which would make an array for every to-one.
            var count = 0
            switch value {
            case .toOne(let target?):
                check(target)
                count = 1
            case .toMany(let targets):
                for target in targets { check(target) }
                count = targets.count
            case .toOne(nil), .unloaded:
                break
            }
            if let broken = RelationshipRules.broken(count: count, for: facts.counts) {
                fail(model.descriptions[entityIndex].relationships[facts.position].name, broken)
            }
        }
        return found
    }
}

/// The rules a relationship's contents must follow.
package enum RelationshipRules {
    /// The facts of a relationship's declaration that its number of objects is checked against, copied
    /// out of it so that checking many objects retains none of its strings.
    package struct Counts: Sendable {
        var isToMany: Bool
        var isOptional: Bool
        var minCount: Int
        var maxCount: Int

        package init(_ relationship: Relationship) {
            isToMany = relationship.isToMany
            isOptional = relationship.isOptional
            minCount = relationship.minCount
            maxCount = relationship.maxCount
        }
    }

    /// What is wrong with a relationship holding `count` objects, or `nil` when nothing is: optionality, and
    /// a to-many's minimum and maximum counts (an empty optional to-many is always allowed).
    package static func broken(count: Int, for relationship: Counts) -> RuleViolation.Broken? {
        if !relationship.isToMany {
            return count == 0 && !relationship.isOptional ? .init(.required, "is required but is empty") : nil
        }
        if count == 0 && relationship.isOptional { return nil }
        let minimum = max(relationship.minCount, relationship.isOptional ? 0 : 1)
        if count < minimum {
            return .init(
                count == 0 && !relationship.isOptional ? .required : .minimumCount,
                "holds \(Wording.counted(count, "object")), fewer than the minimum \(minimum)")
        }
        if relationship.maxCount > 0 && count > relationship.maxCount {
            return .init(.maximumCount, "holds \(count) objects, more than the maximum \(relationship.maxCount)")
        }
        return nil
    }

    /// A relationship holding an object of `entity`, which is not its `destination` nor a kind of it.
    static func wrongDestination(_ entity: EntityDescription, _ destination: EntityDescription) -> RuleViolation.Broken
    {
        .init(
            .destination,
            "holds \(Wording.withArticle(entity.name)), which is not \(Wording.withArticle(destination.name))")
    }
}

/// The rules an attribute's value must follow.
package enum AttributeRules {
    /// Every rule the attribute's value breaks, `nil` (no value) included: required attributes, and the
    /// rules of ``violations(of:for:)``.
    package static func broken(_ value: Value?, for attribute: Attribute) -> [RuleViolation.Broken] {
        guard let value else { return attribute.isOptional ? [] : [.init(.required, "is required but has no value")] }
        return violations(of: value, for: attribute)
    }

    /// Every rule `value` breaks for `attribute` ("is 70000, above the maximum 32767"): type, integer
    /// range, minimum and maximum (values, string lengths, data sizes, dates), regular expression.
    ///
    /// `RuleCheck` settles values of attributes with none of these rules but
    /// the type without calling here; a new kind of rule must be named in its test too.
    package static func violations(of value: Value, for attribute: Attribute) -> [RuleViolation.Broken] {
        var found: [RuleViolation.Broken] = []
        guard ValueConversion.matches(value, attribute.type) else {
            return [
                .init(
                    .type,
                    "holds \(ValueConversion.describe(value)), but the attribute's type is \(attribute.type.modelName)")
            ]
        }
        if case .integer(let number) = value, let range = attribute.type.integerRange, !range.contains(number) {
            found.append(
                .init(
                    .range,
                    "is \(number), outside the \(attribute.type.modelName) range \(range.lowerBound)…\(range.upperBound)"
                ))
        }
        switch value {
        case .string(let text):
            let length = text.utf16.count
            if let minimum = attribute.minValue?.doubleValue, Double(length) < minimum {
                found.append(.init(.minimum, "is \(length) characters long, shorter than the minimum \(Int(minimum))"))
            }
            if let maximum = attribute.maxValue?.doubleValue, Double(length) > maximum {
                found.append(.init(.maximum, "is \(length) characters long, longer than the maximum \(Int(maximum))"))
            }
            if let pattern = attribute.regularExpression, !RegularExpressions.wholeMatch(pattern, text) {
                found.append(.init(.pattern, "'\(text)' does not match the pattern \(pattern)"))
            }
        case .data(let data) where attribute.type == .binary:
            if let minimum = attribute.minValue?.doubleValue, Double(data.count) < minimum {
                found.append(.init(.minimum, "is \(data.count) bytes, fewer than the minimum \(Int(minimum))"))
            }
            if let maximum = attribute.maxValue?.doubleValue, Double(data.count) > maximum {
                found.append(.init(.maximum, "is \(data.count) bytes, more than the maximum \(Int(maximum))"))
            }
        case .integer, .double, .decimal, .date:
            if let minimum = attribute.minValue, ValueOrder.compare(value, minimum) == .orderedAscending {
                found.append(
                    .init(.minimum, "is \(ValueText.format(value)), below the minimum \(ValueText.format(minimum))"))
            }
            if let maximum = attribute.maxValue, ValueOrder.compare(value, maximum) == .orderedDescending {
                found.append(
                    .init(.maximum, "is \(ValueText.format(value)), above the maximum \(ValueText.format(maximum))"))
            }
        default:
            break
        }
        return found
    }
}

/// Finds objects whose uniqueness-constraint values an earlier object of the same inheritance tree
/// already has, one object at a time, keeping only the values it has seen (not the objects).
///
/// For example:
///
/// ```swift
/// var check = UniquenessCheck(model: model)
/// for (position, snapshot) in snapshots.enumerated() {
///     for clash in check.add(snapshot, at: position) { print(position, "repeats", clash.earlier) }
/// }
/// ```
package struct UniquenessCheck {
    /// An object with the same values as an earlier one.
    package struct Clash: Sendable {
        /// The position of the earlier object, as given to ``add(_:at:)``.
        package var earlier: Int
        /// The constraint's attributes, and the values both objects have.
        package var names: [String]
        package var values: [Value]

        /// The violation of the later object, saying which object was there first (`earlier`: "another
        /// Department (x-coredata://…)").
        package func violation(entity: String, object: String, earlier: String) -> RuleViolation {
            UniquenessCheck.violation(names: names, values: values, entity: entity, object: object, earlier: earlier)
        }
    }

    /// The violation of an object whose values `values` of the constraint `names` another object
    /// (`earlier`, in words) has too.
    package static func violation(
        names: [String], values: [Value], entity: String, object: String, earlier: String
    ) -> RuleViolation {
        let shown = zip(names, values).map { "\($0.0) = \(ValueText.format($0.1))" }.joined(separator: ", ")
        return RuleViolation(
            entity: entity, object: object, property: names.joined(separator: ", "), rule: .uniqueness,
            message: "\(earlier) already has \(shown): the uniqueness constraint forbids a second")
    }

    /// Per entity, its constraints as attribute indices with the group they are checked in.
    private let constraints: [[Constraint]]
    // Per group, the position of the first object with each combination of values (single values are
    // kept apart from combinations, so that the common case makes no array per object).
    private var takenSingle: [[Value: Int]]
    private var takenCombined: [[[Value]: Int]]

    package init(model: Model) {
        let (constraints, groups) = Self.constraints(of: model)
        self.constraints = constraints
        takenSingle = Array(repeating: [:], count: groups)
        takenCombined = Array(repeating: [:], count: groups)
    }

    /// One uniqueness constraint of an entity: the group it is checked in (by number: a group is the root
    /// entity and the constraint's names, for subentities share their root's constraints), its names and
    /// its attributes' indices in the entity.
    struct Constraint {
        var group: Int
        var names: [String]
        var indices: [Int]
    }

    /// Per entity (by model index), its constraints whose attributes it has; and how many groups.
    static func constraints(of model: Model) -> (constraints: [[Constraint]], groups: Int) {
        var groups: [String: Int] = [:]
        let constraints = model.descriptions.map { entity in
            entity.uniquenessConstraints.compactMap { constraint -> Constraint? in
                let indices = constraint.compactMap { entity.attributeIndexByName[$0] }
                guard indices.count == constraint.count else { return nil }
                let name = "\(model.descriptions[entity.rootIndex].name).\(constraint.joined(separator: ","))"
                let group = groups[name] ?? groups.count
                groups[name] = group
                return Constraint(group: group, names: constraint, indices: indices)
            }
        }
        return (constraints, groups.count)
    }

    /// Makes room for the objects to come, one model index of an entity per object, so that the tables of
    /// values are made once at their size rather than rebuilt, every value hashed again, as they grow.
    package mutating func reserveCapacity(forObjectsOf entities: some Sequence<Int>) {
        var single = Array(repeating: 0, count: takenSingle.count)
        var combined = single
        for entity in entities {
            for constraint in constraints[entity] {
                if constraint.indices.count == 1 {
                    single[constraint.group] += 1
                } else {
                    combined[constraint.group] += 1
                }
            }
        }
        for group in single.indices {
            if single[group] > 0 { takenSingle[group].reserveCapacity(takenSingle[group].count + single[group]) }
            if combined[group] > 0 {
                takenCombined[group].reserveCapacity(takenCombined[group].count + combined[group])
            }
        }
    }

    /// Notes the snapshot's constraint values; returns the constraints whose values an earlier object had.
    /// Objects with no value for one of a constraint's attributes are not checked against it.
    package mutating func add(_ snapshot: Snapshot, at position: Int) -> [Clash] {
        var clashes: [Clash] = []
        for constraint in constraints[snapshot.ref.entity] {
            let earlier: Int?
            if constraint.indices.count == 1 {
                guard let value = snapshot.attributes[constraint.indices[0]] else { continue }
                earlier = takenSingle[constraint.group].updateValue(position, forKey: value)
                if let earlier { takenSingle[constraint.group][value] = earlier }
            } else {
                let values = constraint.indices.compactMap { snapshot.attributes[$0] }
                guard values.count == constraint.indices.count else { continue }
                earlier = takenCombined[constraint.group].updateValue(position, forKey: values)
                if let earlier { takenCombined[constraint.group][values] = earlier }
            }
            if let earlier {
                clashes.append(
                    Clash(
                        earlier: earlier, names: constraint.names,
                        values: constraint.indices.compactMap { snapshot.attributes[$0] }))
            }
        }
        return clashes
    }
}

/// Tells whether objects may share the values of a uniqueness constraint with an earlier object of the
/// same inheritance tree, keeping only a hash of each object's values (eight bytes an object, for
/// millions of objects). A "may" is two objects with the same values or, rarely, two with different
/// values and the same hash: a reason to check exactly (with ``UniquenessCheck``), not a verdict.
package struct UniquenessHashes {
    private let constraints: [[UniquenessCheck.Constraint]]
    /// Per group, the hashes of the values seen.
    private var taken: [Set<Int>]

    /// - Parameter objectsPerEntity: how many objects of each entity (by model index) are to come, when
    ///   known, so that each group's table is made once at its size.
    package init(model: Model, objectsPerEntity: [Int] = []) {
        let (constraints, groups) = UniquenessCheck.constraints(of: model)
        self.constraints = constraints
        var expected = Array(repeating: 0, count: groups)
        for (entity, count) in zip(constraints.indices, objectsPerEntity) {
            for constraint in constraints[entity] { expected[constraint.group] += count }
        }
        taken = expected.map { Set(minimumCapacity: $0) }
    }

    /// Notes the hashes of the snapshot's constraint values; returns false when an earlier object had
    /// one of them. Objects with no value for one of a constraint's attributes are not checked against it.
    package mutating func add(_ snapshot: Snapshot) -> Bool {
        var unique = true
        for constraint in constraints[snapshot.ref.entity] {
            var hasher = Hasher()
            guard
                constraint.indices.allSatisfy({ index in
                    guard let value = snapshot.attributes[index] else { return false }
                    hasher.combine(value)
                    return true
                })
            else { continue }
            if !taken[constraint.group].insert(hasher.finalize()).inserted { unique = false }
        }
        return unique
    }
}

/// Orders attribute values of the same kind; numbers compare across integer, double and decimal.
enum ValueOrder {
    static func compare(_ lhs: Value, _ rhs: Value) -> ComparisonResult? {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)):
            return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        case (.decimal(let a), .decimal(let b)):
            return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        case (.decimal(let a), .integer(let b)): return compare(.decimal(a), .decimal(Decimal(b)))
        case (.integer(let a), .decimal(let b)): return compare(.decimal(Decimal(a)), .decimal(b))
        case (.date(let a), .date(let b)): return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        default:
            guard let a = lhs.doubleValue, let b = rhs.doubleValue, !a.isNaN, !b.isNaN else { return nil }
            return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        }
    }
}

/// Compiled regular expressions, kept so validation does not compile a pattern per object.
enum RegularExpressions {
    private static let cache = RegexCache()

    static func wholeMatch(_ pattern: String, _ text: String) -> Bool {
        guard let regex = cache.regex(pattern) else { return false }
        let range = NSRange(text.startIndex..., in: text)
        guard let match = regex.firstMatch(in: text, options: [.anchored], range: range) else { return false }
        return match.range == range
    }
}

final class RegexCache: @unchecked Sendable {
    private var compiled: [String: NSRegularExpression] = [:]
    private let lock = NSLock()

    func regex(_ pattern: String) -> NSRegularExpression? {
        lock.lock()
        defer { lock.unlock() }
        if let regex = compiled[pattern] { return regex }
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return nil }
        compiled[pattern] = regex
        return regex
    }
}

extension ManagedObject {
    /// Checks a value for one key as a save would, without setting it: the model's rules (the value is
    /// first coerced to the attribute's type, as `setValue(_:forKey:)` does; then optionality, range,
    /// minimum and maximum, pattern; for relationships, the destination entity and the counts), then
    /// the class's per-key rules (``propertyValidators``), which see the coerced value and may replace it.
    ///
    /// For example:
    ///
    /// ```swift
    /// var salary: Any? = -5
    /// try employee.validateValue(&salary, forKey: "salary")   // throws: below the minimum 0 (and any custom rule)
    /// ```
    ///
    /// - Parameters:
    ///   - value: the proposed value; on return, the coerced value or the replacement a per-key rule
    ///     chose.
    ///   - key: an attribute or relationship of the object's entity.
    /// - Throws: `GraftError.validationFailed` naming the object and the key — with every broken rule in
    ///   `underlying` when there are several; `GraftError.notFound` for an unknown key.
    public func validateValue(_ value: inout Any?, forKey key: String) throws {
        let context = try requireContext()
        var errors: [GraftError] = []
        func fail(_ broken: RuleViolation.Broken) {
            errors.append(GraftError(.validationFailed, broken.message, context: [.object(label), .key(key)]))
        }
        var coerced = true
        if let index = entity.attributeIndexByName[key] {
            let attribute = entity.attributes[index]
            do {
                let converted = try ValueConversion.convert(value, to: attribute, entity: entity.name)
                for broken in AttributeRules.broken(converted, for: attribute) { fail(broken) }
                value = converted?.anyValue
            } catch let error as GraftError {
                errors.append(
                    GraftError(.validationFailed, error.message, context: [.object(label), .key(key)]))
                coerced = false
            }
        } else if let index = entity.relationshipIndexByName[key] {
            let relationship = entity.relationships[index]
            do {
                let objects: [ManagedObject]
                if relationship.isToMany {
                    objects = try ValueConversion.objects(from: value, key: key, owner: self)
                } else if let object = value as? ManagedObject {
                    objects = [object]
                } else if value == nil || (value as? Optional<ManagedObject>) != nil {
                    objects = []
                } else {
                    throw GraftError(
                        .typeMismatch, "a to-one relationship takes a managed object or nil, not \(type(of: value!))")
                }
                let destination = context.model.destination(of: relationship)
                for target in objects where !context.model.isKind(target.entity, of: destination) {
                    fail(RelationshipRules.wrongDestination(target.entity, destination))
                }
                if let broken = RelationshipRules.broken(count: objects.count, for: .init(relationship.declaration)) {
                    fail(broken)
                }
            } catch let error as GraftError {
                errors.append(GraftError(.validationFailed, error.message, context: [.object(label), .key(key)]))
                coerced = false
            }
        } else {
            throw unknownKey(key)
        }
        if coerced, let validators = context.lifecycle.validators[entity.index]?[key] {
            for validator in validators {
                do {
                    try validator.validate(self, &value)
                } catch {
                    errors.append(ObjectContext.validationError(error, object: self, key: key))
                }
            }
        }
        if errors.count == 1 { throw errors[0] }
        if !errors.isEmpty {
            throw GraftError(
                .validationFailed, "\(Wording.counted(errors.count, "validation error")) for '\(key)'",
                context: [.object(label), .key(key)], underlying: errors)
        }
    }
}
