import Foundation
@_spi(GraftInternal) import GraftCore

/// Writes the metadata dictionary as the `<plist>` element inside `<metadata>`, laid out as Core Data
/// lays it out there: four spaces per level, dictionary keys sorted, empty containers as
/// `<array></array>`, and base64 data on its own lines indented like its element
/// (`atomlib/orig/template.mslice`).
struct MetadataWriter {
    let output: ByteBuffer

    /// Appends `<plist version="1.0">…</plist>` starting at `level` (each level four spaces), each
    /// line ending with a line feed.
    ///
    /// - Throws: `GraftError.malformedInput` for a string XML 1.0 cannot carry.
    func appendPlist(_ dictionary: PropertyList.Dictionary, level: Int) throws {
        indent(level)
        output.append("<plist version=\"1.0\">\n")
        try append(.dictionary(dictionary), level: level + 1, key: "metadata")
        indent(level)
        output.append("</plist>\n")
    }

    private func indent(_ level: Int) { output.appendSpaces(4 * level) }

    private func append(_ value: PropertyList, level: Int, key: String) throws {
        indent(level)
        switch value {
        case .string(let text):
            output.append("<string>")
            try appendText(text, key: key)
            output.append("</string>\n")
        case .integer(let integer):
            output.append("<integer>")
            output.append(decimal: integer)
            output.append("</integer>\n")
        case .unsignedInteger(let integer):
            output.append("<integer>")
            output.append(decimal: integer)
            output.append("</integer>\n")
        case .real(let real):
            output.append("<real>")
            if real.isNaN {
                output.append("nan")
            } else if real.isInfinite {
                output.append(real < 0 ? "-infinity" : "+infinity")
            } else {
                ValueText.appendDouble(real, to: output)
            }
            output.append("</real>\n")
        case .bool(let bool):
            output.append(bool ? "<true></true>\n" : "<false></false>\n")
        case .date(let date):
            output.append("<date>")
            output.append(string: PropertyListText.date(date))
            output.append("</date>\n")
        case .data(let data):
            output.append("<data>\n")
            let start = output.count
            ValueText.appendBase64Plain(data, to: output)
            let encoded = Array(UnsafeRawBufferPointer(start: output.base + start, count: output.count - start))
            output.truncate(to: start)
            var position = 0
            repeat {
                indent(level)
                let end = min(position + 76, encoded.count)
                encoded[position..<end].withUnsafeBufferPointer { output.append(UnsafeRawBufferPointer($0)) }
                output.append(0x0A)
                position = end
            } while position < encoded.count
            indent(level)
            output.append("</data>\n")
        case .uid(let uid):
            output.append("<dict>\n")
            indent(level + 1)
            output.append("<key>CF$UID</key>\n")
            indent(level + 1)
            output.append("<integer>")
            output.append(decimal: uid)
            output.append("</integer>\n")
            indent(level)
            output.append("</dict>\n")
        case .array(let elements):
            if elements.isEmpty {
                output.append("<array></array>\n")
                return
            }
            output.append("<array>\n")
            for element in elements { try append(element, level: level + 1, key: key) }
            indent(level)
            output.append("</array>\n")
        case .dictionary(let dictionary):
            if dictionary.isEmpty {
                output.append("<dict></dict>\n")
                return
            }
            output.append("<dict>\n")
            for name in dictionary.keys.sorted() {
                indent(level + 1)
                output.append("<key>")
                try appendText(name, key: name)
                output.append("</key>\n")
                try append(dictionary[name]!, level: level + 1, key: name)
            }
            indent(level)
            output.append("</dict>\n")
        }
    }

    private func appendText(_ text: String, key: String) throws {
        guard XMLText.appendEscaped(text, to: output) else {
            throw GraftError(
                .malformedInput,
                "the metadata value holds a character XML 1.0 cannot carry (a control character, U+FFFE or U+FFFF)",
                context: [.key(key)])
        }
    }
}

/// Escaping text for XML.
enum XMLText {
    /// Appends `text` escaped for element content: `&`, `<`, `>` as entities, a carriage return as
    /// `&#13;` (a parser would turn a raw one into a line feed).
    ///
    /// - Returns: `false`, appending nothing, when `text` holds a character XML 1.0 cannot carry:
    ///   U+0000–U+001F other than tab, line feed and carriage return, or U+FFFE, U+FFFF.
    @discardableResult
    static func appendEscaped(_ text: String, to output: ByteBuffer) -> Bool {
        var text = text
        return text.withUTF8 { appendEscaped(UnsafeRawBufferPointer($0), to: output, inAttribute: false) }
    }

    /// Appends UTF-8 text escaped for element content (or, with `inAttribute`, for a double-quoted
    /// attribute value, where tab, line feed and `"` are escaped too).
    static func appendEscaped(_ bytes: UnsafeRawBufferPointer, to output: ByteBuffer, inAttribute: Bool) -> Bool {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return true }
        let count = bytes.count
        // The common case: nothing to escape.
        var clean = true
        for index in 0..<count {
            let byte = base[index]
            if byte < 0x20 || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">")
                || byte == 0xEF || (inAttribute && byte == UInt8(ascii: "\""))
            {
                clean = false
                break
            }
        }
        if clean {
            output.append(base, count: count)
            return true
        }
        guard isValidXML(bytes) else { return false }
        var runStart = 0
        for index in 0..<count {
            let replacement: StaticString
            switch base[index] {
            case UInt8(ascii: "&"): replacement = "&amp;"
            case UInt8(ascii: "<"): replacement = "&lt;"
            case UInt8(ascii: ">"): replacement = "&gt;"
            case 0x0D: replacement = "&#13;"
            case 0x0A where inAttribute: replacement = "&#10;"
            case 0x09 where inAttribute: replacement = "&#9;"
            case UInt8(ascii: "\"") where inAttribute: replacement = "&quot;"
            default: continue
            }
            output.append(base + runStart, count: index - runStart)
            output.append(replacement)
            runStart = index + 1
        }
        output.append(base + runStart, count: count - runStart)
        return true
    }

    /// Whether UTF-8 text holds only characters XML 1.0 allows.
    static func isValidXML(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return true }
        let count = bytes.count
        for index in 0..<count {
            let byte = base[index]
            if byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D { return false }
            // U+FFFE and U+FFFF are EF BF BE and EF BF BF.
            if byte == 0xEF && index + 2 < count && base[index + 1] == 0xBF && base[index + 2] >= 0xBE { return false }
        }
        return true
    }
}
