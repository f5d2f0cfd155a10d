import Foundation
import GraftCore
import GraftModel

/// One change to one property of one object, as key observers receive it.
///
/// Each public operation (a `setValue`, one call on a ``RelationshipSet``, a deletion with its cascades,
/// an undo) sends at most one change per object and key, with the net effect of the operation: adding
/// three employees with `insert(contentsOf:)` is one `.insertion` of three objects for the department's
/// `employees`, and one `.setting` of `department` for each employee.
public struct KeyChange: CustomStringConvertible {
    /// What happened to the value (the kinds of Foundation's `NSKeyValueChange`).
    public enum Kind: String, Sendable {
        /// An attribute or a to-one got a new value.
        case setting
        /// Objects were added to a to-many.
        case insertion
        /// Objects were removed from a to-many.
        case removal
        /// Objects were both added and removed, or an ordered to-many was reordered.
        case replacement
    }

    public let object: ManagedObject
    public let key: String
    public let kind: Kind
    /// For attributes and to-ones: the value before and after, as `value(forKey:)` gives them; `nil` for
    /// to-manys.
    public let oldValue: Any?
    public let newValue: Any?
    /// For to-manys: the objects added and the objects removed.
    public let inserted: [ManagedObject]
    public let removed: [ManagedObject]

    public var description: String {
        switch kind {
        case .setting:
            return "\(object.label).\(key): \(oldValue.map { "\($0)" } ?? "nil") → \(newValue.map { "\($0)" } ?? "nil")"
        default:
            return "\(object.label).\(key): \(kind) +\(inserted.map(\.label)) -\(removed.map(\.label))"
        }
    }
}

/// The changes a context processed, as change observers receive them (Core Data's objects-did-change
/// notification): objects inserted, updated (with the keys that changed), deleted and refreshed since the
/// last time changes were processed. An object inserted and deleted again in between is in neither list;
/// an inserted or deleted object is not also listed as updated.
public struct ContextChanges: CustomStringConvertible {
    public internal(set) var inserted: [ManagedObject] = []
    public internal(set) var updated: [ManagedObject] = []
    /// The keys each updated object changed.
    public internal(set) var changedKeys: [ManagedObject: Set<String>] = [:]
    public internal(set) var deleted: [ManagedObject] = []
    /// Objects refreshed from the store (``ObjectContext/refresh(_:mergeChanges:)``, and the objects whose
    /// values ``ObjectContext/merge(changesFrom:)`` or a merge policy took from the store). Values the
    /// store brought in are not listed as updates: key observers hear of each of them.
    public internal(set) var refreshed: [ManagedObject] = []
    /// Whether every object left the context (``ObjectContext/reset()``; Core Data's
    /// `NSInvalidatedAllObjectsKey`). The lists are empty then.
    public internal(set) var invalidatedAll = false

    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && refreshed.isEmpty && !invalidatedAll
    }

    public var description: String {
        func labels(_ objects: [ManagedObject]) -> String { objects.map(\.label).joined(separator: ", ") }
        let updates = updated.map { "\($0.label) (\((changedKeys[$0] ?? []).sorted().joined(separator: ", ")))" }
        if invalidatedAll { return "invalidated all objects" }
        return
            "inserted [\(labels(inserted))], updated [\(updates.joined(separator: ", "))], deleted [\(labels(deleted))], refreshed [\(labels(refreshed))]"
    }
}

/// Keeps an observation alive: cancel it, or let it go, to stop observing.
///
/// For example:
///
/// ```swift
/// let token = try ann.observe("salary") { change in print(change.newValue ?? "none") }
/// try ann.setValue(70000, forKey: "salary")       // prints 70000
/// token.cancel()
/// ```
public final class ObservationToken {
    private var onCancel: (() -> Void)?

    init(_ onCancel: @escaping () -> Void) { self.onCancel = onCancel }

    /// Stops the observation (calling it again does nothing).
    public func cancel() {
        let onCancel = self.onCancel
        self.onCancel = nil
        onCancel?()
    }

    deinit { cancel() }
}

/// The observers of one context and what they have not been told yet.
struct ObservationState {
    struct KeyObserver {
        let id: Int
        let object: ManagedObject
        let key: String?
        let handler: (KeyChange) -> Void
    }

    struct Observer<Payload> {
        let id: Int
        let handler: (Payload) -> Void
    }

    private var lastID = 0
    var keyObservers: [ObjectIdentifier: [KeyObserver]] = [:]
    var changeObservers: [Observer<ContextChanges>] = []
    var willSaveObservers: [Observer<Void>] = []
    var didSaveObservers: [Observer<SaveChanges>] = []

    /// Primitive changes of the operation under way (forward, or backward for undo and reverts).
    var buffer: [(change: Change, forward: Bool)] = []
    /// What change observers have not been told yet.
    var unprocessed = UnprocessedChanges()
    /// How deep in ``ObjectContext/takingStoreValues(_:)`` the context is.
    var storeValueDepth = 0
    /// While `willSave()` runs: the objects it changed.
    var touched: [ObjectIdentifier: ManagedObject]?

    var isRecording: Bool { !keyObservers.isEmpty || !changeObservers.isEmpty || touched != nil }

    mutating func nextID() -> Int {
        lastID += 1
        return lastID
    }

    mutating func note(_ change: Change, forward: Bool) {
        buffer.append((change, forward))
        if touched != nil { touched![ObjectIdentifier(change.object)] = change.object }
    }

    mutating func discardBuffered(from start: Int) {
        if buffer.count > start { buffer.removeSubrange(start...) }
    }

    /// Forgets what observers were not told yet and every key observation (the objects left).
    mutating func invalidateAll() {
        buffer.removeAll()
        unprocessed = UnprocessedChanges()
        keyObservers.removeAll()
    }

    mutating func remove(_ id: Int) {
        for (key, observers) in keyObservers where observers.contains(where: { $0.id == id }) {
            let remaining = observers.filter { $0.id != id }
            keyObservers[key] = remaining.isEmpty ? nil : remaining
        }
        changeObservers.removeAll { $0.id == id }
        willSaveObservers.removeAll { $0.id == id }
        didSaveObservers.removeAll { $0.id == id }
    }

    func isActive(_ id: Int, keyObserverOf object: ObjectIdentifier) -> Bool {
        keyObservers[object]?.contains { $0.id == id } ?? false
    }
}

/// Inserted, updated, deleted and refreshed objects not yet told to change observers.
struct UnprocessedChanges {
    private var inserted = ObjectList()
    private var deleted = ObjectList()
    private var refreshed = ObjectList()
    private var updated = ObjectList()
    private var keys: [ObjectIdentifier: Set<String>] = [:]

    /// An object became part of the graph (inserted, or its deletion undone).
    mutating func appeared(_ object: ManagedObject) {
        if deleted.remove(object, keepingOrder: true) == nil { inserted.insert(object) }
    }

    /// An object left the graph (deleted, or its insertion undone).
    mutating func disappeared(_ object: ManagedObject) {
        if inserted.remove(object, keepingOrder: true) == nil { deleted.insert(object) }
    }

    mutating func changed(_ object: ManagedObject, _ key: String) {
        updated.insert(object)
        keys[ObjectIdentifier(object), default: []].insert(key)
    }

    mutating func refreshed(_ object: ManagedObject) { refreshed.insert(object) }

    /// What to tell observers, or `nil` when nothing happened; afterwards nothing is left.
    mutating func take() -> ContextChanges? {
        defer { self = UnprocessedChanges() }
        var changes = ContextChanges()
        changes.inserted = inserted.objects
        changes.deleted = deleted.objects
        changes.refreshed = refreshed.objects
        for object in updated.objects where !inserted.contains(object) && !deleted.contains(object) {
            changes.updated.append(object)
            changes.changedKeys[object] = keys[ObjectIdentifier(object)] ?? []
        }
        return changes.isEmpty ? nil : changes
    }
}

extension Change {
    /// The object whose own slot (or membership) the change is about.
    var object: ManagedObject {
        switch self {
        case .attribute(let object, _, _, _), .toOne(let object, _, _, _), .toManyInsert(let object, _, _, _),
            .toManyRemove(let object, _, _, _, _), .inserted(let object), .deleted(let object):
            return object
        }
    }
}

/// Folds the primitive changes of one operation into one ``KeyChange`` per object and key.
struct KeyChangeFolder {
    private enum Net {
        case attribute(old: Value?, new: Value?)
        case toOne(old: ManagedObject?, new: ManagedObject?)
        case toMany(inserted: ObjectList, removed: ObjectList, reordered: Bool)
    }

    private struct Slot: Hashable {
        let object: ObjectIdentifier
        let isRelationship: Bool
        let index: Int
    }

    private var order: [(slot: Slot, object: ManagedObject)] = []
    private var nets: [Slot: Net] = [:]
    /// Objects that joined (`true`) or left (`false`) the graph, in order.
    private(set) var membership: [(object: ManagedObject, appeared: Bool)] = []

    mutating func add(_ change: Change, forward: Bool) {
        switch change {
        case .attribute(let object, let index, let old, let new):
            let slot = Slot(object: ObjectIdentifier(object), isRelationship: false, index: index)
            let (from, to) = forward ? (old, new) : (new, old)
            if case .attribute(let first, _)? = nets[slot] {
                nets[slot] = .attribute(old: first, new: to)
            } else {
                start(slot, object, .attribute(old: from, new: to))
            }
        case .toOne(let object, let index, let old, let new):
            let slot = Slot(object: ObjectIdentifier(object), isRelationship: true, index: index)
            let (from, to) = forward ? (old, new) : (new, old)
            if case .toOne(let first, _)? = nets[slot] {
                nets[slot] = .toOne(old: first, new: to)
            } else {
                start(slot, object, .toOne(old: from, new: to))
            }
        case .toManyInsert(let object, let index, let member, _):
            toMany(object, index, member, adding: forward)
        case .toManyRemove(let object, let index, let member, _, _):
            toMany(object, index, member, adding: !forward)
        case .inserted(let object):
            membership.append((object, forward))
        case .deleted(let object):
            membership.append((object, !forward))
        }
    }

    private mutating func start(_ slot: Slot, _ object: ManagedObject, _ net: Net) {
        order.append((slot, object))
        nets[slot] = net
    }

    private mutating func toMany(_ object: ManagedObject, _ index: Int, _ member: ManagedObject, adding: Bool) {
        let slot = Slot(object: ObjectIdentifier(object), isRelationship: true, index: index)
        guard case .toMany(var inserted, var removed, var reordered)? = nets[slot] else {
            start(
                slot, object,
                .toMany(
                    inserted: adding ? ObjectList([member]) : ObjectList(),
                    removed: adding ? ObjectList() : ObjectList([member]), reordered: false))
            return
        }
        nets[slot] = nil  // so the lists below are not copied
        if adding {
            if removed.remove(member, keepingOrder: true) != nil { reordered = true } else { inserted.insert(member) }
        } else {
            if inserted.remove(member, keepingOrder: true) == nil { removed.insert(member) }
        }
        nets[slot] = .toMany(inserted: inserted, removed: removed, reordered: reordered)
    }

    /// One change per object and key that ends different from how it began, in the order first changed.
    var changes: [KeyChange] {
        order.compactMap { slot, object in
            let entity = object.entity
            switch nets[slot] {
            case .attribute(let old, let new)?:
                guard old != new else { return nil }
                return KeyChange(
                    object: object, key: entity.attributes[slot.index].name, kind: .setting, oldValue: old?.anyValue,
                    newValue: new?.anyValue, inserted: [], removed: [])
            case .toOne(let old, let new)?:
                guard old !== new else { return nil }
                return KeyChange(
                    object: object, key: entity.relationships[slot.index].name, kind: .setting, oldValue: old,
                    newValue: new, inserted: [], removed: [])
            case .toMany(let inserted, let removed, let reordered)?:
                let isOrdered = entity.relationships[slot.index].isOrdered
                guard !inserted.isEmpty || !removed.isEmpty || (reordered && isOrdered) else { return nil }
                let kind: KeyChange.Kind =
                    removed.isEmpty && !reordered
                    ? .insertion : inserted.isEmpty && !reordered ? .removal : .replacement
                return KeyChange(
                    object: object, key: entity.relationships[slot.index].name, kind: kind, oldValue: nil,
                    newValue: nil, inserted: inserted.objects, removed: removed.objects)
            case nil:
                return nil
            }
        }
    }
}

extension ObjectContext {
    // MARK: Observing

    /// Calls `handler` with every change of the object's value for `key` (or for every key, when `key`
    /// is `nil`), once per operation that changes it, undo and redo included, until the token is
    /// cancelled or released. The observation keeps the object alive.
    func observe(
        _ object: ManagedObject, key: String?, _ handler: @escaping (KeyChange) -> Void
    ) -> ObservationToken {
        let id = observation.nextID()
        observation.keyObservers[ObjectIdentifier(object), default: []].append(
            ObservationState.KeyObserver(id: id, object: object, key: key, handler: handler))
        return token(id)
    }

    private func token(_ id: Int) -> ObservationToken {
        ObservationToken { [weak self] in self?.observation.remove(id) }
    }

    /// Calls `handler` each time the context processes its changes (``processPendingChanges()``, which
    /// saving, undo and redo also do), with what was inserted, updated, deleted and refreshed since the
    /// last time. Nothing is sent when nothing changed.
    ///
    /// For example:
    ///
    /// ```swift
    /// let token = context.observeChanges { changes in
    ///     for object in changes.updated { print(object.label, changes.changedKeys[object] ?? []) }
    /// }
    /// ```
    public func observeChanges(_ handler: @escaping (ContextChanges) -> Void) -> ObservationToken {
        let id = observation.nextID()
        observation.changeObservers.append(.init(id: id, handler: handler))
        return token(id)
    }

    /// Calls `handler` when a save begins, after pending changes are processed and before objects get
    /// `willSave()` and are validated.
    public func observeWillSave(_ handler: @escaping () -> Void) -> ObservationToken {
        let id = observation.nextID()
        observation.willSaveObservers.append(.init(id: id, handler: handler))
        return token(id)
    }

    /// Calls `handler` after each successful save, once objects got `didSave()`, with what was saved.
    public func observeDidSave(_ handler: @escaping (SaveChanges) -> Void) -> ObservationToken {
        let id = observation.nextID()
        observation.didSaveObservers.append(.init(id: id, handler: handler))
        return token(id)
    }

    /// Tells change observers what changed since they were last told: objects inserted, updated (with
    /// their keys), deleted and refreshed. Saving, undo, redo and rollback call it; call it yourself to report
    /// changes sooner (Core Data's AppKit contexts do at the end of every event).
    public func processPendingChanges() {
        deliverObservedChanges()
        guard let changes = observation.unprocessed.take(), !observation.changeObservers.isEmpty else { return }
        for observer in observation.changeObservers { observer.handler(changes) }
    }

    /// Folds what the operation just ended changed, sends key observers their changes and keeps the rest
    /// for change observers.
    func deliverObservedChanges() {
        guard !observation.buffer.isEmpty else { return }
        var folder = KeyChangeFolder()
        for (change, forward) in observation.buffer { folder.add(change, forward: forward) }
        observation.buffer.removeAll()
        let changes = folder.changes
        if !observation.changeObservers.isEmpty {
            for (object, appeared) in folder.membership {
                if appeared {
                    observation.unprocessed.appeared(object)
                } else {
                    observation.unprocessed.disappeared(object)
                }
            }
            for change in changes { observation.unprocessed.changed(change.object, change.key) }
        }
        sendToKeyObservers(changes)
    }

    private func sendToKeyObservers(_ changes: [KeyChange]) {
        guard !observation.keyObservers.isEmpty else { return }
        for change in changes {
            let objectKey = ObjectIdentifier(change.object)
            for observer in observation.keyObservers[objectKey] ?? []
            where (observer.key == nil || observer.key == change.key)
                && observation.isActive(observer.id, keyObserverOf: objectKey)
            {
                observer.handler(change)
            }
        }
    }

    /// Before a rollback: notes what it is about to change, as the primitive changes that would take
    /// each pending object back to its saved values — new objects leave, deleted ones come back, changed
    /// values return — so that observers hear of it when it is processed.
    func noteRollback() {
        guard observation.isRecording else { return }
        for object in pending.values.sorted(by: { $0.objectID < $1.objectID }) {
            if object.isInsertedFlag {
                if !object.isDeletedFlag { observation.note(.inserted(object), forward: false) }
                continue
            }
            if object.isDeletedFlag { observation.note(.deleted(object), forward: false) }
            guard let current = object.storage, let saved = object.committed else { continue }
            for index in object.entity.attributes.indices where current.attributes[index] != saved.attributes[index] {
                observation.note(
                    .attribute(object, index, old: current.attributes[index], new: saved.attributes[index]),
                    forward: true)
            }
            for index in object.entity.relationships.indices {
                switch (current.relationships[index], saved.relationships[index]) {
                case (.toOne(let now), .toOne(let before)) where now !== before:
                    observation.note(.toOne(object, index, old: now, new: before), forward: true)
                case (.toMany(let now), .toMany(let before)):
                    let kept = ObjectList(before.objects)
                    for member in now where !kept.contains(member) {
                        observation.note(
                            .toManyRemove(object, index, member, position: 0, keepingOrder: true), forward: true)
                    }
                    for member in before where !now.contains(member) {
                        observation.note(.toManyInsert(object, index, member, position: 0), forward: true)
                    }
                default:
                    break
                }
            }
        }
    }

    /// Notes a refresh for change observers.
    func noteRefreshed(_ object: ManagedObject) {
        if !observation.changeObservers.isEmpty { observation.unprocessed.refreshed(object) }
    }

    // MARK: Values the store brings in

    /// Runs `body`, which takes values from the store into objects (a merge, a refresh, a merge policy)
    /// and notes each slot it changes with ``noteStoreChange(_:_:from:to:)`` or ``noteStoreChange(_:)``;
    /// then key observers hear of each changed key once, with its net change, and change observers get
    /// the objects as refreshed (not as updated: this context did not change them).
    func takingStoreValues<T>(_ body: () throws -> T) rethrows -> T {
        // Nested calls (a merge refreshing objects) deliver once, at the outermost.
        guard observation.storeValueDepth == 0 else { return try body() }
        let start = observation.buffer.count
        observation.storeValueDepth += 1
        defer {
            observation.storeValueDepth -= 1
            deliverStoreChanges(from: start)
        }
        return try body()
    }

    private func deliverStoreChanges(from start: Int) {
        guard observation.buffer.count > start else { return }
        var folder = KeyChangeFolder()
        for (change, forward) in observation.buffer[start...] { folder.add(change, forward: forward) }
        observation.discardBuffered(from: start)
        let changes = folder.changes
        if !observation.changeObservers.isEmpty {
            for (object, appeared) in folder.membership {
                if appeared {
                    observation.unprocessed.appeared(object)
                } else {
                    observation.unprocessed.disappeared(object)
                }
            }
            for change in changes { observation.unprocessed.refreshed(change.object) }
        }
        sendToKeyObservers(changes)
    }

    /// Notes a change the store brought in (see ``takingStoreValues(_:)``).
    func noteStoreChange(_ change: Change) {
        if observation.isRecording { observation.note(change, forward: true) }
    }

    /// Notes that a relationship slot went from `old` to `new` because of the store, as the primitive
    /// changes between them (a slot not in memory on either side has nothing observers saw).
    func noteStoreChange(
        _ object: ManagedObject, _ index: Int, from old: RelationshipStorage, to new: RelationshipStorage
    ) {
        guard observation.isRecording else { return }
        switch (old, new) {
        case (.toOne(let before), .toOne(let after)) where before !== after:
            observation.note(.toOne(object, index, old: before, new: after), forward: true)
        case (.toMany(let before), .toMany(let after)):
            let removed = before.objects.filter { !after.contains($0) }
            let added = after.objects.filter { !before.contains($0) }
            for member in removed {
                observation.note(.toManyRemove(object, index, member, position: 0, keepingOrder: true), forward: true)
            }
            for member in added { observation.note(.toManyInsert(object, index, member, position: 0), forward: true) }
            // An ordered to-many whose members stayed but moved: one member leaving and coming back makes
            // the change a replacement.
            if removed.isEmpty && added.isEmpty && object.entity.relationships[index].isOrdered,
                let moved = zip(before.objects, after.objects).first(where: { $0.0 !== $0.1 })?.1
            {
                observation.note(.toManyRemove(object, index, moved, position: 0, keepingOrder: true), forward: true)
                observation.note(.toManyInsert(object, index, moved, position: 0), forward: true)
            }
        default:
            break
        }
    }

    /// Before an object with key observers turns into a fault: the store's values are read and each one
    /// that differs from the value the object held is noted, so that observers hear of the values they will
    /// read next (an object nobody observes is not read).
    func noteStoreValuesBeforeFaulting(_ object: ManagedObject) throws {
        guard observation.keyObservers[ObjectIdentifier(object)] != nil, let current = object.storage,
            !object.objectID.isTemporary, let snapshot = try store.snapshot(for: object.objectID.ref)
        else { return }
        for (index, attribute) in object.entity.attributes.enumerated() where !attribute.isTransient {
            if current.attributes[index] != snapshot.attributes[index] {
                noteStoreChange(
                    .attribute(object, index, old: current.attributes[index], new: snapshot.attributes[index]))
            }
        }
        for (index, relationship) in object.entity.relationships.enumerated() where !relationship.isTransient {
            if case .unloaded = current.relationships[index] { continue }
            var refs = snapshot.relationships[index].refs
            if case .unloaded = snapshot.relationships[index] {
                refs = try store.relatedRefs(of: object.objectID.ref, relationship: index)
            }
            let stored = refs.map { self.object(for: $0) }
            noteStoreChange(
                object, index, from: current.relationships[index],
                to: relationship.isToMany ? .toMany(ObjectList(stored)) : .toOne(stored.first))
        }
    }

    // MARK: As asynchronous sequences

    /// The context's processed changes as an asynchronous sequence (see ``observeChanges(_:)``). The
    /// sequence ends when the context goes away. When the consumer is done with it (its task is cancelled,
    /// or it lets go of the sequence), the observation ends at the next change, on the context's thread.
    ///
    /// For example:
    ///
    /// ```swift
    /// let changes = context.changes()
    /// Task { for await change in changes { print(change) } }
    /// ```
    public func changes() -> AsyncStream<ContextChanges> {
        ObservationStream.make { observeChanges($0) }
    }

    /// Save beginnings as an asynchronous sequence (see ``observeWillSave(_:)``).
    public func willSaveEvents() -> AsyncStream<Void> {
        ObservationStream.make { handler in observeWillSave { handler(()) } }
    }

    /// Saves as an asynchronous sequence of what each wrote (see ``observeDidSave(_:)``).
    public func didSaveEvents() -> AsyncStream<SaveChanges> {
        ObservationStream.make { observeDidSave($0) }
    }
}

extension ManagedObject {
    /// Calls `handler` with every change of the value for `key` (every key when `nil`): once per
    /// operation that changes it — a `setValue`, one call on a ``RelationshipSet``, the other side of a
    /// relationship being set, a deletion's delete rules, undo and redo — until the token is cancelled or
    /// released. The observation keeps the object alive.
    ///
    /// For example:
    ///
    /// ```swift
    /// let token = try sales.observe("employees") { change in
    ///     print(change.kind, change.inserted.count)     // insertion 1
    /// }
    /// try sales.relatedObjects(forKey: "employees").insert(ann)
    /// ```
    ///
    /// - Throws: `GraftError.notFound` for a key the entity does not have; `GraftError.invalidOperation`
    ///   when the object's context is gone.
    public func observe(_ key: String? = nil, _ handler: @escaping (KeyChange) -> Void) throws -> ObservationToken {
        let context = try requireContext()
        if let key, entity.attributeIndexByName[key] == nil, entity.relationshipIndexByName[key] == nil {
            throw unknownKey(key)
        }
        return context.observe(self, key: key, handler)
    }

    /// The changes of the value for `key` (every key when `nil`) as an asynchronous sequence (see
    /// ``observe(_:_:)``). It ends when the context goes away.
    public func changes(forKey key: String? = nil) throws -> AsyncStream<KeyChange> {
        let context = try requireContext()
        if let key, entity.attributeIndexByName[key] == nil, entity.relationshipIndexByName[key] == nil {
            throw unknownKey(key)
        }
        return ObservationStream.make { context.observe(self, key: key, $0) }
    }
}

/// Turns an observation into an `AsyncStream`. The observer holds the stream's end; when the consumer
/// stops, the observation is cancelled at its next event (on the context's thread, never from the
/// consumer's), and when the context goes away the stream finishes.
enum ObservationStream {
    static func make<Element>(
        _ subscribe: (@escaping (Element) -> Void) -> ObservationToken
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .unbounded)
        let end = StreamEnd(continuation)
        continuation.onTermination = { [weak end] _ in end?.consumerStopped() }
        let holder = TokenHolder()
        holder.token = subscribe { element in
            guard end.isConsumed else {
                holder.token?.cancel()
                holder.token = nil
                return
            }
            nonisolated(unsafe) let element = element
            end.continuation.yield(element)
        }
        // The observer's closure holds `end`; once the observer is removed (or its context freed),
        // `end` goes away and finishes the stream.
        return stream
    }

    private final class TokenHolder {
        var token: ObservationToken?
    }

    private final class StreamEnd<Element>: @unchecked Sendable {
        let continuation: AsyncStream<Element>.Continuation
        private let lock = NSLock()
        private var stopped = false

        init(_ continuation: AsyncStream<Element>.Continuation) { self.continuation = continuation }

        var isConsumed: Bool {
            lock.lock()
            defer { lock.unlock() }
            return !stopped
        }

        func consumerStopped() {
            lock.lock()
            stopped = true
            lock.unlock()
        }

        deinit { continuation.finish() }
    }
}
