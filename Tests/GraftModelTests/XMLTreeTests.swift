import Foundation
import GraftCore
import GraftModel
import Testing

@Suite struct XMLTreeTests {
    @Test func parsesElementsAttributesTextAndLines() throws {
        let root = try XMLTree.parse(Data("<a x=\"1\">\n  <b>hi &amp; bye</b>\n  <b y='2'/>\n</a>".utf8))
        #expect(root.name == "a")
        #expect(root["x"] == "1")
        #expect(root.children(named: "b").count == 2)
        #expect(root.child(named: "b")?.text == "hi & bye")
        #expect(root.children[1]["y"] == "2")
        #expect(root.children[1].line == 3)
    }

    @Test func malformedXMLSaysWhere() throws {
        let error = try #require(throws: GraftError.self) {
            try XMLTree.parse(Data("<a>\n<b>\n</a>".utf8), path: "bad.xml")
        }
        #expect(error.code == .malformedInput)
        #expect(error.context.first == .file("bad.xml"))
        #expect(error.context.contains { if case .line = $0 { true } else { false } })
        #expect(throws: GraftError.self) { try XMLTree.parse(Data(), path: "empty.xml") }
    }

    @Test func billionLaughsIsRefused() throws {
        let bomb = """
            <?xml version="1.0"?>
            <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
            <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
            <lolz>&lol3;</lolz>
            """
        #expect(throws: GraftError.self) { try XMLTree.parse(Data(bomb.utf8)) }
    }
}
