import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// Writes a clipboard as JSON: the document's sections one per line or block, each object and reference
/// on a line of its own, keys in a fixed order, so that documents diff cleanly.
struct ClipboardJSONWriter {
    let clipboard: Clipboard
    let schema: ClipboardSchema
    let output: ByteBuffer

    mutating func write() throws {
        output.append("{\n  \"format\": ")
        string(Clipboard.formatName)
        output.append(",\n  \"version\": ")
        output.append(decimal: Int64(Clipboard.formatVersion))
        output.append(",\n  \"encoding\": {")
        for (position, entry) in ClipboardDeclaration.entries(.json).enumerated() {
            if position > 0 { output.append(", ") }
            string(entry.key)
            output.append(": ")
            string(entry.value)
        }
        output.append("},\n  \"model\": {\n    \"entities\": [")
        for (position, entity) in clipboard.entities.enumerated() {
            output.append(position == 0 ? "\n      " : ",\n      ")
            writeEntity(entity)
        }
        output.append(
            clipboard.entities.isEmpty ? "],\n    \"versionIdentifiers\": [" : "\n    ],\n    \"versionIdentifiers\": ["
        )
        writeStrings(clipboard.versionIdentifiers)
        if let contents = clipboard.modelContents {
            output.append("],\n    \"contents\": \"")
            output.append(base64: contents)
            output.append("\"\n  },\n")
        } else {
            output.append("]\n  },\n")
        }
        if let store = clipboard.sourceStore {
            output.append("  \"source\": {\"store\": ")
            string(store)
            output.append("},\n")
        }
        output.append("  \"roots\": [")
        writeStrings(clipboard.roots)
        output.append("],\n  \"objects\": [")
        var last = -1
        if clipboard.objects.count >= Self.parallelThreshold && ProcessInfo.processInfo.activeProcessorCount > 1 {
            try writeObjectsInParallel()
        } else {
            try writeObjects(clipboard.objects.indices, last: &last)
        }
        output.append(clipboard.objects.isEmpty ? "],\n  \"references\": [" : "\n  ],\n  \"references\": [")
        for (position, reference) in clipboard.references.enumerated() {
            output.append(position == 0 ? "\n    " : ",\n    ")
            try writeReference(reference, last: &last)
            try output.flushIfFull()
        }
        output.append(clipboard.references.isEmpty ? "]\n}\n" : "\n  ]\n}\n")
    }

    /// Documents with at least this many objects are written on several threads.
    static let parallelThreshold = 50_000

    /// Objects at `range`, each after its separator.
    private func writeObjects(_ range: Range<Int>, last: inout Int) throws {
        for position in range {
            output.append(position == 0 ? "\n    " : ",\n    ")
            try writeObject(clipboard.objects[position], last: &last)
            try output.flushIfFull()
        }
    }

    /// The objects in rounds: each round's objects are split between the processors, each part written
    /// into a buffer of its own at the same time, and the buffers appended in order. The output is the
    /// same as one thread writes; memory stays bounded by a round.
    private func writeObjectsInParallel() throws {
        let parts = min(ProcessInfo.processInfo.activeProcessorCount, 8)
        let partSize = 8192
        nonisolated(unsafe) let buffers = (0..<parts).map { _ in ByteBuffer(capacity: 1 << 16) }
        var start = 0
        while start < clipboard.objects.count {
            let round = start..<min(clipboard.objects.count, start + parts * partSize)
            // Each part writes only its own buffer; errors are gathered under the lock, and the one
            // from the earliest part is thrown, as one thread would have.
            nonisolated(unsafe) var failures: [(part: Int, error: Error)] = []
            let lock = NSLock()
            nonisolated(unsafe) let writer = self
            DispatchQueue.concurrentPerform(iterations: parts) { part in
                let lower = min(round.upperBound, round.lowerBound + part * partSize)
                let range = lower..<min(round.upperBound, lower + partSize)
                let buffer = buffers[part]
                buffer.removeAll()
                var last = -1
                do {
                    try ClipboardJSONWriter(clipboard: writer.clipboard, schema: writer.schema, output: buffer)
                        .writeObjects(range, last: &last)
                } catch {
                    lock.withLock { failures.append((part, error)) }
                }
            }
            if let first = failures.min(by: { $0.part < $1.part }) { throw first.error }
            for buffer in buffers {
                output.append(UnsafeRawBufferPointer(start: buffer.base, count: buffer.count))
                try output.flushIfFull()
            }
            start = round.upperBound
        }
    }

    private func writeEntity(_ entity: Clipboard.EntityInfo) {
        output.append("{\"name\": ")
        string(entity.name)
        output.append(", \"versionHash\": \"")
        output.append(base64: entity.versionHash)
        output.append("\", \"attributes\": [")
        for (position, attribute) in entity.attributes.enumerated() {
            output.append(position == 0 ? "{\"name\": " : ", {\"name\": ")
            string(attribute.name)
            output.append(", \"type\": ")
            string(ClipboardValues.typeName(attribute.type))
            output.append(UInt8(ascii: "}"))
        }
        output.append("], \"relationships\": [")
        for (position, relationship) in entity.relationships.enumerated() {
            output.append(position == 0 ? "{\"name\": " : ", {\"name\": ")
            string(relationship.name)
            output.append(relationship.isToMany ? ", \"toMany\": true" : ", \"toMany\": false")
            output.append(relationship.isOrdered ? ", \"ordered\": true}" : ", \"ordered\": false}")
        }
        output.append("]}")
    }

    private func writeStrings(_ strings: [String]) {
        for (position, text) in strings.enumerated() {
            if position > 0 { output.append(", ") }
            string(text)
        }
    }

    private func writeObject(_ object: Clipboard.Object, last: inout Int) throws {
        // `check()` has passed: the entity exists.
        let index = schema.entity(named: object.entity, last: last)!
        last = index
        let entity = schema.entities[index]
        output.append("{\"id\": ")
        string(object.id)
        output.append(", \"entity\": ")
        string(object.entity)
        output.append(", \"attributes\": {")
        writeValues(object.attributes)
        output.append("}, \"relationships\": {")
        var hint = 0
        for (position, link) in object.relationships.enumerated() {
            if position > 0 { output.append(", ") }
            string(link.name)
            output.append(": ")
            let relationship = entity.relationship(named: link.name, hint: &hint)!
            if !entity.relationships[relationship].isToMany && link.targets.count == 1 {
                string(link.targets[0])
            } else {
                output.append(UInt8(ascii: "["))
                writeStrings(link.targets)
                output.append(UInt8(ascii: "]"))
            }
        }
        output.append("}}")
    }

    private func writeReference(_ reference: Clipboard.Reference, last: inout Int) throws {
        let index = schema.entity(named: reference.entity, last: last)!
        last = index
        output.append("{\"id\": ")
        string(reference.id)
        output.append(", \"entity\": ")
        string(reference.entity)
        output.append(", \"identity\": {")
        writeValues(reference.identity)
        output.append(UInt8(ascii: "}"))
        if let uri = reference.uri {
            output.append(", \"uri\": ")
            string(uri)
        }
        output.append(UInt8(ascii: "}"))
    }

    private func writeValues(_ values: [Clipboard.NamedValue]) {
        for (position, named) in values.enumerated() {
            if position > 0 { output.append(", ") }
            string(named.name)
            output.append(": ")
            value(named.value)
        }
    }

    @inline(__always)
    private func value(_ value: Value) {
        switch value {
        case .integer(let integer):
            output.append(decimal: integer)
        case .double(let double):
            number(double)
        case .date(let date):
            number(date.timeIntervalSinceReferenceDate)
        case .decimal(let decimal):
            output.append(UInt8(ascii: "\""))
            NumberText.append(decimal, to: output)
            output.append(UInt8(ascii: "\""))
        case .string(let text):
            string(text)
        case .bool(let bool):
            output.append(bool ? "true" : "false")
        case .data(let data):
            output.append(UInt8(ascii: "\""))
            output.append(base64: data)
            output.append(UInt8(ascii: "\""))
        case .uuid(let uuid):
            output.append(UInt8(ascii: "\""))
            ClipboardUUID.append(uuid, to: output)
            output.append(UInt8(ascii: "\""))
        case .uri(let url):
            string(ClipboardValueText.uriText(url))
        }
    }

    @inline(__always)
    private func number(_ double: Double) {
        if double.isFinite {
            output.append(double: double)
        } else if double.isNaN {
            output.append("\"NaN\"")
        } else {
            output.append(double < 0 ? "\"-Infinity\"" : "\"Infinity\"")
        }
    }

    /// Writes a JSON string: `"` and `\` escaped, control characters as `\n`, `\t`, … or `\u00XX`, all
    /// else as UTF-8.
    @inline(__always)
    private func string(_ text: String) {
        var text = text
        text.withUTF8 { ClipboardJSONWriter.string(UnsafeRawBufferPointer($0), to: output) }
    }

    static func string(_ bytes: UnsafeRawBufferPointer, to output: ByteBuffer) {
        output.reserve(bytes.count + 2)
        output.append(UInt8(ascii: "\""))
        var runStart = 0
        let count = bytes.count
        var index = 0
        while index < count {
            let byte = bytes[index]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C {
                index += 1
                continue
            }
            if index > runStart { output.append(UnsafeRawBufferPointer(rebasing: bytes[runStart..<index])) }
            switch byte {
            case 0x22: output.append(UInt8(ascii: "\\"), UInt8(ascii: "\""))
            case 0x5C: output.append(UInt8(ascii: "\\"), UInt8(ascii: "\\"))
            case 0x0A: output.append(UInt8(ascii: "\\"), UInt8(ascii: "n"))
            case 0x0D: output.append(UInt8(ascii: "\\"), UInt8(ascii: "r"))
            case 0x09: output.append(UInt8(ascii: "\\"), UInt8(ascii: "t"))
            case 0x08: output.append(UInt8(ascii: "\\"), UInt8(ascii: "b"))
            case 0x0C: output.append(UInt8(ascii: "\\"), UInt8(ascii: "f"))
            default:
                let hex = Array("0123456789abcdef".utf8)
                output.append("\\u00")
                output.append(hex[Int(byte >> 4)], hex[Int(byte & 0x0F)])
            }
            index += 1
            runStart = index
        }
        if count > runStart { output.append(UnsafeRawBufferPointer(rebasing: bytes[runStart..<count])) }
        output.append(UInt8(ascii: "\""))
    }
}
