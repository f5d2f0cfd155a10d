import Foundation
@_spi(GraftInternal) import GraftCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The reader's cheap first pass: finds every `<object type="…" id="…">` start tag by scanning bytes,
/// without parsing the document.
///
/// References may point at objects that come later and at subentities of the declared destination, so
/// the reader needs every object's id and entity before it hands out snapshots. Scanning for `<` with
/// `memchr` costs a small part of a SAX parse. It is sound for UTF-8 (and ASCII) documents after the
/// root's start tag: there, a `<` outside comments, CDATA sections and processing instructions (which
/// the scanner skips) always starts a tag, because XML forbids a raw `<` in text and attribute values.
/// Documents in other encodings use a SAX pass instead (`IDPass`). The SAX pass that follows checks
/// everything else; if the two ever disagree about an id, the reader reports it.
enum ObjectTagScanner {
    /// Calls `body` with the `type` and `id` of every `<object>` start tag after byte `start`, and the
    /// tag's byte offset. A value holding character or entity references is passed decoded.
    static func scan(
        url: URL, path: String, from start: Int,
        _ body: (_ type: UnsafeRawBufferPointer, _ id: UnsafeRawBufferPointer, _ offset: Int) throws -> Void
    ) throws {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw GraftError(.io, "cannot be opened: \(String(cString: strerror(errno)))", context: [.file(path)])
        }
        defer { close(descriptor) }
        guard lseek(descriptor, off_t(start), SEEK_SET) == off_t(start) else {
            throw GraftError(.io, "cannot be read: \(String(cString: strerror(errno)))", context: [.file(path)])
        }
        var capacity = 1 << 20
        var storage = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { storage.deallocate() }
        let scratch = ByteBuffer(capacity: 256)
        let scratchID = ByteBuffer(capacity: 256)
        var carried = 0  // bytes kept at the start of `storage` from the last round
        var storageOffset = start  // file offset of storage[0]
        var position = 0  // where scanning resumes
        var mode = Mode.normal
        var atEnd = false
        while !atEnd {
            if carried > capacity / 2 {
                // A tag or comment longer than half the buffer: make room.
                let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
                larger.update(from: storage, count: carried)
                storage.deallocate()
                storage = larger
                capacity *= 2
            }
            var count = 0
            while carried + count < capacity {
                let got = read(descriptor, storage + carried + count, capacity - carried - count)
                if got < 0 {
                    if errno == EINTR { continue }
                    throw GraftError(.io, "cannot be read: \(String(cString: strerror(errno)))", context: [.file(path)])
                }
                if got == 0 {
                    atEnd = true
                    break
                }
                count += got
            }
            let end = carried + count
            var keepFrom = end
            scanning: while position < end {
                switch mode {
                case .normal:
                    guard let found = memchr(storage + position, Int32(UInt8(ascii: "<")), end - position) else {
                        position = end
                        break scanning
                    }
                    let tag = found.assumingMemoryBound(to: UInt8.self) - storage
                    if tag + 10 > end && !atEnd {
                        keepFrom = tag
                        break scanning
                    }
                    let next = tag + 1 < end ? storage[tag + 1] : 0
                    if next == UInt8(ascii: "o") && matches(storage, tag + 1, end, "object")
                        && tag + 7 < end && isTagBreak(storage[tag + 7])
                    {
                        guard let close = tagEnd(storage, from: tag + 7, end: end) else {
                            if atEnd {
                                position = end  // truncated: the SAX pass reports it
                                break scanning
                            }
                            keepFrom = tag
                            break scanning
                        }
                        var type = UnsafeRawBufferPointer(start: nil, count: 0)
                        var id = UnsafeRawBufferPointer(start: nil, count: 0)
                        attributes(storage, from: tag + 7, to: close) { name, value in
                            let bytes = name.bytePointer
                            if name.count == 4 && bytes[0] == UInt8(ascii: "t") && bytes[1] == UInt8(ascii: "y")
                                && bytes[2] == UInt8(ascii: "p") && bytes[3] == UInt8(ascii: "e")
                            {
                                type = value
                            } else if name.count == 2 && bytes[0] == UInt8(ascii: "i") && bytes[1] == UInt8(ascii: "d")
                            {
                                id = value
                            }
                        }
                        if needsDecoding(type) { type = decoded(type, into: scratch) }
                        if needsDecoding(id) { id = decoded(id, into: scratchID) }
                        try body(type, id, storageOffset + tag)
                        position = close + 1
                    } else if next == UInt8(ascii: "!") && matches(storage, tag + 1, end, "!--") {
                        mode = .comment
                        position = tag + 4
                    } else if next == UInt8(ascii: "!") && matches(storage, tag + 1, end, "![CDATA[") {
                        mode = .cdata
                        position = tag + 9
                    } else if next == UInt8(ascii: "?") {
                        mode = .instruction
                        position = tag + 2
                    } else {
                        position = tag + 1
                    }
                case .comment, .cdata, .instruction:
                    guard let found = memchr(storage + position, Int32(UInt8(ascii: ">")), end - position) else {
                        // Keep two bytes so a terminator split across reads is still seen.
                        keepFrom = max(end - 2, 0)
                        position = end
                        break scanning
                    }
                    let close = found.assumingMemoryBound(to: UInt8.self) - storage
                    position = close + 1
                    guard close >= 2 else { continue }
                    let first = storage[close - 2]
                    let second = storage[close - 1]
                    switch mode {
                    case .comment where first == UInt8(ascii: "-") && second == UInt8(ascii: "-"): mode = .normal
                    case .cdata where first == UInt8(ascii: "]") && second == UInt8(ascii: "]"): mode = .normal
                    case .instruction where second == UInt8(ascii: "?"): mode = .normal
                    default: break
                    }
                }
            }
            // Keep what is unfinished for the next round.
            keepFrom = min(keepFrom, end)
            let resume = max(position, keepFrom)
            carried = end - keepFrom
            if carried > 0 && keepFrom > 0 { storage.update(from: storage + keepFrom, count: carried) }
            storageOffset += keepFrom
            position = resume - keepFrom
        }
    }

    private enum Mode { case normal, comment, cdata, instruction }

    @inline(__always)
    private static func isTagBreak(_ byte: UInt8) -> Bool {
        ByteText.isSpace(byte) || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/")
    }

    @inline(__always)
    private static func matches(
        _ storage: UnsafeMutablePointer<UInt8>, _ at: Int, _ end: Int, _ literal: StaticString
    )
        -> Bool
    {
        let length = literal.utf8CodeUnitCount
        return at + length <= end && memcmp(storage + at, literal.utf8Start, length) == 0
    }

    /// The position of the `>` ending a tag, skipping quoted attribute values.
    private static func tagEnd(_ storage: UnsafeMutablePointer<UInt8>, from start: Int, end: Int) -> Int? {
        var quote: UInt8 = 0
        var index = start
        while index < end {
            let byte = storage[index]
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                return index
            }
            index += 1
        }
        return nil
    }

    /// Calls `body` with each `name="value"` in a tag's bytes.
    @inline(__always)
    private static func attributes(
        _ storage: UnsafeMutablePointer<UInt8>, from start: Int, to end: Int,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void
    ) {
        var index = start
        while index < end {
            while index < end && ByteText.isSpace(storage[index]) { index += 1 }
            guard index < end, storage[index] != UInt8(ascii: "/") else { return }
            let nameStart = index
            while index < end && !ByteText.isSpace(storage[index]) && storage[index] != UInt8(ascii: "=") { index += 1 }
            let nameEnd = index
            while index < end && ByteText.isSpace(storage[index]) { index += 1 }
            guard index < end, storage[index] == UInt8(ascii: "=") else { return }
            index += 1
            while index < end && ByteText.isSpace(storage[index]) { index += 1 }
            guard index < end, storage[index] == UInt8(ascii: "\"") || storage[index] == UInt8(ascii: "'") else {
                return
            }
            let quote = storage[index]
            index += 1
            let valueStart = index
            while index < end && storage[index] != quote { index += 1 }
            body(
                UnsafeRawBufferPointer(start: storage + nameStart, count: nameEnd - nameStart),
                UnsafeRawBufferPointer(start: storage + valueStart, count: index - valueStart))
            index += 1
        }
    }

    /// Whether an attribute value holds a reference or white space a parser would change.
    @inline(__always)
    private static func needsDecoding(_ value: UnsafeRawBufferPointer) -> Bool {
        let bytes = value.bytePointer
        for index in 0..<value.count where bytes[index] == UInt8(ascii: "&") || bytes[index] < 0x20 { return true }
        return false
    }

    /// An attribute value as a parser delivers it: references decoded, white space as spaces.
    private static func decoded(_ value: UnsafeRawBufferPointer, into scratch: ByteBuffer) -> UnsafeRawBufferPointer {
        let bytes = value.bytePointer
        scratch.removeAll()
        var index = 0
        while index < value.count {
            let byte = bytes[index]
            if byte == 0x0D && index + 1 < value.count && bytes[index + 1] == 0x0A {
                index += 1
                continue  // CR LF is one line end, one space
            }
            if byte == 0x09 || byte == 0x0A || byte == 0x0D {
                scratch.append(0x20)
                index += 1
                continue
            }
            guard byte == UInt8(ascii: "&"),
                let semicolon = (index + 1..<value.count).first(where: { bytes[$0] == UInt8(ascii: ";") })
            else {
                scratch.append(byte)
                index += 1
                continue
            }
            let name = Bytes.string(bytes + index + 1, semicolon - index - 1)
            var scalar: Unicode.Scalar?
            switch name {
            case "amp": scalar = "&"
            case "lt": scalar = "<"
            case "gt": scalar = ">"
            case "quot": scalar = "\""
            case "apos": scalar = "'"
            default:
                if name.hasPrefix("#x") || name.hasPrefix("#X") {
                    scalar = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                } else if name.hasPrefix("#") {
                    scalar = UInt32(name.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init)
                }
            }
            if let scalar {
                scratch.append(string: String(Character(scalar)))
            } else {
                scratch.append(bytes + index, count: semicolon - index + 1)
            }
            index = semicolon + 1
        }
        return scratch.bytes
    }

    /// The line of a byte offset in the file, counted when an error needs it.
    static func line(ofOffset offset: Int, in url: URL) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return nil }
        defer { try? handle.close() }
        var line = 1
        var remaining = offset
        while remaining > 0 {
            guard let data = try? handle.read(upToCount: min(remaining, 1 << 20)), !data.isEmpty else { break }
            line += data.withUnsafeBytes { bytes in bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } }
            remaining -= data.count
        }
        return line
    }
}
