import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// Escaping text for the two XML encodings.
enum ClipboardXMLEscaping {
    /// Appends element content: `&`, `<` and `>` as references, carriage returns as `&#13;` (a parser would
    /// turn a literal one into a line feed). The text must be one XML can carry.
    static func appendText(_ bytes: UnsafeRawBufferPointer, to output: ByteBuffer) {
        output.reserve(bytes.count)
        var runStart = 0
        let count = bytes.count
        for index in 0..<count {
            let byte = bytes[index]
            let replacement: StaticString
            switch byte {
            case UInt8(ascii: "&"): replacement = "&amp;"
            case UInt8(ascii: "<"): replacement = "&lt;"
            case UInt8(ascii: ">"): replacement = "&gt;"
            case 0x0D: replacement = "&#13;"
            default: continue
            }
            if index > runStart { output.append(UnsafeRawBufferPointer(rebasing: bytes[runStart..<index])) }
            output.append(replacement)
            runStart = index + 1
        }
        if count > runStart { output.append(UnsafeRawBufferPointer(rebasing: bytes[runStart..<count])) }
    }

    /// Appends an attribute value: `&`, `<`, `>` and `"` as references, and tab, line feed and carriage
    /// return as character references (attribute-value normalisation would turn them into spaces).
    static func appendAttribute(_ bytes: UnsafeRawBufferPointer, to output: ByteBuffer) {
        output.reserve(bytes.count)
        var runStart = 0
        let count = bytes.count
        for index in 0..<count {
            let byte = bytes[index]
            let replacement: StaticString
            switch byte {
            case UInt8(ascii: "&"): replacement = "&amp;"
            case UInt8(ascii: "<"): replacement = "&lt;"
            case UInt8(ascii: ">"): replacement = "&gt;"
            case UInt8(ascii: "\""): replacement = "&quot;"
            case 0x09: replacement = "&#9;"
            case 0x0A: replacement = "&#10;"
            case 0x0D: replacement = "&#13;"
            default: continue
            }
            if index > runStart { output.append(UnsafeRawBufferPointer(rebasing: bytes[runStart..<index])) }
            output.append(replacement)
            runStart = index + 1
        }
        if count > runStart { output.append(UnsafeRawBufferPointer(rebasing: bytes[runStart..<count])) }
    }
}

/// Writes a clipboard as an XML property list in Apple's layout (tabs, one element a line), with the
/// values typed as `Formats/clipboard.md` says: dates as reals, decimals as strings, and strings XML
/// cannot carry as data holding their UTF-8 bytes.
struct ClipboardPlistWriter {
    let clipboard: Clipboard
    let schema: ClipboardSchema
    let output: ByteBuffer

    mutating func write() throws {
        output.append(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>\n
            """)
        try key(named: ClipboardKey.format, 1)
        try string(Clipboard.formatName, 1)
        try key(named: ClipboardKey.version, 1)
        line(1, "<integer>1</integer>")
        try key(named: ClipboardKey.encoding, 1)
        line(1, "<dict>")
        for entry in ClipboardDeclaration.entries(.plist) {
            try key(named: entry.key, 2)
            try string(entry.value, 2)
        }
        line(1, "</dict>")
        try key(named: ClipboardKey.model, 1)
        line(1, "<dict>")
        key("entities", 2)
        if clipboard.entities.isEmpty { line(2, "<array/>") } else { line(2, "<array>") }
        for entity in clipboard.entities { try writeEntity(entity) }
        if !clipboard.entities.isEmpty { line(2, "</array>") }
        key("versionIdentifiers", 2)
        try strings(clipboard.versionIdentifiers, 2, what: "a version identifier")
        if let contents = clipboard.modelContents {
            key("contents", 2)
            indent(2)
            output.append("<data>")
            output.append(base64: contents)
            output.append("</data>\n")
        }
        line(1, "</dict>")
        if let store = clipboard.sourceStore {
            try key(named: ClipboardKey.source, 1)
            line(1, "<dict>")
            key("store", 2)
            try string(store, 2, what: "the source store")
            line(1, "</dict>")
        }
        try key(named: ClipboardKey.roots, 1)
        try strings(clipboard.roots, 1, what: "a root")
        try key(named: ClipboardKey.objects, 1)
        line(1, clipboard.objects.isEmpty ? "<array/>" : "<array>")
        var last = -1
        for object in clipboard.objects {
            try writeObject(object, last: &last)
            try output.flushIfFull()
        }
        if !clipboard.objects.isEmpty { line(1, "</array>") }
        try key(named: ClipboardKey.references, 1)
        line(1, clipboard.references.isEmpty ? "<array/>" : "<array>")
        for reference in clipboard.references {
            try writeReference(reference, last: &last)
            try output.flushIfFull()
        }
        if !clipboard.references.isEmpty { line(1, "</array>") }
        output.append("</dict>\n</plist>\n")
    }

    private func writeEntity(_ entity: Clipboard.EntityInfo) throws {
        line(3, "<dict>")
        key("name", 4)
        try string(entity.name, 4, what: "an entity name")
        key("versionHash", 4)
        indent(4)
        output.append("<data>")
        output.append(base64: entity.versionHash)
        output.append("</data>\n")
        key("attributes", 4)
        line(4, entity.attributes.isEmpty ? "<array/>" : "<array>")
        for attribute in entity.attributes {
            line(5, "<dict>")
            key("name", 6)
            try string(attribute.name, 6, what: "an attribute name")
            key("type", 6)
            try string(ClipboardValues.typeName(attribute.type), 6)
            line(5, "</dict>")
        }
        if !entity.attributes.isEmpty { line(4, "</array>") }
        key("relationships", 4)
        line(4, entity.relationships.isEmpty ? "<array/>" : "<array>")
        for relationship in entity.relationships {
            line(5, "<dict>")
            key("name", 6)
            try string(relationship.name, 6, what: "a relationship name")
            key("toMany", 6)
            line(6, relationship.isToMany ? "<true/>" : "<false/>")
            key("ordered", 6)
            line(6, relationship.isOrdered ? "<true/>" : "<false/>")
            line(5, "</dict>")
        }
        if !entity.relationships.isEmpty { line(4, "</array>") }
        line(3, "</dict>")
    }

    private func writeObject(_ object: Clipboard.Object, last: inout Int) throws {
        let index = schema.entity(named: object.entity, last: last)!
        last = index
        let entity = schema.entities[index]
        line(2, "<dict>")
        key("id", 3)
        try string(object.id, 3, what: "an id", id: object.id)
        key("entity", 3)
        try string(object.entity, 3, what: "an entity name", id: object.id)
        key("attributes", 3)
        try writeValues(object.attributes, id: object.id)
        key("relationships", 3)
        if object.relationships.isEmpty {
            line(3, "<dict/>")
        } else {
            line(3, "<dict>")
            var hint = 0
            for link in object.relationships {
                try key(named: link.name, 4, id: object.id)
                let relationship = entity.relationship(named: link.name, hint: &hint)!
                if !entity.relationships[relationship].isToMany && link.targets.count == 1 {
                    try string(link.targets[0], 4, what: "an id", id: object.id)
                } else {
                    try strings(link.targets, 4, what: "an id", id: object.id)
                }
            }
            line(3, "</dict>")
        }
        line(2, "</dict>")
    }

    private func writeReference(_ reference: Clipboard.Reference, last: inout Int) throws {
        let index = schema.entity(named: reference.entity, last: last)!
        last = index
        line(2, "<dict>")
        key("id", 3)
        try string(reference.id, 3, what: "an id", id: reference.id)
        key("entity", 3)
        try string(reference.entity, 3, what: "an entity name", id: reference.id)
        key("identity", 3)
        try writeValues(reference.identity, id: reference.id)
        if let uri = reference.uri {
            key("uri", 3)
            try string(uri, 3, what: "a URI", id: reference.id)
        }
        line(2, "</dict>")
    }

    private func writeValues(_ values: [Clipboard.NamedValue], id: String) throws {
        guard !values.isEmpty else {
            line(3, "<dict/>")
            return
        }
        line(3, "<dict>")
        for named in values {
            try key(named: named.name, 4, id: id)
            indent(4)
            switch named.value {
            case .integer(let integer):
                output.append("<integer>")
                output.append(decimal: integer)
                output.append("</integer>\n")
            case .double(let double):
                real(double)
            case .date(let date):
                real(date.timeIntervalSinceReferenceDate)
            case .decimal(let decimal):
                output.append("<string>")
                NumberText.append(decimal, to: output)
                output.append("</string>\n")
            case .string(var text):
                text.withUTF8 { utf8 in
                    let bytes = UnsafeRawBufferPointer(utf8)
                    if ByteText.xmlCanCarry(bytes) {
                        output.append("<string>")
                        ClipboardXMLEscaping.appendText(bytes, to: output)
                        output.append("</string>\n")
                    } else {
                        output.append("<data>")
                        output.append(base64: bytes)
                        output.append("</data>\n")
                    }
                }
            case .bool(let bool):
                output.append(bool ? "<true/>\n" : "<false/>\n")
            case .data(let data):
                output.append("<data>")
                output.append(base64: data)
                output.append("</data>\n")
            case .uuid(let uuid):
                output.append("<string>")
                ClipboardUUID.append(uuid, to: output)
                output.append("</string>\n")
            case .uri(let url):
                output.append("<string>")
                var text = ClipboardValueText.uriText(url)
                text.withUTF8 { ClipboardXMLEscaping.appendText(UnsafeRawBufferPointer($0), to: output) }
                output.append("</string>\n")
            }
        }
        line(3, "</dict>")
    }

    /// A real as Apple writes them: the shortest exact form, and `nan`, `+infinity`, `-infinity`.
    @inline(__always)
    private func real(_ value: Double) {
        output.append("<real>")
        if value.isFinite {
            output.append(double: value)
        } else if value.isNaN {
            output.append("nan")
        } else {
            output.append(value < 0 ? "-infinity" : "+infinity")
        }
        output.append("</real>\n")
    }

    // MARK: Lines

    @inline(__always)
    private func indent(_ depth: Int) { output.append(repeating: 0x09, count: depth) }

    @inline(__always)
    private func line(_ depth: Int, _ text: StaticString) {
        indent(depth)
        output.append(text)
        output.append(0x0A)
    }

    /// A `<key>`; keys are names the writer or the model chose, which XML can carry.
    private func key(named name: String, _ depth: Int, id: String? = nil) throws {
        indent(depth)
        output.append("<key>")
        try text(name, what: "a name", id: id)
        output.append("</key>\n")
    }

    private func key(_ name: StaticString, _ depth: Int) {
        indent(depth)
        output.append("<key>")
        output.append(name)
        output.append("</key>\n")
    }

    private func string(_ value: String, _ depth: Int, what: String = "a name", id: String? = nil) throws {
        indent(depth)
        output.append("<string>")
        try text(value, what: what, id: id)
        output.append("</string>\n")
    }

    private func strings(_ values: [String], _ depth: Int, what: String, id: String? = nil) throws {
        guard !values.isEmpty else {
            line(depth, "<array/>")
            return
        }
        line(depth, "<array>")
        for value in values { try string(value, depth + 1, what: what, id: id) }
        line(depth, "</array>")
    }

    private func text(_ value: String, what: String, id: String?) throws {
        var copy = value
        try copy.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            guard ByteText.xmlCanCarry(bytes) else {
                throw GraftError(
                    .malformedInput,
                    "\(what) '\(ByteText.excerpt(value.debugDescription))' holds a character XML cannot carry",
                    context: id.map { [.object($0)] } ?? [])
            }
            ClipboardXMLEscaping.appendText(bytes, to: output)
        }
    }
}
