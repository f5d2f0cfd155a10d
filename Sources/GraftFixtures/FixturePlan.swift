import GraftCore
import GraftModel

/// How many objects of each entity a fixture has, and how its relationships are laid out: worked out
/// from the model's rules, the counts asked for and the spec's fan-out, before any object is made.
struct FixturePlan: Sendable {
    let model: Model
    /// Objects per entity (by index; 0 for abstract entities).
    let counts: [Int]
    /// Per entity (by index): its objects and its subentities'.
    let populations: [FixturePopulation]
    /// The many-to-manys' inverse lists, which their second ends name by position.
    let inverseLists: [FixtureLayout.InverseLists]
    /// Per entity, per relationship (by index in the entity): how its objects are linked; nil for
    /// transient relationships.
    let ends: [[FixtureEnd?]]

    /// How many objects of a concrete entity there are when the user asks for none.
    static let defaultCount = 10
    /// More objects of one entity than a fixture can have.
    static let countLimit = 1 << 40

    init(model: Model, asked: [Int: Int], fanOut: [String: ClosedRange<Int>]) throws {
        self.model = model
        let pairs = try Self.relationshipPairs(model, fanOut: fanOut)
        let counts = try Self.solve(model: model, asked: asked, pairs: pairs)
        self.counts = counts
        let populations = model.descriptions.map { entity in
            FixturePopulation(
                kinds: ([entity.index] + entity.descendantIndices).sorted().filter {
                    !model.descriptions[$0].isAbstract
                },
                counts: counts)
        }
        self.populations = populations
        var inverseLists: [FixtureLayout.InverseLists] = []
        var bySide: [String: FixtureEnd] = [:]
        for pair in pairs {
            let layout = Self.layout(pair, populations: populations)
            if case .manyToMany(_, _, _, _, let lists) = layout { inverseLists.append(lists) }
            for (side, end) in layout.ends(lists: inverseLists.count - 1) {
                bySide["\(side.declaring).\(side.name)"] = end
            }
        }
        self.inverseLists = inverseLists
        ends = model.descriptions.map { entity in
            entity.relationships.map { relationship in
                guard let declaring = Self.declaringEntity(of: relationship.name, in: entity, model: model) else {
                    return nil
                }
                return bySide["\(declaring).\(relationship.name)"]
            }
        }
    }

    /// A relationship and its inverse (nil for a relationship without one, or one that is its own).
    struct Pair: Sendable {
        let first: FixtureSide
        let second: FixtureSide?
        /// Whether `first` is its own inverse (a symmetric relationship).
        let selfInverse: Bool
    }

    /// The entity (index) whose own declaration has the relationship `name` that `entity` has.
    static func declaringEntity(of name: String, in entity: EntityDescription, model: Model) -> Int? {
        for index in [entity.index] + entity.ancestorIndices {
            let candidate = model.descriptions[index]
            if candidate.declaration.relationships.contains(where: { $0.name == name && !$0.isTransient }) {
                return index
            }
        }
        return nil
    }

    private static func relationshipPairs(_ model: Model, fanOut: [String: ClosedRange<Int>]) throws -> [Pair] {
        // The spec's fan-out, by declaring entity and relationship.
        var ranges: [String: (ClosedRange<Int>, String)] = [:]
        for (path, range) in fanOut {
            let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, let entity = model.entity(named: parts[0]) else {
                throw GraftError(
                    .notFound,
                    "fanOut names '\(path)', but the model has no entity '\(path.split(separator: ".").first ?? "")'")
            }
            guard let relationship = entity.relationship(named: parts[1]), relationship.isToMany,
                let declaring = declaringEntity(of: parts[1], in: entity, model: model)
            else {
                throw GraftError(
                    .notFound, "fanOut names '\(path)', but \(entity.name) has no to-many relationship '\(parts[1])'")
            }
            ranges["\(declaring).\(parts[1])"] = (range, path)
        }
        func side(_ relationship: RelationshipDescription, declaring: Int) throws -> FixtureSide {
            let declaration = relationship.declaration
            var lowest = declaration.isToMany ? max(declaration.minCount, declaration.isOptional ? 0 : 1) : 0
            var highest: Int? = declaration.isToMany ? (declaration.maxCount > 0 ? declaration.maxCount : nil) : 1
            let given = ranges["\(declaring).\(declaration.name)"]
            if let (range, path) = ranges["\(declaring).\(declaration.name)"] {
                guard range.lowerBound >= lowest, highest.map({ range.upperBound <= $0 }) ?? true else {
                    throw GraftError(
                        .validationFailed,
                        "fanOut \(path) = \(range.lowerBound)...\(range.upperBound) is outside what the model allows "
                            + "(\(lowest)...\(highest.map(String.init) ?? "any"))")
                }
                lowest = range.lowerBound
                highest = range.upperBound
            }
            return FixtureSide(
                declaring: declaring, own: declaring,
                target: relationship.destinationIndex, name: declaration.name,
                entityName: model.descriptions[declaring].name, isToMany: declaration.isToMany,
                isRequired: !declaration.isOptional || lowest > 0, lowest: lowest, highest: highest,
                fromSpec: given != nil)
        }
        var pairs: [Pair] = []
        for entity in model.descriptions {
            for declared in entity.declaration.relationships where !declared.isTransient {
                guard let relationship = entity.relationship(named: declared.name) else { continue }
                let first = try side(relationship, declaring: entity.index)
                guard let inverse = model.inverse(of: relationship),
                    let inverseDeclaring = declaringEntity(
                        of: inverse.name, in: model.descriptions[relationship.destinationIndex], model: model),
                    model.inverse(of: inverse).map({ $0.name == declared.name }) ?? false
                else {
                    pairs.append(Pair(first: first, second: nil, selfInverse: false))
                    continue
                }
                if inverseDeclaring == entity.index && inverse.name == declared.name {
                    pairs.append(Pair(first: first, second: nil, selfInverse: true))
                    continue
                }
                // Each pair once: from the end declared first (by entity, then name).
                if (inverseDeclaring, inverse.name) < (entity.index, declared.name) { continue }
                if first.isToMany && !inverse.isToMany {
                    // A one-to-many is laid out from its to-one end, whose objects are its own entity's and
                    // whose targets are the to-many end's objects.
                    let one = try side(inverse, declaring: inverseDeclaring)
                    var many = first
                    many.own = one.target
                    many.target = one.own
                    pairs.append(Pair(first: one, second: many, selfInverse: false))
                } else {
                    // The second end's objects are the first end's targets, and its targets the first's objects.
                    var second = try side(inverse, declaring: inverseDeclaring)
                    second.own = first.target
                    second.target = first.own
                    pairs.append(Pair(first: first, second: second, selfInverse: false))
                }
            }
        }
        return pairs
    }

    // MARK: - Counts

    /// Something the rules need: at least `needed` objects of `entity` (with its subentities'), because
    /// of `rule`.
    private struct Need {
        let entity: Int
        let needed: Int
        let rule: String
        /// A preference (the middle of a fan-out), not a rule: never a conflict.
        var preferred = false
        /// The other way to meet it: at most this many objects of that entity.
        var lowering: (entity: Int, atMost: Int)?
    }

    private static func needs(_ pair: Pair, population: (Int) -> Int) -> [Need] {
        let first = pair.first
        var needs: [Need] = []
        func ceilDiv(_ a: Int, _ b: Int) -> Int { b == 0 ? 0 : (a + b - 1) / b }
        guard let second = pair.second else {
            let sources = population(first.own)
            guard sources > 0 else { return [] }
            if pair.selfInverse {
                if first.isToMany {
                    let degree = max(2, first.lowest + first.lowest % 2)
                    needs.append(Need(entity: first.own, needed: degree + 1, rule: first.rule))
                } else if first.isRequired && sources % 2 == 1 {
                    needs.append(Need(entity: first.own, needed: sources + 1, rule: first.rule))
                }
                return needs
            }
            if first.isRequired {
                needs.append(Need(entity: first.target, needed: max(1, first.lowest), rule: first.rule))
            }
            return needs
        }
        let sources = population(first.own), targets = population(first.target)
        switch (first.isToMany, second.isToMany) {
        case (false, true):
            // `first` is the to-one, `second` the to-many.
            if sources > 0 && first.isRequired {
                needs.append(Need(entity: first.target, needed: 1, rule: first.rule))
                if let highest = second.highest, highest > 0 {
                    needs.append(
                        Need(
                            entity: first.target, needed: ceilDiv(sources, highest), rule: second.rule,
                            lowering: (first.own, highest * targets)))
                }
            }
            if targets > 0 && second.lowest > 0 {
                needs.append(Need(entity: first.own, needed: second.lowest * targets, rule: second.rule))
            }
            if targets > 0, second.fromSpec, let highest = second.highest, highest > second.lowest {
                needs.append(
                    Need(
                        entity: first.own, needed: (second.lowest + highest) / 2 * targets, rule: second.rule,
                        preferred: true))
            }
        case (false, false):
            if sources > 0 && first.isRequired {
                needs.append(
                    Need(entity: first.target, needed: sources, rule: first.rule, lowering: (first.own, targets)))
            }
            if targets > 0 && second.isRequired {
                needs.append(
                    Need(entity: first.own, needed: targets, rule: second.rule, lowering: (first.target, sources)))
            }
        case (true, true):
            if sources > 0 && first.lowest > 0 {
                needs.append(Need(entity: first.target, needed: first.lowest, rule: first.rule))
            }
            if targets > 0 && second.lowest > 0 {
                needs.append(Need(entity: first.own, needed: second.lowest, rule: second.rule))
                if let highest = first.highest {
                    needs.append(
                        Need(entity: first.own, needed: ceilDiv(second.lowest * targets, highest), rule: second.rule))
                }
            }
            if sources > 0 && first.lowest > 0, let highest = second.highest {
                needs.append(
                    Need(
                        entity: first.target, needed: ceilDiv(first.lowest * sources, highest), rule: first.rule,
                        lowering: (first.own, highest * targets / first.lowest)))
            }
        case (true, false):
            break  // laid out from the to-one end
        }
        return needs
    }

    /// Counts per entity that meet every need: those asked for kept, the others raised from the default
    /// until nothing more is needed.
    private static func solve(model: Model, asked: [Int: Int], pairs: [Pair]) throws -> [Int] {
        var counts = model.descriptions.map { entity -> Int in
            entity.isAbstract ? 0 : asked[entity.index] ?? defaultCount
        }
        let fixed = Set(asked.keys)
        let kinds = model.descriptions.map { entity in
            ([entity.index] + entity.descendantIndices).sorted().filter { !model.descriptions[$0].isAbstract }
        }
        func population(_ entity: Int) -> Int { kinds[entity].reduce(0) { $0 + counts[$1] } }
        // Needs met one after another settle within a few rounds of each other; counts still changing
        // after many rounds mean rules that feed each other without end.
        let rounds = 2 * pairs.count + 8
        for round in 0...rounds {
            var changed = false
            var raised = Set<String>()
            var conflicts: [(Need, Int)] = []
            for pair in pairs {
                for need in needs(pair, population: population) {
                    let have = population(need.entity)
                    guard have < need.needed else { continue }
                    // The entity itself when it can take more, else its first subentity that can; else
                    // fewer of the other entity, where that meets the need too.
                    guard let grown = kinds[need.entity].first(where: { !fixed.contains($0) }) else {
                        if let lowering = need.lowering {
                            var excess = population(lowering.entity) - lowering.atMost
                            for kind in kinds[lowering.entity].reversed() where !fixed.contains(kind) && excess > 0 {
                                let taken = min(counts[kind], excess)
                                counts[kind] -= taken
                                excess -= taken
                                changed = changed || taken > 0
                            }
                            if excess <= 0 { continue }
                        }
                        if !need.preferred { conflicts.append((need, have)) }
                        continue
                    }
                    counts[grown] += need.needed - have
                    raised.insert(need.rule)
                    changed = true
                    if counts[grown] > countLimit {
                        throw GraftError(
                            .validationFailed,
                            "\(need.rule) would need more than \(countLimit) objects of "
                                + "\(model.descriptions[grown].name); ask for fewer")
                    }
                }
            }
            if !conflicts.isEmpty {
                throw conflict(conflicts, model: model, asked: asked, pairs: pairs, kinds: kinds, counts: counts)
            }
            if !changed { break }
            if round == rounds {
                throw GraftError(
                    .validationFailed,
                    "the model's rules cannot be satisfied with any objects: "
                        + "\(raised.sorted().joined(separator: " and ")) each need more objects than the other allows, "
                        + "so the counts grow without end")
            }
        }
        // Needs that raising and lowering in turn could not meet together.
        let unmet = pairs.flatMap { needs($0, population: population) }.filter {
            !$0.preferred && !kinds[$0.entity].isEmpty && population($0.entity) < $0.needed
        }
        if !unmet.isEmpty {
            let rules = Array(Set(unmet.map(\.rule))).sorted()
            throw GraftError(
                .validationFailed,
                "the counts asked for cannot satisfy \(rules.joined(separator: " and ")) together; ask for other counts"
            )
        }
        // A required relationship to an entity that has no concrete kind at all.
        for pair in pairs {
            for need in needs(pair, population: population) where !need.preferred && kinds[need.entity].isEmpty {
                throw GraftError(
                    .validationFailed,
                    "the model's rules cannot be satisfied: \(need.rule) needs objects of \(model.descriptions[need.entity].name), "
                        + "which is abstract and has no concrete subentity")
            }
        }
        return counts
    }

    /// The error for counts asked for that the rules cannot meet, with counts that can.
    private static func conflict(
        _ conflicts: [(Need, Int)], model: Model, asked: [Int: Int], pairs: [Pair], kinds: [[Int]], counts: [Int]
    ) -> GraftError {
        let (need, have) = conflicts[0]
        let name = model.descriptions[need.entity].name
        let members = kinds[need.entity].map { "\(model.descriptions[$0].name) \(counts[$0])" }
        var message =
            "the counts asked for cannot satisfy \(need.rule): it needs at least \(need.needed) "
            + "\(kinds[need.entity].count > 1 ? "objects of \(name) and its subentities" : "\(name) objects"), "
            + "and \(have) were asked for (\(members.joined(separator: ", ")))"
        // Counts that work: the same request with the population's own entity left to the generator (else
        // all of its kinds), naming only the counts that change.
        for released in [[kinds[need.entity][0]], kinds[need.entity]] {
            var request = asked
            for kind in released { request[kind] = nil }
            guard let working = try? solve(model: model, asked: request, pairs: pairs) else { continue }
            let changes = working.indices.filter { working[$0] != counts[$0] && !model.descriptions[$0].isAbstract }
            let suggestion = changes.map { "--count \(model.descriptions[$0].name)=\(working[$0])" }
            message += "; counts that work: \(suggestion.joined(separator: " "))"
            break
        }
        return GraftError(.validationFailed, message)
    }

    // MARK: - Layouts

    private static func layout(_ pair: Pair, populations: [FixturePopulation]) -> FixtureLayout {
        let first = pair.first
        func count(_ entity: Int) -> Int { populations[entity].count }
        guard let second = pair.second else {
            if pair.selfInverse {
                if first.isToMany {
                    let wanted = max(2, first.lowest + first.lowest % 2)
                    let capped = first.highest.map { min(wanted, $0 - $0 % 2) } ?? wanted
                    return .ring(first, neighbours: max(0, capped))
                }
                return .pairs(first)
            }
            let targets = count(first.target)
            let perObject = first.isToMany ? min(max(first.lowest, 1), first.highest ?? Int.max, targets) : 1
            let shift = bestShift(
                from: populations[first.own], to: populations[first.target], limit: count(first.own),
                perObject: perObject)
            return .oneWay(first, perObject: perObject, limit: count(first.own), shift: shift)
        }
        let sources = count(first.own), targets = count(first.target)
        switch (first.isToMany, second.isToMany) {
        case (false, true):
            var limit = sources
            if !first.isRequired, let highest = second.highest { limit = min(sources, highest * targets) }
            let shift = bestShift(
                from: populations[first.own], to: populations[first.target], limit: limit, perObject: 1)
            return .oneToMany(one: first, many: second, limit: targets > 0 ? limit : 0, shift: shift)
        case (false, false):
            let limit = min(sources, targets)
            let shift = bestShift(
                from: populations[first.own], to: populations[first.target], limit: limit, perObject: 1)
            return .oneToOne(first: first, second: second, limit: limit, shift: shift)
        default:
            // Each source takes k targets: at least its own minimum and enough for the targets' minimum,
            // at most its maximum and what the targets' maximum allows.
            // A spec's fan-out aims for the middle of its range.
            var perObject =
                first.fromSpec ? max(1, (first.lowest + (first.highest ?? first.lowest)) / 2) : max(first.lowest, 1)
            if second.lowest > 0 && sources > 0 {
                perObject = max(perObject, (second.lowest * targets + sources - 1) / sources)
            }
            if let highest = first.highest { perObject = min(perObject, highest) }
            if let highest = second.highest, sources > 0 { perObject = min(perObject, highest * targets / sources) }
            perObject = max(0, min(perObject, targets))
            let shift = bestShift(
                from: populations[first.own], to: populations[first.target], limit: sources,
                perObject: perObject)
            return .manyToMany(
                first: first, second: second, perObject: perObject, shift: shift,
                inverse: FixtureLayout.inverseLists(
                    sources: sources, targets: targets, perObject: perObject, shift: shift))
        }
    }

    /// The smallest shift (of the first few) with which no object among both populations is linked to
    /// itself; the one with fewest such links when none avoids them all.
    private static func bestShift(
        from sources: FixturePopulation, to targets: FixturePopulation, limit: Int, perObject: Int
    ) -> Int {
        let shared = sources.kinds.filter { targets.kinds.contains($0) }
        guard !shared.isEmpty, targets.count > 1, perObject > 0 else { return 0 }
        var best = (shift: 0, loops: Int.max)
        for shift in 0..<min(targets.count, 16) {
            var loops = 0
            for kind in shared {
                let sourceStart = sources.ordinal(entity: kind, index: 0)!,
                    targetStart = targets.ordinal(entity: kind, index: 0)!
                let kindCount = targets.starts.count > 0 ? population(of: kind, in: targets) : 0
                for index in 0..<kindCount {
                    let source = sourceStart + index
                    guard source < limit else { break }
                    let first = (source * perObject + shift) % targets.count
                    let offset = (targetStart + index - first + targets.count) % targets.count
                    if offset < perObject { loops += 1 }
                }
                if loops >= best.loops { break }
            }
            if loops < best.loops { best = (shift, loops) }
            if loops == 0 { break }
        }
        return best.shift
    }

    private static func population(of kind: Int, in population: FixturePopulation) -> Int {
        guard let position = population.kinds.firstIndex(of: kind) else { return 0 }
        let end = position + 1 < population.starts.count ? population.starts[position + 1] : population.count
        return end - population.starts[position]
    }
}
