import Foundation
import GraftCore
import GraftTestSupport
import Testing

/// Builds binary property lists by hand, object by object, for decoder tests.
struct BinaryPlistBuilder {
    var objects: [[UInt8]]
    var top = 0
    var referenceSize = 1
    var offsetSize = 1

    func build(
        objectCount: UInt64? = nil, topObject: UInt64? = nil, offsetTableStart: UInt64? = nil,
        offsetOverride: [Int: UInt64] = [:]
    ) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt64] = []
        for object in objects {
            offsets.append(UInt64(bytes.count))
            bytes += object
        }
        let tableStart = UInt64(bytes.count)
        for (index, offset) in offsets.enumerated() {
            bytes += Self.bigEndian(offsetOverride[index] ?? offset, size: offsetSize)
        }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        bytes += Self.bigEndian(objectCount ?? UInt64(objects.count), size: 8)
        bytes += Self.bigEndian(topObject ?? UInt64(top), size: 8)
        bytes += Self.bigEndian(offsetTableStart ?? tableStart, size: 8)
        return Data(bytes)
    }

    static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * (size - 1 - $0))) }
    }
}

/// The trailer fields of a binary property list.
struct BinaryTrailer {
    let offsetSize: Int
    let referenceSize: Int
    let objectCount: Int
    let offsetTableStart: Int

    init(_ data: Data) {
        let bytes = [UInt8](data.suffix(32))
        func integer(_ start: Int) -> Int { bytes[start..<(start + 8)].reduce(0) { $0 << 8 | Int($1) } }
        offsetSize = Int(bytes[6])
        referenceSize = Int(bytes[7])
        objectCount = integer(8)
        offsetTableStart = integer(24)
    }
}

@Suite struct BinaryPropertyListTests {
    @Test(arguments: Samples.edgeValues)
    func roundTrip(name: String, value: PropertyList) throws {
        try expectRoundTrip(value)
        try expectRoundTrip(["wrapped": value, "again": [value, value]])
    }

    @Test func randomValuesRoundTrip() throws {
        var generator = RepeatableRandomNumberGenerator(seed: 0x6772_6166_7431)
        for _ in 0..<300 {
            let value = Samples.random(using: &generator)
            try expectRoundTrip(value, "seed \(generator.seed)")
        }
    }

    @Test func roundTripKeepsDictionaryOrder() throws {
        let value: PropertyList = ["zebra": 1, "apple": 2, "mango": 3]
        let back = try BinaryPropertyList.decode(BinaryPropertyList.encode(value))
        #expect(back.dictionaryValue?.keys == ["zebra", "apple", "mango"])
    }

    @Test func roundTripKeepsCanonicallyEquivalentStringsApart() throws {
        let value: PropertyList = ["\u{E9}", "e\u{301}"]
        let back = try BinaryPropertyList.decode(BinaryPropertyList.encode(value))
        #expect(back[0]?.stringValue.map { Array($0.unicodeScalars) } == ["\u{E9}"])
        #expect(back[1]?.stringValue.map { Array($0.unicodeScalars) } == ["e", "\u{301}"])
    }

    @Test func roundTripKeepsNegativeZeroAndNaNPayloads() throws {
        let payload = Double(bitPattern: 0x7FF8_0000_0000_1234)
        let back = try BinaryPropertyList.decode(BinaryPropertyList.encode([.real(-0.0), .real(0.0), .real(payload)]))
        #expect(back[0]?.doubleValue?.bitPattern == (-0.0 as Double).bitPattern)
        #expect(back[1]?.doubleValue?.bitPattern == (0.0 as Double).bitPattern)
        #expect(back[2]?.doubleValue?.bitPattern == payload.bitPattern)
    }

    @Test func encodesTheCanonicalBytes() {
        let data = BinaryPropertyList.encode(["a": 1])
        let expected: [UInt8] =
            Array("bplist00".utf8) + [0xD1, 0x01, 0x02, 0x51, 0x61, 0x10, 0x01, 0x08, 0x0B, 0x0D]
            + [0, 0, 0, 0, 0, 0, 1, 1] + BinaryPlistBuilder.bigEndian(3, size: 8)
            + BinaryPlistBuilder.bigEndian(0, size: 8) + BinaryPlistBuilder.bigEndian(15, size: 8)
        #expect([UInt8](data) == expected)
    }

    @Test func sharesEqualScalars() {
        let value: PropertyList = ["same", "same", 7, 7, 7.0, true, true, .data(Data([1])), .data(Data([1])), "7"]
        // The array, "same", 7, 7.0, true, the data, "7".
        #expect(BinaryTrailer(BinaryPropertyList.encode(value)).objectCount == 7)
        // Dictionary keys share objects with equal string values.
        #expect(BinaryTrailer(BinaryPropertyList.encode(["name": "name"])).objectCount == 2)
        // Containers are not shared.
        #expect(BinaryTrailer(BinaryPropertyList.encode([[], [], [:]])).objectCount == 4)
    }

    @Test func choosesMinimalSizes() {
        let small = BinaryTrailer(BinaryPropertyList.encode(["a", "b"]))
        #expect(small.referenceSize == 1)
        #expect(small.offsetSize == 1)
        let manyObjects = BinaryTrailer(BinaryPropertyList.encode(.array((0..<300).map { .integer(Int64($0)) })))
        #expect(manyObjects.referenceSize == 2)
        #expect(manyObjects.offsetSize == 2)
        let bigData = BinaryTrailer(BinaryPropertyList.encode([.data(Data(count: 70_000)), "tail"]))
        #expect(bigData.referenceSize == 1)
        #expect(bigData.offsetSize == 4)
    }

    @Test(arguments: [
        (PropertyList.integer(0), [0x10, 0x00] as [UInt8]),
        (.integer(255), [0x10, 0xFF]),
        (.integer(256), [0x11, 0x01, 0x00]),
        (.integer(65_536), [0x12, 0x00, 0x01, 0x00, 0x00]),
        (.integer(Int64(UInt32.max) + 1), [0x13, 0, 0, 0, 1, 0, 0, 0, 0]),
        (.integer(-1), [0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
        (.unsignedInteger(UInt64.max), [0x14] + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0xFF, count: 8)),
        (.real(1.5), [0x23, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0]),
        (.bool(true), [0x09]),
        (.bool(false), [0x08]),
        (.date(Date(timeIntervalSinceReferenceDate: 1)), [0x33, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0]),
        (.uid(5), [0x80, 0x05]),
        (.uid(300), [0x81, 0x01, 0x2C]),
        (.string("ab"), [0x52, 0x61, 0x62]),
        (.string("é"), [0x61, 0x00, 0xE9]),
        (.string("😀"), [0x62, 0xD8, 0x3D, 0xDE, 0x00]),
        (.data(Data(count: 15)), [0x4F, 0x10, 0x0F] + [UInt8](repeating: 0, count: 15)),
    ])
    func encodesObjects(value: PropertyList, bytes: [UInt8]) {
        let data = [UInt8](BinaryPropertyList.encode(value))
        #expect(Array(data[8..<(8 + bytes.count)]) == bytes)
        #expect(BinaryTrailer(Data(data)).offsetTableStart == 8 + bytes.count)
    }

    // MARK: Decoding what other writers produce

    @Test func decodesOneByteIntegersAsUnsigned() throws {
        let data = BinaryPlistBuilder(objects: [[0xA2, 1, 2], [0x10, 0xF1], [0x11, 0xFF, 0xFE]]).build()
        #expect(try BinaryPropertyList.decode(data) == [241, 65_534])
    }

    @Test func decodesSixteenByteIntegers() throws {
        let negative = [0x14] + [UInt8](repeating: 0xFF, count: 15) + [0xFE]
        let large = [0x14] + [UInt8](repeating: 0, count: 8) + [0x80] + [UInt8](repeating: 0, count: 7)
        let data = BinaryPlistBuilder(objects: [[0xA2, 1, 2], negative, large]).build()
        #expect(try BinaryPropertyList.decode(data) == [-2, .unsignedInteger(1 << 63)])
        let tooLarge = [0x14, 0x01] + [UInt8](repeating: 0, count: 15)
        expectMalformed { try BinaryPropertyList.decode(BinaryPlistBuilder(objects: [tooLarge]).build()) }
    }

    @Test func decodesFourByteRealsSetsAndOrderedSets() throws {
        let data = BinaryPlistBuilder(objects: [
            [0xA3, 1, 2, 3], [0x22, 0x3F, 0xC0, 0x00, 0x00], [0xC2, 4, 5], [0xB1, 4], [0x51, 0x78], [0x09],
        ]).build()
        #expect(try BinaryPropertyList.decode(data) == [1.5, ["x", true], ["x"]])
    }

    @Test func decodesUTF16IncludingAstralPlane() throws {
        let text = "Grüße 😀 𝄞"
        let units = Array(text.utf16)
        let object: [UInt8] =
            [0x6F, 0x10, UInt8(units.count)] + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] as [UInt8] }
        #expect(try BinaryPropertyList.decode(BinaryPlistBuilder(objects: [object]).build()) == .string(text))
    }

    @Test func decodesLenientStrings() throws {
        // An "ASCII" string holding UTF-8, one holding Latin-1, and an unpaired UTF-16 surrogate.
        let data = BinaryPlistBuilder(objects: [
            [0xA3, 1, 2, 3], [0x52, 0xC3, 0xA9], [0x51, 0xE9], [0x61, 0xD8, 0x3D],
        ]).build()
        #expect(try BinaryPropertyList.decode(data) == ["é", "é", "\u{FFFD}"])
    }

    @Test func decodesWideReferencesAndOffsets() throws {
        var builder = BinaryPlistBuilder(objects: [[0xA1, 0, 0, 0, 1], [0x51, 0x7A]])
        builder.referenceSize = 4
        builder.offsetSize = 8
        #expect(try BinaryPropertyList.decode(builder.build()) == ["z"])
        builder.referenceSize = 3
        builder.objects[0] = [0xA1, 0, 0, 1]
        builder.offsetSize = 3
        #expect(try BinaryPropertyList.decode(builder.build()) == ["z"])
    }

    @Test func decodesSharedObjectsOnce() throws {
        // Each array refers to the next one twice: 2^40 paths, 41 objects.
        var objects: [[UInt8]] = []
        for index in 0..<40 { objects.append([0xA2, UInt8(index + 1), UInt8(index + 1)]) }
        objects.append([0x51, 0x78])
        let value = try BinaryPropertyList.decode(BinaryPlistBuilder(objects: objects).build())
        var level = value
        for _ in 0..<40 { level = try #require(level[1]) }
        #expect(level == "x")
    }

    @Test func laterDuplicateKeyWins() throws {
        let data = BinaryPlistBuilder(objects: [[0xD2, 1, 1, 2, 3], [0x51, 0x6B], [0x10, 1], [0x10, 2]]).build()
        #expect(try BinaryPropertyList.decode(data) == ["k": 2])
    }

    // MARK: Malformed input

    static let malformed: [(name: String, data: Data, message: String)] = {
        let valid = BinaryPlistBuilder(objects: [[0xA1, 1], [0x51, 0x61]])
        var cases: [(String, Data, String)] = [
            ("empty", Data(), "does not start"),
            ("magic only", Data("bplist00".utf8), "truncated"),
            ("wrong magic", Data("bplizt00".utf8) + Data(count: 40), "does not start"),
            ("truncated trailer", valid.build().dropLast(1), "offset size"),
            (
                "offset size 0",
                {
                    var b = valid
                    b.offsetSize = 0
                    return b.build()
                }(), "offset size"
            ),
            (
                "reference size 9",
                {
                    var b = valid
                    b.referenceSize = 9
                    return b.build()
                }(), "reference size"
            ),
            ("no objects", valid.build(objectCount: 0), "object count"),
            ("absurd object count", valid.build(objectCount: UInt64.max), "object count"),
            ("top object out of range", valid.build(topObject: 2), "top object"),
            ("offset table past end", valid.build(offsetTableStart: 10_000), "offset table"),
            ("offset table before header", valid.build(offsetTableStart: 3), "offset table"),
            ("object offset past table", valid.build(offsetOverride: [1: 200]), "outside the object area"),
            ("object offset inside header", valid.build(offsetOverride: [1: 2]), "outside the object area"),
            (
                "reference out of range", BinaryPlistBuilder(objects: [[0xA1, 7], [0x51, 0x61]]).build(),
                "only 2 objects"
            ),
            ("cycle", BinaryPlistBuilder(objects: [[0xA1, 1], [0xA1, 0]]).build(), "cycle"),
            ("self reference", BinaryPlistBuilder(objects: [[0xD1, 1, 0], [0x51, 0x61]]).build(), "cycle"),
            (
                "absurd array count",
                BinaryPlistBuilder(objects: [[0xAF, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]).build(),
                "count"
            ),
            (
                "count beyond the file", BinaryPlistBuilder(objects: [[0xAF, 0x10, 0x40, 0, 0]]).build(),
                "larger than the file"
            ),
            ("array past end", BinaryPlistBuilder(objects: [[0xA4, 0]]).build(), "past the end"),
            ("string past end", BinaryPlistBuilder(objects: [[0x55, 0x61]]).build(), "past the end"),
            ("UTF-16 past end", BinaryPlistBuilder(objects: [[0x65, 0x00, 0x61]]).build(), "past the end"),
            ("data past end", BinaryPlistBuilder(objects: [[0x45, 0x00]]).build(), "past the end"),
            ("count not an integer", BinaryPlistBuilder(objects: [[0x5F, 0x51, 0x61]]).build(), "not an integer"),
            ("integer past end", BinaryPlistBuilder(objects: [[0x13, 0x00]]).build(), "past the end"),
            (
                "32-byte integer", BinaryPlistBuilder(objects: [[0x15] + [UInt8](repeating: 0, count: 32)]).build(),
                "unsupported size"
            ),
            ("2-byte real", BinaryPlistBuilder(objects: [[0x21, 0, 0]]).build(), "unsupported size"),
            ("bad date marker", BinaryPlistBuilder(objects: [[0x32, 0, 0, 0, 0]]).build(), "date"),
            ("9-byte UID", BinaryPlistBuilder(objects: [[0x88] + [UInt8](repeating: 0, count: 9)]).build(), "UID"),
            ("null", BinaryPlistBuilder(objects: [[0xA1, 1], [0x00]]).build(), "null"),
            ("fill", BinaryPlistBuilder(objects: [[0x0F]]).build(), "fill"),
            ("unknown marker", BinaryPlistBuilder(objects: [[0xE0]]).build(), "unknown marker"),
            ("integer key", BinaryPlistBuilder(objects: [[0xD1, 1, 1], [0x10, 1]]).build(), "not a string"),
            (
                "references outnumber reference size",
                {
                    var b = valid
                    b.objects += Array(repeating: [0x08], count: 300)
                    return b.build()
                }(), "cannot be addressed"
            ),
        ]
        var deepBuilder = BinaryPlistBuilder(
            objects: (0..<600).map { [0xA1] + BinaryPlistBuilder.bigEndian(UInt64($0 + 1), size: 2) })
        deepBuilder.objects.append([0x08])
        deepBuilder.referenceSize = 2
        deepBuilder.offsetSize = 2
        cases.append(("nesting too deep", deepBuilder.build(), "nested more than 512"))
        return cases
    }()

    @Test(arguments: malformed)
    func rejectsMalformedInput(name: String, data: Data, message: String) throws {
        let error = expectMalformed { try BinaryPropertyList.decode(data) }
        #expect(error?.message.contains(message) == true, "\(name): \(error?.description ?? "no error")")
    }

    @Test func rejectsOtherVersions() {
        #expect(throws: GraftError.self) {
            try BinaryPropertyList.decode(Data("bplist15".utf8) + Data(count: 40))
        }
        do {
            _ = try BinaryPropertyList.decode(Data("bplist15".utf8) + Data(count: 40))
        } catch let error as GraftError {
            #expect(error.code == .unsupportedFormat)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func decodesDataSlices() throws {
        let whole = Data([0xFF, 0xFF]) + BinaryPropertyList.encode(["a": [1, 2]])
        #expect(try BinaryPropertyList.decode(whole.dropFirst(2)) == ["a": [1, 2]])
    }

    private func expectRoundTrip(
        _ value: PropertyList, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let data = BinaryPropertyList.encode(value)
        let back = try BinaryPropertyList.decode(data)
        #expect(back == value, comment, sourceLocation: sourceLocation)
        #expect(
            BinaryPropertyList.encode(back) == data, "re-encoding changed the bytes", sourceLocation: sourceLocation)
    }
}
