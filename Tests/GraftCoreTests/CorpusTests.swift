import Foundation
import GraftCore
import GraftTestSupport
import Testing

/// Every property list and keyed archive Apple wrote in the shared corpus.
@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
struct CorpusTests {
    @Test func corpusHasFiles() {
        #expect(Corpus.momFiles.count >= 7)
        #expect(Corpus.propertyListFiles.filter { $0.hasSuffix("VersionInfo.plist") }.count >= 3)
        #expect(Corpus.propertyListFiles.filter { $0.hasSuffix(".xccurrentversion") }.count >= 10)
    }

    @Test(arguments: Corpus.propertyListFiles)
    func decodesAndRoundTrips(path: String) throws {
        let data = try FileAccess.read(Corpus.url(path))
        let plist = try PropertyList.decode(data)
        #expect(try BinaryPropertyList.decode(BinaryPropertyList.encode(plist)) == plist)
        #expect(try XMLPropertyList.decode(XMLPropertyList.encode(plist)) == plist)
        if path.hasSuffix("VersionInfo.plist") {
            #expect(plist["NSManagedObjectModel_CurrentVersionName"]?.stringValue != nil)
        } else if path.hasSuffix(".xccurrentversion") {
            #expect(plist["_XCCurrentVersionName"]?.stringValue?.hasSuffix(".xcdatamodel") == true)
        }
    }

    @Test(arguments: Corpus.momFiles)
    func readsCompiledModels(path: String) throws {
        let archive = try KeyedArchive(data: try FileAccess.read(Corpus.url(path)))
        try ModelWalk.check(archive, path: path)
    }

    /// Python's plistlib was reported to refuse this file while `plutil -p` reads it. Every plistlib
    /// from 3.8 to 3.13 reads it (3.6 and 3.7 refuse every `.mom`: they predate UID support); what
    /// sets the file apart is 1-byte object references, one-byte integers above 127 (`_P` = 241 and
    /// 243, which must read as unsigned) and separate UID objects for every reference.
    @Test func readsSampleModel3() throws {
        let path = "coredataplus/Tests/Resources/SampleModel3/Fixtures/SampleModel3.momd/SampleModel3.mom"
        let data = try FileAccess.read(Corpus.url(path))
        let plist = try BinaryPropertyList.decode(data)
        #expect(plist["$objects"]?.arrayValue?.count == 21)
        let archive = try KeyedArchive(plist)
        let model = try #require(try archive.topObject(forKey: "root"))
        let entities = try #require(try model.dictionary(forKey: "NSEntities"))
        #expect(entities.map(\.key) == ["User"])
        let properties = try #require(try entities[0].value.dictionary(forKey: "NSProperties"))
        #expect(properties.map(\.key) == ["name", "petName"])
        #expect(try properties.map { try $0.value.integer(forKey: "_P") } == [241, 243])
        #expect(try model.double(forKey: "CDMCompilerToolVersion") == 22758)
    }

    @Test(.enabled(if: Tool.python3 != nil, Tool.python3Missing), arguments: Corpus.propertyListFiles)
    func agreesWithPlistlib(path: String) throws {
        let url = Corpus.url(path)
        let data = try FileAccess.read(url)
        guard PropertyList.format(of: data) != .openStep else { return }  // plistlib does not read OpenStep
        let ours = try PropertyList.decode(data)
        let theirs = try PythonPlist.read(url)
        #expect(PythonPlist.difference(ours, theirs) == nil)
    }

    @Test(.enabled(if: Tool.python3 != nil, Tool.python3Missing))
    func readsEveryModelCache() throws {
        let caches = try ModelCaches.extract(from: Corpus.stores.map(Corpus.url))
        for cache in caches {
            let plist = try BinaryPropertyList.decode(cache.data)
            #expect(PythonPlist.difference(plist, cache.python) == nil, "\(cache.name)")
            try ModelWalk.check(try KeyedArchive(plist), path: cache.name)
        }
        #expect(caches.count >= 40)
    }
}

/// Walks a compiled model: every entity, every property, and every field of every object.
enum ModelWalk {
    static func check(_ archive: KeyedArchive, path: String) throws {
        let model = try #require(try archive.topObject(forKey: "root"), "\(path)")
        #expect(model.className == "NSManagedObjectModel", "\(path)")
        let entities = try #require(try model.dictionary(forKey: "NSEntities"), "\(path)")
        #expect(!entities.isEmpty, "\(path)")
        for (name, entity) in entities {
            #expect(entity.className == "NSEntityDescription", "\(path) \(name)")
            #expect(try entity.string(forKey: "NSEntityName") == name, "\(path) \(name)")
            for (propertyName, property) in try entity.dictionary(forKey: "NSProperties") ?? [] {
                #expect(property.className != nil, "\(path) \(name).\(propertyName)")
                if property.className == "NSAttributeDescription" {
                    #expect(try property.integer(forKey: "NSAttributeType") != nil, "\(path) \(name).\(propertyName)")
                }
            }
            _ = try entity["NSUserInfo"]?.decodePropertyList()
        }
        // Every field of every object resolves.
        for uid in 1..<UInt64(archive.objects.count) {
            let object = try #require(try archive.object(withUID: uid))
            for field in object.fieldNames { _ = try object[field] }
        }
    }
}

/// Model caches (`Z_MODELCACHE.Z_CONTENT`, raw deflate) from copies of corpus stores, with
/// plistlib's reading of each, all in one Python run.
enum ModelCaches {
    static let script =
        PythonPlist.script.components(separatedBy: "with open(sys.argv[1]")[0] + """
            import os, shutil, sqlite3, zlib
            folder = sys.argv[1]
            for number, source in enumerate(sys.argv[2:]):
                copy = os.path.join(folder, 'store%d.sqlite' % number)
                shutil.copyfile(source, copy)
                for suffix in ('-wal', '-shm'):
                    if os.path.exists(source + suffix):
                        shutil.copyfile(source + suffix, copy + suffix)
                connection = sqlite3.connect(copy)
                try:
                    rows = connection.execute('select Z_CONTENT from Z_MODELCACHE').fetchall()
                except sqlite3.OperationalError:
                    rows = []
                connection.close()
                for index, (content,) in enumerate(rows):
                    if content is None:
                        continue
                    data = zlib.decompress(content, -15)
                    name = 'cache-%03d-%d' % (number, index)
                    with open(os.path.join(folder, name + '.bplist'), 'wb') as f:
                        f.write(data)
                    with open(os.path.join(folder, name + '.json'), 'w') as f:
                        f.write(json.dumps(convert(plistlib.loads(data))))
            """

    struct Cache {
        var name: String
        var data: Data
        var python: Any
    }

    static func extract(from stores: [URL]) throws -> [Cache] {
        let python = try #require(Tool.python3)
        let folder = try Scratch.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Tool.run(python, ["-c", script, folder.path] + stores.map(\.path))
        guard result.status == 0 else { throw GraftError(.io, "extracting model caches: \(result.errorOutput)") }
        return try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".bplist") }.sorted()
            .map { file in
                let base = String(file.dropLast(".bplist".count))
                let number = Int(base.split(separator: "-")[1])!
                let json = try Data(contentsOf: folder.appendingPathComponent(base + ".json"))
                return Cache(
                    name: "\(stores[number].lastPathComponent) (\(base))",
                    data: try Data(contentsOf: folder.appendingPathComponent(file)),
                    python: try JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed]))
            }
    }
}
