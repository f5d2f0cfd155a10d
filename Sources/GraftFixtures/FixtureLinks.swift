import GraftCore
import GraftModel

/// One end of a relationship as the generator sees it: the entity that declares it (whose objects,
/// subentities' included, are its sources), where it leads, and how many objects it may hold.
struct FixtureSide: Sendable, CustomStringConvertible {
    let declaring: Int
    /// The entity whose population holds this end's objects (the declaring entity, or for the second
    /// end of a pair, the first end's destination), and the one whose population holds its targets.
    var own: Int
    var target: Int
    let name: String
    let entityName: String
    let isToMany: Bool
    /// A to-one that must be set, or a to-many that must hold at least one.
    let isRequired: Bool
    /// The fewest and most objects a to-many holds (fan-out from the spec applied); 0...1 for a to-one.
    let lowest: Int
    let highest: Int?
    /// Whether the spec gave the range (then the middle of it is aimed for, not its minimum).
    let fromSpec: Bool

    var description: String { "\(entityName).\(name)" }

    /// The rule in words, for messages: "Department.employees (3 to 40)".
    var rule: String {
        guard isToMany else { return "\(self) (a required to-one)" }
        switch (lowest, highest) {
        case (let low, nil): return "\(self) (at least \(low))"
        case (let low, let high?) where low == high: return "\(self) (exactly \(low))"
        case (let low, let high?): return "\(self) (\(low) to \(high))"
        }
    }
}

/// How a relationship's objects are chosen: from each object's position in its population, so that
/// both ends are known without a table (a many-to-many keeps its inverse lists, 4 bytes a link).
///
/// One-to-many: the to-one side's object `i` takes the to-many side's object `(i + shift) mod n`, for
/// the first `limit` objects: every to-many holds ⌊limit / n⌋ or ⌈limit / n⌉. One-to-one: `i` and
/// `(i + shift) mod n`, for the first `limit`. Many-to-many: object `i` takes the `k` objects from
/// `(i·k + shift) mod n` on, so that each on the other side is taken ⌊count·k / n⌋ or ⌈count·k / n⌉
/// times. A relationship that is its own inverse links neighbours on a ring (to-many) or pairs (to-one).
/// `shift` is the smallest that keeps objects from linking to themselves, where they can.
enum FixtureLayout: Sendable {
    case oneToMany(one: FixtureSide, many: FixtureSide, limit: Int, shift: Int)
    case oneToOne(first: FixtureSide, second: FixtureSide, limit: Int, shift: Int)
    case manyToMany(first: FixtureSide, second: FixtureSide, perObject: Int, shift: Int, inverse: InverseLists)
    case ring(FixtureSide, neighbours: Int)
    case pairs(FixtureSide)
    case oneWay(FixtureSide, perObject: Int, limit: Int, shift: Int)

    /// Lists of sources per target, for a many-to-many's other side.
    struct InverseLists: Sendable {
        var starts: [Int32]
        var sources: [Int32]

        func sources(of target: Int) -> [Int] {
            (Int(starts[target])..<Int(starts[target + 1])).map { Int(sources[$0]) }
        }
    }

    /// The two ends as generation reads them.
    func ends(lists: Int) -> [(side: FixtureSide, end: FixtureEnd)] {
        func end(_ side: FixtureSide, _ rule: FixtureEnd.Rule) -> (side: FixtureSide, end: FixtureEnd) {
            (side, FixtureEnd(rule: rule, own: side.own, target: side.target, isToMany: side.isToMany))
        }
        switch self {
        case .oneToMany(let one, let many, let limit, let shift):
            return [
                end(one, .toOneOfMany(limit: limit, shift: shift)), end(many, .toManyOfOne(limit: limit, shift: shift)),
            ]
        case .oneToOne(let first, let second, let limit, let shift):
            return [
                end(first, .oneToOne(first: true, limit: limit, shift: shift)),
                end(second, .oneToOne(first: false, limit: limit, shift: shift)),
            ]
        case .manyToMany(let first, let second, let perObject, let shift, _):
            return [
                end(first, .firstOfMany(perObject: perObject, shift: shift)), end(second, .secondOfMany(lists: lists)),
            ]
        case .ring(let side, let neighbours): return [end(side, .ring(neighbours: neighbours))]
        case .pairs(let side): return [end(side, .pairs)]
        case .oneWay(let side, let perObject, let limit, let shift):
            return [end(side, .oneWay(perObject: perObject, limit: limit, shift: shift))]
        }
    }

    /// The many-to-many's inverse lists: for each object of the second side, the first side's objects
    /// that take it.
    static func inverseLists(sources: Int, targets: Int, perObject: Int, shift: Int) -> InverseLists {
        var counts = [Int32](repeating: 0, count: targets + 1)
        guard targets > 0 else { return InverseLists(starts: counts, sources: []) }
        for source in 0..<sources {
            for step in 0..<perObject { counts[(source * perObject + step + shift) % targets + 1] += 1 }
        }
        for target in 0..<targets { counts[target + 1] += counts[target] }
        var next = counts
        var lists = [Int32](repeating: 0, count: sources * perObject)
        for source in 0..<sources {
            for step in 0..<perObject {
                let target = (source * perObject + step + shift) % targets
                lists[Int(next[target])] = Int32(source)
                next[target] += 1
            }
        }
        return InverseLists(starts: counts, sources: lists)
    }
}

/// One end of a laid-out relationship as generation reads it, object after object: integers only, so
/// that reading it copies nothing reference-counted.
struct FixtureEnd: Sendable {
    enum Rule: Sendable {
        /// A one-to-many's to-one end, and its to-many end.
        case toOneOfMany(limit: Int, shift: Int)
        case toManyOfOne(limit: Int, shift: Int)
        case oneToOne(first: Bool, limit: Int, shift: Int)
        /// A many-to-many's first end, and its second (the plan's inverse lists at `lists`).
        case firstOfMany(perObject: Int, shift: Int)
        case secondOfMany(lists: Int)
        case ring(neighbours: Int)
        case pairs
        case oneWay(perObject: Int, limit: Int, shift: Int)
    }

    let rule: Rule
    /// The entity whose population holds this end's objects, and the one whose population holds its targets.
    let own: Int
    let target: Int
    let isToMany: Bool

    /// The positions (in the target population, of `targetCount` objects) that the object at `ordinal`
    /// of the own population (of `ownCount`) is linked to, in order.
    func targets(of ordinal: Int, ownCount: Int, targetCount count: Int, lists: [FixtureLayout.InverseLists]) -> [Int] {
        guard count > 0 else { return [] }
        switch rule {
        case .toOneOfMany(let limit, let shift):
            return ordinal < limit ? [(ordinal + shift) % count] : []
        case .toManyOfOne(let limit, let shift):
            // Every source i < limit with (i + shift) mod n == ordinal, n this end's own population (the
            // to-one end's targets).
            let modulus = ownCount
            var source = (ordinal - shift % modulus + modulus) % modulus
            var found: [Int] = []
            while source < limit {
                found.append(source)
                source += modulus
            }
            return found
        case .oneToOne(let first, let limit, let shift):
            if first { return ordinal < limit ? [(ordinal + shift) % count] : [] }
            let modulus = ownCount
            let source = (ordinal - shift % modulus + modulus) % modulus
            return source < limit ? [source] : []
        case .firstOfMany(let perObject, let shift):
            return (0..<perObject).map { (ordinal * perObject + $0 + shift) % count }.sorted()
        case .secondOfMany(let index):
            return lists[index].sources(of: ordinal)
        case .ring(let neighbours):
            guard count > 1 else { return [] }
            let half = neighbours / 2
            var found = Set<Int>()
            for step in 1...max(half, 1) where half > 0 {
                found.insert((ordinal + step) % count)
                found.insert((ordinal - step % count + count) % count)
            }
            found.remove(ordinal)
            return found.sorted()
        case .pairs:
            let partner = ordinal ^ 1
            return partner < count ? [partner] : []
        case .oneWay(let perObject, let limit, let shift):
            guard ordinal < limit else { return [] }
            return Set((0..<perObject).map { (ordinal * perObject + $0 + shift) % count }).sorted()
        }
    }
}
