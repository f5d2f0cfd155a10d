import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The pull tokenizer for the XML documents Graft reads whole from memory: XML property lists and the
/// XML and property-list clipboards. One tokenizer, so one policy for what a document may hold.
///
/// It checks what a well-formed XML 1.0 document needs at the level of tokens — names, quoted
/// attributes without `<`, no attribute twice, character and entity references (the five predefined
/// entities and numeric references to characters XML allows), no control characters, properly closed
/// comments, CDATA sections and processing instructions, nothing but one element after the prolog — and
/// the readers check that every end tag closes the element they are in. Line ends are normalised and
/// attribute values are normalised as XML says. Documents in other encodings than UTF-8 are refused, and
/// so is a document type that declares an entity (general or parameter, internal or external), since an
/// entity can read local files or expand without bound; a document type without declarations, such as
/// Apple's `<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "…">`, is read and its DTD never loaded.
/// No reference but the five predefined entities and character references is ever expanded.
///
/// It is a value, so a reader can save a position and come back to it; text that needs decoding is decoded
/// into a scratch buffer that the next decoding overwrites.
///
/// For example:
///
/// ```swift
/// var scanner = XMLScanner(bytes, documentName: "XML clipboard")
/// try scanner.readRoot()
/// while try scanner.nextChild(of: "clipboard") { try scanner.skipElement() }
/// try scanner.readEnd()
/// ```
@_spi(GraftInternal) public struct XMLScanner {
    /// The deepest nesting a skipped element may have.
    package static let maximumDepth = 512

    package enum Token {
        case start, end, text, endOfDocument
    }

    package struct Attribute {
        package var nameStart: Int
        package var nameLength: Int
        package var valueStart: Int
        package var valueLength: Int
        package var needsDecoding: Bool
    }

    package let bytes: UnsafeRawBufferPointer
    @usableFromInline let base: UnsafePointer<UInt8>
    private let count: Int
    package private(set) var position: Int
    /// The name the messages give the document ("XML clipboard", …).
    package let documentName: String
    private let isTranscoded: Bool
    /// Only the root element's name is wanted (see ``rootElementName(ofPrefix:)``): entity declarations
    /// are passed over, for the reader to refuse.
    private var isSniffing = false
    /// The name the document type declaration gives the root, if there is one.
    private var documentTypeName: String?
    private let scratch = ByteBuffer(capacity: 256)

    /// The current start or end tag's name.
    @usableFromInline package private(set) var nameStart = 0
    @usableFromInline package private(set) var nameLength = 0
    /// Whether the current start tag closes itself (`<a/>`).
    package private(set) var isEmptyElement = false
    package private(set) var attributes: [Attribute] = []
    /// The current text token: character data or a CDATA section.
    private var textStart = 0
    private var textLength = 0
    private var textNeedsDecoding = false
    /// Where the current token starts.
    package private(set) var tokenStart = 0

    /// - Parameters:
    ///   - documentName: what messages call the document ("XML clipboard", …).
    ///   - transcoded: the bytes are a document converted to UTF-8, so the encoding its XML declaration
    ///     names is not checked.
    package init(_ bytes: UnsafeRawBufferPointer, documentName: String, transcoded: Bool = false) {
        self.bytes = bytes
        base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
        count = bytes.count
        position = 0
        self.documentName = documentName
        isTranscoded = transcoded
    }

    // MARK: Errors

    package func error(_ message: String, at offset: Int? = nil, context: [GraftError.Location] = []) -> GraftError {
        let offset = offset ?? tokenStart
        return GraftError(
            .malformedInput, "\(documentName): " + message,
            context: [.line(ByteText.line(of: offset, in: bytes)), .offset(offset)] + context)
    }

    private func truncated(_ what: String, at offset: Int) -> GraftError {
        error("the document ends inside \(what) (is it truncated?)", at: offset)
    }

    // MARK: Names

    /// The current tag's name.
    @inlinable @inline(__always)
    public var name: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base + nameStart, count: nameLength) }

    package var nameText: String { String(decoding: name, as: UTF8.self) }

    @inlinable @inline(__always)
    public func isNamed(_ literal: StaticString) -> Bool { ByteText.equals(name, literal) }

    // MARK: Prolog and epilog

    /// The name of a document's root element, read from the document's first bytes past the XML
    /// declaration (whatever encoding it names), comments, processing instructions and the document type;
    /// `nil` when the prefix holds no well-formed start of a document up to the root's start tag. For
    /// telling formats apart: a document type declaring entities passes here and is refused when the
    /// document is read.
    package static func rootElementName(ofPrefix prefix: UnsafeRawBufferPointer) -> String? {
        var scanner = XMLScanner(prefix, documentName: "", transcoded: true)
        scanner.isSniffing = true
        guard (try? scanner.readRoot()) != nil else { return nil }
        // A document type names the root element (XML's validity constraint "Root Element Type").
        guard scanner.documentTypeName.map({ $0 == scanner.nameText }) ?? true else { return nil }
        return scanner.nameText
    }

    /// Reads the XML declaration, comments, processing instructions and the document type, and the root
    /// element's start tag.
    package mutating func readRoot() throws {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            position = 3
        } else if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0, 0x3C])
        {
            throw error("the document is in UTF-16; it is read in UTF-8 only", at: 0)
        }
        if remaining.starts(with: "<?xml".utf8), position + 5 < count, ByteText.isSpace(base[position + 5]) {
            try readDeclaration()
        }
        var sawDocumentType = false
        while true {
            skipSpace()
            tokenStart = position
            guard position < count else { throw error("the document has no root element", at: position) }
            if remaining.starts(with: "<!DOCTYPE".utf8) {
                guard !sawDocumentType else { throw error("the document has two document type declarations") }
                sawDocumentType = true
                if isSniffing {
                    var end = position + 9
                    while end < count, ByteText.isSpace(base[end]) { end += 1 }
                    let nameStart = end
                    while end < count, ByteText.isNameByte(base[end]) { end += 1 }
                    documentTypeName = String(decoding: bytes[nameStart..<end], as: UTF8.self)
                }
                try skipDocumentType()
                continue
            }
            if remaining.starts(with: "<!--".utf8) || remaining.starts(with: "<?".utf8) {
                // A comment or processing instruction: `next()` skips it, and the root may follow later.
                let before = position
                switch try next() {
                case .start: return
                case .text where isSpaceText: continue
                case .endOfDocument: throw error("the document has no root element", at: position)
                default:
                    guard position > before else { throw error("expected the root element") }
                    throw error("expected the root element, found text")
                }
            }
            guard base[position] == UInt8(ascii: "<") else {
                throw error("expected the root element, found text")
            }
            switch try next() {
            case .start: return
            default: throw error("expected the root element")
            }
        }
    }

    private var remaining: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[position...]) }

    private mutating func readDeclaration() throws {
        let start = position
        guard let end = find("?>", from: position) else { throw truncated("the XML declaration", at: start) }
        let declaration = String(decoding: bytes[(start + 5)..<end], as: UTF8.self)
        position = end + 2
        func pseudoAttribute(_ name: String) -> String? {
            guard let range = declaration.range(of: name) else { return nil }
            let rest = declaration[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
            guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
            return String(rest.dropFirst().prefix { $0 != quote })
        }
        guard let version = pseudoAttribute("version"), version.hasPrefix("1.") else {
            throw error("the XML declaration gives no version 1.x", at: start)
        }
        if !isTranscoded, let encoding = pseudoAttribute("encoding"),
            !["utf-8", "utf8"].contains(encoding.lowercased())
        {
            throw error("the document is in \(encoding); it is read in UTF-8 only", at: start)
        }
    }

    /// Skips the document type declaration, refusing any entity declaration in its internal subset
    /// (quoted literals, comments and processing instructions there are skipped whole).
    private mutating func skipDocumentType() throws {
        let start = position
        var quote: UInt8 = 0
        var inSubset = false
        while position < count {
            let byte = base[position]
            position += 1
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                inSubset = true
            } else if byte == UInt8(ascii: "]") {
                inSubset = false
            } else if byte == UInt8(ascii: "<") && inSubset {
                if remaining.starts(with: "!--".utf8) {
                    guard let end = find("-->", from: position + 3) else { break }
                    position = end + 3
                } else if remaining.starts(with: "?".utf8) {
                    guard let end = find("?>", from: position + 1) else { break }
                    position = end + 2
                } else if remaining.starts(with: "!ENTITY".utf8) && !isSniffing {
                    throw error(Self.entityDeclarationMessage(entityName(at: position + 7)), at: position - 1)
                }
            } else if byte == UInt8(ascii: ">") && !inSubset {
                return
            }
        }
        throw truncated("the document type declaration", at: start)
    }

    /// The name an entity declaration declares, from just after `<!ENTITY`: `%name` for a parameter
    /// entity.
    private func entityName(at start: Int) -> String {
        var index = start
        while index < count, ByteText.isSpace(base[index]) { index += 1 }
        var prefix = ""
        if index < count, base[index] == UInt8(ascii: "%") {
            prefix = "%"
            index += 1
            while index < count, ByteText.isSpace(base[index]) { index += 1 }
        }
        let nameStart = index
        while index < count, index - nameStart < 100, ByteText.isNameByte(base[index]) { index += 1 }
        return prefix + String(decoding: bytes[nameStart..<index], as: UTF8.self)
    }

    /// What every XML reader of Graft's says when a document declares an entity, general or parameter
    /// (`<!ENTITY % name …>`), internal or external: such documents are refused, whatever the entity
    /// would expand to, since an entity can read local files or expand without bound. Nothing a Core
    /// Data store, a model file, a property list or a clipboard holds needs one.
    ///
    /// - Parameter name: the entity's name, with `%` before a parameter entity's.
    package static func entityDeclarationMessage(_ name: String) -> String {
        "the document declares the entity '\(name)'; Graft does not read documents that declare entities "
            + "(they can read local files or expand without bound)"
    }

    /// Checks that nothing but comments, processing instructions and white space follows the root element.
    package mutating func readEnd() throws {
        while true {
            switch try next() {
            case .endOfDocument: return
            case .text where isSpaceText: continue
            default: throw error("there is more after the root element")
            }
        }
    }

    @inline(__always)
    private mutating func skipSpace() {
        while position < count, ByteText.isSpace(base[position]) { position += 1 }
    }

    private func find(_ pattern: StaticString, from start: Int) -> Int? {
        let length = pattern.utf8CodeUnitCount
        let first = pattern.utf8Start[0]
        var position = start
        while position + length <= count {
            guard let found = memchr(base + position, Int32(first), count - position) else { return nil }
            let at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            if at + length <= count && memcmp(base + at, pattern.utf8Start, length) == 0 { return at }
            position = at + 1
        }
        return nil
    }

    // MARK: Tokens

    /// The next token; comments and processing instructions are skipped.
    package mutating func next() throws -> Token {
        while true {
            tokenStart = position
            guard position < count else { return .endOfDocument }
            guard base[position] == UInt8(ascii: "<") else {
                try readText()
                return .text
            }
            guard position + 1 < count else { throw truncated("a tag", at: position) }
            switch base[position + 1] {
            case UInt8(ascii: "/"):
                position += 2
                try readName()
                skipSpace()
                guard position < count else { throw truncated("an end tag", at: tokenStart) }
                guard base[position] == UInt8(ascii: ">") else { throw error("an end tag is not closed with '>'") }
                position += 1
                return .end
            case UInt8(ascii: "!"):
                if remaining.starts(with: "<!--".utf8) {
                    guard let end = find("--", from: position + 4) else { throw truncated("a comment", at: tokenStart) }
                    guard end + 2 < count else { throw truncated("a comment", at: tokenStart) }
                    guard base[end + 2] == UInt8(ascii: ">") else { throw error("a comment holds '--'", at: end) }
                    position = end + 3
                    continue
                }
                if remaining.starts(with: "<![CDATA[".utf8) {
                    guard let end = find("]]>", from: position + 9) else {
                        throw truncated("a CDATA section", at: tokenStart)
                    }
                    textStart = position + 9
                    textLength = end - textStart
                    textNeedsDecoding = false
                    try checkCharacters(from: textStart, to: end, cdata: true)
                    position = end + 3
                    return .text
                }
                throw error("a document type or other declaration can only come before the root element")
            case UInt8(ascii: "?"):
                guard let end = find("?>", from: position + 2) else {
                    throw truncated("a processing instruction", at: tokenStart)
                }
                let target = UnsafeRawBufferPointer(rebasing: bytes[(position + 2)..<min(position + 6, end)])
                if target.count >= 3, target[0] | 0x20 == UInt8(ascii: "x"), target[1] | 0x20 == UInt8(ascii: "m"),
                    target[2] | 0x20 == UInt8(ascii: "l"), target.count == 3 || ByteText.isSpace(target[3])
                {
                    throw error("an XML declaration can only come at the very start")
                }
                position = end + 2
                continue
            default:
                position += 1
                try readStartTag()
                return .start
            }
        }
    }

    @inline(__always)
    private mutating func readName() throws {
        guard position < count else { throw truncated("a tag", at: tokenStart) }
        guard ByteText.isNameStartByte(base[position]) else { throw error("expected a name", at: position) }
        nameStart = position
        position += 1
        while position < count, ByteText.isNameByte(base[position]) { position += 1 }
        nameLength = position - nameStart
    }

    /// How many attributes a start tag's duplicate check compares one by one before it uses a set.
    private static let attributesComparedDirectly = 16

    /// An attribute's name in the document, compared and hashed by its bytes.
    private struct AttributeName: Hashable {
        let bytes: UnsafeRawBufferPointer

        func hash(into hasher: inout Hasher) { hasher.combine(bytes: bytes) }

        static func == (lhs: AttributeName, rhs: AttributeName) -> Bool {
            guard lhs.bytes.count == rhs.bytes.count else { return false }
            guard let left = lhs.bytes.baseAddress, let right = rhs.bytes.baseAddress else { return true }
            return memcmp(left, right, lhs.bytes.count) == 0
        }
    }

    private mutating func readStartTag() throws {
        try readName()
        attributes.removeAll(keepingCapacity: true)
        var names = Set<AttributeName>()
        isEmptyElement = false
        while true {
            let before = position
            skipSpace()
            guard position < count else { throw truncated("the tag <\(nameText)>", at: tokenStart) }
            let byte = base[position]
            if byte == UInt8(ascii: ">") {
                position += 1
                return
            }
            if byte == UInt8(ascii: "/") {
                guard position + 1 < count else { throw truncated("the tag <\(nameText)>", at: tokenStart) }
                guard base[position + 1] == UInt8(ascii: ">") else { throw error("expected '/>'", at: position) }
                position += 2
                isEmptyElement = true
                return
            }
            guard position > before else { throw error("attributes must be separated by white space", at: position) }
            let attributeNameStart = position
            guard ByteText.isNameStartByte(byte) else {
                throw error("expected an attribute name or the end of the tag <\(nameText)>", at: position)
            }
            while position < count, ByteText.isNameByte(base[position]) { position += 1 }
            let attributeNameLength = position - attributeNameStart
            skipSpace()
            guard position < count, base[position] == UInt8(ascii: "=") else {
                if position >= count { throw truncated("the tag <\(nameText)>", at: tokenStart) }
                throw error("expected '=' after an attribute name", at: position)
            }
            position += 1
            skipSpace()
            guard position < count else { throw truncated("the tag <\(nameText)>", at: tokenStart) }
            let quote = base[position]
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw error("an attribute value must be in quotes", at: position)
            }
            position += 1
            let valueStart = position
            guard let found = memchr(base + position, Int32(quote), count - position) else {
                throw truncated("the tag <\(nameText)>", at: tokenStart)
            }
            let valueEnd = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            var needsDecoding = false
            for index in valueStart..<valueEnd {
                let value = base[index]
                if value == UInt8(ascii: "<") { throw error("an attribute value holds '<'", at: index) }
                if value == UInt8(ascii: "&") || value == 0x09 || value == 0x0A || value == 0x0D {
                    needsDecoding = true
                } else if value < 0x20 {
                    throw error(
                        "an attribute value holds the control character 0x\(String(value, radix: 16))", at: index)
                }
            }
            position = valueEnd + 1
            let attribute = Attribute(
                nameStart: attributeNameStart, nameLength: attributeNameLength, valueStart: valueStart,
                valueLength: valueEnd - valueStart, needsDecoding: needsDecoding)
            // Each name is checked against the earlier ones: by comparison while there are few, then in a
            // set, so that an element with 100,000 attributes takes linear time.
            let name = AttributeName(
                bytes: UnsafeRawBufferPointer(start: base + attributeNameStart, count: attributeNameLength))
            var isRepeated = false
            if attributes.count < Self.attributesComparedDirectly {
                isRepeated = attributes.contains { other in
                    other.nameLength == attributeNameLength
                        && memcmp(base + other.nameStart, base + attributeNameStart, attributeNameLength) == 0
                }
            } else {
                if attributes.count == Self.attributesComparedDirectly {
                    names = Set(
                        attributes.map {
                            AttributeName(
                                bytes: UnsafeRawBufferPointer(start: base + $0.nameStart, count: $0.nameLength))
                        })
                }
                isRepeated = !names.insert(name).inserted
            }
            if isRepeated {
                throw error(
                    "the attribute '\(String(decoding: name.bytes, as: UTF8.self))' appears twice",
                    at: attributeNameStart)
            }
            attributes.append(attribute)
        }
    }

    private mutating func readText() throws {
        let start = position
        let end: Int
        if let found = memchr(base + position, Int32(UInt8(ascii: "<")), count - position) {
            end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        } else {
            end = count
        }
        textStart = start
        textLength = end - start
        textNeedsDecoding = try checkCharacters(from: start, to: end, cdata: false)
        position = end
    }

    /// Refuses control characters (and `]]>` outside CDATA); returns whether the text has references or
    /// carriage returns to decode.
    @discardableResult
    private func checkCharacters(from start: Int, to end: Int, cdata: Bool) throws -> Bool {
        var needsDecoding = false
        var index = start
        while index < end {
            let byte = base[index]
            if byte < 0x20 {
                if byte == 0x0D {
                    needsDecoding = true
                } else if byte != 0x09 && byte != 0x0A {
                    throw error(
                        "the text holds the control character 0x\(String(byte, radix: 16)), which XML 1.0 cannot carry",
                        at: index)
                }
            } else if byte == UInt8(ascii: "&") {
                needsDecoding = true
            } else if byte == UInt8(ascii: ">") && !cdata && index >= start + 2 && base[index - 1] == UInt8(ascii: "]")
                && base[index - 2] == UInt8(ascii: "]")
            {
                throw error("the text holds ']]>'", at: index - 2)
            }
            index += 1
        }
        return needsDecoding && !cdata
    }

    /// Whether the current text token is white space only.
    package var isSpaceText: Bool {
        for index in textStart..<(textStart + textLength) where !ByteText.isSpace(base[index]) { return false }
        return true
    }

    // MARK: Reading structure

    /// The next child element of the element `parent`, skipping white space: true at a child's start tag,
    /// false at `parent`'s end tag.
    package mutating func nextChild(of parent: StaticString) throws -> Bool {
        while true {
            switch try next() {
            case .start:
                return true
            case .end:
                guard isNamed(parent) else {
                    throw error("expected </\(parent)>, found </\(nameText)>")
                }
                return false
            case .text:
                guard isSpaceText else {
                    throw error(
                        "unexpected text '\(ByteText.excerpt(UnsafeRawBufferPointer(start: base + textStart, count: textLength)))' in <\(parent)>"
                    )
                }
            case .endOfDocument:
                throw truncated("<\(parent)>", at: position)
            }
        }
    }

    /// The text content of the element whose start tag was just read, up to its end tag, with references
    /// decoded: a slice of the document when it needs no decoding, else the scratch buffer.
    package mutating func text(of element: StaticString) throws -> UnsafeRawBufferPointer {
        if isEmptyElement { return UnsafeRawBufferPointer(start: base, count: 0) }
        let elementStart = tokenStart
        var single: UnsafeRawBufferPointer?
        var pieces = 0
        while true {
            switch try next() {
            case .text:
                let piece = UnsafeRawBufferPointer(start: base + textStart, count: textLength)
                if pieces == 0 && !textNeedsDecoding {
                    single = piece
                } else {
                    // The scratch buffer is started with the first piece that cannot be a slice.
                    if pieces == 0 || single != nil { scratch.removeAll() }
                    if let first = single {
                        scratch.append(first)
                        single = nil
                    }
                    if textNeedsDecoding {
                        try decode(piece, at: textStart, attribute: false)
                    } else {
                        scratch.append(piece)
                    }
                }
                pieces += 1
            case .end:
                guard isNamed(element) else {
                    throw error("expected </\(element)>, found </\(nameText)>")
                }
                if pieces == 0 { return UnsafeRawBufferPointer(start: base, count: 0) }
                return single ?? scratch.bytes
            case .start:
                throw error("<\(element)> holds text only, but holds the element <\(nameText)>")
            case .endOfDocument:
                throw truncated("<\(element)>", at: elementStart)
            }
        }
    }

    /// Skips the content of the element whose start tag was just read, through its end tag.
    package mutating func skipElement() throws {
        guard !isEmptyElement else { return }
        var open: [(start: Int, length: Int)] = [(nameStart, nameLength)]
        while let top = open.last {
            switch try next() {
            case .start:
                guard open.count < Self.maximumDepth else {
                    throw error("elements are nested more than \(Self.maximumDepth) deep")
                }
                if !isEmptyElement { open.append((nameStart, nameLength)) }
            case .end:
                guard nameLength == top.length, memcmp(base + nameStart, base + top.start, nameLength) == 0 else {
                    throw error(
                        "expected </\(String(decoding: bytes[top.start..<(top.start + top.length)], as: UTF8.self))>, "
                            + "found </\(nameText)>")
                }
                open.removeLast()
            case .text:
                continue
            case .endOfDocument:
                throw truncated("an element", at: position)
            }
        }
    }

    // MARK: Attributes

    /// The value of the current start tag's attribute `name`, decoded (a slice of the document or the
    /// scratch buffer), or `nil` when the tag does not have it.
    package mutating func attribute(_ name: StaticString) throws -> UnsafeRawBufferPointer? {
        for index in attributes.indices
        where attributes[index].nameLength == name.utf8CodeUnitCount
            && memcmp(base + attributes[index].nameStart, name.utf8Start, attributes[index].nameLength) == 0
        {
            return try attributeBytes(at: index)
        }
        return nil
    }

    /// The decoded value of the current tag's attribute at `index` (a slice of the document or the scratch
    /// buffer).
    package mutating func attributeBytes(at index: Int) throws -> UnsafeRawBufferPointer {
        let attribute = attributes[index]
        let raw = UnsafeRawBufferPointer(start: base + attribute.valueStart, count: attribute.valueLength)
        guard attribute.needsDecoding else { return raw }
        scratch.removeAll()
        try decode(raw, at: attribute.valueStart, attribute: true)
        return scratch.bytes
    }

    /// The decoded value of the current tag's attribute at `index` as a string.
    package mutating func attributeValue(at index: Int) throws -> String {
        guard let text = ByteText.string(try attributeBytes(at: index)) else {
            throw error("an attribute value is not valid UTF-8")
        }
        return text
    }

    /// The value of attribute `name` as a string.
    package mutating func attributeText(_ name: StaticString) throws -> String? {
        guard let bytes = try attribute(name) else { return nil }
        guard let text = ByteText.string(bytes) else { throw error("the attribute '\(name)' is not valid UTF-8") }
        return text
    }

    /// Refuses attributes other than `allowed` on the current start tag.
    package func allowAttributes(_ allowed: [StaticString]) throws {
        for attribute in attributes {
            let name = UnsafeRawBufferPointer(start: base + attribute.nameStart, count: attribute.nameLength)
            guard allowed.contains(where: { ByteText.equals(name, $0) }) else {
                throw error(
                    "<\(nameText)> has an attribute '\(String(decoding: name, as: UTF8.self))' the format does not know"
                )
            }
        }
    }

    // MARK: Decoding

    /// Appends `raw` to the scratch buffer with references decoded and line ends normalised; in attribute
    /// values, white space characters become spaces.
    private func decode(_ raw: UnsafeRawBufferPointer, at offset: Int, attribute: Bool) throws {
        var index = 0
        let count = raw.count
        while index < count {
            let byte = raw[index]
            switch byte {
            case UInt8(ascii: "&"):
                var end = index + 1
                while end < count, end - index <= 12, raw[end] != UInt8(ascii: ";") { end += 1 }
                guard end < count, raw[end] == UInt8(ascii: ";") else {
                    if offset + count == self.count { throw truncated("a reference", at: offset + index) }
                    throw error("a '&' does not start a reference ending in ';'", at: offset + index)
                }
                let reference = UnsafeRawBufferPointer(rebasing: raw[(index + 1)..<end])
                if let scalar = try Self.scalar(of: reference) {
                    for unit in UTF8.encode(scalar)! { scratch.append(unit) }
                } else {
                    throw error(
                        "the reference '&\(String(decoding: reference, as: UTF8.self));' is not defined",
                        at: offset + index)
                }
                index = end + 1
                continue
            case 0x0D:
                scratch.append(attribute ? 0x20 : 0x0A)
                if index + 1 < count && raw[index + 1] == 0x0A { index += 1 }
            case 0x0A, 0x09:
                scratch.append(attribute ? 0x20 : byte)
            default:
                scratch.append(byte)
            }
            index += 1
        }
    }

    private static func scalar(of reference: UnsafeRawBufferPointer) throws -> Unicode.Scalar? {
        if ByteText.equals(reference, "lt") { return "<" }
        if ByteText.equals(reference, "gt") { return ">" }
        if ByteText.equals(reference, "amp") { return "&" }
        if ByteText.equals(reference, "quot") { return "\"" }
        if ByteText.equals(reference, "apos") { return "'" }
        guard reference.count >= 2, reference[0] == UInt8(ascii: "#") else { return nil }
        var value: UInt32 = 0
        let hex = reference[1] == UInt8(ascii: "x")
        let digits = UnsafeRawBufferPointer(rebasing: reference[(hex ? 2 : 1)...])
        guard !digits.isEmpty else { return nil }
        for byte in digits {
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f") where hex: digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F") where hex: digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value * (hex ? 16 : 10) + digit
            if value > 0x10FFFF { return nil }
        }
        // Only the characters XML 1.0 allows.
        switch value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return Unicode.Scalar(value)
        default: return nil
        }
    }
}
