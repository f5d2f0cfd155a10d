import Foundation

extension XMLPropertyList {
    /// Encodes a property list as an XML document in Apple's layout.
    ///
    /// The document has the XML declaration, Apple's `PLIST 1.0` document type and a
    /// `<plist version="1.0">` root; nesting is indented with tabs; data is base64 in lines that get
    /// shorter as they are indented deeper; dates are whole seconds in UTC; reals are printed so they
    /// parse back to the same `Double` (`nan`, `+infinity`, `-infinity` for the special values);
    /// `&`, `<` and `>` are escaped, and so is a carriage return, which XML would otherwise turn into
    /// a line feed. UIDs are written as `<dict><key>CF$UID</key><integer>n</integer></dict>`.
    ///
    /// XML 1.0 cannot carry the control characters U+0000–U+001F other than tab, line feed and
    /// carriage return: strings holding them are written as they are, as Apple does, and the
    /// document will not parse. Use the binary format for such strings.
    ///
    /// For example:
    ///
    /// ```swift
    /// let xml = XMLPropertyList.encode(["_XCCurrentVersionName": "Model 2.xcdatamodel"])
    /// ```
    public static func encode(_ value: PropertyList) -> Data {
        var output: [UInt8] = []
        output.append(contentsOf: header.utf8)
        appendPlistElement(value, to: &output)
        return Data(output)
    }

    /// Appends a `<plist version="1.0">` element — without the XML declaration and document type —
    /// for embedding a property list in another XML document.
    ///
    /// Every line, the first included, starts with `indentation` tabs, and the element ends with a
    /// line feed.
    ///
    /// For example:
    ///
    /// ```swift
    /// var xml = Array("<metadata>\n".utf8)
    /// XMLPropertyList.appendPlistElement(metadata, to: &xml, indentation: 1)
    /// xml += Array("</metadata>\n".utf8)
    /// ```
    public static func appendPlistElement(_ value: PropertyList, to output: inout [UInt8], indentation: Int = 0) {
        var writer = XMLPlistWriter(output: output)
        output = []  // let the writer own the only reference, so appends do not copy
        writer.indent(indentation)
        writer.append("<plist version=\"1.0\">\n")
        writer.write(value, level: indentation)
        writer.indent(indentation)
        writer.append("</plist>\n")
        output = writer.output
    }

    /// The `<plist version="1.0">` element for `value` as a string, without declaration or document type.
    ///
    /// For example:
    ///
    /// ```swift
    /// print(XMLPropertyList.plistElement(["a": 1]))
    /// // <plist version="1.0">
    /// // <dict>
    /// // 	<key>a</key>
    /// // 	<integer>1</integer>
    /// // </dict>
    /// // </plist>
    /// ```
    public static func plistElement(_ value: PropertyList, indentation: Int = 0) -> String {
        var output: [UInt8] = []
        appendPlistElement(value, to: &output, indentation: indentation)
        return String(decoding: output, as: UTF8.self)
    }
}

struct XMLPlistWriter {
    var output: [UInt8]

    mutating func write(_ value: PropertyList, level: Int) {
        indent(level)
        switch value {
        case .string(let string):
            append("<string>")
            appendEscaped(string)
            append("</string>\n")
        case .integer(let integer):
            append("<integer>\(integer)</integer>\n")
        case .unsignedInteger(let integer):
            append("<integer>\(integer)</integer>\n")
        case .real(let real):
            append("<real>\(PropertyListText.real(real))</real>\n")
        case .bool(let bool):
            append(bool ? "<true/>\n" : "<false/>\n")
        case .date(let date):
            append("<date>\(PropertyListText.date(date))</date>\n")
        case .data(let data):
            append("<data>\n")
            appendBase64(data, level: level)
            indent(level)
            append("</data>\n")
        case .uid(let uid):
            append("<dict>\n")
            indent(level + 1)
            append("<key>CF$UID</key>\n")
            indent(level + 1)
            append("<integer>\(uid)</integer>\n")
            indent(level)
            append("</dict>\n")
        case .array(let elements):
            if elements.isEmpty {
                append("<array/>\n")
                return
            }
            append("<array>\n")
            for element in elements { write(element, level: level + 1) }
            indent(level)
            append("</array>\n")
        case .dictionary(let dictionary):
            if dictionary.isEmpty {
                append("<dict/>\n")
                return
            }
            append("<dict>\n")
            for (key, value) in dictionary {
                indent(level + 1)
                append("<key>")
                appendEscaped(key)
                append("</key>\n")
                write(value, level: level + 1)
            }
            indent(level)
            append("</dict>\n")
        }
    }

    @inline(__always)
    mutating func indent(_ level: Int) {
        for _ in 0..<max(level, 0) { output.append(0x09) }
    }

    @inline(__always)
    mutating func append(_ text: String) {
        output.append(contentsOf: text.utf8)
    }

    mutating func appendEscaped(_ text: String) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): append("&amp;")
            case UInt8(ascii: "<"): append("&lt;")
            case UInt8(ascii: ">"): append("&gt;")
            case 0x0D: append("&#13;")
            default: output.append(byte)
            }
        }
    }

    private static let base64Alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Base64 in lines of 76 characters less 8 per indentation level (at least 12), each line indented.
    mutating func appendBase64(_ data: Data, level: Int) {
        let lineLength = 76 - 8 * min(max(level, 0), 8)
        let alphabet = Self.base64Alphabet
        var column = 0
        func emit(_ characters: (UInt8, UInt8, UInt8, UInt8), into writer: inout XMLPlistWriter) {
            if column == 0 { writer.indent(level) }
            writer.output.append(characters.0)
            writer.output.append(characters.1)
            writer.output.append(characters.2)
            writer.output.append(characters.3)
            column += 4
            if column >= lineLength {
                writer.output.append(0x0A)
                column = 0
            }
        }
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var index = 0
            let count = bytes.count
            while index + 3 <= count {
                let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                emit(
                    (
                        alphabet[Int(chunk >> 18)], alphabet[Int(chunk >> 12 & 0x3F)],
                        alphabet[Int(chunk >> 6 & 0x3F)], alphabet[Int(chunk & 0x3F)]
                    ), into: &self)
                index += 3
            }
            let pad = UInt8(ascii: "=")
            if count - index == 1 {
                let chunk = UInt32(bytes[index]) << 16
                emit((alphabet[Int(chunk >> 18)], alphabet[Int(chunk >> 12 & 0x3F)], pad, pad), into: &self)
            } else if count - index == 2 {
                let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
                emit(
                    (
                        alphabet[Int(chunk >> 18)], alphabet[Int(chunk >> 12 & 0x3F)],
                        alphabet[Int(chunk >> 6 & 0x3F)], pad
                    ), into: &self)
            }
        }
        if column != 0 { output.append(0x0A) }
    }
}
