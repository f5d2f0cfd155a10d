import Foundation
import GraftCore
import GraftInterchange
import GraftModel
import Testing

/// Every document reads back exactly, in every encoding.
@Suite struct ClipboardRoundTripTests {
    @Test(arguments: ClipboardEncoding.allCases)
    func everyTypeAndEdgeValue(_ encoding: ClipboardEncoding) throws {
        try expectClipboardRoundTrip(ClipboardSamples.everyType, encoding)
    }

    @Test(arguments: ClipboardEncoding.allCases)
    func emptyAndSmallDocuments(_ encoding: ClipboardEncoding) throws {
        try expectClipboardRoundTrip(ClipboardSamples.empty, encoding)
        try expectClipboardRoundTrip(ClipboardSamples.small, encoding)
    }

    @Test(arguments: ClipboardEncoding.allCases)
    func generatedDocument(_ encoding: ClipboardEncoding) throws {
        try expectClipboardRoundTrip(ClipboardSamples.company(objects: 2_000), encoding)
    }

    /// JSON documents of 50,000 objects and more are written on several threads, in rounds: the result
    /// reads back exactly, streamed or not, with every separator in place.
    @Test func aLargeJSONDocumentWrittenInParallel() throws {
        let clipboard = ClipboardSamples.company(objects: 50_001)
        let whole = try ClipboardEncoding.json.encode(clipboard)
        var streamed = Data()
        try ClipboardEncoding.json.encode(clipboard) { streamed.append(contentsOf: $0) }
        #expect(streamed == whole)
        #expect(try ClipboardEncoding.json.decode(whole) == clipboard)
        #expect(try JSONSerialization.jsonObject(with: whole) is [String: Any])
    }

    @Test(arguments: ClipboardEncoding.allCases)
    func streamingGivesTheSameBytes(_ encoding: ClipboardEncoding) throws {
        let clipboard = ClipboardSamples.company(objects: 5_000)
        var chunks = 0
        var streamed = Data()
        try encoding.encode(clipboard) { chunk in
            chunks += 1
            #expect(chunk.count > 0)
            streamed.append(contentsOf: chunk)
        }
        #expect(streamed == (try encoding.encode(clipboard)))
        #expect(chunks > 1, "a document of \(streamed.count) bytes came in one chunk")
    }

    @Test(arguments: ClipboardEncoding.allCases)
    func detection(_ encoding: ClipboardEncoding) throws {
        let data = try encoding.encode(ClipboardSamples.small)
        #expect(ClipboardEncoding.detect(data) == encoding)
        #expect(ClipboardEncoding.forExtension(URL(fileURLWithPath: "a.\(encoding.fileExtension)")) != nil)
    }

    @Test(arguments: ClipboardEncoding.allCases)
    func decodingAsAnotherEncodingIsRefused(_ encoding: ClipboardEncoding) throws {
        let data = try encoding.encode(ClipboardSamples.small)
        for other in ClipboardEncoding.allCases where other != encoding {
            let error = #expect(throws: GraftError.self) { try other.decode(data) }
            #expect(error?.code == .unsupportedFormat)
        }
    }

    @Test func documentOrderIsKept() throws {
        // Ordered to-many targets, attribute order and object order survive as they are.
        for encoding in ClipboardEncoding.allCases {
            let back = try ClipboardEncoding.decode(try encoding.encode(ClipboardSamples.everyType))
            #expect(back.objects[0][relationship: "parts"] == ["o3", "o2", "o4"], "\(encoding)")
            #expect(back.objects.map(\.id) == ClipboardSamples.everyType.objects.map(\.id), "\(encoding)")
        }
    }

    /// Text documents whose line ends became CRLF (an editor, a checkout) and that start with a byte-order
    /// mark read back the same: line ends in values are written as references, and white space between
    /// members means nothing.
    @Test(arguments: [ClipboardEncoding.plist, .json, .xml])
    func lineEndsAndByteOrderMarks(_ encoding: ClipboardEncoding) throws {
        let clipboard = ClipboardSamples.everyType
        let text = String(decoding: try encoding.encode(clipboard), as: UTF8.self)
        let windows = Data([0xEF, 0xBB, 0xBF]) + Data(text.replacingOccurrences(of: "\n", with: "\r\n").utf8)
        #expect(ClipboardEncoding.detect(windows) == encoding)
        #expect(try ClipboardEncoding.decode(windows) == clipboard)
    }

    /// XML written by other tools may have comments, processing instructions, a document type and CDATA.
    @Test func xmlMarkupOtherWritersUse() throws {
        var xml = String(decoding: try ClipboardEncoding.xml.encode(ClipboardSamples.small), as: UTF8.self)
        xml = xml.replacingOccurrences(
            of: "?>\n<clipboard", with: "?>\n<!-- copied from Sales -->\n<?editor x?>\n<!DOCTYPE clipboard>\n<clipboard"
        )
        xml = xml.replacingOccurrences(of: ">Sales<", with: "><![CDATA[Sa]]><!-- split -->les<")
        xml = xml.replacingOccurrences(of: "<objects>", with: "<objects><!-- the objects -->")
        xml = xml.replacingOccurrences(of: "</clipboard>", with: "</clipboard>\n<!-- end -->\n")
        #expect(try ClipboardEncoding.decode(Data(xml.utf8)) == ClipboardSamples.small)

        var plist = String(decoding: try ClipboardEncoding.plist.encode(ClipboardSamples.small), as: UTF8.self)
        plist = plist.replacingOccurrences(of: "?>\n", with: "?>\n<!-- a comment -->\n")
        plist = plist.replacingOccurrences(
            of: "<string>Sales</string>", with: "<string><![CDATA[Sa]]>l&#101;s</string>")
        #expect(try ClipboardEncoding.decode(Data(plist.utf8)) == ClipboardSamples.small)
    }

    @Test func negativeZeroKeepsItsSign() throws {
        for encoding in ClipboardEncoding.allCases {
            let back = try ClipboardEncoding.decode(try encoding.encode(ClipboardSamples.everyType))
            guard case .double(let zero) = back.objects[3][attribute: "ratio"] else {
                Issue.record("no ratio in \(encoding)")
                continue
            }
            #expect(zero == 0 && zero.sign == .minus, "\(encoding)")
        }
    }
}

/// Encodes and decodes `clipboard` and expects the same document back, value for value (`Value`'s `==`:
/// NaN equals NaN, doubles compare exactly, decimals numerically, dates by their seconds).
func expectClipboardRoundTrip(
    _ clipboard: Clipboard, _ encoding: ClipboardEncoding, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let data = try encoding.encode(clipboard)
    let back: Clipboard
    do {
        back = try ClipboardEncoding.decode(data)
    } catch {
        Issue.record("\(encoding): \(error)", sourceLocation: sourceLocation)
        return
    }
    guard back != clipboard else { return }
    // Say where the documents differ.
    #expect(back.entities == clipboard.entities, "\(encoding): entities", sourceLocation: sourceLocation)
    #expect(back.versionIdentifiers == clipboard.versionIdentifiers, "\(encoding)", sourceLocation: sourceLocation)
    #expect(back.sourceStore == clipboard.sourceStore, "\(encoding)", sourceLocation: sourceLocation)
    #expect(
        back.modelContents == clipboard.modelContents, "\(encoding): model contents", sourceLocation: sourceLocation)
    #expect(back.roots == clipboard.roots, "\(encoding)", sourceLocation: sourceLocation)
    #expect(back.objects.count == clipboard.objects.count, "\(encoding)", sourceLocation: sourceLocation)
    for (got, want) in zip(back.objects, clipboard.objects) where got != want {
        for (gotValue, wantValue) in zip(got.attributes, want.attributes) where gotValue != wantValue {
            Issue.record(
                "\(encoding): \(want.id).\(wantValue.name): \(gotValue.value) (\(gotValue.name)) instead of \(wantValue.value)",
                sourceLocation: sourceLocation)
        }
        #expect(
            got.attributes.count == want.attributes.count, "\(encoding): \(want.id)", sourceLocation: sourceLocation)
        #expect(got.relationships == want.relationships, "\(encoding): \(want.id)", sourceLocation: sourceLocation)
        #expect(got.id == want.id && got.entity == want.entity, "\(encoding)", sourceLocation: sourceLocation)
    }
    #expect(back.references == clipboard.references, "\(encoding): references", sourceLocation: sourceLocation)
}
