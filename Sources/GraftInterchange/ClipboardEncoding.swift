import Foundation
@_spi(GraftInternal) import GraftCore

/// The four encodings of a clipboard document: Apple's XML and binary property lists, JSON, and an XML
/// format of Graft's own.
///
/// Every encoding carries the same document (see `Clipboard` and `Formats/clipboard.md`): the source
/// model's entities with the type of every attribute, the source store, the roots, the copied objects
/// and the references. Values are written as the model types them, so that each one reads back exactly:
/// integers in the full 64-bit range, doubles in their shortest round-trip form, decimals as strings of
/// their digits, dates as seconds since 2001-01-01 (not as property-list dates, which lose the fraction
/// in XML), and non-finite numbers, binary data and text XML cannot hold in a form each encoding states
/// in the document's `encoding` section.
///
/// Encoders write into a byte buffer and can hand it over in chunks; decoders read the bytes directly
/// (no Foundation JSON or property-list serialization) through one document walker (see
/// ``ClipboardReader``, which reads object by object), and check what they read against the document's
/// own model and ids as they go, once.
///
/// For example:
///
/// ```swift
/// let data = try ClipboardEncoding.json.encode(clipboard)
/// let back = try ClipboardEncoding.decode(data)   // recognises the encoding by content
/// try ClipboardEncoding.binaryPlist.encode(clipboard) { chunk in try output.write(contentsOf: chunk) }
/// ```
public enum ClipboardEncoding: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Apple's XML property list (`<plist version="1.0">`).
    case plist
    /// Apple's binary property list (`bplist00`).
    case binaryPlist = "binary-plist"
    /// JSON (RFC 8259), UTF-8.
    case json
    /// Graft's own XML format (`<clipboard format="graft-clipboard" version="1">`), described by
    /// `Formats/clipboard.xsd`.
    case xml

    public var description: String { rawValue }

    /// A name for messages: "JSON", "XML property list", ….
    public var displayName: String {
        switch self {
        case .plist: return "XML property list"
        case .binaryPlist: return "binary property list"
        case .json: return "JSON"
        case .xml: return "Graft XML"
        }
    }

    /// What messages call a document in this encoding: "JSON clipboard", "XML property-list clipboard", ….
    var documentName: String {
        switch self {
        case .plist: return "XML property-list clipboard"
        case .binaryPlist: return "binary property-list clipboard"
        case .json: return "JSON clipboard"
        case .xml: return "XML clipboard"
        }
    }

    /// The file-name extension documents in this encoding usually have (without the dot). Both property
    /// lists use `plist`; decoding recognises them by content.
    public var fileExtension: String {
        switch self {
        case .plist, .binaryPlist: return "plist"
        case .json: return "json"
        case .xml: return "xml"
        }
    }

    /// The encoding a file name suggests, for outputs that do not exist yet: `.json`, `.xml`, `.plist`
    /// (an XML property list), `.bplist` (a binary one).
    ///
    /// For example:
    ///
    /// ```swift
    /// let encoding = ClipboardEncoding.forExtension(URL(fileURLWithPath: "sales.json")) ?? .json
    /// ```
    public static func forExtension(_ url: URL) -> ClipboardEncoding? {
        switch url.pathExtension.lowercased() {
        case "json": return .json
        case "xml": return .xml
        case "plist": return .plist
        case "bplist": return .binaryPlist
        default: return nil
        }
    }

    // MARK: Encoding

    /// Encodes a clipboard document.
    ///
    /// For example:
    ///
    /// ```swift
    /// try ClipboardEncoding.xml.encode(clipboard).write(to: url)
    /// ```
    ///
    /// The encoder checks what it needs to write every value in its typed form — known entities, declared
    /// attributes and relationships, values of the declared types, to-ones with at most one target — but
    /// not the ids: a document with repeated ids or targets that do not exist is written as it is, and
    /// refused when it is decoded (which runs `Clipboard.check()`).
    ///
    /// - Throws: `GraftError.malformedInput` naming the object and key when a value does not fit its
    ///   attribute or the model does not declare it, or when the encoding cannot write something (a name
    ///   with a control character in an XML encoding, a value of an attribute type clipboards do not
    ///   carry).
    public func encode(_ clipboard: Clipboard) throws -> Data {
        let output = ByteBuffer(capacity: 1 << 16)
        try encode(clipboard, into: output)
        return output.takeData()
    }

    /// Encodes a clipboard document and hands the bytes to `sink` in chunks of about 256 KB, so that a
    /// large document never has to be held in memory whole (the binary property list keeps its offset
    /// table, a few bytes per value, until the end).
    ///
    /// For example:
    ///
    /// ```swift
    /// try ClipboardEncoding.json.encode(clipboard) { chunk in
    ///     _ = fwrite(chunk.baseAddress, 1, chunk.count, stdout)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - clipboard: the document.
    ///   - sink: called with each chunk, in order; the bytes are valid only during the call. An error
    ///     it throws stops the encoding and is rethrown. The document is checked before the first chunk,
    ///     so an encoding error never leaves half a document behind.
    /// - Throws: what `encode(_:)` throws, and what `sink` throws.
    public func encode(_ clipboard: Clipboard, to sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        try withoutActuallyEscaping(sink) { sink in
            let output = ByteBuffer(sink: sink)
            try encode(clipboard, into: output)
            try output.flush()
        }
    }

    private func encode(_ clipboard: Clipboard, into output: ByteBuffer) throws {
        try writeDocument(clipboard, into: output)
    }

    // MARK: Decoding

    /// The encoding of a document, recognised by its first bytes: `bplist00` is a binary property list,
    /// `{` JSON, and an XML document a property list when its root element is `<plist>` and Graft XML
    /// when it is `<clipboard>`. A byte-order mark and leading white space are skipped.
    ///
    /// For example:
    ///
    /// ```swift
    /// ClipboardEncoding.detect(Data("{\"format\": \"graft-clipboard\"}".utf8))   // .json
    /// ```
    public static func detect(_ data: Data) -> ClipboardEncoding? {
        data.withUnsafeBytes { ClipboardDetection.detect(UnsafeRawBufferPointer(rebasing: $0.prefix(4096))) }
    }

    /// Decodes a clipboard document in any of the four encodings, recognised by content.
    ///
    /// The result has passed the checks of `Clipboard.check()`, run once while reading; it carries that
    /// result, so checking it again (as a paste does) costs nothing until it is changed.
    ///
    /// For example:
    ///
    /// ```swift
    /// let clipboard = try ClipboardEncoding.decode(Data(contentsOf: url))
    /// print(clipboard.counts)
    /// ```
    ///
    /// - Throws: `GraftError.unsupportedFormat` when the data is none of the four encodings, is not a
    ///   Graft clipboard, or is a newer version of the format; `GraftError.malformedInput` with the line
    ///   (text encodings) or byte offset (binary property lists), the object id and the key when it is
    ///   truncated, malformed, or does not hold together.
    public static func decode(_ data: Data) throws -> Clipboard {
        try decode(data, as: nil)
    }

    /// Decodes a clipboard document in this encoding.
    ///
    /// For example:
    ///
    /// ```swift
    /// let clipboard = try ClipboardEncoding.json.decode(data)
    /// ```
    ///
    /// - Throws: what `ClipboardEncoding.decode(_:)` throws; `GraftError.unsupportedFormat` also when
    ///   the data is in another encoding.
    public func decode(_ data: Data) throws -> Clipboard {
        try Self.decode(data, as: self)
    }

    /// The document read with a `ClipboardReader` over the data's own bytes, checked once as it is read;
    /// the result carries that check, so `Clipboard.check()` does not run it again.
    private static func decode(_ data: Data, as encoding: ClipboardEncoding?) throws -> Clipboard {
        var clipboard: Clipboard = try data.withUnsafeBytes { bytes in
            var reader = try ClipboardReader(bytes: bytes, encoding: encoding, storage: nil, collecting: true)
            return Clipboard(header: reader.header, objects: try reader.readAll())
        }
        clipboard.markChecked()
        return clipboard
    }
}

/// Recognising an encoding from a document's first bytes.
enum ClipboardDetection {
    static func detect(_ bytes: UnsafeRawBufferPointer) -> ClipboardEncoding? {
        if bytes.starts(with: "bplist00".utf8) { return .binaryPlist }
        var position = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        while position < bytes.count, ByteText.isSpace(bytes[position]) { position += 1 }
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            return .json
        case UInt8(ascii: "<"):
            switch XMLScanner.rootElementName(ofPrefix: bytes) {
            case "plist": return .plist
            case "clipboard": return .xml
            default: return nil
            }
        default:
            return nil
        }
    }
}
