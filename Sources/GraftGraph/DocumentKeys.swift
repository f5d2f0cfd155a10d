import GraftCore
import GraftModel

/// Keys in documents whose objects share one key sequence (XML and binary stores), for objects whose
/// keys are unique only within their inheritance tree (SQLite stores, contexts).
///
/// When two trees use the same keys (a Department 1 and an Employee 1), each tree's keys are moved up
/// by an offset: the first tree (in entity order) keeps its keys, each next tree starts above the highest
/// key of the trees before it. The offsets are recorded in the document's metadata under
/// `GraftKeyOffsets` (root entity name → offset), and readers subtract them, so a document converted to
/// XML or binary and back gives every object its own key again. Documents whose keys are already
/// distinct (every XML or binary store Core Data wrote) get no offsets and keep their keys as they are.
package enum DocumentKeys {
    /// The metadata key holding the offsets.
    package static let metadataKey = "GraftKeyOffsets"

    /// Offsets for trees whose highest keys are `maxKeys` (root entity index → highest key), when their
    /// keys collide; empty when they do not.
    package static func offsets(maxKeys: [Int: Int64], collide: Bool) -> [Int: Int64] {
        guard collide else { return [:] }
        var offsets: [Int: Int64] = [:]
        var next: Int64 = 0
        for root in maxKeys.keys.sorted() {
            offsets[root] = next
            // Saturating: keys that cannot all be moved into one sequence make the writer's addition
            // overflow, which it reports.
            let (sum, overflow) = next.addingReportingOverflow(max(0, maxKeys[root] ?? 0))
            next = overflow ? .max : sum
        }
        return offsets
    }

    /// Offsets for a set of objects: empty when no key is used by two trees.
    package static func offsets(for refs: some Sequence<ObjectRef>, model: Model) -> [Int: Int64] {
        var owner: [Int64: Int] = [:]
        var maxKeys: [Int: Int64] = [:]
        var collide = false
        for ref in refs {
            let root = model.descriptions[ref.entity].rootIndex
            maxKeys[root] = max(maxKeys[root] ?? 0, ref.key)
            if let other = owner.updateValue(root, forKey: ref.key), other != root { collide = true }
        }
        return offsets(maxKeys: maxKeys, collide: collide)
    }

    /// The offsets a document's metadata records.
    ///
    /// - Throws: `GraftError.malformedInput` when the entry names an entity the model does not have or is
    ///   not a root.
    package static func offsets(in metadata: StoreMetadata, model: Model) throws -> [Int: Int64] {
        guard let entry = metadata.values[metadataKey] else { return [:] }
        guard let dictionary = entry.dictionaryValue else {
            throw GraftError(.malformedInput, "\(metadataKey) in the metadata is not a dictionary")
        }
        var offsets: [Int: Int64] = [:]
        for (name, value) in dictionary {
            guard let entity = model.entity(named: name), entity.superentityIndex == nil, let offset = value.int64Value,
                offset >= 0
            else {
                throw GraftError(
                    .malformedInput,
                    "\(metadataKey) in the metadata has an entry '\(name)' that is not a root entity with an offset")
            }
            offsets[entity.index] = offset
        }
        return offsets
    }

    /// Records `offsets` in metadata (removing the entry when there are none).
    package static func record(_ offsets: [Int: Int64], model: Model, in metadata: inout StoreMetadata) {
        let nonZero = offsets.filter { $0.value != 0 }
        guard !nonZero.isEmpty else {
            metadata.values[metadataKey] = nil
            return
        }
        var dictionary = PropertyList.Dictionary()
        for root in offsets.keys.sorted() { dictionary[model.descriptions[root].name] = .integer(offsets[root]!) }
        metadata.values[metadataKey] = .dictionary(dictionary)
    }

    /// The document key of an object.
    @inline(__always)
    package static func documentKey(_ ref: ObjectRef, model: Model, offsets: [Int: Int64]) -> Int64 {
        offsets.isEmpty ? ref.key : ref.key + (offsets[model.descriptions[ref.entity].rootIndex] ?? 0)
    }

    /// The key an object had before its tree's offset was added.
    @inline(__always)
    package static func originalKey(_ documentKey: Int64, entity: Int, model: Model, offsets: [Int: Int64]) -> Int64 {
        offsets.isEmpty ? documentKey : documentKey - (offsets[model.descriptions[entity].rootIndex] ?? 0)
    }
}

extension StoreReader {
    /// By default: computed from every object's key, reading the whole document once.
    public var keyOffsets: [Int: Int64] {
        var refs: [ObjectRef] = []
        try? forEachSnapshot { refs.append($0.ref) }
        return DocumentKeys.offsets(for: refs, model: model)
    }
}
