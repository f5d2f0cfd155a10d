import Foundation

/// Apple's binary property-list format (`bplist00`): the format of `.mom` files, keyed archives and
/// most plists Apple's tools write.
///
/// The decoder reads every object type — including keyed-archive UIDs, UTF-16 strings, 16-byte
/// integers and sets (read as arrays) — checks every offset, count and reference against the file,
/// and rejects reference cycles, so corrupt input gives a `GraftError` rather than a crash. The
/// encoder writes each distinct string, number, date and data value once, picks the smallest
/// integer, offset and reference sizes, and runs in time linear in the size of the value.
///
/// For example:
///
/// ```swift
/// let data = BinaryPropertyList.encode(["name": "Ann", "age": 42])
/// let plist = try BinaryPropertyList.decode(data)
/// ```
public enum BinaryPropertyList {
    /// The eight bytes every binary property list starts with.
    public static let magic: [UInt8] = Array("bplist00".utf8)

    /// The deepest nesting of arrays and dictionaries the decoder follows.
    public static let maximumDepth = 512

    /// Whether `data` starts like a binary property list (`bplist0…`).
    public static func hasMagic(_ data: Data) -> Bool {
        data.count >= 8 && data.starts(with: magic.prefix(7))
    }
}

/// Object markers: the high four bits of an object's first byte (and the few whole bytes that are values).
@usableFromInline
package enum BinaryMarker {
    @inlinable package static var simple: UInt8 { 0x0 }  // null, false, true, fill
    @inlinable package static var integer: UInt8 { 0x1 }
    @inlinable package static var real: UInt8 { 0x2 }
    @inlinable package static var date: UInt8 { 0x3 }
    @inlinable package static var data: UInt8 { 0x4 }
    @inlinable package static var asciiString: UInt8 { 0x5 }
    @inlinable package static var utf16String: UInt8 { 0x6 }
    @inlinable package static var utf8String: UInt8 { 0x7 }
    @inlinable package static var uid: UInt8 { 0x8 }
    @inlinable package static var array: UInt8 { 0xA }
    @inlinable package static var orderedSet: UInt8 { 0xB }
    @inlinable package static var set: UInt8 { 0xC }
    @inlinable package static var dictionary: UInt8 { 0xD }

    @inlinable package static var falseValue: UInt8 { 0x08 }
    @inlinable package static var trueValue: UInt8 { 0x09 }
    @inlinable package static var dateValue: UInt8 { 0x33 }
}
