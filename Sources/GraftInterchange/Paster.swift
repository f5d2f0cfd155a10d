import Foundation
@_spi(GraftInternal) import GraftCore
import GraftGraph
import GraftModel

/// What to do when a copied object's identity already exists in the target.
public enum ConflictPolicy: String, CaseIterable, Sendable {
    /// Update the existing object with the copied values (and add its links).
    case merge
    /// Insert the copy anyway, as a new object.
    case duplicate
    /// Keep the existing object as it is; links to the copy go to it.
    case skip
    /// Refuse the paste.
    case fail
}

/// What to do with a reference the target has no object for.
public enum DanglingPolicy: String, CaseIterable, Sendable {
    /// Refuse the paste.
    case fail
    /// Leave the relationship empty (validation then decides whether the model allows it).
    case drop
}

/// How to paste.
public struct PasteOptions: Sendable {
    public var onConflict: ConflictPolicy
    /// Per entity (by target entity name; subentities inherit), overriding `onConflict`.
    public var onConflictByEntity: [String: ConflictPolicy]
    public var dangling: DanglingPolicy
    /// Attributes that identify objects of an entity (target names), overriding uniqueness constraints.
    public var identities: [String: [String]]
    /// Work out everything and check the result, report it, and write nothing.
    public var dryRun: Bool
    /// Whether a result that breaks the model's rules is refused (the default: all or nothing). When
    /// `false`, the objects are pasted as they are and every rule they break is listed in
    /// ``PasteReport/violations`` (`graft paste --no-validate`), for data that is already imperfect.
    public var validates: Bool
    /// With `validates`: whether a result whose only broken rules are rules the copied objects already
    /// broke in the clipboard is pasted, those listed in ``PasteReport/violations``, rather than refused;
    /// a rule the paste itself would break still refuses it. For copies of data that is already
    /// imperfect (a fixture subset of a real store), which should bring no new fault.
    public var acceptsViolationsTheClipboardHas: Bool
    /// How long a paste into a store file waits for another writer to finish with it, in seconds, before
    /// failing with `GraftError.busy` (`graft paste --wait`); see ``Paster/paste(_:intoStoreAt:model:)``.
    public var wait: TimeInterval

    public init(
        onConflict: ConflictPolicy = .fail, onConflictByEntity: [String: ConflictPolicy] = [:],
        dangling: DanglingPolicy = .fail,
        identities: [String: [String]] = [:], dryRun: Bool = false, validates: Bool = true,
        acceptsViolationsTheClipboardHas: Bool = false, wait: TimeInterval = FileLock.defaultWait
    ) {
        self.onConflict = onConflict
        self.onConflictByEntity = onConflictByEntity
        self.dangling = dangling
        self.identities = identities
        self.dryRun = dryRun
        self.validates = validates
        self.acceptsViolationsTheClipboardHas = acceptsViolationsTheClipboardHas
        self.wait = wait
    }
}

/// What a paste did (or, for a dry run, would do).
public struct PasteReport: Sendable {
    public var dryRun: Bool
    /// New objects per entity.
    public var inserted: [String: Int] = [:]
    /// Existing objects updated (`merge`) per entity.
    public var merged: [String: Int] = [:]
    /// Copies not pasted because their identity exists (`skip`) per entity.
    public var skipped: [String: Int] = [:]
    /// References linked to existing objects.
    public var linked: Int = 0
    /// References left empty (`--dangling drop`), described.
    public var dangling: [String] = []
    /// Properties of the clipboard the target model does not have, and defaults filled in for properties
    /// the clipboard's model lacked.
    public var notes: [String] = []
    /// Clipboard id → URI of the object it became (or was merged into, or skipped for), in document order.
    ///
    /// A large paste keeps the map compactly and makes the URIs when asked: to go through it without
    /// holding them all, use ``forEachIDMapEntry(_:)``.
    public var idMap: [(id: String, uri: String)] {
        get {
            var entries: [(id: String, uri: String)] = []
            entries.reserveCapacity(idMapCount)
            forEachIDMapEntry { entries.append(($0, $1)) }
            return entries
        }
        set { idMapStorage = .entries(newValue) }
    }
    var idMapStorage = IDMapStorage.entries([])

    /// How many entries ``idMap`` has.
    public var idMapCount: Int {
        switch idMapStorage {
        case .entries(let entries): entries.count
        case .compact(let map): map.keys.count
        }
    }

    /// Calls `body` with each clipboard id and the URI of the object it became, in document order.
    public func forEachIDMapEntry(_ body: (_ id: String, _ uri: String) throws -> Void) rethrows {
        switch idMapStorage {
        case .entries(let entries):
            for (id, uri) in entries { try body(id, uri) }
        case .compact(let map):
            let prefixes = map.uriPrefixes
            for at in map.keys.indices {
                try body(map.ids[at], prefixes[Int(map.entities[at])] + "\(map.keys[at])")
            }
        }
    }

    /// The id map as lines of text — each clipboard id, a tab, the URI, a newline — in document order,
    /// handed to `body` in chunks (valid only during the call): what `graft paste` prints, made without a
    /// string per line, so that the map of a paste of millions of objects costs little more than its bytes.
    package func writeIDMapLines(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try withoutActuallyEscaping(body) { body in
            let buffer = ByteBuffer(sink: body)
            switch idMapStorage {
            case .entries(let entries):
                for (id, uri) in entries {
                    buffer.append(string: id)
                    buffer.append(0x09)
                    buffer.append(string: uri)
                    buffer.append(0x0A)
                    try buffer.flushIfFull()
                }
            case .compact(let map):
                let prefixes = map.uriPrefixes.map { Array($0.utf8) }
                for at in map.keys.indices {
                    map.ids.write(at, to: buffer)
                    buffer.append(0x09)
                    buffer.append(prefixes[Int(map.entities[at])])
                    buffer.append(decimal: map.keys[at])
                    buffer.append(0x0A)
                    try buffer.flushIfFull()
                }
            }
            try buffer.flush()
        }
    }

    enum IDMapStorage: Sendable {
        case entries([(id: String, uri: String)])
        case compact(CompactIDMap)
    }

    /// The id map of a large paste: per object its id, entity and key.
    struct CompactIDMap: Sendable {
        var ids: LocalIDList
        var entities: [Int32]
        var keys: [Int64]
        var entityNames: [String]
        var storeIdentifier: String

        /// Per entity, what its objects' URIs start with, up to the key's digits.
        var uriPrefixes: [String] { entityNames.map { "x-coredata://\(storeIdentifier)/\($0)/p" } }
    }
    /// The rules the pasted objects break, pasted as they are because validation was off
    /// (``PasteOptions/validates``); empty otherwise, since a paste that breaks rules is refused.
    public var violations: [RuleViolation] = []
    /// Whether the paste created the store (nothing was at its path).
    public var createdStore = false

    /// `{"dryRun", "createdStore", "inserted": {entity: n}, "merged": {…}, "skipped": {…}, "linked",
    /// "dangling": […], "notes": […], "violations": [{"entity", "object", "property", "rule", "message"}],
    /// "idMap": {clipboard id: URI}}`, entities in name order and ids in document order.
    public var json: JSONValue {
        .object([
            ("dryRun", .bool(dryRun)), ("createdStore", .bool(createdStore)),
            ("inserted", JSONValue.counts(inserted)), ("merged", JSONValue.counts(merged)),
            ("skipped", JSONValue.counts(skipped)), ("linked", .int(Int64(linked))),
            ("dangling", .array(dangling.map(JSONValue.string))), ("notes", .array(notes.map(JSONValue.string))),
            (
                "violations",
                .array(
                    violations.map {
                        .object([
                            ("entity", .string($0.entity)), ("object", .string($0.object)),
                            ("property", .string($0.property)), ("rule", .string($0.rule.rawValue)),
                            ("message", .string($0.message)),
                        ])
                    })
            ),
            ("idMap", .object(idMap.map { ($0.id, JSONValue.string($0.uri)) })),
        ])
    }
}

/// Pastes clipboard documents as new objects: into a store (saved in one step, all or nothing) or into
/// a context (left unsaved, as one undo step).
///
/// Every copied object becomes a new object with a new ID and relationships among copies are rewired;
/// references link to the target's objects with the same identity (or, pasting back into the source
/// store, the same URI). Conflicts follow the policy. Inverses are kept on both sides, existing objects
/// included. The result is validated as a whole before anything is written; every violation is reported
/// at once, telling apart the rules the copied objects already broke in the clipboard from those the
/// paste would break. With ``PasteOptions/validates`` off, the objects are pasted as they are and the
/// violations are reported instead.
///
/// A clipboard from another version of the model pastes when it can: entities, attributes and
/// relationships are matched by name and by renaming identifier, attributes new in the target model get
/// their default values, and properties the target lacks are reported.
///
/// For example:
///
/// ```swift
/// let report = try Paster(options: PasteOptions(onConflict: .merge)).paste(clipboard, into: store)
/// for entry in report.idMap { print(entry.id, entry.uri) }
/// ```
public struct Paster {
    public var options: PasteOptions

    public init(options: PasteOptions = PasteOptions()) { self.options = options }

    // MARK: Into a store

    /// Pastes into a store and saves (unless `dryRun`).
    ///
    /// - Throws: `GraftError.modelMismatch` when entities cannot be matched; `.notFound` for references the
    ///   target lacks (with `dangling` `.fail`); `.alreadyExists` for conflicts (with `.fail`);
    ///   `.validationFailed` listing every rule the result breaks; the store's error. On any error the
    ///   store is unchanged.
    public func paste(_ clipboard: Clipboard, into store: any PersistentStore) throws -> PasteReport {
        try clipboard.check()
        return try paste(objects: { ClipboardObjects(clipboard) }, whole: { clipboard }, into: store)
    }

    /// Pastes the clipboard's objects into `store`: streamed from `objects` when the store is empty and
    /// takes a stream, else by the engine on the whole clipboard (`whole`). Either is made only then, so
    /// that a document is read once.
    private func paste<Source: ClipboardObjectSource>(
        objects: () throws -> Source, whole: () throws -> Clipboard, into store: any PersistentStore
    ) throws -> PasteReport {
        let target = try StoreTarget(store: store)
        var given: [Int: [Int64]] = [:]
        if target.isEmpty, let streaming = store as? any StreamingInserts {
            // Streamed into the store, unless the objects need the engine's account of what is wrong.
            var source = try objects()
            switch try StreamingPaste<Source>(model: store.model, options: options).run(
                &source, to: .emptyStore(streaming), progress: nil)
            {
            case .pasted(let report): return report
            case .needsEngine(let keys): given = keys
            }
        }
        let clipboard = try whole()
        var plan = try PastePlan(clipboard: clipboard, model: store.model, options: options)
        try plan.resolve(using: target)
        var report = plan.report(dryRun: options.dryRun)
        let result = try PasteEngine(plan: plan).run(on: target) { root, count in
            if let keys = given[root], keys.count == count { return keys }
            return try store.allocateKeys(rootEntity: root, count: count)
        }
        report.violations = result.violations
        if options.dryRun { return report }
        // The clipboard and the plan are done with: freed while the store writes.
        Teardown.elsewhere((consume plan, consume clipboard))
        try store.save(result.changes)
        report.idMapStorage = result.idMap(model: store.model, storeIdentifier: store.identifier)
        // Not the target: it holds the store, which must close (and let other writers in) where the
        // caller drops it.
        Teardown.elsewhere(consume result)
        return report
    }

    /// Pastes into the store document at `url`, and saves (unless `dryRun`): into the store that is
    /// there, or, when nothing is, into a new one (see ``paste(_:intoNewStoreAt:format:model:)``) in
    /// `format`, by default the one the file's extension names.
    ///
    /// No other writer can change an existing store between what the paste reads and what it saves: the
    /// store is opened with ``StoreFormat/openExclusively(_:model:wait:)``, waiting up to
    /// ``PasteOptions/wait`` seconds for another writer (another paste waits for this one in turn). A dry
    /// run opens the store for reading only (``StoreFormat/openForReading(_:model:options:)``): it needs
    /// no write access, takes no lock, and changes nothing, a SQLite store's `-wal` included; so does a
    /// paste that is refused.
    ///
    /// For example:
    ///
    /// ```swift
    /// let report = try Paster(options: PasteOptions(wait: 30)).paste(clipboard, intoStoreAt: url)
    /// print(report.createdStore ? "created" : "pasted into", url.path)
    /// ```
    ///
    /// - Parameters:
    ///   - model: the store's model; by default its own (for a new store, the clipboard's).
    ///   - progress: for a new store, called now and then with the objects written so far and their total.
    /// - Throws: `GraftError.invalidOperation` for a new store whose format the extension does not name
    ///   and no `format` is given, or when no model is given and the clipboard carries none;
    ///   `GraftError.busy` when another writer holds the store longer than the wait; what opening the
    ///   store and ``paste(_:into:)-(_,any PersistentStore)`` throw.
    public func paste(
        _ clipboard: Clipboard, intoStoreAt url: URL, format: StoreFormat? = nil, model: Model? = nil,
        progress: ((_ done: Int, _ total: Int?) -> Void)? = nil
    ) throws -> PasteReport {
        try clipboard.check()
        return try paste(
            objects: { ClipboardObjects(clipboard) }, whole: { clipboard }, intoStoreAt: url, format: format,
            model: model, progress: progress)
    }

    /// Pastes the clipboard document at `clipboardURL` into the store document at `url`, as
    /// ``paste(_:intoStoreAt:format:model:progress:)`` does, reading the document with a
    /// ``ClipboardReader``: into a new store, or an empty SQLite store, the objects stream from the file to
    /// the store and are never all held at once, so that memory stays bounded whatever the document's size.
    ///
    /// - Throws: what ``ClipboardReader/init(contentsOf:encoding:)`` and
    ///   ``paste(_:intoStoreAt:format:model:progress:)`` throw; errors in the clipboard name its file.
    public func paste(
        clipboardAt clipboardURL: URL, intoStoreAt url: URL, format: StoreFormat? = nil, model: Model? = nil,
        progress: ((_ done: Int, _ total: Int?) -> Void)? = nil
    ) throws -> PasteReport {
        let path = clipboardURL.relativePath
        return try paste(
            objects: {
                try Self.inFile(path) { try FileObjects(contentsOf: clipboardURL, path: path) }
            },
            whole: { try Self.inFile(path) { try ClipboardEncoding.decode(try FileAccess.read(clipboardURL)) } },
            intoStoreAt: url, format: format, model: model, progress: progress)
    }

    /// The body's errors, naming the clipboard's file.
    fileprivate static func inFile<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as GraftError {
            if case .file? = error.context.first { throw error }
            throw error.inFile(path)
        }
    }

    /// Pastes into the store at `url`, or a new one there; `objects` and `whole` read the clipboard as
    /// ``paste(objects:whole:into:)`` says.
    private func paste<Source: ClipboardObjectSource>(
        objects: () throws -> Source, whole: () throws -> Clipboard, intoStoreAt url: URL, format: StoreFormat?,
        model: Model?, progress: ((_ done: Int, _ total: Int?) -> Void)?
    ) throws -> PasteReport {
        guard FileAccess.kind(of: url).exists else {
            guard let format = format ?? StoreFormat.forExtension(url) else {
                let extensions = StoreFormat.allCases.map { ".\($0.driver.fileExtensions[0])" }
                throw GraftError(
                    .invalidOperation,
                    "the store does not exist, and its extension does not say which format to create ("
                        + extensions.joined(separator: ", ") + ")", context: [.file(url.relativePath)])
            }
            var source = try objects()
            var report = try paste(
                &source, whole: whole, intoNewStoreAt: url, format: format, model: model, progress: progress)
            report.createdStore = true
            return report
        }
        let store =
            options.dryRun
            ? try StoreFormat.openForReading(url, model: model)
            : try StoreFormat.openExclusively(url, model: model, wait: options.wait)
        return try paste(objects: objects, whole: whole, into: store)
    }

    // MARK: Into a new document

    /// Pastes into a new store document at `url`, written atomically: nothing is at `url` unless the
    /// paste succeeds (and, for a dry run, nothing is written at all).
    ///
    /// - Parameters:
    ///   - format: the document's format.
    ///   - model: the document's model; by default the one the clipboard carries.
    ///   - progress: called now and then with the objects written so far and their total.
    /// - Throws: `GraftError.alreadyExists` when something is at `url`; `.invalidOperation` when no model
    ///   is given and the clipboard carries none; what ``paste(_:into:)-(_,any PersistentStore)`` throws.
    public func paste(
        _ clipboard: Clipboard, intoNewStoreAt url: URL, format: StoreFormat, model: Model? = nil,
        progress: ((_ done: Int, _ total: Int?) -> Void)? = nil
    ) throws -> PasteReport {
        var source = ClipboardObjects(clipboard)
        return try paste(
            &source, whole: { clipboard }, intoNewStoreAt: url, format: format, model: model, progress: progress,
            checking: clipboard)
    }

    private func paste<Source: ClipboardObjectSource>(
        _ source: inout Source, whole: () throws -> Clipboard, intoNewStoreAt url: URL, format: StoreFormat,
        model: Model?, progress: ((_ done: Int, _ total: Int?) -> Void)?, checking clipboard: Clipboard? = nil
    ) throws -> PasteReport {
        guard !FileAccess.kind(of: url).exists else {
            throw GraftError(.alreadyExists, "the store already exists", context: [.file(url.relativePath)])
        }
        guard let model = try model ?? Clipboard(header: source.header, objects: []).model() else {
            throw GraftError(
                .invalidOperation, "the store does not exist and the clipboard carries no model to create it with",
                context: [.file(url.relativePath)], remedy: .init(.nameModel, "name one"))
        }
        let metadata = StoreMetadata.make(for: model, storeType: format.storeType)
        try clipboard?.check()
        switch try StreamingPaste<Source>(model: model, options: options).run(
            &source, into: url, format: format, metadata: metadata, progress: progress)
        {
        case .pasted(let report): return report
        case .needsEngine: break
        }
        let clipboard = try whole()
        var plan = try PastePlan(clipboard: clipboard, model: model, options: options)
        try plan.resolve(using: EmptyTarget(model: model, identifier: metadata.identifier))
        var report = plan.report(dryRun: options.dryRun)
        // Keys from one sequence for every tree, so that no two objects of the document share one.
        var next: Int64 = 0
        let result = try PasteEngine(plan: plan).run(on: EmptyTarget(model: model, identifier: metadata.identifier)) {
            _, count in
            defer { next += Int64(count) }
            return (1...Int64(max(count, 1))).prefix(count).map { next + $0 }
        }
        report.violations = result.violations
        if options.dryRun { return report }
        let total = result.inserted.count
        try format.driver.write(
            result.inserted, to: url, model: model, metadata: metadata, overwrite: false,
            progress: progress.map { report in { report($0, total) } })
        report.idMapStorage = result.idMap(model: model, storeIdentifier: metadata.identifier)
        return report
    }

    // MARK: Into a context

    /// Pastes into a context, leaving the changes unsaved; they form one undo step. If anything fails,
    /// the context is left exactly as it was.
    ///
    /// New objects have temporary IDs until the context is saved, so the report's URIs for them are
    /// temporary too.
    public func paste(_ clipboard: Clipboard, into context: ObjectContext) throws -> PasteReport {
        var (report, objects) = try pasteObjects(clipboard, into: context)
        report.idMap = objects.map { ($0.id, $0.object.uri) }
        return report
    }

    private func pasteObjects(
        _ clipboard: Clipboard, into context: ObjectContext
    ) throws -> (PasteReport, [(id: String, object: ManagedObject)]) {
        var plan = try PastePlan(clipboard: clipboard, model: context.model, options: options)
        try plan.resolve(using: ContextTarget(context: context))
        var report = plan.report(dryRun: options.dryRun)
        let work = ContextWork(context: context, plan: plan)
        if options.dryRun {
            // Carried out and checked like a real paste, then undone.
            struct Undo: Error { var violations: [RuleViolation] }
            do {
                try context.atomically {
                    throw Undo(violations: try work.apply().violations)
                }
            } catch let undo as Undo {
                report.violations = undo.violations
            }
            return (report, [])
        }
        let result = try context.atomically { try work.apply() }
        report.violations = result.violations
        return (report, result.objects)
    }
}

// MARK: - Planning

/// Where identities are looked up.
protocol PasteTarget {
    var model: Model { get }
    var identifier: String { get }
    /// For each combination of `values` of the attributes `attributes` (indices in `entity`), in their
    /// order, the object of `entity` (or a subentity) that has it, nil when none does; looked up as a set,
    /// not one by one.
    func find(_ entity: EntityDescription, attributes: [Int], among values: IdentityValues) throws -> [ObjectRef?]
    /// Whether the object exists.
    func exists(_ ref: ObjectRef) throws -> Bool
}

/// Combinations of the values of a few attributes, kept in one flat array (not one array per
/// combination): combination `i` is `values[i * width ..< (i + 1) * width]`.
struct IdentityValues {
    /// How many values each combination has.
    let width: Int
    private(set) var values: [Value] = []

    init(width: Int) { self.width = width }

    /// How many combinations there are.
    var count: Int { width == 0 ? 0 : values.count / width }
    var isEmpty: Bool { values.isEmpty }

    subscript(position: Int) -> ArraySlice<Value> { values[position * width..<(position + 1) * width] }

    /// The combination at `position`, as a key that hashes one value alone when there is only one.
    func key(at position: Int) -> IdentityKey {
        width == 1 ? .single(values[position]) : .combination(Array(self[position]))
    }

    /// Adds one value of the combination being added; a combination is complete after `width` of them.
    mutating func append(_ value: Value) { values.append(value) }

    /// Leaves out the values of an incomplete last combination.
    mutating func dropIncomplete() { values.removeLast(values.count % max(width, 1)) }

    mutating func reserveCapacity(_ combinations: Int) { values.reserveCapacity(combinations * width) }
}

/// One combination of identity values, as a dictionary key: a single attribute's value is hashed alone.
enum IdentityKey: Hashable {
    case single(Value)
    case combination([Value])

    /// The values of `attributes` (indices) in `snapshot`; nil when one has none.
    init?(_ snapshot: Snapshot, attributes: [Int]) {
        if attributes.count == 1 {
            guard let value = snapshot.attributes[attributes[0]] else { return nil }
            self = .single(value)
            return
        }
        var values: [Value] = []
        values.reserveCapacity(attributes.count)
        for index in attributes {
            guard let value = snapshot.attributes[index] else { return nil }
            values.append(value)
        }
        self = .combination(values)
    }

    var values: [Value] {
        switch self {
        case .single(let value): return [value]
        case .combination(let values): return values
        }
    }
}

/// Everything decided before anything is written: how the clipboard's entities and properties map to the
/// target model, and what happens to each object and reference.
struct PastePlan {
    let clipboard: Clipboard
    let model: Model
    let options: PasteOptions

    /// Per clipboard entity name: the target entity and the property mappings.
    var mappings: [String: EntityMapping] = [:]
    /// The same, by position of the clipboard's entities.
    private(set) var entityMappings: [EntityMapping?] = []
    /// Per clipboard object, by position: its entity's position in `entityMappings`, -1 when the target
    /// lacks the entity.
    private(set) var mappingOfObject: [Int32] = []
    var notes: [String] = []

    /// A class, so that taking one per object copies one reference, not each of its tables.
    final class EntityMapping {
        let target: EntityDescription
        /// Clipboard attribute name → target attribute index.
        let attributes: [String: Int]
        /// Clipboard relationship name → target relationship index.
        let relationships: [String: Int]
        /// Target attributes the clipboard's entity lacks: they get their defaults on new objects.
        let newAttributes: [Int]
        /// The target attributes that identify objects (``PastePlan/identity(of:)``), each with the name
        /// the clipboard gives it (nil when the clipboard's entity lacks it).
        let identity: [(index: Int, clipboardName: String?)]
        /// The target attributes the clipboard's entity has: a merge sets each of them.
        let covered: [Int]
        /// What happens when a copy's identity exists (``PastePlan/policy(for:)``).
        let policy: ConflictPolicy

        init(
            target: EntityDescription, attributes: [String: Int], relationships: [String: Int], newAttributes: [Int],
            identity: [(index: Int, clipboardName: String?)], covered: [Int], policy: ConflictPolicy
        ) {
            self.target = target
            self.attributes = attributes
            self.relationships = relationships
            self.newAttributes = newAttributes
            self.identity = identity
            self.covered = covered
            self.policy = policy
        }
    }

    enum Action {
        case insert
        case merge(ObjectRef)
        case skip(ObjectRef)
    }

    /// Per object, by its position in the clipboard: what happens to it.
    var actions: [Action]
    /// Per reference, by its position in the clipboard: the target object, or nil when there is none
    /// (dropped, or its entity not in the target model).
    var references: [ObjectRef?]
    /// Where each id of the clipboard is, so that links are followed by position.
    let ids: LocalIDPositions
    var danglingDescriptions: [String] = []

    /// - Parameter objectEntities: the entities the document's objects belong to, when `clipboard` holds
    ///   only the document's header (a streaming paste reads the objects itself, checked as it reads); by
    ///   default those of `clipboard.objects`, after the clipboard is checked.
    init(clipboard: Clipboard, model: Model, options: PasteOptions, objectEntities: Set<String>? = nil) throws {
        self.clipboard = clipboard
        self.model = model
        self.options = options
        actions = Array(repeating: .insert, count: clipboard.objects.count)
        references = Array(repeating: nil, count: clipboard.references.count)
        ids = LocalIDPositions(objects: clipboard.objects, references: clipboard.references)
        if objectEntities == nil { try clipboard.check() }
        let objectEntities = objectEntities ?? Set(clipboard.objects.map(\.entity))
        var problems: [GraftError] = []
        for name in options.onConflictByEntity.keys.sorted() where model.entity(named: name) == nil {
            problems.append(
                GraftError(
                    .notFound, "a conflict policy names \(name), which the target model does not have",
                    context: [.entity(name)]))
        }
        for (name, attributes) in options.identities.sorted(by: { $0.key < $1.key }) {
            guard let entity = model.entity(named: name) else {
                problems.append(
                    GraftError(
                        .notFound, "an identity names \(name), which the target model does not have",
                        context: [.entity(name)]))
                continue
            }
            for attribute in attributes where entity.attribute(named: attribute) == nil {
                problems.append(
                    GraftError(
                        .notFound, "an identity names \(name).\(attribute), which the target model does not have",
                        context: [.entity(name)]))
            }
        }
        for info in clipboard.entities {
            guard
                let target = model.entity(named: info.name)
                    ?? model.descriptions.first(where: { $0.declaration.renamingIdentifier == info.name })
            else {
                problems.append(
                    GraftError(
                        .modelMismatch, "the target model has no entity \(info.name) (nor one renamed from it)",
                        context: [.entity(info.name)]))
                continue
            }
            guard !target.isAbstract || !objectEntities.contains(info.name) else {
                problems.append(
                    GraftError(
                        .modelMismatch,
                        "\(target.name) is abstract in the target model, so its objects cannot be pasted",
                        context: [.entity(info.name)]))
                continue
            }
            var attributes: [String: Int] = [:]
            var relationships: [String: Int] = [:]
            var newAttributes: [Int] = []
            for attribute in info.attributes {
                if let index = Self.index(
                    of: attribute.name, in: target.attributes.map { ($0.name, $0.renamingIdentifier) }),
                    !target.attributes[index].isTransient
                {
                    attributes[attribute.name] = index
                } else {
                    notes.append(
                        "\(info.name).\(attribute.name): the target model has no such attribute; its values are left out"
                    )
                }
            }
            for relationship in info.relationships {
                if let index = Self.index(
                    of: relationship.name, in: target.relationships.map { ($0.name, $0.renamingIdentifier) })
                {
                    relationships[relationship.name] = index
                } else {
                    notes.append(
                        "\(info.name).\(relationship.name): the target model has no such relationship; its links are left out"
                    )
                }
            }
            let covered = Set(attributes.values)
            for (index, attribute) in target.attributes.enumerated()
            where !covered.contains(index) && !attribute.isTransient {
                newAttributes.append(index)
                if objectEntities.contains(info.name) {
                    let filled =
                        attribute.defaultValue.map { "its default value \(ValueText.format($0))" } ?? "no value"
                    notes.append(
                        "\(target.name).\(attribute.name): not in the clipboard's model; new objects get \(filled)")
                }
            }
            mappings[info.name] = EntityMapping(
                target: target, attributes: attributes, relationships: relationships, newAttributes: newAttributes,
                identity: identity(of: target).map { index in (index, attributes.first { $0.value == index }?.key) },
                covered: Array(covered).sorted(), policy: policy(for: target))
        }
        if problems.count == 1 { throw problems[0] }
        if !problems.isEmpty {
            throw GraftError(.modelMismatch, "the clipboard does not fit the target model", underlying: problems)
        }
        entityMappings = clipboard.entities.map { mappings[$0.name] }
        let positions = Dictionary(
            clipboard.entities.enumerated().map { ($0.element.name, Int32($0.offset)) }, uniquingKeysWith: { a, _ in a }
        )
        mappingOfObject.reserveCapacity(clipboard.objects.count)
        var last: (name: String, position: Int32)?
        for object in clipboard.objects {
            // Objects of one entity mostly come together: their name is compared, not hashed.
            if let last, last.name == object.entity {
                mappingOfObject.append(last.position)
                continue
            }
            let position = positions[object.entity].flatMap { entityMappings[Int($0)] == nil ? nil : $0 } ?? -1
            mappingOfObject.append(position)
            last = (object.entity, position)
        }
    }

    /// The mapping of the clipboard object at `position`, nil when the target lacks its entity.
    func mapping(ofObject position: Int) -> EntityMapping? {
        let at = mappingOfObject[position]
        return at < 0 ? nil : entityMappings[Int(at)]
    }

    /// The position of the property named `name` (or renamed from `name`).
    static func index(of name: String, in properties: [(name: String, renamed: String?)]) -> Int? {
        properties.firstIndex { $0.name == name } ?? properties.firstIndex { $0.renamed == name }
    }

    /// The attributes that identify objects of `entity` in the target: `identities`, else a uniqueness
    /// constraint made of attributes.
    func identity(of entity: EntityDescription) -> [Int] {
        for name in [entity.name] + entity.ancestorIndices.map({ model.descriptions[$0].name }) {
            if let names = options.identities[name] { return names.compactMap { entity.attributeIndexByName[$0] } }
        }
        for constraint in entity.uniquenessConstraints {
            let indices = constraint.compactMap { entity.attributeIndexByName[$0] }
            if indices.count == constraint.count { return indices }
        }
        return []
    }

    func policy(for entity: EntityDescription) -> ConflictPolicy {
        for name in [entity.name] + entity.ancestorIndices.map({ model.descriptions[$0].name }) {
            if let policy = options.onConflictByEntity[name] { return policy }
        }
        return options.onConflict
    }

    /// A clipboard value as the target attribute holds it.
    func convert(_ value: Value, to attribute: Attribute, object: String) throws -> Value {
        try convert(value, to: attribute.type, key: attribute.name, object: object)
    }

    /// A clipboard value as an attribute of `type` holds it; `key` names the attribute in the error.
    func convert(
        _ value: Value, to type: AttributeType, key: @autoclosure () -> String, object: String
    ) throws -> Value {
        try Self.convert(value, to: type, key: key(), object: object)
    }

    /// A clipboard value as an attribute of `type` holds it; `key` names the attribute in the error.
    static func convert(
        _ value: Value, to type: AttributeType, key: @autoclosure () -> String, object: String
    ) throws -> Value {
        guard let converted = ValueConversion.coerce(value, to: type) else {
            throw GraftError(
                .typeMismatch, "\(value) cannot be held by the target's \(type.modelName) attribute",
                context: [.object(object), .key(key())])
        }
        return converted
    }

    /// Adds the identity values of a clipboard object (or reference), converted to the target's
    /// attributes, to `combinations`; false (and nothing added) when the entity has no identity or a value
    /// is missing. (Static, so that a caller inside a mutating method does not copy the plan per call.)
    static func appendIdentity(
        of values: [Clipboard.NamedValue], entity: String, mapping: EntityMapping, to combinations: inout IdentityValues
    ) throws -> Bool {
        guard !mapping.identity.isEmpty else { return false }
        // The attribute's fields, not the whole description, which a copy would retain string by string.
        let attributes = mapping.target.attributes
        for (index, name) in mapping.identity {
            guard let name, let named = values.first(where: { $0.name == name }) else {
                combinations.dropIncomplete()
                return false
            }
            combinations.append(
                try Self.convert(named.value, to: attributes[index].type, key: attributes[index].name, object: entity))
        }
        return true
    }

    /// Looks up references and conflicts in the target: the identities of each target entity at once.
    mutating func resolve(using target: some PasteTarget) throws {
        var problems: [GraftError] = []
        let sameStore = clipboard.sourceStore != nil && clipboard.sourceStore == target.identifier
        // Every identity to look up, per target entity: the attributes and the value combinations.
        var wanted = [(attributes: [Int], values: IdentityValues)?](repeating: nil, count: model.descriptions.count)
        /// Notes the identity of a clipboard object or reference to look up; returns its position among
        /// the entity's combinations.
        func want(_ values: [Clipboard.NamedValue], entity: String, _ mapping: EntityMapping) throws -> Int? {
            let target = mapping.target.index
            if wanted[target] == nil {
                wanted[target] = (mapping.identity.map(\.index), IdentityValues(width: mapping.identity.count))
            }
            guard try Self.appendIdentity(of: values, entity: entity, mapping: mapping, to: &wanted[target]!.values)
            else {
                return nil
            }
            return wanted[target]!.values.count - 1
        }
        var referenceValues: [Int?] = []
        var sameStoreRefs: [ObjectRef?] = []
        for reference in clipboard.references {
            guard let mapping = mappings[reference.entity] else {
                referenceValues.append(nil)
                sameStoreRefs.append(nil)
                continue
            }
            var ref: ObjectRef?
            if sameStore, let uri = reference.uri, let (_, id) = try? ObjectID.parse(uri: uri, model: model),
                model.isKind(model.descriptions[id.entity], of: mapping.target), try target.exists(id.ref)
            {
                ref = id.ref
            }
            sameStoreRefs.append(ref)
            referenceValues.append(ref == nil ? try want(reference.identity, entity: reference.entity, mapping) : nil)
        }
        // Nothing can conflict with an empty target: every object is new.
        let isEmpty = target is EmptyTarget || (target as? StoreTarget)?.isEmpty == true
        var objectValues: [Int?] = []
        if !isEmpty {
            objectValues.reserveCapacity(clipboard.objects.count)
            // By position, the objects read where they are: a copy of each would touch its every part.
            for position in clipboard.objects.indices {
                guard let mapping = mapping(ofObject: position) else {
                    objectValues.append(nil)
                    continue
                }
                objectValues.append(
                    try want(
                        clipboard.objects[position].attributes, entity: clipboard.objects[position].entity, mapping))
            }
        }
        var found = [[ObjectRef?]?](repeating: nil, count: model.descriptions.count)
        for (entity, lookup) in wanted.enumerated() {
            guard let lookup, !lookup.values.isEmpty else { continue }
            found[entity] = try target.find(
                model.descriptions[entity], attributes: lookup.attributes, among: lookup.values)
        }
        for (position, reference) in clipboard.references.enumerated() {
            guard let mapping = mappings[reference.entity] else { continue }
            if let ref = sameStoreRefs[position]
                ?? referenceValues[position].flatMap({ found[mapping.target.index]?[$0] })
            {
                references[position] = ref
                continue
            }
            let described = Self.describe(reference)
            switch options.dangling {
            case .drop:
                danglingDescriptions.append(described)
            case .fail:
                let why =
                    reference.identity.isEmpty
                    ? "the clipboard gives no identity for it (its entity has no uniqueness constraint; name one with --identity \(reference.entity)=attribute)"
                    : "the target has no \(mapping.target.name) with that identity"
                problems.append(
                    GraftError(
                        .notFound,
                        "\(described) is not in the target: \(why) (use --dangling drop to leave such links empty)",
                        context: [.object(reference.id)]))
            }
        }
        for position in clipboard.objects.indices where !isEmpty {
            guard let wantedAt = objectValues[position], let mapping = mapping(ofObject: position),
                let existing = found[mapping.target.index]?[wantedAt]
            else {
                continue
            }
            switch mapping.policy {
            case .merge: actions[position] = .merge(existing)
            case .skip: actions[position] = .skip(existing)
            case .duplicate: break
            case .fail:
                let object = clipboard.objects[position]
                let values = wanted[mapping.target.index]!.values[wantedAt]
                let identity = identity(of: mapping.target)
                let shown = zip(identity, values).map {
                    "\(mapping.target.attributes[$0.0].name) = \(ValueText.format($0.1))"
                }.joined(separator: ", ")
                problems.append(
                    GraftError(
                        .alreadyExists,
                        "\(Wording.withArticle(mapping.target.name)) with \(shown) already exists (\(target.uri(existing))); choose --on-conflict merge, skip or duplicate",
                        context: [.object(object.id)]))
            }
        }
        if problems.count == 1 { throw problems[0] }
        if !problems.isEmpty {
            throw GraftError(
                problems[0].code, "the paste cannot go ahead: \(problems.count) problems", underlying: problems)
        }
    }

    static func describe(_ reference: Clipboard.Reference) -> String {
        let identity = reference.identity.map { "\($0.name) = \(ValueText.format($0.value))" }.joined(separator: ", ")
        return "\(reference.entity)\(identity.isEmpty ? "" : " (\(identity))")\(reference.uri.map { " \($0)" } ?? "")"
    }

    func report(dryRun: Bool) -> PasteReport {
        var report = PasteReport(dryRun: dryRun)
        // Inserted, merged and skipped, per clipboard entity.
        var counts = Array(repeating: (0, 0, 0), count: entityMappings.count)
        for (position, action) in actions.enumerated() {
            let entity = Int(mappingOfObject[position])
            guard entity >= 0 else { continue }
            switch action {
            case .insert: counts[entity].0 += 1
            case .merge: counts[entity].1 += 1
            case .skip: counts[entity].2 += 1
            }
        }
        for (mapping, (inserted, merged, skipped)) in zip(entityMappings, counts) {
            guard let name = mapping?.target.name else { continue }
            if inserted > 0 { report.inserted[name, default: 0] += inserted }
            if merged > 0 { report.merged[name, default: 0] += merged }
            if skipped > 0 { report.skipped[name, default: 0] += skipped }
        }
        report.linked = references.filter { $0 != nil }.count
        report.dangling = danglingDescriptions
        report.notes = notes
        return report
    }
}

/// A store with no objects: nothing to find.
struct EmptyTarget: PasteTarget {
    let model: Model
    let identifier: String
    func find(_ entity: EntityDescription, attributes: [Int], among values: IdentityValues) throws -> [ObjectRef?] {
        Array(repeating: nil, count: values.count)
    }
    func exists(_ ref: ObjectRef) throws -> Bool { false }
}

extension PasteTarget {
    func uri(_ ref: ObjectRef) -> String {
        ObjectID(entity: ref.entity, key: ref.key).uri(in: model, storeIdentifier: identifier)
    }
}
