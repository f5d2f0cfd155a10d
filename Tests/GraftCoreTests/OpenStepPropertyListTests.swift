import Foundation
import GraftCore
import Testing

@Suite struct OpenStepPropertyListTests {
    @Test func readsAVersionInfoFile() throws {
        let text = "{\n    \"NSManagedObjectModel_CurrentVersionName\" = EmployeeDirectory;\n}\n"
        let plist = try OpenStepPropertyList.decode(Data(text.utf8))
        #expect(plist == ["NSManagedObjectModel_CurrentVersionName": "EmployeeDirectory"])
        #expect(try PropertyList.decode(Data(text.utf8)) == plist)
    }

    @Test func readsEveryConstruct() throws {
        let text = #"""
            // A leading comment
            {
                unquoted = some_thing.with/slashes:and-$dollars;
                "quoted key" = "with \"escapes\" \\ \n\t\r\a\b\f\v end";
                'single' = 'it\'s';   /* block
                                         comment */
                octal = "\101\102\7";
                unicode = "\U00e9\u20AC\UD83D\UDE00";
                data = <0fbd 7788
                        ABCD>;
                "empty data" = <>;
                list = (a, "b c", (nested), {k = v;}, );
                "empty list" = ();
                "empty dict" = {};
                last = no_semicolon
            }
            """#
        let plist = try OpenStepPropertyList.decode(Data(text.utf8))
        #expect(plist["unquoted"] == "some_thing.with/slashes:and-$dollars")
        #expect(plist["quoted key"] == "with \"escapes\" \\ \n\t\r\u{07}\u{08}\u{0C}\u{0B} end")
        #expect(plist["single"] == "it's")
        #expect(plist["octal"] == "AB\u{07}")
        #expect(plist["unicode"] == "é€😀")
        #expect(plist["data"] == .data(Data([0x0F, 0xBD, 0x77, 0x88, 0xAB, 0xCD])))
        #expect(plist["empty data"] == .data(Data()))
        #expect(plist["list"] == ["a", "b c", ["nested"], ["k": "v"]])
        #expect(plist["empty list"] == [])
        #expect(plist["empty dict"] == .dictionary([:]))
        #expect(plist["last"] == "no_semicolon")
        #expect(plist.dictionaryValue?.keys.first == "unquoted")
    }

    @Test func readsAdjacentSingleQuotedStringsAsWritten() throws {
        // 'it''s' is two strings in a row, which is an error where one value is expected.
        expectMalformed { try OpenStepPropertyList.decode(Data("{ a = 'it''s'; }".utf8)) }
        #expect(try OpenStepPropertyList.decode(Data(#"{ a = 'it\'s'; }"#.utf8)) == ["a": "it's"])
    }

    @Test func readsStringsFiles() throws {
        let text = "/* Localizable.strings */\n\"greeting\" = \"Hello\";\nfarewell = \"Bye\";\n"
        #expect(try OpenStepPropertyList.decode(Data(text.utf8)) == ["greeting": "Hello", "farewell": "Bye"])
        #expect(try OpenStepPropertyList.decode(Data("a = b".utf8)) == ["a": "b"])
    }

    @Test func readsTopLevelValues() throws {
        #expect(try OpenStepPropertyList.decode(Data("(1, 2)".utf8)) == ["1", "2"])
        #expect(try OpenStepPropertyList.decode(Data("\"just a string\"".utf8)) == "just a string")
        #expect(try OpenStepPropertyList.decode(Data("<00ff>".utf8)) == .data(Data([0, 255])))
    }

    @Test func readsNonASCIIText() throws {
        #expect(try OpenStepPropertyList.decode(Data("{ name = \"Grüße 😀\"; }".utf8)) == ["name": "Grüße 😀"])
        var utf16 = Data([0xFE, 0xFF])
        for unit in "{ name = \"é\"; }".utf16 { utf16 += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        #expect(try OpenStepPropertyList.decode(utf16) == ["name": "é"])
        let bom = Data([0xEF, 0xBB, 0xBF]) + Data("{ a = b; }".utf8)
        #expect(try OpenStepPropertyList.decode(bom) == ["a": "b"])
    }

    static let malformed: [(name: String, text: String, message: String, line: Int)] = [
        ("empty", "", "empty", 1),
        ("only a comment", "// nothing\n", "empty", 2),
        ("unterminated string", "{\n a = \"abc;\n}", "not closed", 3),
        ("unterminated dictionary", "{\n a = b;\n", "not closed with '}'", 3),
        ("unterminated array", "(\n a,\n b", "not closed with ')'", 3),
        ("unterminated comment", "{ a = b; }\n/* open", "comment opened on line 2", 2),
        ("unterminated data", "<0011\n", "not closed with '>'", 2),
        ("odd hex digits", "<001>", "odd number", 1),
        ("bad hex digit", "<00zz>", "not a hex digit", 1),
        ("missing equals", "{\n a b; }", "expected '='", 2),
        ("missing semicolon", "{ a = b\n c = d; }", "expected ';'", 2),
        ("missing comma", "( a\n b )", "expected ',' or ')'", 2),
        ("text after value", "{ a = b; }\n junk", "after the property list", 2),
        ("unexpected character", "{ a = #; }", "where a value should be", 1),
        ("array as key", "{ (a) = b; }", "key must be a string", 1),
        ("missing value", "{ a = ; }", "where a value should be", 1),
        ("dangling escape", "\"abc\\", "middle of an escape", 1),
        ("empty unicode escape", "\"\\Uzz\"", "hex digits", 1),
    ]

    @Test(arguments: malformed)
    func rejectsMalformedInput(name: String, text: String, message: String, line: Int) {
        let error = expectMalformed { try OpenStepPropertyList.decode(Data(text.utf8)) }
        #expect(error?.message.contains(message) == true, "\(name): \(error?.description ?? "no error")")
        #expect(error?.context.contains(.line(line)) == true, "\(name): \(error?.description ?? "")")
    }

    @Test func rejectsDeepNesting() {
        let text = String(repeating: "(", count: 600) + String(repeating: ")", count: 600)
        expectMalformed { try OpenStepPropertyList.decode(Data(text.utf8)) }
    }
}
