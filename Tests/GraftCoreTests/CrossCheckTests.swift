import Foundation
import GraftCore
import GraftTestSupport
import Testing

/// Our encoders' output, read by other implementations.
@Suite struct CrossCheckTests {
    /// Edge values Python can represent (its dates stop at year 1 and 9999).
    static let pythonValues: [(name: String, value: PropertyList)] = Samples.edgeValues

    @Test(.enabled(if: Tool.python3 != nil, Tool.python3Missing), arguments: [PropertyList.Format.binary, .xml])
    func plistlibReadsOurOutput(format: PropertyList.Format) throws {
        var dictionary = PropertyList.Dictionary()
        for (name, value) in Self.pythonValues { dictionary[name] = value }
        let data = PropertyList.dictionary(dictionary).encode(format: format)
        let difference = PythonPlist.difference(.dictionary(dictionary), try PythonPlist.read(data))
        #expect(difference == nil)
    }

    @Test(.enabled(if: Tool.python3 != nil, Tool.python3Missing))
    func plistlibReadsRandomValues() throws {
        var generator = RepeatableRandomNumberGenerator(seed: 0x7079_7468_6F6E)
        let values = PropertyList.array((0..<200).map { _ in Samples.random(using: &generator) })
        for format in [PropertyList.Format.binary, .xml] {
            let difference = PythonPlist.difference(values, try PythonPlist.read(values.encode(format: format)))
            #expect(difference == nil, "\(format), seed \(generator.seed)")
        }
    }

    @Test(.enabled(if: Tool.python3 != nil, Tool.python3Missing))
    func plistlibReadsKeyedArchives() throws {
        var archiver = KeyedArchiver()
        let entries = (0..<50).map {
            (key: archiver.encode("key\($0)"), value: archiver.encode(Date(timeIntervalSinceReferenceDate: Double($0))))
        }
        let root = archiver.encodeDictionary(entries, mutable: true)
        let data = BinaryPropertyList.encode(archiver.finish(top: ["root": root]))
        let theirs = try PythonPlist.read(data)
        #expect(PythonPlist.difference(try BinaryPropertyList.decode(data), theirs) == nil)
    }

    @Test(.enabled(if: Tool.plutil != nil, Tool.plutilMissing), arguments: [PropertyList.Format.binary, .xml])
    func plutilReadsOurOutput(format: PropertyList.Format) throws {
        // Apple's reader takes UIDs up to UInt32.max only.
        let plutil = try #require(Tool.plutil)
        var dictionary = PropertyList.Dictionary()
        for (name, value) in Samples.edgeValues where (value.uidValue ?? 0) <= UInt64(UInt32.max) {
            dictionary[name] = value
        }
        let value = PropertyList.dictionary(dictionary)
        try Scratch.withFile(value.encode(format: format)) { file in
            let lint = try Tool.run(plutil, ["-lint", file.path])
            #expect(lint.status == 0, "\(lint.errorOutput)")
            let printed = try Tool.run(plutil, ["-p", file.path])
            #expect(printed.status == 0, "\(printed.errorOutput)")
            #expect(String(decoding: printed.output, as: UTF8.self).contains("emoji 😀 and 𝄞 clef"))
        }
    }

    @Test(.enabled(if: Tool.plutil != nil, Tool.plutilMissing))
    func plutilConvertsOurOutputBack() throws {
        // plutil cannot write UIDs to XML, and writes a carriage return as it is, which XML reads
        // back as a line feed; those values are left out here.
        let plutil = try #require(Tool.plutil)
        var dictionary = PropertyList.Dictionary()
        for (name, value) in Samples.edgeValues where value.uidValue == nil && !name.contains("CR") {
            dictionary[name] = value
        }
        let value = PropertyList.dictionary(dictionary)
        for (format, target) in [(PropertyList.Format.binary, "xml1"), (.xml, "binary1")] {
            try Scratch.withFile(value.encode(format: format)) { file in
                let converted = file.deletingLastPathComponent().appendingPathComponent("converted.plist")
                let result = try Tool.run(plutil, ["-convert", target, "-o", converted.path, file.path])
                #expect(result.status == 0, "\(result.errorOutput)")
                #expect(try PropertyList.decode(Data(contentsOf: converted)) == value, "\(format) → \(target)")
            }
        }
    }

    @Test(.enabled(if: Tool.plutil != nil, Tool.plutilMissing))
    func plutilReadsOurKeyedArchives() throws {
        let plutil = try #require(Tool.plutil)
        var archiver = KeyedArchiver()
        let root = archiver.encodePropertyList([
            "list": [1, "two", 3.5], "when": .date(Date(timeIntervalSinceReferenceDate: 0)),
        ])
        try Scratch.withFile(BinaryPropertyList.encode(archiver.finish(top: ["root": root]))) { file in
            let printed = try Tool.run(plutil, ["-p", file.path])
            #expect(printed.status == 0, "\(printed.errorOutput)")
            #expect(String(decoding: printed.output, as: UTF8.self).contains("NSKeyedArchiver"))
        }
    }
}
