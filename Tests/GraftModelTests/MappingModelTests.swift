import Foundation
import GraftCore
import GraftTestSupport
import Testing

@testable import GraftModel

/// Mapping models in both forms: the corpus pair (`V2toV3.xcmappingmodel` and the `V2toV3.cdm` Xcode
/// compiled from it), the rules by which the source form is filled in, and inputs that are wrong.
@Suite struct MappingModelTests {
    static let folder = "coredataplus/Tests/Resources/SampleModel"
    static let compiled = folder + "/Fixtures/V2toV3.cdm"
    static let source = folder + "/MappingModels/V2toV3.xcmappingmodel"
    static let policy = "REPLACE_AT_RUNTIME.V2to3MakerPolicy"

    static let byEntityMapping = "destinationInstancesForEntityMappingNamed:sourceInstances:"
    static let bySourceRelationship = "destinationInstancesForSourceRelationshipNamed:sourceInstances:"

    static func fetch(_ entity: String) -> String {
        #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", ""# + entity
            + #"", "TRUEPREDICATE"), $manager.sourceContext, NO)"#
    }

    static func corpusURL(_ relative: String) -> URL { Corpus.url(relative) }

    /// A scratch folder, removed by the caller.
    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("graft-mapping-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// What `load` throws for `url`.
    static func failure(loading url: URL, sourceLocation: SourceLocation = #_sourceLocation) -> GraftError? {
        do {
            _ = try MappingModel.load(url)
            Issue.record("\(url.lastPathComponent) was read", sourceLocation: sourceLocation)
            return nil
        } catch let error as GraftError {
            return error
        } catch {
            Issue.record("not a GraftError: \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    // MARK: The corpus pair

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func compiledMappingModelReadsEveryEntityMapping() throws {
        let mapping = try MappingModel.load(Self.corpusURL(Self.compiled))
        #expect(
            mapping.entityMappings.map(\.name) == [
                "CarToCar", "LuxuryCarToLuxuryCar", "PersonToPerson", "SportCarToSportCar", "Maker",
            ])
        #expect(mapping.entityMappings.map(\.kind) == [.custom, .custom, .copy, .custom, .add])
        #expect(mapping.entityMappings.map(\.sourceEntity) == ["Car", "LuxuryCar", "Person", "SportCar", nil])
        #expect(
            mapping.entityMappings.map(\.destinationEntity) == ["Car", "LuxuryCar", "Person", "SportCar", "Maker"])
        #expect(
            mapping.entityMappings.map(\.migrationPolicyClassName) == [
                Self.policy, Self.policy, nil, Self.policy, nil,
            ])
        #expect(mapping.entityMappings.allSatisfy { $0.userInfo.isEmpty })

        let car = try #require(mapping.entityMapping(named: "CarToCar"))
        #expect(car.sourceExpression == Self.fetch("Car"))
        #expect(car.filterPredicate == "TRUEPREDICATE")
        #expect(
            car.attributeMappings == [
                PropertyMapping(name: "markedForDeletionAsOf", valueExpression: "$source.markedForDeletionAsOf"),
                PropertyMapping(name: "model", valueExpression: "$source.model"),
                PropertyMapping(name: "numberPlate", valueExpression: "$source.numberPlate"),
            ])
        let throughPerson = #"FUNCTION($manager, "\#(Self.byEntityMapping)", "PersonToPerson", $source.owner)"#
        #expect(
            car.relationshipMappings == [
                PropertyMapping(name: "createdBy"),
                PropertyMapping(name: "owner", valueExpression: throughPerson),
                PropertyMapping(name: "previousOwners", valueExpression: throughPerson),
            ])

        let person = try #require(mapping.entityMapping(named: "PersonToPerson"))
        #expect(person.sourceExpression == Self.fetch("Person"))
        #expect(
            person.attributeMappings.map(\.valueExpression) == [
                "$source.firstName", "$source.lastName", "$source.updatedAt",
            ])
        let throughCars = #"FUNCTION($manager, "\#(Self.bySourceRelationship)", "cars", $source.cars)"#
        #expect(
            person.relationshipMappings == [
                PropertyMapping(name: "cars", valueExpression: throughCars),
                PropertyMapping(name: "previousCars", valueExpression: throughCars),
            ])

        let maker = try #require(mapping.entityMapping(named: "Maker"))
        #expect(maker.sourceExpression == nil && maker.filterPredicate == nil)
        #expect(maker.sourceEntityVersionHash == nil)
        #expect(maker.attributeMappings == [PropertyMapping(name: "name")])
        #expect(maker.relationshipMappings == [PropertyMapping(name: "cars")])
    }

    /// The version hashes are those of the two model versions (their `.momd`'s `VersionInfo.plist`).
    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func versionHashesAreTheModelVersionsOwn() throws {
        let models = try ModelFile.load(Self.corpusURL(Self.folder + "/Fixtures/SampleModel.momd"))
        let v2 = try #require(models.recordedVersionHashes["SampleModel2"])
        let v3 = try #require(models.recordedVersionHashes["SampleModel3"])
        for url in [Self.corpusURL(Self.compiled), Self.corpusURL(Self.source)] {
            let mapping = try MappingModel.load(url)
            for entityMapping in mapping.entityMappings {
                #expect(
                    entityMapping.sourceEntityVersionHash == entityMapping.sourceEntity.flatMap { v2[$0] },
                    "\(url.lastPathComponent) \(entityMapping.name)")
                #expect(
                    entityMapping.destinationEntityVersionHash == entityMapping.destinationEntity.flatMap { v3[$0] },
                    "\(url.lastPathComponent) \(entityMapping.name)")
                #expect(entityMapping.destinationEntityVersionHash != nil)
            }
        }
    }

    /// Xcode's source form, filled in by the compiler's rules, is the mapping model Xcode compiled.
    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func sourceFormEqualsTheCompiledForm() throws {
        let compiled = try MappingModel.load(Self.corpusURL(Self.compiled))
        let folder = try MappingModel.load(Self.corpusURL(Self.source))
        let document = try MappingModel.load(Self.corpusURL(Self.source + "/xcmapping.xml"))
        #expect(folder == document)
        for (ours, theirs) in zip(folder.entityMappings, compiled.entityMappings) {
            #expect(ours == theirs, "\(theirs.name)")
        }
        #expect(folder == compiled)
    }

    // MARK: Rules no corpus file shows

    /// A small document without model data: a removed entity, named types, a renamed mapping, and the
    /// generated expressions made without a source model to ask.
    @Test func sourceFormWithoutModelsIsFilledInWithoutThem() throws {
        let xml = """
            <?xml version="1.0" standalone="yes"?>
            <database>
                <object type="XDDEVMAPPINGMODEL" id="z1">
                    <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z3 z2"></relationship>
                </object>
                <object type="XDDEVENTITYMAPPING" id="z2">
                    <attribute name="sourcename" type="string">Note</attribute>
                    <attribute name="destinationname" type="string">Memo</attribute>
                    <attribute name="name" type="string">NoteToMemoRenamed</attribute>
                    <attribute name="mappingtypename" type="string">Transform</attribute>
                    <attribute name="mappingnumber" type="int16">1</attribute>
                    <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="z5 z4"></relationship>
                    <relationship name="relationshipmappings" type="0/0" destination="XDDEVRELATIONSHIPMAPPING" idrefs="z6"></relationship>
                </object>
                <object type="XDDEVENTITYMAPPING" id="z3">
                    <attribute name="sourcename" type="string">Obsolete</attribute>
                    <attribute name="mappingtypename" type="string">Undefined</attribute>
                    <attribute name="mappingnumber" type="int16">2</attribute>
                </object>
                <object type="XDDEVATTRIBUTEMAPPING" id="z4"><attribute name="name" type="string">title</attribute></object>
                <object type="XDDEVATTRIBUTEMAPPING" id="z5"><attribute name="name" type="string">body</attribute></object>
                <object type="XDDEVRELATIONSHIPMAPPING" id="z6">
                    <attribute name="name" type="string">tags</attribute>
                    <attribute name="autogenerateexpression" type="bool">1</attribute>
                </object>
            </database>
            """
        let mapping = try MappingModel.read(xcmapping: Data(xml.utf8), path: "Test.xcmappingmodel/xcmapping.xml")
        #expect(mapping.entityMappings.map(\.name) == ["NoteToMemoRenamed", "Obsolete"])
        let note = mapping.entityMappings[0]
        #expect(note.kind == .transform && note.sourceEntity == "Note" && note.destinationEntity == "Memo")
        #expect(note.sourceExpression == Self.fetch("Note") && note.filterPredicate == "TRUEPREDICATE")
        #expect(note.sourceEntityVersionHash == nil && note.destinationEntityVersionHash == nil)
        #expect(note.attributeMappings.map(\.name) == ["body", "title"])
        #expect(note.attributeMappings.map(\.valueExpression) == ["$source.body", "$source.title"])
        #expect(
            note.relationshipMappings == [
                PropertyMapping(
                    name: "tags",
                    valueExpression: #"FUNCTION($manager, "\#(Self.bySourceRelationship)", "tags", $source.tags)"#)
            ])
        let obsolete = mapping.entityMappings[1]
        #expect(obsolete.kind == .remove && obsolete.destinationEntity == nil)
        #expect(obsolete.sourceExpression == Self.fetch("Obsolete"))
    }

    /// Settings no corpus file shows the compiled form of are refused, not guessed.
    @Test(arguments: [
        (#"<attribute name="autogenerateexpression" type="bool">0</attribute>"#, GraftError.Code.unsupportedFormat),
        (#"<attribute name="mappingtypename" type="string">Merge</attribute>"#, .malformedInput),
        (#"<attribute name="mappingnumber" type="int16">first</attribute>"#, .malformedInput),
        (#"<attribute name="userinfodata" type="binary">AAAA</attribute>"#, .unsupportedFormat),
    ])
    func unknownSettingsAreRefused(attribute: String, code: GraftError.Code) throws {
        let xml = """
            <database>
                <object type="XDDEVMAPPINGMODEL" id="z1">
                    <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z2"></relationship>
                </object>
                <object type="XDDEVENTITYMAPPING" id="z2">
                    <attribute name="sourcename" type="string">Note</attribute>
                    <attribute name="destinationname" type="string">Note</attribute>
                    \(attribute)
                </object>
            </database>
            """
        let error = #expect(throws: GraftError.self) {
            try MappingModel.read(xcmapping: Data(xml.utf8), path: "Test/xcmapping.xml")
        }
        #expect(error?.code == code)
        #expect(error?.context.first == .file("Test/xcmapping.xml"))
        #expect(error?.context.contains(.object("XDDEVENTITYMAPPING z2")) == true)
    }

    /// A compiled archive made here: user info, every mapping type code, a custom source expression.
    @Test func compiledArchiveWithUserInfoAndAFilter() throws {
        var archiver = KeyedArchiver()
        var expressions = ExpressionArchiver()
        let filter = "name BEGINSWITH \"A\""
        let fetch = expressions.archive(
            MappingExpressions.sourceExpression(entity: "Author", predicate: filter), in: &archiver)
        let value = expressions.archive(.keyPath("$source.name"), in: &archiver)
        let kept = archiver.encode("kept")
        let propertyInfo = archiver.encodeDictionary(["note": kept])
        let property = archiver.encodeObject(
            classChain: ["NSPropertyMapping", "NSObject"],
            fields: [
                "NSDestinationPropertyName": archiver.encode("name").propertyList,
                "NSValueExpression": value.propertyList, "NSUserInfo": propertyInfo.propertyList,
            ])
        let owner = archiver.encode("migrations")
        let entityInfo = archiver.encodeDictionary(["owner": owner])
        let attributes = archiver.encodeArray([property])
        let entity = archiver.encodeObject(
            classChain: ["NSEntityMapping", "NSObject"],
            fields: [
                "NSMappingName": archiver.encode("AuthorToWriter").propertyList, "NSMappingType": 5,
                "NSSourceEntityName": archiver.encode("Author").propertyList,
                "NSDestinationEntityName": archiver.encode("Writer").propertyList,
                "NSSourceExpression": fetch.propertyList, "NSAttributeMappings": attributes.propertyList,
                "NSUserInfo": entityInfo.propertyList,
            ])
        let list = archiver.encodeArray([entity])
        let root = archiver.encodeObject(
            classChain: ["NSMappingModel", "NSObject"], fields: ["NSEntityMappings": list.propertyList])
        let data = archiver.finish(top: ["root": root]).encode()
        let mapping = try MappingModel.read(compiled: data)
        let read = try #require(mapping.entityMappings.first)
        #expect(read.kind == .transform)
        #expect(read.filterPredicate == filter)
        #expect(
            read.sourceExpression
                == #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Author", "#
                + #""name BEGINSWITH \"A\""), $manager.sourceContext, NO)"#)
        #expect(read.userInfo == ["owner": "migrations"])
        #expect(
            read.attributeMappings == [
                PropertyMapping(name: "name", valueExpression: "$source.name", userInfo: ["note": "kept"])
            ])
    }

    // MARK: Inputs that are wrong

    @Test func missingFileAndForeignFolders() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let missing = Self.failure(loading: scratch.appendingPathComponent("None.cdm"))
        #expect(missing?.code == .fileNotFound)
        #expect(missing?.context.first == .file(scratch.appendingPathComponent("None.cdm").relativePath))

        let plain = scratch.appendingPathComponent("Plain")
        try FileManager.default.createDirectory(at: plain, withIntermediateDirectories: true)
        #expect(Self.failure(loading: plain)?.code == .unsupportedFormat)

        let empty = scratch.appendingPathComponent("Empty.xcmappingmodel")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let emptyError = Self.failure(loading: empty)
        #expect(emptyError?.code == .malformedInput)
        #expect(emptyError?.message.contains("xcmapping.xml") == true)

        let text = scratch.appendingPathComponent("notes.txt")
        try Data("hello".utf8).write(to: text)
        #expect(Self.failure(loading: text)?.code == .unsupportedFormat)
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func corruptCompiledFiles() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let original = try Data(contentsOf: Self.corpusURL(Self.compiled))

        let truncated = scratch.appendingPathComponent("Truncated.cdm")
        try original.prefix(original.count / 2).write(to: truncated)
        let truncatedError = Self.failure(loading: truncated)
        #expect(truncatedError?.code == .malformedInput)
        #expect(truncatedError?.context.first == .file(truncated.relativePath))

        // A compiled model is a keyed archive too, of another class.
        let model = scratch.appendingPathComponent("Model.cdm")
        try Data(contentsOf: Self.corpusURL(Self.folder + "/Fixtures/SampleModel.momd/SampleModel2.mom")).write(
            to: model)
        let modelError = Self.failure(loading: model)
        #expect(modelError?.code == .unsupportedFormat)
        #expect(modelError?.message.contains("NSManagedObjectModel") == true)

        // The first entity mapping's class entry renamed: the archive is whole, its classes wrong.
        guard case .array(var objects)? = try PropertyList.decode(original)["$objects"] else {
            Issue.record("no $objects")
            return
        }
        let index = try #require(objects.firstIndex { $0["$classname"]?.stringValue == "NSEntityMapping" })
        objects[index] = .dictionary(["$classname": .string("NSString"), "$classes": .array([.string("NSString")])])
        guard case .dictionary(var plist) = try PropertyList.decode(original) else { return }
        plist["$objects"] = .array(objects)
        let wrongClass = scratch.appendingPathComponent("WrongClass.cdm")
        try PropertyList.dictionary(plist).encode().write(to: wrongClass)
        let classError = Self.failure(loading: wrongClass)
        #expect(classError?.code == .malformedInput)
        #expect(classError?.message.contains("not an NSEntityMapping") == true)
        #expect(classError?.context.contains(.key("NSEntityMappings[0]")) == true)
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func corruptSourceDocuments() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let original = try String(contentsOf: Self.corpusURL(Self.source + "/xcmapping.xml"), encoding: .utf8)
        func write(_ text: String, _ name: String) throws -> URL {
            let folder = scratch.appendingPathComponent(name + ".xcmappingmodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: folder.appendingPathComponent("xcmapping.xml"))
            return folder
        }

        let truncated = Self.failure(loading: try write(String(original.prefix(original.count / 2)), "Truncated"))
        #expect(truncated?.code == .malformedInput)
        #expect(truncated?.context.contains { if case .line = $0 { true } else { false } } == true)

        let dangling = Self.failure(
            loading: try write(original.replacingOccurrences(of: "idrefs=\"z115 ", with: "idrefs=\"z999 "), "Dangling"))
        #expect(dangling?.code == .malformedInput)
        #expect(dangling?.message.contains("z999") == true)

        let unknown = Self.failure(
            loading: try write(
                original.replacingOccurrences(
                    of: "<attribute name=\"mappingnumber\" type=\"int16\">1</attribute>",
                    with:
                        "<attribute name=\"mappingnumber\" type=\"int16\">1</attribute><attribute name=\"sourcefilter\" type=\"string\">x</attribute>"
                ),
                "Unknown"))
        #expect(unknown?.code == .unsupportedFormat)
        #expect(unknown?.context.contains(.key("sourcefilter")) == true)

        let corruptExpression = Self.failure(
            loading: try write(
                original.replacingOccurrences(of: "YnBsaXN0MDDUAQIDBAUGVFVYJHZlcnNpb25Y", with: "YnBsaXN0MDDUAQIDBAUG"),
                "CorruptExpression"))
        #expect(corruptExpression?.code == .malformedInput)
        #expect(corruptExpression?.context.contains(.key("valueexpressiondata")) == true)

        let notMapping = Self.failure(
            loading: try write(
                original.replacingOccurrences(of: "XDDEVMAPPINGMODEL\" id", with: "XDDEVSOMETHING\" id"), "NoModel"))
        #expect(notMapping?.code == .malformedInput)
        #expect(notMapping?.message.contains("not a mapping model") == true)
    }
}
