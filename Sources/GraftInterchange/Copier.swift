import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Copies a selection of objects into a clipboard document.
///
/// For example:
///
/// ```swift
/// let copier = Copier(source: StoreSource(try StoreFormat.openForReading(url, model: nil)))
/// let clipboard = try copier.copy(Selection(roots: [.predicate(entity: "Department", format: "name == 'Sales'")]))
/// ```
public struct Copier {
    public let source: any SnapshotSource
    /// Whether clipboards carry the whole source model (so that a paste can create a store with it).
    public var includesModel: Bool

    public init(source: any SnapshotSource, includesModel: Bool = true) {
        self.source = source
        self.includesModel = includesModel
    }

    /// What a selection would take, without copying: objects per entity, and each relationship that
    /// leaves the selection with the rule that decided it.
    public struct Plan: Sendable {
        public var roots: [ObjectRef]
        /// Every object taken, roots first, in the order the selection reached them.
        public var objects: [ObjectRef]
        /// Relationships from taken objects to objects left out.
        public var exits: [Exit]
        /// The objects read while planning, so that the copy does not read them again.
        var snapshots: [ObjectRef: Snapshot] = [:]

        /// `{"objects", "roots", "counts": {entity: n}, "exits": [{"from", "relationship", "to", "rule"}],
        /// "warnings": […]}`: objects named `Entity p<key>`, relationships `Entity.relationship`, entities in
        /// name order; `warnings` are what reading the source had to say.
        public func json(model: Model, warnings: [String] = []) -> JSONValue {
            func label(_ ref: ObjectRef) -> JSONValue { .string("\(model.descriptions[ref.entity].name) p\(ref.key)") }
            var counts: [String: Int] = [:]
            for ref in objects { counts[model.descriptions[ref.entity].name, default: 0] += 1 }
            return .object([
                ("objects", .int(Int64(objects.count))), ("roots", .int(Int64(roots.count))),
                ("counts", JSONValue.counts(counts)),
                (
                    "exits",
                    .array(
                        exits.map {
                            .object([
                                ("from", label($0.from)),
                                (
                                    "relationship",
                                    .string("\(model.descriptions[$0.from.entity].name).\($0.relationship)")
                                ),
                                ("to", label($0.to)), ("rule", .string($0.rule.description)),
                            ])
                        })
                ),
                ("warnings", .array(warnings.map(JSONValue.string))),
            ])
        }

        public struct Exit: Hashable, Sendable {
            public var from: ObjectRef
            public var relationship: String
            public var to: ObjectRef
            public var rule: Selection.Rule
        }
    }

    /// The objects a selection takes.
    ///
    /// - Throws: `GraftError.notFound` for unknown entities, relationships, URIs or keys;
    ///   `GraftError.syntaxError` for a predicate that does not parse.
    public func plan(_ selection: Selection) throws -> Plan {
        let model = source.model
        try selection.check(against: model)
        var roots: [ObjectRef] = []
        var seenRoots = Set<ObjectRef>()
        func addRoot(_ ref: ObjectRef) {
            if seenRoots.insert(ref).inserted { roots.append(ref) }
        }
        for root in selection.roots {
            switch root {
            case .all:
                for entity in model.descriptions where entity.superentityIndex == nil {
                    try source.refs(matching: FetchRequest(entityName: entity.name)).forEach(addRoot)
                }
            case .predicate(let entityName, let format):
                _ = try model.requireEntity(entityName)
                let predicate =
                    format.trimmingCharacters(in: .whitespaces).isEmpty ? nil : try GraftPredicate(format: format)
                try source.refs(matching: FetchRequest(entityName: entityName, predicate: predicate)).forEach(addRoot)
            case .uris(let uris):
                for uri in uris {
                    let (store, id) = try ObjectID.parse(uri: uri, model: model)
                    if let expected = source.storeIdentifier, store != expected {
                        throw GraftError(.notFound, "\(uri) belongs to store \(store), not to this one (\(expected))")
                    }
                    let ref = id.ref
                    guard try source.snapshot(for: ref) != nil else {
                        throw GraftError(.notFound, "no object has the URI \(uri)")
                    }
                    addRoot(ref)
                }
            case .keys(let entityName, let keys):
                let entity = try model.requireEntity(entityName)
                for key in keys {
                    // The key names an object of the entity or one of its subentities.
                    let candidates = [entity.index] + entity.descendantIndices
                    guard
                        let ref = try candidates.lazy.map({ ObjectRef(entity: $0, key: key) }).first(where: {
                            try source.snapshot(for: $0) != nil
                        })
                    else {
                        throw GraftError(.notFound, "\(entityName) has no object with key \(key)")
                    }
                    addRoot(ref)
                }
            case .refs(let refs):
                refs.forEach(addRoot)
            }
        }

        // Breadth first from the roots; each object taken once.
        var taken = Set(roots)
        var order = roots
        var exits: [Plan.Exit] = []
        var queue: [(ref: ObjectRef, depth: Int)] = roots.map { ($0, 0) }
        var head = 0
        var snapshots: [ObjectRef: Snapshot] = [:]
        while head < queue.count {
            let (ref, depth) = queue[head]
            head += 1
            guard let snapshot = try source.snapshot(for: ref) else { continue }
            snapshots[ref] = snapshot
            let entity = model.descriptions[ref.entity]
            for relationship in entity.relationships where !relationship.isTransient {
                let destination = model.descriptions[relationship.destinationIndex]
                for target in snapshot.relationships[relationship.index].refs where !taken.contains(target) {
                    let rule = selection.rule(
                        for: relationship, of: entity, destination: destination,
                        target: model.descriptions[target.entity],
                        depth: depth, model: model)
                    switch rule {
                    case .cascade, .followed:
                        taken.insert(target)
                        order.append(target)
                        queue.append((target, depth + 1))
                    default:
                        exits.append(Plan.Exit(from: ref, relationship: relationship.name, to: target, rule: rule))
                    }
                }
            }
        }
        // An exit may lead to an object taken later along another path: that is a link, not an exit.
        exits.removeAll { taken.contains($0.to) }
        return Plan(roots: roots, objects: order, exits: exits, snapshots: snapshots)
    }

    /// Copies the selection.
    public func copy(_ selection: Selection) throws -> Clipboard {
        let plan = try plan(selection)
        return try clipboard(for: plan, selection: selection)
    }

    /// The clipboard document for a plan.
    public func clipboard(for plan: Plan, selection: Selection) throws -> Clipboard {
        let model = source.model
        var localIDs: [ObjectRef: String] = [:]
        localIDs.reserveCapacity(plan.objects.count)
        for (offset, ref) in plan.objects.enumerated() { localIDs[ref] = "o\(offset + 1)" }
        var referenceIDs: [ObjectRef: String] = [:]
        var references: [Clipboard.Reference] = []
        var usedEntities = Set<Int>()

        func referenceID(for ref: ObjectRef) throws -> String {
            if let id = referenceIDs[ref] { return id }
            let id = "r\(references.count + 1)"
            referenceIDs[ref] = id
            let entity = model.descriptions[ref.entity]
            usedEntities.insert(entity.index)
            var identity: [Clipboard.NamedValue] = []
            let names = selection.identity(of: entity, in: model)
            if !names.isEmpty, let snapshot = try plan.snapshots[ref] ?? source.snapshot(for: ref) {
                for name in names {
                    if let index = entity.attributeIndexByName[name], let value = snapshot.attributes[index] {
                        identity.append(.init(name, value))
                    }
                }
            }
            references.append(
                Clipboard.Reference(id: id, entity: entity.name, identity: identity, uri: source.uri(of: ref)))
            return id
        }

        var objects: [Clipboard.Object] = []
        objects.reserveCapacity(plan.objects.count)
        for ref in plan.objects {
            guard let snapshot = try plan.snapshots[ref] ?? source.snapshot(for: ref) else {
                throw GraftError(
                    .notFound, "the object disappeared while being copied", context: [.object(source.uri(of: ref))])
            }
            let entity = model.descriptions[ref.entity]
            usedEntities.insert(entity.index)
            var attributes: [Clipboard.NamedValue] = []
            for (index, attribute) in entity.attributes.enumerated() where !attribute.isTransient {
                if let value = snapshot.attributes[index] { attributes.append(.init(attribute.name, value)) }
            }
            var links: [Clipboard.Link] = []
            for relationship in entity.relationships where !relationship.isTransient {
                let targets = snapshot.relationships[relationship.index].refs
                guard !targets.isEmpty else { continue }
                links.append(.init(relationship.name, try targets.map { try localIDs[$0] ?? referenceID(for: $0) }))
            }
            objects.append(
                Clipboard.Object(id: localIDs[ref]!, entity: entity.name, attributes: attributes, relationships: links))
        }
        return Clipboard(
            entities: Self.entityInfo(model, used: usedEntities), versionIdentifiers: model.versionIdentifiers,
            sourceStore: source.storeIdentifier, roots: plan.roots.map { localIDs[$0]! }, objects: objects,
            references: references, modelContents: includesModel ? XcdatamodelWriter.contents(of: model) : nil)
    }

    /// Copies every object a reader streams, reading the document once, in its order: the same clipboard
    /// as `copy(Selection(roots: [.all]))` up to the local ids, in a fraction of the time, since nothing is
    /// looked up object by object.
    ///
    /// Local ids come from the objects' keys (`o` and the key, moved up by the document's key offset for
    /// its inheritance tree), so a link can name an object before it is read. Read stores with
    /// ``reader(for:model:options:)`` (or `danglingReferences: .drop`), so that links to objects that do not
    /// exist are left out.
    ///
    /// - Parameter progress: called now and then with the objects copied so far and the total, when known.
    public static func copyAll(
        from reader: any StoreReader, includesModel: Bool = true,
        progress: ((_ done: Int, _ total: Int?) -> Void)? = nil
    ) throws -> Clipboard {
        let model = reader.model
        let offsets = reader.keyOffsets
        let rootOffsets = model.descriptions.map { offsets[$0.rootIndex] ?? 0 }
        func localID(_ ref: ObjectRef) throws -> String {
            let (id, overflow) = rootOffsets[ref.entity].addingReportingOverflow(ref.key)
            guard !overflow else {
                throw GraftError(
                    .malformedInput,
                    "\(model.descriptions[ref.entity].name) p\(ref.key) cannot be given a local id: its key, moved up by "
                        + "its tree's offset \(rootOffsets[ref.entity]) to keep the document's keys apart, passes \(Int64.max)"
                )
            }
            return "o\(id)"
        }
        var objects: [Clipboard.Object] = []
        let total = reader.objectCount
        if let total { objects.reserveCapacity(total) }
        var used = Set<Int>()
        // Per entity, the attributes and relationships a clipboard carries, resolved once.
        let attributeLists = model.descriptions.map { entity in
            entity.attributes.enumerated().filter { !$0.element.isTransient }.map { ($0.offset, $0.element.name) }
        }
        let relationshipLists = model.descriptions.map { entity in
            entity.relationships.filter { !$0.isTransient }.map { ($0.index, $0.name) }
        }
        try reader.forEachSnapshot { snapshot in
            let entity = snapshot.ref.entity
            used.insert(entity)
            var attributes: [Clipboard.NamedValue] = []
            attributes.reserveCapacity(attributeLists[entity].count)
            for (index, name) in attributeLists[entity] {
                if let value = snapshot.attributes[index] { attributes.append(.init(name, value)) }
            }
            var links: [Clipboard.Link] = []
            for (index, name) in relationshipLists[entity] {
                let targets = snapshot.relationships[index].refs
                if !targets.isEmpty { links.append(.init(name, try targets.map(localID))) }
            }
            objects.append(
                Clipboard.Object(
                    id: try localID(snapshot.ref), entity: model.descriptions[entity].name, attributes: attributes,
                    relationships: links))
            if objects.count % 10_000 == 0 { progress?(objects.count, total) }
        }
        progress?(objects.count, total)
        return Clipboard(
            entities: entityInfo(model, used: used), versionIdentifiers: model.versionIdentifiers,
            sourceStore: reader.metadata.identifier, roots: objects.map(\.id), objects: objects,
            modelContents: includesModel ? XcdatamodelWriter.contents(of: model) : nil)
    }

    /// The document's entity list: each entity used, with its attribute types and relationship kinds.
    static func entityInfo(_ model: Model, used: Set<Int>) -> [Clipboard.EntityInfo] {
        model.descriptions.filter { used.contains($0.index) }.sorted { $0.name < $1.name }.map { entity in
            Clipboard.EntityInfo(
                name: entity.name, versionHash: entity.versionHash,
                attributes: entity.attributes.filter { !$0.isTransient }.map { .init(name: $0.name, type: $0.type) },
                relationships: entity.relationships.filter { !$0.isTransient }.map {
                    .init(name: $0.name, isToMany: $0.isToMany, isOrdered: $0.isOrdered)
                })
        }
    }
}

// MARK: - Opening documents to copy from

extension Copier {
    /// What ``copy(storeAt:selection:model:options:includesModel:)`` copied, and what reading the store
    /// had to say that did not stop it (how its model was found, values read as absent, links left out).
    public struct StoreCopy {
        public var clipboard: Clipboard
        public var warnings: [String]

        /// `{"objects", "counts": {entity: n}, "references", "warnings": […]}`, entities in name order.
        public var json: JSONValue {
            .object([
                ("objects", .int(Int64(clipboard.objects.count))), ("counts", JSONValue.counts(clipboard.counts)),
                ("references", .int(Int64(clipboard.references.count))),
                ("warnings", .array(warnings.map(JSONValue.string))),
            ])
        }
    }

    /// Copies a selection out of the store document at `url`, never changing it, the fastest way the
    /// selection allows: a selection of every object with no entity stopped is one streaming pass over
    /// the document (``copyAll(from:includesModel:)``); any other selection opens the store for reading
    /// and follows relationships from its roots, reading only the objects it takes.
    ///
    /// For example:
    ///
    /// ```swift
    /// let copied = try Copier.copy(storeAt: url, selection: Selection(roots: [.all]))
    /// copied.warnings.forEach { print("warning:", $0) }
    /// try ClipboardEncoding.json.encode(copied.clipboard) { chunk in … }
    /// ```
    ///
    /// - Parameters:
    ///   - model: the store's model; by default its own.
    ///   - progress: called now and then, on the streaming pass, with the objects copied so far and the
    ///     total, when known.
    /// - Throws: what opening or reading the store throws; what ``plan(_:)`` throws for the selection.
    public static func copy(
        storeAt url: URL, selection: Selection, model: Model? = nil, options: StoreReadOptions = StoreReadOptions(),
        includesModel: Bool = true, progress: ((_ done: Int, _ total: Int?) -> Void)? = nil
    ) throws -> StoreCopy {
        if selection.takesEverything {
            let reader = try reader(for: url, model: model, options: options)
            try selection.check(against: reader.model)
            let clipboard = try copyAll(from: reader, includesModel: includesModel, progress: progress)
            return StoreCopy(clipboard: clipboard, warnings: reader.warnings)
        }
        let store = try StoreFormat.openForReading(url, model: model, options: options)
        let clipboard = try Copier(source: StoreSource(store), includesModel: includesModel).copy(selection)
        return StoreCopy(clipboard: clipboard, warnings: store.warnings)
    }

    /// A streaming reader for copying a whole document with ``copyAll(from:includesModel:)``: links to
    /// objects the document does not have are left out (each named in a warning); `options` say what to
    /// do with values whose external file is missing and values not of their attribute's type or range.
    ///
    /// To copy a selection, open the store with ``StoreFormat/openForReading(_:model:options:)`` and read
    /// its `warnings` after the copy.
    ///
    /// - Throws: what the format's ``StoreDriver/reader(at:model:options:)`` throws.
    public static func reader(
        for url: URL, model: Model?, options: StoreReadOptions = StoreReadOptions()
    ) throws -> any StoreReader {
        var options = options
        options.danglingReferences = .drop
        return try StoreFormat.detect(url).driver.reader(at: url, model: model, options: options)
    }
}
