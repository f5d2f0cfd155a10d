import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel

/// Replaces chosen attributes' values in a clipboard with generated ones of the same kind (a name with
/// a name, an email with an email), deterministically per seed: equal values become equal values and
/// different values different ones, within an inheritance tree, in objects and references alike, so that
/// joins, references and uniqueness survive.
///
/// ```swift
/// let anonymization = try FixtureAnonymization(model: model, seed: 7, attributes: .automatic)
/// anonymization.apply(to: &clipboard)
/// ```
public struct FixtureAnonymization: Sendable {
    /// Which attributes are replaced.
    public enum Choice: Sendable, Equatable {
        /// Every string attribute whose name says it is personal: people's names, emails, phones,
        /// street addresses and postal codes.
        case automatic
        /// These, as `Entity.attribute` (the entity's subentities included).
        case named([String])
    }

    public let model: Model
    public let seed: UInt64
    /// Per entity (by index), per attribute: the recipe that makes replacements, for the attributes
    /// replaced.
    private let recipes: [[AttributeRecipe?]]

    /// - Throws: `GraftError.notFound` for a name that is not an attribute of the model;
    ///   `GraftError.unsupportedFormat` for an attribute whose values the generator cannot make.
    public init(model: Model, seed: UInt64, attributes choice: Choice) throws {
        self.model = model
        self.seed = seed
        var named = Set<String>()
        if case .named(let paths) = choice {
            for path in paths {
                let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
                guard parts.count == 2, let entity = model.entity(named: parts[0]) else {
                    throw GraftError(
                        .notFound, "'\(path)' names no entity of the model (Entity.attribute)",
                        context: [.other("--anonymize")])
                }
                guard entity.attribute(named: parts[1]) != nil else {
                    throw GraftError(
                        .notFound, "\(entity.name) has no attribute '\(parts[1])'", context: [.other("--anonymize")])
                }
                named.insert(path)
            }
        }
        recipes = try model.descriptions.map { entity in
            try entity.attributes.map { attribute -> AttributeRecipe? in
                guard !attribute.isTransient, !attribute.isDerived else { return nil }
                let kind = try AttributeRecipe.kind(for: attribute, entity: entity)
                switch choice {
                case .automatic:
                    guard attribute.type == .string, let kind, Self.isPersonal(kind) else { return nil }
                case .named:
                    let chosen = ([entity.index] + entity.ancestorIndices).contains {
                        named.contains("\(model.descriptions[$0].name).\(attribute.name)")
                    }
                    guard chosen else { return nil }
                }
                guard let kind else {
                    throw GraftError(
                        .unsupportedFormat,
                        "is a \(attribute.type.modelName) attribute, whose values the generator does not make",
                        context: [.entity(entity.name), .key(attribute.name), .other("--anonymize")])
                }
                let pattern = try attribute.regularExpression.map { try PatternGenerator($0) }
                // One recipe per inheritance tree and attribute name, so that a value is replaced alike
                // wherever the tree has it.
                return AttributeRecipe(
                    entity: model.descriptions[entity.rootIndex].name, attribute: attribute, source: .generated(kind),
                    unique: nil, pattern: pattern, seed: seed, leavesSomeEmpty: false)
            }
        }
    }

    private static func isPersonal(_ kind: AttributeRecipe.Kind) -> Bool {
        switch kind {
        case .personName, .firstName, .lastName, .email, .phone, .street, .postalCode: return true
        default: return false
        }
    }

    /// The attributes replaced, as `Entity.attribute` (each where it is declared or first met).
    public var attributes: [String] {
        var found: [String] = []
        for entity in model.descriptions {
            for (position, recipe) in recipes[entity.index].enumerated() where recipe != nil {
                let name = entity.attributes[position].name
                let inherited =
                    entity.superentityIndex.map {
                        recipes[$0].indices.contains(position) && recipes[$0][position] != nil
                    } ?? false
                if !inherited { found.append("\(entity.name).\(name)") }
            }
        }
        return found
    }

    /// Replaces the chosen values in the clipboard's objects and references.
    ///
    /// - Throws: what making a replacement throws (a pattern the generator cannot meet).
    public func apply(to clipboard: inout Clipboard) throws {
        var table = Replacements()
        for position in clipboard.objects.indices {
            guard let entity = model.entity(named: clipboard.objects[position].entity) else { continue }
            clipboard.objects[position].attributes = try replaced(
                clipboard.objects[position].attributes, entity, &table)
        }
        for position in clipboard.references.indices {
            guard let entity = model.entity(named: clipboard.references[position].entity) else { continue }
            clipboard.references[position].identity = try replaced(
                clipboard.references[position].identity, entity, &table)
        }
    }

    /// Replacements made so far, per tree and attribute: the same value always gets the same replacement,
    /// and no two values share one.
    private struct Replacements {
        var forward: [String: [Value: Value]] = [:]
        var taken: [String: Set<Value>] = [:]
    }

    private func replaced(
        _ values: [Clipboard.NamedValue], _ entity: EntityDescription, _ table: inout Replacements
    ) throws -> [Clipboard.NamedValue] {
        var result = values
        for (position, named) in values.enumerated() {
            guard let index = entity.attributeIndexByName[named.name], let recipe = recipes[entity.index][index] else {
                continue
            }
            let scope = "\(entity.rootIndex).\(named.name)"
            if let known = table.forward[scope]?[named.value] {
                result[position].value = known
                continue
            }
            // Drawn from the original value's hash; drawn again while another value has that replacement,
            // and after a few draws, text is told apart by the number of values replaced so far (which no
            // other replacement has).
            let hash = FixtureRandom.hash([ValueText.format(named.value)])
            var replacement: Value?
            for attempt in 0..<16 {
                guard
                    var candidate = try recipe.value(
                        at: Int(truncatingIfNeeded: hash &+ UInt64(attempt) &* 0x9e37_79b9))
                else { continue }
                if attempt >= 8, case .string(let text) = candidate {
                    let number = String(table.taken[scope]?.count ?? 0)
                    if let at = text.firstIndex(of: "@") {
                        candidate = .string(text[..<at] + number + text[at...])
                    } else {
                        candidate = .string(text + " " + number)
                    }
                }
                if !(table.taken[scope]?.contains(candidate) ?? false) {
                    replacement = candidate
                    break
                }
            }
            guard let replacement else {
                throw GraftError(
                    .unsupportedFormat, "has more different values than the generator can replace one for one",
                    context: [.entity(entity.name), .key(named.name), .other("--anonymize")])
            }
            table.forward[scope, default: [:]][named.value] = replacement
            table.taken[scope, default: []].insert(replacement)
            result[position].value = replacement
        }
        return result
    }
}
