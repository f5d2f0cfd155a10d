import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// The containers of a clipboard document, in the words of `Formats/clipboard.md`: what a sink lays out,
/// names or numbers differently.
enum ClipboardPart: UInt8 {
    case document, encoding, model, entities, entity, attributeInfos, attributeInfo, relationshipInfos
    case relationshipInfo, versionIdentifiers, source, roots, objects, object, attributes, relationships, targets
    case references, reference, identity

    /// Whether the part is a dictionary (else an array).
    var isDictionary: Bool {
        switch self {
        case .entities, .attributeInfos, .relationshipInfos, .versionIdentifiers, .roots, .objects, .targets,
            .references:
            return false
        default: return true
        }
    }
}

/// The members of a clipboard document with names of their own (the values' and links' names come from
/// the model).
enum ClipboardMember: String {
    case format, version, encoding, model, source, roots, objects, references
    case entities, versionIdentifiers, contents, store, name, versionHash, attributes, relationships, type
    case toMany, ordered, id, entity, identity, uri
}

/// What one encoding does with the document's tokens. The core (``ClipboardDocumentWriter``) decides the
/// shape, the member order and the names; a sink only turns tokens into bytes.
///
/// A dictionary's entries are a key token then a value (a scalar or a part); an array's are values.
protocol ClipboardTokenSink: SendableMetatype {
    mutating func begin(_ part: ClipboardPart) throws
    mutating func end(_ part: ClipboardPart) throws
    mutating func key(_ member: ClipboardMember) throws
    /// A key of the `encoding` section.
    mutating func declarationKey(_ name: String) throws
    /// Whether the sink needs the position of each value's attribute in its entity (else -1 is given).
    static var needsAttributePositions: Bool { get }
    /// The name of a value's attribute: attribute `attribute` of the schema's entity `entity`.
    mutating func attributeKey(_ name: String, entity: Int, attribute: Int) throws
    mutating func relationshipKey(entity: Int, relationship: Int) throws
    /// A name, id or other text with no form but a string.
    mutating func string(_ text: String) throws
    /// An id an object points to: a root, a target.
    mutating func target(_ id: String) throws
    /// An object's own local id given by its number (``ClipboardLocalID``), as `string` writes its text.
    mutating func localID(_ number: Int64) throws
    /// A target that is a local id given by its number, as `target` writes its text.
    mutating func localTarget(_ number: Int64) throws
    /// A version identifier (which Graft XML can write in base64).
    mutating func versionIdentifier(_ text: String) throws
    /// The name of the schema's entity `entity`.
    mutating func entityName(_ entity: Int) throws
    /// An attribute type's name.
    mutating func typeName(_ name: String) throws
    /// An integer, a Boolean, data of the document's own (not values: those are ``value(_:)``'s); by
    /// default written as the value of that kind.
    mutating func integer(_ value: Int64) throws
    mutating func bool(_ value: Bool) throws
    mutating func data(_ value: Data) throws
    /// An attribute's value.
    mutating func value(_ value: Value) throws
    /// Ends the document (after `end(.document)`).
    mutating func finish() throws
    /// The sink in its present state, writing into `output` and reading `schema` (an unshared copy of its
    /// own, ``ClipboardSchema/unshared()``): for writing objects on several threads, each into a buffer of
    /// its own. `nil` when what the sink writes depends on what it wrote before.
    func copy(writingInto output: ByteBuffer, schema: ClipboardSchema) -> Self?
}

extension ClipboardTokenSink {
    func copy(writingInto output: ByteBuffer, schema: ClipboardSchema) -> Self? { nil }
    mutating func integer(_ value: Int64) throws { try self.value(.integer(value)) }
    mutating func bool(_ value: Bool) throws { try self.value(.bool(value)) }
    mutating func data(_ value: Data) throws { try self.value(.data(value)) }
    static var needsAttributePositions: Bool { false }
    mutating func localID(_ number: Int64) throws { try string(ClipboardLocalID.text(number)) }
    mutating func localTarget(_ number: Int64) throws { try target(ClipboardLocalID.text(number)) }
}

/// A sink whose bytes depend only on the tokens and its state, which a copy shares.
protocol ClipboardTextSink: ClipboardTokenSink {
    var output: ByteBuffer { get set }
    var schema: ClipboardSchema { get set }
}

extension ClipboardTextSink {
    func copy(writingInto output: ByteBuffer, schema: ClipboardSchema) -> Self? {
        var copy = self
        copy.output = output
        copy.schema = schema
        return copy
    }
}

/// How one encoding writes an attribute's value, kind by kind: ``writeValue(_:)`` sorts values into these
/// kinds once for every encoding, each encoding only supplies the forms (the writing side's counterpart of
/// ``ClipboardTokenSource``'s scalars).
protocol ClipboardValueWriting {
    /// What writing a value gives: nothing for the text encodings, the object's number in a binary
    /// property list.
    associatedtype Written = Void
    mutating func integerValue(_ value: Int64) -> Written
    /// A double, or a date as seconds since 2001-01-01T00:00:00Z.
    mutating func realValue(_ value: Double) -> Written
    /// ASCII text that needs no escaping (a decimal's digits, a UUID), which `text` appends to the buffer
    /// it is given.
    mutating func plainValue(_ text: (ByteBuffer) -> Void) -> Written
    mutating func stringValue(_ text: String) -> Written
    /// A URI's text; by default written as a string.
    mutating func uriValue(_ text: String) -> Written
    mutating func boolValue(_ value: Bool) -> Written
    mutating func dataValue(_ value: Data) -> Written
}

extension ClipboardValueWriting {
    mutating func uriValue(_ text: String) -> Written { stringValue(text) }

    /// Writes `value` in the form its kind has: the one place values are told apart.
    @inline(__always)
    mutating func writeValue(_ value: Value) -> Written {
        switch value {
        case .integer(let integer): return integerValue(integer)
        case .double(let double): return realValue(double)
        case .date(let date): return realValue(date.timeIntervalSinceReferenceDate)
        case .decimal(let decimal): return plainValue { NumberText.append(decimal, to: $0) }
        case .string(let text): return stringValue(text)
        case .bool(let bool): return boolValue(bool)
        case .data(let data): return dataValue(data)
        case .uuid(let uuid): return plainValue { ClipboardUUID.append(uuid, to: $0) }
        case .uri(let url): return uriValue(ClipboardValueText.uriText(url))
        }
    }
}
