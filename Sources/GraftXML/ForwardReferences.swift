/// References to objects further on, in relationships the consumer of a one-pass read does not read
/// (see `RelationshipSelection`), which are not resolved but must still name objects of the
/// relationship's destination: their objects are handed on at once, and these ids checked once every id
/// is known.
///
/// Only `z<number>` ids are noted here, by number, a bit each while the numbers stay dense; an object
/// referring to an id of another form further on is set aside as any other (`DeferredObjects`).
final class ForwardReferences {
    /// The numbers referred to, by the relationship's row in `ReadTables.accepts`.
    private var numbers: [Int32: ObjectTally.KeySet] = [:]
    /// The row of the last relationship noted, and its numbers' place in `numbers`, to spare a lookup
    /// per reference.
    private var lastRow: Int32 = -1
    private var last = ObjectTally.KeySet()

    /// Notes a reference to `z<number>` in a relationship whose destination's row of accepts is `row`.
    @inline(__always)
    func note(_ number: Int64, row: Int32) {
        if row != lastRow {
            if lastRow >= 0 { numbers[lastRow] = last }
            last = numbers.removeValue(forKey: row) ?? ObjectTally.KeySet()
            lastRow = row
        }
        _ = last.insert(number)
    }

    /// Whether every number noted is the id of an object, one that `accepts` allows in its
    /// relationship (any, when `accepts` is `nil`).
    ///
    /// - Parameter entity: the entity of the object with id `z<number>`, if there is one.
    func allFound(accepts: UnsafeMutableBufferPointer<Bool>?, entity: (Int64) -> Int32?) -> Bool {
        if lastRow >= 0 {
            numbers[lastRow] = last
            lastRow = -1
            last = ObjectTally.KeySet()
        }
        return numbers.allSatisfy { row, keys in
            keys.allSatisfy { number in entity(number).map { accepts?[Int(row) + Int($0)] ?? true } ?? false }
        }
    }
}
