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
    /// Nesting of `withoutUndoRegistration` calls: while above 0, changes are not kept for undo.
    var pausedDepth = 0
}

extension ObjectContext {
    // MARK: Public undo interface

    /// Whether changes are recorded for undo. Switch it off for bulk work (imports, pastes) to save memory;
    /// switching it off clears the undo and redo stacks. To make changes that are not undone while
    /// keeping the stacks, use ``withoutUndoRegistration(_:)``.
    public var isUndoEnabled: Bool {
        get { undoState.isEnabled }
        set {
            undoState.isEnabled = newValue
            if !newValue { removeAllUndoActions() }
        }
    }

    /// How many groups are kept for undo (0, the default: no limit), as Foundation's undo manager
    /// counts them: when a new group passes the limit, the oldest is forgotten; lowering the limit
    /// forgets the oldest groups at once.
    public var levelsOfUndo: Int {
        get { undoState.levelsOfUndo }
        set {
            undoState.levelsOfUndo = max(0, newValue)
            trimUndoGroups()
        }
    }

    /// How many steps ``undo()`` can take back now.
    public var undoCount: Int {
        undoState.undoGroups.count + (!undoState.current.isEmpty && undoState.explicitDepth == 0 ? 1 : 0)
    }

    /// Runs `body` without keeping its changes for undo, and without clearing what is kept: the changes
    /// are made (and saved) like any others, but ``undo()`` passes over them, as it does in Core Data
    /// between `disableUndoRegistration()` and `enableUndoRegistration()`. For changes a document makes
    /// on its own (an object created when an old document is opened) that must not make it look edited
    /// by the user.
    ///
    /// For example:
    ///
    /// ```swift
    /// try context.withoutUndoRegistration {
    ///     let settings = try context.insert("Settings")
    ///     try document.setValue(settings, forKey: "settings")
    /// }
    /// context.undo()   // takes back the user's last change, not the settings
    /// ```
    public func withoutUndoRegistration<T>(_ body: () throws -> T) rethrows -> T {
        // Changes before the pause form their own step (unless an explicit group is open).
        if undoState.explicitDepth == 0 && undoState.operationDepth == 0 { closeUndoGroup() }
        let start = undoState.current.count
        undoState.pausedDepth += 1
        undoState.operationDepth += 1
        defer {
            undoState.pausedDepth -= 1
            if undoState.current.count > start { undoState.current.removeSubrange(start...) }
            endOperation()  // observers hear of the changes; changes made before a failure in `body` stay made
        }
        return try body()
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
        if undoState.isEnabled && undoState.pausedDepth == 0 {
            undoState.undoGroups.append(undoState.current)
            undoState.redoGroups.removeAll()
            trimUndoGroups()
        }
        undoState.current.removeAll()
    }

    private func trimUndoGroups() {
        if undoState.levelsOfUndo > 0 && undoState.undoGroups.count > undoState.levelsOfUndo {
            undoState.undoGroups.removeFirst(undoState.undoGroups.count - undoState.levelsOfUndo)
        }
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
