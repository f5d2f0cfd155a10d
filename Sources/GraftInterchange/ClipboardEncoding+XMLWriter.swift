import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// Graft XML tokens (`Formats/clipboard.xsd`): one element a line, two spaces a level.
///
/// The document's dictionaries are elements whose scalar members are attributes and whose parts are
/// child elements; the lists of entities, attributes, relationships, version identifiers and targets
/// have no element of their own (each entry is one), those of roots, objects and references do. Values
/// are the text of an `<attribute>` or `<identity>` element; a link is a `<relationship>` holding one
/// `<target>` per target. A reference's `uri` is an attribute, though it comes after its identity.
///
/// Strings XML 1.0 cannot carry (control characters other than tab, line feed and carriage return, and
/// U+FFFE, U+FFFF) are written as base64 of their UTF-8 bytes and marked `encoding="base64"`; carriage
/// returns are written as `&#13;` so that they survive a parser's line-end normalisation.
struct ClipboardXMLSink: ClipboardTextSink, ClipboardValueWriting {
    var schema: ClipboardSchema
    var output: ByteBuffer
    /// The open parts.
    private var parts: [ClipboardPart] = []
    /// How many elements are open.
    private var depth = 0
    /// Whether the innermost element's start tag is still open (it has no child element yet).
    private var tagOpen = false
    /// The member whose value comes next, as an attribute.
    private var pendingName: String?
    /// A reference's identity, held until its `uri` attribute is written.
    private var identity = ByteBuffer(capacity: 1024)
    private var holdsIdentity = false

    init(schema: ClipboardSchema, output: ByteBuffer) {
        self.schema = schema
        self.output = output
        parts.reserveCapacity(8)
    }

    /// A sink in the same state writing into `output`, with a buffer of its own for identities (a copy
    /// may write on another thread).
    func copy(writingInto output: ByteBuffer, schema: ClipboardSchema) -> Self? {
        var copy = self
        copy.output = output
        copy.schema = schema
        copy.identity = ByteBuffer(capacity: 1024)
        copy.identity.append(identity.bytes)
        return copy
    }

    private var out: ByteBuffer { holdsIdentity ? identity : output }

    /// The element a part is, if any.
    private static func elementName(_ part: ClipboardPart) -> StaticString? {
        switch part {
        case .document: return "clipboard"
        case .encoding: return "encoding"
        case .model: return "model"
        case .entity: return "entity"
        case .attributeInfo: return "attribute"
        case .relationshipInfo: return "relationship"
        case .source: return "source"
        case .roots: return "roots"
        case .objects: return "objects"
        case .object: return "object"
        case .references: return "references"
        case .reference: return "reference"
        case .entities, .attributeInfos, .relationshipInfos, .versionIdentifiers, .attributes, .relationships,
            .targets, .identity:
            return nil
        }
    }

    /// Starts a child element's line: closes the parent's start tag first.
    @inline(__always)
    private mutating func childLine() {
        if tagOpen && !holdsIdentity {
            output.append(UInt8(ascii: ">"), UInt8(ascii: "\n"))
            tagOpen = false
        }
        out.appendSpaces(2 * depth)
    }

    mutating func begin(_ part: ClipboardPart) {
        if part == .identity { holdsIdentity = true }
        parts.append(part)
        guard let name = Self.elementName(part) else { return }
        if part == .document {
            output.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        } else {
            childLine()
        }
        out.append(UInt8(ascii: "<"))
        out.append(name)
        depth += 1
        tagOpen = true
    }

    mutating func end(_ part: ClipboardPart) {
        parts.removeLast()
        if part == .identity { holdsIdentity = false }
        if part == .targets { output.append("</relationship>\n") }
        guard let name = Self.elementName(part) else { return }
        depth -= 1
        if part == .reference && !identity.isEmpty {
            output.append(UInt8(ascii: ">"), UInt8(ascii: "\n"))
            output.append(identity.bytes)
            identity.removeAll()
            tagOpen = false
        }
        if tagOpen {
            output.append("/>\n")
            tagOpen = false
        } else {
            output.appendSpaces(2 * depth)
            output.append("</")
            output.append(name)
            output.append(">\n")
        }
    }

    // MARK: Keys

    mutating func key(_ member: ClipboardMember) { pendingName = member.rawValue }
    mutating func declarationKey(_ name: String) { pendingName = name }

    @inline(__always)
    mutating func attributeKey(_ name: String, entity: Int, attribute: Int) { pendingName = name }

    mutating func relationshipKey(entity: Int, relationship: Int) throws {
        pendingName = nil
        childLine()
        output.append("<relationship name")
        try attribute(schema.entities[entity].relationshipNames[relationship])
        output.append(UInt8(ascii: ">"))
    }

    // MARK: Scalars

    /// ` name="value"` on the open start tag.
    @inline(__always)
    private mutating func attribute(_ text: String) throws {
        if let name = pendingName {
            output.append(UInt8(ascii: " "))
            output.append(string: name)
            pendingName = nil
        }
        attributeStart()
        try ClipboardXMLEscaping.carried(text) { ClipboardXMLEscaping.appendAttribute($0, to: output) }
        output.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    private func attributeStart() { output.append(UInt8(ascii: "="), UInt8(ascii: "\"")) }

    mutating func string(_ text: String) throws { try attribute(text) }
    mutating func entityName(_ entity: Int) throws { try attribute(schema.entities[entity].name) }
    mutating func typeName(_ name: String) throws { try attribute(name) }

    /// ` name="` for a value XML always carries.
    @inline(__always)
    private mutating func attributeStart(named: Void = ()) {
        output.append(UInt8(ascii: " "))
        output.append(string: pendingName ?? "")
        pendingName = nil
        attributeStart()
    }

    mutating func integer(_ value: Int64) {
        attributeStart(named: ())
        output.append(decimal: value)
        output.append(UInt8(ascii: "\""))
    }

    mutating func bool(_ value: Bool) throws { try attribute(value ? "true" : "false") }

    /// A version hash as an attribute; the model's contents as an element.
    mutating func data(_ value: Data) {
        if parts.last == .model {
            pendingName = nil
            childLine()
            output.append("<contents>")
            output.append(base64: value)
            output.append("</contents>\n")
        } else {
            attributeStart(named: ())
            output.append(base64: value)
            output.append(UInt8(ascii: "\""))
        }
    }

    /// A root (`<root ref="…"/>`), or a target of a link.
    mutating func target(_ id: String) throws {
        if parts.last == .roots {
            childLine()
            output.append("<root ref")
        } else {
            output.append("<target ref")
        }
        attributeStart()
        try ClipboardXMLEscaping.carried(id) { ClipboardXMLEscaping.appendAttribute($0, to: output) }
        output.append(parts.last == .roots ? "\"/>\n" : "\"/>")
        if parts.last == .relationships { output.append("</relationship>\n") }
    }

    mutating func versionIdentifier(_ identifier: String) {
        childLine()
        output.append("<versionIdentifier")
        text(identifier)
        output.append("</versionIdentifier>\n")
    }

    /// `>text` (or ` encoding="base64">…` for text XML cannot carry).
    @inline(__always)
    private func text(_ value: String) {
        var copy = value
        copy.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            if ByteText.xmlCanCarry(bytes) {
                out.append(UInt8(ascii: ">"))
                ClipboardXMLEscaping.appendText(bytes, to: out)
            } else {
                out.append(" encoding=\"base64\">")
                out.append(base64: bytes)
            }
        }
    }

    mutating func value(_ value: Value) throws {
        let element: StaticString = holdsIdentity ? "identity" : "attribute"
        childLine()
        let out = self.out
        out.append(UInt8(ascii: "<"))
        out.append(element)
        out.append(" name=\"")
        try ClipboardXMLEscaping.carried(pendingName ?? "") { ClipboardXMLEscaping.appendAttribute($0, to: out) }
        out.append(UInt8(ascii: "\""))
        pendingName = nil
        writeValue(value)
        out.append("</")
        out.append(element)
        out.append(">\n")
    }

    mutating func finish() {}

    // MARK: Values, as an element's text (after its start tag's attributes)

    @inline(__always)
    func integerValue(_ value: Int64) {
        out.append(UInt8(ascii: ">"))
        out.append(decimal: value)
    }

    @inline(__always)
    func realValue(_ value: Double) {
        out.append(UInt8(ascii: ">"))
        ClipboardDouble.append(value, to: out, nan: "NaN", infinity: "Infinity", negativeInfinity: "-Infinity")
    }

    @inline(__always)
    func plainValue(_ text: (ByteBuffer) -> Void) {
        out.append(UInt8(ascii: ">"))
        text(out)
    }

    @inline(__always)
    func stringValue(_ value: String) { text(value) }

    @inline(__always)
    func uriValue(_ text: String) { plainValue { ClipboardXMLEscaping.appendText(text, to: $0) } }

    @inline(__always)
    func boolValue(_ value: Bool) { out.append(value ? ">true" : ">false") }
    @inline(__always)
    func dataValue(_ value: Data) { plainValue { $0.append(base64: value) } }
}
