import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Every rule a store's objects break, found by the checks a paste makes of its result: attribute rules
/// (required, type, range, minimum and maximum, pattern), relationships (required, minimum and maximum
/// counts, destination) and uniqueness constraints across the store.
///
/// For people who want to know before they copy: a paste refuses such objects unless told otherwise
/// (``PasteOptions/validates``).
///
/// For example:
///
/// ```swift
/// let store = try StoreFormat.openForReading(url, model: nil)
/// let report = try StoreValidation.check(store)
/// for found in report.violations { print(found.line) }   // Department p1 employees (minimumCount): …
/// ```
public enum StoreValidation {
    /// A rule one object of the store breaks.
    public struct Violation: Hashable, Sendable {
        /// The object.
        public var ref: ObjectRef
        /// The object's URI (`x-coredata://<store UUID>/<Entity>/p<key>`).
        public var uri: String
        /// What it breaks; its `object` is `Entity p<key>`.
        public var violation: RuleViolation

        /// One line for people: `Department p1 employees (minimumCount): holds 2 objects, fewer than the
        /// minimum 3`.
        public var line: String {
            "\(violation.object) \(violation.property) (\(violation.rule)): \(violation.message)"
        }

        /// `{"entity", "key", "uri", "property", "rule", "message"}`.
        public var json: JSONValue {
            .object([
                ("entity", .string(violation.entity)), ("key", .int(ref.key)), ("uri", .string(uri)),
                ("property", .string(violation.property)), ("rule", .string(violation.rule.rawValue)),
                ("message", .string(violation.message)),
            ])
        }
    }

    /// What a check found.
    public struct Report: Sendable {
        /// How many objects were checked.
        public var objects: Int
        /// Every rule broken, object by object in the order the store gave them.
        public var violations: [Violation]

        /// How many objects break at least one rule.
        public var objectsBreakingRules: Int { Set(violations.map(\.ref)).count }

        /// `{"objects": n, "objectsBreakingRules": n, "violations": [{…}, …]}`.
        public var json: JSONValue {
            .object([
                ("objects", .int(Int64(objects))), ("objectsBreakingRules", .int(Int64(objectsBreakingRules))),
                ("violations", .array(violations.map(\.json))),
            ])
        }

        /// `12 objects, 3 rules broken by 2 of them`, or `12 objects, no rule broken`.
        public var summary: String {
            let checked = Wording.counted(objects, "object")
            guard !violations.isEmpty else { return "\(checked), no rule broken" }
            return "\(checked), \(Wording.counted(violations.count, "rule")) broken by \(objectsBreakingRules) of them"
        }
    }

    /// Checks every object of `store` against its model (to-manys the store leaves unloaded are loaded).
    ///
    /// - Throws: the store's errors reading objects.
    public static func check(_ store: any PersistentStore) throws -> Report {
        let model = store.model
        var violations: [Violation] = []
        let rules = RuleCheck(model: model)
        var uniqueness = UniquenessCheck(model: model)
        var seen: [ObjectRef] = []
        func label(_ ref: ObjectRef) -> String { "\(model.descriptions[ref.entity].name) p\(ref.key)" }
        func uri(_ ref: ObjectRef) -> String {
            ObjectID(entity: ref.entity, key: ref.key).uri(in: model, storeIdentifier: store.identifier)
        }
        func visit(_ snapshot: Snapshot) throws {
            var snapshot = snapshot
            let ref = snapshot.ref
            for (index, value) in snapshot.relationships.enumerated() where value == .unloaded {
                snapshot.relationships[index] = .toMany(try store.relatedRefs(of: ref, relationship: index))
            }
            for violation in rules.violations(in: snapshot, object: label(ref)) {
                violations.append(Violation(ref: ref, uri: uri(ref), violation: violation))
            }
            for clash in uniqueness.add(snapshot, at: seen.count) {
                let earlier = seen[clash.earlier]
                let violation = clash.violation(
                    entity: model.descriptions[ref.entity].name, object: label(ref),
                    earlier: "another \(model.descriptions[earlier.entity].name) (\(label(earlier)))")
                violations.append(Violation(ref: ref, uri: uri(ref), violation: violation))
            }
            seen.append(ref)
        }
        if let reader = store as? any StoreReader {
            // A document in memory: every object in one pass.
            try reader.forEachSnapshot(visit)
        } else {
            // A store that answers fetches: each inheritance tree's objects.
            for root in model.descriptions where root.superentityIndex == nil {
                let found = try store.fetch(StoreFetch(entities: [root.index] + root.descendantIndices))
                if found.snapshots.count == found.refs.count {
                    for snapshot in found.snapshots { try visit(snapshot) }
                } else {
                    for ref in found.refs { if let snapshot = try store.snapshot(for: ref) { try visit(snapshot) } }
                }
            }
        }
        return Report(objects: seen.count, violations: violations)
    }
}
