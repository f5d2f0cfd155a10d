#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Byte-level helpers of the XML store's reader and writer, for libxml2's NUL-terminated names (the
/// general ones are `ByteText`'s, in GraftCore).
enum Bytes {
    /// Whether two byte runs are equal.
    @inline(__always)
    static func equal(_ pointer: UnsafePointer<UInt8>, _ length: Int, _ bytes: [UInt8]) -> Bool {
        guard length == bytes.count else { return false }
        return bytes.withUnsafeBufferPointer { memcmp(pointer, $0.baseAddress!, length) == 0 }
    }

    /// Whether a NUL-terminated C string equals `literal` (an inline loop: these names are short and
    /// usually differ in the first byte, where a call to `memcmp` costs more than the comparison).
    @inline(__always)
    static func equal(_ cString: UnsafePointer<UInt8>, _ literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        let bytes = literal.utf8Start
        var index = 0
        while index < length {
            if cString[index] != bytes[index] { return false }
            index += 1
        }
        return cString[length] == 0
    }

    /// Whether two byte runs of `length` bytes are equal, compared inline (for short names).
    @inline(__always)
    static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ length: Int) -> Bool {
        var index = 0
        while index < length {
            if a[index] != b[index] { return false }
            index += 1
        }
        return true
    }

    static func string(_ buffer: UnsafeRawBufferPointer) -> String {
        String(decoding: buffer, as: UTF8.self)
    }

    static func string(_ pointer: UnsafePointer<UInt8>, _ length: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
    }

    /// A short, printable excerpt of some text for an error message.
    static func excerpt(_ buffer: UnsafeRawBufferPointer) -> String {
        excerpt(string(buffer))
    }

    static func excerpt(_ text: String) -> String {
        let printable = String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\u{FFFD}" : $0 }))
        return printable.count <= 40 ? printable : String(printable.prefix(40)) + "…"
    }
}
