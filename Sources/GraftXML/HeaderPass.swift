internal import CLibXML2
import Foundation
@_spi(GraftInternal) import GraftCore

/// Reads a document's start: checks that the root is `<database>`, and reads `<databaseInfo>` (version,
/// UUID, the metadata property list). Stops at the first `<object>` or the end of `<databaseInfo>`.
final class HeaderPass: SAXPass {
    /// What `<databaseInfo>` holds.
    struct Header {
        var hasDatabaseInfo = false
        var version: String?
        var uuid: String?
        /// The line `<UUID>` starts on.
        var uuidLine = 0
        var nextObjectID: String?
        var metadata: PropertyList.Dictionary = [:]
        /// The byte offset just after the root's start tag, where objects may begin.
        var bodyOffset = 0
        /// Whether libxml2 converts the document from an encoding other than UTF-8.
        var isTranscoded = false
    }

    private(set) var header = Header()
    private var depth = 0
    private enum Capture { case none, version, uuid, nextObjectID }
    private var capture = Capture.none
    private var text = ""
    /// The `<metadata>` element re-serialized from the SAX events, and the line it starts on.
    private var metadataXML: ByteBuffer?
    private var metadataDepth = 0
    private var metadataLine = 0

    static func read(url: URL, path: String) throws -> Header {
        let pass = HeaderPass(url: url, path: path)
        var handler = baseHandler()
        handler.startElementNs = { context, localName, _, _, _, _, attributeCount, _, attributes in
            let pass = Unmanaged<HeaderPass>.fromOpaque(context!).takeUnretainedValue()
            pass.start(localName!, SAXAttributes(pointer: attributes, count: Int(attributeCount)))
        }
        handler.endElementNs = { context, localName, _, _ in
            Unmanaged<HeaderPass>.fromOpaque(context!).takeUnretainedValue().end(localName!)
        }
        handler.characters = { context, characters, length in
            Unmanaged<HeaderPass>.fromOpaque(context!).takeUnretainedValue().characters(characters!, Int(length))
        }
        handler.cdataBlock = handler.characters
        try pass.run(handler)
        if !pass.finished && pass.depth == 0 && pass.header.bodyOffset == 0 {
            throw GraftError(.malformedInput, "the document has no root element", context: [.file(path)])
        }
        return pass.header
    }

    private func start(_ name: UnsafePointer<UInt8>, _ attributes: SAXAttributes) {
        depth += 1
        if let metadataXML {
            metadataDepth += 1
            metadataXML.append(UInt8(ascii: "<"))
            metadataXML.append(name, count: strlen(name))
            for (attribute, value) in attributes.all {
                metadataXML.append(UInt8(ascii: " "))
                metadataXML.append(string: attribute)
                metadataXML.append("=\"")
                var value = value
                _ = value.withUTF8 {
                    XMLText.appendEscaped(UnsafeRawBufferPointer($0), to: metadataXML, inAttribute: true)
                }
                metadataXML.append(UInt8(ascii: "\""))
            }
            metadataXML.append(UInt8(ascii: ">"))
            return
        }
        switch depth {
        case 1:
            guard Bytes.equal(name, "database") else {
                fail(
                    error(
                        .unsupportedFormat,
                        "the root element is <\(String(cString: name))>, not <database>: this is not a Core Data XML store"
                    ))
                return
            }
            header.bodyOffset = Int(xmlByteConsumed(parser!))
            header.isTranscoded = isTranscoding
        case 2:
            if Bytes.equal(name, "databaseInfo") {
                header.hasDatabaseInfo = true
            } else if Bytes.equal(name, "object") {
                finished = true
                stop()
            } else {
                fail(error(.malformedInput, "unexpected element <\(String(cString: name))> in <database>"))
            }
        case 3:
            text = ""
            if Bytes.equal(name, "version") {
                capture = .version
            } else if Bytes.equal(name, "UUID") {
                capture = .uuid
                header.uuidLine = line
            } else if Bytes.equal(name, "nextObjectID") {
                capture = .nextObjectID
            } else if Bytes.equal(name, "metadata") {
                metadataXML = ByteBuffer()
                metadataXML!.append("<metadata>")
                metadataDepth = 0
                metadataLine = line
            } else {
                capture = .none
            }
        default:
            break
        }
    }

    private func end(_ name: UnsafePointer<UInt8>) {
        defer { depth -= 1 }
        if let metadataXML {
            if metadataDepth == 0 {
                metadataXML.append("</metadata>")
                self.metadataXML = nil
                decodeMetadata(metadataXML)
            } else {
                metadataDepth -= 1
                metadataXML.append("</")
                metadataXML.append(name, count: strlen(name))
                metadataXML.append(UInt8(ascii: ">"))
            }
            return
        }
        if depth == 3 {
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            switch capture {
            case .version: header.version = value
            case .uuid: header.uuid = value
            case .nextObjectID: header.nextObjectID = value
            case .none: break
            }
            capture = .none
        } else if depth == 2 {
            // The end of <databaseInfo>: all the header there is.
            finished = true
            stop()
        }
    }

    private func characters(_ characters: UnsafePointer<UInt8>, _ length: Int) {
        if let metadataXML {
            _ = XMLText.appendEscaped(
                UnsafeRawBufferPointer(start: characters, count: length), to: metadataXML, inAttribute: false)
        } else if capture != .none {
            text += Bytes.string(characters, length)
        }
    }

    /// Decodes the `<plist>` inside `<metadata>` (or, failing a `<plist>`, its first element; failing an
    /// element, a property list written as text).
    private func decodeMetadata(_ xml: ByteBuffer) {
        do {
            var scanner = XMLScanner(xml.bytes, documentName: XMLPropertyList.documentName)
            try scanner.readRoot()
            let metadata = scanner
            var found: PropertyList?
            var firstChild: XMLScanner?
            scan: while true {
                switch try scanner.next() {
                case .start:
                    if scanner.isNamed("plist") {
                        found = try XMLPropertyList.decode(&scanner)
                        break scan
                    }
                    if firstChild == nil { firstChild = scanner }
                    try scanner.skipElement()
                case .end, .endOfDocument:
                    break scan
                case .text:
                    continue
                }
            }
            if found == nil, var child = firstChild { found = try XMLPropertyList.decode(&child) }
            if found == nil {
                var whole = metadata
                let text = ByteText.trimmed(try whole.text(of: "metadata"))
                guard !text.isEmpty else { return }  // <metadata></metadata>, as framework version 46 wrote it
                found = try XMLPropertyList.decode(Data(text))
            }
            guard let value = found else { return }
            guard case .dictionary(let dictionary) = value else {
                fail(
                    GraftError(
                        .malformedInput, "the metadata is a \(value.typeName), not a dictionary",
                        context: [.file(path), .line(metadataLine)]))
                return
            }
            header.metadata = dictionary
        } catch var error as GraftError {
            // Lines in the re-serialized element count from its start.
            error.context = error.context.compactMap { location -> GraftError.Location? in
                switch location {
                case .file, .offset: return nil  // the offset is in the re-serialized element
                case .line(let line): return .line(line + metadataLine - 1)
                default: return location
                }
            }
            error.context.insert(.file(path), at: 0)
            if !error.message.hasPrefix("metadata") { error.message = "metadata: " + error.message }
            fail(error)
        } catch {
            fail(error)
        }
    }
}
