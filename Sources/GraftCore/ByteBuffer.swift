import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one growable run of bytes with cheap appends that Graft's writers write into and its readers
/// decode text into: a store writer's output, a clipboard encoder's output, a scanner's scratch text.
///
/// Without a sink the buffer grows until the end, and its memory can become the result `Data` without a
/// copy (``takeData()``). With a sink, writers call ``flushIfFull()`` between records, and the buffer
/// hands what it holds to the sink whenever that passes ``chunkSize``. Scratch use is ``removeAll()``
/// then appends, reusing the memory.
///
/// For example:
///
/// ```swift
/// let output = ByteBuffer(capacity: 1 << 16)
/// output.append("<integer>")
/// output.append(decimal: Int64(-12))
/// output.append("</integer>")
/// let data = output.takeData()
/// ```
///
/// It is a class so that its storage has one owner; the hot fields skip Swift's dynamic exclusivity
/// checks, which would otherwise cost more than the appends themselves. The appends are inlinable, so
/// that they cost no call in the modules that use them.
@_spi(GraftInternal) public final class ByteBuffer {
    /// How much a buffer with a sink gathers before it hands it on.
    public static let chunkSize = 256 * 1024

    @exclusivity(unchecked) @usableFromInline var storage: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) @usableFromInline var used = 0
    @exclusivity(unchecked) @usableFromInline var allocated: Int

    /// The first byte.
    @inlinable public var base: UnsafeMutablePointer<UInt8> { storage }
    /// How many bytes the buffer holds.
    @inlinable public var count: Int { used }
    /// How many bytes it has room for before it grows.
    @inlinable public var capacity: Int { allocated }
    /// Bytes already handed to the sink.
    @exclusivity(unchecked) @usableFromInline package private(set) var flushed = 0
    @usableFromInline let sink: ((UnsafeRawBufferPointer) throws -> Void)?

    /// A buffer with room for `capacity` bytes to start with (more with a sink: a chunk and some).
    ///
    /// - Parameter sink: called with the buffered bytes, in order, by ``flush()`` and ``flushIfFull()``;
    ///   the bytes are valid only during the call.
    package init(capacity: Int = 4096, sink: ((UnsafeRawBufferPointer) throws -> Void)? = nil) {
        self.sink = sink
        allocated = max(capacity, sink == nil ? 16 : Self.chunkSize + (1 << 16))
        storage = Self.allocate(self.allocated)
    }

    deinit { free(storage) }

    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<UInt8> {
        guard let memory = malloc(capacity) else { fatalError("out of memory for a buffer of \(capacity) bytes") }
        return memory.assumingMemoryBound(to: UInt8.self)
    }

    package var isEmpty: Bool { used == 0 }

    /// The buffered bytes, valid until the next append.
    @inlinable @inline(__always)
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: used) }

    /// The offset of the next byte in the whole output, counting what went to the sink.
    @inlinable public var position: Int { flushed + used }

    // MARK: Sink and result

    /// Hands the buffered bytes to the sink when they pass the chunk size.
    @inlinable @inline(__always)
    public func flushIfFull() throws {
        if sink != nil && used >= Self.chunkSize { try flush() }
    }

    /// Hands every buffered byte to the sink.
    public func flush() throws {
        guard let sink, used > 0 else { return }
        try sink(UnsafeRawBufferPointer(start: storage, count: used))
        flushed += used
        used = 0
    }

    /// The whole output as `Data`, taking over the buffer's memory (only without a sink); the buffer is
    /// left empty and can be used again.
    package func takeData() -> Data {
        precondition(sink == nil, "takeData() on a buffer with a sink")
        let data = Data(bytesNoCopy: storage, count: used, deallocator: .free)
        allocated = 16
        storage = Self.allocate(allocated)
        used = 0
        return data
    }

    // MARK: Room

    /// Forgets the buffered bytes and keeps the memory.
    @inlinable @inline(__always)
    public func removeAll() { used = 0 }

    /// Drops bytes from the end so that `newCount` bytes remain.
    package func truncate(to newCount: Int) { used = min(used, max(newCount, 0)) }

    /// Makes room for `extra` more bytes.
    @inlinable @inline(__always)
    public func reserve(_ extra: Int) {
        if used + extra > allocated { grow(used + extra) }
    }

    @usableFromInline
    func grow(_ needed: Int) {
        var newCapacity = allocated * 2
        while newCapacity < needed { newCapacity *= 2 }
        guard let memory = realloc(storage, newCapacity) else {
            fatalError("out of memory for a buffer of \(newCapacity) bytes")
        }
        storage = memory.assumingMemoryBound(to: UInt8.self)
        allocated = newCapacity
    }

    /// Where bytes reserved with ``reserve(_:)`` are written; ``commit(_:)`` counts them.
    @inlinable @inline(__always)
    public var end: UnsafeMutablePointer<UInt8> { storage + used }

    /// Counts `length` bytes written directly into the reserved space at ``end``.
    @inlinable @inline(__always)
    public func commit(_ length: Int) {
        precondition(used + length <= allocated)
        used += length
    }

    /// Replaces `length` bytes at `start` with `bytes`, moving what follows.
    package func replace(start: Int, length: Int, with bytes: UnsafeRawBufferPointer) {
        precondition(start >= 0 && start + length <= used)
        let tail = used - start - length
        reserve(max(bytes.count - length, 0))
        (storage + start + bytes.count).update(from: storage + start + length, count: tail)
        if let source = bytes.baseAddress {
            UnsafeMutableRawPointer(storage + start).copyMemory(from: source, byteCount: bytes.count)
        }
        used = start + bytes.count + tail
    }

    // MARK: Bytes and text

    @inlinable @inline(__always)
    public func append(_ byte: UInt8) {
        if used == allocated { grow(used + 1) }
        storage[used] = byte
        used += 1
    }

    @inlinable @inline(__always)
    public func append(_ first: UInt8, _ second: UInt8) {
        reserve(2)
        storage[used] = first
        storage[used + 1] = second
        used += 2
    }

    @inlinable @inline(__always)
    public func append(_ pointer: UnsafePointer<UInt8>, count length: Int) {
        guard length > 0 else { return }
        reserve(length)
        (storage + used).update(from: pointer, count: length)
        used += length
    }

    @inlinable @inline(__always)
    public func append(_ bytes: UnsafeRawBufferPointer) {
        guard let start = bytes.baseAddress, bytes.count > 0 else { return }
        append(start.assumingMemoryBound(to: UInt8.self), count: bytes.count)
    }

    @inlinable @inline(__always)
    public func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append(UnsafeRawBufferPointer($0)) }
    }

    /// Appends a literal's UTF-8 bytes as they are (no escaping).
    @inlinable @inline(__always)
    public func append(_ text: StaticString) {
        append(text.utf8Start, count: text.utf8CodeUnitCount)
    }

    /// Appends a string's UTF-8 bytes as they are (no escaping).
    @inlinable @inline(__always)
    public func append(string text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// Appends `byte` `length` times.
    @inlinable @inline(__always)
    public func append(repeating byte: UInt8, count length: Int) {
        guard length > 0 else { return }
        reserve(length)
        (storage + used).initialize(repeating: byte, count: length)
        used += length
    }

    /// Appends `length` spaces.
    package func appendSpaces(_ length: Int) { append(repeating: 0x20, count: length) }

    // MARK: Numbers and base64

    /// Appends `value` in decimal.
    @inlinable
    public func append(decimal value: Int64) {
        if value < 0 {
            append(UInt8(ascii: "-"))
            append(decimal: UInt64(bitPattern: 0 &- value))  // also right for Int64.min
        } else {
            append(decimal: UInt64(value))
        }
    }

    /// Appends `value` in decimal.
    @inlinable
    public func append(decimal value: UInt64) {
        reserve(20)
        if value < 10 {
            storage[used] = UInt8(truncatingIfNeeded: value) &+ 0x30
            used += 1
            return
        }
        let digits = NumberText.digitCount(value)
        NumberText.writeDigits(value, count: digits, to: storage + used)
        used += digits
    }

    /// Appends `value` as exactly `width` decimal digits, padded with leading zeros (only the lowest
    /// `width` digits of a longer value).
    @inlinable @inline(__always)
    public func append(decimal value: UInt64, width: Int) {
        reserve(width)
        NumberText.writeDigits(value, count: width, to: storage + used)
        used += width
    }

    /// Appends the shortest text that reads back as exactly `value` (`1.0`, `0.1`, `1e-05`, `-0.0`), as
    /// `description` writes it: here, without a string, where that text is an exact decimal
    /// (``NumberText/exactDecimal(_:)``), the common case of dates and money.
    public func append(double value: Double) {
        guard let (digits, places) = NumberText.exactDecimal(value.magnitude) else {
            if value == 0 {
                append(value.sign == .minus ? "-0.0" : "0.0")
            } else {
                append(string: value.description)
            }
            return
        }
        if value.sign == .minus { append(UInt8(ascii: "-")) }
        if places == 0 {
            append(decimal: digits)
            append(UInt8(ascii: "."), UInt8(ascii: "0"))
        } else {
            NumberText.appendFraction(digits, places: places, to: self)
        }
    }

    /// Appends `bytes` in base64 (standard alphabet, with padding, on one line).
    package func append(base64 bytes: UnsafeRawBufferPointer) {
        let length = Base64.encodedLength(bytes.count)
        reserve(length)
        Base64.encode(bytes, into: storage + used)
        used += length
    }

    package func append(base64 data: Data) {
        data.withUnsafeBytes { append(base64: $0) }
    }
}

// MARK: Files

extension ByteBuffer {
    /// Writes every byte to an open file: at `offset` when given, else at the file's current position
    /// (moving it on); interrupted writes are retried.
    ///
    /// - Throws: `GraftError.io` with the system's reason.
    package static func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, at offset: Int? = nil) throws {
        guard var pointer = bytes.baseAddress else { return }
        var remaining = bytes.count
        var position = offset ?? 0
        while remaining > 0 {
            let written =
                offset == nil
                ? systemWrite(descriptor, pointer, remaining) : pwrite(descriptor, pointer, remaining, off_t(position))
            if written < 0 {
                if errno == EINTR { continue }
                throw GraftError(.io, "cannot be written: \(String(cString: strerror(errno)))")
            }
            pointer += written
            remaining -= written
            position += written
        }
    }
}

/// `write(2)`, under a name that methods called `write` do not hide.
private func systemWrite(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, pointer, count)
}

/// The buffer takes a binary property list's bytes (the clipboard's binary encoder writes through it).
extension ByteBuffer: BinaryPlistOutput {
    @inlinable @inline(__always)
    public func appendByte(_ byte: UInt8) { append(byte) }

    @inlinable @inline(__always)
    public func appendBytes(_ bytes: UnsafeRawBufferPointer) { append(bytes) }

    @inlinable @inline(__always)
    public func appendBigEndian(_ value: UInt64, size: Int) {
        reserve(size)
        let target = end
        switch size {
        case 1:
            target[0] = UInt8(truncatingIfNeeded: value)
        case 2:
            target[0] = UInt8(truncatingIfNeeded: value >> 8)
            target[1] = UInt8(truncatingIfNeeded: value)
        case 4:
            UnsafeMutableRawPointer(target).storeBytes(of: UInt32(truncatingIfNeeded: value).bigEndian, as: UInt32.self)
        case 8:
            UnsafeMutableRawPointer(target).storeBytes(of: value.bigEndian, as: UInt64.self)
        default:
            for index in 0..<size { target[index] = UInt8(truncatingIfNeeded: value >> UInt64(8 * (size - 1 - index))) }
        }
        commit(size)
    }

    @inlinable
    public func appendUTF16BigEndian(_ units: String.UTF16View) {
        reserve(2 * units.count)
        var target = end
        for unit in units {
            target[0] = UInt8(truncatingIfNeeded: unit >> 8)
            target[1] = UInt8(truncatingIfNeeded: unit)
            target += 2
        }
        commit(2 * units.count)
    }
}
