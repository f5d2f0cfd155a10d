import Foundation
@_spi(GraftInternal) import GraftCore
import GraftTestSupport
import Testing

@Suite struct XMLPropertyListTests {
    @Test(arguments: Samples.edgeValues)
    func roundTrip(name: String, value: PropertyList) throws {
        try expectRoundTrip(value)
        try expectRoundTrip(["wrapped": value, "again": [value, [value]]])
    }

    @Test func randomValuesRoundTrip() throws {
        var generator = RepeatableRandomNumberGenerator(seed: 0x786D_6C31)
        for _ in 0..<300 {
            let value = Samples.random(using: &generator)
            try expectRoundTrip(value, "seed \(generator.seed)")
        }
    }

    @Test func writesApplesLayout() {
        let value: PropertyList = [
            "arr": [], "big": .unsignedInteger(UInt64.max), "data": .data(Data(0..<100)),
            "date": .date(Date(timeIntervalSinceReferenceDate: 1.5)), "dict": .dictionary([:]), "e": 1e-300,
            "inf": .real(.infinity), "min": .integer(.min), "nan": .real(.nan),
            "nested": ["x": [.data(Data(0..<60))]], "ninf": .real(-.infinity), "one": 1.0, "r": 0.1,
            "s": "a<b>&\r\n\u{E9}😀", "t": true, "f": false, "u": .uid(7),
        ]
        let expected = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>arr</key>
            \t<array/>
            \t<key>big</key>
            \t<integer>18446744073709551615</integer>
            \t<key>data</key>
            \t<data>
            \tAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEy
            \tMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiYw==
            \t</data>
            \t<key>date</key>
            \t<date>2001-01-01T00:00:01Z</date>
            \t<key>dict</key>
            \t<dict/>
            \t<key>e</key>
            \t<real>1e-300</real>
            \t<key>inf</key>
            \t<real>+infinity</real>
            \t<key>min</key>
            \t<integer>-9223372036854775808</integer>
            \t<key>nan</key>
            \t<real>nan</real>
            \t<key>nested</key>
            \t<dict>
            \t\t<key>x</key>
            \t\t<array>
            \t\t\t<data>
            \t\t\tAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUm
            \t\t\tJygpKissLS4vMDEyMzQ1Njc4OTo7
            \t\t\t</data>
            \t\t</array>
            \t</dict>
            \t<key>ninf</key>
            \t<real>-infinity</real>
            \t<key>one</key>
            \t<real>1</real>
            \t<key>r</key>
            \t<real>0.1</real>
            \t<key>s</key>
            \t<string>a&lt;b&gt;&amp;&#13;
            é😀</string>
            \t<key>t</key>
            \t<true/>
            \t<key>f</key>
            \t<false/>
            \t<key>u</key>
            \t<dict>
            \t\t<key>CF$UID</key>
            \t\t<integer>7</integer>
            \t</dict>
            </dict>
            </plist>

            """
        let written = String(decoding: XMLPropertyList.encode(value), as: UTF8.self)
        #expect(written == expected)
    }

    @Test func writesAnEmbeddableElement() throws {
        var document = Array("<database>\n\t<metadata>\n".utf8)
        XMLPropertyList.appendPlistElement(["NSStoreType": "XML", "n": 1], to: &document, indentation: 2)
        document += Array("\t</metadata>\n</database>\n".utf8)
        let text = String(decoding: document, as: UTF8.self)
        #expect(
            text == """
                <database>
                \t<metadata>
                \t\t<plist version="1.0">
                \t\t<dict>
                \t\t\t<key>NSStoreType</key>
                \t\t\t<string>XML</string>
                \t\t\t<key>n</key>
                \t\t\t<integer>1</integer>
                \t\t</dict>
                \t\t</plist>
                \t</metadata>
                </database>

                """)
        let embedded = try Data(document).withUnsafeBytes { bytes in
            var scanner = XMLScanner(bytes, documentName: "store")
            try scanner.readRoot()
            #expect(try scanner.nextChild(of: "database") && scanner.isNamed("metadata"))
            #expect(try scanner.nextChild(of: "metadata") && scanner.isNamed("plist"))
            return try XMLPropertyList.decode(&scanner)
        }
        #expect(embedded == ["NSStoreType": "XML", "n": 1])
        #expect(XMLPropertyList.plistElement(true) == "<plist version=\"1.0\">\n<true/>\n</plist>\n")
    }

    @Test func writesDatesAsWholeSecondsRoundedDown() {
        func written(_ seconds: Double) -> String {
            let xml = String(
                decoding: XMLPropertyList.encode(.date(Date(timeIntervalSinceReferenceDate: seconds))), as: UTF8.self)
            let start = xml.range(of: "<date>")!.upperBound
            let end = xml.range(of: "</date>")!.lowerBound
            return String(xml[start..<end])
        }
        #expect(written(0) == "2001-01-01T00:00:00Z")
        #expect(written(0.999) == "2001-01-01T00:00:00Z")
        #expect(written(-0.5) == "2000-12-31T23:59:59Z")
        #expect(written(-978_307_200) == "1970-01-01T00:00:00Z")
        #expect(written(4_107_456_000) == "2131-03-01T00:00:00Z")
        #expect(written(-63_113_904_000) == "0001-01-01T00:00:00Z")
        #expect(written(.nan) == "2001-01-01T00:00:00Z")
    }

    @Test func readsWhatAppleAndPythonWrite() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>hex</key><integer>0x1F</integer>
                <key>negative hex</key><integer>-0x10</integer>
                <key>plus</key><integer>+5</integer>
                <key>spaced</key><integer> 12 </integer>
                <key>max</key><integer>18446744073709551615</integer>
                <key>min</key><integer>-9223372036854775808</integer>
                <key>reals</key>
                <array>
                    <real>nan</real><real>inf</real><real>-inf</real><real>+infinity</real><real>-Infinity</real>
                    <real>1.5E3</real><real>.5</real><real>0.10000000000000001</real><real>1</real>
                </array>
                <key>fractional date</key><date>2001-01-01T00:00:01.5Z</date>
                <key>data</key>
                <data>
                    AAEC
                    AwQF
                </data>
                <key>unpadded</key><data>AAE</data>
                <key>empty</key><string/>
                <key>entities</key><string>&lt;&amp;&gt; &#233; &#x1F600;</string>
                <key>cdata</key><string><![CDATA[<raw>]]></string>
                <key>uid</key><dict><key>CF$UID</key><integer>12</integer></dict>
                <key>not a uid</key><dict><key>CF$UID</key><string>12</string></dict>
            </dict>
            </plist>
            """
        let plist = try XMLPropertyList.decode(Data(xml.utf8))
        #expect(plist["hex"] == 31)
        #expect(plist["negative hex"] == -16)
        #expect(plist["plus"] == 5)
        #expect(plist["spaced"] == 12)
        #expect(plist["max"] == .unsignedInteger(.max))
        #expect(plist["min"] == .integer(.min))
        #expect(
            plist["reals"] == [
                .real(.nan), .real(.infinity), .real(-.infinity), .real(.infinity), .real(-.infinity),
                1500.0, 0.5, 0.1, 1.0,
            ])
        #expect(plist["fractional date"] == .date(Date(timeIntervalSinceReferenceDate: 1.5)))
        #expect(plist["data"] == .data(Data([0, 1, 2, 3, 4, 5])))
        #expect(plist["unpadded"] == .data(Data([0, 1])))
        #expect(plist["empty"] == "")
        #expect(plist["entities"] == "<&> é 😀")
        #expect(plist["cdata"] == "<raw>")
        #expect(plist["uid"] == .uid(12))
        #expect(plist["not a uid"] == ["CF$UID": "12"])
        #expect(plist.dictionaryValue?.keys.first == "hex")
    }

    @Test func readsABareValueElement() throws {
        #expect(try XMLPropertyList.decode(Data("<array><string>x</string></array>".utf8)) == ["x"])
    }

    static let malformed: [(name: String, xml: String, message: String, line: Int)] = [
        ("not XML", "this is not XML", "XML property list:", 1),
        ("unclosed element", "<plist version=\"1.0\">\n<dict>\n</plist>", "XML property list:", 3),
        (
            "unknown element", "<plist>\n<dict>\n<key>a</key>\n<float>1</float>\n</dict>\n</plist>",
            "unknown element <float>", 4
        ),
        ("key without value", "<plist>\n<dict>\n<key>a</key>\n</dict>\n</plist>", "has no value", 3),
        ("value without key", "<plist><dict>\n<string>a</string>\n</dict></plist>", "expected <key>", 2),
        ("key outside dict", "<plist><array>\n<key>a</key></array></plist>", "outside a <dict>", 2),
        ("integer too large", "<plist>\n<integer>18446744073709551616</integer></plist>", "not an integer", 2),
        ("integer too small", "<plist>\n<integer>-9223372036854775809</integer></plist>", "not an integer", 2),
        ("integer with a point", "<plist>\n<integer>1.5</integer></plist>", "not an integer", 2),
        ("empty integer", "<plist>\n<integer/></plist>", "not an integer", 2),
        ("bad real", "<plist>\n<real>abc</real></plist>", "not a real", 2),
        ("bad date", "<plist>\n<date>2001-13-01T00:00:00Z</date></plist>", "not a date", 2),
        ("date without zone", "<plist>\n<date>2001-01-01T00:00:00</date></plist>", "not a date", 2),
        ("bad base64", "<plist>\n<data>@@@@</data></plist>", "not valid base64", 2),
        ("two values", "<plist>\n<true/><false/></plist>", "exactly one value", 1),
        ("no value", "<plist>\n</plist>", "exactly one value", 1),
        ("nested plist", "<plist><array>\n<plist/></array></plist>", "<plist> inside", 2),
        (
            "entity declaration", "<!DOCTYPE plist [<!ENTITY a \"b\">]><plist><string>&a;</string></plist>", "entities",
            0
        ),
    ]

    @Test(arguments: malformed)
    func rejectsMalformedInput(name: String, xml: String, message: String, line: Int) {
        let error = expectMalformed(located: line > 0) { try XMLPropertyList.decode(Data(xml.utf8)) }
        #expect(error?.message.contains(message) == true, "\(name): \(error?.description ?? "no error")")
        if line > 0 { #expect(error?.context.contains(.line(line)) == true, "\(name): \(error?.description ?? "")") }
    }

    /// The same refusals, and the same words, as every XML reader of Graft's (`XMLTree`, the XML store's
    /// SAX passes, the clipboards): any entity declaration, whatever hides around it in the internal subset.
    @Test(arguments: [
        ("<!ENTITY secret SYSTEM \"file:///etc/passwd\">", "'secret'"),
        ("<!ENTITY word \"text\">", "'word'"),
        ("<!ENTITY % ext SYSTEM \"http://127.0.0.1:9/evil.dtd\"> %ext;", "'%ext'"),
        ("<!-- ' --> <?pi \" ?> <!ENTITY hidden \"x\"> <!-- ' -->", "'hidden'"),
        ("<!ATTLIST plist version CDATA \"<!ENTITY quoted 'x'>\"> <!ENTITY after \"y\">", "'after'"),
    ])
    func refusesEntityDeclarations(declaration: String, name: String) throws {
        let xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE plist [\n\(declaration)\n]>\n<plist><string>x</string></plist>\n"
        let error = try #require(throws: GraftError.self) { try XMLPropertyList.decode(Data(xml.utf8)) }
        #expect(error.code == .malformedInput)
        #expect(error.context.contains(.line(3)), "\(error)")
        #expect(
            error.message.hasPrefix("XML property list: the document declares the entity \(name); Graft does not read"),
            "\(error)")
    }

    @Test func readsOtherEncodingsThanUTF8() throws {
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<plist version=\"1.0\"><string>é😀</string></plist>\n"
        #expect(try XMLPropertyList.decode(text.data(using: .utf16)!) == "é😀")
        let latin1 = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<plist><string>café</string></plist>"
        #expect(try XMLPropertyList.decode(latin1.data(using: .isoLatin1)!) == "café")
    }

    @Test(arguments: [
        ("text in a dict", "<plist><dict>junk<key>a</key><true/></dict></plist>", "unexpected text 'junk' in <dict>"),
        ("an element in a string", "<plist><string>a<b/>c</string></plist>", "<string> holds text only"),
        ("an unclosed string", "<plist><string>a</plist>", "expected </string>, found </plist>"),
        ("an undefined entity", "<plist><string>&a;</string></plist>", "the reference '&a;' is not defined"),
        ("more after the root", "<plist><true/></plist><plist/>", "there is more after the root element"),
    ])
    func refusesWhatIsNotWellFormedPropertyListXML(name: String, xml: String, message: String) {
        let error = expectMalformed { try XMLPropertyList.decode(Data(xml.utf8)) }
        #expect(error?.message.contains(message) == true, "\(name): \(error?.description ?? "no error")")
    }

    @Test func rejectsDeepNesting() {
        let xml =
            "<plist>" + String(repeating: "<array>", count: 600) + String(repeating: "</array>", count: 600)
            + "</plist>"
        expectMalformed { try XMLPropertyList.decode(Data(xml.utf8)) }
    }

    private func expectRoundTrip(
        _ value: PropertyList, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let data = XMLPropertyList.encode(value)
        let back = try XMLPropertyList.decode(data)
        #expect(back == value, comment, sourceLocation: sourceLocation)
        #expect(XMLPropertyList.encode(back) == data, "re-encoding changed the text", sourceLocation: sourceLocation)
    }
}
