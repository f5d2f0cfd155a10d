import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// Escaping text for the two XML encodings.
enum ClipboardXMLEscaping {
    /// Appends element content: `&`, `<` and `>` as references, carriage returns as `&#13;` (a parser would
    /// turn a literal one into a line feed). The text must be one XML can carry.
    static func appendText(_ bytes: UnsafeRawBufferPointer, to output: ByteBuffer) {
        append(bytes, to: output, attribute: false)
    }

    /// Appends a string as element content (see ``appendText(_:to:)``).
    static func appendText(_ text: String, to output: ByteBuffer) {
        var text = text
        text.withUTF8 { appendText(UnsafeRawBufferPointer($0), to: output) }
    }

    /// Appends an attribute value: `&`, `<`, `>` and `"` as references, and tab, line feed and carriage
    /// return as character references (attribute-value normalisation would turn them into spaces).
    static func appendAttribute(_ bytes: UnsafeRawBufferPointer, to output: ByteBuffer) {
        append(bytes, to: output, attribute: true)
    }

    @inline(__always)
    private static func append(_ bytes: UnsafeRawBufferPointer, to output: ByteBuffer, attribute: Bool) {
        output.reserve(bytes.count)
        var runStart = 0
        let count = bytes.count
        for index in 0..<count {
            let replacement: StaticString
            switch bytes[index] {
            case UInt8(ascii: "&"): replacement = "&amp;"
            case UInt8(ascii: "<"): replacement = "&lt;"
            case UInt8(ascii: ">"): replacement = "&gt;"
            case 0x0D: replacement = "&#13;"
            case UInt8(ascii: "\"") where attribute: replacement = "&quot;"
            case 0x09 where attribute: replacement = "&#9;"
            case 0x0A where attribute: replacement = "&#10;"
            default: continue
            }
            if index > runStart { output.append(UnsafeRawBufferPointer(rebasing: bytes[runStart..<index])) }
            output.append(replacement)
            runStart = index + 1
        }
        if count > runStart { output.append(UnsafeRawBufferPointer(rebasing: bytes[runStart..<count])) }
    }

    /// Escapes text XML can carry with `escape`, or throws naming it.
    static func carried(_ text: String, _ escape: (UnsafeRawBufferPointer) -> Void) throws {
        var copy = text
        try copy.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            guard ByteText.xmlCanCarry(bytes) else {
                throw GraftError(
                    .malformedInput, "\(ByteText.excerpt(text.debugDescription)) holds a character XML cannot carry")
            }
            escape(bytes)
        }
    }
}

/// XML property-list tokens in Apple's layout (tabs, one element a line), with the values typed as
/// `Formats/clipboard.md` says: dates as reals, decimals as strings, and strings XML cannot carry as data
/// holding their UTF-8 bytes.
struct ClipboardPlistSink: ClipboardTextSink, ClipboardValueWriting {
    var schema: ClipboardSchema
    var output: ByteBuffer
    /// How deep the next element is.
    private var depth = 0
    /// A container begun but not written yet: `<dict/>` or `<array/>` if it ends with nothing in it.
    private var pending: ClipboardPart?

    init(schema: ClipboardSchema, output: ByteBuffer) {
        self.schema = schema
        self.output = output
    }

    /// Writes the start of a pending container, which now has something in it.
    @inline(__always)
    private mutating func openPending() {
        guard let part = pending else { return }
        pending = nil
        output.append(repeating: 0x09, count: depth - 1)
        output.append(part.isDictionary ? "<dict>\n" : "<array>\n")
    }

    /// Starts a line at the current depth.
    @inline(__always)
    private mutating func line() {
        openPending()
        output.append(repeating: 0x09, count: depth)
    }

    mutating func begin(_ part: ClipboardPart) {
        if part == .document {
            output.append(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>\n
                """)
        } else {
            // The container's line is written when it is known to be empty or not.
            openPending()
            pending = part
        }
        depth += 1
    }

    mutating func end(_ part: ClipboardPart) {
        depth -= 1
        if part == .document {
            output.append("</dict>\n</plist>\n")
        } else if pending != nil {
            pending = nil
            output.append(repeating: 0x09, count: depth)
            output.append(part.isDictionary ? "<dict/>\n" : "<array/>\n")
        } else {
            output.append(repeating: 0x09, count: depth)
            output.append(part.isDictionary ? "</dict>\n" : "</array>\n")
        }
    }

    @inline(__always)
    private mutating func element(_ open: StaticString, _ text: String, _ close: StaticString) throws {
        line()
        output.append(open)
        try ClipboardXMLEscaping.carried(text) { ClipboardXMLEscaping.appendText($0, to: output) }
        output.append(close)
    }

    mutating func key(_ member: ClipboardMember) throws { try element("<key>", member.rawValue, "</key>\n") }
    mutating func declarationKey(_ name: String) throws { try element("<key>", name, "</key>\n") }

    mutating func attributeKey(_ name: String, entity: Int, attribute: Int) throws {
        try element("<key>", name, "</key>\n")
    }

    mutating func relationshipKey(entity: Int, relationship: Int) throws {
        try element("<key>", schema.entities[entity].relationshipNames[relationship], "</key>\n")
    }

    mutating func string(_ text: String) throws { try element("<string>", text, "</string>\n") }
    mutating func target(_ id: String) throws { try string(id) }
    mutating func versionIdentifier(_ text: String) throws { try string(text) }
    mutating func entityName(_ entity: Int) throws { try string(schema.entities[entity].name) }
    mutating func typeName(_ name: String) throws { try string(name) }

    mutating func finish() {}

    mutating func value(_ value: Value) {
        line()
        writeValue(value)
    }

    // MARK: Values

    @inline(__always)
    func integerValue(_ value: Int64) {
        output.append("<integer>")
        output.append(decimal: value)
        output.append("</integer>\n")
    }

    /// A real as Apple writes them: the shortest exact form, and `nan`, `+infinity`, `-infinity`.
    @inline(__always)
    func realValue(_ value: Double) {
        output.append("<real>")
        ClipboardDouble.append(value, to: output, nan: "nan", infinity: "+infinity", negativeInfinity: "-infinity")
        output.append("</real>\n")
    }

    @inline(__always)
    func plainValue(_ text: (ByteBuffer) -> Void) {
        output.append("<string>")
        text(output)
        output.append("</string>\n")
    }

    /// A string, or data holding its UTF-8 bytes when XML cannot carry it.
    @inline(__always)
    func stringValue(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            if ByteText.xmlCanCarry(bytes) {
                plainValue { ClipboardXMLEscaping.appendText(bytes, to: $0) }
            } else {
                output.append("<data>")
                output.append(base64: bytes)
                output.append("</data>\n")
            }
        }
    }

    @inline(__always)
    func uriValue(_ text: String) { plainValue { ClipboardXMLEscaping.appendText(text, to: $0) } }

    @inline(__always)
    func boolValue(_ value: Bool) { output.append(value ? "<true/>\n" : "<false/>\n") }

    @inline(__always)
    func dataValue(_ value: Data) {
        output.append("<data>")
        output.append(base64: value)
        output.append("</data>\n")
    }
}
