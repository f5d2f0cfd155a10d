import Foundation
import GraftCore
import GraftTestSupport
import Testing

/// Corrupt input must give a `GraftError`, never a crash, a hang or another kind of error.
///
/// Every run replays from a fixed seed; a failure names the seed and the iteration.
@Suite struct FuzzTests {
    static let seed: UInt64 = 0x6772_6166_745F_667A

    /// Valid binary property lists to mutate: edge values, random values, a real model cache, and the
    /// corpus's compiled models when the corpus is present.
    static let binarySeeds: [Data] = {
        var seeds: [Data] = [Fixtures.modelCache]
        var dictionary = PropertyList.Dictionary()
        for (name, value) in Samples.edgeValues where name != "large data" && name != "long string" {
            dictionary[name] = value
        }
        seeds.append(BinaryPropertyList.encode(.dictionary(dictionary)))
        var generator = RepeatableRandomNumberGenerator(seed: seed)
        for _ in 0..<20 { seeds.append(BinaryPropertyList.encode(Samples.random(using: &generator))) }
        for path in Corpus.momFiles {
            if let data = try? FileAccess.read(Corpus.url(path)), BinaryPropertyList.hasMagic(data) {
                seeds.append(data)
            }
        }
        return seeds
    }()

    @Test func mutatedBinaryPropertyLists() {
        var generator = RepeatableRandomNumberGenerator(seed: Self.seed)
        var decoded = 0
        var rejected = 0
        for iteration in 0..<6_000 {
            let original = Self.binarySeeds[Int.random(in: 0..<Self.binarySeeds.count, using: &generator)]
            let mutated = Self.mutate(original, using: &generator, binary: true)
            do {
                let plist = try BinaryPropertyList.decode(mutated)
                decoded += 1
                Self.exploreArchive(plist)
            } catch is GraftError {
                rejected += 1
            } catch {
                Issue.record("seed \(Self.seed), iteration \(iteration): not a GraftError: \(error)")
            }
        }
        // Both outcomes must actually happen, or the mutations are not exercising anything.
        #expect(decoded > 100)
        #expect(rejected > 1_000)
    }

    @Test func truncatedBinaryPropertyLists() throws {
        for original in Self.binarySeeds.prefix(4) {
            for length in 0..<original.count {
                do {
                    _ = try BinaryPropertyList.decode(original.prefix(length))
                } catch is GraftError {
                } catch {
                    Issue.record("prefix of \(length) bytes: not a GraftError: \(error)")
                }
            }
        }
    }

    @Test func mutatedXMLPropertyLists() {
        var generator = RepeatableRandomNumberGenerator(seed: Self.seed &+ 1)
        var seeds = [
            XMLPropertyList.encode([
                "a": [1, 2.5, "x", true, .data(Data([1, 2, 3])), .date(Date(timeIntervalSinceReferenceDate: 9))]
            ])
        ]
        for _ in 0..<10 { seeds.append(XMLPropertyList.encode(Samples.random(using: &generator))) }
        for iteration in 0..<1_500 {
            let mutated = Self.mutate(
                seeds[Int.random(in: 0..<seeds.count, using: &generator)], using: &generator, binary: false)
            do {
                _ = try XMLPropertyList.decode(mutated)
            } catch is GraftError {
            } catch {
                Issue.record("seed \(Self.seed &+ 1), iteration \(iteration): not a GraftError: \(error)")
            }
        }
    }

    @Test func mutatedOpenStepPropertyLists() {
        var generator = RepeatableRandomNumberGenerator(seed: Self.seed &+ 2)
        let seeds = [
            Data(#"{ a = b; "c d" = ( e, "f\n\U00e9", <0011 2233>, {} ); /* x */ g = 'h'; // y"#.utf8 + [0x0A, 0x7D]),
            OpenStepPropertyList.encode(["name": "Model", "list": ["a", "b c"], "data": .data(Data([0, 255]))]),
        ]
        for iteration in 0..<3_000 {
            let mutated = Self.mutate(seeds[iteration % seeds.count], using: &generator, binary: false)
            do {
                _ = try OpenStepPropertyList.decode(mutated)
            } catch is GraftError {
            } catch {
                Issue.record("seed \(Self.seed &+ 2), iteration \(iteration): not a GraftError: \(error)")
            }
        }
    }

    @Test func mutatedKeyedArchives() throws {
        // Structural damage to a real archive: UIDs out of range or pointing at the wrong objects,
        // values of the wrong type, fields removed.
        var generator = RepeatableRandomNumberGenerator(seed: Self.seed &+ 3)
        let original = try BinaryPropertyList.decode(Fixtures.modelCache)
        guard case .dictionary(var root) = original, case .array(let objects)? = root["$objects"] else {
            Issue.record("the fixture is not an archive")
            return
        }
        let replacements: [PropertyList] = [
            .uid(0), .uid(1), .uid(2), .uid(9_999), "text", 7, .data(Data([1])), [.uid(1)], [:],
        ]
        for iteration in 0..<800 {
            var damaged = objects
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<damaged.count, using: &generator)
                guard case .dictionary(var fields) = damaged[index], !fields.isEmpty else {
                    damaged[index] = replacements.randomElement(using: &generator)!
                    continue
                }
                let key = fields.keys.randomElement(using: &generator)!
                if Bool.random(using: &generator) {
                    fields[key] = replacements.randomElement(using: &generator)!
                } else {
                    fields[key] = nil
                }
                damaged[index] = .dictionary(fields)
            }
            root["$objects"] = .array(damaged)
            do {
                let archive = try KeyedArchive(.dictionary(root))
                Self.explore(archive)
            } catch is GraftError {
            } catch {
                Issue.record("seed \(Self.seed &+ 3), iteration \(iteration): not a GraftError: \(error)")
            }
        }
    }

    // MARK: Helpers

    /// One to four random changes: bytes overwritten with random or boundary values, bytes inserted or
    /// removed, the data cut short; for binary lists, trailer fields are favoured.
    static func mutate(_ data: Data, using generator: inout RepeatableRandomNumberGenerator, binary: Bool) -> Data {
        var bytes = [UInt8](data)
        let interesting: [UInt8] = [
            0x00, 0x01, 0x0F, 0x10, 0x7F, 0x80, 0xFF, 0xAF, 0xDF, 0x5F, 0x6F, 0x13, 0x3C, 0x3E, 0x22,
        ]
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            guard !bytes.isEmpty else { break }
            let trailerBias = binary && bytes.count > 32 && Int.random(in: 0..<4, using: &generator) == 0
            let index =
                trailerBias
                ? bytes.count - 32 + Int.random(in: 0..<32, using: &generator)
                : Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
            case 1: bytes[index] = interesting.randomElement(using: &generator)!
            case 2: bytes[index] ^= 1 << UInt8.random(in: 0...7, using: &generator)
            case 3: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: index)
            case 4: bytes.remove(at: index)
            default: bytes.removeLast(Int.random(in: 0...min(bytes.count, 16), using: &generator))
            }
        }
        return Data(bytes)
    }

    /// If the value is a keyed archive, reads it and explores it; errors are fine, crashes are not.
    static func exploreArchive(_ plist: PropertyList) {
        guard let archive = try? KeyedArchive(plist) else { return }
        explore(archive)
    }

    /// Calls every reader on every object and field of an archive, ignoring the errors.
    static func explore(_ archive: KeyedArchive) {
        for key in archive.topKeys { _ = try? archive.topObject(forKey: key) }
        for uid in 0..<UInt64(min(archive.objects.count, 5_000)) {
            guard let object = try? archive.object(withUID: uid) else { continue }
            exercise(object)
            for field in object.fieldNames {
                if let value = try? object[field] { exercise(value) }
            }
        }
    }

    static func exercise(_ object: ArchivedObject) {
        _ = object.className
        _ = object.classChain
        _ = try? object.decodeString()
        _ = try? object.decodeNumber()
        _ = try? object.decodeInteger()
        _ = try? object.decodeDouble()
        _ = try? object.decodeBool()
        _ = try? object.decodeData()
        _ = try? object.decodeDate()
        _ = try? object.decodeUUID()
        _ = try? object.decodeURL()
        _ = try? object.decodeArray()
        _ = try? object.decodeDictionary()
        _ = try? object.decodeStringKeyedDictionary()
        _ = try? object.decodePropertyList()
    }
}
