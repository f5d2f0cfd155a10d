import Foundation
import GraftCore

/// The field names the object map uses, numbered so that a dictionary key can be recognised once per
/// string object instead of once per lookup.
enum ArchiveKey: UInt8, CaseIterable {
    case unknown = 1
    case classReference
    case className
    case primaryKey
    case legacyPrimaryKey
    case entityName
    case relatedNodes
    case attributeValues
    case attributesByName
    case keys
    case objects
    case time
    case uuidBytes
    case urlBase
    case urlRelative
    case string
    case bytes
    case data
    case decimalExponent
    case decimalLength
    case decimalNegative
    case decimalCompact
    case decimalMantissa
    case decimalByteOrder

    var name: String {
        typealias Node = BinaryStoreLayout.NodeKey
        typealias Value = BinaryStoreLayout.ValueKey
        typealias Decimal = BinaryStoreLayout.DecimalKey
        switch self {
        case .unknown: return ""
        case .classReference: return "$class"
        case .className: return "$classname"
        case .primaryKey: return Node.primaryKey
        case .legacyPrimaryKey: return Node.legacyPrimaryKey
        case .entityName: return Node.entityName
        case .relatedNodes: return Node.relatedNodes
        case .attributeValues: return Node.attributeValues
        case .attributesByName: return BinaryStoreLayout.attributesByNameKey
        case .keys: return Value.keys
        case .objects: return Value.objects
        case .time: return Value.time
        case .uuidBytes: return Value.uuidBytes
        case .urlBase: return Value.urlBase
        case .urlRelative: return Value.urlRelative
        case .string: return Value.string
        case .bytes: return Value.bytes
        case .data: return Value.data
        case .decimalExponent: return Decimal.exponent
        case .decimalLength: return Decimal.length
        case .decimalNegative: return Decimal.negative
        case .decimalCompact: return Decimal.compact
        case .decimalMantissa: return Decimal.mantissa
        case .decimalByteOrder: return Decimal.mantissaByteOrder
        }
    }

    static let byName: [String: ArchiveKey] = {
        var table: [String: ArchiveKey] = [:]
        for key in allCases where key != .unknown { table[key.name] = key }
        return table
    }()
}

/// A keyed archive read through a ``BinaryPlistView``: `$objects` entries by UID, archived objects' fields by
/// name, without decoding anything that is not asked for.
final class ArchiveView {
    let plist: BinaryPlistView
    private let objectsStart: Int
    let objectsCount: Int
    /// `$top` names and the references of their values (UIDs).
    let top: [String: Int]
    /// Field-name objects already recognised: a small table, one entry per hash of the object's
    /// number, each the number shifted left by 8 with the `ArchiveKey` raw value (0: empty). An archive
    /// has a few distinct name objects however many objects it has, so a table this size holds them
    /// all, where one code per object would grow with the document.
    private var keyCodes = [UInt64](repeating: 0, count: ArchiveView.keyCodeSlots)
    private static let keyCodeSlots = 1 << 12
    /// The last `$objects` entry found to be an `NSNull` (Foundation archives its one instance once).
    private var knownNull: Int?

    init(_ plist: BinaryPlistView) throws {
        self.plist = plist
        guard case .dictionary(let start, let count) = try plist.object(plist.topObject) else {
            throw plist.failure("a keyed archive is a dictionary at the top", at: try plist.offset(of: plist.topObject))
        }
        var objects: (Int, Int)?
        var top: [String: Int] = [:]
        for index in 0..<count {
            let key = try plist.object(plist.element(index, from: start))
            let value = try plist.element(count + index, from: start)
            switch plist.string(key) {
            case "$objects":
                guard case .array(let objectsStart, let objectsCount) = try plist.object(value) else {
                    throw plist.failure("the archive's $objects is not an array", at: try plist.offset(of: value))
                }
                objects = (objectsStart, objectsCount)
            case "$top":
                guard case .dictionary(let topStart, let topCount) = try plist.object(value) else {
                    throw plist.failure("the archive's $top is not a dictionary", at: try plist.offset(of: value))
                }
                for entry in 0..<topCount {
                    let name = try plist.object(plist.element(entry, from: topStart))
                    guard let name = plist.string(name) else {
                        throw plist.failure("a $top key is not a string", at: topStart)
                    }
                    top[name] = try plist.element(topCount + entry, from: topStart)
                }
            default:
                break
            }
        }
        guard let objects else {
            throw plist.failure("not a keyed archive (no $objects array)", at: try plist.offset(of: plist.topObject))
        }
        guard !top.isEmpty else {
            throw plist.failure("not a keyed archive (no $top dictionary)", at: try plist.offset(of: plist.topObject))
        }
        (objectsStart, objectsCount) = objects
        self.top = top
    }

    /// The property-list reference of `$objects[uid]`; `nil` for UID 0 (`$null`).
    func entry(_ uid: UInt64, context: @autoclosure () -> String) throws -> Int? {
        if uid == 0 { return nil }
        guard uid < UInt64(objectsCount) else {
            throw GraftError(
                .malformedInput,
                "\(plist.name): \(context()) refers to UID \(uid), beyond the end of $objects (\(objectsCount) objects)"
            )
        }
        return try plist.element(Int(uid), from: objectsStart)
    }

    /// A value as stored in a field or collection, with a UID followed to its `$objects` entry;
    /// `nil` for `$null`.
    func follow(_ reference: Int, context: @autoclosure () -> String) throws -> Int? {
        if case .uid(let uid) = try plist.object(reference) { return try entry(uid, context: context()) }
        return reference
    }

    /// The top-level object with this name, followed; `nil` when absent or `$null`.
    func topObject(_ name: String) throws -> Int? {
        guard let reference = top[name] else { return nil }
        return try follow(reference, context: "$top.\(name)")
    }

    /// Which known field name the string object at `reference` is.
    @inline(__always)
    func key(at reference: Int) throws -> ArchiveKey {
        let number = UInt64(truncatingIfNeeded: reference)
        let slot = Int(truncatingIfNeeded: (number &* 0x9E37_79B9_7F4A_7C15) >> 52)
        let entry = keyCodes[slot]
        if entry >> 8 == number, let key = ArchiveKey(rawValue: UInt8(truncatingIfNeeded: entry)) { return key }
        let name = plist.string(try plist.object(reference))
        let key = name.flatMap { ArchiveKey.byName[$0] } ?? .unknown
        keyCodes[slot] = number << 8 | UInt64(key.rawValue)
        return key
    }

    /// The fields of an archived object (a dictionary) as (key, value reference) pairs, values not
    /// followed; `nil` when the object is not a dictionary.
    func fields(of reference: Int) throws -> Fields? {
        guard case .dictionary(let start, let count) = try plist.object(reference) else { return nil }
        return Fields(start: start, count: count)
    }

    struct Fields {
        let start: Int
        let count: Int
    }

    /// The value reference of a field, not followed; `nil` when absent.
    func field(_ key: ArchiveKey, in fields: Fields) throws -> Int? {
        for index in 0..<fields.count where try self.key(at: plist.element(index, from: fields.start)) == key {
            return try plist.element(fields.count + index, from: fields.start)
        }
        return nil
    }

    /// The class name of an archived object, or `nil` for plain values and objects without `$class`.
    func className(of fields: Fields) throws -> String? {
        guard let reference = try field(.classReference, in: fields),
            let entry = try follow(reference, context: "$class"), let classFields = try self.fields(of: entry),
            let name = try field(.className, in: classFields)
        else { return nil }
        return plist.string(try plist.object(name))
    }

    /// Whether a value (already followed from its UID) is an archived `NSNull`.
    func isNull(_ reference: Int) throws -> Bool {
        if reference == knownNull { return true }
        guard case .dictionary(let start, let count) = try plist.object(reference), count == 1,
            try className(of: Fields(start: start, count: count)) == BinaryStoreLayout.nullClassChain[0]
        else { return false }
        knownNull = reference
        return true
    }

    /// The keys and values of an archived `NSDictionary` (`NS.keys`, `NS.objects`), references not
    /// followed; `nil` when the object is not a dictionary.
    func entries(of reference: Int) throws -> (keys: Int, objects: Int, count: Int)? {
        guard let fields = try fields(of: reference), let keysField = try field(.keys, in: fields),
            let objectsField = try field(.objects, in: fields),
            case .array(let keys, let count) = try plist.object(keysField),
            case .array(let objects, let objectCount) = try plist.object(objectsField), count == objectCount
        else { return nil }
        return (keys, objects, count)
    }

    /// The elements of an archived `NSArray` (or set), references not followed.
    func elements(of reference: Int, context: @autoclosure () -> String) throws -> (start: Int, count: Int) {
        if case .array(let start, let count) = try plist.object(reference) { return (start, count) }
        guard let fields = try fields(of: reference), let objects = try field(.objects, in: fields),
            case .array(let start, let count) = try plist.object(objects)
        else {
            throw GraftError(.malformedInput, "\(plist.name): \(context()) is not an array (no NS.objects)")
        }
        return (start, count)
    }
}
