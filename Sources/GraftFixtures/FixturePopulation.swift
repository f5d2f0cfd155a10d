import GraftModel

/// The objects of an entity and its subentities, in one order: concrete kinds by entity index, each
/// kind's objects by their index. Relationships are laid out over populations, so that a link's
/// targets follow from an object's position with no table of objects.
struct FixturePopulation: Sendable {
    /// The concrete entities (indices) that are kinds of the population's entity.
    let kinds: [Int]
    /// Where each kind's objects start in the population.
    let starts: [Int]
    let count: Int

    init(kinds: [Int], counts: [Int]) {
        self.kinds = kinds
        var starts: [Int] = []
        var total = 0
        for kind in kinds {
            starts.append(total)
            total += counts[kind]
        }
        self.starts = starts
        self.count = total
    }

    /// The object at `ordinal`: its entity and its index among that entity's objects.
    func member(_ ordinal: Int) -> (entity: Int, index: Int) {
        // Few kinds: a walk back from the last is as quick as a search.
        var position = kinds.count - 1
        while position > 0 && starts[position] > ordinal { position -= 1 }
        return (kinds[position], ordinal - starts[position])
    }

    /// The position of `entity`'s object `index`, when `entity` is one of the kinds.
    func ordinal(entity: Int, index: Int) -> Int? {
        guard let position = kinds.firstIndex(of: entity) else { return nil }
        return starts[position] + index
    }
}
