import GraftCore
import GraftGraph
import GraftModel

/// A source object as a mapping model's expressions see it (`$source` in a value expression, `SELF` in
/// a filter): its attributes as plain values, and its relationships as views of the objects they name,
/// read from the store as they are asked for.
final class SourceObjectView: KeyValueCoding, KeyValueCollection {
    let snapshot: Snapshot
    let model: Model
    /// Reads another object of the store, for key paths through relationships; `nil` where the objects
    /// are not in a store (a stage after the first).
    let lookup: ((ObjectRef) throws -> Snapshot?)?
    /// The first failure reading a related object (key-value coding cannot throw).
    private(set) var failure: GraftError?

    init(_ snapshot: Snapshot, model: Model, lookup: ((ObjectRef) throws -> Snapshot?)?) {
        self.snapshot = snapshot
        self.model = model
        self.lookup = lookup
    }

    var keyValueElements: [any KeyValueCoding] { [self] }

    func value(forKey key: String) -> Any? {
        let entity = model.descriptions[snapshot.ref.entity]
        if let index = entity.attributeIndexByName[key] { return snapshot.attributes[index]?.anyValue }
        guard let index = entity.relationshipIndexByName[key] else { return nil }
        let related = snapshot.relationships[index]
        guard let lookup else {
            failure =
                failure
                ?? GraftError(
                    .migrationBlocked,
                    "the expression reads \(entity.name).\(key), a relationship, in a step after a stage that changed "
                        + "the objects; give that step its own run")
            return nil
        }
        do {
            let views = try related.refs.compactMap { ref in
                try lookup(ref).map { SourceObjectView($0, model: model, lookup: lookup) }
            }
            if entity.relationships[index].declaration.isToMany { return RelatedViews(views: views) }
            return views.first
        } catch let error as GraftError {
            failure = failure ?? error
            return nil
        } catch {
            failure = failure ?? GraftError(.io, "\(error)")
            return nil
        }
    }
}

/// A to-many's objects, for key-value coding.
struct RelatedViews: KeyValueCollection {
    let views: [SourceObjectView]
    var keyValueElements: [any KeyValueCoding] { views }
}
