import Foundation

/// Base64 with the standard alphabet and padding, for the formats that carry binary data as text (the
/// XML store, clipboard documents).
///
/// Foundation's `Data(base64Encoded:)` and `base64EncodedString()` are several times slower on Linux and
/// cannot write into a caller's buffer.
///
/// For example:
///
/// ```swift
/// Base64.encode(Data([0x89, 0x50]))          // "iVA="
/// Base64.decode("iVA")                       // 2 bytes: padding may be left out
/// ```
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 0–63 for alphabet bytes, 0xFE for white space, 0xFF for anything else.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        for space in [0x20, 0x09, 0x0A, 0x0D] { table[space] = 0xFE }
        return table
    }()

    /// The length of the encoding of `count` bytes.
    package static func encodedLength(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Writes `encodedLength(bytes.count)` bytes at `output`.
    package static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>) {
        alphabet.withUnsafeBufferPointer { alphabet in
            var input = 0
            var out = 0
            let count = bytes.count
            while input + 3 <= count {
                let chunk = UInt32(bytes[input]) << 16 | UInt32(bytes[input + 1]) << 8 | UInt32(bytes[input + 2])
                output[out] = alphabet[Int(chunk >> 18)]
                output[out + 1] = alphabet[Int(chunk >> 12 & 0x3F)]
                output[out + 2] = alphabet[Int(chunk >> 6 & 0x3F)]
                output[out + 3] = alphabet[Int(chunk & 0x3F)]
                input += 3
                out += 4
            }
            let rest = count - input
            if rest > 0 {
                let chunk = UInt32(bytes[input]) << 16 | (rest == 2 ? UInt32(bytes[input + 1]) << 8 : 0)
                output[out] = alphabet[Int(chunk >> 18)]
                output[out + 1] = alphabet[Int(chunk >> 12 & 0x3F)]
                output[out + 2] = rest == 2 ? alphabet[Int(chunk >> 6 & 0x3F)] : UInt8(ascii: "=")
                output[out + 3] = UInt8(ascii: "=")
            }
        }
    }

    package static func encode(_ data: Data) -> String {
        let length = (data.count + 2) / 3 * 4
        return String(unsafeUninitializedCapacity: length) { buffer in
            data.withUnsafeBytes { encode($0, into: buffer.baseAddress!) }
            return length
        }
    }

    package static func decode(_ text: String) -> Data? {
        var text = text
        return text.withUTF8 { decode(UnsafeRawBufferPointer($0)) }
    }

    /// Decodes base64, ignoring white space; padding may be left out. `nil` for any other byte, for
    /// padding in the middle, or for a length no encoder produces.
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> Data? {
        values.withUnsafeBufferPointer { values -> Data? in
            var output = Data(count: bytes.count / 4 * 3 + 3)
            let written = output.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) -> Int? in
                var accumulator: UInt32 = 0
                var pending = 0
                var written = 0
                var padding = 0
                for byte in bytes {
                    let value = values[Int(byte)]
                    if value < 64 {
                        guard padding == 0 else { return nil }
                        accumulator = accumulator << 6 | UInt32(value)
                        pending += 1
                        if pending == 4 {
                            out[written] = UInt8(truncatingIfNeeded: accumulator >> 16)
                            out[written + 1] = UInt8(truncatingIfNeeded: accumulator >> 8)
                            out[written + 2] = UInt8(truncatingIfNeeded: accumulator)
                            written += 3
                            pending = 0
                            accumulator = 0
                        }
                    } else if value == 0xFE {
                        continue
                    } else if byte == UInt8(ascii: "=") {
                        padding += 1
                        guard padding <= 2 else { return nil }
                    } else {
                        return nil
                    }
                }
                switch pending {
                case 0:
                    guard padding == 0 else { return nil }
                case 2:
                    guard padding == 0 || padding == 2 else { return nil }
                    out[written] = UInt8(truncatingIfNeeded: accumulator >> 4)
                    written += 1
                case 3:
                    guard padding == 0 || padding == 1 else { return nil }
                    out[written] = UInt8(truncatingIfNeeded: accumulator >> 10)
                    out[written + 1] = UInt8(truncatingIfNeeded: accumulator >> 2)
                    written += 2
                default:
                    return nil
                }
                return written
            }
            guard let written else { return nil }
            output.count = written
            return output
        }
    }
}
