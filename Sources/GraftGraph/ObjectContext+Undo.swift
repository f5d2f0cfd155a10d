import GraftCore
import GraftModel

/// One primitive change to the graph. Undo applies them backwards, redo forwards.
///
/// A relationship edit that keeps inverses consistent is recorded as the several primitive changes it
/// makes, so undoing it needs no knowledge of inverses.
enum Change {
    case attribute(ManagedObject, Int, old: Value?, new: Value?)
    case toOne(ManagedObject, Int, old: ManagedObject?, new: ManagedObject?)
    case toManyInsert(ManagedObject, Int, ManagedObject, position: Int)
    case toManyRemove(ManagedObject, Int, ManagedObject, position: Int, keepingOrder: Bool)
    case inserted(ManagedObject)
    case deleted(ManagedObject)
}

struct UndoState {
    var undoGroups: [[Change]] = []
    var redoGroups: [[Change]] = []
    /// Changes of the group being built.
    var current: [Change] = []
    /// Nesting of `perform` calls (one public operation may call others).
    var operationDepth = 0
    /// Nesting of explicit `beginUndoGrouping()` calls.
    var explicitDepth = 0
    var isEnabled = true
    var levelsOfUndo = 0
}

extension ObjectContext {
    // MARK: Public undo interface

    /// Whether changes are recorded for undo. Switch it off for bulk work (imports, pastes) to save memory;
    /// switching it off clears the undo and redo stacks.
    public var isUndoEnabled: Bool {
        get { undoState.isEnabled }
        set {
            undoState.isEnabled = newValue
            if !newValue { removeAllUndoActions() }
        }
    }

    /// How many groups are kept for undo (0: no limit).
    public var levelsOfUndo: Int {
        get { undoState.levelsOfUndo }
        set { undoState.levelsOfUndo = max(0, newValue) }
    }

    public var canUndo: Bool {
        !undoState.undoGroups.isEmpty || (!undoState.current.isEmpty && undoState.explicitDepth == 0)
    }
    public var canRedo: Bool { !undoState.redoGroups.isEmpty }

    /// Starts a group: every change until the matching `endUndoGrouping()` is undone as one step.
    /// Without explicit groups, each public operation (an insert, a `setValue`, a deletion with its
    /// cascades) is its own step.
    public func beginUndoGrouping() {
        if undoState.explicitDepth == 0 { closeUndoGroup() }
        undoState.explicitDepth += 1
    }

    /// Ends a group started with `beginUndoGrouping()`.
    public func endUndoGrouping() {
        guard undoState.explicitDepth > 0 else { return }
        undoState.explicitDepth -= 1
        if undoState.explicitDepth == 0 { closeUndoGroup() }
    }

    /// Runs `body` as one undo group.
    ///
    /// For example:
    ///
    /// ```swift
    /// try context.undoGroup {
    ///     try ann.setValue(sales, forKey: "department")
    ///     try ann.setValue(60000, forKey: "salary")
    /// }
    /// context.undo()   // both edits are undone
    /// ```
    public func undoGroup<T>(_ body: () throws -> T) rethrows -> T {
        beginUndoGrouping()
        defer { endUndoGrouping() }
        return try body()
    }

    /// Reverts the last group of changes.
    public func undo() {
        if undoState.explicitDepth > 0 {
            // Undoing inside an open group closes it first, as Foundation's undo manager does.
            undoState.explicitDepth = 0
        }
        closeUndoGroup()
        guard let group = undoState.undoGroups.popLast() else { return }
        for change in group.reversed() { apply(change, forward: false) }
        undoState.redoGroups.append(group)
        processPendingChanges()
    }

    /// Applies again the last group of changes that was undone.
    public func redo() {
        guard let group = undoState.redoGroups.popLast() else { return }
        for change in group { apply(change, forward: true) }
        undoState.undoGroups.append(group)
        processPendingChanges()
    }

    /// Runs `body` with undo registration paused: its changes are made (and observed, and saved later) but
    /// are not undo steps, and the undo and redo stacks are kept as they were. (Foundation's undo manager
    /// calls this `disableUndoRegistration()` … `enableUndoRegistration()`; unlike switching
    /// ``isUndoEnabled`` off, nothing is cleared.) Changes made before a failure in `body` stay made.
    ///
    /// For example:
    ///
    /// ```swift
    /// override func awakeFromFetch() {
    ///     guard (try? relatedObject(forKey: "office")) == nil, let context else { return }
    ///     context.withoutUndoRegistration {
    ///         try? setValue(context.insert("Office"), forKey: "office")   // the document stays unedited
    ///     }
    /// }
    /// ```
    public func withoutUndoRegistration<T>(_ body: () throws -> T) rethrows -> T {
        let start = undoState.current.count
        undoState.operationDepth += 1
        defer {
            // What `body` recorded stays out of the undo group being built.
            if undoState.current.count > start { undoState.current.removeSubrange(start...) }
            endOperation()
        }
        return try body()
    }

    /// Forgets every undo and redo step.
    public func removeAllUndoActions() {
        undoState.undoGroups.removeAll()
        undoState.redoGroups.removeAll()
        undoState.current.removeAll()
    }

    // MARK: Recording

    /// Runs one operation: its changes form one undo step (unless an explicit group is open), and if it
    /// throws, every change it made is reverted, so an operation either happens whole or not at all.
    @discardableResult
    func perform<T>(_ body: () throws -> T) rethrows -> T {
        let start = undoState.current.count
        let observedStart = observation.buffer.count
        undoState.operationDepth += 1
        defer { endOperation() }
        do {
            return try body()
        } catch {
            let made = undoState.current[start...]
            for change in made.reversed() { apply(change, forward: false) }
            undoState.current.removeSubrange(start...)
            observation.discardBuffered(from: observedStart)  // observers hear nothing of a failed operation
            throw error
        }
    }

    /// Ends one (possibly nested) operation; the outermost one closes its undo group and tells observers.
    private func endOperation() {
        undoState.operationDepth -= 1
        guard undoState.operationDepth == 0 else { return }
        if undoState.explicitDepth == 0 { closeUndoGroup() }
        deliverObservedChanges()
    }

    func record(_ change: Change) {
        undoState.current.append(change)
        if observation.isRecording { observation.note(change, forward: true) }
    }

    private func closeUndoGroup() {
        guard !undoState.current.isEmpty else { return }
        if undoState.isEnabled {
            undoState.undoGroups.append(undoState.current)
            undoState.redoGroups.removeAll()
            if undoState.levelsOfUndo > 0 && undoState.undoGroups.count > undoState.levelsOfUndo {
                undoState.undoGroups.removeFirst(undoState.undoGroups.count - undoState.levelsOfUndo)
            }
        }
        undoState.current.removeAll()
    }

    // MARK: Primitives

    func touch(_ object: ManagedObject) {
        pending[ObjectIdentifier(object)] = object
    }

    func primitiveSetAttribute(_ object: ManagedObject, _ index: Int, _ value: Value?) {
        let old = object.storage!.attributes[index]
        guard old != value else { return }
        record(.attribute(object, index, old: old, new: value))
        object.storage!.attributes[index] = value
        touch(object)
    }

    func primitiveSetToOne(_ object: ManagedObject, _ index: Int, _ target: ManagedObject?) {
        guard case .toOne(let old) = object.storage!.relationships[index], old !== target else { return }
        record(.toOne(object, index, old: old, new: target))
        object.storage!.relationships[index] = .toOne(target)
        touch(object)
    }

    func primitiveInsert(_ object: ManagedObject, _ index: Int, _ member: ManagedObject, at position: Int? = nil) {
        guard case .toMany(var list) = object.storage!.relationships[index] else { return }
        object.storage!.relationships[index] = .unloaded  // release the list so the insert below does not copy it
        if let inserted = list.insert(member, at: position) {
            record(.toManyInsert(object, index, member, position: inserted))
            touch(object)
        }
        object.storage!.relationships[index] = .toMany(list)
    }

    func primitiveRemove(_ object: ManagedObject, _ index: Int, _ member: ManagedObject) {
        guard case .toMany(var list) = object.storage!.relationships[index] else { return }
        object.storage!.relationships[index] = .unloaded
        let keepingOrder = object.entity.relationships[index].isOrdered
        if let removed = list.remove(member, keepingOrder: keepingOrder) {
            record(.toManyRemove(object, index, member, position: removed, keepingOrder: keepingOrder))
            touch(object)
        }
        object.storage!.relationships[index] = .toMany(list)
    }

    /// Applies a recorded change forwards (redo) or backwards (undo), without recording it again.
    private func apply(_ change: Change, forward: Bool) {
        if observation.isRecording { observation.note(change, forward: forward) }
        switch change {
        case .attribute(let object, let index, let old, let new):
            try? fulfill(object)
            object.storage?.attributes[index] = forward ? new : old
            touch(object)
        case .toOne(let object, let index, let old, let new):
            try? fulfill(object)
            object.storage?.relationships[index] = .toOne(forward ? new : old)
            touch(object)
        case .toManyInsert(let object, let index, let member, let position):
            try? loadToMany(object, index)
            if forward {
                rawInsert(object, index, member, position)
            } else {
                rawRemove(object, index, member, keepingOrder: true)
            }
            touch(object)
        case .toManyRemove(let object, let index, let member, let position, let keepingOrder):
            try? loadToMany(object, index)
            if forward {
                rawRemove(object, index, member, keepingOrder: keepingOrder)
            } else {
                rawInsert(object, index, member, position)
            }
            touch(object)
        case .inserted(let object):
            if forward {
                object.isDeletedFlag = false
                register(object)
            } else {
                object.isDeletedFlag = true
                unregister(object)
            }
            touch(object)
        case .deleted(let object):
            object.isDeletedFlag = forward
            touch(object)
        }
    }

    private func rawInsert(_ object: ManagedObject, _ index: Int, _ member: ManagedObject, _ position: Int) {
        guard case .toMany(var list)? = object.storage?.relationships[index] else { return }
        object.storage!.relationships[index] = .unloaded
        list.insert(member, at: position)
        object.storage!.relationships[index] = .toMany(list)
    }

    private func rawRemove(_ object: ManagedObject, _ index: Int, _ member: ManagedObject, keepingOrder: Bool) {
        guard case .toMany(var list)? = object.storage?.relationships[index] else { return }
        object.storage!.relationships[index] = .unloaded
        list.remove(member, keepingOrder: keepingOrder)
        object.storage!.relationships[index] = .toMany(list)
    }
}
