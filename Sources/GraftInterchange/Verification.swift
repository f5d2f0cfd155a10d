import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Compares two documents object by object — entities, attribute values, relationships (and the order
/// of ordered ones) — in bounded memory: the first document is reduced to a 128-bit digest per object,
/// the second is streamed against those digests, and only differing objects are read again in full to
/// describe the difference.
public enum Verification {
    /// Every difference between `first` and `second`, described for people ("Employee p12.salary: 10 vs 12").
    ///
    /// - Parameters:
    ///   - limit: stop describing after this many differences (all are still counted).
    ///   - storedValues: a second check of each of `second`'s objects against what `first`'s document
    ///     holds, without `first`'s reader (see `SQLiteStoredValueCheck`); its differences are added.
    public static func differences(
        between first: any StoreReader, and second: any StoreReader, limit: Int = 100,
        storedValues: ((Snapshot) throws -> [String])? = nil
    ) throws
        -> [String]
    {
        let model = first.model
        var digests: [ObjectRef: Digest] = [:]
        try first.forEachSnapshot { snapshot in
            digests[snapshot.ref] = Digest(snapshot, model: model)
        }
        var differing: [ObjectRef] = []
        var onlyInSecond: [ObjectRef] = []
        var stored: [String] = []
        var storedCount = 0
        try second.forEachSnapshot { snapshot in
            if let storedValues {
                let found = try storedValues(snapshot)
                storedCount += found.count
                if stored.count < limit { stored += found.prefix(limit - stored.count) }
            }
            guard let digest = digests.removeValue(forKey: snapshot.ref) else {
                onlyInSecond.append(snapshot.ref)
                return
            }
            if digest != Digest(snapshot, model: model) { differing.append(snapshot.ref) }
        }
        var found: [String] = []
        func name(_ ref: ObjectRef) -> String { "\(model.descriptions[ref.entity].name) p\(ref.key)" }
        for ref in digests.keys.sorted() { found.append("\(name(ref)) is missing from the output") }
        for ref in onlyInSecond.sorted() { found.append("\(name(ref)) is in the output but not in the input") }
        if !differing.isEmpty {
            let wanted = Set(differing.prefix(limit))
            var firstSnapshots: [ObjectRef: Snapshot] = [:]
            var secondSnapshots: [ObjectRef: Snapshot] = [:]
            try first.forEachSnapshot { if wanted.contains($0.ref) { firstSnapshots[$0.ref] = $0 } }
            try second.forEachSnapshot { if wanted.contains($0.ref) { secondSnapshots[$0.ref] = $0 } }
            for ref in wanted.sorted() {
                guard let a = firstSnapshots[ref], let b = secondSnapshots[ref] else { continue }
                found += describe(a, b, model: model)
            }
            if differing.count > limit { found.append("… and \(differing.count - limit) more objects differ") }
        }
        found += stored
        if storedCount > stored.count {
            found.append("… and \(storedCount - stored.count) more values differ from what the input holds")
        }
        return found
    }

    /// The differing properties of two snapshots of the same object.
    static func describe(_ a: Snapshot, _ b: Snapshot, model: Model) -> [String] {
        let entity = model.descriptions[a.ref.entity]
        var found: [String] = []
        let name = "\(entity.name) p\(a.ref.key)"
        for (index, attribute) in entity.attributes.enumerated() where a.attributes[index] != b.attributes[index] {
            found.append(
                "\(name).\(attribute.name): \(text(a.attributes[index])) in the input, \(text(b.attributes[index])) in the output"
            )
        }
        for relationship in entity.relationships {
            let left = canonical(a.relationships[relationship.index], ordered: relationship.isOrdered)
            let right = canonical(b.relationships[relationship.index], ordered: relationship.isOrdered)
            if left != right {
                found.append(
                    "\(name).\(relationship.name): \(left.map { model.descriptions[$0.entity].name + " p\($0.key)" }) in the input, \(right.map { model.descriptions[$0.entity].name + " p\($0.key)" }) in the output"
                )
            }
        }
        return found
    }

    static func text(_ value: Value?) -> String {
        guard let value else { return "no value" }
        return "\(value)"
    }

    static func canonical(_ value: RelationshipValue, ordered: Bool) -> [ObjectRef] {
        ordered ? value.refs : value.refs.sorted()
    }

    /// 128 bits summarising one snapshot (two differently seeded hashes).
    struct Digest: Equatable {
        var low: Int
        var high: Int

        init(_ snapshot: Snapshot, model: Model) {
            var first = Hasher()
            var second = Hasher()
            first.combine(0x5eed)
            second.combine(0xfeed)
            let entity = model.descriptions[snapshot.ref.entity]
            for value in snapshot.attributes {
                first.combine(value)
                second.combine(value)
            }
            for relationship in entity.relationships {
                let refs = Verification.canonical(
                    snapshot.relationships[relationship.index], ordered: relationship.isOrdered)
                first.combine(refs)
                second.combine(refs)
            }
            low = first.finalize()
            high = second.finalize()
        }
    }
}
