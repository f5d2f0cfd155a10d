import Foundation
import GraftCore
import GraftModel

extension ObjectContext {
    /// Checks every pending object against the model and reports every failure at once.
    ///
    /// Attributes: type, optionality, integer range, minimum and maximum (values, string lengths, data
    /// sizes, dates), regular expressions. Relationships: optionality, minimum and maximum counts, and
    /// destination entity. Deleted objects: Deny rules.
    ///
    /// - Throws: `GraftError.validationFailed` whose `underlying` errors each name the object and key.
    public func validate() throws {
        var errors: [GraftError] = []
        let objects = pending.values.sorted { $0.objectID < $1.objectID }
        for object in objects {
            if object.isDeletedFlag {
                if !object.isInsertedFlag { errors += denyErrors(for: object) }
            } else if object.storage != nil && (object.isInsertedFlag || object.hasPersistentChanges) {
                errors += validationErrors(for: object)
            }
        }
        guard !errors.isEmpty else { return }
        let objectsFailing = Set(errors.compactMap { $0.context.first }).count
        throw GraftError(
            .validationFailed,
            "\(Wording.counted(errors.count, "validation error")) in \(Wording.counted(objectsFailing, "object"))",
            underlying: errors)
    }

    /// Every rule `object` breaks, each error naming the object and the key.
    public func validationErrors(for object: ManagedObject) -> [GraftError] {
        guard let storage = object.storage else { return [] }
        var errors: [GraftError] = []
        func fail(_ key: String, _ message: String) {
            errors.append(GraftError(.validationFailed, message, context: [.object(object.label), .key(key)]))
        }
        for (index, attribute) in object.entity.attributes.enumerated() {
            guard let value = storage.attributes[index] else {
                if !attribute.isOptional { fail(attribute.name, "is required but has no value") }
                continue
            }
            for message in AttributeRules.violations(of: value, for: attribute) { fail(attribute.name, message) }
        }
        for (index, relationship) in object.entity.relationships.enumerated() {
            let contents = storage.relationships[index]
            if case .unloaded = contents { continue }
            let targets = contents.objects
            let destination = model.destination(of: relationship)
            for target in targets where !model.isKind(target.entity, of: destination) {
                fail(relationship.name, "holds \(target.label), which is not \(Wording.withArticle(destination.name))")
            }
            if let message = RelationshipRules.violation(count: targets.count, for: relationship.declaration) {
                fail(relationship.name, message)
            }
        }
        return errors
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

/// The rules a relationship's contents must follow.
public enum RelationshipRules {
    /// What is wrong with a relationship holding `count` objects, or `nil` when nothing is: optionality, and
    /// a to-many's minimum and maximum counts (an empty optional to-many is always allowed).
    public static func violation(count: Int, for relationship: Relationship) -> String? {
        if !relationship.isToMany {
            return count == 0 && !relationship.isOptional ? "is required but is empty" : nil
        }
        if count == 0 && relationship.isOptional { return nil }
        let minimum = max(relationship.minCount, relationship.isOptional ? 0 : 1)
        if count < minimum {
            return "holds \(Wording.counted(count, "object")), fewer than the minimum \(minimum)"
        }
        if relationship.maxCount > 0 && count > relationship.maxCount {
            return "holds \(count) objects, more than the maximum \(relationship.maxCount)"
        }
        return nil
    }

    /// Every rule a snapshot breaks, each error naming `label` (the object) and the key: attribute rules,
    /// required attributes and relationships, and relationship counts.
    public static func violations(of snapshot: Snapshot, in model: Model, label: String) -> [GraftError] {
        let entity = model.descriptions[snapshot.ref.entity]
        var errors: [GraftError] = []
        func fail(_ key: String, _ message: String) {
            errors.append(GraftError(.validationFailed, message, context: [.object(label), .key(key)]))
        }
        for (index, attribute) in entity.attributes.enumerated() where !attribute.isTransient {
            guard let value = snapshot.attributes[index] else {
                if !attribute.isOptional { fail(attribute.name, "is required but has no value") }
                continue
            }
            for message in AttributeRules.violations(of: value, for: attribute) { fail(attribute.name, message) }
        }
        for relationship in entity.relationships where !relationship.isTransient {
            let value = snapshot.relationships[relationship.index]
            if case .unloaded = value { continue }
            let destination = model.destination(of: relationship)
            for target in value.refs where !model.isKind(model.descriptions[target.entity], of: destination) {
                fail(
                    relationship.name,
                    "holds \(Wording.withArticle(model.descriptions[target.entity].name)), which is not \(Wording.withArticle(destination.name))"
                )
            }
            if let message = violation(count: value.refs.count, for: relationship.declaration) {
                fail(relationship.name, message)
            }
        }
        return errors
    }
}

/// The rules an attribute's value must follow.
public enum AttributeRules {
    /// Every rule `value` breaks for `attribute`, as messages ("is 70000, above the maximum 32767").
    public static func violations(of value: Value, for attribute: Attribute) -> [String] {
        var messages: [String] = []
        guard ValueConversion.matches(value, attribute.type) else {
            return ["holds \(ValueConversion.describe(value)), but the attribute's type is \(attribute.type.modelName)"]
        }
        if case .integer(let number) = value, let range = attribute.type.integerRange, !range.contains(number) {
            messages.append(
                "is \(number), outside the \(attribute.type.modelName) range \(range.lowerBound)…\(range.upperBound)")
        }
        switch value {
        case .string(let text):
            let length = text.utf16.count
            if let minimum = attribute.minValue?.doubleValue, Double(length) < minimum {
                messages.append("is \(length) characters long, shorter than the minimum \(Int(minimum))")
            }
            if let maximum = attribute.maxValue?.doubleValue, Double(length) > maximum {
                messages.append("is \(length) characters long, longer than the maximum \(Int(maximum))")
            }
            if let pattern = attribute.regularExpression, !RegularExpressions.wholeMatch(pattern, text) {
                messages.append("'\(text)' does not match the pattern \(pattern)")
            }
        case .data(let data) where attribute.type == .binary:
            if let minimum = attribute.minValue?.doubleValue, Double(data.count) < minimum {
                messages.append("is \(data.count) bytes, fewer than the minimum \(Int(minimum))")
            }
            if let maximum = attribute.maxValue?.doubleValue, Double(data.count) > maximum {
                messages.append("is \(data.count) bytes, more than the maximum \(Int(maximum))")
            }
        case .integer, .double, .decimal, .date:
            if let minimum = attribute.minValue, ValueOrder.compare(value, minimum) == .orderedAscending {
                messages.append("is \(ValueText.format(value)), below the minimum \(ValueText.format(minimum))")
            }
            if let maximum = attribute.maxValue, ValueOrder.compare(value, maximum) == .orderedDescending {
                messages.append("is \(ValueText.format(value)), above the maximum \(ValueText.format(maximum))")
            }
        default:
            break
        }
        return messages
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
