import GraftCore
import GraftModel

extension ObjectContext {
    /// Deletes an object, applying every delete rule of its relationships.
    ///
    /// - Deny: the deletion is refused while the relationship holds any object that is not itself being
    ///   deleted;
    /// - Nullify: the object is removed from the inverse of each related object;
    /// - Cascade: the related objects are deleted too (recursively, each once, cycles included);
    /// - No Action: related objects are left as they are, still pointing at the deleted object.
    ///
    /// The deletion and its cascades form one undo step. Nothing changes if any Deny rule refuses.
    ///
    /// - Throws: `GraftError.deleteDenied` naming every object and relationship that refused.
    public func delete(_ object: ManagedObject) throws {
        try delete([object])
    }

    /// Deletes several objects at once (Deny rules between them do not refuse: see `delete(_:)`).
    public func delete(_ objects: [ManagedObject]) throws {
        for object in objects {
            guard object.context === self else {
                throw GraftError(
                    .invalidOperation, "the object belongs to another context", context: [.object(object.label)])
            }
        }
        try perform {
            let doomed = try deletionClosure(of: objects.filter { !$0.isDeletedFlag })
            try checkDenyRules(doomed)
            try prepareForDeletion(doomed.objects)  // before the delete rules tear relationships down
            for object in doomed.objects { try detach(object, doomed: doomed) }
            for object in doomed.objects {
                object.isDeletedFlag = true
                record(.deleted(object))
                touch(object)
            }
        }
    }

    /// The objects to delete: the given ones and, through Cascade rules, everything they own.
    private func deletionClosure(of roots: [ManagedObject]) throws -> ObjectList {
        var doomed = ObjectList()
        var work = roots
        while let object = work.popLast() {
            guard doomed.insert(object) != nil else { continue }
            try fulfill(object)
            for (index, relationship) in object.entity.relationships.enumerated()
            where relationship.deleteRule == .cascade {
                if relationship.isToMany { try loadToMany(object, index) }
                for target in object.storage!.relationships[index].objects
                where !target.isDeletedFlag && !doomed.contains(target) {
                    work.append(target)
                }
            }
        }
        return doomed
    }

    private func checkDenyRules(_ doomed: ObjectList) throws {
        var refusals: [GraftError] = []
        for object in doomed.objects {
            for (index, relationship) in object.entity.relationships.enumerated() where relationship.deleteRule == .deny
            {
                if relationship.isToMany { try loadToMany(object, index) }
                let blocking = object.storage!.relationships[index].objects.filter {
                    !$0.isDeletedFlag && !doomed.contains($0)
                }
                if !blocking.isEmpty {
                    let what = blocking.count == 1 ? blocking[0].label : "\(blocking.count) objects"
                    refusals.append(
                        GraftError(
                            .deleteDenied, "cannot be deleted while '\(relationship.name)' holds \(what) (Deny rule)",
                            context: [.object(object.label), .key(relationship.name)]))
                }
            }
        }
        if refusals.count == 1 { throw refusals[0] }
        if !refusals.isEmpty {
            throw GraftError(
                .deleteDenied, "the deletion is refused by \(refusals.count) Deny rules", underlying: refusals)
        }
    }

    /// Clears a doomed object's relationships, applying each one's delete rule to the other side.
    private func detach(_ object: ManagedObject, doomed: ObjectList) throws {
        for (index, relationship) in object.entity.relationships.enumerated() {
            if relationship.isToMany { try loadToMany(object, index) }
            let targets = object.storage!.relationships[index].objects
            guard !targets.isEmpty else { continue }
            if relationship.deleteRule != .noAction, let inverseIndex = relationship.inverseIndex {
                for target in targets where !doomed.contains(target) {
                    try unlinkInverse(of: object, from: target, inverseIndex)
                }
            }
            if relationship.isToMany {
                for target in targets { primitiveRemove(object, index, target) }
            } else {
                primitiveSetToOne(object, index, nil)
            }
        }
    }
}
