import Foundation
import GraftCore
import GraftInterchange
import GraftTestSupport
import Testing

/// Broken documents give a `GraftError` that says what is wrong and where, in every encoding.
@Suite struct ClipboardInvalidInputTests {
    enum Breakage: String, CaseIterable, Sendable {
        case truncated, wrongFormat, newerVersion, unknownEntity, danglingID, wrongValueType, badBase64, deepNesting
    }

    @Test(arguments: ClipboardEncoding.allCases, Breakage.allCases)
    func brokenDocumentsSayWhatAndWhere(_ encoding: ClipboardEncoding, _ breakage: Breakage) throws {
        let data = try Self.broken(encoding, breakage)
        let error = #expect(throws: GraftError.self, "\(encoding), \(breakage)") { try encoding.decode(data) }
        guard let error else { return }
        let text = error.description
        switch breakage {
        case .truncated:
            expectClipboardError(error, .malformedInput, mentions: ["truncated"])
        case .wrongFormat:
            expectClipboardError(error, .unsupportedFormat, mentions: ["not a Graft clipboard", "other-format"])
        case .newerVersion:
            expectClipboardError(error, .unsupportedFormat, mentions: ["version 2", "newer"])
        case .unknownEntity:
            expectClipboardError(error, .malformedInput, mentions: ["Nowhere", "model"])
            #expect(error.context.contains(.object("o2")), "\(encoding): \(text)")
        case .danglingID:
            expectClipboardError(error, .malformedInput, mentions: ["o9"])
            #expect(
                error.context.contains(.object("o1")) && error.context.contains(.key("employees")),
                "\(encoding): \(text)")
        case .wrongValueType:
            expectClipboardError(error, .malformedInput, mentions: ["decimal"])
            #expect(
                error.context.contains(.key("salary")) && error.context.contains(.object("o2")), "\(encoding): \(text)")
        case .badBase64:
            expectClipboardError(error, .malformedInput, mentions: [encoding == .binaryPlist ? "data" : "base64"])
        case .deepNesting:
            #expect(error.code == .malformedInput, "\(encoding): \(text)")
            #expect(
                error.context.contains(.key("salary")) && error.context.contains(.object("o2")), "\(encoding): \(text)")
        }
        // Text encodings say the line, the binary property list the byte offset.
        #expect(
            error.context.contains { if case .line = $0 { true } else if case .offset = $0 { true } else { false } }
                || breakage == .danglingID, "\(encoding), \(breakage): no location in \(text)")
    }

    /// Nesting deeper than the readers follow is refused with a message, wherever a reader skips a value.
    @Test func deepNestingInSkippedPartsIsRefused() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let json = Data("{\"objects\": \(deep), \"format\": \"graft-clipboard\", \"version\": 1}".utf8)
        let jsonError = #expect(throws: GraftError.self) { try ClipboardEncoding.json.decode(json) }
        #expect(
            jsonError?.description.contains("nested more than 512 deep") == true, "\(String(describing: jsonError))")

        let arrays = String(repeating: "<array>", count: 100_000) + String(repeating: "</array>", count: 100_000)
        let plist = Data(
            "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>objects</key>\(arrays)</dict></plist>".utf8)
        let plistError = #expect(throws: GraftError.self) { try ClipboardEncoding.plist.decode(plist) }
        #expect(
            plistError?.description.contains("nested more than 512 deep") == true, "\(String(describing: plistError))")
    }

    /// A binary property list whose object list contains itself is refused, not followed forever.
    @Test func binaryReferenceCyclesAreRefused() throws {
        func string(_ text: String) -> [UInt8] {
            let bytes = Array(text.utf8)
            return bytes.count < 15 ? [0x50 | UInt8(bytes.count)] + bytes : [0x5F, 0x10, UInt8(bytes.count)] + bytes
        }
        let objects: [[UInt8]] = [
            [0xD4, 1, 2, 3, 7, 4, 5, 6, 8],  // the top dictionary: format, version, objects, model
            string("format"), string("version"), string("objects"), string("graft-clipboard"),
            [0x10, 0x01],  // 1
            [0xA1, 0x06],  // an array that contains itself
            string("model"), [0xD1, 9, 10], string("entities"), [0xA0],
        ]
        var data = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(data.count))
            data += object
        }
        let table = data.count
        data += offsets
        data += [0, 0, 0, 0, 0, 0, 1, 1]
        for value in [UInt64(objects.count), 0, UInt64(table)] {
            data += withUnsafeBytes(of: value.bigEndian) { Array($0) }
        }
        let error = #expect(throws: GraftError.self) { try ClipboardEncoding.binaryPlist.decode(Data(data)) }
        #expect(error?.description.contains("found an array") == true, "\(String(describing: error))")
    }

    @Test(arguments: ClipboardEncoding.allCases)
    func emptyAndForeignDataAreRefused(_ encoding: ClipboardEncoding) {
        #expect(throws: GraftError.self) { try encoding.decode(Data()) }
        #expect(throws: GraftError.self) { try encoding.decode(Data("hello".utf8)) }
        let error = #expect(throws: GraftError.self) { try ClipboardEncoding.decode(Data("hello".utf8)) }
        #expect(error?.code == .unsupportedFormat)
    }

    @Test func encodingRefusesDocumentsItCouldNotReadBack() {
        var unknownAttribute = ClipboardSamples.small
        unknownAttribute.references[0].identity = [.init("bonus", .integer(1))]
        var wrongType = ClipboardSamples.small
        wrongType.objects[1].attributes[0] = .init("salary", .string("lots"))
        var twoTargets = ClipboardSamples.small
        twoTargets.objects[1].relationships = [.init("department", ["o1", "o1"])]
        var uncarried = ClipboardSamples.everyType
        uncarried.objects[0].attributes.append(.init("unused", .integer(1)))
        var controlInName = ClipboardSamples.small
        controlInName.objects[0].id = "o\u{1}"
        controlInName.roots = ["o\u{1}"]
        controlInName.objects[1].relationships = [.init("department", ["o\u{1}"])]
        for (document, key) in [
            (unknownAttribute, "bonus"), (wrongType, "salary"), (twoTargets, "department"), (uncarried, "unused"),
        ] {
            for encoding in ClipboardEncoding.allCases {
                let error = #expect(throws: GraftError.self, "\(encoding), \(key)") { try encoding.encode(document) }
                #expect(error?.context.contains(.key(key)) == true, "\(encoding): \(String(describing: error))")
            }
        }
        // A decoded document is checked as it is read, and encoding trusts that check; changed, it is
        // checked again.
        for encoding in ClipboardEncoding.allCases {
            var decoded = try! ClipboardEncoding.decode(try! encoding.encode(ClipboardSamples.small))
            #expect(throws: Never.self) { try encoding.encode(decoded) }
            decoded.objects[1].attributes[0] = .init("salary", .string("lots"))
            let error = #expect(throws: GraftError.self, "\(encoding)") { try encoding.encode(decoded) }
            #expect(error?.context.contains(.key("salary")) == true, "\(encoding): \(String(describing: error))")
        }
        // A refused document leaves nothing half written behind in a sink.
        var large = ClipboardSamples.company(objects: 5_000)
        large.objects[large.objects.count - 1].id += "\u{1}"
        for encoding in [ClipboardEncoding.xml, .plist] {
            var chunks = 0
            #expect(throws: GraftError.self) { try encoding.encode(large) { _ in chunks += 1 } }
            #expect(chunks == 0, "\(encoding) wrote \(chunks) chunks of a document it refused")
        }
        // XML cannot carry a control character in an id; the other encodings can.
        #expect(throws: GraftError.self) { try ClipboardEncoding.xml.encode(controlInName) }
        #expect(throws: GraftError.self) { try ClipboardEncoding.plist.encode(controlInName) }
        #expect(throws: Never.self) { try expectClipboardRoundTrip(controlInName, .json) }
        #expect(throws: Never.self) { try expectClipboardRoundTrip(controlInName, .binaryPlist) }
    }

    @Test(arguments: ClipboardEncoding.allCases)
    func declarationsOtherThanTheOnesWrittenAreRefused(_ encoding: ClipboardEncoding) throws {
        let data = try encoding.encode(ClipboardSamples.small)
        let other: Data
        switch encoding {
        case .binaryPlist:
            guard case .dictionary(var top) = try BinaryPropertyList.decode(data),
                case .dictionary(var section)? = top["encoding"]
            else { throw GraftError(.notFound, "the sample's tree has changed") }
            section["date"] = "ISO 8601"
            top["encoding"] = .dictionary(section)
            other = BinaryPropertyList.encode(.dictionary(top))
        default:
            let text = String(decoding: data, as: UTF8.self)
            let date = "seconds since 2001-01-01T00:00:00Z"
            #expect(text.contains(date))
            other = Data(text.replacingOccurrences(of: date, with: "ISO 8601").utf8)
        }
        let error = #expect(throws: GraftError.self) { try encoding.decode(other) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("ISO 8601") == true, "\(String(describing: error))")
    }

    // MARK: Broken documents

    /// The small document, broken in the given way, in the given encoding.
    static func broken(_ encoding: ClipboardEncoding, _ breakage: Breakage) throws -> Data {
        let small = ClipboardSamples.small
        switch breakage {
        case .truncated:
            let data = try encoding.encode(small)
            return data.prefix(data.count * 2 / 3)
        case .danglingID:
            var dangling = small
            dangling.objects[0].relationships = [.init("employees", ["o2", "o9"])]
            return try encoding.encode(dangling)
        default:
            break
        }
        if encoding == .binaryPlist {
            var tree = try BinaryPropertyList.decode(try encoding.encode(small))
            try mutate(&tree, breakage)
            return BinaryPropertyList.encode(tree)
        }
        let text = String(decoding: try encoding.encode(small), as: UTF8.self)
        let (find, replacement) = textBreakage(encoding, breakage)
        guard text.contains(find) else { throw GraftError(.notFound, "\(encoding): the sample has no \(find)") }
        return Data(text.replacingOccurrences(of: find, with: replacement).utf8)
    }

    static func textBreakage(_ encoding: ClipboardEncoding, _ breakage: Breakage) -> (String, String) {
        let hash = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="
        let deep = String(repeating: "[", count: 50_000) + String(repeating: "]", count: 50_000)
        let deepXML = String(repeating: "<a>", count: 50_000) + String(repeating: "</a>", count: 50_000)
        switch (encoding, breakage) {
        case (.json, .wrongFormat): return ("\"graft-clipboard\"", "\"other-format\"")
        case (.json, .newerVersion): return ("\"version\": 1", "\"version\": 2")
        case (.json, .unknownEntity):
            return ("\"id\": \"o2\", \"entity\": \"Employee\"", "\"id\": \"o2\", \"entity\": \"Nowhere\"")
        case (.json, .wrongValueType): return ("\"salary\": \"52000.5\"", "\"salary\": true")
        case (.json, .badBase64): return (hash, "!!not base64!!")
        case (.json, .deepNesting): return ("\"salary\": \"52000.5\"", "\"salary\": \(deep)")
        case (.xml, .wrongFormat): return ("format=\"graft-clipboard\"", "format=\"other-format\"")
        case (.xml, .newerVersion): return ("version=\"1\">", "version=\"2\">")
        case (.xml, .unknownEntity): return ("id=\"o2\" entity=\"Employee\"", "id=\"o2\" entity=\"Nowhere\"")
        case (.xml, .wrongValueType): return ("<attribute name=\"salary\">52000.5<", "<attribute name=\"salary\">lots<")
        case (.xml, .badBase64): return (hash, "!!not base64!!")
        case (.xml, .deepNesting):
            return ("<attribute name=\"salary\">52000.5<", "<attribute name=\"salary\">\(deepXML)<")
        case (_, .wrongFormat): return ("<string>graft-clipboard</string>", "<string>other-format</string>")
        case (_, .newerVersion): return ("<integer>1</integer>", "<integer>2</integer>")
        case (_, .unknownEntity):
            return (
                "<string>o2</string>\n\t\t\t<key>entity</key>\n\t\t\t<string>Employee</string>",
                "<string>o2</string>\n\t\t\t<key>entity</key>\n\t\t\t<string>Nowhere</string>"
            )
        case (_, .wrongValueType): return ("<string>52000.5</string>", "<true/>")
        case (_, .badBase64): return (hash, "!!not base64!!")
        default:
            return (
                "<string>52000.5</string>",
                "<array>" + String(repeating: "<array>", count: 50_000) + String(repeating: "</array>", count: 50_001)
            )
        }
    }

    /// Breaks a binary property list's tree.
    static func mutate(_ tree: inout PropertyList, _ breakage: Breakage) throws {
        guard case .dictionary(var top) = tree, case .array(var objects)? = top["objects"],
            case .dictionary(var employee) = objects[1], case .dictionary(var attributes)? = employee["attributes"],
            case .dictionary(var model)? = top["model"], case .array(var entities)? = model["entities"],
            case .dictionary(var department) = entities[0]
        else { throw GraftError(.notFound, "the sample's tree has changed") }
        switch breakage {
        case .wrongFormat: top["format"] = "other-format"
        case .newerVersion: top["version"] = 2
        case .unknownEntity: employee["entity"] = "Nowhere"
        case .wrongValueType: attributes["salary"] = true
        case .badBase64: department["versionHash"] = "!!not base64!!"
        case .deepNesting:
            var nested: PropertyList = .array([])
            for _ in 0..<2_000 { nested = .array([nested]) }
            attributes["salary"] = nested
        default: break
        }
        employee["attributes"] = .dictionary(attributes)
        objects[1] = .dictionary(employee)
        top["objects"] = .array(objects)
        entities[0] = .dictionary(department)
        model["entities"] = .array(entities)
        top["model"] = .dictionary(model)
        tree = .dictionary(top)
    }
}

/// Expects an error of `code` whose text mentions each of `words` (in any letter case).
func expectClipboardError(
    _ error: GraftError, _ code: GraftError.Code, mentions words: [String],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    let text = error.description.lowercased()
    for word in words {
        #expect(text.contains(word.lowercased()), "'\(word)' not in: \(error)", sourceLocation: sourceLocation)
    }
}

/// Cut and corrupted documents give a `GraftError` (or, rarely, still a document), and never crash or hang.
@Suite struct ClipboardFuzzTests {
    @Test(arguments: ClipboardEncoding.allCases)
    func truncatedAndCorruptedDocuments(_ encoding: ClipboardEncoding) throws {
        let seed = RepeatableRandomNumberGenerator.seed(default: 20_261_130)
        var random = RepeatableRandomNumberGenerator(seed: seed)
        var document = ClipboardSamples.everyType
        // A smaller blob keeps each decode quick; the shapes stay the same.
        document.objects[1].attributes[6] = .init("blob", .data(Data((0..<300).map { UInt8($0 & 0xFF) })))
        document.objects[4].attributes[4] = .init("text", .string("long text"))
        let data = try encoding.encode(document)
        var outcomes = (errors: 0, documents: 0)
        func attempt(_ bytes: Data, _ what: String) {
            do {
                _ = try encoding.decode(bytes)
                outcomes.documents += 1
            } catch is GraftError {
                outcomes.errors += 1
            } catch {
                Issue.record("\(encoding), seed \(seed), \(what): not a GraftError: \(error)")
            }
        }
        for _ in 0..<300 {
            let length = Int.random(in: 0..<data.count, using: &random)
            attempt(data.prefix(length), "cut to \(length) bytes")
        }
        for _ in 0..<300 {
            var corrupted = data
            for _ in 0...Int.random(in: 0...2, using: &random) {
                let position = Int.random(in: 0..<corrupted.count, using: &random)
                corrupted[position] = UInt8.random(in: 0...255, using: &random)
            }
            attempt(corrupted, "corrupted")
        }
        #expect(outcomes.errors > 300, "seed \(seed): only \(outcomes.errors) errors")
    }
}
