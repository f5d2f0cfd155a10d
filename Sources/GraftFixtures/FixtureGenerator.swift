import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel

/// Generates an object graph from a model that satisfies every rule of it, the same on every run and
/// machine for the same model, spec and seed.
///
/// Counts come from the spec (and the default of 10 objects per concrete entity), raised where the
/// model needs more (a department that must have 3 employees); relationships are laid out from each
/// object's position, both ends consistent; values depend only on the seed, the entity, the
/// attribute and the object's index, so asking for one more object leaves the others as they were.
///
/// The objects are made as they are read, as snapshots (``document``), so that any number of them
/// flow to a store writer or a clipboard encoder in bounded memory:
///
/// ```swift
/// let generator = try FixtureGenerator(model: model, seed: 7, spec: FixtureSpec(counts: ["Department": 3]))
/// try generator.write(to: URL(fileURLWithPath: "Fixture.sqlite"))
/// for snapshot in generator.snapshots() { print(snapshot.ref) }
/// ```
public struct FixtureGenerator: Sendable {
    public let model: Model
    public let seed: UInt64
    public let spec: FixtureSpec
    let plan: FixturePlan
    /// Per entity (by index), per attribute.
    let recipes: [[AttributeRecipe]]
    /// Per entity: the key of its first object less one (its objects follow each other in their tree).
    private let keyBases: [Int64]

    /// The seed used when neither the caller nor the spec gives one.
    public static let defaultSeed: UInt64 = 1

    /// Plans a fixture.
    ///
    /// - Parameter seed: the seed; by default the spec's, else ``defaultSeed``.
    /// - Throws: `GraftError.notFound` for a spec entry naming an entity or property the model does not
    ///   have; `GraftError.validationFailed` when the counts asked for cannot satisfy the model (the
    ///   message names the rule and suggests counts that can) or when no counts can (naming the rules in
    ///   conflict); `GraftError.typeMismatch` for a pinned or listed value that is not of its attribute's
    ///   type or breaks its rules; `GraftError.unsupportedFormat` for a pattern the generator cannot meet.
    public init(model: Model, seed: UInt64? = nil, spec: FixtureSpec = FixtureSpec()) throws {
        self.model = model
        self.seed = seed ?? spec.seed ?? Self.defaultSeed
        self.spec = spec
        var asked: [Int: Int] = [:]
        for (name, count) in spec.counts.sorted(by: { $0.key < $1.key }) {
            guard let entity = model.entity(named: name) else {
                throw GraftError(
                    .notFound, "there is no entity '\(name)' in the model to count", context: [.other("--count")])
            }
            if entity.isAbstract {
                // Shared among the concrete subentities, the first ones taking what does not divide.
                let concrete = entity.descendantIndices.sorted().filter { !model.descriptions[$0].isAbstract }
                guard !concrete.isEmpty else {
                    throw GraftError(
                        .validationFailed,
                        "\(name) is abstract and has no concrete subentity, so it cannot have objects")
                }
                for (position, kind) in concrete.enumerated() {
                    asked[kind, default: 0] += count / concrete.count + (position < count % concrete.count ? 1 : 0)
                }
            } else {
                asked[entity.index] = count
            }
        }
        plan = try FixturePlan(model: model, asked: asked, fanOut: spec.fanOut)
        keyBases = model.descriptions.map { [plan] entity in
            Int64(plan.populations[entity.rootIndex].ordinal(entity: entity.index, index: 0) ?? 0)
        }
        recipes = try Self.recipes(model: model, seed: self.seed, spec: spec, counts: plan.counts)
    }

    /// Objects per concrete entity (each counted under its own entity).
    public var counts: [String: Int] {
        var counts: [String: Int] = [:]
        for entity in model.descriptions where !entity.isAbstract { counts[entity.name] = plan.counts[entity.index] }
        return counts
    }

    /// The number of objects in all.
    public var objectCount: Int { plan.counts.reduce(0, +) }

    /// The store UUID of every document this generator writes: made from the seed, never from the clock.
    public var storeIdentifier: String {
        var random = FixtureRandom(seed: seed, "store")
        let bytes = random.bytes(16)
        let hex = bytes.map { String($0, radix: 16, uppercase: true) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(
                hex[
                    hex.index(
                        hex.startIndex, offsetBy: range.lowerBound)..<hex.index(
                            hex.startIndex, offsetBy: range.upperBound)])
        }
        return parts.joined(separator: "-")
    }

    // MARK: - Objects

    /// The key of `entity`'s object `index`: its place in its inheritance tree, from 1, as Core Data
    /// numbers a new store's rows.
    func key(entity: Int, index: Int) -> Int64 { keyBases[entity] + Int64(index) + 1 }

    /// The object at `ordinal` of `population` (an entity index), as a ref.
    private func ref(at ordinal: Int, of population: Int) -> ObjectRef {
        let (entity, index) = plan.populations[population].member(ordinal)
        return ObjectRef(entity: entity, key: key(entity: entity, index: index))
    }

    /// The snapshot of `entity`'s object `index`.
    public func snapshot(entity: Int, index: Int) throws -> Snapshot {
        let description = model.descriptions[entity]
        var snapshot = Snapshot(entity: description, key: key(entity: entity, index: index))
        for (position, recipe) in recipes[entity].enumerated() {
            snapshot.attributes[position] = try recipe.value(at: index)
        }
        for (position, end) in plan.ends[entity].enumerated() {
            guard let end, let ordinal = plan.populations[end.own].ordinal(entity: entity, index: index) else {
                continue
            }
            let targets = end.targets(
                of: ordinal, ownCount: plan.populations[end.own].count, targetCount: plan.populations[end.target].count,
                lists: plan.inverseLists)
            let refs = targets.map { ref(at: $0, of: end.target) }
            snapshot.relationships[position] = end.isToMany ? .toMany(refs) : .toOne(refs.first)
        }
        return snapshot
    }

    /// Every object, entity by entity (in the model's order), each entity's by index.
    public func forEachSnapshot(_ body: (Snapshot) throws -> Void) throws {
        for entity in model.descriptions where !entity.isAbstract {
            for index in 0..<plan.counts[entity.index] { try body(try snapshot(entity: entity.index, index: index)) }
        }
    }

    /// Every object, in ``forEachSnapshot(_:)``'s order, in one array (for small fixtures; large ones
    /// stream through ``document``).
    public func snapshots() throws -> [Snapshot] {
        var all: [Snapshot] = []
        all.reserveCapacity(objectCount)
        try forEachSnapshot { all.append($0) }
        return all
    }

    /// The generated objects as a document that store writers and clipboard encoders read.
    public var document: any StoreReader { FixtureDocument(generator: self) }

    // MARK: - Recipes

    private static func recipes(
        model: Model, seed: UInt64, spec: FixtureSpec, counts: [Int]
    ) throws -> [[AttributeRecipe]] {
        // Spec entries, checked against the model.
        var pinned: [String: Value?] = [:], listed: [String: [Value?]] = [:]
        func target(_ path: String, _ option: String) throws -> (EntityDescription, Attribute) {
            let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, let entity = model.entity(named: parts[0]) else {
                throw GraftError(
                    .notFound, "'\(path)' names no entity of the model (Entity.attribute)", context: [.other(option)])
            }
            guard let attribute = entity.attribute(named: parts[1]) else {
                throw GraftError(.notFound, "\(entity.name) has no attribute '\(parts[1])'", context: [.other(option)])
            }
            return (entity, attribute)
        }
        func parse(_ text: String?, for attribute: Attribute, path: String, option: String) throws -> Value? {
            guard let text else {
                if !attribute.isOptional {
                    throw GraftError(
                        .typeMismatch, "is required by the model, so it cannot be left empty",
                        context: [.other(option), .key(path)])
                }
                return nil
            }
            let value: Value?
            do {
                value = try fixtureValue(text, as: attribute.type)
            } catch let error as GraftError {
                throw GraftError(.typeMismatch, error.message, context: [.other(option), .key(path)])
            }
            if let value, let broken = AttributeRules.violations(of: value, for: attribute).first {
                throw GraftError(
                    .typeMismatch, "\(broken.message): the model does not allow it",
                    context: [.other(option), .key(path)])
            }
            if value == nil && !attribute.isOptional {
                throw GraftError(
                    .typeMismatch, "is required by the model, so it cannot be left empty",
                    context: [.other(option), .key(path)])
            }
            return value
        }
        for (path, text) in spec.values {
            let (_, attribute) = try target(path, "set")
            pinned[path] = try parse(text, for: attribute, path: path, option: "set")
        }
        for (path, texts) in spec.choices {
            let (_, attribute) = try target(path, "choices")
            listed[path] = try texts.map { try parse($0, for: attribute, path: path, option: "choices") }
        }
        // Which attribute of each uniqueness constraint is made unique, per root entity's tree: by name.
        var result: [[AttributeRecipe]] = []
        for entity in model.descriptions {
            let root = model.descriptions[entity.rootIndex]
            let kinds = ([root.index] + root.descendantIndices).sorted().filter { !model.descriptions[$0].isAbstract }
            let stride = max(kinds.count, 1), offset = kinds.firstIndex(of: entity.index) ?? 0
            func entry<T>(_ table: [String: T], _ attribute: Attribute) -> T? {
                for index in [entity.index] + entity.ancestorIndices {
                    if let found = table["\(model.descriptions[index].name).\(attribute.name)"] { return found }
                }
                return nil
            }
            var uniqueNames = Set<String>()
            for constraint in entity.uniquenessConstraints {
                let attributes = constraint.compactMap { entity.attribute(named: $0) }
                guard !attributes.isEmpty else { continue }
                // One attribute of the constraint made unique makes the whole combination unique: the
                // first that is generated, of a type that can be numbered.
                let numberable: Set<AttributeType> = [
                    .string, .integer16, .integer32, .integer64, .decimal, .double, .float, .date, .uuid, .binary, .uri,
                ]
                if let chosen = attributes.first(where: {
                    entry(pinned, $0) == nil && numberable.contains($0.type) && entry(listed, $0) == nil
                })
                    ?? attributes.first(where: { entry(pinned, $0) == nil })
                {
                    // A Boolean has two values: a constraint numbered on one holds two objects of the tree.
                    let objects = entity.isAbstract ? 0 : counts[entity.index]
                    if chosen.type == .boolean && (objects - 1) * stride + offset > 1 {
                        throw GraftError(
                            .validationFailed,
                            "the uniqueness constraint (\(constraint.joined(separator: ", "))) can only tell objects "
                                + "apart by a Boolean, which has two values, and \(objects) objects were asked for",
                            context: [.entity(entity.name)])
                    }
                    uniqueNames.insert(chosen.name)
                } else if counts[entity.index] > 1 {
                    throw GraftError(
                        .validationFailed,
                        "every value of the uniqueness constraint (\(constraint.joined(separator: ", "))) is pinned, so "
                            + "\(counts[entity.index]) objects would share them; at most 1 can",
                        context: [.entity(entity.name)])
                }
            }
            var recipes: [AttributeRecipe] = []
            for attribute in entity.attributes {
                let unique = uniqueNames.contains(attribute.name) ? (stride, offset) : nil
                let source: AttributeRecipe.Source
                var pattern: PatternGenerator?
                if attribute.isTransient || attribute.isDerived {
                    source = .none
                } else if let value = entry(pinned, attribute) {
                    source = .pinned(value)
                } else if let values = entry(listed, attribute) {
                    if unique != nil && counts[entity.index] > values.count {
                        throw GraftError(
                            .validationFailed,
                            "is unique, and its \(values.count) choices cannot go round \(counts[entity.index]) objects",
                            context: [.entity(entity.name), .key(attribute.name)])
                    }
                    source = .choices(values)
                } else if let kind = try AttributeRecipe.kind(for: attribute, entity: entity) {
                    if let expression = attribute.regularExpression, attribute.type == .string {
                        guard CompiledPattern(expression) != nil else {
                            throw GraftError(
                                .invalidModel, "the pattern \(expression) is not a regular expression ICU reads",
                                context: [.entity(entity.name), .key(attribute.name)])
                        }
                        do {
                            pattern = try PatternGenerator(expression)
                        } catch let unsupported as PatternGenerator.Unsupported {
                            throw GraftError(
                                .unsupportedFormat,
                                "the pattern \(expression) uses \(unsupported.reason), which the generator does not handle; "
                                    + "give the values with --set or choices in a spec",
                                context: [.entity(entity.name), .key(attribute.name)])
                        }
                    }
                    source = .generated(kind)
                } else if attribute.isOptional {
                    source = .none
                } else {
                    throw GraftError(
                        .unsupportedFormat,
                        "is a required \(attribute.type.modelName) attribute, whose values the generator does not make; "
                            + "give them with --set or choices in a spec",
                        context: [.entity(entity.name), .key(attribute.name)])
                }
                let recipe = AttributeRecipe(
                    entity: entity.name, attribute: attribute, source: source, unique: unique, pattern: pattern,
                    seed: seed)
                // The first and last objects' values meet the rules, or the plan says why not.
                let count = entity.isAbstract ? 0 : counts[entity.index]
                for index in Set([0, count - 1]) where index >= 0 {
                    if let value = try recipe.value(at: index),
                        let broken = AttributeRules.violations(of: value, for: attribute).first
                    {
                        throw GraftError(
                            .validationFailed,
                            "cannot make \(count) \(unique != nil ? "unique " : "")values the model allows: object \(index + 1)'s \(broken.message)",
                            context: [.entity(entity.name), .key(attribute.name)])
                    }
                }
                recipes.append(recipe)
            }
            result.append(recipes)
        }
        return result
    }

    /// A value from the text `--set` and specs give: as the model's default values are written, with
    /// dates also as ISO 8601 (`2025-03-01`, `2025-03-01T09:30:00Z`).
    static func fixtureValue(_ text: String, as type: AttributeType) throws -> Value? {
        if type == .date {
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = TimeZone(identifier: "UTC")
            for options: ISO8601DateFormatter.Options in [[.withInternetDateTime], [.withFullDate]] {
                formatter.formatOptions = options
                if let date = formatter.date(from: text) { return .date(date) }
            }
        }
        if text.isEmpty && type != .string { return nil }
        return try ValueText.parse(text, as: type)
    }
}

/// A generator's objects as a document: what `convert` and `copy --all` read, so that fixtures are
/// written by the same store writers and clipboard encoders.
struct FixtureDocument: StoreReader {
    let generator: FixtureGenerator

    var model: Model { generator.model }

    var metadata: StoreMetadata {
        StoreMetadata.make(for: generator.model, storeType: .sqlite, identifier: generator.storeIdentifier)
    }

    var objectCount: Int? { generator.objectCount }

    /// Each inheritance tree numbers its objects from 1; documents with one key sequence move the trees
    /// apart.
    var keyOffsets: [Int: Int64] {
        var maxKeys: [Int: Int64] = [:]
        for entity in generator.model.descriptions where entity.superentityIndex == nil {
            let count = generator.plan.populations[entity.index].count
            if count > 0 { maxKeys[entity.index] = Int64(count) }
        }
        return DocumentKeys.offsets(maxKeys: maxKeys, collide: maxKeys.count > 1)
    }

    func forEachSnapshot(_ body: (Snapshot) throws -> Void) throws { try generator.forEachSnapshot(body) }

    func forEachRef(_ body: (ObjectRef) throws -> Void) throws -> Bool {
        for entity in generator.model.descriptions where !entity.isAbstract {
            for index in 0..<generator.plan.counts[entity.index] {
                try body(ObjectRef(entity: entity.index, key: generator.key(entity: entity.index, index: index)))
            }
        }
        return true
    }

    func counts() throws -> [String: Int] { generator.counts }
}
