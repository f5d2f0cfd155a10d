import Foundation
import GraftCore
import GraftTestSupport
import Testing

@testable import GraftModel

@Suite struct XcdatamodelTests {
    static let contentsFiles = Corpus.paths {
        $0.lastPathComponent == "contents" && $0.deletingLastPathComponent().pathExtension == "xcdatamodel"
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)), arguments: contentsFiles)
    func everyCorpusModelReadsWritesAndReadsBackEqual(path: String) throws {
        let model = try XcdatamodelReader.read(contentsOf: Corpus.url(path))
        #expect(!model.entities.isEmpty)
        let written = XcdatamodelWriter.contents(of: model)
        let again = try XcdatamodelReader.read(written, path: "rewritten \(path)")
        #expect(again == model)
        #expect(again.versionHashes == model.versionHashes)
    }

    @Test func theCompanyExampleRoundTrips() throws {
        for version in ["Company", "Company 2"] {
            let url = Project.url("examples/Company/Company.xcdatamodeld/\(version).xcdatamodel/contents")
            let model = try XcdatamodelReader.read(contentsOf: url)
            #expect(model.entities.map(\.name) == ["Department", "Employee", "Flunky", "Manager", "Project"])
            #expect(try XcdatamodelReader.read(XcdatamodelWriter.contents(of: model)) == model)
            let employee = try #require(model.entity(named: "Manager"))
            #expect(employee.attribute(named: "salary")?.minValue == .decimal(0))
            #expect(employee.relationship(named: "department")?.isOptional == false)
        }
    }

    @Test func everyAttributeFieldSurvivesARoundTrip() throws {
        let attribute = Attribute(
            name: "when", type: .date, isOptional: false, isTransient: false,
            defaultValue: .date(Date(timeIntervalSinceReferenceDate: 388_411_200.5)),
            minValue: .date(Date(timeIntervalSinceReferenceDate: 0)),
            maxValue: .date(Date(timeIntervalSinceReferenceDate: 9e8)),
            isIndexed: true, preservesValueInHistoryOnDeletion: true, versionHashModifier: "v2",
            renamingIdentifier: "old", userInfo: ["a": "b & <c>", "quote": "\"x\"\nnext"])
        let text = Attribute(
            name: "text", type: .string, defaultValue: .string("tab\there"), minValue: .integer(1),
            maxValue: .integer(9),
            regularExpression: "[a-z]+", usesScalarValueType: false)
        let entity = Entity(
            name: "E", className: "EClass", isAbstract: false, attributes: [attribute, text],
            fetchedProperties: [FetchedProperty(name: "same", entity: "E", predicate: "text == $FETCH_SOURCE.text")],
            uniquenessConstraints: [["text"]], compoundIndexes: [["text", "when"]],
            fetchIndexes: [FetchIndex(name: "byText", elements: [.init(property: "text", isAscending: false)])],
            versionHashModifier: "m", renamingIdentifier: "OldE", userInfo: ["k": "v"])
        let model = try Model(
            entities: [entity], configurations: [Configuration(name: "C", entities: ["E"])],
            fetchRequestTemplates: [FetchRequestTemplate(name: "All", entity: "E", predicate: "text != nil")],
            versionIdentifiers: ["3.1"])
        #expect(try XcdatamodelReader.read(XcdatamodelWriter.contents(of: model)) == model)
    }

    @Test func malformedContentsGiveAnErrorWithTheLine() throws {
        let broken = Data(
            "<model>\n  <entity name=\"A\">\n    <attribute name=\"x\" attributeType=\"Nonsense\"/>\n  </entity>\n</model>\n"
                .utf8)
        let error = try #require(throws: GraftError.self) { try XcdatamodelReader.read(broken, path: "m/contents") }
        #expect(error.description.contains("m/contents"))
        #expect(error.description.contains("Nonsense"))
        #expect(error.context.contains(.line(3)))

        let notXML = Data("<model><entity name=\"A\"></model>".utf8)
        let xmlError = try #require(throws: GraftError.self) { try XcdatamodelReader.read(notXML, path: "x") }
        #expect(xmlError.code == .malformedInput)
        #expect(xmlError.context.contains(.line(1)))

        let wrongRoot = Data("<plist/>".utf8)
        #expect(throws: GraftError.self) { try XcdatamodelReader.read(wrongRoot) }
    }

    @Test func externalEntitiesAreNotFetched() throws {
        let hostile = Data(
            """
            <?xml version="1.0"?>
            <!DOCTYPE model [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
            <model><entity name="A" representedClassName="&secret;"/></model>
            """.utf8)
        let error = try #require(throws: GraftError.self) { try XcdatamodelReader.read(hostile) }
        #expect(error.code == .malformedInput)
    }

    @Test func externalParameterEntitiesAreRefusedAsEveryReaderRefusesThem() throws {
        let hostile = Data(
            """
            <?xml version="1.0"?>
            <!DOCTYPE model [<!ENTITY % remote SYSTEM "http://127.0.0.1:9/model.dtd"> %remote;]>
            <model><entity name="A"/></model>
            """.utf8)
        let error = try #require(throws: GraftError.self) {
            try XcdatamodelReader.read(hostile, path: "Hostile.xcdatamodel/contents")
        }
        #expect(error.code == .malformedInput)
        #expect(error.context == [.file("Hostile.xcdatamodel/contents"), .line(2)])
        #expect(error.message.hasPrefix("the document declares the entity '%remote'"), "\(error)")
    }

    @Test func anElementWith100000AttributesIsRefusedNamingTheFileAndLine() throws {
        let attributes = (0..<100_000).map { " a\($0)=\"\($0)\"" }.joined()
        let document = Data("<model>\n    <entity name=\"A\"\(attributes)/>\n</model>\n".utf8)
        let error = try #require(throws: GraftError.self) {
            try XcdatamodelReader.read(document, path: "Wide.xcdatamodel/contents")
        }
        #expect(error.code == .malformedInput)
        #expect(error.context == [.file("Wide.xcdatamodel/contents"), .line(2)])
        #expect(error.message.contains("<entity> has more than \(XMLTree.maximumAttributes) attributes"))
    }
}
