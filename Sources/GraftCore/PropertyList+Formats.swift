import Foundation

extension PropertyList {
    /// A property-list file format.
    public enum Format: Hashable, Sendable, CustomStringConvertible {
        /// Apple's binary format, `bplist00`.
        case binary
        /// Apple's XML format, `<plist version="1.0">`.
        case xml
        /// The NeXTSTEP/OpenStep text format, `{ key = value; }`, which holds only strings, data, arrays
        /// and dictionaries.
        case openStep

        public var description: String {
            switch self {
            case .binary: return "binary"
            case .xml: return "XML"
            case .openStep: return "OpenStep"
            }
        }
    }

    /// The format `data` is written in, judged by its first bytes: `bplist` is binary; `<?xml`,
    /// `<!DOCTYPE` or `<plist` (after any byte-order mark and white space) is XML; anything else is
    /// taken for OpenStep text.
    ///
    /// For example:
    ///
    /// ```swift
    /// if PropertyList.format(of: data) == .binary { … }
    /// ```
    public static func format(of data: Data) -> Format {
        if BinaryPropertyList.hasMagic(data) { return .binary }
        let prefix = Array(data.prefix(512))
        // UTF-16 or UTF-32 text with a byte-order mark: XML is the only format Apple writes that way.
        if prefix.starts(with: [0xFE, 0xFF]) || prefix.starts(with: [0xFF, 0xFE]) {
            let text = OpenStepPropertyList.utf8Bytes(of: Data(prefix))
            return looksLikeXML(text[...]) ? .xml : .openStep
        }
        var bytes = prefix[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return looksLikeXML(bytes) ? .xml : .openStep
    }

    private static func looksLikeXML(_ bytes: ArraySlice<UInt8>) -> Bool {
        var bytes = bytes
        while let first = bytes.first, PropertyListText.isSpace(first) { bytes = bytes.dropFirst() }
        guard bytes.first == UInt8(ascii: "<"), let second = bytes.dropFirst().first else { return false }
        // OpenStep data is `<` followed by hex digits, white space or `>`.
        return second == UInt8(ascii: "?") || second == UInt8(ascii: "!")
            || (OpenStepParser.hexValue(second) == nil && !PropertyListText.isSpace(second)
                && second != UInt8(ascii: ">"))
    }

    /// Decodes a property list in any of the three formats, recognised by its contents.
    ///
    /// For example:
    ///
    /// ```swift
    /// let info = try PropertyList.decode(FileAccess.read(momd.appendingPathComponent("VersionInfo.plist")))
    /// let current = info["NSManagedObjectModel_CurrentVersionName"]?.stringValue
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` (with an offset or line) when the data is not a valid
    ///   property list in the format it appears to be in.
    public static func decode(_ data: Data) throws -> PropertyList {
        switch format(of: data) {
        case .binary: return try BinaryPropertyList.decode(data)
        case .xml: return try XMLPropertyList.decode(data)
        case .openStep: return try OpenStepPropertyList.decode(data)
        }
    }

    /// Encodes this property list in the given format (binary unless told otherwise).
    ///
    /// OpenStep text has only strings, data, arrays and dictionaries: numbers, Booleans (`YES`/`NO`),
    /// dates and UIDs are written as strings there, so only the binary and XML formats round-trip
    /// every value.
    ///
    /// For example:
    ///
    /// ```swift
    /// let data = metadata.encode(format: .binary)
    /// ```
    public func encode(format: Format = .binary) -> Data {
        switch format {
        case .binary: return BinaryPropertyList.encode(self)
        case .xml: return XMLPropertyList.encode(self)
        case .openStep: return OpenStepPropertyList.encode(self)
        }
    }
}
