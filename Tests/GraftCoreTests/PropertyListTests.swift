import Foundation
import GraftCore
import Testing

@Suite struct PropertyListTests {
    @Test func nanEqualsNaN() {
        #expect(PropertyList.real(.nan) == .real(.nan))
        #expect(PropertyList.real(.nan) == .real(-Double.nan))
        #expect(
            PropertyList.real(.nan).hashValue == PropertyList.real(Double(bitPattern: 0x7FF0_0000_0000_0001)).hashValue)
        #expect(PropertyList.real(.nan) != .real(0))
        #expect(
            PropertyList.date(Date(timeIntervalSinceReferenceDate: .nan))
                == .date(Date(timeIntervalSinceReferenceDate: .nan)))
        #expect(PropertyList.array([.real(.nan)]) == [.real(.nan)])
    }

    @Test func integersCompareByValue() {
        #expect(PropertyList.integer(5) == .unsignedInteger(5))
        #expect(PropertyList.integer(5).hashValue == PropertyList.unsignedInteger(5).hashValue)
        #expect(PropertyList.integer(-1) != .unsignedInteger(UInt64.max))
        #expect(PropertyList(integer: UInt64.max) == .unsignedInteger(UInt64.max))
        #expect(PropertyList(integer: UInt64(7)) == .integer(7))
        #expect(PropertyList(integer: Int8(-3)) == .integer(-3))
        #expect(PropertyList.integer(1) != .real(1))
        #expect(PropertyList.integer(1) != .bool(true))
    }

    @Test func accessors() {
        let plist: PropertyList = [
            "s": "text", "i": 42, "u": .unsignedInteger(UInt64.max), "r": 2.5, "b": true,
            "d": .data(Data([1])), "a": [1, "two"], "t": .date(Date(timeIntervalSinceReferenceDate: 3)), "x": .uid(9),
        ]
        #expect(plist["s"]?.stringValue == "text")
        #expect(plist["i"]?.intValue == 42)
        #expect(plist["i"]?.doubleValue == 42)
        #expect(plist["u"]?.intValue == nil)
        #expect(plist["u"]?.uint64Value == UInt64.max)
        #expect(plist["r"]?.doubleValue == 2.5)
        #expect(plist["b"]?.boolValue == true)
        #expect(plist["d"]?.dataValue == Data([1]))
        #expect(plist["a"]?[1]?.stringValue == "two")
        #expect(plist["a"]?[2] == nil)
        #expect(plist["a"]?[-1] == nil)
        #expect(plist["t"]?.dateValue == Date(timeIntervalSinceReferenceDate: 3))
        #expect(plist["x"]?.uidValue == 9)
        #expect(plist["missing"] == nil)
        #expect(plist["s"]?["nested"] == nil)
        #expect(plist.dictionaryValue?.count == 9)
        #expect(plist["a"]?.arrayValue?.count == 2)
        #expect(plist["s"]?.intValue == nil)
    }

    @Test func dictionaryKeepsInsertionOrder() {
        var dictionary: PropertyList.Dictionary = ["b": 1, "a": 2, "c": 3]
        #expect(dictionary.keys == ["b", "a", "c"])
        dictionary["a"] = 20
        #expect(dictionary.keys == ["b", "a", "c"])
        #expect(dictionary["a"] == 20)
        dictionary["d"] = 4
        #expect(dictionary.keys == ["b", "a", "c", "d"])
        dictionary["b"] = nil
        #expect(dictionary.keys == ["a", "c", "d"])
        #expect(dictionary.values == [20, 3, 4])
        #expect(dictionary.removeValue(forKey: "zzz") == nil)
        #expect(Array(dictionary.map(\.key)) == ["a", "c", "d"])
        #expect(dictionary[0].key == "a")
        #expect(dictionary["nope", default: 0] == 0)
    }

    @Test func largeDictionaryLookupsAndRemovals() {
        var dictionary = PropertyList.Dictionary()
        for index in 0..<1_000 { dictionary["key\(index)"] = .integer(Int64(index)) }
        #expect(dictionary.count == 1_000)
        #expect(dictionary["key777"] == 777)
        #expect(dictionary.index(forKey: "key500") == 500)
        for index in stride(from: 0, to: 1_000, by: 2) { dictionary["key\(index)"] = nil }
        #expect(dictionary.count == 500)
        #expect(dictionary["key778"] == nil)
        #expect(dictionary["key777"] == 777)
        #expect(dictionary.index(forKey: "key1") == 0)
        #expect(dictionary.keys.first == "key1")
        dictionary["key1"] = "replaced"
        #expect(dictionary[0].value == "replaced")
        while dictionary.count > 3 { dictionary.removeValue(forKey: dictionary.keys.last!) }
        #expect(dictionary.keys == ["key1", "key3", "key5"])
        #expect(dictionary["key5"] == 5)
    }

    @Test func dictionaryEqualityIgnoresOrder() {
        let one: PropertyList.Dictionary = ["a": 1, "b": [1, 2]]
        let two: PropertyList.Dictionary = ["b": [1, 2], "a": 1]
        #expect(one == two)
        #expect(one.hashValue == two.hashValue)
        #expect(one != ["a": 1, "b": [2, 1]])
        #expect(one != ["a": 1])
        #expect(one != ["a": 1, "c": [1, 2]])
        #expect(Set([PropertyList.dictionary(one), .dictionary(two)]).count == 1)
    }

    @Test func repeatedLiteralKeyKeepsFirstPositionAndLastValue() {
        let dictionary = PropertyList.Dictionary([("a", 1), ("b", 2), ("a", 3)])
        #expect(dictionary.keys == ["a", "b"])
        #expect(dictionary["a"] == 3)
    }

    @Test func descriptionIsReadable() {
        let plist: PropertyList = [
            "name": "Ann", "tags": [1, 2.5, true], "bytes": .data(Data([0xAB])), "ref": .uid(3),
        ]
        #expect(plist.description == #"["name": "Ann", "tags": [1, 2.5, true], "bytes": <1 bytes: ab>, "ref": uid(3)]"#)
        #expect(PropertyList.dictionary([:]).description == "[:]")
    }

    @Test(arguments: [
        ("bplist00", PropertyList.Format.binary),
        ("<?xml version=\"1.0\"?><plist/>", .xml),
        ("\u{FEFF}  <!DOCTYPE plist><plist/>", .xml),
        ("\n<plist version=\"1.0\"><true/></plist>", .xml),
        ("{ a = b; }", .openStep),
        ("<0fbd 7788>", .openStep),
        ("< 0f >", .openStep),
        ("<>", .openStep),
        ("(a, b)", .openStep),
    ])
    func formatDetection(text: String, format: PropertyList.Format) {
        #expect(PropertyList.format(of: Data(text.utf8)) == format)
    }

    @Test func formatDetectionOfUTF16XML() throws {
        var data = Data([0xFF, 0xFE])
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><plist version=\"1.0\"><string>é</string></plist>"
        for unit in text.utf16 {
            data.append(UInt8(unit & 0xFF))
            data.append(UInt8(unit >> 8))
        }
        #expect(PropertyList.format(of: data) == .xml)
        #expect(try PropertyList.decode(data) == "é")
    }

    @Test(arguments: [PropertyList.Format.binary, .xml])
    func decodeRecognisesEncodedFormats(format: PropertyList.Format) throws {
        let value: PropertyList = [
            "a": [1, "b", 2.5, false], "when": .date(Date(timeIntervalSinceReferenceDate: 86_400)),
        ]
        let data = value.encode(format: format)
        #expect(PropertyList.format(of: data) == format)
        #expect(try PropertyList.decode(data) == value)
    }

    @Test func openStepEncodingReadsBackAsStrings() throws {
        let value: PropertyList = [
            "name": "Model", "path": "a/b", "needs quotes": "x = \"y\";\n\t\\", "list": ["a", "", "//not a comment"],
            "bytes": .data(Data([0, 1, 2, 3, 4, 0xFF])), "empty": [:], "none": [], "number": 42, "flag": true,
        ]
        let text = value.encode(format: .openStep)
        let back = try OpenStepPropertyList.decode(text)
        #expect(back["name"] == "Model")
        #expect(back["path"] == "a/b")
        #expect(back["needs quotes"] == "x = \"y\";\n\t\\")
        #expect(back["list"] == ["a", "", "//not a comment"])
        #expect(back["bytes"] == .data(Data([0, 1, 2, 3, 4, 0xFF])))
        #expect(back["empty"] == .dictionary([:]))
        #expect(back["none"] == [])
        #expect(back["number"] == "42")
        #expect(back["flag"] == "YES")
        #expect(back.dictionaryValue?.keys == value.dictionaryValue?.keys)
    }
}
