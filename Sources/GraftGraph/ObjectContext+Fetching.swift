import GraftCore
import GraftModel

/// What to fetch: objects of an entity (and its subentities) matching a predicate, in an order, up to a
/// limit.
///
/// For example:
///
/// ```swift
/// var request = FetchRequest(entityName: "Employee")
/// request.predicate = try GraftPredicate(format: "salary > %d", 50000)
/// request.sortDescriptors = [GraftSortDescriptor(keyPath: "name")]
/// request.fetchLimit = 10
/// let wellPaid = try context.fetch(request)
/// ```
public struct FetchRequest: Sendable {
    public var entityName: String
    public var predicate: GraftPredicate?
    public var sortDescriptors: [GraftSortDescriptor]
    /// At most this many objects (`nil`: no limit).
    public var fetchLimit: Int?
    /// Skip this many objects first.
    public var fetchOffset: Int
    /// Include objects of subentities (the default, as in Core Data).
    public var includesSubentities: Bool
    /// Values for `$VARIABLE`s in the predicate.
    public var variables: [String: any Sendable]
    /// Whether the objects come back as faults, their values read from the store when first used
    /// (Core Data's `returnsObjectsAsFaults`).
    ///
    /// Graft's default is `false`: the rows a fetch reads are kept, so the objects come back with their
    /// values, and using them reads nothing more. (Core Data's default is `true`, but its faults are
    /// filled from the rows the fetch left in its row cache, so using them reads nothing more either;
    /// Graft keeps no row cache, so a fault reads its row again.) With `true`, a store that applies the
    /// whole predicate reads only the objects' keys; objects whose rows had to be read to evaluate a
    /// predicate in memory come back filled all the same.
    public var returnsObjectsAsFaults: Bool
    /// When positive, the objects come back as faults, and the first one of each run of this many to be
    /// used fills the whole run with one read (Core Data's `fetchBatchSize`): a large result takes memory
    /// only for the objects used. `0`, the default, reads every object's values with the fetch.
    public var fetchBatchSize: Int

    public init(
        entityName: String, predicate: GraftPredicate? = nil, sortDescriptors: [GraftSortDescriptor] = [],
        fetchLimit: Int? = nil, fetchOffset: Int = 0, includesSubentities: Bool = true
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.includesSubentities = includesSubentities
        self.variables = [:]
        self.returnsObjectsAsFaults = false
        self.fetchBatchSize = 0
    }
}

extension ObjectContext {
    /// The objects a request asks for, seen with the context's pending changes: new objects that match
    /// are included, deleted ones are not, and edited ones are judged by their current values.
    ///
    /// - Throws: `GraftError.notFound` for an unknown entity, `GraftError.evaluationFailed` for a
    ///   predicate or sort key that does not fit the objects, or the store's error.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        beginFetch()  // objects filled here are awoken once the results are known
        defer { endFetch() }
        let entity = try model.requireEntity(request.entityName)
        let entities = [entity.index] + (request.includesSubentities ? entity.descendantIndices : [])
        let wanted = Set(entities)
        let predicate = try request.predicate.map { try $0.substituting(request.variables) }
        try predicate?.checkKinds(for: entity, in: model)
        let variables: [String: Any] = request.variables

        // Objects whose in-memory state differs from the store are judged here, not by the store.
        let changed = pending.values.filter { wanted.contains($0.entity.index) }
        let limit = request.fetchLimit.map { $0 + request.fetchOffset }
        let batchSize = max(0, request.fetchBatchSize)
        let storeResult = try store.fetch(
            StoreFetch(
                entities: entities, predicate: predicate, sortDescriptors: request.sortDescriptors,
                limit: changed.isEmpty ? limit : nil,
                includesValues: !request.returnsObjectsAsFaults && batchSize == 0))
        // The rows read are kept: the objects are held until the results hold them.
        var loaded: [ManagedObject] = []
        loaded.reserveCapacity(storeResult.snapshots.count)
        prepareToRegister(storeResult.refs.count)
        for snapshot in storeResult.snapshots {
            let object = self.object(for: snapshot.ref)
            fill(object, from: snapshot)
            loaded.append(object)
        }

        var results: [ManagedObject] = []
        results.reserveCapacity(storeResult.refs.count)
        // Objects with pending changes are judged below, from memory; only then is `seen` needed.
        let judgesPending = !pending.isEmpty
        var seen = Set<ObjectIdentifier>()
        // The snapshots usually are the refs, in order: their objects are at hand.
        let inOrder = loaded.count == storeResult.refs.count
        for (position, ref) in storeResult.refs.enumerated() {
            let object = inOrder && loaded[position].objectID.ref == ref ? loaded[position] : self.object(for: ref)
            if judgesPending && (object.isDeletedFlag || pending[ObjectIdentifier(object)] != nil) { continue }
            if !storeResult.predicateApplied, let predicate {
                try fulfill(object)
                guard try predicate.evaluate(with: object, variables: variables) else { continue }
            }
            if !changed.isEmpty { seen.insert(ObjectIdentifier(object)) }
            results.append(object)
        }
        var addedHere = false
        for object in changed.sorted(by: { $0.objectID < $1.objectID }) where !object.isDeletedFlag {
            guard !seen.contains(ObjectIdentifier(object)) else { continue }
            if object.storage == nil { try fulfill(object) }
            if let predicate, !(try predicate.evaluate(with: object, variables: variables)) { continue }
            results.append(object)
            addedHere = true
        }
        try throwFaultError()
        if !request.sortDescriptors.isEmpty && (addedHere || !storeResult.sortedAndLimited) {
            results = try GraftSortDescriptor.sort(results, by: request.sortDescriptors)
            try throwFaultError()
        }
        if request.fetchOffset > 0 { results = Array(results.dropFirst(request.fetchOffset)) }
        if let fetchLimit = request.fetchLimit, results.count > fetchLimit {
            results = Array(results.prefix(fetchLimit))
        }
        withExtendedLifetime(loaded) {}
        if batchSize > 0 { makeBatches(of: results, size: batchSize) }
        return results
    }

    /// Registers the faults among `results` in runs of `size`, each filled at once when one is used.
    private func makeBatches(of results: [ManagedObject], size: Int) {
        // Batches whose objects all went away unused are forgotten now and then.
        if batchedFaults.count > 4 * results.count + 10_000 {
            batchedFaults = batchedFaults.filter { registeredObject(for: $0.key).map { $0.storage == nil } ?? false }
        }
        var start = 0
        while start < results.count {
            let run = results[start..<min(start + size, results.count)].filter {
                $0.storage == nil && !$0.objectID.isTemporary
            }
            start += size
            guard run.count > 1 else { continue }
            let batch = FetchBatch(ids: run.map(\.objectID))
            for object in run { batchedFaults[object.objectID] = batch }
        }
    }

    /// Fills every fault of a batch that is still a fault, with one read.
    func fill(_ batch: FetchBatch) throws {
        for id in batch.ids { batchedFaults[id] = nil }
        let faults = batch.ids.compactMap { registeredObject(for: $0) }.filter { $0.storage == nil }
        guard !faults.isEmpty else { return }
        for snapshot in try store.snapshots(for: faults.map(\.objectID.ref)) {
            if let object = registeredObject(for: ObjectID(entity: snapshot.ref.entity, key: snapshot.ref.key)) {
                fill(object, from: snapshot)
            }
        }
    }

    /// How many objects `fetch(_:)` would return (Core Data's `count(for:)`).
    ///
    /// A store that applies the whole predicate counts the objects itself (SQLite with `COUNT(*)`), none
    /// of them read; objects with pending changes here are left out of its count and judged from memory.
    /// Otherwise the objects are fetched and counted.
    ///
    /// - Throws: as ``fetch(_:)``.
    public func count(for request: FetchRequest) throws -> Int {
        let entity = try model.requireEntity(request.entityName)
        let entities = [entity.index] + (request.includesSubentities ? entity.descendantIndices : [])
        let wanted = Set(entities)
        let predicate = try request.predicate.map { try $0.substituting(request.variables) }
        try predicate?.checkKinds(for: entity, in: model)
        let changed = pending.values.filter { wanted.contains($0.entity.index) }
        let saved = changed.filter { !$0.objectID.isTemporary }.map(\.objectID.ref).sorted {
            ($0.entity, $0.key) < ($1.entity, $1.key)
        }
        guard
            let stored = try store.count(
                StoreFetch(entities: entities, predicate: predicate, includesValues: false), excluding: saved)
        else { return try fetch(request).count }
        let variables: [String: Any] = request.variables
        var total = stored
        for object in changed where !object.isDeletedFlag {
            if object.storage == nil { try fulfill(object) }
            if let predicate, !(try predicate.evaluate(with: object, variables: variables)) { continue }
            total += 1
        }
        try throwFaultError()
        total = max(0, total - request.fetchOffset)
        if let fetchLimit = request.fetchLimit { total = min(total, fetchLimit) }
        return total
    }

    /// Evaluates a fetched property for `object`: its fetch, with `$FETCH_SOURCE` bound to the object and
    /// `$FETCHED_PROPERTY` to the property's name.
    func evaluateFetchedProperty(_ property: FetchedProperty, of object: ManagedObject) throws -> [ManagedObject] {
        var request = FetchRequest(entityName: property.entity)
        if !property.predicate.trimmingCharacters(in: .whitespaces).isEmpty {
            do {
                request.predicate = try GraftPredicate.parse(property.predicate)
            } catch let error as GraftError {
                throw error.at(.key(property.name)).at(.entity(object.entity.name))
            }
        }
        let predicate = request.predicate
        request.predicate = nil
        let candidates = try fetch(request)
        guard let predicate else { return candidates }
        let variables: [String: Any] = ["FETCH_SOURCE": object, "FETCHED_PROPERTY": property.name]
        return try candidates.filter { try predicate.evaluate(with: $0, variables: variables) }
    }
}

/// A run of faults returned by a fetch with a batch size.
final class FetchBatch {
    let ids: [ObjectID]

    init(ids: [ObjectID]) {
        self.ids = ids
    }
}

extension GraftPredicate {
    /// Throws for a comparison that can never be decided, found from the model before any object is
    /// read: an attribute ordered against, or matched as a string with, a constant of another kind
    /// (`name > 5` where `name` is a string). Evaluation fails on such a comparison with the first object;
    /// this makes the fetch fail the same way when no object is there to evaluate it on.
    func checkKinds(for entity: EntityDescription, in model: Model) throws {
        switch self {
        case .truePredicate, .falsePredicate: return
        case .not(let inner): try inner.checkKinds(for: entity, in: model)
        case .and(let parts), .or(let parts): for part in parts { try part.checkKinds(for: entity, in: model) }
        case .comparison(let comparison): try comparison.checkKinds(for: entity, in: model)
        }
    }
}

extension GraftPredicate.Comparison {
    fileprivate func checkKinds(for entity: EntityDescription, in model: Model) throws {
        var (attributeSide, constantSide) = (left, right)
        if case .keyPath = right, case .constant = left { (attributeSide, constantSide) = (right, left) }
        guard case .keyPath(let path) = attributeSide, let attribute = Self.attribute(at: path, from: entity, in: model)
        else { return }
        let constants: [Value]
        switch (self.operator, constantSide) {
        case (.between, .aggregate(let bounds)):
            constants = bounds.compactMap { if case .constant(let value) = $0 { return value } else { return nil } }
        case (_, .constant(let value)): constants = [value]
        default: return
        }
        guard let kind = Self.kind(of: attribute.type) else { return }
        for constant in constants {
            let constantKind = Self.kind(of: constant)
            let problem: String?
            switch self.operator {
            case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo, .between:
                problem = kind == constantKind ? nil : "two values of one kind"
            case .beginsWith, .endsWith, .like, .matches, .contains:
                problem = kind == "a String" && constantKind == "a String" ? nil : "strings"
            default:
                problem = nil
            }
            guard let problem else { continue }
            throw GraftError(
                .evaluationFailed,
                "\(self.operator.formatText)\(options.formatSuffix) needs \(problem), but \(path) is \(kind) "
                    + "(a \(attribute.type.modelName) attribute of \(entity.name)) and "
                    + "\(GraftPredicate.Expression.constant(constant)) is \(constantKind), in \(description)",
                context: [.entity(entity.name), .key(path.description)])
        }
    }

    /// The attribute a path of keys ends at, through relationships of either kind.
    private static func attribute(
        at path: KeyValuePath, from entity: EntityDescription, in model: Model
    ) -> Attribute? {
        var current = entity
        for (position, component) in path.components.enumerated() {
            guard case .key(let key) = component else { return nil }
            if position == path.components.count - 1 {
                return current.attributeIndexByName[key].map { current.attributes[$0] }
            }
            guard let relationship = current.relationship(named: key) else { return nil }
            current = model.descriptions[relationship.destinationIndex]
        }
        return nil
    }

    private static func kind(of type: AttributeType) -> String? {
        switch type {
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .boolean: return "a number"
        case .string: return "a String"
        case .date: return "a Date"
        case .uuid: return "a UUID"
        case .uri: return "a URL"
        case .binary: return "Data"
        default: return nil
        }
    }

    private static func kind(of value: Value) -> String {
        switch value {
        case .integer, .double, .decimal, .bool: return "a number"
        case .string: return "a String"
        case .date: return "a Date"
        case .uuid: return "a UUID"
        case .uri: return "a URL"
        case .data: return "Data"
        }
    }
}
