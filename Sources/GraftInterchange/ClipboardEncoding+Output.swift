import Foundation
import GraftCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The byte buffer every clipboard encoder writes into.
///
/// Without a sink the buffer grows until the end and its memory becomes the result `Data` without a
/// copy. With a sink, encoders call `flushIfFull()` between objects, and the buffer hands what it holds
/// to the sink whenever that passes the chunk size. It is a class so that its storage has one owner;
/// the hot fields skip Swift's dynamic exclusivity checks, which would otherwise cost more than the
/// appends themselves.
final class ClipboardOutput {
    /// How much is gathered before it goes to the sink.
    static let chunkSize = 256 * 1024

    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var capacity: Int
    /// Bytes already handed to the sink.
    @exclusivity(unchecked) private(set) var flushed = 0
    private let sink: ((UnsafeRawBufferPointer) throws -> Void)?

    init(sink: ((UnsafeRawBufferPointer) throws -> Void)?) {
        self.sink = sink
        capacity = sink == nil ? 1 << 16 : Self.chunkSize + (1 << 16)
        base = malloc(capacity)!.assumingMemoryBound(to: UInt8.self)
    }

    deinit { free(base) }

    /// The offset of the next byte in the whole output.
    var position: Int { flushed + count }

    /// Hands the buffered bytes to the sink when they pass the chunk size.
    @inline(__always)
    func flushIfFull() throws {
        if sink != nil && count >= Self.chunkSize { try flush() }
    }

    /// Hands every buffered byte to the sink.
    func flush() throws {
        guard let sink, count > 0 else { return }
        try sink(UnsafeRawBufferPointer(start: base, count: count))
        flushed += count
        count = 0
    }

    /// The whole output as `Data`, taking over the buffer's memory (only without a sink).
    func takeData() -> Data {
        precondition(sink == nil)
        let data = Data(bytesNoCopy: base, count: count, deallocator: .free)
        base = malloc(16)!.assumingMemoryBound(to: UInt8.self)
        capacity = 16
        count = 0
        return data
    }

    /// Forgets the buffered bytes (only without a sink: for scratch buffers).
    func removeAll() { count = 0 }

    @inline(__always)
    func reserve(_ extra: Int) {
        if count + extra > capacity { grow(count + extra) }
    }

    private func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        base = realloc(base, newCapacity)!.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
    }

    /// Where `length` bytes reserved with `reserve` are written; `commit` counts them.
    @inline(__always)
    var end: UnsafeMutablePointer<UInt8> { base + count }

    @inline(__always)
    func commit(_ length: Int) { count += length }

    @inline(__always)
    func append(_ byte: UInt8) {
        if count == capacity { grow(count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always)
    func append(_ first: UInt8, _ second: UInt8) {
        reserve(2)
        base[count] = first
        base[count + 1] = second
        count += 2
    }

    @inline(__always)
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let start = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: start, byteCount: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends a string's UTF-8 bytes as they are.
    @inline(__always)
    func append(raw text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    @inline(__always)
    func append(repeating byte: UInt8, count length: Int) {
        guard length > 0 else { return }
        reserve(length)
        (base + count).initialize(repeating: byte, count: length)
        count += length
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
            base[count] = UInt8(truncatingIfNeeded: value) &+ 0x30
            count += 1
            return
        }
        var digits = 0
        var rest = value
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        rest = value
        var index = count + digits - 1
        while rest > 0 {
            let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: 10)
            base[index] = UInt8(truncatingIfNeeded: remainder) &+ 0x30
            rest = quotient
            index -= 1
        }
        count += digits
    }

    /// Appends the shortest text that reads back as exactly `value` (`1.0`, `0.1`, `1e-05`, `-0.0`).
    /// Only for finite values.
    @inline(__always)
    func append(double value: Double) {
        append(raw: value.description)
    }

    /// Appends `data` in base64 (standard alphabet, with padding, on one line).
    func append(base64 data: Data) {
        data.withUnsafeBytes { append(base64: $0) }
    }

    func append(base64 bytes: UnsafeRawBufferPointer) {
        let length = (bytes.count + 2) / 3 * 4
        reserve(length)
        Base64.encode(bytes, into: base + count)
        count += length
    }
}
