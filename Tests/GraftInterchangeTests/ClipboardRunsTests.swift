import Foundation
import GraftCore
import GraftInterchange
import Testing

/// Decoding reads a long array of objects in runs on several threads (JSON from places that are likely
/// objects, binary property lists from any reference); what it gives, and every error it throws, are what
/// one thread reading in order gives — checked here against ``ClipboardReader``, which reads in order.
@Suite struct ClipboardRunsTests {
    /// Long enough to be read in runs (a JSON run needs a megabyte, a binary one 4,096 objects).
    static let document = ClipboardSamples.company(objects: 30_000)
    static let json = try! ClipboardEncoding.json.encode(document)

    /// The error reading `data` object by object, in order, throws.
    static func errorInOrder(_ data: Data) -> GraftError? {
        do {
            var reader = try ClipboardReader(data: data)
            while try reader.next() != nil {}
            return nil
        } catch {
            return error as? GraftError
        }
    }

    static func errorDecoding(_ data: Data) -> GraftError? {
        do {
            _ = try ClipboardEncoding.decode(data)
            return nil
        } catch {
            return error as? GraftError
        }
    }

    /// The JSON document with `change` made to the text of the object whose id is `id`.
    static func json(changing id: String, _ change: (String) -> String) -> Data {
        var text = String(decoding: json, as: UTF8.self)
        let range = text.range(of: "{\"id\": \"\(id)\"")!
        let line = text[range.lowerBound...].prefix { $0 != "\n" }
        text.replaceSubrange(range.lowerBound..<line.endIndex, with: change(String(line)))
        return Data(text.utf8)
    }

    @Test(arguments: [ClipboardEncoding.json, .binaryPlist])
    func aLongDocumentDecodesAsItWasWritten(_ encoding: ClipboardEncoding) throws {
        let decoded = try ClipboardEncoding.decode(try encoding.encode(Self.document))
        #expect(decoded.header == Self.document.header)
        #expect(decoded.objects == Self.document.objects)
    }

    @Test func jsonOnOneLineDecodesTheSame() throws {
        // Without line ends there are no places to start runs at: read by one thread.
        let oneLine = Data(Self.json.filter { $0 != 0x0A })
        #expect(try ClipboardEncoding.decode(oneLine).objects == Self.document.objects)
    }

    /// Faults early, late and in the middle of the document: each told as reading in order tells it,
    /// with the same object, index and line.
    @Test(arguments: ["o400", "o15000", "o15001", "o29999"])
    func anErrorIsToldAsReadingInOrderTellsIt(_ id: String) throws {
        let changes: [(String) -> String] = [
            // No id: the object is named by its index.
            { $0.replacingOccurrences(of: "\"id\": \"\(id)\", ", with: "") },
            // A value of the wrong type.
            {
                $0.replacingOccurrences(of: "\"active\": true", with: "\"active\": 1")
                    .replacingOccurrences(of: "\"active\": false", with: "\"active\": 0")
            },
            // Cut short in the middle of a string.
            { String($0.prefix(20)) + "\n" },
        ]
        for change in changes {
            let broken = Self.json(changing: id, change)
            let expected = try #require(Self.errorInOrder(broken))
            #expect(Self.errorDecoding(broken) == expected)
        }
    }

    @Test func aRepeatedIdInALaterRunIsRefused() throws {
        let broken = Self.json(changing: "o29000") { $0.replacingOccurrences(of: "\"o29000\"", with: "\"o3\"") }
        let expected = try #require(Self.errorInOrder(broken))
        #expect(Self.errorDecoding(broken) == expected)
        #expect(expected.message.contains("twice"))
    }

    /// A line that starts an object after a comma where no object of the array starts (inside a to-many
    /// list, here): the run from there is dropped, and the fault is told as in order.
    @Test func aPlaceThatIsNoObjectIsDropped() throws {
        let broken = Self.json(changing: "o15000") {
            $0.replacingOccurrences(
                of: "\"manager\": \"",
                with: "\"manager\": [\"o1\",\n{\"id\": \"o99999\", \"entity\": \"Department\"}], \"x\": \"")
        }
        let expected = try #require(Self.errorInOrder(broken))
        #expect(Self.errorDecoding(broken) == expected)
    }

    /// Many references after few objects: the places found lie among the references, beyond the objects,
    /// and the first run reads every object itself.
    @Test func placesBeyondTheObjectsAreNotUsed() throws {
        var document = ClipboardSamples.company(objects: 200)
        document.references = (1...40_000).map {
            Clipboard.Reference(id: "r\($0)", entity: "Employee", identity: [.init("number", .integer(Int64($0)))])
        }
        let decoded = try ClipboardEncoding.decode(try ClipboardEncoding.json.encode(document))
        #expect(decoded.objects == document.objects)
        #expect(decoded.references == document.references)
    }
}
