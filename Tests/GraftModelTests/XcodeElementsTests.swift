import Foundation
import GraftCore
import GraftTestSupport
import Testing

@testable import GraftModel

/// Xcode 3's binary `elements` model files: the two corpus samples, the version hashes their stores
/// recorded, and the cases no sample covers, on archives built in the same layout.
@Suite struct XcodeElementsTests {
    static let recipes = "recipes/Recipes.xcdatamodel"
    static let books = "coredatabooks-gilpa/CoreDataBooks.xcdatamodel"

    /// `NSStoreModelVersionHashes` of `recipes/Recipes.sqlite` (its `Z_METADATA` plist; written by Core Data
    /// framework version 241). `recordedHashesAreTheStoresOwn` reads them again from a copy of the store.
    static let recipesStoreHashes = [
        "Image": "njbxNx1A/bZrU1DVRF9Kx6AYc/E6XKYaVqbNJLdYlC8=",
        "Ingredient": "5tCLlA1r9p1UWdOTr3XJ+ZzBr6bxraWAs3Vt9zCAZek=",
        "Recipe": "PcSdeYYgO5cW+z5s8cHpAZzy3WHO/upsq6Ujxtwckog=",
        "RecipeType": "EtqagX2A7+sQqDbBbEtFZT9iQz2Hsuv8um2Nz6k5YK4=",
    ]

    /// `NSStoreModelVersionHashes` of `coredatabooks-gilpa/CoreDataBooks.sqlite` (framework version 320).
    static let booksStoreHashes = ["Book": "SywFzcIhPlYwCP6NznsBMp6WyEHF3zYdaYvX/HIaGI0="]

    static func load(_ folder: String) throws -> Model {
        try XcodeElementsReader.read(contentsOf: Corpus.url(folder + "/elements"))
    }

    // MARK: The corpus samples

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func recipesReadsEveryEntityAttributeAndRelationship() throws {
        let model = try Self.load(Self.recipes)
        #expect(model.entities.map(\.name) == ["Image", "Ingredient", "Recipe", "RecipeType"])

        let recipe = try #require(model.entity(named: "Recipe")).declaration
        #expect(recipe.className == "Recipe")
        #expect(!recipe.isAbstract && recipe.parent == nil)
        #expect(recipe.attributes.map(\.name) == ["instructions", "name", "overview", "prepTime", "thumbnailImage"])
        #expect(recipe.attributes.allSatisfy { $0.isOptional && !$0.isTransient })
        let thumbnail = try #require(recipe.attributes.last)
        #expect(thumbnail.type == .transformable)
        #expect(thumbnail.valueTransformerName == "ImageToDataTransformer")
        #expect(recipe.attributes.dropLast().allSatisfy { $0.type == .string })
        #expect(
            recipe.relationships == [
                Relationship(
                    name: "image", destination: "Image", inverse: "recipe", minCount: 1, deleteRule: .cascade),
                Relationship(
                    name: "ingredients", destination: "Ingredient", inverse: "recipe", isToMany: true,
                    deleteRule: .cascade),
                Relationship(name: "type", destination: "RecipeType", inverse: "recipes", minCount: 1),
            ])

        let ingredient = try #require(model.entity(named: "Ingredient")).declaration
        #expect(ingredient.className == "Ingredient")
        #expect(
            ingredient.attributes == [
                Attribute(name: "amount", type: .string),
                Attribute(name: "displayOrder", type: .integer16, isOptional: false, defaultValue: .integer(0)),
                Attribute(name: "name", type: .string, isOptional: false, defaultValue: .string("Ingredient Name")),
            ])
        #expect(
            ingredient.relationships == [
                Relationship(name: "recipe", destination: "Recipe", inverse: "ingredients", minCount: 1)
            ])

        let type = try #require(model.entity(named: "RecipeType")).declaration
        #expect(type.className == "NSManagedObject")
        #expect(type.attributes == [Attribute(name: "name", type: .string)])
        #expect(
            type.relationships == [
                Relationship(name: "recipes", destination: "Recipe", inverse: "type", isToMany: true)
            ])

        let image = try #require(model.entity(named: "Image")).declaration
        #expect(
            image.attributes == [
                Attribute(name: "image", type: .transformable, valueTransformerName: "ImageToDataTransformer")
            ])
        #expect(
            image.relationships == [
                Relationship(name: "recipe", destination: "Recipe", inverse: "image", minCount: 1, isOptional: false)
            ])
        // Relationships are linked to their inverses.
        let ingredients = try #require(model.entity(named: "Recipe")?.relationship(named: "ingredients"))
        #expect(model.inverse(of: ingredients)?.name == "recipe")
        #expect(model.configurations.isEmpty && model.versionIdentifiers.isEmpty)
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func coreDataBooksReadsTheBookEntity() throws {
        let model = try Self.load(Self.books)
        #expect(model.entities.map(\.name) == ["Book"])
        let book = try #require(model.entities.first)
        #expect(book.className == "Book")
        #expect(book.relationships.isEmpty)
        // Xcode 3's Sync Services settings are not user info.
        #expect(book.userInfo.isEmpty && book.attributes.allSatisfy { $0.userInfo.isEmpty })
        #expect(
            book.attributes == [
                Attribute(
                    name: "author", type: .string, isOptional: false, defaultValue: .string("Author"),
                    minValue: .integer(1)),
                Attribute(name: "contents", type: .string),
                Attribute(name: "copyright", type: .date),
                Attribute(
                    name: "title", type: .string, isOptional: false, defaultValue: .string("Title"),
                    minValue: .integer(1)),
            ])
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func recipesHashesEqualTheHashesItsStoreRecorded() throws {
        let model = try Self.load(Self.recipes)
        #expect(Set(model.versionHashes.keys) == Set(Self.recipesStoreHashes.keys))
        for (entity, hash) in Self.recipesStoreHashes {
            #expect(model.entity(named: entity)?.versionHash.base64EncodedString() == hash, "\(entity)")
        }
    }

    /// A named exception: the `elements` model is not the model that wrote `CoreDataBooks.sqlite`.
    ///
    /// The corpus manifest says the store was edited by hand: a `ZCONTENTS` column was added to `ZBOOK`
    /// (`DEFAULT test`) without Core Data, so the store's metadata still records the hash of the model it
    /// was written with, whose Book had only author, copyright and title. The `elements` file declares a
    /// fourth attribute, `contents` (optional String), to go with that column. The reader is right: the
    /// hash differs only by that attribute, and without it equals the recorded one.
    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func coreDataBooksStoreWasWrittenByTheModelWithoutContents() throws {
        let model = try Self.load(Self.books)
        let recorded = try #require(Self.booksStoreHashes["Book"])
        #expect(model.entity(named: "Book")?.versionHash.base64EncodedString() != recorded)

        var book = try #require(model.entities.first)
        book.attributes.removeAll { $0.name == "contents" }
        let writer = try Model(entities: [book])
        #expect(writer.entity(named: "Book")?.versionHash.base64EncodedString() == recorded)
    }

    @Test(
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)),
        .enabled(if: StoreMetadata.sqlite3 != nil, "the sqlite3 command is not installed"),
        arguments: [
            ("recipes/Recipes.sqlite", recipesStoreHashes),
            ("coredatabooks-gilpa/CoreDataBooks.sqlite", booksStoreHashes),
        ])
    func recordedHashesAreTheStoresOwn(store: String, expected: [String: String]) throws {
        let hashes = try StoreMetadata.versionHashes(of: Corpus.url(store))
        #expect(hashes.mapValues { $0.base64EncodedString() } == expected)
    }

    @Test(
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)), arguments: [recipes, books])
    func writtenAsContentsTheModelReadsBackEqual(folder: String) throws {
        let model = try Self.load(folder)
        let again = try XcdatamodelReader.read(XcdatamodelWriter.contents(of: model), path: "rewritten \(folder)")
        #expect(again == model)
        #expect(again.versionHashes == model.versionHashes)
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func modelFileLoadsAnElementsOnlyFolder() throws {
        let folder = try ModelFile.load(Corpus.url(Self.recipes))
        #expect(folder.format == .xcdatamodel)
        #expect(folder.currentVersionName == "Recipes")
        #expect(folder.current == (try Self.load(Self.recipes)))

        let file = try ModelFile.load(Corpus.url(Self.books + "/elements"))
        #expect(file.currentVersionName == "CoreDataBooks")
        #expect(file.current.entities.map(\.name) == ["Book"])
    }

    // MARK: Bad input

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func aTruncatedFileGivesAnErrorNamingIt() throws {
        let data = try Data(contentsOf: Corpus.url(Self.recipes + "/elements"))
        for length in [0, 7, 40, data.count / 2, data.count - 1] {
            let error = try #require(throws: GraftError.self) {
                try XcodeElementsReader.read(data.prefix(length), path: "Recipes.xcdatamodel/elements")
            }
            #expect(error.code == .malformedInput, "\(length) bytes: \(error)")
            #expect(error.context.first == .file("Recipes.xcdatamodel/elements"))
        }
    }

    @Test func aFileThatIsNotAnXcode3ModelGivesAnErrorNamingIt() throws {
        let xml = Data(#"<?xml version="1.0"?><model type="com.apple.IDECoreDataModeler.DataModel"/>"#.utf8)
        let notArchive = try #require(throws: GraftError.self) { try XcodeElementsReader.read(xml, path: "m/elements") }
        #expect(notArchive.code == .malformedInput)
        #expect(notArchive.context.first == .file("m/elements"))
        #expect(notArchive.message.contains("not an Xcode 3 model archive"))

        let plainPlist = PropertyList.dictionary(["name": "Recipes"]).encode(format: .binary)
        let plain = try #require(throws: GraftError.self) {
            try XcodeElementsReader.read(plainPlist, path: "p/elements")
        }
        #expect(plain.code == .malformedInput)
        #expect(plain.context.first == .file("p/elements"))

        var archiver = KeyedArchiver()
        let mom = archiver.encodeObject(classChain: ["NSManagedObjectModel", "NSObject"], fields: [:])
        let compiled = archiver.finish(top: ["root": mom]).encode(format: .binary)
        let wrongKind = try #require(throws: GraftError.self) {
            try XcodeElementsReader.read(compiled, path: "Model.mom")
        }
        #expect(wrongKind.code == .unsupportedFormat)
        #expect(
            wrongKind.description
                == "Model.mom: the archive holds NSManagedObjectModel, not an Xcode 3 model (XDPMModel)")
    }

    @Test func aBrokenElementsFileInAFolderIsNamedByModelFile() throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("graft-elements-\(UUID().uuidString)/Broken.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        try Data("bplist00".utf8).write(to: folder.appendingPathComponent("elements"))
        let error = try #require(throws: GraftError.self) { try ModelFile.load(folder) }
        #expect(error.code == .malformedInput)
        #expect(error.description.contains("Broken.xcdatamodel/elements"))
    }

    // MARK: Cases no sample covers, on archives in the samples' layout

    @Test func unknownTagsAreIgnored() throws {
        var archive = ElementsArchive.company
        archive.entities[0].properties[0].tags.append(("XD_PPSK_somethingNewer", .value("whatever")))
        archive.entities[0].tags.append(("XD_PSK_unheardOf", .value(42)))
        #expect(try XcodeElementsReader.read(archive.encoded()) == (try ElementsArchive.companyModel()))
    }

    @Test(arguments: [ElementsArchive.Generalization.object, .entity])
    func aParentEntityComesFromTheGeneralizations(_ form: ElementsArchive.Generalization) throws {
        var archive = ElementsArchive.company
        archive.entities[2].generalization = form
        let model = try XcodeElementsReader.read(archive.encoded())
        #expect(model == (try ElementsArchive.companyModel()))
        #expect(model.entity(named: "Manager")?.declaration.parent == "Employee")
        #expect(model.entity(named: "Employee")?.isAbstract == true)
    }

    @Test func anUnknownAttributeTypeIsNamedWithItsEntityAndProperty() throws {
        var archive = ElementsArchive.company
        archive.entities[0].properties[0].tags[0] = ("XD_PAttK_attributeType", .value(4242))
        let error = try #require(throws: GraftError.self) {
            try XcodeElementsReader.read(archive.encoded(), path: "Company.xcdatamodel/elements")
        }
        #expect(error.code == .malformedInput)
        let place = "Company.xcdatamodel/elements: Department: name: XD_PAttK_attributeType: "
        #expect(error.description == place + "unknown attribute type code 4242")
    }

    @Test func aTagOfTheWrongKindIsNamed() throws {
        var archive = ElementsArchive.company
        archive.entities[0].properties[0].tags.append(("XD_PPSK_isOptional", .value(["not", "a", "flag"])))
        let error = try #require(throws: GraftError.self) { try XcodeElementsReader.read(archive.encoded()) }
        #expect(error.code == .malformedInput)
        #expect(error.context.first == .entity("Department"))
        #expect(error.context.contains(.key("name")) && error.context.contains(.key("XD_PPSK_isOptional")))
        #expect(error.message.contains("not a Boolean"))
    }

    @Test func aRelationshipWithoutADestinationIsNamed() throws {
        var archive = ElementsArchive.company
        archive.entities[0].properties[1].tags.removeAll { $0.0 == "XD_PRK_destination" }
        let error = try #require(throws: GraftError.self) { try XcodeElementsReader.read(archive.encoded()) }
        #expect(
            error.description == "Department: employees: XD_PRK_destination: the relationship has no destination entity"
        )
    }

    @Test func fetchRequestTemplatesAreRefusedRatherThanLost() throws {
        var archive = ElementsArchive.company
        archive.entities[0].fetchRequests = ["aRequest"]
        let error = try #require(throws: GraftError.self) { try XcodeElementsReader.read(archive.encoded()) }
        #expect(error.code == .unsupportedFormat)
        #expect(error.context.first == .entity("Department"))
    }

    @Test func otherPropertyKindsAreRefusedRatherThanLost() throws {
        var archive = ElementsArchive.company
        archive.entities[0].properties[0].className = "XDPMFetchedProperty"
        let error = try #require(throws: GraftError.self) { try XcodeElementsReader.read(archive.encoded()) }
        #expect(error.code == .unsupportedFormat)
        #expect(error.description.hasPrefix("Department: name: the property is an object of class XDPMFetchedProperty"))
    }
}

/// Reads a SQLite store's `NSStoreModelVersionHashes` with the `sqlite3` command, from a temporary copy
/// (opening a store in place could checkpoint or delete its journal).
enum StoreMetadata {
    static let sqlite3: URL? = {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let url = URL(fileURLWithPath: String(folder)).appendingPathComponent("sqlite3")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }()

    static func versionHashes(of store: URL) throws -> [String: Data] {
        let tool = try #require(sqlite3)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent(store.lastPathComponent)
        try FileManager.default.copyItem(at: store, to: copy)
        let output = folder.appendingPathComponent("metadata.hex")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        let process = Process()
        process.executableURL = tool
        process.arguments = ["-readonly", copy.path, "SELECT hex(Z_PLIST) FROM Z_METADATA"]
        process.standardOutput = handle
        try process.run()
        process.waitUntilExit()
        try handle.close()
        #expect(process.terminationStatus == 0)
        let hex = String(decoding: try Data(contentsOf: output), as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
        var bytes = Data()
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(try #require(UInt8(hex[index..<next], radix: 16)))
            index = next
        }
        let metadata = try PropertyList.decode(bytes)
        var hashes: [String: Data] = [:]
        for (entity, hash) in metadata["NSStoreModelVersionHashes"]?.dictionaryValue ?? [:] {
            hashes[entity] = hash.dataValue
        }
        return hashes
    }
}

/// A small model archived as Xcode 3 archived its models (the layout of the corpus samples), with the
/// parts no sample shows (a parent entity, fetch requests) added as the reader expects them.
struct ElementsArchive {
    enum Tag {
        case value(PropertyList)
        case entity(String)
        case relationship(entity: String, name: String)
    }

    /// The two encodings of a parent the reader accepts: a generalization object whose `_general` is the
    /// parent, or the parent entity itself.
    enum Generalization: CaseIterable, Sendable {
        case object, entity
    }

    struct Property {
        var name: String
        var className: String
        var tags: [(String, Tag)]
    }

    struct Entity {
        var name: String
        var parent: String?
        var generalization: Generalization?
        var tags: [(String, Tag)]
        var properties: [Property]
        var fetchRequests: [String] = []
    }

    var entities: [Entity]

    static let attributeClass = "XDPMAttribute"
    static let relationshipClass = "XDPMRelationship"

    static func attribute(_ name: String, _ type: Int64, optional: Bool = true) -> Property {
        Property(
            name: name, className: attributeClass,
            tags: [
                ("XD_PAttK_attributeType", .value(.integer(type))), ("XD_PPSK_isOptional", .value(.bool(optional))),
                ("XD_PPSK_isTransient", .value(false)),
            ])
    }

    static func relationship(
        _ name: String, to destination: String, inverse: String, toMany: Bool = false, deleteRule: Int64 = 1
    ) -> Property {
        var tags: [(String, Tag)] = [
            ("XD_PRK_destination", .entity(destination)),
            ("XD_PRK_inverseRelationship", .relationship(entity: destination, name: inverse)),
            ("XD_PRK_deleteRule", .value(.integer(deleteRule))), ("XD_PPSK_isOptional", .value(true)),
        ]
        tags +=
            toMany
            ? [("XD_PRK_isToMany", .value(true))] : [("XD_PRK_minCount", .value(1)), ("XD_PRK_maxCount", .value(1))]
        return Property(name: name, className: relationshipClass, tags: tags)
    }

    /// Department ⇄ Employee (abstract) ← Manager.
    static var company: ElementsArchive {
        ElementsArchive(entities: [
            Entity(
                name: "Department", tags: [("XD_PSK_entityClassName", .value("Department"))],
                properties: [
                    attribute("name", 700, optional: false),
                    relationship("employees", to: "Employee", inverse: "department", toMany: true, deleteRule: 3),
                ]),
            Entity(
                name: "Employee",
                tags: [("XD_PSK_isAbstract", .value(true)), ("XD_PSK_versionHashModifier", .value("2"))],
                properties: [
                    attribute("salary", 400), relationship("department", to: "Department", inverse: "employees"),
                ]),
            Entity(
                name: "Manager", parent: "Employee", generalization: .object,
                tags: [("XD_PSK_entityClassName", .value("NSManagedObject"))], properties: [attribute("bonus", 500)]),
        ])
    }

    /// The model `company` describes, declared directly.
    static func companyModel() throws -> Model {
        try Model(entities: [
            GraftModel.Entity(
                name: "Department", className: "Department",
                attributes: [Attribute(name: "name", type: .string, isOptional: false)],
                relationships: [
                    Relationship(
                        name: "employees", destination: "Employee", inverse: "department", isToMany: true,
                        deleteRule: .deny)
                ]),
            GraftModel.Entity(
                name: "Employee", isAbstract: true, attributes: [Attribute(name: "salary", type: .decimal)],
                relationships: [
                    Relationship(name: "department", destination: "Department", inverse: "employees", minCount: 1)
                ],
                versionHashModifier: "2"),
            GraftModel.Entity(
                name: "Manager", className: "NSManagedObject", parent: "Employee",
                attributes: [Attribute(name: "bonus", type: .double)]),
        ])
    }

    func encoded() -> Data {
        var archiver = KeyedArchiver()
        let entityChain = [
            "XDPMEntity", "XDUMLClassImp", "XDUMLClassifierImp", "XDUMLNamespaceImp", "XDUMLNamedElementImp",
            "XDUMLElementImp", "NSObject",
        ]
        let stereotypeChain = [
            "XDUMLStereotypeImp", "XDUMLClassImp", "XDUMLClassifierImp", "XDUMLNamespaceImp",
            "XDUMLNamedElementImp", "XDUMLElementImp", "NSObject",
        ]
        let tagChain = ["XDUMLPropertyImp", "XDUMLNamedElementImp", "XDUMLElementImp", "NSObject"]
        var entityUIDs: [String: KeyedArchiver.UID] = [:]
        var propertyUIDs: [String: KeyedArchiver.UID] = [:]
        for entity in entities {
            entityUIDs[entity.name] = archiver.reserveObject()
            for property in entity.properties {
                propertyUIDs[entity.name + "." + property.name] = archiver.reserveObject()
            }
        }

        // Every stereotype holds its tags as XDUMLPropertyImp objects in a dictionary keyed by tag name.
        func stereotypes(_ tags: [(String, Tag)], archiver: inout KeyedArchiver) -> KeyedArchiver.UID {
            var byStereotype: [String: [(String, Tag)]] = [:]
            for (tag, value) in tags {
                let stereotype =
                    tag.hasPrefix("XD_PSK_")
                    ? "XD_PStereotype"
                    : tag.hasPrefix("XD_PAttK_")
                        ? "XD_PAtt_Stereotype"
                        : tag.hasPrefix("XD_PRK_") ? "XD_PR_Stereotype" : "XD_PPropStereotype"
                byStereotype[stereotype, default: []].append((tag, value))
            }
            var entries: [(key: KeyedArchiver.UID, value: KeyedArchiver.UID)] = []
            for (name, tags) in byStereotype.sorted(by: { $0.key < $1.key }) {
                var owned: [(key: KeyedArchiver.UID, value: KeyedArchiver.UID)] = []
                for (tag, value) in tags {
                    let defaultValue: KeyedArchiver.UID
                    switch value {
                    case .value(let plist): defaultValue = archiver.encodePropertyList(plist)
                    case .entity(let entity): defaultValue = entityUIDs[entity]!
                    case .relationship(let entity, let name): defaultValue = propertyUIDs[entity + "." + name]!
                    }
                    let property = archiver.encodeObject(
                        classChain: tagChain,
                        fields: ["_name": .reference(archiver.encode(tag)), "_default": .reference(defaultValue)])
                    owned.append((archiver.encode(tag), property))
                }
                let storage = archiver.encodeDictionary(owned, mutable: true)
                let stereotype = archiver.encodeObject(
                    classChain: stereotypeChain,
                    fields: [
                        "_name": .reference(archiver.encode(name)),
                        "XDBucketForOwnedAttributesstorage": .reference(storage),
                    ])
                entries.append((archiver.encode(name), stereotype))
            }
            return archiver.encodeDictionary(entries, mutable: true)
        }

        var classes: [(key: KeyedArchiver.UID, value: KeyedArchiver.UID)] = []
        for entity in entities {
            var properties: [(key: KeyedArchiver.UID, value: KeyedArchiver.UID)] = []
            for property in entity.properties {
                let uid = propertyUIDs[entity.name + "." + property.name]!
                let chain = [
                    property.className, "XDPMProperty", "XDUMLPropertyImp", "XDUMLNamedElementImp", "NSObject",
                ]
                let stereotypeStorage = stereotypes(property.tags, archiver: &archiver)
                archiver.defineObject(
                    uid, classChain: chain,
                    fields: [
                        "_name": .reference(archiver.encode(property.name)), "_isReadOnly": false,
                        "XDBucketForStereotypesstorage": .reference(stereotypeStorage),
                    ])
                properties.append((archiver.encode(property.name), uid))
            }
            var tags = entity.tags
            if !entity.fetchRequests.isEmpty {
                tags.append(("XD_PSK_fetchRequestsArray", .value(.array(entity.fetchRequests.map { .string($0) }))))
            }
            var generalizations: [KeyedArchiver.UID] = []
            if let parent = entity.parent {
                switch entity.generalization ?? .object {
                case .entity:
                    generalizations.append(entityUIDs[parent]!)
                case .object:
                    generalizations.append(
                        archiver.encodeObject(
                            classChain: ["XDUMLGeneralizationImp", "XDUMLElementImp", "NSObject"],
                            fields: [
                                "_general": .reference(entityUIDs[parent]!),
                                "_specific": .reference(entityUIDs[entity.name]!),
                            ]))
                }
            }
            let stereotypeStorage = stereotypes(tags, archiver: &archiver)
            let ownedStorage = archiver.encodeDictionary(properties, mutable: true)
            let generalizationStorage = archiver.encodeArray(generalizations, mutable: true)
            archiver.defineObject(
                entityUIDs[entity.name]!, classChain: entityChain,
                fields: [
                    "_name": .reference(archiver.encode(entity.name)), "_isAbstract": false,
                    "XDBucketForOwnedAttributesstorage": .reference(ownedStorage),
                    "XDBucketForStereotypesstorage": .reference(stereotypeStorage),
                    "XDBucketForGeneralizationsstorage": .reference(generalizationStorage),
                ])
            classes.append((archiver.encode(entity.name), entityUIDs[entity.name]!))
        }
        let classStorage = archiver.encodeDictionary(classes, mutable: true)
        let package = archiver.encodeObject(
            classChain: ["XDModelPackage", "XDUMLPackageImp", "XDUMLNamespaceImp", "XDUMLNamedElementImp", "NSObject"],
            fields: ["_name": .reference(archiver.encode("")), "XDBucketForClassesstorage": .reference(classStorage)])
        let model = archiver.encodeObject(
            classChain: ["XDPMModel", "XDModel", "NSObject"],
            fields: [
                "_xd_rootPackage": .reference(package),
                "_xd_modelName": .reference(archiver.encode("Company.xcdatamodel")),
            ])
        return archiver.finish(top: ["root": model]).encode(format: .binary)
    }
}
