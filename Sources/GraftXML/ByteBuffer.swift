#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A growable run of bytes with cheap appends: the writer's output buffer and the reader's text
/// accumulator.
///
/// It is a class so that its storage has one owner; the hot fields skip Swift's dynamic exclusivity
/// checks, which would otherwise cost more than the appends themselves.
final class ByteBuffer {
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private(set) var count: Int = 0
    @exclusivity(unchecked) private(set) var capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    var isEmpty: Bool { count == 0 }

    /// The bytes as a buffer pointer, valid until the next append.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    @inline(__always)
    func removeAll() { count = 0 }

    /// Counts `length` bytes written directly into the reserved space after `count`.
    @inline(__always)
    func commit(_ length: Int) {
        precondition(count + length <= capacity)
        count += length
    }

    /// Replaces `length` bytes at `start` with `bytes`, moving what follows.
    func replace(start: Int, length: Int, with bytes: UnsafeRawBufferPointer) {
        precondition(start >= 0 && start + length <= count)
        let tail = count - start - length
        reserve(max(bytes.count - length, 0))
        (base + start + bytes.count).update(from: base + start + length, count: tail)
        if let source = bytes.baseAddress {
            UnsafeMutableRawPointer(base + start).copyMemory(from: source, byteCount: bytes.count)
        }
        count = start + bytes.count + tail
    }

    /// Drops bytes from the end so that `count` bytes remain.
    func truncate(to newCount: Int) { count = min(count, max(newCount, 0)) }

    @inline(__always)
    func reserve(_ extra: Int) {
        if count + extra > capacity { grow(count + extra) }
    }

    private func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        if count == capacity { grow(count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always)
    func append(_ pointer: UnsafePointer<UInt8>, count length: Int) {
        guard length > 0 else { return }
        reserve(length)
        (base + count).update(from: pointer, count: length)
        count += length
    }

    @inline(__always)
    func append(_ buffer: UnsafeRawBufferPointer) {
        guard let start = buffer.baseAddress, buffer.count > 0 else { return }
        append(start.assumingMemoryBound(to: UInt8.self), count: buffer.count)
    }

    @inline(__always)
    func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append(UnsafeRawBufferPointer($0)) }
    }

    /// Appends a string's UTF-8 bytes as they are (no escaping).
    @inline(__always)
    func append(_ text: StaticString) {
        append(text.utf8Start, count: text.utf8CodeUnitCount)
    }

    func append(string text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// Appends `value` in decimal.
    func append(decimal value: Int64) {
        if value < 0 {
            append(UInt8(ascii: "-"))
            append(decimal: UInt64(bitPattern: 0 &- value))  // also right for Int64.min
        } else {
            append(decimal: UInt64(value))
        }
    }

    /// Appends `value` in decimal.
    func append(decimal value: UInt64) {
        reserve(20)
        if value < 10 {
            base[count] = UInt8(truncatingIfNeeded: value) + 0x30
            count += 1
            return
        }
        var digits = 0
        var probe = value
        while probe > 0 {
            digits += 1
            probe /= 10
        }
        var rest = value
        var position = count + digits - 1
        while rest > 0 {
            base[position] = UInt8(truncatingIfNeeded: rest % 10) + 0x30
            rest /= 10
            position -= 1
        }
        count += digits
    }

    /// Appends `value` as exactly `width` decimal digits, padded with leading zeros.
    func append(decimal value: UInt64, width: Int) {
        reserve(width)
        var rest = value
        var position = count + width - 1
        while position >= count {
            base[position] = UInt8(truncatingIfNeeded: rest % 10) + 0x30
            rest /= 10
            position -= 1
        }
        count += width
    }

    /// Appends `length` spaces.
    func appendSpaces(_ length: Int) {
        appendRepeated(0x20, count: length)
    }

    /// Appends `byte` `length` times.
    func appendRepeated(_ byte: UInt8, count length: Int) {
        guard length > 0 else { return }
        reserve(length)
        (base + count).initialize(repeating: byte, count: length)
        count += length
    }
}

/// Byte-level helpers shared by the reader and the writer.
enum Bytes {
    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

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

    /// The bytes with leading and trailing XML white space removed.
    @inline(__always)
    static func trimmed(_ buffer: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        guard var start = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return buffer }
        var end = start + buffer.count
        while start < end, isSpace(start.pointee) { start += 1 }
        while end > start, isSpace((end - 1).pointee) { end -= 1 }
        return UnsafeRawBufferPointer(start: start, count: end - start)
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
