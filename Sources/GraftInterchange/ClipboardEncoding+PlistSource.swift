import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// The XML property-list encoding's tokens for ``ClipboardWalker``, read with GraftCore's `XMLScanner`:
/// the next value is the element whose start tag was read last.
struct ClipboardPlistSource: ClipboardTokenSource {
    typealias Container = Bool
    typealias Mark = XMLScanner

    private var scanner: XMLScanner

    init(_ bytes: UnsafeRawBufferPointer) {
        scanner = XMLScanner(bytes, documentName: ClipboardEncoding.plist.documentName)
    }

    static var encoding: ClipboardEncoding { .plist }
    static var memberWord: String { "key" }

    static func form(_ kind: ClipboardTokenKind) -> String {
        switch kind {
        case .dictionary: return "<dict>"
        case .array: return "<array>"
        case .string: return "<string>"
        case .integer: return "<integer>"
        case .real, .number: return "<real>"
        case .bool: return "<true/> or <false/>"
        case .data: return "<data>"
        case .date: return "<date>"
        case .other: return "a value"
        }
    }

    static func expected(_ type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64: return "<integer>"
        case .double, .float: return "<real>"
        case .date: return "<real> (seconds since 2001-01-01)"
        case .boolean: return "<true/> or <false/>"
        case .binary, .transformable: return "<data>"
        case .string: return "<string> (or <data> holding UTF-8)"
        default: return "<string>"
        }
    }

    func error(_ message: String, at offset: Int?, context: [GraftError.Location]) -> GraftError {
        scanner.error(message, at: offset, context: context)
    }

    func locationContext(_ offset: Int) -> [GraftError.Location] {
        [.line(ByteText.line(of: offset, in: scanner.bytes)), .offset(offset)]
    }

    var offset: Int { scanner.tokenStart }
    var mark: XMLScanner { scanner }
    var consumed: Int { scanner.position }

    mutating func seek(_ mark: XMLScanner) { scanner = mark }

    mutating func kind() -> ClipboardTokenKind {
        let name = scanner.name
        guard let first = name.first else { return .other }
        switch first {
        case UInt8(ascii: "d"):
            return ByteText.equals(name, "dict")
                ? .dictionary : ByteText.equals(name, "data") ? .data : ByteText.equals(name, "date") ? .date : .other
        case UInt8(ascii: "a"): return ByteText.equals(name, "array") ? .array : .other
        case UInt8(ascii: "s"): return ByteText.equals(name, "string") ? .string : .other
        case UInt8(ascii: "i"): return ByteText.equals(name, "integer") ? .integer : .other
        case UInt8(ascii: "r"): return ByteText.equals(name, "real") ? .real : .other
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return ByteText.equals(name, "true") || ByteText.equals(name, "false") ? .bool : .other
        default: return .other
        }
    }

    func describeNext() -> String { "<\(scanner.nameText)>" }

    mutating func beginDocument() throws -> Bool {
        try scanner.readRoot()
        guard scanner.isNamed("plist") else {
            throw scanner.error("the root element is <\(scanner.nameText)>, not <plist>")
        }
        guard !scanner.isEmptyElement, try scanner.nextChild(of: "plist") else {
            throw scanner.error("the property list is empty")
        }
        guard let open = try beginDictionary() else {
            throw scanner.error("expected the document (a <dict>), found <\(scanner.nameText)>")
        }
        return open
    }

    mutating func endDocument() throws {
        guard try !scanner.nextChild(of: "plist") else { throw scanner.error("<plist> holds more than one value") }
        try scanner.readEnd()
    }

    @inline(__always)
    mutating func beginDictionary() throws -> Bool? {
        scanner.isNamed("dict") ? !scanner.isEmptyElement : nil
    }

    @inline(__always)
    mutating func nextKey(_ open: inout Bool, in what: @autoclosure () -> String) throws -> UnsafeRawBufferPointer? {
        guard open else { return nil }
        guard try scanner.nextChild(of: "dict") else {
            open = false
            return nil
        }
        guard scanner.isNamed("key") else {
            throw scanner.error("expected <key> in \(what()), found <\(scanner.nameText)>")
        }
        let key = try scanner.text(of: "key")
        guard try scanner.nextChild(of: "dict") else {
            throw scanner.error("the key '\(ByteText.excerpt(key))' in \(what()) has no value")
        }
        return key
    }

    @inline(__always)
    mutating func beginArray() throws -> Bool? {
        scanner.isNamed("array") ? !scanner.isEmptyElement : nil
    }

    @inline(__always)
    mutating func nextElement(_ open: inout Bool, in what: @autoclosure () -> String) throws -> Bool {
        guard open else { return false }
        guard try scanner.nextChild(of: "array") else {
            open = false
            return false
        }
        return true
    }

    func count(of container: Bool) -> Int? { nil }

    mutating func skipValue() throws { try scanner.skipElement() }

    @inline(__always)
    mutating func string() throws -> UnsafeRawBufferPointer { try scanner.text(of: "string") }

    mutating func number() throws -> ClipboardNumber {
        let isInteger = scanner.isNamed("integer")
        let text = try isInteger ? scanner.text(of: "integer") : scanner.text(of: "real")
        return .text(ByteText.trimmed(text), isInteger: isInteger)
    }

    mutating func bool() throws -> Bool {
        let value = scanner.isNamed("true")
        let start = scanner.tokenStart
        guard ByteText.trimmed(try scanner.text(of: value ? "true" : "false")).isEmpty else {
            throw scanner.error("<\(value ? "true" : "false")> holds text", at: start)
        }
        return value
    }

    mutating func data() throws -> Data {
        let start = scanner.tokenStart
        guard let data = Base64.decode(try scanner.text(of: "data")) else {
            throw scanner.error("the data is not valid base64", at: start)
        }
        return data
    }

    mutating func date() throws -> Double {
        let start = scanner.tokenStart
        let text = ByteText.trimmed(try scanner.text(of: "date"))
        guard let seconds = ClipboardISODate.seconds(text) else {
            throw scanner.error(
                "'\(ByteText.excerpt(text))' is not a date of the form 2001-01-01T00:00:00Z", at: start)
        }
        return seconds
    }
}

/// Property-list dates (`2001-01-01T00:00:00Z`, a fraction of a second allowed), which the plist
/// encoding reads for date attributes although it writes reals.
enum ClipboardISODate {
    /// Seconds since 2001-01-01T00:00:00Z.
    static func seconds(_ text: UnsafeRawBufferPointer) -> Double? {
        let bytes = Array(text)
        var position = 0
        func number(_ digits: Int) -> Int? {
            guard position + digits <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<digits {
                let digit = bytes[position] &- 0x30
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
                position += 1
            }
            return value
        }
        func expect(_ character: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == character else { return false }
            position += 1
            return true
        }
        var sign = 1
        if expect(UInt8(ascii: "-")) { sign = -1 }
        guard let year = number(4), expect(UInt8(ascii: "-")), let month = number(2), expect(UInt8(ascii: "-")),
            let day = number(2), expect(UInt8(ascii: "T")), let hour = number(2), expect(UInt8(ascii: ":")),
            let minute = number(2), expect(UInt8(ascii: ":")), let second = number(2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var fraction = 0.0
        if expect(UInt8(ascii: ".")) {
            let start = position
            while position < bytes.count, bytes[position] &- 0x30 < 10 { position += 1 }
            guard position > start, let value = Double("0." + String(decoding: bytes[start..<position], as: UTF8.self))
            else {
                return nil
            }
            fraction = value
        }
        guard expect(UInt8(ascii: "Z")), position == bytes.count else { return nil }
        // Days since 1970-01-01 in the proleptic Gregorian calendar.
        let y = sign * year - (month <= 2 ? 1 : 0)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let unix = Double(days * 86_400 + hour * 3_600 + minute * 60 + second) + fraction
        return unix - 978_307_200
    }
}
