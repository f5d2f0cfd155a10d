import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// A byte-level JSON tokenizer over a document in memory (RFC 8259, UTF-8), and the JSON encoding's
/// token source for ``ClipboardWalker``.
///
/// It is a value: copying it saves a position that a reader can come back to, which is how readers
/// handle members in an order that needs something later (objects before the model). Strings without
/// escapes are returned as slices of the document; strings with escapes are decoded into a scratch
/// buffer that the next string overwrites.
struct ClipboardJSONScanner {
    /// The deepest nesting a skipped value may have.
    static let maximumDepth = 512
    /// The fewest bytes of an array worth reading on a thread of their own.
    static let minimumRunBytes = 1 << 20

    let bytes: UnsafeRawBufferPointer
    private let base: UnsafePointer<UInt8>
    private let count: Int
    var position: Int
    private var scratch: ByteBuffer

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
        count = bytes.count
        position = 0
        scratch = ByteBuffer(capacity: 256)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    // MARK: Errors

    /// A `malformedInput` error at `offset` (the current position by default), with the line.
    func error(_ message: String, at offset: Int? = nil, context: [GraftError.Location] = []) -> GraftError {
        let offset = offset ?? position
        return GraftError(
            .malformedInput, "JSON clipboard: " + message,
            context: [.line(ByteText.line(of: offset, in: bytes)), .offset(offset)] + context)
    }

    /// What the next token is, for messages: "a string", "a number", "the end of the document", ….
    mutating func describeNext() -> String {
        skipSpace()
        guard position < count else { return "the end of the document (is it truncated?)" }
        switch base[position] {
        case UInt8(ascii: "\""): return "a string"
        case UInt8(ascii: "{"): return "an object"
        case UInt8(ascii: "["): return "an array"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return "a Boolean"
        case UInt8(ascii: "n"): return "null"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return "a number"
        default:
            let byte = base[position]
            return byte >= 0x21 && byte < 0x7F ? "'\(Unicode.Scalar(byte))'" : "the byte 0x\(String(byte, radix: 16))"
        }
    }

    // MARK: Structure

    @inline(__always)
    mutating func skipSpace() {
        while position < count {
            let byte = base[position]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            position += 1
        }
    }

    /// The next byte after white space, without consuming it; 0 at the end.
    @inline(__always)
    mutating func peek() -> UInt8 {
        skipSpace()
        return position < count ? base[position] : 0
    }

    var isAtEnd: Bool { position >= count }

    /// Consumes `{`.
    @inline(__always)
    mutating func beginObject(_ what: @autoclosure () -> String) throws {
        guard peek() == UInt8(ascii: "{") else {
            throw error("expected \(what()) (an object), found \(describeNext())")
        }
        position += 1
    }

    /// Consumes `[`.
    @inline(__always)
    mutating func beginArray(_ what: @autoclosure () -> String) throws {
        guard peek() == UInt8(ascii: "[") else {
            throw error("expected \(what()) (an array), found \(describeNext())")
        }
        position += 1
    }

    /// The next member's name, with the `:` after it consumed; `nil` after the closing `}`.
    ///
    /// - Parameter first: true before the first member; set to false.
    @inline(__always)
    mutating func nextMember(_ first: inout Bool, in what: @autoclosure () -> String) throws -> UnsafeRawBufferPointer?
    {
        var byte = peek()
        if byte == UInt8(ascii: "}") {
            position += 1
            return nil
        }
        if first {
            first = false
        } else {
            guard byte == UInt8(ascii: ",") else {
                throw error("expected ',' or '}' after a member of \(what()), found \(describeNext())")
            }
            position += 1
            byte = peek()
        }
        guard byte == UInt8(ascii: "\"") else {
            throw error("expected a member name in \(what()), found \(describeNext())")
        }
        let name = try string()
        guard peek() == UInt8(ascii: ":") else {
            throw error("expected ':' after a member name in \(what()), found \(describeNext())")
        }
        position += 1
        return name
    }

    /// Whether another element follows in an array (its `,` consumed); false after the closing `]`.
    @inline(__always)
    mutating func nextElement(_ first: inout Bool, in what: @autoclosure () -> String) throws -> Bool {
        let byte = peek()
        if byte == UInt8(ascii: "]") {
            position += 1
            return false
        }
        if first {
            first = false
            return true
        }
        guard byte == UInt8(ascii: ",") else {
            throw error("expected ',' or ']' after an element of \(what()), found \(describeNext())")
        }
        position += 1
        return true
    }

    // MARK: Scalars

    /// A string's contents (escapes decoded), valid until the next call. The scanner must be at `"`.
    mutating func string() throws -> UnsafeRawBufferPointer {
        let quote = position
        position += 1
        let start = position
        // Eight bytes at a time up to the first that ends the string, starts an escape or is a control
        // character; the byte loop below then settles it (or reads the document's last few bytes).
        while position + 8 <= count {
            let skip = ClipboardJSONText.firstStop(ClipboardJSONText.word(at: base + position))
            position += skip
            guard skip == 8 else { break }
        }
        while position < count {
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return UnsafeRawBufferPointer(start: base + start, count: position - 1 - start)
            }
            if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
            if byte < 0x20 {
                throw error("a string holds the control character 0x\(String(byte, radix: 16)), which must be escaped")
            }
            position += 1
        }
        throw error("a string that starts here is not closed (the document is truncated?)", at: quote)
    }

    private mutating func escapedString(from start: Int) throws -> UnsafeRawBufferPointer {
        scratch.removeAll()
        scratch.append(UnsafeRawBufferPointer(start: base + start, count: position - start))
        while position < count {
            let byte = base[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return scratch.bytes
            case UInt8(ascii: "\\"):
                guard position + 1 < count else { break }
                let escape = base[position + 1]
                position += 2
                switch escape {
                case UInt8(ascii: "\""): scratch.append(0x22)
                case UInt8(ascii: "\\"): scratch.append(0x5C)
                case UInt8(ascii: "/"): scratch.append(0x2F)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        guard position + 1 < count, base[position] == UInt8(ascii: "\\"),
                            base[position + 1] == UInt8(ascii: "u")
                        else { throw error("a \\u escape holds half of a surrogate pair without the other half") }
                        position += 2
                        let low = try hex4()
                        guard low >= 0xDC00 && low < 0xE000 else {
                            throw error("a \\u escape holds half of a surrogate pair without the other half")
                        }
                        scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw error("a \\u escape holds half of a surrogate pair without the other half")
                    }
                    for unit in UTF8.encode(Unicode.Scalar(scalar)!)! { scratch.append(unit) }
                default:
                    throw error("'\\\(Unicode.Scalar(escape))' is not a JSON escape", at: position - 2)
                }
                continue
            default:
                if byte < 0x20 {
                    throw error(
                        "a string holds the control character 0x\(String(byte, radix: 16)), which must be escaped")
                }
                scratch.append(byte)
                position += 1
                continue
            }
            break
        }
        throw error("a string is not closed (the document is truncated?)")
    }

    private mutating func hex4() throws -> UInt32 {
        guard position + 4 <= count else { throw error("a \\u escape is cut short") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = base[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a \\u escape needs four hexadecimal digits")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// A string member's value as a Swift string.
    mutating func stringValue(_ what: @autoclosure () -> String) throws -> String {
        guard peek() == UInt8(ascii: "\"") else {
            throw error("expected \(what()) (a string), found \(describeNext())")
        }
        let start = position
        let raw = try string()
        guard let text = ByteText.string(raw) else { throw error("a string is not valid UTF-8", at: start) }
        return text
    }

    /// A number's text, checked against JSON's grammar, and whether it is an integer (no fraction, no
    /// exponent). The scanner must be at `-` or a digit.
    mutating func numberText() throws -> (text: UnsafeRawBufferPointer, isInteger: Bool) {
        let start = position
        if position < count && base[position] == UInt8(ascii: "-") { position += 1 }
        guard position < count, base[position] &- 0x30 < 10 else { throw error("a number has no digits", at: start) }
        if base[position] == UInt8(ascii: "0") {
            position += 1
            if position < count, base[position] &- 0x30 < 10 {
                throw error("a number has a leading zero, which JSON does not allow", at: start)
            }
        } else {
            while position < count, base[position] &- 0x30 < 10 { position += 1 }
        }
        var isInteger = true
        if position < count, base[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < count, base[position] &- 0x30 < 10 else {
                throw error("a number has no digits after its decimal point", at: start)
            }
            while position < count, base[position] &- 0x30 < 10 { position += 1 }
        }
        if position < count, base[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < count, base[position] == UInt8(ascii: "+") || base[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < count, base[position] &- 0x30 < 10 else {
                throw error("a number has no digits in its exponent", at: start)
            }
            while position < count, base[position] &- 0x30 < 10 { position += 1 }
        }
        return (UnsafeRawBufferPointer(start: base + start, count: position - start), isInteger)
    }

    /// `true` or `false`; the scanner must be at `t` or `f`.
    mutating func boolLiteral() -> Bool? {
        if literal("true") { return true }
        if literal("false") { return false }
        return nil
    }

    @inline(__always)
    mutating func literal(_ word: StaticString) -> Bool {
        let length = word.utf8CodeUnitCount
        guard position + length <= count, memcmp(base + position, word.utf8Start, length) == 0 else { return false }
        position += length
        return true
    }

    // MARK: Skipping

    /// Skips one value of any kind, checking its syntax; nesting deeper than `maximumDepth` is refused.
    mutating func skipValue(depth: Int) throws {
        switch peek() {
        case UInt8(ascii: "\""):
            _ = try string()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try numberText()
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            guard literal("true") || literal("false") || literal("null") else {
                throw error("expected a value, found \(describeNext())")
            }
        case UInt8(ascii: "["):
            guard depth < Self.maximumDepth else {
                throw error("arrays and objects are nested more than \(Self.maximumDepth) deep")
            }
            position += 1
            var first = true
            while try nextElement(&first, in: "an array") { try skipValue(depth: depth + 1) }
        case UInt8(ascii: "{"):
            guard depth < Self.maximumDepth else {
                throw error("arrays and objects are nested more than \(Self.maximumDepth) deep")
            }
            position += 1
            var first = true
            while try nextMember(&first, in: "an object") != nil { try skipValue(depth: depth + 1) }
        default:
            throw error("expected a value, found \(describeNext())")
        }
    }
}

extension ClipboardJSONScanner: ClipboardTokenSource {
    typealias Container = Bool
    typealias Mark = Int

    static var encoding: ClipboardEncoding { .json }
    static var memberWord: String { "member" }

    static func form(_ kind: ClipboardTokenKind) -> String {
        switch kind {
        case .dictionary: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .integer: return "an integer"
        case .real, .number, .date: return "a number"
        case .bool: return "true or false"
        case .data: return "a base64 string"
        case .other: return "a value"
        }
    }

    static func expected(_ type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64: return "an integer"
        case .double, .float: return "a number (or NaN, Infinity, -Infinity as strings)"
        case .date: return "a number of seconds since 2001-01-01"
        case .boolean: return "true or false"
        case .decimal: return "a string of decimal digits"
        case .binary, .transformable: return "a base64 string"
        case .uuid: return "a UUID string"
        case .uri: return "a URI string"
        default: return "a string"
        }
    }

    var offset: Int {
        mutating get {
            skipSpace()
            return position
        }
    }

    var mark: Int { position }
    var consumed: Int { position }

    mutating func seek(_ mark: Int) { position = mark }

    func locationContext(_ offset: Int) -> [GraftError.Location] {
        [.line(ByteText.line(of: offset, in: bytes)), .offset(offset)]
    }

    @inline(__always)
    mutating func kind() -> ClipboardTokenKind {
        switch peek() {
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "{"): return .dictionary
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: return .other
        }
    }

    mutating func beginDocument() throws -> Bool {
        try beginObject("the document")
        return true
    }

    mutating func endDocument() throws {
        skipSpace()
        guard isAtEnd else { throw error("there is more after the end of the document") }
    }

    @inline(__always)
    mutating func beginDictionary() throws -> Bool? {
        guard peek() == UInt8(ascii: "{") else { return nil }
        position += 1
        return true
    }

    @inline(__always)
    mutating func nextKey(_ first: inout Bool, in what: @autoclosure () -> String) throws -> UnsafeRawBufferPointer? {
        try nextMember(&first, in: what())
    }

    @inline(__always)
    mutating func beginArray() throws -> Bool? {
        guard peek() == UInt8(ascii: "[") else { return nil }
        position += 1
        return true
    }

    func count(of container: Bool) -> Int? { nil }

    /// JSON does not say where an array's elements are, but a line end is never inside a string (RFC 8259
    /// §7: a string's control characters are escaped), so an element that starts a line after a comma is
    /// most likely one of the array's own, as in every document that puts each element on a line of its
    /// own (Graft's, and Python's `json.dumps(indent=…)`). A place is looked for at each even share of
    /// the bytes left, in as many shares up to `runs` as hold ``minimumRunBytes`` each; the walker keeps
    /// only the places a run before meets exactly.
    mutating func divisions(of container: Bool, runs wanted: Int) -> [ClipboardDivision<Self>] {
        skipSpace()
        let start = position
        let runs = min(wanted, (count - start) / Self.minimumRunBytes)
        guard runs > 1 else { return [] }
        let share = (count - start) / runs
        var divisions: [ClipboardDivision<Self>] = []
        var from = start
        for run in 1..<runs {
            // The first line end at or after the share's start, whose line starts an object after a comma;
            // none within the share, no place for this run.
            var at = max(from, start + share * run)
            let end = min(count, at + share)
            var place: Int?
            while at < end, let found = memchr(base + at, 0x0A, end - at) {
                let newline = UnsafeRawPointer(found) - UnsafeRawPointer(base)
                var before = newline - 1
                while before > start && ByteText.isSpace(base[before]) { before -= 1 }
                var after = newline + 1
                while after < count && ByteText.isSpace(base[after]) { after += 1 }
                if base[before] == UInt8(ascii: ","), after < count, base[after] == UInt8(ascii: "{") {
                    place = after
                    break
                }
                at = newline + 1
            }
            guard let place else { continue }
            var copy = self
            copy.scratch = ByteBuffer(capacity: 256)
            copy.position = place
            divisions.append(ClipboardDivision(source: copy, container: false, place: place))
            from = place + 1
        }
        return divisions
    }

    mutating func skipValue() throws { try skipValue(depth: 0) }

    @inline(__always)
    mutating func number() throws -> ClipboardNumber {
        let (text, isInteger) = try numberText()
        return .text(text, isInteger: isInteger)
    }

    mutating func bool() throws -> Bool {
        guard let value = boolLiteral() else {
            throw error("expected true or false, found \(describeNext())")
        }
        return value
    }

    mutating func data() throws -> Data { throw error("expected data, which JSON does not have") }
    mutating func date() throws -> Double { throw error("expected a date, which JSON does not have") }
}
