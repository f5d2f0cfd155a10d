/// The objects of a to-many relationship: an ordered collection with set semantics.
///
/// Order is kept for every to-many, so iteration is deterministic; for ordered relationships the order
/// is also the relationship's meaning. Membership tests are O(1) once the list is larger than a few
/// objects.
struct ObjectList: Sequence {
    private(set) var objects: [ManagedObject] = []
    private var positions: [ObjectIdentifier: Int]?
    private static let indexThreshold = 12

    init() {}

    init(_ objects: [ManagedObject]) {
        for object in objects { append(object) }
    }

    var count: Int { objects.count }
    var isEmpty: Bool { objects.isEmpty }

    func makeIterator() -> IndexingIterator<[ManagedObject]> { objects.makeIterator() }

    func firstIndex(of object: ManagedObject) -> Int? {
        if let positions { return positions[ObjectIdentifier(object)] }
        return objects.firstIndex { $0 === object }
    }

    func contains(_ object: ManagedObject) -> Bool { firstIndex(of: object) != nil }

    /// Adds `object` at the end (or at `index`); returns the position it went to, or `nil` if it was
    /// already present.
    @discardableResult
    mutating func insert(_ object: ManagedObject, at index: Int? = nil) -> Int? {
        guard !contains(object) else { return nil }
        let position = Swift.min(index ?? objects.count, objects.count)
        if position == objects.count {
            append(object)
        } else {
            objects.insert(object, at: position)
            rebuildIndex()
        }
        return position
    }

    private mutating func append(_ object: ManagedObject) {
        objects.append(object)
        if positions != nil {
            positions![ObjectIdentifier(object)] = objects.count - 1
        } else if objects.count > Self.indexThreshold {
            rebuildIndex()
        }
    }

    /// Removes `object`; returns the position it had, or `nil` if it was not present.
    ///
    /// - Parameter keepingOrder: when `false` (unordered relationships), the last object takes the removed
    ///   one's place, so removal costs O(1) instead of O(n).
    @discardableResult
    mutating func remove(_ object: ManagedObject, keepingOrder: Bool) -> Int? {
        guard let position = firstIndex(of: object) else { return nil }
        positions?[ObjectIdentifier(object)] = nil
        if position == objects.count - 1 {
            objects.removeLast()
        } else if !keepingOrder {
            let last = objects.removeLast()
            objects[position] = last
            positions?[ObjectIdentifier(last)] = position
        } else {
            objects.remove(at: position)
            if positions != nil {
                for index in position..<objects.count { positions![ObjectIdentifier(objects[index])] = index }
            }
        }
        return position
    }

    private mutating func rebuildIndex() {
        guard objects.count > Self.indexThreshold else {
            positions = nil
            return
        }
        var index: [ObjectIdentifier: Int] = [:]
        index.reserveCapacity(objects.count)
        for (position, object) in objects.enumerated() { index[ObjectIdentifier(object)] = position }
        positions = index
    }

    /// Same members, ignoring order.
    func hasSameMembers(as other: [ManagedObject]) -> Bool {
        guard other.count == objects.count else { return false }
        return other.allSatisfy { contains($0) }
    }
}
