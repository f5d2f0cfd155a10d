import Foundation
import GraftCore
import GraftModel
import Testing

/// What `XMLTree` (model files) refuses of an untrusted document, as every XML reader of
/// Graft's does: any entity declaration, and elements with more attributes than it reads in linear time.
@Suite struct XMLTreeSafetyTests {
    @Test(arguments: [
        ("<!ENTITY secret SYSTEM \"file:///etc/passwd\">", "'secret'"),
        ("<!ENTITY word \"text\">", "'word'"),
        ("<!ENTITY % ext SYSTEM \"http://127.0.0.1:9/evil.dtd\"> %ext;", "'%ext'"),
        ("<!ENTITY % inner \"<!ENTITY x 'y'>\"> %inner;", "'%inner'"),
    ])
    func everyEntityDeclarationIsRefused(declaration: String, name: String) throws {
        let document = "<?xml version=\"1.0\"?>\n<!DOCTYPE model [\n\(declaration)\n]>\n<model/>\n"
        let error = try #require(throws: GraftError.self) {
            try XMLTree.parse(Data(document.utf8), path: "m/contents")
        }
        #expect(error.code == .malformedInput)
        #expect(error.context == [.file("m/contents"), .line(3)])
        #expect(error.message.hasPrefix("the document declares the entity \(name); Graft does not read"), "\(error)")
    }

    @Test func aDocumentTypeWithoutDeclarationsReads() throws {
        // As Core Data writes its XML stores: the DTD is named, never loaded.
        let document = """
            <?xml version="1.0"?>
            <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">
            <database><databaseInfo/></database>
            """
        #expect(try XMLTree.parse(Data(document.utf8)).children.map(\.name) == ["databaseInfo"])
    }

    static func element(attributes count: Int) -> String {
        "<entity" + (0..<count).map { " a\($0)=\"\($0)\"" }.joined() + "/>"
    }

    @Test func anElementWithTooManyAttributesIsRefusedBeforeItIsParsed() throws {
        let document = "<model>\n<entity/>\n\(Self.element(attributes: 100_000))\n</model>"
        let error = try #require(throws: GraftError.self) {
            try XMLTree.parse(Data(document.utf8), path: "m/contents")
        }
        #expect(error.code == .malformedInput)
        #expect(error.context == [.file("m/contents"), .line(3)])
        #expect(error.message.hasPrefix("the element <entity> has more than \(XMLTree.maximumAttributes) attributes"))
    }

    @Test func theLimitIsInclusiveAndCountsOnlyAttributes() throws {
        let full = try XMLTree.parse(Data("<model>\(Self.element(attributes: XMLTree.maximumAttributes))</model>".utf8))
        #expect(full.children.first?.attributes.count == XMLTree.maximumAttributes)
        #expect(throws: GraftError.self) {
            try XMLTree.parse(Data("<model>\(Self.element(attributes: XMLTree.maximumAttributes + 1))</model>".utf8))
        }
        // Signs inside quoted values, comments, CDATA, processing instructions and the document type are not
        // attributes.
        let signs = String(repeating: "=", count: 1_000)
        let document = """
            <?xml version="1.0"?>
            <!DOCTYPE model [ <!-- \(signs) ' --> <?pi \(signs) " ?> <!ATTLIST model x CDATA "\(signs)"> ]>
            <model a="\(signs)>" b='\(signs)'><!-- \(signs) --><?pi \(signs)?><![CDATA[\(signs)<x y=1>]]>\(signs)</model>
            """
        let root = try XMLTree.parse(Data(document.utf8))
        #expect(root.attributes.count == 2)
        #expect(root.text.hasSuffix(signs))
    }
}
