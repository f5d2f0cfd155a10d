import CLibXML2
import Foundation

/// A small, read-only XML element tree parsed with libxml2, for documents that fit in memory
/// (model files, property lists).
///
/// Parsing is safe for untrusted input: nothing is fetched from the network, external entities and
/// DTDs are not loaded, entities are not substituted, and libxml2's limits on nesting depth and text
/// size stay on. Errors carry the line where the document went wrong.
///
/// For example:
///
/// ```swift
/// let root = try XMLTree.parse(data, path: "Model.xcdatamodel/contents")
/// for entity in root.children(named: "entity") { print(entity["name"] ?? "?") }
/// ```
public final class XMLElement: @unchecked Sendable {
    public let name: String
    /// Attributes in document order.
    public let attributes: [(name: String, value: String)]
    public private(set) var children: [XMLElement] = []
    /// The element's own text (concatenated text and CDATA children).
    public private(set) var text: String = ""
    /// The line the element starts on.
    public let line: Int

    init(name: String, attributes: [(name: String, value: String)], line: Int) {
        self.name = name
        self.attributes = attributes
        self.line = line
    }

    /// The value of the attribute with this name.
    public subscript(attribute: String) -> String? {
        attributes.first { $0.name == attribute }?.value
    }

    /// Child elements with this name, in document order.
    public func children(named name: String) -> [XMLElement] { children.filter { $0.name == name } }

    /// The first child element with this name.
    public func child(named name: String) -> XMLElement? { children.first { $0.name == name } }

    fileprivate func append(_ child: XMLElement) { children.append(child) }
    fileprivate func appendText(_ text: String) { self.text += text }
}

public enum XMLTree {
    /// Parses a whole document and returns its root element.
    ///
    /// - Parameter path: used in error messages only.
    /// - Throws: `GraftError.malformedInput` with the line and libxml2's message.
    public static func parse(_ data: Data, path: String? = nil) throws -> XMLElement {
        guard data.count <= Int(Int32.max) else {
            throw GraftError(
                .malformedInput, "the XML document is larger than 2 GB", context: path.map { [.file($0)] } ?? [])
        }
        guard let parser = XMLErrors.newParserContext() else {
            throw GraftError(.io, "libxml2 could not create a parser")
        }
        defer { xmlFreeParserCtxt(parser) }
        let options =
            Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue)
            | Int32(XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)
        let document = data.withUnsafeBytes { bytes -> xmlDocPtr? in
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self) else { return nil }
            return xmlCtxtReadMemory(parser, base, Int32(bytes.count), path ?? "document.xml", nil, options)
        }
        guard let document, parser.pointee.wellFormed != 0 else {
            if let document { xmlFreeDoc(document) }
            throw XMLErrors.error(of: parser, path: path, fallback: "the document is not well-formed XML")
        }
        defer { xmlFreeDoc(document) }
        guard let rootNode = xmlDocGetRootElement(document) else {
            throw GraftError(
                .malformedInput, "the XML document has no root element", context: path.map { [.file($0)] } ?? [])
        }
        if document.pointee.intSubset != nil, let entities = document.pointee.intSubset.pointee.entities,
            xmlHashSize(OpaquePointer(entities)) > 0
        {
            throw GraftError(
                .malformedInput, "the XML document declares entities, which Graft does not expand",
                context: path.map { [.file($0)] } ?? [])
        }
        return build(rootNode)
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
public enum XMLErrors {
    private static let initialized: Bool = {
        xmlInitParser()
        return true
    }()

    /// A new parser context whose errors are recorded, not printed.
    public static func newParserContext() -> xmlParserCtxtPtr? {
        _ = initialized
        guard let parser = xmlNewParserCtxt() else { return nil }
        silence(parser)
        return parser
    }

    /// Replaces a parser's error and warning callbacks with ones that print nothing; errors are still
    /// recorded in the parser (`xmlCtxtGetLastError`).
    public static func silence(_ parser: xmlParserCtxtPtr) {
        if let sax = parser.pointee.sax {
            sax.pointee.serror = { _, _ in }
            sax.pointee.error = nil
            sax.pointee.warning = nil
        }
        parser.pointee.vctxt.error = nil
        parser.pointee.vctxt.warning = nil
    }

    /// The error a parser recorded, as a `GraftError` with the file and line.
    public static func error(of parser: xmlParserCtxtPtr, path: String?, fallback: String) -> GraftError {
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
