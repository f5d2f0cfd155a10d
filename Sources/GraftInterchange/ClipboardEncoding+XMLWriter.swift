import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// Writes a clipboard in Graft's own XML format (`Formats/clipboard.xsd`): one element a line, two
/// spaces a level, each value the text of an `<attribute>` or `<identity>` element.
///
/// Strings XML 1.0 cannot carry (control characters other than tab, line feed and carriage return, and
/// U+FFFE, U+FFFF) are written as base64 of their UTF-8 bytes and marked `encoding="base64"`; carriage
/// returns are written as `&#13;` so that they survive a parser's line-end normalisation.
struct ClipboardXMLWriter {
    let clipboard: Clipboard
    let schema: ClipboardSchema
    let output: ByteBuffer

    mutating func write() throws {
        output.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<clipboard format=\"")
        output.append(string: Clipboard.formatName)
        output.append("\" version=\"")
        output.append(decimal: Int64(Clipboard.formatVersion))
        output.append("\">\n  <encoding")
        for entry in ClipboardDeclaration.entries(.xml) {
            output.append(UInt8(ascii: " "))
            output.append(string: entry.key)
            try attributeValue(entry.value)
        }
        output.append("/>\n")
        if clipboard.entities.isEmpty && clipboard.versionIdentifiers.isEmpty && clipboard.modelContents == nil {
            output.append("  <model/>\n")
        } else {
            output.append("  <model>\n")
            for entity in clipboard.entities { try writeEntity(entity) }
            for identifier in clipboard.versionIdentifiers {
                output.append("    <versionIdentifier")
                try textValue(identifier, element: "versionIdentifier")
            }
            if let contents = clipboard.modelContents {
                output.append("    <contents>")
                output.append(base64: contents)
                output.append("</contents>\n")
            }
            output.append("  </model>\n")
        }
        if let store = clipboard.sourceStore {
            output.append("  <source store")
            try attributeValue(store)
            output.append("/>\n")
        }
        if clipboard.roots.isEmpty {
            output.append("  <roots/>\n")
        } else {
            output.append("  <roots>\n")
            for root in clipboard.roots {
                output.append("    <root ref")
                try attributeValue(root)
                output.append("/>\n")
            }
            output.append("  </roots>\n")
        }
        if clipboard.objects.isEmpty {
            output.append("  <objects/>\n")
        } else {
            output.append("  <objects>\n")
            var last = -1
            for object in clipboard.objects {
                try writeObject(object, last: &last)
                try output.flushIfFull()
            }
            output.append("  </objects>\n")
        }
        if clipboard.references.isEmpty {
            output.append("  <references/>\n")
        } else {
            output.append("  <references>\n")
            var last = -1
            for reference in clipboard.references {
                try writeReference(reference, last: &last)
                try output.flushIfFull()
            }
            output.append("  </references>\n")
        }
        output.append("</clipboard>\n")
    }

    private func writeEntity(_ entity: Clipboard.EntityInfo) throws {
        output.append("    <entity name")
        try attributeValue(entity.name)
        output.append(" versionHash=\"")
        output.append(base64: entity.versionHash)
        if entity.attributes.isEmpty && entity.relationships.isEmpty {
            output.append("\"/>\n")
            return
        }
        output.append("\">\n")
        for attribute in entity.attributes {
            output.append("      <attribute name")
            try attributeValue(attribute.name)
            output.append(" type=\"")
            output.append(string: ClipboardValues.typeName(attribute.type))
            output.append("\"/>\n")
        }
        for relationship in entity.relationships {
            output.append("      <relationship name")
            try attributeValue(relationship.name)
            output.append(relationship.isToMany ? " toMany=\"true\"" : " toMany=\"false\"")
            output.append(relationship.isOrdered ? " ordered=\"true\"/>\n" : " ordered=\"false\"/>\n")
        }
        output.append("    </entity>\n")
    }

    private func writeObject(_ object: Clipboard.Object, last: inout Int) throws {
        let index = schema.entity(named: object.entity, last: last)!
        last = index
        output.append("    <object id")
        try attributeValue(object.id, id: object.id)
        output.append(" entity")
        try attributeValue(object.entity, id: object.id)
        if object.attributes.isEmpty && object.relationships.isEmpty {
            output.append("/>\n")
            return
        }
        output.append(">\n")
        try writeValues(object.attributes, entity: schema.entities[index], element: "attribute", id: object.id)
        for link in object.relationships {
            output.append("      <relationship name")
            try attributeValue(link.name, id: object.id)
            output.append(UInt8(ascii: ">"))
            for target in link.targets {
                output.append("<target ref")
                try attributeValue(target, id: object.id)
                output.append("/>")
            }
            output.append("</relationship>\n")
        }
        output.append("    </object>\n")
    }

    private func writeReference(_ reference: Clipboard.Reference, last: inout Int) throws {
        let index = schema.entity(named: reference.entity, last: last)!
        last = index
        output.append("    <reference id")
        try attributeValue(reference.id, id: reference.id)
        output.append(" entity")
        try attributeValue(reference.entity, id: reference.id)
        if let uri = reference.uri {
            output.append(" uri")
            try attributeValue(uri, id: reference.id)
        }
        if reference.identity.isEmpty {
            output.append("/>\n")
            return
        }
        output.append(">\n")
        try writeValues(reference.identity, entity: schema.entities[index], element: "identity", id: reference.id)
        output.append("    </reference>\n")
    }

    private func writeValues(
        _ values: [Clipboard.NamedValue], entity: ClipboardSchema.Entity, element: StaticString, id: String
    ) throws {
        for named in values {
            output.append("      <")
            output.append(element)
            output.append(" name")
            try attributeValue(named.name, id: id)
            switch named.value {
            case .integer(let integer):
                output.append(UInt8(ascii: ">"))
                output.append(decimal: integer)
            case .double(let double):
                output.append(UInt8(ascii: ">"))
                number(double)
            case .date(let date):
                output.append(UInt8(ascii: ">"))
                number(date.timeIntervalSinceReferenceDate)
            case .decimal(let decimal):
                output.append(UInt8(ascii: ">"))
                NumberText.append(decimal, to: output)
            case .string(var text):
                text.withUTF8 { utf8 in
                    let bytes = UnsafeRawBufferPointer(utf8)
                    if ByteText.xmlCanCarry(bytes) {
                        output.append(UInt8(ascii: ">"))
                        ClipboardXMLEscaping.appendText(bytes, to: output)
                    } else {
                        output.append(" encoding=\"base64\">")
                        output.append(base64: bytes)
                    }
                }
            case .bool(let bool):
                output.append(bool ? ">true" : ">false")
            case .data(let data):
                output.append(UInt8(ascii: ">"))
                output.append(base64: data)
            case .uuid(let uuid):
                output.append(UInt8(ascii: ">"))
                ClipboardUUID.append(uuid, to: output)
            case .uri(let url):
                output.append(UInt8(ascii: ">"))
                var text = ClipboardValueText.uriText(url)
                text.withUTF8 { ClipboardXMLEscaping.appendText(UnsafeRawBufferPointer($0), to: output) }
            }
            output.append("</")
            output.append(element)
            output.append(">\n")
        }
    }

    @inline(__always)
    private func number(_ double: Double) {
        if double.isFinite {
            output.append(double: double)
        } else if double.isNaN {
            output.append("NaN")
        } else {
            output.append(double < 0 ? "-Infinity" : "Infinity")
        }
    }

    /// Writes `="value"` with the value escaped; names, ids and URIs XML cannot carry are refused.
    private func attributeValue(_ value: String, id: String? = nil) throws {
        var copy = value
        try copy.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            guard ByteText.xmlCanCarry(bytes) else {
                throw GraftError(
                    .malformedInput,
                    "'\(ByteText.excerpt(value.debugDescription))' holds a character XML cannot carry",
                    context: id.map { [.object($0)] } ?? [])
            }
            output.append("=\"")
            ClipboardXMLEscaping.appendAttribute(bytes, to: output)
            output.append(UInt8(ascii: "\""))
        }
    }

    /// Writes `>text</element>` (or ` encoding="base64">…` for text XML cannot carry) and a line end.
    private func textValue(_ value: String, element: StaticString) throws {
        var copy = value
        copy.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            if ByteText.xmlCanCarry(bytes) {
                output.append(UInt8(ascii: ">"))
                ClipboardXMLEscaping.appendText(bytes, to: output)
            } else {
                output.append(" encoding=\"base64\">")
                output.append(base64: bytes)
            }
        }
        output.append("</")
        output.append(element)
        output.append(">\n")
    }
}
