import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The document's own entity list as lookup tables, for writers (which form each relationship takes)
/// and readers (the type of each attribute value, by the bytes of its name).
struct ClipboardSchema {
    let entities: [Entity]
    private let index: [String: Int]

    init(entities infos: [Clipboard.EntityInfo]) throws {
        var entities: [Entity] = []
        var index: [String: Int] = [:]
        for info in infos {
            guard index.updateValue(entities.count, forKey: info.name) == nil else {
                throw GraftError(
                    .malformedInput, "the entity \(info.name) is listed twice", context: [.entity(info.name)])
            }
            entities.append(try Entity(info))
        }
        self.entities = entities
        self.index = index
    }

    /// The same schema in storage of its own (entities, names, tables), for a writer or reader on
    /// another thread: threads that share objects count references to them on the same memory, and
    /// that traffic between processors costs more than the work itself.
    func unshared() -> ClipboardSchema {
        (try? ClipboardSchema(entities: entities.map(\.info))) ?? self
    }

    /// The index of the entity named `name`; `last` is tried first (objects of one entity come together).
    @inline(__always)
    func entity(named name: String, last: Int) -> Int? {
        if last >= 0 && last < entities.count && entities[last].name == name { return last }
        return index[name]
    }

    /// The index of the entity whose name has these UTF-8 bytes.
    @inline(__always)
    func entity(bytes: UnsafeRawBufferPointer, last: Int) -> Int? {
        if last >= 0 && last < entities.count && entities[last].nameEquals(bytes) { return last }
        if entities.count <= 8 {
            for (position, entity) in entities.enumerated() where entity.nameEquals(bytes) { return position }
            return nil
        }
        return index[String(decoding: bytes, as: UTF8.self)]
    }

    /// The message for an entity the document's model does not have.
    static func unknownEntity(_ name: UnsafeRawBufferPointer) -> String {
        "the entity '\(ByteText.excerpt(name))' is not in the document's model"
    }

    /// Where a reader is among one object's attributes or relationships: the next position to try (they
    /// usually come in the entity's order) and the ones given already.
    struct Cursor {
        var hint = 0
        var seen = ClipboardSeenSet()
    }

    /// One entity: its attributes' names and types, its relationships' names and kinds.
    final class Entity {
        let info: Clipboard.EntityInfo
        let name: String
        let attributeNames: [String]
        let attributeTypes: [AttributeType]
        let relationshipNames: [String]
        let relationships: [Clipboard.RelationshipInfo]
        private let attributeIndex: [String: Int]
        private let relationshipIndex: [String: Int]
        /// The UTF-8 bytes of the entity's name, then of every attribute name, then of every relationship
        /// name; `starts` has one more entry than there are names.
        private let bytes: UnsafeMutablePointer<UInt8>
        private let starts: UnsafeMutablePointer<Int>

        init(_ info: Clipboard.EntityInfo) throws {
            self.info = info
            // Strings of their own too (`String(_:)` of a substring copies), for ``unshared()``.
            name = String(info.name[...])
            attributeNames = info.attributes.map { String($0.name[...]) }
            attributeTypes = info.attributes.map(\.type)
            relationshipNames = info.relationships.map { String($0.name[...]) }
            relationships = info.relationships.map { $0 }
            var attributeIndex: [String: Int] = [:]
            for (position, attribute) in info.attributes.enumerated() {
                guard attributeIndex.updateValue(position, forKey: attribute.name) == nil else {
                    throw GraftError(
                        .malformedInput, "the attribute '\(attribute.name)' is listed twice",
                        context: [.entity(info.name)])
                }
            }
            var relationshipIndex: [String: Int] = [:]
            for (position, relationship) in info.relationships.enumerated() {
                guard relationshipIndex.updateValue(position, forKey: relationship.name) == nil,
                    attributeIndex[relationship.name] == nil
                else {
                    throw GraftError(
                        .malformedInput, "the property '\(relationship.name)' is listed twice",
                        context: [.entity(info.name)])
                }
            }
            self.attributeIndex = attributeIndex
            self.relationshipIndex = relationshipIndex
            let names = [info.name] + attributeNames + relationshipNames
            let total = names.reduce(0) { $0 + $1.utf8.count }
            bytes = .allocate(capacity: max(total, 1))
            starts = .allocate(capacity: names.count + 1)
            var offset = 0
            for (position, name) in names.enumerated() {
                starts[position] = offset
                for byte in name.utf8 {
                    bytes[offset] = byte
                    offset += 1
                }
            }
            starts[names.count] = offset
        }

        deinit {
            bytes.deallocate()
            starts.deallocate()
        }

        @inline(__always)
        private func equals(_ name: Int, _ other: UnsafeRawBufferPointer) -> Bool {
            let start = starts[name]
            let length = starts[name + 1] - start
            return length == other.count && (length == 0 || memcmp(bytes + start, other.baseAddress!, length) == 0)
        }

        @inline(__always)
        func nameEquals(_ other: UnsafeRawBufferPointer) -> Bool { equals(0, other) }

        /// The index of the attribute whose name has these bytes. `hint` is tried first and then set past
        /// the match, so attributes written in the entity's order are found at once.
        @inline(__always)
        func attribute(bytes name: UnsafeRawBufferPointer, hint: inout Int) -> Int? {
            let count = attributeNames.count
            if hint < count && equals(1 + hint, name) {
                hint += 1
                return hint - 1
            }
            for position in 0..<count where equals(1 + position, name) {
                hint = position + 1
                return position
            }
            return nil
        }

        @inline(__always)
        func attribute(named name: String, hint: inout Int) -> Int? {
            // Attributes come in the entity's order, those without a value left out: a few names on from
            // the hint are compared before the name is hashed.
            for position in hint..<min(attributeNames.count, hint + 4) where attributeNames[position] == name {
                hint = position + 1
                return position
            }
            guard let position = attributeIndex[name] else { return nil }
            hint = position + 1
            return position
        }

        @inline(__always)
        func relationship(bytes name: UnsafeRawBufferPointer, hint: inout Int) -> Int? {
            let count = relationships.count
            let first = 1 + attributeNames.count
            if hint < count && equals(first + hint, name) {
                hint += 1
                return hint - 1
            }
            for position in 0..<count where equals(first + position, name) {
                hint = position + 1
                return position
            }
            return nil
        }

        /// The attribute whose name has the bytes `key`, counted in `cursor` so that one given twice is
        /// refused; or the problem, for a message.
        @inline(__always)
        func attribute(_ key: UnsafeRawBufferPointer, cursor: inout Cursor) -> Result<Int, ClipboardKeyProblem> {
            counted(attribute(bytes: key, hint: &cursor.hint), key, &cursor.seen, "attribute", attributeNames)
        }

        /// The relationship whose name has the bytes `key`, counted in `cursor`; or the problem.
        @inline(__always)
        func relationship(_ key: UnsafeRawBufferPointer, cursor: inout Cursor) -> Result<Int, ClipboardKeyProblem> {
            counted(relationship(bytes: key, hint: &cursor.hint), key, &cursor.seen, "relationship", relationshipNames)
        }

        @inline(__always)
        private func counted(
            _ position: Int?, _ key: UnsafeRawBufferPointer, _ seen: inout ClipboardSeenSet, _ kind: String,
            _ names: [String]
        ) -> Result<Int, ClipboardKeyProblem> {
            guard let position else {
                return .failure(
                    ClipboardKeyProblem(
                        "\(name) has no \(kind) '\(ByteText.excerpt(key))' in the document's model", key: nil))
            }
            guard seen.insert(position) else {
                return .failure(ClipboardKeyProblem("the \(kind) appears twice", key: names[position]))
            }
            return .success(position)
        }

        /// Why `count` targets do not fit the relationship at `position` (a to-one has at most one).
        @inline(__always)
        func targetsProblem(_ position: Int, count: Int) -> String? {
            count > 1 && !relationships[position].isToMany ? "a to-one relationship has \(count) targets" : nil
        }

        @inline(__always)
        func relationship(named name: String, hint: inout Int) -> Int? {
            for position in hint..<min(relationshipNames.count, hint + 4) where relationshipNames[position] == name {
                hint = position + 1
                return position
            }
            guard let position = relationshipIndex[name] else { return nil }
            hint = position + 1
            return position
        }
    }

    /// Checks what the writers rely on, so that every document they write reads back: each object's and
    /// reference's entity is in the list, each value belongs to a declared attribute (once), has the
    /// attribute's type and a type clipboards carry, and each relationship is declared (once) and a to-one
    /// has at most one target. Ids are not checked here: `ClipboardEncoding.decode` runs
    /// `Clipboard.check()`, which refuses repeated ids and targets that do not exist.
    ///
    /// Many objects are checked in parts on several threads; the error is the one a single pass would
    /// meet first.
    func validate(_ clipboard: Clipboard) throws {
        let count = clipboard.objects.count
        let parts = count >= 1 << 16 ? min(ProcessInfo.processInfo.activeProcessorCount, 8) : 1
        if parts > 1 {
            let size = (count + parts - 1) / parts
            nonisolated(unsafe) let schema = self
            let objects = clipboard.objects
            nonisolated(unsafe) var failures: [(part: Int, error: Error)] = []
            let lock = NSLock()
            DispatchQueue.concurrentPerform(iterations: parts) { part in
                do {
                    let schema = part == 0 ? schema : schema.unshared()
                    try schema.validate(objects[min(count, part * size)..<min(count, (part + 1) * size)])
                } catch {
                    lock.withLock { failures.append((part, error)) }
                }
            }
            if let first = failures.min(by: { $0.part < $1.part }) { throw first.error }
        } else {
            try validate(clipboard.objects[...])
        }
        var last = -1
        for reference in clipboard.references {
            guard let index = entity(named: reference.entity, last: last) else {
                throw GraftError(
                    .malformedInput,
                    "the reference names entity \(reference.entity), which the document does not describe",
                    context: [.object(reference.id)])
            }
            last = index
            try Self.validate(reference.identity, of: entities[index], id: reference.id)
        }
    }

    /// Checks the objects, as ``validate(_:)`` does.
    private func validate(_ objects: ArraySlice<Clipboard.Object>) throws {
        var last = -1
        for object in objects {
            guard let index = entity(named: object.entity, last: last) else {
                throw GraftError(
                    .malformedInput, "the object names entity \(object.entity), which the document does not describe",
                    context: [.object(object.id)])
            }
            last = index
            let entity = entities[index]
            try Self.validate(object.attributes, of: entity, id: object.id)
            var seen = ClipboardSeenSet()
            var hint = 0
            for link in object.relationships {
                guard let position = entity.relationship(named: link.name, hint: &hint) else {
                    throw GraftError(
                        .malformedInput,
                        "\(entity.name) has no relationship '\(link.name)' in the document's entity list",
                        context: [.object(object.id), .key(link.name)])
                }
                guard seen.insert(position) else {
                    throw GraftError(
                        .malformedInput, "the relationship is listed twice",
                        context: [.object(object.id), .key(link.name)])
                }
                if !entity.relationships[position].isToMany && link.targets.count > 1 {
                    throw GraftError(
                        .malformedInput, "a to-one relationship has \(link.targets.count) targets",
                        context: [.object(object.id), .key(link.name)])
                }
            }
        }
    }

    /// Checks that the names, ids and URIs an XML encoding writes as they are hold only characters XML 1.0
    /// can carry (string values have a form for the others), so that a document is refused before its
    /// first byte is written rather than half way.
    static func validateXMLText(_ clipboard: Clipboard, versionIdentifiers: Bool) throws {
        func check(_ text: String, _ what: String, _ context: [GraftError.Location] = []) throws {
            guard ByteText.xmlCanCarry(text) else {
                throw GraftError(
                    .malformedInput,
                    "\(what) \(ByteText.excerpt(text.debugDescription)) holds a character XML cannot carry",
                    context: context)
            }
        }
        for entity in clipboard.entities {
            try check(entity.name, "the entity name")
            for attribute in entity.attributes {
                try check(attribute.name, "the attribute name", [.entity(entity.name)])
            }
            for relationship in entity.relationships {
                try check(relationship.name, "the relationship name", [.entity(entity.name)])
            }
        }
        if versionIdentifiers {
            for identifier in clipboard.versionIdentifiers { try check(identifier, "the version identifier") }
        }
        if let store = clipboard.sourceStore { try check(store, "the source store") }
        for root in clipboard.roots { try check(root, "the root") }
        for object in clipboard.objects {
            try check(object.id, "the id", [.object(object.id)])
            for link in object.relationships {
                for target in link.targets { try check(target, "the target", [.object(object.id), .key(link.name)]) }
            }
        }
        for reference in clipboard.references {
            try check(reference.id, "the id", [.object(reference.id)])
            if let uri = reference.uri { try check(uri, "the URI", [.object(reference.id)]) }
        }
    }

    private static func validate(_ values: [Clipboard.NamedValue], of entity: Entity, id: String) throws {
        var seen = ClipboardSeenSet()
        var hint = 0
        for named in values {
            guard let position = entity.attribute(named: named.name, hint: &hint) else {
                throw GraftError(
                    .malformedInput, "\(entity.name) has no attribute '\(named.name)' in the document's entity list",
                    context: [.object(id), .key(named.name)])
            }
            let type = entity.attributeTypes[position]
            guard carries(type) else {
                throw GraftError(
                    .malformedInput, ClipboardValueText.uncarried(type), context: [.object(id), .key(named.name)])
            }
            guard ClipboardValues.fits(named.value, type) else {
                throw GraftError(
                    .malformedInput, "the value does not fit the declared type \(type.modelName)",
                    context: [.object(id), .key(named.name)])
            }
            guard seen.insert(position) else {
                throw GraftError(
                    .malformedInput, "the attribute is listed twice", context: [.object(id), .key(named.name)])
            }
        }
    }

    /// Whether clipboards carry values of this type (all but Undefined, Object ID and Composite, which have
    /// no value form of their own).
    static func carries(_ type: AttributeType) -> Bool {
        switch type {
        case .undefined, .objectID, .composite: return false
        default: return true
        }
    }
}

// MARK: - Keys and declarations

/// The names of the document's members, the same in every encoding.
enum ClipboardKey {
    static let format = "format"
    static let version = "version"
    static let encoding = "encoding"
    static let model = "model"
    static let source = "source"
    static let roots = "roots"
    static let objects = "objects"
    static let references = "references"
}

/// The document's members, as readers recognise them by their names' bytes.
/// A member at the top of a document, as the reader meets them.
enum ClipboardTopMember: Int, CaseIterable {
    case format, version, encoding, model, source, roots, objects, references

    var name: String {
        switch self {
        case .format: return ClipboardKey.format
        case .version: return ClipboardKey.version
        case .encoding: return ClipboardKey.encoding
        case .model: return ClipboardKey.model
        case .source: return ClipboardKey.source
        case .roots: return ClipboardKey.roots
        case .objects: return ClipboardKey.objects
        case .references: return ClipboardKey.references
        }
    }

    init?(_ key: UnsafeRawBufferPointer) {
        guard let member = Self.allCases.first(where: { key.elementsEqual($0.name.utf8) }) else { return nil }
        self = member
    }
}

/// Why a key of an object is refused: the message, and the key to name in the context when it is one
/// the model has.
struct ClipboardKeyProblem: Error {
    let message: String
    let key: String?

    init(_ message: String, key: String?) {
        self.message = message
        self.key = key
    }

    /// The context of the error: the object, and the key when known.
    func context(_ label: String) -> [GraftError.Location] {
        key.map { [.object(label), .key($0)] } ?? [.object(label)]
    }
}

/// What the `encoding` section of each encoding says: how values the encoding cannot carry as they are
/// were written. Readers insist on exactly these entries, so a document written another way is refused
/// rather than misread.
enum ClipboardDeclaration {
    static let dateSeconds = "seconds since 2001-01-01T00:00:00Z"

    static func entries(_ encoding: ClipboardEncoding) -> [(key: String, value: String)] {
        switch encoding {
        case .json:
            return [
                ("date", dateSeconds), ("decimal", "string"), ("binary", "base64"),
                ("nonFiniteNumbers", "strings NaN, Infinity, -Infinity"), ("integer64", "number"),
            ]
        case .plist:
            return [
                ("date", "real, " + dateSeconds), ("decimal", "string"),
                ("controlCharacters", "data holding the string's UTF-8 bytes"),
            ]
        case .binaryPlist:
            return [("date", "real, " + dateSeconds), ("decimal", "string")]
        case .xml:
            return [
                ("date", dateSeconds), ("decimal", "string"), ("binary", "base64"),
                ("nonFiniteNumbers", "NaN, Infinity, -Infinity"),
                ("controlCharacters", "base64 of the string's UTF-8 bytes, marked encoding='base64'"),
            ]
        }
    }

    /// Checks a document's declaration against what this version writes.
    ///
    /// - Returns: the problem, or `nil` when the declaration is the expected one.
    static func problem(_ declared: [(key: String, value: String)], for encoding: ClipboardEncoding) -> String? {
        let expected = entries(encoding)
        var seen = Set<String>()
        for (key, value) in declared {
            guard seen.insert(key).inserted else { return "the encoding section names '\(key)' twice" }
            guard let wanted = expected.first(where: { $0.key == key }) else {
                return "the encoding section names '\(key)', which this version does not know"
            }
            guard wanted.value == value else {
                return "the encoding section says \(key) values are written as '\(value)'; this version reads "
                    + "them only as '\(wanted.value)'"
            }
        }
        for (key, _) in expected where !seen.contains(key) {
            return "the encoding section does not say how \(key) values are written"
        }
        return nil
    }
}

// MARK: - Header checks

/// Checks of the `format` and `version` members, shared by every reader.
enum ClipboardHeader {
    static func formatProblem(_ format: String) -> GraftError? {
        guard format == Clipboard.formatName else {
            return GraftError(
                .unsupportedFormat,
                "the document is not a Graft clipboard: its format is '\(ByteText.excerpt(format))', not "
                    + "'\(Clipboard.formatName)'")
        }
        return nil
    }

    static func versionProblem(_ version: Int64) -> GraftError? {
        if version > Int64(Clipboard.formatVersion) {
            return GraftError(
                .unsupportedFormat,
                "the clipboard is version \(version) of the format, newer than this Graft reads "
                    + "(\(Clipboard.formatVersion)); use a newer Graft")
        }
        if version < 1 {
            return GraftError(.malformedInput, "the clipboard's format version \(version) does not exist")
        }
        return nil
    }
}

// MARK: - Values from text

/// Why a text is not a value of the type it should be: a sentence for an error message.
struct ClipboardProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Attribute values from their text form, as the XML encodings and JSON strings carry them.
enum ClipboardValueText {
    /// The value `text` stands for in an attribute of `type`, or a sentence saying why there is none.
    ///
    /// Numbers, dates, Booleans, UUIDs and base64 may be surrounded by white space; strings are taken as
    /// they are.
    static func value(_ text: UnsafeRawBufferPointer, type: AttributeType) -> Result<Value, ClipboardProblem> {
        if type == .string {
            guard let string = ByteText.string(text) else {
                return .failure(ClipboardProblem("the text is not valid UTF-8"))
            }
            return .success(.string(string))
        }
        let trimmed = ByteText.trimmed(text)
        switch type {
        case .integer16, .integer32, .integer64:
            guard let integer = NumberText.int64(trimmed) else {
                return .failure(
                    ClipboardProblem("'\(ByteText.excerpt(trimmed))' is not an integer in −2⁶³ … 2⁶³−1"))
            }
            return .success(.integer(integer))
        case .double, .float:
            guard let double = NumberText.double(trimmed) ?? NumberText.nonFinite(trimmed) else {
                return .failure(ClipboardProblem("'\(ByteText.excerpt(trimmed))' is not a number"))
            }
            return .success(.double(double))
        case .date:
            guard let seconds = NumberText.double(trimmed) ?? NumberText.nonFinite(trimmed) else {
                return .failure(
                    ClipboardProblem("'\(ByteText.excerpt(trimmed))' is not a number of seconds since 2001-01-01"))
            }
            return .success(.date(Date(timeIntervalSinceReferenceDate: seconds)))
        case .decimal:
            switch ClipboardDecimal.parse(trimmed) {
            case .success(let decimal): return .success(.decimal(decimal))
            case .failure(let problem):
                return .failure(
                    ClipboardProblem("'\(ByteText.excerpt(trimmed))' \(ClipboardDecimal.message(problem))"))
            }
        case .boolean:
            if ByteText.equals(trimmed, "true") || ByteText.equals(trimmed, "1") {
                return .success(.bool(true))
            }
            if ByteText.equals(trimmed, "false") || ByteText.equals(trimmed, "0") {
                return .success(.bool(false))
            }
            return .failure(ClipboardProblem("'\(ByteText.excerpt(trimmed))' is not true or false"))
        case .binary, .transformable:
            guard let data = Base64.decode(text) else {
                return .failure(ClipboardProblem("the text is not valid base64"))
            }
            return .success(.data(data))
        case .uuid:
            guard let uuid = ClipboardUUID.parse(trimmed) else {
                return .failure(ClipboardProblem("'\(ByteText.excerpt(trimmed))' is not a UUID"))
            }
            return .success(.uuid(uuid))
        case .uri:
            guard let string = ByteText.string(trimmed), !string.isEmpty, let url = URL(string: string) else {
                return .failure(ClipboardProblem("'\(ByteText.excerpt(trimmed))' is not a URI"))
            }
            return .success(.uri(url))
        case .string:
            return .failure(ClipboardProblem("unreachable"))
        case .undefined, .objectID, .composite:
            return .failure(ClipboardProblem(uncarried(type)))
        }
    }

    static func uncarried(_ type: AttributeType) -> String {
        "attributes of type \(ClipboardValues.typeName(type)) have no value form in a clipboard"
    }

    /// The URI text a value is written with.
    @inline(__always)
    static func uriText(_ url: URL) -> String { url.absoluteString }
}
