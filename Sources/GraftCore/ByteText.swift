import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Byte-level text helpers shared by Graft's readers and writers: XML and JSON character classes, UTF-8
/// validation, comparison with literals, lines and excerpts for messages.
@_spi(GraftInternal) public enum ByteText {
    /// XML and JSON white space (space, tab, line feed, carriage return).
    @inlinable @inline(__always)
    public static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// A byte that may continue an XML name (ASCII name characters and any byte of a multi-byte UTF-8
    /// sequence).
    @inlinable @inline(__always)
    public static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"),
            UInt8(ascii: "."), 0x80...0xFF:
            return true
        default:
            return false
        }
    }

    /// A byte that may start an XML name.
    @inlinable @inline(__always)
    public static func isNameStartByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"),
            UInt8(ascii: ":"), 0x80...0xFF:
            return true
        default:
            return false
        }
    }

    /// The words of a space-separated list (XML's `IDREFS`, for one), each as its first byte and length,
    /// read in place: `var words = ByteText.Words(text); while let (start, count) = words.next() { … }`.
    public struct Words {
        @usableFromInline let bytes: UnsafePointer<UInt8>?
        @usableFromInline let count: Int
        @usableFromInline var index = 0

        @inlinable public init(_ text: UnsafeRawBufferPointer) {
            bytes = text.baseAddress?.assumingMemoryBound(to: UInt8.self)
            count = text.count
        }

        /// The next word, or `nil` after the last.
        @inlinable @inline(__always)
        public mutating func next() -> (start: UnsafePointer<UInt8>, count: Int)? {
            guard let bytes else { return nil }
            while index < count && isSpace(bytes[index]) { index += 1 }
            let start = index
            while index < count && !isSpace(bytes[index]) { index += 1 }
            return index > start ? (bytes + start, index - start) : nil
        }
    }

    /// The bytes without XML white space at either end.
    @inlinable @inline(__always)
    public static func trimmed(_ text: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var start = 0
        var end = text.count
        while start < end, isSpace(text[start]) { start += 1 }
        while end > start, isSpace(text[end - 1]) { end -= 1 }
        if start == 0 && end == text.count { return text }
        return UnsafeRawBufferPointer(rebasing: text[start..<end])
    }

    /// The string the bytes spell, or `nil` when they are not valid UTF-8.
    ///
    /// ASCII is checked eight bytes at a time; other text is validated here, because the standard
    /// library's validating initializer is generic and, unspecialised, costs more than the whole parse.
    @inlinable @inline(__always)
    public static func string(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard isASCII(bytes) || isValidUTF8(bytes) else { return nil }
        return String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    @inlinable @inline(__always)
    public static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var index = 0
        var any: UInt64 = 0
        while index + 8 <= count {
            any |= base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < count {
            any |= UInt64(bytes[index])
            index += 1
        }
        return any & 0x8080_8080_8080_8080 == 0
    }

    /// Whether the bytes are well-formed UTF-8 (no overlong forms, surrogates or values above U+10FFFF).
    public static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return false
            }
            guard index + length <= count, bytes[index + 1] >= low, bytes[index + 1] <= high else { return false }
            for offset in 2..<max(length, 2) where bytes[index + offset] & 0xC0 != 0x80 { return false }
            index += length
        }
        return true
    }

    /// Whether the bytes equal an ASCII literal.
    @inlinable @inline(__always)
    public static func equals(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount
            && (bytes.count == 0 || memcmp(bytes.baseAddress!, literal.utf8Start, bytes.count) == 0)
    }

    /// Whether two byte runs are equal.
    @inlinable @inline(__always)
    public static func equals(_ bytes: UnsafeRawBufferPointer, _ other: UnsafeRawBufferPointer) -> Bool {
        bytes.count == other.count
            && (bytes.count == 0 || memcmp(bytes.baseAddress!, other.baseAddress!, bytes.count) == 0)
    }

    /// Whether XML 1.0 can carry the text: no control characters but tab, line feed and carriage return,
    /// and neither U+FFFE nor U+FFFF.
    package static func xmlCanCarry(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte < 0x20 {
                if byte != 0x09 && byte != 0x0A && byte != 0x0D { return false }
            } else if byte == 0xEF, index + 2 < count, bytes[index + 1] == 0xBF, bytes[index + 2] >= 0xBE {
                return false
            }
            index += 1
        }
        return true
    }

    package static func xmlCanCarry(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { xmlCanCarry(UnsafeRawBufferPointer($0)) }
    }

    /// The line (from 1) that the byte at `offset` is on.
    package static func line(of offset: Int, in bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 1 }
        var line = 1
        var position = 0
        let end = min(max(offset, 0), bytes.count)
        while position < end {
            guard let found = memchr(base + position, 0x0A, end - position) else { break }
            line += 1
            position = base.distance(to: UnsafeRawPointer(found)) + 1
        }
        return line
    }

    /// A short quotation of text for messages.
    package static func excerpt(_ bytes: UnsafeRawBufferPointer, limit: Int = 40) -> String {
        let text = String(decoding: bytes.prefix(limit * 4), as: UTF8.self)
        return text.count <= limit ? text : String(text.prefix(limit)) + "…"
    }

    package static func excerpt(_ text: String, limit: Int = 40) -> String {
        text.count <= limit ? text : String(text.prefix(limit)) + "…"
    }
}
