import Foundation
@_spi(GraftInternal) import GraftCore
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
        let copying = try WholeCopy(reader)
        var objects: [Clipboard.Object] = []
        if let total = copying.total { objects.reserveCapacity(total) }
        var used = Set<Int>()
        try reader.forEachSnapshot { snapshot in
            used.insert(snapshot.ref.entity)
            objects.append(try copying.object(snapshot))
            if objects.count % 10_000 == 0 { progress?(objects.count, copying.total) }
        }
        progress?(objects.count, copying.total)
        return Clipboard(
            header: copying.header(roots: objects.map(\.id), used: used, includesModel: includesModel),
            objects: objects)
    }

    /// Copies every object a reader streams into a clipboard document in `encoding`, handed to `sink` in
    /// chunks as it is written, never holding all objects: the same bytes as encoding
    /// ``copyAll(from:includesModel:progress:)``'s clipboard.
    ///
    /// The roots (every object's id, in the order read) come before the objects in the document, and the
    /// entity list holds only the entities used. So the text encodings read the objects' refs first,
    /// when the reader can without reading the objects (``StoreReader/forEachRef(_:)``), then write the
    /// header and the objects as they are read; else they write the objects to a temporary file as they
    /// are read, then the header, then the file's bytes. A binary property list, whose numbering starts
    /// with the header, reads the document twice (the ids and sizes first, then the objects). What is
    /// kept is the ids (16 bytes an object) and, for binary property lists, the offsets. The store is read
    /// on a thread of its own while the objects are written (see ``SnapshotStream``).
    ///
    /// When the header is written first, a read that fails part way has handed `sink` part of the
    /// document (a file written atomically is left as it was).
    ///
    /// For example:
    ///
    /// ```swift
    /// let reader = try Copier.reader(for: url, model: nil)
    /// let copied = try Copier.copyAll(from: reader, encoding: .json) { chunk in
    ///     try handle.write(contentsOf: Data(chunk))
    /// }
    /// print(copied.objects, "objects")
    /// ```
    ///
    /// - Throws: what reading the store throws, what the encoding refuses (see
    ///   ``ClipboardEncoding/encode(_:)``), what `sink` throws.
    public static func copyAll(
        from reader: any StoreReader, includesModel: Bool = true, encoding: ClipboardEncoding,
        to sink: (UnsafeRawBufferPointer) throws -> Void, progress: ((_ done: Int, _ total: Int?) -> Void)? = nil
    ) throws -> StreamedCopy {
        let copying = try WholeCopy(reader)
        var roots: [String] = []
        if let total = copying.total { roots.reserveCapacity(total) }
        // Objects per entity, by index (counted in an array: a set or dictionary per object costs more).
        var counts = [Int](repeating: 0, count: reader.model.descriptions.count)
        func report() { if roots.count % 10_000 == 0 { progress?(roots.count, copying.total) } }
        return try withoutActuallyEscaping(sink) { sink in
            let output = ByteBuffer(sink: sink)
            if encoding == .binaryPlist {
                // The ids and the capacity first; the document's objects are numbered after the roots.
                var capacity = ClipboardWriter.Capacity()
                try SnapshotStream.forEach(of: reader) { snapshot in
                    counts[snapshot.ref.entity] += 1
                    capacity.add(snapshot, layout: copying.layout)
                    roots.append(try copying.localID(snapshot))
                }
                let warnings = reader.warnings
                let header = copying.header(roots: roots, used: copying.used(counts), includesModel: includesModel)
                roots = []
                var writer = try ClipboardWriter(
                    encoding: encoding, header: header, capacity: capacity, output: output)
                var done = 0
                try SnapshotStream.forEach(of: reader) { snapshot in
                    try copying.write(snapshot, with: &writer)
                    done += 1
                    if done % 10_000 == 0 { progress?(done, copying.total) }
                }
                progress?(done, copying.total)
                try writer.finish()
                return StreamedCopy(copying.counts(counts), references: 0, warnings: warnings)
            }
            if let refs = try copying.refs(of: reader) {
                // The header first, from the refs, written while the first objects are read; then the
                // objects as they are read.
                for ref in refs { counts[ref.entity] += 1 }
                // Made by `meanwhile`, which runs before the first batch comes.
                var writer: ClipboardWriter?
                func writeHeader() throws {
                    let header = copying.header(
                        roots: try refs.map { ClipboardLocalID.text(try copying.layout.localID($0)) },
                        used: copying.used(counts), includesModel: includesModel)
                    writer = try ClipboardWriter(encoding: encoding, header: header, capacity: nil, output: output)
                }
                var done = 0
                try SnapshotStream.forEachBatch(of: reader, size: ClipboardWriter.roundSize, meanwhile: writeHeader) {
                    batch in
                    for snapshot in batch {
                        guard done < refs.count && snapshot.ref == refs[done] else {
                            throw GraftError(
                                .malformedInput,
                                "the store changed while it was copied: its objects differ from the keys read first")
                        }
                        done += 1
                    }
                    try copying.write(batch, with: &writer!)
                    progress?(done, copying.total)
                }
                guard done == refs.count else {
                    throw GraftError(
                        .malformedInput,
                        "the store changed while it was copied: it has fewer objects than keys read first")
                }
                try writer!.finish()
                return StreamedCopy(copying.counts(counts), references: 0, warnings: reader.warnings)
            }
            // The objects go to a temporary file, written by a writer whose header (with every entity
            // and no roots) is thrown away; the real header follows the read, then the objects' bytes,
            // then that writer's end.
            let spill = try SpillFile(prefix: "graft-copy")
            defer { spill.remove() }
            let target = SwitchedSink()
            let objectsOutput = ByteBuffer(sink: { try target.forward($0) })
            var objectsWriter = try ClipboardWriter(
                encoding: encoding,
                header: copying.header(roots: [], used: Set(reader.model.descriptions.indices), includesModel: false),
                capacity: nil, output: objectsOutput)
            try objectsOutput.flush()
            target.forward = { try spill.write($0) }
            try SnapshotStream.forEach(of: reader) { snapshot in
                counts[snapshot.ref.entity] += 1
                roots.append(try copying.localID(snapshot))
                try copying.write(snapshot, with: &objectsWriter)
                report()
            }
            progress?(roots.count, copying.total)
            try objectsOutput.flush()
            let header = copying.header(roots: roots, used: copying.used(counts), includesModel: includesModel)
            roots = []
            _ = try ClipboardWriter(encoding: encoding, header: header, capacity: nil, output: output)
            try output.flush()
            try spill.copy(to: sink)
            target.forward = sink
            try objectsWriter.finish()
            return StreamedCopy(copying.counts(counts), references: 0, warnings: reader.warnings)
        }
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

// MARK: - Copying whole documents

extension Copier {
    /// What a streaming copy wrote: how many objects of each entity and references, and what reading
    /// the store had to say that did not stop it.
    public struct StreamedCopy: Sendable {
        /// Objects per entity, entities with none left out.
        public var counts: [String: Int]
        public var objects: Int
        public var references: Int
        public var warnings: [String]

        init(_ counts: [String: Int], references: Int, warnings: [String]) {
            self.counts = counts
            self.objects = counts.values.reduce(0, +)
            self.references = references
            self.warnings = warnings
        }

        /// `{"objects", "counts": {entity: n}, "references", "warnings": […]}`, entities in name order: the
        /// same as ``StoreCopy/json``.
        public var json: JSONValue {
            .object([
                ("objects", .int(Int64(objects))), ("counts", JSONValue.counts(counts)),
                ("references", .int(Int64(references))), ("warnings", .array(warnings.map(JSONValue.string))),
            ])
        }
    }

    /// Copies a selection out of the store document at `url` into a clipboard document in `encoding`,
    /// handed to `sink` in chunks as it is written: a selection of every object with no entity stopped is
    /// streamed (``copyAll(from:includesModel:encoding:to:progress:)``), in bounded memory; any other is
    /// copied (``copy(storeAt:selection:model:options:includesModel:progress:)``) and then encoded.
    ///
    /// For example:
    ///
    /// ```swift
    /// let copied = try Copier.copy(storeAt: url, selection: Selection(roots: [.all]), encoding: .json) { chunk in
    ///     try handle.write(contentsOf: Data(chunk))
    /// }
    /// copied.warnings.forEach { print("warning:", $0) }
    /// ```
    ///
    /// - Throws: what ``copy(storeAt:selection:model:options:includesModel:progress:)`` throws, what the
    ///   encoding refuses, what `sink` throws.
    public static func copy(
        storeAt url: URL, selection: Selection, model: Model? = nil, options: StoreReadOptions = StoreReadOptions(),
        includesModel: Bool = true, encoding: ClipboardEncoding, to sink: (UnsafeRawBufferPointer) throws -> Void,
        progress: ((_ done: Int, _ total: Int?) -> Void)? = nil
    ) throws -> StreamedCopy {
        if selection.takesEverything {
            let reader = try reader(for: url, model: model, options: options)
            try selection.check(against: reader.model)
            return try copyAll(
                from: reader, includesModel: includesModel, encoding: encoding, to: sink, progress: progress)
        }
        let copied = try copy(
            storeAt: url, selection: selection, model: model, options: options, includesModel: includesModel,
            progress: progress)
        try encoding.encode(copied.clipboard, to: sink)
        return StreamedCopy(
            copied.clipboard.counts, references: copied.clipboard.references.count, warnings: copied.warnings)
    }

    /// What copying every object of a reader needs: local ids from keys, and per entity the attributes and
    /// relationships a clipboard carries, resolved once (``SnapshotLayout``).
    private struct WholeCopy {
        let model: Model
        let metadata: StoreMetadata
        let total: Int?
        let layout: SnapshotLayout

        init(_ reader: any StoreReader) throws {
            model = reader.model
            metadata = reader.metadata
            total = reader.objectCount
            layout = SnapshotLayout(model: model, keyOffsets: reader.keyOffsets)
        }

        /// Writes the snapshot's object: straight from the snapshot when its entity fits the entity list
        /// as it is, else made and checked, so that a value no clipboard carries is refused by name.
        func write(_ snapshot: Snapshot, with writer: inout ClipboardWriter) throws {
            if layout.fits[snapshot.ref.entity] {
                try writer.write(snapshot, layout: layout)
            } else {
                try writer.write(try layout.object(snapshot))
            }
        }

        /// Writes the objects of a batch of snapshots, in rounds when every one fits as it is.
        func write(_ batch: [Snapshot], with writer: inout ClipboardWriter) throws {
            if batch.allSatisfy({ layout.fits[$0.ref.entity] }) {
                try writer.write(batch, layout: layout)
            } else {
                for snapshot in batch { try write(snapshot, with: &writer) }
            }
        }

        /// Every object's ref, in the order read, when the reader can read them without the objects.
        func refs(of reader: any StoreReader) throws -> [ObjectRef]? {
            var refs: [ObjectRef] = []
            if let total { refs.reserveCapacity(total) }
            return try reader.forEachRef { refs.append($0) } ? refs : nil
        }

        func object(_ snapshot: Snapshot) throws -> Clipboard.Object { try layout.object(snapshot) }

        /// The local id of the snapshot's object.
        func localID(_ snapshot: Snapshot) throws -> String {
            ClipboardLocalID.text(try layout.localID(snapshot.ref))
        }

        func header(roots: [String], used: Set<Int>, includesModel: Bool) -> Clipboard.Header {
            Clipboard.Header(
                entities: Copier.entityInfo(model, used: used), versionIdentifiers: model.versionIdentifiers,
                sourceStore: metadata.identifier, roots: roots,
                modelContents: includesModel ? XcdatamodelWriter.contents(of: model) : nil)
        }

        /// Objects per entity, by name, from counts by entity index; entities with none left out.
        func counts(_ counts: [Int]) -> [String: Int] {
            var named: [String: Int] = [:]
            for (entity, count) in counts.enumerated() where count > 0 {
                named[model.descriptions[entity].name] = count
            }
            return named
        }

        /// The entities with objects, from counts by entity index.
        func used(_ counts: [Int]) -> Set<Int> { Set(counts.indices.filter { counts[$0] > 0 }) }
    }

    /// A sink whose destination changes.
    private final class SwitchedSink {
        var forward: (UnsafeRawBufferPointer) throws -> Void = { _ in }
    }
}
