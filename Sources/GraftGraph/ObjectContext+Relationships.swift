import GraftCore
import GraftModel

/// Edits that keep both sides of every relationship consistent.
///
/// Every edit is built from primitives that change one object's own slot; each edit also changes the
/// other side: setting `employee.department` removes the employee from the old department's `employees`
/// and adds it to the new one's; for a one-to-one, the new partner's previous partner is released.
extension ObjectContext {
    func setAttribute(_ object: ManagedObject, _ index: Int, _ value: Value?) throws {
        try checkEditable(object)
        try fulfill(object)
        primitiveSetAttribute(object, index, value)
    }

    /// Points a to-one relationship at `target` (or clears it), updating the inverse side.
    func setToOne(_ object: ManagedObject, _ index: Int, _ target: ManagedObject?) throws {
        try checkEditable(object)
        try fulfill(object)
        let relationship = object.entity.relationships[index]
        if let target { try checkTarget(target, for: relationship, of: object) }
        guard case .toOne(let old) = object.storage!.relationships[index], old !== target else { return }
        if let inverseIndex = relationship.inverseIndex {
            if let old { try unlinkInverse(of: object, from: old, inverseIndex) }
            if let target { try linkInverse(of: object, to: target, inverseIndex, relationship: index) }
        }
        primitiveSetToOne(object, index, target)
    }

    /// Adds `member` to a to-many relationship (at `position` for ordered ones), updating the inverse.
    func addToMany(_ object: ManagedObject, _ index: Int, _ member: ManagedObject, at position: Int? = nil) throws {
        try checkEditable(object)
        try loadToMany(object, index)
        let relationship = object.entity.relationships[index]
        try checkTarget(member, for: relationship, of: object)
        guard case .toMany(let list) = object.storage!.relationships[index] else { return }
        if list.contains(member) {
            if let position, relationship.isOrdered { try move(object, index, member, to: position) }
            return
        }
        if let inverseIndex = relationship.inverseIndex {
            try linkInverse(of: object, to: member, inverseIndex, relationship: index)
        }
        primitiveInsert(object, index, member, at: position)
    }

    /// Removes `member` from a to-many relationship, updating the inverse.
    func removeFromToMany(_ object: ManagedObject, _ index: Int, _ member: ManagedObject) throws {
        try checkEditable(object)
        try loadToMany(object, index)
        guard case .toMany(let list) = object.storage!.relationships[index], list.contains(member) else { return }
        if let inverseIndex = object.entity.relationships[index].inverseIndex {
            try unlinkInverse(of: object, from: member, inverseIndex)
        }
        primitiveRemove(object, index, member)
    }

    /// Replaces a to-many relationship's contents (in the given order for ordered relationships).
    func replaceToMany(_ object: ManagedObject, _ index: Int, with objects: [ManagedObject]) throws {
        try loadToMany(object, index)
        let wanted = ObjectList(objects)
        for member in object.storage!.relationships[index].objects where !wanted.contains(member) {
            try removeFromToMany(object, index, member)
        }
        for (position, member) in wanted.enumerated() {
            try addToMany(object, index, member, at: object.entity.relationships[index].isOrdered ? position : nil)
        }
    }

    /// Moves a member of an ordered relationship to a new position.
    func move(_ object: ManagedObject, _ index: Int, _ member: ManagedObject, to position: Int) throws {
        guard case .toMany(let list) = object.storage!.relationships[index], let current = list.firstIndex(of: member),
            current != position
        else { return }
        primitiveRemove(object, index, member)
        primitiveInsert(object, index, member, at: position)
    }

    /// Makes `target`'s inverse slot include `object`. For a one-to-one, `target`'s previous partner loses
    /// its link; for a one-to-many, `object` leaves the to-many it was in.
    private func linkInverse(
        of object: ManagedObject, to target: ManagedObject, _ inverseIndex: Int, relationship index: Int
    ) throws {
        let inverse = target.entity.relationships[inverseIndex]
        if inverse.isToMany {
            try loadToMany(target, inverseIndex)
            primitiveInsert(target, inverseIndex, object)
        } else {
            try fulfill(target)
            if case .toOne(let previous) = target.storage!.relationships[inverseIndex], let previous,
                previous !== object
            {
                // `previous` pointed at `target` through this relationship; release it.
                try fulfill(previous)
                if object.entity.relationships[index].isToMany {
                    try loadToMany(previous, index)
                    primitiveRemove(previous, index, target)
                } else {
                    primitiveSetToOne(previous, index, nil)
                }
            }
            primitiveSetToOne(target, inverseIndex, object)
        }
    }

    /// Removes `object` from `target`'s inverse slot.
    func unlinkInverse(of object: ManagedObject, from target: ManagedObject, _ inverseIndex: Int) throws {
        let inverse = target.entity.relationships[inverseIndex]
        if inverse.isToMany {
            try loadToMany(target, inverseIndex)
            primitiveRemove(target, inverseIndex, object)
        } else {
            try fulfill(target)
            if case .toOne(let current) = target.storage!.relationships[inverseIndex], current === object {
                primitiveSetToOne(target, inverseIndex, nil)
            }
        }
    }

    func checkEditable(_ object: ManagedObject) throws {
        guard object.context === self else {
            throw GraftError(
                .invalidOperation, "the object belongs to another context", context: [.object(object.label)])
        }
        guard !object.isDeletedFlag else {
            throw GraftError(.invalidOperation, "the object has been deleted", context: [.object(object.label)])
        }
    }

    private func checkTarget(
        _ target: ManagedObject, for relationship: RelationshipDescription, of object: ManagedObject
    ) throws {
        guard target.context === self else {
            throw GraftError(
                .invalidOperation, "cannot relate objects of different contexts",
                context: [.object(object.label), .key(relationship.name)])
        }
        guard !target.isDeletedFlag else {
            throw GraftError(
                .invalidOperation, "cannot relate to \(target.label), which has been deleted",
                context: [.object(object.label), .key(relationship.name)])
        }
        let destination = model.destination(of: relationship)
        guard model.isKind(target.entity, of: destination) else {
            throw GraftError(
                .typeMismatch, "expects \(destination.name) objects, not \(target.entity.name)",
                context: [.object(object.label), .key(relationship.name)])
        }
    }
}
