internal import CLibXML2
import Foundation
@_spi(GraftInternal) import GraftCore

/// A small, read-only XML element tree parsed with libxml2, for documents that fit in memory
/// (model files).
///
/// Parsing is safe for untrusted input: nothing is fetched from the network, external DTDs are not
/// loaded, a document that declares an entity (general or parameter, internal or external) is refused
/// as soon as the declaration is read, libxml2's limits on nesting depth and text size stay on, and an
/// element may have at most ``XMLTree/maximumAttributes`` attributes (libxml2 takes time quadratic in
/// an element's attributes). Errors carry the line where the document went wrong.
///
/// For example:
///
/// ```swift
/// let root = try XMLTree.parse(data, path: "Model.xcdatamodel/contents")
/// for entity in root.children(named: "entity") { print(entity["name"] ?? "?") }
/// ```
package final class XMLElement: @unchecked Sendable {
    package let name: String
    /// Attributes in document order.
    package let attributes: [(name: String, value: String)]
    package private(set) var children: [XMLElement] = []
    /// The element's own text (concatenated text and CDATA children).
    package private(set) var text: String = ""
    /// The line the element starts on.
    package let line: Int

    init(name: String, attributes: [(name: String, value: String)], line: Int) {
        self.name = name
        self.attributes = attributes
        self.line = line
    }

    /// The value of the attribute with this name.
    package subscript(attribute: String) -> String? {
        attributes.first { $0.name == attribute }?.value
    }

    /// Child elements with this name, in document order.
    package func children(named name: String) -> [XMLElement] { children.filter { $0.name == name } }

    /// The first child element with this name.
    package func child(named name: String) -> XMLElement? { children.first { $0.name == name } }

    fileprivate func append(_ child: XMLElement) { children.append(child) }
    fileprivate func appendText(_ text: String) { self.text += text }
}

package enum XMLTree {
    /// The most attributes an element may have. Xcode's model files have at most a couple of dozen on
    /// an element and property lists one; libxml2 (2.9) checks each attribute against the element's
    /// earlier ones and appends it at the end of a list, so reading an element takes time quadratic in
    /// its attributes (100,000 took 20 seconds), and the bound keeps a document's reading linear.
    package static let maximumAttributes = 256

    /// Parses a whole document and returns its root element.
    ///
    /// - Parameter path: used in error messages only.
    /// - Throws: `GraftError.malformedInput` with the line and libxml2's message; for a document that
    ///   declares an entity; for an element with more than ``maximumAttributes`` attributes.
    package static func parse(_ data: Data, path: String? = nil) throws -> XMLElement {
        let file: [GraftError.Location] = path.map { [.file($0)] } ?? []
        guard data.count <= Int(Int32.max) else {
            throw GraftError(.malformedInput, "the XML document is larger than 2 GB", context: file)
        }
        try data.withUnsafeBytes { try checkAttributeCounts(in: $0, context: file) }
        guard let parser = XMLErrors.newParserContext() else {
            throw GraftError(.io, "libxml2 could not create a parser")
        }
        defer { xmlFreeParserCtxt(parser) }
        let refusal = XMLErrors.EntityRefusal()
        refusal.install(in: parser)
        defer { refusal.remove(from: parser) }
        let options =
            Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue)
            | Int32(XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)
        let document = data.withUnsafeBytes { bytes -> xmlDocPtr? in
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self) else { return nil }
            return xmlCtxtReadMemory(parser, base, Int32(bytes.count), path ?? "document.xml", nil, options)
        }
        if let message = refusal.message {
            if let document { xmlFreeDoc(document) }
            throw GraftError(.malformedInput, message, context: file + [.line(refusal.line)])
        }
        guard let document, parser.pointee.wellFormed != 0 else {
            if let document { xmlFreeDoc(document) }
            throw XMLErrors.error(of: parser, path: path, fallback: "the document is not well-formed XML")
        }
        defer { xmlFreeDoc(document) }
        guard let rootNode = xmlDocGetRootElement(document) else {
            throw GraftError(.malformedInput, "the XML document has no root element", context: file)
        }
        return build(rootNode)
    }

    /// Refuses a document with an element of more than ``maximumAttributes`` attributes, before libxml2
    /// reads it: one pass over the bytes that counts the `=` outside quotes in each start tag, skipping
    /// comments, CDATA sections, processing instructions, end tags and the document type declaration.
    /// Whatever else is wrong with the document is left to libxml2.
    static func checkAttributeCounts(in bytes: UnsafeRawBufferPointer, context: [GraftError.Location]) throws {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let count = bytes.count
        func starts(_ prefix: StaticString, at index: Int) -> Bool {
            let length = prefix.utf8CodeUnitCount
            return index + length <= count && memcmp(base + index, prefix.utf8Start, length) == 0
        }
        /// The index just after the next `terminator` from `index`, or `count` when there is none.
        func after(_ terminator: StaticString, from index: Int) -> Int {
            let length = terminator.utf8CodeUnitCount
            var cursor = index
            while cursor + length <= count,
                let found = memchr(base + cursor, Int32(terminator.utf8Start[0]), count - cursor)
            {
                let at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if at + length <= count && memcmp(base + at, terminator.utf8Start, length) == 0 { return at + length }
                cursor = at + 1
            }
            return count
        }
        var index = 0
        while index < count, let found = memchr(base + index, Int32(UInt8(ascii: "<")), count - index) {
            let start = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            if starts("<!--", at: start) {
                index = after("-->", from: start + 4)
            } else if starts("<![CDATA[", at: start) {
                index = after("]]>", from: start + 9)
            } else if starts("<?", at: start) {
                index = after("?>", from: start + 2)
            } else if starts("<!", at: start) {
                // The document type, with any internal subset: brackets, quoted literals, comments and
                // processing instructions inside it.
                var cursor = start + 2
                var depth = 0
                var quote: UInt8 = 0
                while cursor < count {
                    let byte = base[cursor]
                    if quote != 0 {
                        if byte == quote { quote = 0 }
                    } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                        quote = byte
                    } else if byte == UInt8(ascii: "[") {
                        depth += 1
                    } else if byte == UInt8(ascii: "]") {
                        depth -= 1
                    } else if byte == UInt8(ascii: "<") && depth > 0 && starts("<!--", at: cursor) {
                        cursor = after("-->", from: cursor + 4)
                        continue
                    } else if byte == UInt8(ascii: "<") && depth > 0 && starts("<?", at: cursor) {
                        cursor = after("?>", from: cursor + 2)
                        continue
                    } else if byte == UInt8(ascii: ">") && depth <= 0 {
                        break
                    }
                    cursor += 1
                }
                index = cursor + 1
            } else if starts("</", at: start) {
                index = after(">", from: start + 2)
            } else {
                var cursor = start + 1
                var attributes = 0
                var quote: UInt8 = 0
                while cursor < count {
                    let byte = base[cursor]
                    if quote != 0 {
                        if byte == quote { quote = 0 }
                    } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                        quote = byte
                    } else if byte == UInt8(ascii: "=") {
                        attributes += 1
                        if attributes > maximumAttributes {
                            throw tooManyAttributes(base, start: start, count: count, context: context)
                        }
                    } else if byte == UInt8(ascii: ">") {
                        break
                    }
                    cursor += 1
                }
                index = cursor + 1
            }
        }
    }

    private static func tooManyAttributes(
        _ base: UnsafePointer<UInt8>, start: Int, count: Int, context: [GraftError.Location]
    ) -> GraftError {
        var end = start + 1
        while end < count, end - start <= 100, !" \t\r\n/>".utf8.contains(base[end]) { end += 1 }
        let name = String(decoding: UnsafeBufferPointer(start: base + start + 1, count: end - start - 1), as: UTF8.self)
        var line = 1
        var cursor = 0
        while cursor < start, let found = memchr(base + cursor, 0x0A, start - cursor) {
            line += 1
            cursor = base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
        }
        return GraftError(
            .malformedInput,
            "the element <\(name)> has more than \(maximumAttributes) attributes; Graft reads elements of at most "
                + "\(maximumAttributes) (model files and property lists have far fewer)",
            context: context + [.line(line)])
    }

    private static func build(_ node: xmlNodePtr) -> XMLElement {
        var attributes: [(name: String, value: String)] = []
        var attribute = node.pointee.properties
        while let current = attribute {
            let name = String(cString: current.pointee.name)
            var value = ""
            if let content = xmlNodeListGetString(node.pointee.doc, current.pointee.children, 1) {
                value = String(cString: content)
                cxml_free(content)
            }
            attributes.append((name, value))
            attribute = current.pointee.next
        }
        let element = XMLElement(
            name: String(cString: node.pointee.name), attributes: attributes, line: Int(xmlGetLineNo(node)))
        var child = node.pointee.children
        while let current = child {
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                element.append(build(current))
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = current.pointee.content { element.appendText(String(cString: content)) }
            case XML_ENTITY_REF_NODE:
                // Unexpanded entity references are kept as written rather than silently dropped.
                element.appendText("&\(String(cString: current.pointee.name));")
            default:
                break
            }
            child = current.pointee.next
        }
        return element
    }
}

/// libxml2 reports errors through callbacks that print to standard error by default. Graft gives every
/// parser its own silent handler and reads the error the parser recorded, so nothing reaches the
/// caller's stderr and parsers on different threads never see each other's errors.
package enum XMLErrors {
    private static let initialized: Bool = {
        xmlInitParser()
        return true
    }()

    /// A new parser context whose errors are recorded, not printed.
    static func newParserContext() -> xmlParserCtxtPtr? {
        _ = initialized
        guard let parser = xmlNewParserCtxt() else { return nil }
        silence(parser)
        return parser
    }

    /// Replaces the error and warning callbacks of a libxml2 parser context (an `xmlParserCtxtPtr`, given
    /// as a raw pointer so that no libxml2 type is in Graft's API) with ones that print nothing; errors
    /// are still recorded in the parser (`xmlCtxtGetLastError`).
    package static func silence(parser context: UnsafeMutableRawPointer) {
        silence(context.assumingMemoryBound(to: xmlParserCtxt.self))
    }

    static func silence(_ parser: xmlParserCtxtPtr) {
        if let sax = parser.pointee.sax {
            sax.pointee.serror = { _, _ in }
            sax.pointee.error = nil
            sax.pointee.warning = nil
        }
        parser.pointee.vctxt.error = nil
        parser.pointee.vctxt.warning = nil
    }

    /// ``XMLScanner/entityDeclarationMessage(_:)`` for a declaration libxml2 reports.
    ///
    /// - Parameters:
    ///   - name: the entity's name, as libxml2's `entityDecl` callback gives it.
    ///   - type: the callback's entity type (`XML_INTERNAL_PARAMETER_ENTITY`, …).
    package static func entityDeclarationMessage(_ name: UnsafePointer<UInt8>?, type: Int32) -> String {
        let text = name.map { String(cString: $0) } ?? "?"
        let isParameter =
            type == Int32(XML_INTERNAL_PARAMETER_ENTITY.rawValue)
            || type == Int32(XML_EXTERNAL_PARAMETER_ENTITY.rawValue)
        return XMLScanner.entityDeclarationMessage((isParameter ? "%" : "") + text)
    }

    /// Refuses entity declarations in a tree-building (DOM) parse: the parser's `entityDecl` callback
    /// records the first declaration and stops the parser, before the declaration takes effect.
    final class EntityRefusal {
        private(set) var message: String?
        private(set) var line = 0

        func install(in parser: xmlParserCtxtPtr) {
            parser.pointee._private = Unmanaged.passUnretained(self).toOpaque()
            parser.pointee.sax?.pointee.entityDecl = { context, name, type, _, _, _ in
                guard let parser = context?.assumingMemoryBound(to: xmlParserCtxt.self),
                    let refusal = parser.pointee._private
                else { return }
                let this = Unmanaged<EntityRefusal>.fromOpaque(refusal).takeUnretainedValue()
                if this.message == nil {
                    this.message = XMLErrors.entityDeclarationMessage(name, type: type)
                    this.line = Int(xmlSAX2GetLineNumber(context))
                }
                xmlStopParser(parser)
            }
        }

        func remove(from parser: xmlParserCtxtPtr) {
            parser.pointee._private = nil
        }
    }

    /// The error a libxml2 parser context (an `xmlParserCtxtPtr`, as a raw pointer) recorded, as a
    /// `GraftError` with the file and line.
    package static func error(ofParser context: UnsafeMutableRawPointer, path: String?, fallback: String) -> GraftError
    {
        error(of: context.assumingMemoryBound(to: xmlParserCtxt.self), path: path, fallback: fallback)
    }

    static func error(of parser: xmlParserCtxtPtr, path: String?, fallback: String) -> GraftError {
        var context: [GraftError.Location] = []
        if let path { context.append(.file(path)) }
        guard let error = xmlCtxtGetLastError(parser), error.pointee.code != 0 else {
            return GraftError(.malformedInput, fallback, context: context)
        }
        if error.pointee.line > 0 { context.append(.line(Int(error.pointee.line))) }
        let message = error.pointee.message.map { String(cString: $0) } ?? fallback
        return GraftError(.malformedInput, message.trimmingCharacters(in: .whitespacesAndNewlines), context: context)
    }
}
