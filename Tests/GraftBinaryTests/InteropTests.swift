import Foundation
import GraftBinary
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

/// The two keyed archives inside a binary store are ordinary property lists: Python's `plistlib` and
/// the toolchain's `plutil` read them.
@Suite struct InteropTests {
    /// The edge document's map and metadata archives, extracted into files.
    static func extractArchives(into scratch: Scratch) throws -> (map: URL, metadata: URL) {
        let url = scratch.url("Company.binary")
        try writeStore(Company.edgeDocument, to: url, metadata: Company.metadata(extra: ["com.example.note": "kept"]))
        let bytes = try Data(contentsOf: url)
        let header = try BinaryStoreHeader(decoding: bytes, fileSize: bytes.count)
        let map = scratch.url("map.plist"), metadata = scratch.url("metadata.plist")
        try bytes.subdata(in: header.mapRange).write(to: map)
        try bytes.subdata(in: header.metadataRange).write(to: metadata)
        return (map, metadata)
    }

    /// Unarchives both archives with plistlib and prints what it finds.
    static let script = """
        import json, plistlib, sys

        def load(path):
            with open(path, 'rb') as f:
                return plistlib.load(f)

        def unarchive(archive, root):
            objects = archive['$objects']
            def resolve(value, depth=0):
                if isinstance(value, plistlib.UID):
                    value = objects[value.data]
                if value == '$null':
                    return None
                if isinstance(value, dict) and '$class' in value:
                    cls = objects[value['$class'].data]['$classname']
                    if 'NS.keys' in value:
                        return {resolve(k): resolve(v, depth + 1) for k, v in zip(value['NS.keys'], value['NS.objects'])}
                    if 'NS.objects' in value:
                        return [resolve(v, depth + 1) for v in value['NS.objects']]
                    if cls == 'NSDate':
                        return value['NS.time']
                    fields = {k: resolve(v, depth + 1) for k, v in value.items() if k != '$class'}
                    fields['$classname'] = cls
                    return fields
                if isinstance(value, bytes):
                    return value.hex()
                return value
            return resolve(archive['$top'][root])

        mapArchive, metadataArchive = load(sys.argv[1]), load(sys.argv[2])
        nodes = unarchive(mapArchive, 'mapData')
        metadata = unarchive(metadataArchive, 'metadata')
        summary = {
            'archiver': mapArchive['$archiver'],
            'keys': sorted(nodes.keys()),
            'entities': {str(k): n['NSEntityName'] for k, n in nodes.items()},
            'keyMatches': all(k == n['NSPrimaryKey64'] for k, n in nodes.items()),
            'projectsOfResearch': nodes[1]['NSRelatedNodes']['projects'],
            'titleOfApollo': nodes[20]['NSAttributeValues'][1],
            'storeType': metadata['NSStoreType'],
            'note': metadata['com.example.note'],
        }
        sys.stdout.write(json.dumps(summary, sort_keys=True))
        """

    @Test(.enabled(if: Tool.find("python3") != nil, "python3 is not installed; skipping the plistlib check"))
    func pythonPlistlibReadsBothArchives() throws {
        let scratch = Scratch()
        let (map, metadata) = try Self.extractArchives(into: scratch)
        let result = try Tool.run(try #require(Tool.find("python3")), ["-c", Self.script, map.path, metadata.path])
        #expect(result.status == 0, "\(result.error)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        #expect(summary["archiver"] as? String == "NSKeyedArchiver")
        #expect(summary["keys"] as? [Int] == Company.edgeDocument.map { Int($0.ref.key) }.sorted())
        #expect((summary["entities"] as? [String: String])?["11"] == "Flunky")
        #expect(summary["keyMatches"] as? Bool == true)
        #expect(summary["projectsOfResearch"] as? [Int] == [21, 20, 22])
        #expect(summary["titleOfApollo"] as? String == "Apollo")
        #expect(summary["storeType"] as? String == "Binary")
        #expect(summary["note"] as? String == "kept")
    }

    @Test(.enabled(if: Tool.find("plutil") != nil, "plutil is not installed; skipping the plutil check"))
    func plutilPrintsBothArchives() throws {
        let scratch = Scratch()
        let (map, metadata) = try Self.extractArchives(into: scratch)
        let plutil = try #require(Tool.find("plutil"))
        let mapResult = try Tool.run(plutil, ["-p", map.path])
        #expect(mapResult.status == 0, "\(mapResult.error)")
        #expect(mapResult.output.contains("mapData"))
        #expect(mapResult.output.contains("NSDictionaryMapNode"))
        let metadataResult = try Tool.run(plutil, ["-p", metadata.path])
        #expect(metadataResult.status == 0, "\(metadataResult.error)")
        #expect(metadataResult.output.contains("NSStoreModelVersionHashes"))
        #expect(metadataResult.output.contains("kept"))
    }

    @Test func graftCoreReadsTheMapArchive() throws {
        // The project's general keyed-archive reader agrees with the binary store's own view.
        let scratch = Scratch()
        let (map, _) = try Self.extractArchives(into: scratch)
        let archive = try KeyedArchive(data: Data(contentsOf: map))
        let root = try #require(try archive.topObject(forKey: "mapData"))
        let nodes = try root.decodeDictionary()
        #expect(nodes.count == Company.edgeDocument.count)
        for (key, node) in nodes {
            #expect(try node.integer(forKey: "NSPrimaryKey64") == key.decodeInteger())
            #expect(try node["NSEntityName"]?.decodeString() != nil)
        }
    }
}
