import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// A clipboard's objects, read in document order, as many times as a paste needs.
protocol ClipboardObjectSource {
    /// Everything the document says besides its objects.
    var header: Clipboard.Header { get }
    /// The next object, or nil after the last.
    mutating func next() throws -> Clipboard.Object?
    /// Back to the first object.
    mutating func rewind() throws
    /// Whether ``next()`` may leave the objects' attribute values out (a pass over the graph's shape).
    var skipsValues: Bool { get set }
    /// Whether ``next()`` may leave the objects' relationships out (a pass that knows the shape already).
    var skipsLinks: Bool { get set }
    /// The objects' shape when the source read it already (with the header), once; nil otherwise.
    mutating func takeShape() -> PasteShape?
}

extension ClipboardObjectSource {
    mutating func takeShape() -> PasteShape? { nil }
}

/// The objects of a clipboard in memory.
struct ClipboardObjects: ClipboardObjectSource {
    let clipboard: Clipboard
    private var position = 0

    init(_ clipboard: Clipboard) { self.clipboard = clipboard }

    var header: Clipboard.Header { clipboard.header }
    /// Ignored: the values are in memory already.
    var skipsValues = false
    /// Ignored: the relationships are in memory already.
    var skipsLinks = false

    mutating func next() throws -> Clipboard.Object? {
        guard position < clipboard.objects.count else { return nil }
        defer { position += 1 }
        return clipboard.objects[position]
    }

    mutating func rewind() { position = 0 }
}

/// A clipboard file's objects, read by a ``ClipboardReader``; errors name the file.
struct FileObjects: ClipboardObjectSource {
    var reader: ClipboardReader
    let path: String
    private var shape: PasteShape?

    /// The objects of the file at `url`, their shape read with the header where the encoding allows it
    /// (see ``ClipboardReader/init(contentsOf:visiting:)``), so that a paste's first pass costs no read
    /// of its own.
    init(contentsOf url: URL, path: String) throws {
        var shape: PasteShape?
        reader = try ClipboardReader(contentsOf: url) { object, entities in
            if shape == nil { shape = PasteShape(entities: entities) }
            try shape!.add(object)
        }
        // A document without objects has an empty shape.
        if reader.visitedObjects && shape == nil { shape = PasteShape(entities: reader.header.entities) }
        self.shape = reader.visitedObjects ? shape : nil
        self.path = path
    }

    mutating func takeShape() -> PasteShape? {
        defer { shape = nil }
        return shape
    }

    var header: Clipboard.Header { reader.header }
    var skipsValues: Bool {
        get { reader.skipsValues }
        set { reader.skipsValues = newValue }
    }
    var skipsLinks: Bool {
        get { reader.skipsLinks }
        set { reader.skipsLinks = newValue }
    }

    mutating func next() throws -> Clipboard.Object? {
        do {
            return try reader.next()
        } catch let error as GraftError {
            if case .file? = error.context.first { throw error }
            throw error.inFile(path)
        }
    }

    mutating func rewind() { reader.rewind() }
}

/// How the first pass writes where a link points: an object's slot, or a reference's index.
struct PasteLayout {
    var entityOfSlot: [UInt16] = []
    /// Per slot, its object's id.
    var ids = LocalIDList()
    /// Slot of the object numbered n (Graft's `o<n>` ids), or -1.
    var slotOfNumber: [Int32] = []
    var slotOfOther: [String: Int32] = [:]
    /// Per slot, its first link; one more entry at the end.
    var firstLink: [Int32] = [0]
    /// Per link: target relationship index (or `UInt16.max` when the target model lacks it), end of its
    /// targets.
    var linkRelationship: [UInt16] = []
    var linkEnd: [Int32] = []
    /// Per link target, while reading: the target's id number (≥ 0, below 2³¹) or another id (`Int32.min +`
    /// an index in `pendingIDs`); then the slot, or a negative number for a reference. Four bytes a
    /// target: a large clipboard has millions.
    var targets: [Int32] = []
    var pendingIDs: [String] = []
    var count: Int { entityOfSlot.count }

    static func number(_ id: String) -> Int64? { LocalIDTable.objectNumber(id) }

    /// Records the object's id; false when the document used it already.
    mutating func add(id: String, slot: Int32) -> Bool {
        // Numbers far beyond the objects read so far go the general way, so a hostile id cannot
        // make the table huge.
        if let number = Self.number(id), number < Int64(slotOfNumber.count) + (1 << 20) {
            let index = Int(number)
            if index >= slotOfNumber.count {
                slotOfNumber.append(contentsOf: repeatElement(-1, count: index + 1 - slotOfNumber.count))
            }
            guard slotOfNumber[index] < 0 else { return false }
            slotOfNumber[index] = slot
            ids.append(number: number)
            return true
        }
        guard slotOfOther.updateValue(slot, forKey: id) == nil else { return false }
        ids.append(other: id)
        return true
    }

    func slot(of id: String) -> Int32? {
        if let number = Self.number(id), number < Int64(slotOfNumber.count) {
            let slot = slotOfNumber[Int(number)]
            if slot >= 0 { return slot }
        }
        return slotOfOther[id]
    }

    func id(of slot: Int) -> String { ids[slot] }

    /// Leaves each link's targets the objects it names, each once, in the order first named: references
    /// (negative once the targets are slots) go, as the engine links a target once.
    mutating func keepLinkedObjects() {
        var kept = 0
        var start = 0
        for link in linkEnd.indices {
            let first = kept
            let end = Int(linkEnd[link])
            var seen = end - start > 32 ? Set<Int32>() : nil
            for at in start..<end where targets[at] >= 0 {
                let target = targets[at]
                if seen != nil ? seen!.insert(target).inserted : !targets[first..<kept].contains(target) {
                    targets[kept] = target
                    kept += 1
                }
            }
            start = end
            linkEnd[link] = Int32(kept)
        }
        targets.removeLast(targets.count - kept)
    }
}

/// The first pass of a streaming paste: per object, its entity, its id and where its links point, as
/// numbers; the values wait for the second pass. Read from the clipboard alone (its entity list), so that
/// a reader can make it while it reads the header, before the paste knows its target.
struct PasteShape {
    let entities: [Clipboard.EntityInfo]
    private let entityNumber: [String: Int]
    /// Clipboard relationship names per entity (objects list them in this order).
    private let relationshipNumbers: [[(name: String, index: Int?)]]
    var layout = PasteLayout()
    /// Per link, its relationship's index in the clipboard entity.
    var clipboardRelationship: [UInt16] = []
    /// Per clipboard entity, whether any object has it.
    var hasObjects: [Bool]
    private var entity = -1

    init(entities: [Clipboard.EntityInfo]) {
        self.entities = entities
        entityNumber = Dictionary(
            entities.enumerated().map { ($0.element.name, $0.offset) }, uniquingKeysWith: { first, _ in first })
        relationshipNumbers = entities.map { info in
            info.relationships.enumerated().map { (name: $0.element.name, index: Optional($0.offset)) }
        }
        hasObjects = [Bool](repeating: false, count: entities.count)
    }

    /// Adds the next object. A target is kept as its id's number (`o12` → 12) or, for ids of any other
    /// form (or numbers of 2³¹ and more), as `Int32.min +` an index in the layout's pending ids: which of
    /// them are references is settled once the references are known.
    mutating func add(_ object: Clipboard.Object) throws {
        // Objects of one entity come together: the previous object's entity is tried first.
        if entity < 0 || entities[entity].name != object.entity {
            guard let number = entityNumber[object.entity] else {
                throw GraftError(
                    .malformedInput,
                    "the object names entity \(object.entity), which the document does not describe",
                    context: [.object(object.id)])
            }
            entity = number
        }
        let slot = Int32(layout.count)
        guard layout.add(id: object.id, slot: slot) else {
            throw GraftError(.malformedInput, "the id is used twice", context: [.object(object.id)])
        }
        layout.entityOfSlot.append(UInt16(entity))
        hasObjects[entity] = true
        var cursor = 0
        for link in object.relationships {
            guard let number = PasteEngine.match(link.name, in: relationshipNumbers[entity], cursor: &cursor) else {
                throw GraftError(
                    .malformedInput,
                    "\(object.entity) has no relationship '\(link.name)' in the document's entity list",
                    context: [.object(object.id), .key(link.name)])
            }
            for target in link.targets {
                if let number = PasteLayout.number(target), number <= Int32.max {
                    layout.targets.append(Int32(number))
                } else {
                    layout.targets.append(Int32.min + Int32(layout.pendingIDs.count))
                    layout.pendingIDs.append(target)
                }
            }
            clipboardRelationship.append(UInt16(number))
            layout.linkEnd.append(Int32(layout.targets.count))
        }
        layout.firstLink.append(Int32(layout.linkEnd.count))
    }
}

/// A paste into a new document, streamed: the objects are read twice, and never held all at once.
///
/// The first pass keeps, per object, only its entity and where its links point (as numbers); the second
/// builds each object's snapshot, checks it and hands it to the store writer. What the result is, is the
/// paste engine's (``PasteEngine``): every object new, links as the clipboard states them with both
/// sides kept, defaults for attributes the clipboard's model lacked, keys one sequence per tree in tree
/// order. When the objects break a rule or their links contradict each other, the written file is
/// dropped and the paste is made again by the engine in memory, which names every object involved (a
/// rare, slow path).
struct StreamingPaste<Source: ClipboardObjectSource> {
    let model: Model
    let options: PasteOptions

    /// What the streaming paste found, or that it must be made in memory.
    enum Outcome {
        case pasted(PasteReport)
        /// The objects break a rule or contradict each other: the caller pastes in memory instead, with
        /// the keys the store already gave, per tree.
        case needsEngine(keys: [Int: [Int64]])
    }

    /// Where the objects go.
    enum Destination {
        /// A new document at the URL, in the format, with the metadata.
        case newDocument(URL, StoreFormat, StoreMetadata)
        /// A store with no objects.
        case emptyStore(any StreamingInserts)

        var identifier: String {
            switch self {
            case .newDocument(_, _, let metadata): metadata.identifier
            case .emptyStore(let store): store.identifier
            }
        }
    }

    /// Pastes into a new document at `url`, streaming.
    func run(
        _ source: inout Source, into url: URL, format: StoreFormat, metadata: StoreMetadata,
        progress: ((_ done: Int, _ total: Int?) -> Void)?
    ) throws -> Outcome {
        try run(&source, to: .newDocument(url, format, metadata), progress: progress)
    }

    /// Pastes into `destination`, streaming.
    func run(
        _ source: inout Source, to destination: Destination, progress: ((_ done: Int, _ total: Int?) -> Void)?
    ) throws -> Outcome {
        let header = source.header
        let referenceNumber = Dictionary(
            header.references.enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: { first, _ in first })

        // First pass: entities, ids and links, unless the source read them with the header; the values wait
        // for the second.
        var shape: PasteShape
        if let read = source.takeShape() {
            shape = read
        } else {
            source.skipsValues = true
            defer { source.skipsValues = false }
            shape = PasteShape(entities: header.entities)
            while let object = try source.next() { try shape.add(object) }
        }
        var layout = shape.layout
        var clipboardRelationship = shape.clipboardRelationship
        let hasObjects = shape.hasObjects
        shape = PasteShape(entities: [])
        for root in header.roots where layout.slot(of: root) == nil {
            throw GraftError(.malformedInput, "the root '\(root)' is not an object of the document")
        }

        let objectEntities = Set(header.entities.indices.filter { hasObjects[$0] }.map { header.entities[$0].name })
        var plan = try PastePlan(
            clipboard: Clipboard(header: header, objects: []), model: model, options: options,
            objectEntities: objectEntities)
        try plan.resolve(using: EmptyTarget(model: model, identifier: destination.identifier))
        var report = plan.report(dryRun: options.dryRun)

        // Per clipboard entity: its mapping, and its properties' positions in the target.
        let entries = PasteEntry.entries(of: plan)
        // Links are in slot order: each link's entity is found through its slot as the loop goes.
        var slot = 0
        for link in clipboardRelationship.indices {
            while Int(layout.firstLink[slot + 1]) <= link { slot += 1 }
            let index = entries[Int(layout.entityOfSlot[slot])]?.relationships[Int(clipboardRelationship[link])].index
            layout.linkRelationship.append(index.map(UInt16.init) ?? UInt16.max)
        }

        // Where each target is: a slot, or a reference (dropped: a new document has nothing to link to).
        // References with ids of the form objects have (`o12`) are rare: only then is a numbered target
        // looked up among them.
        let referencesHaveObjectIDs = referenceNumber.keys.contains { PasteLayout.number($0) != nil }
        for at in layout.targets.indices {
            let code = layout.targets[at]
            let slot: Int32?
            if code >= 0 {
                if referencesHaveObjectIDs && referenceNumber["o\(code)"] != nil {
                    layout.targets[at] = -1
                    continue
                }
                slot = Int(code) < layout.slotOfNumber.count ? layout.slotOfNumber[Int(code)] : nil
            } else {
                let id = layout.pendingIDs[Int(code) - Int(Int32.min)]
                if !referenceNumber.isEmpty && referenceNumber[id] != nil { continue }
                slot = layout.slot(of: id)
            }
            guard let slot, slot >= 0 else {
                let link = Int(linkIndex(containing: at, in: layout))
                let source = self.slot(ofLink: link, in: layout)
                let target = code >= 0 ? "o\(code)" : layout.pendingIDs[Int(code) - Int(Int32.min)]
                let info = header.entities[Int(layout.entityOfSlot[source])]
                let name = info.relationships[Int(clipboardRelationship[link])].name
                throw GraftError(
                    .malformedInput, "refers to '\(target)', which the document does not have",
                    context: [.object(layout.id(of: source)), .key(name)])
            }
            layout.targets[at] = slot
        }
        layout.pendingIDs = []
        clipboardRelationship = []
        layout.keepLinkedObjects()

        // Keys: for a new document one sequence, tree after tree; for a store, each tree's own. Objects of
        // each tree in document order.
        let targetEntity = layout.entityOfSlot.map { entries[Int($0)]?.mapping.target.index ?? -1 }
        // The keys a store gave are kept, so that a paste handed to the engine uses them.
        var allocated: [Int: [Int64]] = [:]
        let keys = try {
            var base: Int64 = 0
            var treeKeys = try TreeKeys(
                roots: targetEntity.lazy.filter { $0 >= 0 }.map { self.model.descriptions[$0].rootIndex }
            ) { root, count in
                switch destination {
                case .newDocument:
                    defer { base += Int64(count) }
                    return (0..<Int64(count)).map { base + 1 + $0 }
                case .emptyStore(let store):
                    return try store.allocateKeys(rootEntity: root, count: count)
                }
            }
            if case .emptyStore = destination { allocated = treeKeys.given }
            return targetEntity.map { entity in
                entity >= 0 ? treeKeys.next(root: model.descriptions[entity].rootIndex) : 0
            }
        }()
        func ref(_ slot: Int) -> ObjectRef { ObjectRef(entity: targetEntity[slot], key: keys[slot]) }
        report.inserted = [:]
        for entity in targetEntity where entity >= 0 {
            report.inserted[model.descriptions[entity].name, default: 0] += 1
        }

        // The other side of each link, where the clipboard did not state it.
        guard let extras = inverses(layout, targetEntity: targetEntity) else { return .needsEngine(keys: allocated) }

        // Second pass: snapshots, made and checked on a thread of their own while the writer writes them.
        // Where links point is known now, so the pass reads the values only.
        source.skipsValues = false
        source.skipsLinks = true
        defer { source.skipsLinks = false }
        try source.rewind()
        var writer: (any StoreWriter)?
        if !options.dryRun {
            switch destination {
            case .newDocument(let url, let format, let metadata):
                writer = try format.driver.writer(at: url, model: model, metadata: metadata, overwrite: false)
            case .emptyStore(let store):
                writer = try store.inserter()
            }
        }
        var pass = source
        let rules = RuleCheck(model: model)
        let produce: (_ emit: (inout Snapshot) throws -> Void) throws -> Void = { [layout] emit in
            var extra = 0
            var slot = 0
            // One snapshot, emptied for each object of the entity it has, so that its arrays are made once:
            // the stream takes it and gives back a spent one of the same entity, or copies it.
            var snapshot = Snapshot(ref: ObjectRef(entity: -1, key: 0), attributes: [], relationships: [])
            while let object = try pass.next() {
                defer { slot += 1 }
                guard let entry = entries[Int(layout.entityOfSlot[slot])] else { continue }
                let entity = entry.mapping.target
                if snapshot.ref.entity == entity.index {
                    snapshot.clear(key: keys[slot], entity: entity)
                } else {
                    snapshot = Snapshot(entity: entity, key: keys[slot])
                }
                try entry.give(object, to: &snapshot)
                var start =
                    slot == 0 || layout.firstLink[slot] == 0 ? 0 : Int(layout.linkEnd[Int(layout.firstLink[slot]) - 1])
                for link in Int(layout.firstLink[slot])..<Int(layout.firstLink[slot + 1]) {
                    defer { start = Int(layout.linkEnd[link]) }
                    let index = Int(layout.linkRelationship[link])
                    guard index != Int(UInt16.max) else { continue }
                    let codes = layout.targets[start..<Int(layout.linkEnd[link])]
                    guard entity.relationships[index].isToMany else {
                        if let code = codes.first { snapshot.relationships[index] = .toOne(ref(Int(code))) }
                        continue
                    }
                    var refs = snapshot.takeToMany(at: index)
                    for code in codes { refs.append(ref(Int(code))) }
                    snapshot.relationships[index] = .toMany(refs)
                }
                while extra < extras.count, extras[extra].slot == Int32(slot) {
                    let (_, index, from) = extras[extra]
                    extra += 1
                    switch snapshot.relationships[Int(index)] {
                    case .toMany(var refs):
                        snapshot.relationships[Int(index)] = .unloaded
                        refs.append(ref(Int(from)))
                        snapshot.relationships[Int(index)] = .toMany(refs)
                    default:
                        snapshot.relationships[Int(index)] = .toOne(ref(Int(from)))
                    }
                }
                // Each object's own rules are checked as it is made, so that both threads have half of the
                // work: writing is the longer half.
                guard rules.violations(in: snapshot, object: "").isEmpty else { throw Handover() }
                try emit(&snapshot)
            }
        }
        // Uniqueness, which needs the objects before, where the snapshots are written. Hashes only: a clash,
        // real or not, hands the paste to the engine, which checks exactly.
        var perEntity = Array(repeating: 0, count: model.descriptions.count)
        for entity in targetEntity where entity >= 0 { perEntity[entity] += 1 }
        var uniqueness = UniquenessHashes(model: model, objectsPerEntity: perEntity)
        func check(_ snapshot: Snapshot) throws {
            guard uniqueness.add(snapshot) else { throw Handover() }
        }
        do {
            guard writer != nil else {
                try produce { try check($0) }
                return .pasted(report)
            }
            var written = 0
            try SnapshotStream.run(handingOver: produce) { snapshot in
                try check(snapshot)
                try writer!.write(snapshot)
                written += 1
                if written % 10_000 == 0 { progress?(written, layout.count) }
            }
            progress?(written, layout.count)
            if var file = writer as? any StoreFileWriter {
                try file.finishHoldingLock().release()
            } else {
                try writer!.finish()
            }
        } catch is Handover {
            writer?.cancel()
            return .needsEngine(keys: allocated)
        } catch {
            writer?.cancel()
            throw error
        }
        let names = model.descriptions.map(\.name)
        report.idMapStorage = .compact(
            PasteReport.CompactIDMap(
                ids: layout.ids, entities: targetEntity.map(Int32.init),
                keys: keys, entityNames: names, storeIdentifier: destination.identifier))
        return .pasted(report)
    }

    /// Thrown by the second pass where the paste needs the engine: a rule broken, or values that may clash.
    private struct Handover: Error {}

    /// The slot whose links include `link`.
    private func slot(ofLink link: Int, in layout: PasteLayout) -> Int {
        var low = 0, high = layout.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if Int(layout.firstLink[middle]) <= link { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// The index of the link whose targets include position `at`.
    private func linkIndex(containing at: Int, in layout: PasteLayout) -> Int32 {
        var low = 0, high = layout.linkEnd.count - 1
        while low < high {
            let middle = (low + high) / 2
            if Int(layout.linkEnd[middle]) <= at { low = middle + 1 } else { high = middle }
        }
        return Int32(low)
    }

    /// The inverse entries the clipboard does not state, sorted by the slot that gets them (slot,
    /// relationship, the object it points to); nil when two links contradict each other.
    private func inverses(
        _ layout: PasteLayout, targetEntity: [Int]
    ) -> [(slot: Int32, relationship: UInt16, from: Int32)]? {
        var sides = LayoutSides(facts: RelationshipFacts(model: model), layout: layout, targetEntity: targetEntity)
        var start = 0
        var slot = 0
        do {
            for link in layout.linkRelationship.indices {
                defer { start = Int(layout.linkEnd[link]) }
                while Int(layout.firstLink[slot + 1]) <= link { slot += 1 }
                let index = Int(layout.linkRelationship[link])
                guard index != Int(UInt16.max), targetEntity[slot] >= 0 else { continue }
                let targets = layout.targets[start..<Int(layout.linkEnd[link])].lazy.map(Int.init)
                try sides.linkInverses(of: slot, index, to: targets.filter { targetEntity[$0] >= 0 })
            }
        } catch {
            return nil
        }
        // In slot order; within a slot, in the order the links were read.
        return sides.extras.enumerated().sorted { ($0.element.slot, $0.offset) < ($1.element.slot, $1.offset) }.map(
            \.element)
    }
}

/// The objects of a streamed paste as keeping both sides of their links sees them: all new, each side what
/// the clipboard states of it and the entries added so far.
private struct LayoutSides: InverseSides {
    let facts: RelationshipFacts
    let layout: PasteLayout
    let targetEntity: [Int]
    /// The entries added: the slot that gets one, its relationship, the object it names.
    var extras: [(slot: Int32, relationship: UInt16, from: Int32)] = []
    /// To-ones named by an added entry, by slot << 16 | relationship.
    private var toOnes: [Int: Int32] = [:]
    /// Members of long stated to-manys, by slot << 16 | relationship.
    private var largeLists: [Int: Set<Int32>] = [:]

    /// Thrown on the first contradiction: the engine names them all.
    struct Contradiction: Error {}

    init(facts: RelationshipFacts, layout: PasteLayout, targetEntity: [Int]) {
        self.facts = facts
        self.layout = layout
        self.targetEntity = targetEntity
    }

    func entity(of slot: Int) -> Int { targetEntity[slot] }

    /// The targets the clipboard states for relationship `index` of `slot`, if it states it.
    private func stated(_ index: Int, of slot: Int) -> ArraySlice<Int32>? {
        var start = layout.firstLink[slot] == 0 ? 0 : Int(layout.linkEnd[Int(layout.firstLink[slot]) - 1])
        for link in Int(layout.firstLink[slot])..<Int(layout.firstLink[slot + 1]) {
            if Int(layout.linkRelationship[link]) == index { return layout.targets[start..<Int(layout.linkEnd[link])] }
            start = Int(layout.linkEnd[link])
        }
        return nil
    }

    mutating func side(_ index: Int, of slot: Int, toward source: Int) throws -> InverseSide {
        let key = slot << 16 | index
        if facts[targetEntity[slot], index].isToMany {
            guard let members = stated(index, of: slot) else { return .open }
            if members.count <= 32 { return members.contains(Int32(source)) ? .holds : .open }
            if largeLists[key] == nil { largeLists[key] = Set(members) }
            return largeLists[key]!.contains(Int32(source)) ? .holds : .open
        }
        if let named = stated(index, of: slot)?.first ?? toOnes[key] {
            return named == Int32(source) ? .holds : .namesAnother(movable: false)
        }
        return .open
    }

    mutating func add(_ source: Int, to index: Int, of slot: Int) throws {
        if !facts[targetEntity[slot], index].isToMany { toOnes[slot << 16 | index] = Int32(source) }
        extras.append((Int32(slot), UInt16(index), Int32(source)))
    }

    /// Never asked for: every object is new, so no to-one is movable.
    mutating func move(_ index: Int, of slot: Int, to source: Int, leaving relationship: Int) throws {
        throw Contradiction()
    }

    mutating func contradiction(_ source: Int, _ relationship: Int, names slot: Int) throws {
        throw Contradiction()
    }
}

extension Snapshot {
    /// Empties the snapshot for another object of `entity` (its own), keeping the storage of its arrays.
    fileprivate mutating func clear(key: Int64, entity: EntityDescription) {
        ref = ObjectRef(entity: entity.index, key: key)
        for index in attributes.indices { attributes[index] = nil }
        for index in relationships.indices {
            relationships[index] = entity.relationships[index].isToMany ? .toMany(takeToMany(at: index)) : .toOne(nil)
        }
    }
}
