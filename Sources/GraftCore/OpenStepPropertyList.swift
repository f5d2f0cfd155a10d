import Foundation

/// The old NeXTSTEP/OpenStep text property-list format, still found in `.momd/VersionInfo.plist`
/// files written by older tools:
///
/// ```
/// {
///     "NSManagedObjectModel_CurrentVersionName" = EmployeeDirectory;
///     tags = ( a, "b c" );   // a comment
///     bytes = <0fbd 7788>;   /* another */
/// }
/// ```
///
/// Values are strings, data, arrays and dictionaries only — the format has no numbers, Booleans or
/// dates. Strings are unquoted (letters, digits and `_$/:.-`) or quoted with `"` or `'`, with the
/// escapes `\n \t \r \a \b \f \v \\ \" \'`, `\U` plus up to four hex digits, and `\` plus up to three
/// octal digits (read as the Unicode scalar of that value). A top level of bare `key = value;`
/// pairs (a ".strings" file) reads as a dictionary. Text is UTF-8, or UTF-16 with a byte-order mark.
///
/// For example:
///
/// ```swift
/// let info = try OpenStepPropertyList.decode(Data("{ a = 1; b = (x, y); }".utf8))
/// print(info["b"]?[1]?.stringValue ?? "?")   // "y"
/// ```
public enum OpenStepPropertyList {
    /// The deepest nesting of arrays and dictionaries the decoder follows.
    public static let maximumDepth = 512

    /// Decodes an OpenStep text property list.
    ///
    /// For example:
    ///
    /// ```swift
    /// let info = try OpenStepPropertyList.decode(FileAccess.read(versionInfoURL))
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` with the line of the problem: an unterminated string,
    ///   comment, array, dictionary or data block, a missing `=` or `;`, an odd number of hex digits,
    ///   or text after the value.
    public static func decode(_ data: Data) throws -> PropertyList {
        var parser = OpenStepParser(bytes: Self.utf8Bytes(of: data))
        return try parser.parseDocument()
    }

    /// Encodes a property list as OpenStep text (UTF-8, four-space indentation).
    ///
    /// The format has only strings, data, arrays and dictionaries: integers and reals are written as
    /// their decimal text, Booleans as `YES` and `NO`, dates as `2001-01-01T00:00:00Z` and UIDs as
    /// `{ CF$UID = n; }`, all of which read back as strings. Use the binary or XML format to keep types.
    ///
    /// For example:
    ///
    /// ```swift
    /// let text = OpenStepPropertyList.encode(["NSManagedObjectModel_CurrentVersionName": "Model"])
    /// // {\n    NSManagedObjectModel_CurrentVersionName = Model;\n}\n
    /// ```
    public static func encode(_ value: PropertyList) -> Data {
        var text = ""
        writeValue(value, level: 0, into: &text)
        text += "\n"
        return Data(text.utf8)
    }

    private static func writeValue(_ value: PropertyList, level: Int, into text: inout String) {
        let indent = String(repeating: "    ", count: level)
        switch value {
        case .string(let string): text += quoted(string)
        case .integer(let integer): text += String(integer)
        case .unsignedInteger(let integer): text += String(integer)
        case .real(let real): text += quoted(PropertyListText.real(real))
        case .bool(let bool): text += bool ? "YES" : "NO"
        case .date(let date): text += quoted(PropertyListText.date(date))
        case .uid(let uid): text += "{ \"CF$UID\" = \(uid); }"
        case .data(let data):
            text += "<"
            for (index, byte) in data.enumerated() {
                if index > 0 && index % 4 == 0 { text += " " }
                text += String(format: "%02x", byte)
            }
            text += ">"
        case .array(let elements):
            if elements.isEmpty {
                text += "()"
                return
            }
            text += "(\n"
            for (index, element) in elements.enumerated() {
                text += indent + "    "
                writeValue(element, level: level + 1, into: &text)
                text += index + 1 < elements.count ? ",\n" : "\n"
            }
            text += indent + ")"
        case .dictionary(let dictionary):
            if dictionary.isEmpty {
                text += "{}"
                return
            }
            text += "{\n"
            for (key, element) in dictionary {
                text += indent + "    " + quoted(key) + " = "
                writeValue(element, level: level + 1, into: &text)
                text += ";\n"
            }
            text += indent + "}"
        }
    }

    /// The string bare when it is made only of characters allowed unquoted, quoted and escaped otherwise.
    private static func quoted(_ string: String) -> String {
        // A slash could start a comment when read back, so strings with one are quoted.
        if !string.isEmpty
            && string.utf8.allSatisfy({ $0 != UInt8(ascii: "/") && OpenStepParser.isUnquotedCharacter($0) })
        {
            return string
        }
        var text = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\t": text += "\\t"
            case "\r": text += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    text += String(format: "\\U%04x", scalar.value)
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        return text + "\""
    }

    /// The text as UTF-8, converting UTF-16 (with a byte-order mark) and dropping a UTF-8 byte-order mark.
    static func utf8Bytes(of data: Data) -> [UInt8] {
        let bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return Array(bytes.dropFirst(3)) }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            let bigEndian = bytes[0] == 0xFE
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            var index = 2
            while index + 1 < bytes.count {
                let (high, low) = bigEndian ? (bytes[index], bytes[index + 1]) : (bytes[index + 1], bytes[index])
                units.append(UInt16(high) << 8 | UInt16(low))
                index += 2
            }
            return Array(String(decoding: units, as: UTF16.self).utf8)
        }
        return bytes
    }
}

struct OpenStepParser {
    let bytes: [UInt8]
    var position = 0
    var line = 1
    var depth = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func parseDocument() throws -> PropertyList {
        try skipSpaceAndComments()
        guard position < bytes.count else { throw error("the document is empty") }
        let first = try parseValue()
        try skipSpaceAndComments()
        if position < bytes.count, bytes[position] == UInt8(ascii: "="), case .string(let key) = first {
            // A ".strings" file: key = value; pairs without braces.
            position += 1
            var dictionary = PropertyList.Dictionary()
            try skipSpaceAndComments()
            dictionary[key] = try parseValue()
            try expectSemicolon(optionalAtEnd: true)
            while true {
                try skipSpaceAndComments()
                if position >= bytes.count { break }
                let (name, value) = try parseEntry()
                dictionary[name] = value
                try expectSemicolon(optionalAtEnd: true)
            }
            return .dictionary(dictionary)
        }
        guard position >= bytes.count else {
            throw error("unexpected '\(character(at: position))' after the property list")
        }
        return first
    }

    private mutating func parseValue() throws -> PropertyList {
        try skipSpaceAndComments()
        guard position < bytes.count else { throw error("the property list ends where a value should be") }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            return .dictionary(try parseDictionary())
        case UInt8(ascii: "("):
            return .array(try parseArray())
        case UInt8(ascii: "<"):
            return .data(try parseData())
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return .string(try parseQuotedString())
        default:
            guard let string = parseUnquotedString() else {
                throw error("unexpected '\(character(at: position))' where a value should be")
            }
            return .string(string)
        }
    }

    private mutating func parseDictionary() throws -> PropertyList.Dictionary {
        let openingLine = line
        position += 1  // {
        try enter()
        var dictionary = PropertyList.Dictionary()
        while true {
            try skipSpaceAndComments()
            guard position < bytes.count else {
                throw error("the dictionary opened on line \(openingLine) is not closed with '}'")
            }
            if bytes[position] == UInt8(ascii: "}") {
                position += 1
                break
            }
            let (key, value) = try parseEntry()
            dictionary[key] = value
            try skipSpaceAndComments()
            // Be lenient about a missing ';' before the closing brace.
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") { continue }
            try expectSemicolon(optionalAtEnd: false)
        }
        depth -= 1
        return dictionary
    }

    private mutating func parseEntry() throws -> (String, PropertyList) {
        let keyValue = try parseValue()
        guard case .string(let key) = keyValue else {
            throw error("a dictionary key must be a string, not \(keyValue.typeName)")
        }
        try skipSpaceAndComments()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else {
            throw error("expected '=' after the key '\(key)'")
        }
        position += 1
        return (key, try parseValue())
    }

    private mutating func expectSemicolon(optionalAtEnd: Bool) throws {
        try skipSpaceAndComments()
        if position < bytes.count, bytes[position] == UInt8(ascii: ";") {
            position += 1
            return
        }
        if optionalAtEnd && position >= bytes.count { return }
        throw error(
            position < bytes.count
                ? "expected ';' after a dictionary entry, found '\(character(at: position))'"
                : "expected ';' after a dictionary entry, found the end of the property list")
    }

    private mutating func parseArray() throws -> [PropertyList] {
        let openingLine = line
        position += 1  // (
        try enter()
        var elements: [PropertyList] = []
        try skipSpaceAndComments()
        if position < bytes.count, bytes[position] == UInt8(ascii: ")") {
            position += 1
            depth -= 1
            return elements
        }
        while true {
            elements.append(try parseValue())
            try skipSpaceAndComments()
            guard position < bytes.count else {
                throw error("the array opened on line \(openingLine) is not closed with ')'")
            }
            if bytes[position] == UInt8(ascii: ")") {
                position += 1
                break
            }
            guard bytes[position] == UInt8(ascii: ",") else {
                throw error("expected ',' or ')' in the array, found '\(character(at: position))'")
            }
            position += 1
            try skipSpaceAndComments()
            // A trailing comma before ')' is accepted.
            if position < bytes.count, bytes[position] == UInt8(ascii: ")") {
                position += 1
                break
            }
        }
        depth -= 1
        return elements
    }

    private mutating func parseData() throws -> Data {
        let openingLine = line
        position += 1  // <
        var result = [UInt8]()
        var pending: UInt8? = nil
        while true {
            guard position < bytes.count else {
                throw error("the data opened on line \(openingLine) is not closed with '>'")
            }
            let byte = bytes[position]
            position += 1
            if byte == UInt8(ascii: ">") { break }
            if byte == 0x0A { line += 1 }
            if PropertyListText.isSpace(byte) { continue }
            guard let nibble = Self.hexValue(byte) else {
                throw error("'\(Self.describe(byte))' is not a hex digit in data")
            }
            if let high = pending {
                result.append(high << 4 | nibble)
                pending = nil
            } else {
                pending = nibble
            }
        }
        guard pending == nil else { throw error("the data has an odd number of hex digits") }
        return Data(result)
    }

    private mutating func parseQuotedString() throws -> String {
        let quote = bytes[position]
        let openingLine = line
        position += 1
        var units: [UInt16] = []
        var runStart = position
        func flushRun(_ end: Int) {
            if end > runStart { units.append(contentsOf: String(decoding: bytes[runStart..<end], as: UTF8.self).utf16) }
        }
        while true {
            guard position < bytes.count else {
                throw error("the string opened on line \(openingLine) is not closed with \(quote == 0x22 ? "\"" : "'")")
            }
            let byte = bytes[position]
            if byte == quote {
                flushRun(position)
                position += 1
                break
            }
            if byte == 0x0A { line += 1 }
            guard byte == UInt8(ascii: "\\") else {
                position += 1
                continue
            }
            flushRun(position)
            position += 1
            guard position < bytes.count else { throw error("the string ends in the middle of an escape") }
            let escaped = bytes[position]
            position += 1
            switch escaped {
            case UInt8(ascii: "a"): units.append(0x07)
            case UInt8(ascii: "b"): units.append(0x08)
            case UInt8(ascii: "f"): units.append(0x0C)
            case UInt8(ascii: "n"): units.append(0x0A)
            case UInt8(ascii: "r"): units.append(0x0D)
            case UInt8(ascii: "t"): units.append(0x09)
            case UInt8(ascii: "v"): units.append(0x0B)
            case UInt8(ascii: "U"), UInt8(ascii: "u"):
                var value: UInt16 = 0
                var digits = 0
                while digits < 4, position < bytes.count, let nibble = Self.hexValue(bytes[position]) {
                    value = value << 4 | UInt16(nibble)
                    digits += 1
                    position += 1
                }
                guard digits > 0 else { throw error("\\U must be followed by hex digits") }
                units.append(value)
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var value = UInt16(escaped - UInt8(ascii: "0"))
                var digits = 1
                while digits < 3, position < bytes.count,
                    (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(bytes[position])
                {
                    value = value << 3 | UInt16(bytes[position] - UInt8(ascii: "0"))
                    digits += 1
                    position += 1
                }
                units.append(value)
            case 0x0A:
                line += 1
                units.append(0x0A)
            default:
                // \\, \", \' and any other character stand for themselves (a multi-byte UTF-8
                // character after the backslash is kept whole by the next run).
                if escaped < 0x80 {
                    units.append(UInt16(escaped))
                } else {
                    position -= 1
                }
            }
            runStart = position
        }
        return String(decoding: units, as: UTF16.self)
    }

    private mutating func parseUnquotedString() -> String? {
        let start = position
        while position < bytes.count, Self.isUnquotedCharacter(bytes[position]) { position += 1 }
        guard position > start else { return nil }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private mutating func skipSpaceAndComments() throws {
        while position < bytes.count {
            let byte = bytes[position]
            if byte == 0x0A {
                line += 1
                position += 1
            } else if PropertyListText.isSpace(byte) {
                position += 1
            } else if byte == UInt8(ascii: "/"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "/") {
                position += 2
                while position < bytes.count, bytes[position] != 0x0A { position += 1 }
            } else if byte == UInt8(ascii: "/"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "*") {
                let openingLine = line
                position += 2
                while true {
                    guard position + 1 < bytes.count else {
                        throw error("the comment opened on line \(openingLine) is not closed with */")
                    }
                    if bytes[position] == UInt8(ascii: "*"), bytes[position + 1] == UInt8(ascii: "/") {
                        position += 2
                        break
                    }
                    if bytes[position] == 0x0A { line += 1 }
                    position += 1
                }
            } else {
                return
            }
        }
    }

    private mutating func enter() throws {
        depth += 1
        if depth > OpenStepPropertyList.maximumDepth {
            throw error("arrays and dictionaries are nested more than \(OpenStepPropertyList.maximumDepth) deep")
        }
    }

    static func isUnquotedCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "."),
            UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private func character(at index: Int) -> String {
        Self.describe(bytes[index])
    }

    static func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? String(UnicodeScalar(byte)) : String(format: "\\x%02X", byte)
    }

    private func error(_ message: String) -> GraftError {
        GraftError(.malformedInput, "OpenStep property list: " + message, context: [.line(line)])
    }
}
