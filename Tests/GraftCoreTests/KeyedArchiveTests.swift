import Foundation
import GraftCore
import Testing

@Suite struct KeyedArchiveTests {
    // MARK: A real model cache

    @Test func readsAModelCache() throws {
        let archive = try KeyedArchive(data: Fixtures.modelCache)
        #expect(archive.archiver == "NSKeyedArchiver")
        #expect(archive.version == 100_000)
        #expect(archive.topKeys == ["root"])
        let model = try #require(try archive.topObject(forKey: "root"))
        #expect(model.className == "NSManagedObjectModel")
        #expect(model.classChain == ["NSManagedObjectModel", "NSObject"])
        #expect(try model["NSFetchRequestTemplates"] == nil)  // $null
        #expect(try model["no such key"] == nil)

        let entities = try #require(try model["NSEntities"])
        #expect(entities.className == "NSKnownKeysDictionary1")
        #expect(entities.isKind(of: "NSDictionary"))
        let byName = try entities.decodeStringKeyedDictionary()
        #expect(byName.map(\.key) == ["Post"])

        let post = byName[0].value
        #expect(post.className == "NSEntityDescription")
        #expect(try post.string(forKey: "NSEntityName") == "Post")
        #expect(try post.string(forKey: "NSRenamingIdentifier") == "Post")  // an NSMutableString
        #expect(try post["NSRenamingIdentifier"]?.className == "NSMutableString")
        #expect(try post["NSSuperentity"] == nil)
        #expect(try post["NSManagedObjectModel"] == model)
        #expect(try post["NSEntityName"] == post["NSClassNameForEntity"])  // one shared string object

        let properties = try #require(try post.dictionary(forKey: "NSProperties"))
        #expect(properties.map(\.key) == ["color", "date", "postID"])
        let date = properties[1].value
        #expect(date.className == "NSAttributeDescription")
        #expect(try date.integer(forKey: "NSAttributeType") == 900)
        #expect(try date.integer(forKey: "_P") == 243)
        #expect(try date.bool(forKey: "NSIsOptional") == true)
        #expect(try date.string(forKey: "NSAttributeValueClassName") == "NSDate")
        #expect(try date["NSAttributeType"]?.uid == nil)  // stored inline
        #expect(date.fieldNames.contains("NSPropertyName"))
        #expect(!date.fieldNames.contains("$class"))
        #expect(try post.dictionary(forKey: "NSUserInfo")?.isEmpty == true)

        let identifiers = try #require(try model.array(forKey: "NSVersionIdentifiers"))
        #expect(try identifiers.map { try $0.decodeString() } == [""])
        #expect(try model["NSVersionIdentifiers"]?.className == "NSMutableSet")
    }

    @Test func knownKeysDictionaryLayout() throws {
        // What NSKnownKeysDictionary1 looks like in a real archive.
        let archive = try KeyedArchive(data: Fixtures.modelCache)
        let entities = try #require(try archive.topObject(forKey: "root")?["NSEntities"])
        #expect(Set(entities.fieldNames) == ["searchMapping", "values", "emptyToken", "version"])
        #expect(
            entities.classChain == [
                "NSKnownKeysDictionary1", "NSKnownKeysDictionary", "NSMutableDictionary", "NSDictionary", "NSObject",
            ])
        let mapping = try #require(try entities["searchMapping"])
        #expect(mapping.className == "NSKnownKeysMappingStrategy1")
        #expect(Set(mapping.fieldNames) == ["keys", "length", "version"])
        #expect(try mapping["keys"]?.className == "NSArray")
        #expect(try entities["values"]?.className == "NSArray")
        #expect(try entities.string(forKey: "emptyToken")?.hasPrefix("__empty_slot_token_") == true)
    }

    @Test func convertsToAPropertyList() throws {
        let archive = try KeyedArchive(data: Fixtures.modelCache)
        let model = try #require(try archive.topObject(forKey: "root"))
        let post = try #require(try model["NSEntities"]?.decodeDictionary().first?.value)
        #expect(try post["NSUserInfo"]?.decodePropertyList() == .dictionary([:]))
        #expect(try model["NSVersionIdentifiers"]?.decodePropertyList() == [""])
        // Entities are not plain values, and the model and its entities refer to each other.
        expectMalformed(located: false) { try model.decodePropertyList() }
    }

    // MARK: Writing and reading back

    @Test func archiverOutputReadsBack() throws {
        var archiver = KeyedArchiver()
        let name = archiver.encode("Ann")
        let sameName = archiver.encode("Ann")
        #expect(name == sameName)
        let date = Date(timeIntervalSinceReferenceDate: 12_345.5)
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let url = URL(string: "https://example.com/a?b=c")!
        let list = archiver.encodeArray([archiver.encode("a"), archiver.encode(Int64(2))])
        let mutableList = archiver.encodeArray([archiver.encode(true)], mutable: true)
        let set = archiver.encodeSet([archiver.encode(1.5)])
        let info = archiver.encodeDictionary(["k": archiver.encode("v"), "n": archiver.encode(Int64(-3))])
        let mutableInfo = archiver.encodeDictionary(["x": archiver.encode("y")], mutable: true)
        let person = archiver.encodeObject(
            classChain: ["Person", "NSObject"],
            fields: [
                "name": .reference(name), "age": 42, "height": 1.8, "active": true, "blob": .data(Data([1, 2])),
                "born": archiver.encode(date).propertyList, "id": archiver.encode(uuid).propertyList,
                "home": archiver.encode(url).propertyList, "list": list.propertyList,
                "mutableList": mutableList.propertyList, "set": set.propertyList, "info": info.propertyList,
                "mutableInfo": mutableInfo.propertyList, "nothing": KeyedArchiver.UID.null.propertyList,
                "mutableString": archiver.encodeMutableString("ms").propertyList,
                "mutableData": archiver.encodeMutableData(Data([9])).propertyList,
                "plainData": archiver.encode(Data([7, 7])).propertyList,
                "properties": archiver.encodePropertyList(["p": [1, "two", .date(date)]]).propertyList,
            ])
        let plist = archiver.finish(top: ["root": person])
        #expect(plist["$version"] == 100_000)
        #expect(plist["$archiver"] == "NSKeyedArchiver")
        #expect(plist["$objects"]?[0] == "$null")
        #expect(plist["$top"] == ["root": .uid(person.rawValue)])

        let archive = try KeyedArchive(data: BinaryPropertyList.encode(plist))
        let root = try #require(try archive.topObject(forKey: "root"))
        #expect(root.className == "Person")
        #expect(try root.string(forKey: "name") == "Ann")
        #expect(try root.integer(forKey: "age") == 42)
        #expect(try root.double(forKey: "height") == 1.8)
        #expect(try root.bool(forKey: "active") == true)
        #expect(try root.data(forKey: "blob") == Data([1, 2]))
        #expect(try root.date(forKey: "born") == date)
        #expect(try root["id"]?.decodeUUID() == uuid)
        #expect(try root["home"]?.decodeURL().absoluteString == url.absoluteString)
        #expect(try root["list"]?.decodePropertyList() == ["a", 2])
        #expect(try root["mutableList"]?.className == "NSMutableArray")
        #expect(try root["mutableList"]?.decodePropertyList() == [true])
        #expect(try root["set"]?.decodePropertyList() == [1.5])
        #expect(try root["info"]?.decodePropertyList() == ["k": "v", "n": -3])
        #expect(try root["mutableInfo"]?.classChain == ["NSMutableDictionary", "NSDictionary", "NSObject"])
        #expect(try root["mutableInfo"]?.decodePropertyList() == ["x": "y"])
        #expect(try root["nothing"] == nil)
        #expect(try root.string(forKey: "mutableString") == "ms")
        #expect(try root.data(forKey: "mutableData") == Data([9]))
        #expect(try root.data(forKey: "plainData") == Data([7, 7]))
        #expect(try root["properties"]?.decodePropertyList() == ["p": [1, "two", .date(date)]])
    }

    @Test func archiverSharesClassEntriesAndStrings() {
        var archiver = KeyedArchiver()
        for index in 0..<100 {
            _ = archiver.encodeArray([archiver.encode("shared"), archiver.encode("item \(index % 10)")])
        }
        // $null, 100 arrays, one NSArray class entry, "shared" and ten item strings.
        #expect(archiver.objectCount == 1 + 100 + 1 + 1 + 10)
        #expect(archiver.classEntry(["NSArray", "NSObject"]) == archiver.classEntry(["NSArray", "NSObject"]))
        // The string "$null" is an ordinary string, not the $null entry.
        #expect(archiver.encode("$null") != .null)
        // Sharing is by identical contents, stricter than ==.
        #expect(archiver.encode(0.0) != archiver.encode(-0.0))
        #expect(archiver.encode("\u{E9}") != archiver.encode("e\u{301}"))
        #expect(archiver.encode(Int64(1)) != archiver.encode(true))
        #expect(archiver.encode(Int64(1)) == archiver.encodeValue(.unsignedInteger(1)))
        #expect(archiver.encode(1) == archiver.encode(Int64(1)))
    }

    @Test func archiverHandlesCycles() throws {
        var archiver = KeyedArchiver()
        let model = archiver.reserveObject()
        let entity = archiver.encodeObject(
            classChain: ["NSEntityDescription", "NSObject"],
            fields: ["NSEntityName": .reference(archiver.encode("Post")), "NSManagedObjectModel": .reference(model)])
        archiver.defineObject(
            model, classChain: ["NSManagedObjectModel", "NSObject"],
            fields: ["NSEntities": .reference(archiver.encodeDictionary(["Post": entity]))])
        let archive = try KeyedArchive(data: archiver.finish(top: ["root": model]).encode(format: .xml))
        let root = try #require(try archive.topObject(forKey: "root"))
        let post = try #require(try root.dictionary(forKey: "NSEntities")?.first?.value)
        #expect(try post["NSManagedObjectModel"]?.uid == root.uid)
        #expect(try post.string(forKey: "NSEntityName") == "Post")
    }

    @Test func readsNumberedElementsAndOtherStringForms() throws {
        let archive = try KeyedArchive([
            "$archiver": "NSKeyedArchiver", "$version": 100_000, "$top": ["root": .uid(1)],
            "$objects": [
                "$null",
                ["$class": .uid(2), "NS.object.0": .uid(3), "NS.object.1": .uid(4)],
                ["$classname": "NSOrderedSet", "$classes": ["NSOrderedSet", "NSObject"]],
                ["$class": .uid(5), "NS.bytes": .data(Data("bytes é".utf8))],
                ["$class": .uid(5), "NS.string": .uid(6)],
                ["$classname": "NSString"],
                "indirect",
            ],
        ])
        let root = try #require(try archive.topObject(forKey: "root"))
        #expect(try root.decodeArray().map { try $0.decodeString() } == ["bytes é", "indirect"])
        #expect(try archive.object(withUID: 3)?.classChain == ["NSString"])
        #expect(try root.decodePropertyList() == ["bytes é", "indirect"])
    }

    // MARK: Malformed archives

    static func archive(_ objects: [PropertyList], top: PropertyList = ["root": .uid(1)]) throws -> KeyedArchive {
        try KeyedArchive([
            "$archiver": "NSKeyedArchiver", "$version": 100_000, "$top": top, "$objects": .array(objects),
        ])
    }

    static let arrayClass: PropertyList = ["$classname": "NSArray", "$classes": ["NSArray", "NSObject"]]
    static let dictionaryClass: PropertyList = [
        "$classname": "NSDictionary", "$classes": ["NSDictionary", "NSObject"],
    ]

    @Test func rejectsArchivesWithoutTheirParts() {
        expectMalformed(located: false) { try KeyedArchive(.array([])) }
        expectMalformed(located: false) { try KeyedArchive(["$top": [:]]) }
        expectMalformed(located: false) { try KeyedArchive(["$objects": []]) }
        expectMalformed(located: false) { try KeyedArchive(data: Data("not a plist".utf8)) }
    }

    @Test func rejectsBadClassReferences() {
        expectMalformed(located: false) { try Self.archive(["$null", ["$class": 5]]) }
        expectMalformed(located: false) { try Self.archive(["$null", ["$class": .uid(99)]]) }
        expectMalformed(located: false) { try Self.archive(["$null", ["$class": .uid(0)]]) }
        expectMalformed(located: false) { try Self.archive(["$null", ["$class": .uid(2)], ["$classname": 3]]) }
        expectMalformed(located: false) {
            try Self.archive(["$null", ["$class": .uid(2)], ["$classname": "X", "$classes": ["X", 1]]])
        }
    }

    @Test func rejectsOutOfRangeUIDs() throws {
        let archive = try Self.archive(
            ["$null", ["$class": .uid(2), "NS.objects": [.uid(1), .uid(40)]], Self.arrayClass],
            top: ["root": .uid(1), "bad": .uid(77), "wrong": "text"])
        expectMalformed(located: false) { try archive.topObject(forKey: "bad") as Any }
        expectMalformed(located: false) { try archive.topObject(forKey: "wrong") as Any }
        expectMalformed(located: false) { try archive.object(withUID: .max) as Any }
        let root = try #require(try archive.topObject(forKey: "root"))
        let error = expectMalformed(located: false) { try root.decodeArray() }
        #expect(error?.message.contains("UID 40") == true)
        #expect(error?.context.contains(.object("$objects[1]")) == true)
    }

    @Test func rejectsWrongTypes() throws {
        let archive = try Self.archive([
            "$null",
            ["$class": .uid(2), "NS.objects": [.uid(3), .uid(0)], "name": .uid(3), "count": "seven"],
            Self.arrayClass,
            "text",
            ["$class": .uid(5), "NS.keys": [.uid(3)], "NS.objects": []],
            Self.dictionaryClass,
            ["$class": .uid(5), "NS.keys": "nope", "NS.objects": []],
        ])
        let root = try #require(try archive.topObject(forKey: "root"))
        expectMalformed(located: false) { try root.decodeString() }
        expectMalformed(located: false) { try root.decodeDictionary() }
        expectMalformed(located: false) { try root.decodeDate() }
        expectMalformed(located: false) { try root.decodeUUID() }
        expectMalformed(located: false) { try root.decodeURL() }
        expectMalformed(located: false) { try root.decodeData() }
        expectMalformed(located: false) { try root.decodeNumber() }
        expectMalformed(located: false) { try root.integer(forKey: "count") as Any }
        expectMalformed(located: false) { try root.decodeArray() }  // $null element
        let text = try #require(try root["name"])
        expectMalformed(located: false) { try text["anything"] as Any }
        expectMalformed(located: false) { try text.decodeArray() }
        expectMalformed(located: false) { try archive.object(withUID: 4)?.decodeDictionary() as Any }  // counts differ
        expectMalformed(located: false) { try archive.object(withUID: 6)?.decodeDictionary() as Any }  // not arrays
        expectMalformed(located: false) { try archive.object(withUID: 4)?.decodeArray() as Any }  // a dictionary
    }

    @Test func rejectsCyclesWhereValuesMustBeFinite() throws {
        let archive = try Self.archive([
            "$null", ["$class": .uid(2), "NS.objects": [.uid(3)]], Self.arrayClass,
            ["$class": .uid(2), "NS.objects": [.uid(1)]],
        ])
        let root = try #require(try archive.topObject(forKey: "root"))
        let error = expectMalformed(located: false) { try root.decodePropertyList() }
        #expect(error?.message.contains("cycle") == true)
        // Following the cycle one step at a time is fine.
        #expect(try root.decodeArray()[0].decodeArray()[0].uid == 1)

        let selfString = try Self.archive([
            "$null", ["$class": .uid(2), "NS.string": .uid(1)], ["$classname": "NSString"],
        ])
        expectMalformed(located: false) { try selfString.topObject(forKey: "root")?.decodeString() as Any }
        let selfURL = try Self.archive([
            "$null", ["$class": .uid(2), "NS.relative": .uid(3), "NS.base": .uid(1)], ["$classname": "NSURL"], "x",
        ])
        expectMalformed(located: false) { try selfURL.topObject(forKey: "root")?.decodeURL() as Any }
    }

    @Test func knownKeysDictionarySkipsEmptySlots() throws {
        let archive = try Self.archive([
            "$null",
            ["$class": .uid(2), "searchMapping": .uid(3), "values": .uid(6), "emptyToken": .uid(8), "version": 1],
            ["$classname": "NSKnownKeysDictionary1"],
            ["$class": .uid(4), "keys": .uid(5), "length": 2, "version": 1],
            ["$classname": "NSKnownKeysMappingStrategy1"],
            ["$class": .uid(7), "NS.objects": [.uid(9), .uid(10)]],
            ["$class": .uid(7), "NS.objects": [.uid(8), .uid(11)]],
            Self.arrayClass,
            "__empty_slot_token__",
            "first", "second", "value",
        ])
        let root = try #require(try archive.topObject(forKey: "root"))
        #expect(try root.decodeStringKeyedDictionary().map(\.key) == ["second"])
        #expect(try root.decodePropertyList() == ["second": "value"])
    }
}
