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
        // Property-list dates are read for date attributes, although the plist encoding writes reals.
        guard let seconds = PropertyListText.unixSeconds(text).map({ $0 - 978_307_200 }) else {
            throw scanner.error(
                "'\(ByteText.excerpt(text))' is not a date of the form 2001-01-01T00:00:00Z", at: start)
        }
        return seconds
    }
}
