import Foundation
@_spi(GraftInternal) import GraftCore
import GraftTestSupport
import Testing

@testable import GraftXML

/// The text forms of values: dates printed as `printf("%.20f")` prints them, numbers, base64, and
/// content sniffing.
@Suite struct ValueTextTests {
    static func fixed20(_ value: Double) -> String {
        let buffer = ByteBuffer()
        ValueText.appendFixed20(value, to: buffer)
        return Bytes.string(buffer.bytes)
    }

    static func parseDate(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { ValueText.parseDate(UnsafeRawBufferPointer($0)) }
    }

    /// Values where printing is delicate: ties at the 21st decimal, carries into the integer part,
    /// subnormals, the largest values of the fast path, negative zero.
    static let delicate: [Double] = [
        0, -0.0, 1, -1, 0.5, 0.1, 0.3, 1.0 / 3.0, 2.0 / 3.0, 325_145_972.144_198, 63_113_835_600, -1_000_000_000.5,
        1.0 / 2_097_152.0,  // 2^-21: its 21st decimal is a 5 with nothing after (a tie)
        3.0 / 2_097_152.0, 5.0 / 4_194_304.0, 0.999_999_999_999_999_9, 9.999_999_999_999_999e-21,
        4.999_999_999_999_999e-21,
        5e-21, 1e-20, 1.5e-20, 2.5e-20, .leastNonzeroMagnitude, .leastNormalMagnitude, 1e-300,
        123_456.000_000_000_000_01,
        9.2e18, -9.2e18, 9.3e18, 1e22, -1e300, .greatestFiniteMagnitude, .nan, .infinity, -.infinity,
        Double(bitPattern: 0x3FEF_FFFF_FFFF_FFFF), 4_503_599_627_370_495.5, 9_007_199_254_740_993,
    ]

    @Test(arguments: delicate)
    func printsLikePrintf(_ value: Double) {
        #expect(Self.fixed20(value) == ValueText.printf20(value))
    }

    @Test func printsLikePrintfForRandomValues() {
        var generator = SeededGenerator(seed: 20_011_001)
        for round in 0..<200_000 {
            let value: Double
            switch round % 4 {
            case 0: value = Double.random(in: -1e10...1e10, using: &generator)
            case 1: value = Double(bitPattern: generator.next())  // any bit pattern
            case 2: value = Double(Int.random(in: -1_000_000...1_000_000, using: &generator)) / 1_048_576
            default:
                value =
                    Double.random(in: -1...1, using: &generator)
                    * pow(10, Double.random(in: -25...19, using: &generator))
            }
            let fast = Self.fixed20(value)
            let reference = ValueText.printf20(value)
            if fast != reference {
                Issue.record("seed 20011001, round \(round): \(value.bitPattern): \(fast) != \(reference)")
                return
            }
        }
    }

    @Test func datesReadBackExactly() {
        var generator = SeededGenerator(seed: 42)
        for round in 0..<100_000 {
            let value: Double
            switch round % 3 {
            case 0: value = Double.random(in: -4e9...4e9, using: &generator)
            case 1:
                value =
                    Double.random(in: -1...1, using: &generator)
                    * pow(10, Double.random(in: -12...15, using: &generator))
            default: value = Double(bitPattern: generator.next())
            }
            let buffer = ByteBuffer()
            ValueText.appendDate(value, to: buffer)
            let text = Bytes.string(buffer.bytes)
            let back = Self.parseDate(text)
            if back?.bitPattern != value.bitPattern && !(value.isNaN && back?.isNaN == true) {
                Issue.record("seed 42, round \(round): \(value) printed \(text) read \(String(describing: back))")
                return
            }
        }
    }

    @Test func datesAsPeopleWriteThemParseToo() {
        #expect(Self.parseDate("325145972.144198") == 325_145_972.144_198)
        #expect(Self.parseDate(" 12 ") == 12)
        #expect(Self.parseDate("-1.5e3") == -1_500)
        #expect(Self.parseDate("1.00000000000000000001") == 1)
        #expect(Self.parseDate("yesterday") == nil)
        #expect(Self.parseDate("") == nil)
        #expect(Self.parseDate("0x10") == nil)
        #expect(Self.parseDate("12.5.3") == nil)
    }

    @Test func integersParseWithinInt64() {
        func parse(_ text: String) -> Int64? {
            var text = text
            return text.withUTF8 { ValueText.parseInteger(UnsafeRawBufferPointer($0)) }
        }
        #expect(parse("-9223372036854775808") == Int64.min)
        #expect(parse("9223372036854775807") == Int64.max)
        #expect(parse("9223372036854775808") == nil)
        #expect(parse("+12") == 12)
        #expect(parse("12a") == nil)
        #expect(parse("-") == nil)
        #expect(parse("") == nil)
    }

    @Test func base64RoundTripsAndRejectsGarbage() {
        var generator = SeededGenerator(seed: 64)
        for length in 0..<200 {
            let data = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let buffer = ByteBuffer()
            ValueText.appendBase64(data, to: buffer)
            let text = Bytes.string(buffer.bytes)
            #expect(Data(base64Encoded: text.replacingOccurrences(of: "\n", with: "")) == data)
            #expect(Base64.decode(buffer.bytes) == data)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            if length > 57 {
                #expect(lines.count == 3 && lines[0].count == 76 && lines[2].isEmpty)
            } else if length > 0 {
                #expect(lines.count == 2 && lines[1].isEmpty)
            }
        }
        for bad in ["@@@", "QQ=Q", "QQ===", "Q", "QUJD\u{1}"] {
            var text = bad
            #expect(text.withUTF8 { Base64.decode(UnsafeRawBufferPointer($0)) } == nil, "\(bad)")
        }
        var spaced = " QU\nJD\tRA== "
        #expect(spaced.withUTF8 { Base64.decode(UnsafeRawBufferPointer($0)) } == Data("ABCD".utf8))
    }

    @Test func recognisesXMLStoresByTheirFirstBytes() throws {
        let yes = [
            "<?xml version=\"1.0\"?>\n<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\">\n\n<database>",
            "\u{FEFF}<?xml version='1.0' encoding='UTF-8' standalone='yes'?><!-- note --><database>",
            "<?xml version=\"1.0\"?><?pi x?>\n<!DOCTYPE database [<!ELEMENT database ANY>]>\n<database >",
        ]
        let no = [
            "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict/></plist>", "<database>",
            "<?xml version=\"1.0\"?><databases>", "SQLite format 3\0", "bplist00", "",
            "<?xml version=\"1.0\"?><!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"x\"><database>",
        ]
        for text in yes { #expect(XMLStore.isXMLStore(Data(text.utf8)), "\(text)") }
        for text in no { #expect(!XMLStore.isXMLStore(Data(text.utf8)), "\(text)") }
        for path in CorpusTests.stores {
            let head = try FileHandle(forReadingFrom: Corpus.url(path)).read(upToCount: 512) ?? Data()
            #expect(XMLStore.isXMLStore(head), "\(path)")
        }
    }
}
