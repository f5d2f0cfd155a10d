import Foundation
import GraftCore
import GraftInterchange
import Testing

/// An element with a great many attributes is read in time linear in them: each name is checked against
/// the earlier ones in a set once there are more than a few, not by comparing it with every one (100,000
/// attributes took over 20 seconds). How long the reading takes is measured outside the tests; these check
/// that such a document reads, or is refused for what it is, and that a repeated name is still found.
@Suite struct ClipboardManyAttributesTests {
    static let many = 100_000

    /// ` a0="0" a1="1" …`, and the name `repeated` once more at the end.
    static func attributes(_ count: Int, repeating repeated: Int? = nil) -> String {
        var text = ""
        text.reserveCapacity(count * 16)
        for index in 0..<count { text += " a\(index)=\"\(index)\"" }
        if let repeated { text += " a\(repeated)=\"again\"" }
        return text
    }

    /// The small sample in `encoding` with `attributes` added to the start tag `<tag`.
    static func document(_ encoding: ClipboardEncoding, tag: String, attributes: String) throws -> Data {
        let text = String(decoding: try encoding.encode(ClipboardSamples.small), as: UTF8.self)
        guard let range = text.range(of: "<\(tag)") else {
            throw GraftError(.notFound, "\(encoding): the sample has no <\(tag)")
        }
        return Data(text.replacingCharacters(in: range, with: "<\(tag)" + attributes).utf8)
    }

    @Test func anXMLClipboardRootWithManyAttributesIsRefusedForTheFirstOneItDoesNotKnow() throws {
        let data = try Self.document(.xml, tag: "clipboard", attributes: Self.attributes(Self.many))
        let error = try #require(throws: GraftError.self) { try ClipboardEncoding.xml.decode(data) }
        #expect(error.code == .malformedInput)
        #expect(error.message.contains("an attribute 'a0' the format does not know"), "\(error)")
    }

    @Test func aPropertyListClipboardReadsWithManyAttributesOnAnElement() throws {
        let data = try Self.document(.plist, tag: "dict", attributes: Self.attributes(Self.many))
        #expect(try ClipboardEncoding.plist.decode(data) == ClipboardSamples.small)
    }

    @Test(arguments: [(ClipboardEncoding.xml, "clipboard"), (.plist, "dict")])
    func aRepeatedNameIsFoundAmongManyAttributes(_ encoding: ClipboardEncoding, tag: String) throws {
        for (count, repeated) in [(5, 3), (Self.many, 7), (Self.many, Self.many - 1)] {
            let data = try Self.document(encoding, tag: tag, attributes: Self.attributes(count, repeating: repeated))
            let error = try #require(throws: GraftError.self) { try encoding.decode(data) }
            #expect(error.code == .malformedInput)
            #expect(error.message.hasSuffix("clipboard: the attribute 'a\(repeated)' appears twice"), "\(error)")
            #expect(error.context.contains { if case .line = $0 { true } else { false } }, "\(error)")
        }
    }
}
