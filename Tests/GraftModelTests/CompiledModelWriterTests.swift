import Foundation
import GraftCore
import GraftTestSupport
import Testing

@_spi(GraftInternal) @testable import GraftModel

/// Compiled models Graft writes: read back by Graft's reader, by other property-list readers, and
/// compared in shape with the `.mom` files and model caches Apple's tools wrote.
@Suite struct CompiledModelWriterTests {
    static let layouts = CompiledModelWriter.Layout.allCases
    static let corpusModels = Corpus.paths {
        $0.pathExtension == "xcdatamodel"
            && FileManager.default.fileExists(atPath: $0.appendingPathComponent("contents").path)
    }
    static let corpusMoms = Corpus.paths { $0.pathExtension == "mom" }
    /// The `.mom` files Xcode 15's compiler wrote (binary archives). The XML one in the corpus, from
    /// FreeCoreData, has an older shape: no `_P` words, no renaming identifiers, predicates as text.
    static let compilerMoms = corpusMoms.filter { path in
        (try? Data(contentsOf: Corpus.url(path)).starts(with: Array("bplist".utf8))) ?? false
    }
    static let corpusStores = Corpus.paths { ["sqlite", "wiredatabase"].contains($0.pathExtension) }

    static func companyModels() throws -> [(name: String, model: Model)] {
        let file = try ModelFile.load(Project.url("examples/Company/Company.xcdatamodeld"))
        return file.versions.map { ($0.name, $0.model) }
    }

    // MARK: Reading back

    @Test(arguments: layouts)
    func theCompanyExampleReadsBackEqual(layout: CompiledModelWriter.Layout) throws {
        let versions = try Self.companyModels()
        #expect(versions.map(\.name) == ["Company", "Company 2"])
        for (name, model) in versions {
            try expectRoundTrip(model, layout: layout, "\(name)")
        }
    }

    @Test func theCompanyExampleKeepsItsRules() throws {
        let model = try #require(try Self.companyModels().last?.model)
        let again = try CompiledModelReader.read(CompiledModelWriter.archive(model))
        let department = try #require(again.entity(named: "Department"))
        #expect(department.attribute(named: "budget")?.defaultValue == .decimal(0))
        #expect(department.attribute(named: "code")?.minValue == .integer(1))
        #expect(department.attribute(named: "code")?.maxValue == .integer(999))
        #expect(department.attribute(named: "name")?.maxValue == .integer(60))
        #expect(department.relationship(named: "employees")?.minCount == 3)
        #expect(department.relationship(named: "employees")?.deleteRule == .deny)
        #expect(department.relationship(named: "projects")?.isOrdered == true)
        #expect(department.fetchedProperty(named: "recentHires")?.entity == "Employee")
        #expect(department.declaration.uniquenessConstraints == [["name"]])
        let employee = try #require(again.entity(named: "Employee"))
        #expect(employee.attribute(named: "email")?.regularExpression == #"[^@ ]+@[^@ ]+\.[a-z]+"#)
        #expect(employee.attribute(named: "photo")?.allowsExternalBinaryDataStorage == true)
        #expect(employee.attribute(named: "workload")?.maxValue == .double(1))
        #expect(again.entity(named: "Manager")?.declaration.parent == "Employee")
        #expect(
            again.fetchRequestTemplates == [
                FetchRequestTemplate(name: "HighEarners", entity: "Employee", predicate: "salary > 100000")
            ])
        #expect(
            again.configurations == [
                Configuration(name: "Everything", entities: ["Department", "Employee", "Flunky", "Manager", "Project"])
            ])
        #expect(again.versionIdentifiers == ["2"])
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)), arguments: corpusModels)
    func everyCorpusModelReadsBackEqual(path: String) throws {
        let model = try ModelFile.load(Corpus.url(path)).current
        for layout in Self.layouts {
            try expectRoundTrip(model, layout: layout, "\(path) as \(layout)")
        }
    }

    /// Models read from Apple's own compiled files survive a rewrite exactly: nothing to normalise.
    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)), arguments: corpusMoms)
    func appleCompiledModelsRewriteExactly(path: String) throws {
        let model = try ModelFile.load(Corpus.url(path)).current
        for layout in Self.layouts {
            let again = try CompiledModelReader.read(CompiledModelWriter.archive(model, layout: layout))
            #expect(again == model, "\(path) as \(layout)")
            #expect(again.versionHashes == model.versionHashes, "\(path) as \(layout)")
        }
    }

    @Test(
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)),
        .enabled(if: Tool.sqlite3 != nil, "sqlite3 is not installed (it reads the stores' model caches)"),
        arguments: corpusStores)
    func appleModelCachesRewriteExactly(path: String) throws {
        guard let model = try Self.storeModel(path) else { return }
        let again = try CompiledModelReader.read(RawDeflate.inflate(CompiledModelWriter.modelCache(model)))
        #expect(again == model, "\(path)")
        #expect(again.versionHashes == model.versionHashes, "\(path)")
    }

    @Test func everyFieldSurvivesBothLayouts() throws {
        let model = try Self.everythingModel()
        for layout in Self.layouts {
            let again = try CompiledModelReader.read(CompiledModelWriter.archive(model, layout: layout))
            let (mine, theirs) = (try Self.carried(again), try Self.carried(model))
            #expect(mine == theirs, "\(layout): \(Self.firstDifference(mine, theirs))")
            #expect(again.versionHashes == model.versionHashes, "\(layout)")
            let root = try #require(again.entity(named: "Root")?.declaration)
            #expect(root.renamingIdentifier == "OldRoot")
            #expect(root.fetchIndexes == Self.rootIndexes)
            let thing = try #require(again.entity(named: "Thing"))
            #expect(
                thing.attribute(named: "amount")?.defaultValue
                    == .decimal(Decimal(string: "-12345678901234567890.125")!))
            #expect(thing.attribute(named: "when")?.minValue == .date(Date(timeIntervalSinceReferenceDate: -1.5)))
            #expect(thing.attribute(named: "code")?.regularExpression == #"^"[a-z]\d+" \\ end$"#)
            #expect(thing.attribute(named: "tiny")?.minValue == .double(-1.5e-300))
        }
    }

    @Test func appleRenamingIdentifiersReadAsTheModelHasThem() throws {
        let path = "coredataplus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd/SampleModel2.mom"
        guard Corpus.isAvailable else { return }
        let model = try ModelFile.load(Corpus.url(path)).current
        // Xcode writes the name as the renaming identifier of everything that has no elementID.
        #expect(model.entity(named: "LuxuryCar")?.declaration.renamingIdentifier == "ExpensiveSportCar")
        #expect(model.entity(named: "Car")?.declaration.renamingIdentifier == nil)
        #expect(model.entity(named: "Car")?.attribute(named: "maker")?.renamingIdentifier == nil)
    }

    @Test(arguments: [
        "0", "1", "-1", "52000.50", "0.000001", "-12345678901234567890.125", "99999999999999999999999999999999999999",
        "1e100", "-3.4e-90",
    ])
    func decimalNumbersArchiveAsFoundationDoes(text: String) throws {
        let value = try #require(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")))
        let parts = try #require(DecimalNumberArchive.parts(of: value))
        #expect(parts.mantissa.count == 16)
        let back = DecimalNumberArchive.decimal(
            exponent: parts.exponent, isNegative: parts.isNegative, mantissa: parts.mantissa)
        #expect(back == value, "\(text): \(parts)")
    }

    @Test func decimalNumberPartsAreFoundationsWords() throws {
        // 52000.5 = 520005 × 10⁻¹; 520005 = 0x0007_EF45: words 0xEF45, 0x0007, little-endian.
        let parts = try #require(DecimalNumberArchive.parts(of: Decimal(string: "52000.50")!))
        #expect(parts.exponent == -1)
        #expect(parts.length == 2)
        #expect(!parts.isNegative)
        #expect(parts.mantissa == Data([0x45, 0xEF, 0x07, 0x00] + [UInt8](repeating: 0, count: 12)))
        #expect(DecimalNumberArchive.parts(of: Decimal.nan) == nil)
        let bigEndian = Data([0xEF, 0x45, 0x00, 0x07] + [UInt8](repeating: 0, count: 12))
        #expect(
            DecimalNumberArchive.decimal(exponent: -1, isNegative: true, mantissa: bigEndian, littleEndian: false)
                == Decimal(string: "-52000.5"))
    }

    @Test(arguments: [
        (0.0, "0"), (-2.5, "-2.5"), (0.1, "0.1"), (1e-7, "0.0000001"),
        (-1.5e-300, "-0." + String(repeating: "0", count: 299) + "15"),
        (1.5e300, "15" + String(repeating: "0", count: 299)), (123456789.125, "123456789.125"),
        (1e15, "1000000000000000"),
    ])
    func boundsArePlainNumbers(value: Double, text: String) {
        #expect(ValidationText.plain(value) == text)
        #expect(Double(text) == value)
    }

    // MARK: The bytes

    @Test func theModelCacheInflatesToTheArchive() throws {
        for (name, model) in try Self.companyModels() {
            let cache = try CompiledModelWriter.modelCache(model)
            #expect(try RawDeflate.inflate(cache) == CompiledModelWriter.archive(model), "\(name)")
            #expect(cache.count < CompiledModelWriter.archive(model).count)
        }
    }

    @Test func theArchiveIsTheSameEveryTime() throws {
        let model = try Self.everythingModel()
        for layout in Self.layouts {
            #expect(
                CompiledModelWriter.archive(model, layout: layout) == CompiledModelWriter.archive(model, layout: layout)
            )
        }
    }

    @Test func aMomFileLoadsAsAModelFile() throws {
        let model = try #require(try Self.companyModels().last?.model)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-mom-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Company.mom")
        try CompiledModelWriter.write(model, to: url)
        let file = try ModelFile.load(url)
        #expect(file.format == .mom)
        #expect(file.currentVersionName == "Company")
        #expect(try Self.carried(file.current) == Self.carried(model))
        #expect(try Data(contentsOf: url) == CompiledModelWriter.archive(model, layout: .compiledModel))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["Company.mom"])
    }

    @Test func writingIntoAMissingFolderFailsWithTheFile() throws {
        let model = try #require(try Self.companyModels().first?.model)
        let url = URL(fileURLWithPath: "/nonexistent-graft-folder/Company.mom")
        #expect {
            try CompiledModelWriter.write(model, to: url)
        } throws: { error in
            (error as? GraftError)?.code == .io && "\(error)".contains("Company.mom")
        }
    }

    @Test(.enabled(if: Tool.python3 != nil, "python3 is not installed"))
    func plistlibReadsTheArchive() throws {
        let python = try #require(Tool.python3)
        for layout in Self.layouts {
            let archive = CompiledModelWriter.archive(try Self.everythingModel(), layout: layout)
            let script = """
                import plistlib, sys
                p = plistlib.load(open(sys.argv[1], 'rb'))
                objects = p['$objects']
                root = objects[p['$top']['root'].data]
                print(p['$archiver'], objects[root['$class'].data]['$classname'], len(objects))
                """
            let result = try Tool.withFile(archive) { try Tool.run(python, ["-c", script, $0.path]) }
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output.hasPrefix("NSKeyedArchiver NSManagedObjectModel "), "\(result.output)")
        }
    }

    @Test(.enabled(if: Tool.plutil != nil, "the toolchain's plutil was not found"))
    func plutilReadsTheArchive() throws {
        let plutil = try #require(Tool.plutil)
        for layout in Self.layouts {
            let archive = CompiledModelWriter.archive(try Self.everythingModel(), layout: layout)
            let result = try Tool.withFile(archive) { try Tool.run(plutil, ["-p", $0.path]) }
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output.contains("\"$archiver\" => \"NSKeyedArchiver\""))
            #expect(result.output.contains("NSManagedObjectModel"))
            #expect(result.output.contains("__empty_slot_token_4c24_98dc_ac1e_b773__") == (layout == .modelCache))
        }
    }

    // MARK: Apple's shape

    /// The classes Graft's `.mom` uses, and each class's keys, are those of the `.mom` Xcode compiled from
    /// the same model, written in the style of that file's era (Xcode also records which compiler wrote
    /// the file; Graft does not claim to be it).
    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)), arguments: compilerMoms)
    func aMomHasTheShapeXcodeGivesIt(path: String) throws {
        let apple = try Data(contentsOf: Corpus.url(path))
        let model = try CompiledModelReader.read(apple)
        var expected = try ArchiveShape(apple)
        expected.keys["NSManagedObjectModel"]?.subtract(["CDMCompilerToolVersion", "CDMCompilerXcodeVersion"])
        let style = CompiledModelWriter.Style(matching: apple)
        let ours = try ArchiveShape(CompiledModelWriter.archive(model, layout: .compiledModel, style: style))
        #expect(ours.keys == expected.keys, "\(ours.difference(from: expected))")
        #expect(ours.chains == expected.chains)
    }

    /// Graft's model cache, written for the store's framework version, has the shape of the cache Core
    /// Data wrote into the store, once the differences that do not follow from the framework version are
    /// set aside: the app's model compiler decides whether inherited properties are archived as
    /// `_NSPropertyDescriptionProxy` (two Wire stores of framework version 641 differ), whether some
    /// strings are `NSMutableString`s and the version identifiers an `NSMutableSet`, and whether index
    /// lists are `NSArray`s; and Core Data sometimes gives every entity of a model without indexes empty
    /// index lists.
    @Test(
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)),
        .enabled(if: Tool.sqlite3 != nil, "sqlite3 is not installed (it reads the stores' model caches)"),
        arguments: corpusStores)
    func aModelCacheHasTheShapeCoreDataGivesIt(path: String) throws {
        guard let cache = try Self.storeModelCache(path) else { return }
        let version = try #require(
            try Scratch.storeMetadata(Corpus.url(path))?["NSPersistenceFrameworkVersion"]?.int64Value,
            "\(path) records no framework version")
        let apple = try RawDeflate.inflate(cache)
        let model = try CompiledModelReader.read(apple)
        var theirs = try ArchiveShape(apple)
        let style = CompiledModelWriter.Style(frameworkVersion: Int(version))
        var ours = try ArchiveShape(CompiledModelWriter.archive(model, layout: .modelCache, style: style))
        theirs.merge("NSMutableSet", into: "NSSet")
        theirs.keys["NSMutableString"] = nil
        theirs.keys["_NSPropertyDescriptionProxy"] = nil
        if theirs.keys["NSMutableArray"] == nil { ours.merge("NSMutableArray", into: "NSArray") }
        if ours.keys["NSEntityDescription"]?.contains("NSCompoundIndexes") == false {
            theirs.keys["NSEntityDescription"]?.subtract(["NSCompoundIndexes", "NSFetchIndexDescriptions"])
            if ours.keys["NSMutableArray"] == nil { theirs.merge("NSMutableArray", into: "NSArray") }
        }
        #expect(ours.keys == theirs.keys, "\(path): \(ours.difference(from: theirs))")
    }

    @Test(arguments: [
        (320, false, false), (358, true, false), (754, true, false), (847, true, true), (1347, true, true),
    ])
    func theStyleFollowsTheFrameworkVersion(version: Int, attributeFlags: Bool, fetchIndexes: Bool) throws {
        let style = CompiledModelWriter.Style(frameworkVersion: version)
        #expect(style.writesAttributeFlags == attributeFlags)
        #expect(style.writesFetchIndexes == fetchIndexes)
        let shape = try ArchiveShape(CompiledModelWriter.archive(try Self.everythingModel(), style: style))
        #expect(shape.keys["NSAttributeDescription"]?.contains("NSFlagsKey") == attributeFlags)
        #expect(shape.keys["NSEntityDescription"]?.contains("NSFetchIndexDescriptions") == fetchIndexes)
        #expect(shape.keys["NSEntityDescription"]?.contains("NSCompoundIndexes") == true)
        let cache = try RawDeflate.inflate(
            CompiledModelWriter.modelCache(try Self.everythingModel(), frameworkVersion: version))
        #expect(cache == CompiledModelWriter.archive(try Self.everythingModel(), style: style))
    }

    /// An archive's own keys give its style: Reviews's `.mom`, from before external storage, has no
    /// attribute flags; what Graft writes matches its own style.
    @Test func theStyleOfAnArchiveIsFoundInIt() throws {
        #expect(CompiledModelWriter.Style(matching: CompiledModelWriter.archive(try Self.everythingModel())) == .newest)
        let old = CompiledModelWriter.Style(writesAttributeFlags: false, writesFetchIndexes: false)
        #expect(
            CompiledModelWriter.Style(matching: CompiledModelWriter.archive(try Self.everythingModel(), style: old))
                == old)
        #expect(CompiledModelWriter.Style(matching: Data("not an archive".utf8)) == .newest)
        guard Corpus.isAvailable else { return }
        let mom = try Data(
            contentsOf: Corpus.url("CocoaSampleCode/Reviews/Reviews.app/Contents/Resources/ReviewDocument.mom"))
        #expect(!CompiledModelWriter.Style(matching: mom).writesAttributeFlags)
    }

    @Test func spotlightAndIndexExpressionsSurviveBothLayouts() throws {
        var book = Entity(name: "Book", coreSpotlightDisplayName: "name")
        book.attributes = [
            Attribute(name: "name", type: .string, isIndexedBySpotlight: true),
            Attribute(name: "kind", type: .integer16, isOptional: false),
        ]
        book.relationships = [
            Relationship(name: "shelf", destination: "Shelf", inverse: "books", isIndexedBySpotlight: true)
        ]
        book.fetchIndexes = [
            FetchIndex(
                name: "byKindAndObject",
                elements: [
                    .init(property: "kind"),
                    .init(property: "expression1", expression: .init(text: "SELF", resultType: .objectID)),
                ], partialIndexPredicate: "kind != 0 AND name != nil")
        ]
        let shelf = Entity(
            name: "Shelf",
            relationships: [Relationship(name: "books", destination: "Book", inverse: "shelf", isToMany: true)])
        let model = try Model(entities: [book, shelf])
        for layout in Self.layouts {
            let again = try CompiledModelReader.read(CompiledModelWriter.archive(model, layout: layout))
            #expect(try Self.carried(again) == Self.carried(model), "\(layout)")
            let shape = try ArchiveShape(CompiledModelWriter.archive(model, layout: layout))
            #expect(shape.keys["NSExpressionDescription"]?.contains("NSExpression") == true)
            #expect(shape.keys["NSFetchIndexElementDescription"]?.contains("NSIndexedProperty") == true)
            #expect(shape.keys["NSCompoundPredicate"] != nil)
            #expect(shape.keys["NSEntityDescription"]?.contains("NSCoreSpotlightDisplayName") == true)
            #expect(shape.keys["NSRelationshipDescription"]?.contains("NSIndexedBySpotlight") == true)
        }
        let xml = try XcdatamodelReader.read(XcdatamodelWriter.contents(of: model))
        #expect(xml.entity(named: "Book")?.declaration.coreSpotlightDisplayName == "name")
        #expect(xml.entity(named: "Book")?.attribute(named: "name")?.isIndexedBySpotlight == true)
        #expect(xml.entity(named: "Book")?.relationship(named: "shelf")?.isIndexedBySpotlight == true)
    }

    @Test func theModelCacheListsInheritedPropertiesAndTheMomDoesNot() throws {
        let model = try #require(try Self.companyModels().last?.model)
        func managerProperties(_ layout: CompiledModelWriter.Layout) throws -> Set<String> {
            let archive = try KeyedArchive(data: CompiledModelWriter.archive(model, layout: layout))
            let root = try #require(try archive.topObject(forKey: "root"))
            let entities = try #require(try root["NSEntities"]?.decodeStringKeyedDictionary())
            let manager = try #require(entities.first { $0.key == "Manager" }?.value)
            let properties = try #require(try manager["NSProperties"]?.decodeStringKeyedDictionary())
            for (_, property) in properties {
                #expect(try property["NSEntity"]?.string(forKey: "NSEntityName") == "Manager")
            }
            return Set(properties.map(\.key))
        }
        #expect(try managerProperties(.compiledModel) == ["parkingSpot", "directReports"])
        let all = try managerProperties(.modelCache)
        #expect(all.isSuperset(of: ["parkingSpot", "directReports", "salary", "department", "manager"]))
        #expect(all.count == 18)
    }

    @Test func propertyFlagsAreAppleWords() throws {
        let archive = try KeyedArchive(data: CompiledModelWriter.archive(try Self.everythingModel()))
        let root = try #require(try archive.topObject(forKey: "root"))
        let entities = try #require(try root["NSEntities"]?.decodeStringKeyedDictionary())
        let thing = try #require(entities.first { $0.key == "Thing" }?.value)
        let properties = try #require(try thing["NSProperties"]?.decodeStringKeyedDictionary())
        func word(_ name: String) throws -> Int64? {
            try #require(properties.first { $0.key == name }?.value).rawField("_P")?.int64Value
        }
        #expect(try word("count") == 0xF1)  // required, nothing else: as in every Xcode file
        #expect(try word("label") == 0xF3)  // optional
        #expect(try word("scratch") == 0xFB)  // optional, transient
        #expect(try word("tagged") == 0x73)  // optional, a version hash modifier
        #expect(try word("code") == 0xC3)  // optional, validation predicates and warnings
        #expect(try word("noted") == 0xB7)  // optional, read-only, user info
        #expect(try word("steps") == 0x4F3)  // optional, ordered
    }

    // MARK: Helpers

    func expectRoundTrip(
        _ model: Model, layout: CompiledModelWriter.Layout, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let archive = CompiledModelWriter.archive(model, layout: layout)
        let again = try CompiledModelReader.read(archive, path: what)
        let (mine, theirs) = (try Self.carried(again), try Self.carried(model))
        #expect(mine == theirs, "\(what): \(Self.firstDifference(mine, theirs))", sourceLocation: sourceLocation)
        #expect(again.versionHashes == model.versionHashes, "\(what)", sourceLocation: sourceLocation)
        for entity in model.descriptions {
            #expect(
                again.entity(named: entity.name)?.versionHash == entity.versionHash, "\(what): \(entity.name)",
                sourceLocation: sourceLocation)
        }
    }

    /// What a compiled model carries of `model`, for comparing a model with its archive read back.
    ///
    /// A compiled model does not carry: the order of entities, properties, templates and
    /// configurations (they are dictionaries and sets); Xcode's code-generation choice
    /// (`usesScalarValueType`); a custom class on attributes other than transformable ones (the class is
    /// fixed by the type); a renaming identifier equal to the name (Apple writes the name when there is
    /// none); an empty version hash modifier; repeated version identifiers (a set); a to-many
    /// relationship whose maximum is 1 (it reads as a to-one, as Core Data reads it); the spelling of
    /// predicates and expressions (archived as objects, they read back in predicate format's own
    /// form: `booleanAttribute = YES` as `booleanAttribute == 1`, a derivation `pages.@count` as
    /// `count:(pages)`, as Core Data keeps it).
    static func carried(_ model: Model) throws -> Model {
        func renaming(_ identifier: String?, _ name: String) -> String? { identifier == name ? nil : identifier }
        func modifier(_ text: String?) -> String? { text?.isEmpty == true ? nil : text }
        func predicate(_ text: String) -> String { ModelExpression.parsePredicate(text)?.format ?? text }
        func expression(_ text: String) -> String { ModelExpression.parseExpression(text)?.format ?? text }
        let entities = model.entities.sorted(by: { $0.name < $1.name }).map { entity in
            var entity = entity
            entity.renamingIdentifier = renaming(entity.renamingIdentifier, entity.name)
            entity.versionHashModifier = modifier(entity.versionHashModifier)
            entity.coreSpotlightDisplayName = entity.coreSpotlightDisplayName.map(expression)
            entity.fetchIndexes = entity.fetchIndexes.map { index in
                var index = index
                index.partialIndexPredicate = index.partialIndexPredicate.map(predicate)
                return index
            }
            entity.attributes = entity.attributes.sorted { $0.name < $1.name }.map { attribute in
                var attribute = attribute
                attribute.usesScalarValueType = nil
                if attribute.type != .transformable { attribute.customClassName = nil }
                attribute.renamingIdentifier = renaming(attribute.renamingIdentifier, attribute.name)
                attribute.versionHashModifier = modifier(attribute.versionHashModifier)
                attribute.derivationExpression = attribute.derivationExpression.map(DerivationExpression.normalized)
                return attribute
            }
            entity.relationships = entity.relationships.sorted { $0.name < $1.name }.map { relationship in
                var relationship = relationship
                if relationship.isToMany && relationship.maxCount == 1 { relationship.isToMany = false }
                relationship.renamingIdentifier = renaming(relationship.renamingIdentifier, relationship.name)
                relationship.versionHashModifier = modifier(relationship.versionHashModifier)
                return relationship
            }
            entity.fetchedProperties = entity.fetchedProperties.sorted { $0.name < $1.name }.map { fetched in
                var fetched = fetched
                fetched.predicate = predicate(fetched.predicate)
                return fetched
            }
            return entity
        }
        let templates = model.fetchRequestTemplates.sorted { $0.name < $1.name }.map { template in
            var template = template
            template.predicate = predicate(template.predicate)
            return template
        }
        return try Model(
            entities: entities, configurations: model.configurations.sorted { $0.name < $1.name },
            fetchRequestTemplates: templates, versionIdentifiers: Set(model.versionIdentifiers).sorted())
    }

    /// The first difference between two models' entities, for a failure message.
    static func firstDifference(_ left: Model, _ right: Model) -> String {
        for (one, other) in zip(left.entities, right.entities) where one != other {
            for (a, b) in zip(one.attributes, other.attributes) where a != b { return "\(a)\n≠ \(b)" }
            for (a, b) in zip(one.relationships, other.relationships) where a != b { return "\(a)\n≠ \(b)" }
            return "\(one)\n≠ \(other)"
        }
        if left.entities.map(\.name) != right.entities.map(\.name) {
            return "entities \(left.entities.map(\.name)) ≠ \(right.entities.map(\.name))"
        }
        return
            "templates \(left.fetchRequestTemplates) ≠ \(right.fetchRequestTemplates); configurations \(left.configurations) ≠ \(right.configurations); versions \(left.versionIdentifiers) ≠ \(right.versionIdentifiers)"
    }

    /// A model using every field a compiled model carries.
    static func everythingModel() throws -> Model {
        let root = Entity(
            name: "Root", className: "RootClass", isAbstract: true,
            attributes: [
                Attribute(name: "created", type: .date, isOptional: false, isIndexed: true),
                Attribute(name: "serial", type: .integer64, defaultValue: .integer(Int64.max)),
            ],
            relationships: [
                Relationship(name: "owner", destination: "Owner", inverse: "roots", deleteRule: .nullify)
            ],
            uniquenessConstraints: [["serial"], ["created", "serial"]], compoundIndexes: [["created", "serial"]],
            fetchIndexes: rootIndexes, versionHashModifier: "m", renamingIdentifier: "OldRoot",
            userInfo: ["purpose": "testing", "empty": ""])
        var decimal = Attribute(name: "amount", type: .decimal, isOptional: false)
        decimal.defaultValue = .decimal(Decimal(string: "-12345678901234567890.125")!)
        decimal.minValue = .decimal(Decimal(string: "-0.5")!)
        decimal.maxValue = .decimal(Decimal(string: "1000000000000000000000")!)
        let thing = Entity(
            name: "Thing", className: "Thing", parent: "Root",
            attributes: [
                decimal,
                Attribute(name: "count", type: .integer16, isOptional: false, defaultValue: .integer(7)),
                Attribute(
                    name: "small", type: .integer32, defaultValue: .integer(-3), minValue: .integer(-100),
                    maxValue: .integer(300)),
                Attribute(name: "ratio", type: .double, defaultValue: .double(0.1), maxValue: .double(2.5)),
                Attribute(name: "tiny", type: .double, minValue: .double(-1.5e-300), maxValue: .double(1e300)),
                Attribute(name: "weight", type: .float, defaultValue: .double(Double(Float(0.1)))),
                Attribute(name: "label", type: .string, defaultValue: .string("tab\there \"quoted\"")),
                Attribute(
                    name: "code", type: .string, minValue: .integer(1), maxValue: .integer(60),
                    regularExpression: #"^"[a-z]\d+" \\ end$"#),
                Attribute(name: "flag", type: .boolean, isOptional: false, defaultValue: .bool(true)),
                Attribute(
                    name: "when", type: .date, defaultValue: .date(Date(timeIntervalSinceReferenceDate: 388_411_200.5)),
                    minValue: .date(Date(timeIntervalSinceReferenceDate: -1.5)),
                    maxValue: .date(Date(timeIntervalSinceReferenceDate: 9e8))),
                Attribute(
                    name: "blob", type: .binary, defaultValue: .data(Data([0, 1, 2, 255])), minValue: .integer(1),
                    maxValue: .integer(1 << 20), allowsExternalBinaryDataStorage: true),
                Attribute(
                    name: "badge", type: .uuid,
                    defaultValue: .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
                    preservesValueInHistoryOnDeletion: true),
                Attribute(name: "home", type: .uri, defaultValue: .uri(URL(string: "https://example.com/a?b=c")!)),
                Attribute(
                    name: "colors", type: .transformable, valueTransformerName: "NSSecureUnarchiveFromData",
                    customClassName: "NSArray"),
                Attribute(name: "plain", type: .transformable),
                Attribute(name: "scratch", type: .undefined, isTransient: true),
                Attribute(name: "tagged", type: .string, versionHashModifier: "v2", renamingIdentifier: "oldTagged"),
                Attribute(name: "noted", type: .string, isReadOnly: true, userInfo: ["note": "kept", "b": "<&>"]),
                Attribute(name: "stepCount", type: .integer64, isReadOnly: true, derivationExpression: "steps.@count"),
            ],
            relationships: [
                Relationship(
                    name: "steps", destination: "Step", inverse: "thing", isToMany: true, isOrdered: true, minCount: 1,
                    maxCount: 5, deleteRule: .cascade),
                Relationship(name: "twin", destination: "Thing", inverse: "twin", deleteRule: .noAction),
                Relationship(name: "loose", destination: "Step", isToMany: true, deleteRule: .deny),
                Relationship(
                    name: "shadow", destination: "Owner", inverse: "shadowed", isTransient: true,
                    versionHashModifier: "s", renamingIdentifier: "umbra", userInfo: ["x": "y"]),
            ],
            fetchedProperties: [
                FetchedProperty(
                    name: "bigSteps", entity: "Step", predicate: "thing == $FETCH_SOURCE AND size > 3",
                    isOptional: false,
                    userInfo: ["sorted": "no"]),
                FetchedProperty(name: "everyStep", entity: "Step", predicate: ""),
            ])
        let step = Entity(
            name: "Step", attributes: [Attribute(name: "size", type: .integer32, isOptional: false)],
            relationships: [Relationship(name: "thing", destination: "Thing", inverse: "steps", isOptional: false)])
        let owner = Entity(
            name: "Owner", className: "Owner",
            relationships: [
                Relationship(name: "roots", destination: "Root", inverse: "owner", isToMany: true),
                Relationship(
                    name: "shadowed", destination: "Thing", inverse: "shadow", isToMany: true, isTransient: true),
            ])
        return try Model(
            entities: [root, thing, step, owner],
            configurations: [
                Configuration(name: "Local", entities: ["Owner"]),
                Configuration(name: "Cloud", entities: ["Root", "Thing", "Step"]),
            ],
            fetchRequestTemplates: [
                FetchRequestTemplate(name: "Big", entity: "Step", predicate: "size >= $minimum"),
                FetchRequestTemplate(name: "All", entity: "Thing", predicate: ""),
            ],
            versionIdentifiers: ["b", "a"])
    }

    static let rootIndexes = [
        FetchIndex(name: "byCreated", elements: [.init(property: "created", isAscending: false)]),
        FetchIndex(name: "spatial", elements: [.init(property: "serial", kind: "RTree"), .init(property: "created")]),
    ]

    static func storeModelCache(_ path: String) throws -> Data? {
        try Scratch.storeModelCache(Corpus.url(path))
    }

    static func storeModel(_ path: String) throws -> Model? {
        try storeModelCache(path).map { try CompiledModelReader.read(RawDeflate.inflate($0)) }
    }
}

/// Each class an archive uses, with its superclasses, and the keys its objects have (all of them
/// together).
struct ArchiveShape: Equatable {
    var chains: Set<[String]> = []
    var keys: [String: Set<String>] = [:]

    init(_ data: Data) throws {
        let archive = try PropertyList.decode(data)
        let objects = archive["$objects"]?.arrayValue ?? []
        for object in objects {
            guard let fields = object.dictionaryValue else { continue }
            if let chain = fields["$classes"]?.arrayValue { chains.insert(chain.compactMap(\.stringValue)) }
            guard let classUID = fields["$class"]?.uidValue,
                let name = objects[Int(classUID)]["$classname"]?.stringValue
            else { continue }
            keys[name, default: []].formUnion(fields.keys.filter { $0 != "$class" })
        }
    }

    /// Counts objects of class `name` as objects of class `other`.
    mutating func merge(_ name: String, into other: String) {
        guard let names = keys.removeValue(forKey: name) else { return }
        keys[other, default: []].formUnion(names)
    }

    func difference(from other: ArchiveShape) -> String {
        var lines: [String] = []
        for name in Set(keys.keys).union(other.keys.keys).sorted() {
            let ours = keys[name] ?? []
            let theirs = other.keys[name] ?? []
            if ours != theirs {
                lines.append(
                    "\(name): only ours \(ours.subtracting(theirs).sorted()), only theirs \(theirs.subtracting(ours).sorted())"
                )
            }
        }
        return lines.joined(separator: "; ")
    }
}

/// Programs the tests run, found on `PATH` or beside the toolchain.
enum Tool {
    struct Result {
        var status: Int32
        var output: String
        var errors: String
    }

    static let python3 = find("python3")
    static let plutil = find("plutil")
    static let sqlite3 = find("sqlite3")

    static func find(_ name: String) -> URL? {
        var folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        folders.append("/opt/swift/usr/bin")
        for folder in folders {
            let url = URL(fileURLWithPath: folder).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    static func run(_ program: URL, _ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorData, as: UTF8.self))
    }

    /// Runs `body` with `data` in a temporary file, removed afterwards.
    static func withFile<T>(_ data: Data, _ body: (URL) throws -> T) throws -> T {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("graft-\(UUID().uuidString).plist")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try body(url)
    }
}

/// Copies of corpus files to work on: SQLite changes a store (and removes its `-wal` file) when it
/// opens it, so corpus stores are only ever opened as copies.
enum Scratch {
    /// The `Z_MODELCACHE` content of a copy of the store at `url`, or `nil` when it has none or
    /// `sqlite3` is not installed.
    static func storeModelCache(_ url: URL) throws -> Data? {
        try column("Z_CONTENT", of: "Z_MODELCACHE", in: url)
    }

    /// The metadata property list of a copy of the store at `url`, or `nil` when it has none or
    /// `sqlite3` is not installed.
    static func storeMetadata(_ url: URL) throws -> PropertyList? {
        try column("Z_PLIST", of: "Z_METADATA", in: url).map { try PropertyList.decode($0) }
    }

    /// The first row's `column` of `table`, read from a copy of the store (and its `-wal`) at `url`.
    private static func column(_ column: String, of table: String, in url: URL) throws -> Data? {
        guard let sqlite3 = Tool.sqlite3 else { return nil }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("store.sqlite")
        try FileManager.default.copyItem(at: url, to: copy)
        let wal = URL(fileURLWithPath: url.path + "-wal")
        if FileManager.default.fileExists(atPath: wal.path) {
            try FileManager.default.copyItem(at: wal, to: URL(fileURLWithPath: copy.path + "-wal"))
        }
        let output = folder.appendingPathComponent("column.bin")
        let tables = try Tool.run(sqlite3, [copy.path, "select name from sqlite_master where name = '\(table)'"])
        guard tables.output.contains(table) else { return nil }
        let result = try Tool.run(
            sqlite3, [copy.path, "select writefile('\(output.path)', \(column)) from \(table) limit 1"])
        guard result.status == 0, FileManager.default.fileExists(atPath: output.path) else { return nil }
        return try Data(contentsOf: output)
    }
}
