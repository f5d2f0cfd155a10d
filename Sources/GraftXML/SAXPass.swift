internal import CLibXML2
import Foundation
import GraftCore
import GraftModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One streaming pass over an XML document with libxml2's SAX2 push parser.
///
/// The file is read in fixed-size pieces and fed to `xmlParseChunk`, so memory stays bounded whatever
/// the document's size. Parsing is safe for untrusted input: nothing is fetched from the network
/// (`XML_PARSE_NONET`), the external DTD is never loaded (no `externalSubset` or `resolveEntity`
/// callback, no `XML_PARSE_DTDLOAD`), entities are never substituted (no `XML_PARSE_NOENT`), and a
/// document that declares one is refused; libxml2's limits on nesting depth, names and text stay on
/// (no `XML_PARSE_HUGE`). libxml2's error printing is silenced for this parser (`XMLErrors.silence(parser:)`);
/// its errors come back as `GraftError`s with the line.
///
/// Subclasses fill a handler with their callbacks; each callback receives the pass as its context.
class SAXPass {
    let url: URL
    /// The path errors name.
    let path: String
    /// The parser, while a pass runs.
    @exclusivity(unchecked) var parser: xmlParserCtxtPtr?
    /// The first failure seen by a callback (a `GraftError`, or whatever the caller's closure threw).
    var failure: (any Error)?
    /// Set by a pass that has seen all it needs.
    var finished = false

    static let chunkSize = 256 * 1024

    init(url: URL, path: String) {
        self.url = url
        self.path = path
    }

    /// The line the parser is on, in the document.
    var line: Int { parserLine + lineShift }
    /// The line the parser is on, in what it is fed.
    var parserLine: Int { parser.map { Int(xmlSAX2GetLineNumber(UnsafeMutableRawPointer($0))) } ?? 0 }
    /// What to add to the parser's line for the document's (when it is fed pieces of the document).
    var lineShift = 0

    /// Records a failure and stops the parser.
    func fail(_ error: any Error) {
        if failure == nil { failure = error }
        stop()
    }

    /// A `GraftError` at the current line.
    func error(_ code: GraftError.Code, _ message: String, _ context: [GraftError.Location] = []) -> GraftError {
        GraftError(code, message, context: [.file(path), .line(line)] + context)
    }

    /// Stops the parser after the current callback.
    func stop() {
        if let parser { xmlStopParser(parser) }
    }

    /// A handler with the callbacks every pass shares: refusing entity declarations and unexpanded
    /// entity references, and silent errors.
    static func baseHandler() -> xmlSAXHandler {
        var handler = xmlSAXHandler()
        handler.initialized = 0xDEED_BEAF  // XML_SAX2_MAGIC
        handler.entityDecl = { context, name, type, _, _, _ in
            let pass = Unmanaged<SAXPass>.fromOpaque(context!).takeUnretainedValue()
            pass.fail(pass.error(.malformedInput, XMLErrors.entityDeclarationMessage(name, type: type)))
        }
        handler.reference = { context, name in
            let pass = Unmanaged<SAXPass>.fromOpaque(context!).takeUnretainedValue()
            let entity = name.map { String(cString: $0) } ?? "?"
            pass.fail(pass.error(.malformedInput, "the document refers to the undeclared entity '&\(entity);'"))
        }
        handler.serror = { _, _ in }
        return handler
    }

    /// Parses the file from the start with `handler`, until the end, a failure, or `finished`.
    ///
    /// - Throws: the first failure a callback recorded; `GraftError.malformedInput` with the line when
    ///   the document is not well-formed; `GraftError.io` when the file cannot be read.
    func run(_ handler: xmlSAXHandler) throws {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw GraftError(.io, "cannot be opened: \(String(cString: strerror(errno)))", context: [.file(path)])
        }
        defer { close(descriptor) }
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.chunkSize)
        defer { buffer.deallocate() }
        try run(handler) { feed in
            while true {
                let length = try read(descriptor, into: buffer)
                if length == 0 { return }
                guard try feed(UnsafeRawBufferPointer(start: buffer, count: length)) else { return }
            }
        }
    }

    /// Parses the document `produce` hands to `feed` in pieces (`feed` returns `false` once the parse has
    /// stopped: a failure, `finished`, or XML that is not well-formed), until `produce` returns.
    func run(
        _ handler: xmlSAXHandler,
        producing produce: (_ feed: (UnsafeRawBufferPointer) throws -> Bool) throws -> Void
    ) throws {
        var handler = handler
        var context: xmlParserCtxtPtr?
        defer {
            parser = nil
            if let context { xmlFreeParserCtxt(context) }
        }
        // The first bytes let libxml2 detect the encoding; the rest follows in pieces.
        func create(_ head: UnsafePointer<CChar>?, _ count: Int) throws -> xmlParserCtxtPtr {
            guard
                let created = xmlCreatePushParserCtxt(
                    &handler, Unmanaged.passUnretained(self).toOpaque(), head, Int32(count), path)
            else {
                throw GraftError(.io, "libxml2 could not create a parser", context: [.file(path)])
            }
            XMLErrors.silence(parser: UnsafeMutableRawPointer(created))
            let options =
                Int32(XML_PARSE_NONET.rawValue) | Int32(XML_PARSE_NOERROR.rawValue)
                | Int32(XML_PARSE_NOWARNING.rawValue)
            xmlCtxtUseOptions(created, options)
            context = created
            parser = created
            return created
        }
        try produce { chunk in
            guard chunk.count > 0 else { return true }
            var bytes = chunk.baseAddress!.assumingMemoryBound(to: CChar.self)
            var length = chunk.count
            let parsing: xmlParserCtxtPtr
            if let context {
                parsing = context
            } else {
                let head = min(length, 4)
                parsing = try create(bytes, head)
                bytes += head
                length -= head
            }
            if length > 0 { _ = xmlParseChunk(parsing, bytes, Int32(length), 0) }
            return failure == nil && !finished && parsing.pointee.wellFormed != 0
        }
        if let failure { throw failure }
        if finished { return }
        let parsed = try context ?? create(nil, 0)
        if parsed.pointee.wellFormed != 0 { _ = xmlParseChunk(parsed, nil, 0, 1) }
        if let failure { throw failure }
        if finished { return }
        if parsed.pointee.wellFormed == 0 {
            var error = XMLErrors.error(
                ofParser: UnsafeMutableRawPointer(parsed), path: path, fallback: "the document is not well-formed XML")
            error.message = "not well-formed XML: " + error.message
            if error.message.contains("Huge input lookup") || error.message.contains("too long")
                || error.message.contains("huge")
            {
                error.message +=
                    " (a tag or value is longer than libxml2's 10,000,000-byte limit, which Graft keeps on for safety; "
                    + "in an XML store that is usually the idrefs of a relationship holding about a million objects)"
            }
            throw error
        }
    }

    /// The offset in the document of the byte the parser is at (in a callback: just after what it reports).
    var byteOffset: Int { parser.map { Int(xmlByteConsumed($0)) } ?? 0 }

    private func read(_ descriptor: Int32, into buffer: UnsafeMutablePointer<UInt8>) throws -> Int {
        var total = 0
        while total < Self.chunkSize {
            let count = systemRead(descriptor, buffer + total, Self.chunkSize - total)
            if count < 0 {
                if errno == EINTR { continue }
                throw GraftError(.io, "cannot be read: \(String(cString: strerror(errno)))", context: [.file(path)])
            }
            if count == 0 { break }
            total += count
        }
        return total
    }

    /// Whether libxml2 converts the document from another encoding than UTF-8.
    var isTranscoding: Bool {
        guard let parser, let input = parser.pointee.input, let buffer = input.pointee.buf else { return false }
        return buffer.pointee.encoder != nil
    }
}

/// `read(2)`, under a name the pass's own `read` does not hide.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// The attributes of a start tag as SAX2 delivers them: five pointers each (local name, prefix,
/// namespace, value start, value end).
struct SAXAttributes {
    let pointer: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    let count: Int

    /// The value of the attribute with this local name.
    @inline(__always)
    func value(_ name: StaticString) -> UnsafeRawBufferPointer? {
        guard let pointer else { return nil }
        for index in 0..<count {
            guard let localName = pointer[index * 5], Bytes.equal(localName, name),
                let start = pointer[index * 5 + 3], let end = pointer[index * 5 + 4]
            else { continue }
            return UnsafeRawBufferPointer(start: start, count: end - start)
        }
        return nil
    }

    /// Every attribute as (name, value) strings.
    var all: [(name: String, value: String)] {
        guard let pointer else { return [] }
        return (0..<count).compactMap { index in
            guard let localName = pointer[index * 5], let start = pointer[index * 5 + 3],
                let end = pointer[index * 5 + 4]
            else { return nil }
            return (String(cString: localName), Bytes.string(start, end - start))
        }
    }
}

extension UnsafeRawBufferPointer {
    @inline(__always)
    var bytePointer: UnsafePointer<UInt8> {
        baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
    }
}
