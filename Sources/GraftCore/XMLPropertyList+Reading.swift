import Foundation

extension XMLPropertyList {
    /// What messages call the document.
    package static let documentName = "XML property list"

    /// Decodes an XML property-list document.
    ///
    /// The document is read with ``XMLScanner``, as the property-list clipboard is: a document type is
    /// allowed (Apple writes one) but one that declares entities is refused. A document in UTF-16 (with its
    /// byte-order mark) or one whose declaration names another common encoding (ASCII, Latin-1, Windows-1252, Mac Roman) is converted to
    /// UTF-8 first.
    ///
    /// For example:
    ///
    /// ```swift
    /// let plist = try XMLPropertyList.decode(Data("<plist version=\"1.0\"><true/></plist>".utf8))
    /// // plist == .bool(true)
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` with the line of the problem when the document is not
    ///   well-formed XML, uses an element a property list does not have, or holds a value that does
    ///   not parse (an integer out of range, a bad date, invalid base64, a key without a value).
    public static func decode(_ data: Data) throws -> PropertyList {
        let (text, transcoded) = utf8(data)
        return try text.withUnsafeBytes { bytes in
            var scanner = XMLScanner(bytes, documentName: documentName, transcoded: transcoded)
            try scanner.readRoot()
            let value = try decode(&scanner)
            try scanner.readEnd()
            return value
        }
    }

    /// Decodes the `<plist>` element — or a bare value element such as `<dict>` — whose start tag the
    /// scanner has just read, through its end tag.
    ///
    /// Use it for property lists embedded in other documents, such as the `<metadata>` of a Core Data
    /// XML store.
    ///
    /// - Throws: `GraftError.malformedInput` with the line of the offending element.
    package static func decode(_ scanner: inout XMLScanner) throws -> PropertyList {
        guard scanner.isNamed("plist") else { return try value(&scanner, depth: 1) }
        let start = scanner.tokenStart
        var value: PropertyList?
        var count = 0
        let isEmpty = scanner.isEmptyElement
        while !isEmpty, try scanner.nextChild(of: "plist") {
            count += 1
            if count == 1 {
                value = try self.value(&scanner, depth: 1)
            } else {
                try scanner.skipElement()
            }
        }
        guard count == 1, let value else {
            throw scanner.error("<plist> must hold exactly one value, but holds \(count)", at: start)
        }
        return value
    }

    /// The document as UTF-8, and whether it was converted: UTF-16 with a byte-order mark, or a declared
    /// encoding other than UTF-8 that Foundation converts from. Anything else is left for the scanner to
    /// read (or refuse).
    private static func utf8(_ data: Data) -> (Data, transcoded: Bool) {
        let encoding: String.Encoding
        if data.starts(with: [0xFE, 0xFF]) || data.starts(with: [0xFF, 0xFE]) {
            encoding = .utf16
        } else if data.starts(with: "<?xml".utf8), let declared = declaredEncoding(data),
            !["utf-8", "utf8"].contains(declared.lowercased())
        {
            guard let known = encodings[declared.lowercased()] else { return (data, false) }
            encoding = known
        } else {
            return (data, false)
        }
        guard let text = String(data: data, encoding: encoding) else { return (data, false) }
        var utf8 = Data(text.utf8)
        if utf8.starts(with: [0xEF, 0xBB, 0xBF]) { utf8.removeFirst(3) }
        return (utf8, true)
    }

    /// The encodings other than UTF-8 that an XML declaration may name, by their IANA names.
    private static let encodings: [String: String.Encoding] = [
        "utf-16": .utf16, "utf-16be": .utf16BigEndian, "utf-16le": .utf16LittleEndian, "us-ascii": .ascii,
        "iso-8859-1": .isoLatin1, "latin1": .isoLatin1, "iso-8859-2": .isoLatin2, "windows-1252": .windowsCP1252,
        "macintosh": .macOSRoman, "x-mac-roman": .macOSRoman,
    ]

    /// The `encoding` of an XML declaration at the start of `data`.
    private static func declaredEncoding(_ data: Data) -> String? {
        let head = String(decoding: data.prefix(200), as: UTF8.self)
        guard let end = head.range(of: "?>"), let name = head[..<end.lowerBound].range(of: "encoding") else {
            return nil
        }
        let rest = head[name.upperBound..<end.lowerBound].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return String(rest.dropFirst().prefix { $0 != quote })
    }

    private static func value(_ scanner: inout XMLScanner, depth: Int) throws -> PropertyList {
        let name = scanner.name
        let start = scanner.tokenStart
        switch name.count {
        case 3 where scanner.isNamed("key"):
            throw scanner.error("<key> outside a <dict>")
        case 4 where scanner.isNamed("true"):
            try scanner.skipElement()
            return .bool(true)
        case 4 where scanner.isNamed("real"):
            let text = try scanner.text(of: "real")
            guard let real = PropertyListText.real(text) else {
                throw scanner.error("'\(ByteText.excerpt(text))' is not a real number", at: start)
            }
            return .real(real)
        case 4 where scanner.isNamed("date"):
            let text = try scanner.text(of: "date")
            guard let date = PropertyListText.date(String(decoding: text, as: UTF8.self)) else {
                throw scanner.error(
                    "'\(ByteText.excerpt(text))' is not a date of the form 2001-01-01T00:00:00Z", at: start)
            }
            return .date(date)
        case 4 where scanner.isNamed("data"):
            // White space between the characters and missing padding are tolerated.
            guard let data = Base64.decode(try scanner.text(of: "data")) else {
                throw scanner.error("the contents of <data> are not valid base64", at: start)
            }
            return .data(data)
        case 4 where scanner.isNamed("dict"):
            return try dictionary(&scanner, depth: depth)
        case 5 where scanner.isNamed("false"):
            try scanner.skipElement()
            return .bool(false)
        case 5 where scanner.isNamed("array"):
            guard depth < maximumDepth else {
                throw scanner.error("containers are nested more than \(maximumDepth) deep")
            }
            var elements: [PropertyList] = []
            guard !scanner.isEmptyElement else { return .array([]) }
            while try scanner.nextChild(of: "array") { elements.append(try value(&scanner, depth: depth + 1)) }
            return .array(elements)
        case 5 where scanner.isNamed("plist"):
            throw scanner.error("<plist> inside a property list")
        case 6 where scanner.isNamed("string"):
            return .string(try string(&scanner, of: "string"))
        case 7 where scanner.isNamed("integer"):
            let text = try scanner.text(of: "integer")
            guard let integer = PropertyListText.integer(text) else {
                throw scanner.error("'\(ByteText.excerpt(text))' is not an integer in −2⁶³ … 2⁶⁴−1", at: start)
            }
            return integer
        default:
            throw scanner.error("unknown element <\(scanner.nameText)>")
        }
    }

    private static func dictionary(_ scanner: inout XMLScanner, depth: Int) throws -> PropertyList {
        guard depth < maximumDepth else { throw scanner.error("containers are nested more than \(maximumDepth) deep") }
        var dictionary = PropertyList.Dictionary()
        let isEmpty = scanner.isEmptyElement
        while !isEmpty, try scanner.nextChild(of: "dict") {
            guard scanner.isNamed("key") else {
                throw scanner.error("expected <key> in <dict>, found <\(scanner.nameText)>")
            }
            let keyStart = scanner.tokenStart
            let key = try string(&scanner, of: "key")
            guard try scanner.nextChild(of: "dict") else {
                throw scanner.error("the key '\(ByteText.excerpt(key))' has no value", at: keyStart)
            }
            dictionary[key] = try value(&scanner, depth: depth + 1)
        }
        // A keyed-archive reference is written as a dictionary with the single key CF$UID.
        if dictionary.count == 1, let uid = dictionary["CF$UID"], let number = uid.uint64Value {
            return .uid(number)
        }
        return .dictionary(dictionary)
    }

    private static func string(_ scanner: inout XMLScanner, of element: StaticString) throws -> String {
        let text = try scanner.text(of: element)
        guard let string = ByteText.string(text) else { throw scanner.error("<\(element)> is not valid UTF-8") }
        return string
    }
}
