import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// A rule a paste's result breaks, with the clipboard object the broken object was copied as (`nil` for
/// an object of the target that the paste changed, such as one a copy was linked to).
struct PasteViolation {
    var violation: RuleViolation
    var clipboardID: String?

    init(_ violation: RuleViolation, clipboardID: String?) {
        self.violation = violation
        self.clipboardID = clipboardID
    }
}

extension PastePlan {
    /// What a paste does with the rules its result breaks; every way of pasting (a new document, an
    /// empty store, a store through a context) hands what it found here, so that `validates` is decided
    /// in this one place.
    ///
    /// - Returns: with validation off, the violations, for the report to list (the paste goes ahead).
    /// - Throws: with validation on and anything found, `validationFailed` listing every violation, each
    ///   marked when the copied object already broke the same rule in the clipboard, and naming
    ///   `--no-validate`.
    func settle(_ found: [PasteViolation]) throws -> [RuleViolation] {
        guard !found.isEmpty else { return [] }
        guard options.validates else { return found.map(\.violation) }
        if options.acceptsViolationsTheClipboardHas {
            let already = clipboardViolations()
            let onlyInherited = found.allSatisfy { item in
                item.clipboardID.map {
                    already.contains(Broken(id: $0, property: item.violation.property, rule: item.violation.rule))
                }
                    ?? false
            }
            if onlyInherited { return found.map(\.violation) }
        }
        throw refusal(found)
    }

    /// The error that refuses a paste whose result breaks rules.
    private func refusal(_ found: [PasteViolation]) -> GraftError {
        let already = clipboardViolations()
        var alreadyCount = 0
        let errors = found.map { item in
            var error = item.violation.error
            let key = Broken(id: item.clipboardID ?? "", property: item.violation.property, rule: item.violation.rule)
            if item.clipboardID != nil, already.contains(key) {
                error.message += " (already broken in the clipboard)"
                alreadyCount += 1
            }
            return error
        }
        let share: String
        switch alreadyCount {
        case 0: share = ""
        case found.count:
            share =
                found.count == 1
                ? ", which the copied object already broke in the clipboard"
                : ", all of which the copied objects already broke in the clipboard"
        default: share = ", \(alreadyCount) of which the copied objects already broke in the clipboard"
        }
        return GraftError(
            .validationFailed,
            "the pasted objects would break \(Wording.counted(found.count, "rule"))\(share); nothing was pasted "
                + "(--no-validate pastes them as they are, with a warning for each broken rule)",
            underlying: errors)
    }

    /// A rule a clipboard object breaks.
    private struct Broken: Hashable {
        var id: String
        var property: String
        var rule: RuleViolation.Rule
    }

    /// The rules the copied objects break as the clipboard has them, before a paste changes anything:
    /// each object with its values (and, for attributes its clipboard's model lacked, the target's
    /// defaults, as a new object gets them) and with the links the clipboard states, to copies and to
    /// references alike, checked by the rules the paste's result is checked by.
    private func clipboardViolations() -> Set<Broken> {
        // Every clipboard id a link can name, as a reference to an object of its target entity.
        var refs: [String: ObjectRef] = [:]
        var next: Int64 = 0
        func add(_ id: String, entity: String) {
            guard let mapping = mappings[entity], refs[id] == nil else { return }
            next += 1
            refs[id] = ObjectRef(entity: mapping.target.index, key: next)
        }
        for object in clipboard.objects { add(object.id, entity: object.entity) }
        for reference in clipboard.references { add(reference.id, entity: reference.entity) }

        var found = Set<Broken>()
        let rules = RuleCheck(model: model)
        var uniqueness = UniquenessCheck(model: model)
        var position = 0
        for object in clipboard.objects {
            guard let mapping = mappings[object.entity], let ref = refs[object.id] else { continue }
            let entity = mapping.target
            var snapshot = Snapshot(entity: entity, key: ref.key)
            for index in mapping.newAttributes { snapshot.attributes[index] = entity.attributes[index].defaultValue }
            for named in object.attributes {
                guard let index = mapping.attributes[named.name] else { continue }
                snapshot.attributes[index] = try? convert(named.value, to: entity.attributes[index], object: object.id)
            }
            for link in object.relationships {
                guard let index = mapping.relationships[link.name] else { continue }
                var targets: [ObjectRef] = []
                for id in link.targets {
                    if let target = refs[id], !targets.contains(target) { targets.append(target) }
                }
                snapshot.relationships[index] =
                    entity.relationships[index].isToMany ? .toMany(targets) : .toOne(targets.first)
            }
            for violation in rules.violations(in: snapshot, object: object.id) {
                found.insert(Broken(id: object.id, property: violation.property, rule: violation.rule))
            }
            for clash in uniqueness.add(snapshot, at: position) {
                found.insert(Broken(id: object.id, property: clash.names.joined(separator: ", "), rule: .uniqueness))
            }
            position += 1
        }
        return found
    }
}
