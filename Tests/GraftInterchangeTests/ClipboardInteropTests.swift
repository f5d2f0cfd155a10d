import Foundation
import GraftCore
import GraftInterchange
import GraftTestSupport
import Testing

/// Other tools read what Graft writes: Python's `plistlib`, `json` and `xml.etree` read all four encodings
/// and find the same document in each (typed by its model, value for value); `jsonschema` (or a small
/// structural check when it is not installed) accepts the JSON against `Formats/clipboard.schema.json`;
/// `plutil -p` reads both property lists; `xmllint` validates the XML against `Formats/clipboard.xsd`.
@Suite struct ClipboardInteropTests {
    static let python = ClipboardTools.find("python3")
    static let plutil = ClipboardTools.find("plutil")
    static let xmllint = ClipboardTools.find("xmllint")

    @Test(.enabled(if: python != nil, "python3 is not installed"))
    func pythonReadsTheSameDocumentInEveryEncoding() throws {
        for clipboard in [ClipboardSamples.everyType, ClipboardSamples.small, ClipboardSamples.empty] {
            let folder = try ClipboardTools.write(clipboard)
            defer { try? FileManager.default.removeItem(at: folder) }
            let script = folder.appendingPathComponent("check.py")
            try ClipboardTools.pythonCheck.write(to: script, atomically: true, encoding: .utf8)
            let result = try ClipboardTools.run(
                Self.python!, [script.path, folder.path, Project.url("Formats/clipboard.schema.json").path])
            #expect(result.status == 0, "python3: \(result.output)")
            #expect(result.output.contains("same document in all four encodings"), "\(result.output)")
            if !result.output.contains("jsonschema: valid") {
                print("note: \(result.output.split(separator: "\n").filter { $0.contains("jsonschema") }.joined())")
            }
        }
    }

    /// Documents Python writes from ours — keys sorted (an object's attributes before its entity, the
    /// version last), members reversed (objects before the model), non-ASCII escaped as `\u` pairs, its
    /// own binary layout — read back as the same document.
    @Test(.enabled(if: python != nil, "python3 is not installed"))
    func documentsPythonRewritesReadBack() throws {
        let clipboard = ClipboardSamples.everyType
        let folder = try ClipboardTools.write(clipboard)
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = """
            import json, plistlib, sys
            folder = sys.argv[1]
            tree = json.load(open(f"{folder}/document.json"))
            json.dump(tree, open(f"{folder}/sorted.json", "w"), sort_keys=True, ensure_ascii=True)
            def reverse(value):
                if isinstance(value, dict):
                    return {key: reverse(value[key]) for key in reversed(list(value))}
                if isinstance(value, list):
                    return [reverse(element) for element in value]
                return value
            json.dump(reverse(tree), open(f"{folder}/reversed.json", "w"), indent="\\t", ensure_ascii=False)
            plist = plistlib.load(open(f"{folder}/document.plist", "rb"))
            plistlib.dump(plist, open(f"{folder}/sorted.plist", "wb"), sort_keys=True)
            plistlib.dump(plistlib.load(open(f"{folder}/document.bplist", "rb")), open(f"{folder}/sorted.bplist", "wb"),
                          fmt=plistlib.FMT_BINARY, sort_keys=True)
            plistlib.dump(reverse(plist), open(f"{folder}/reversed.plist", "wb"), sort_keys=False)
            print("written")
            """
        let result = try ClipboardTools.run(Self.python!, ["-c", script, folder.path])
        #expect(result.status == 0 && result.output.contains("written"), "python3: \(result.output)")
        for name in ["sorted.json", "reversed.json", "sorted.plist", "sorted.bplist", "reversed.plist"] {
            let data = try Data(contentsOf: folder.appendingPathComponent(name))
            do {
                let back = try ClipboardEncoding.decode(data)
                // Members of a dictionary have no order: compare each object's values and links by name (the
                // targets of a relationship keep theirs).
                let got = Self.byName(back)
                // Python's plistlib writes carriage returns in XML property lists as line feeds.
                let want = Self.byName(name.hasSuffix(".plist") ? Self.withoutCarriageReturns(clipboard) : clipboard)
                #expect(got.entities == want.entities && got.roots == want.roots, "\(name): the model or roots differ")
                for (gotObject, wantObject) in zip(got.objects, want.objects) where gotObject != wantObject {
                    Issue.record("\(name): \(wantObject.id) reads back as \(gotObject)")
                }
                #expect(got.references == want.references, "\(name): the references differ")
            } catch {
                Issue.record("\(name): \(error)")
            }
        }
    }

    /// The document with each carriage return in a string value turned into a line feed, as XML's line-end
    /// normalisation does to text that does not escape them.
    static func withoutCarriageReturns(_ clipboard: Clipboard) -> Clipboard {
        var copy = clipboard
        for index in copy.objects.indices {
            for position in copy.objects[index].attributes.indices {
                if case .string(let text) = copy.objects[index].attributes[position].value {
                    let fixed = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(
                        of: "\r", with: "\n")
                    copy.objects[index].attributes[position].value = .string(fixed)
                }
            }
        }
        return copy
    }

    /// The document with each object's attributes and relationships, and each reference's identity, sorted
    /// by name.
    static func byName(_ clipboard: Clipboard) -> Clipboard {
        var sorted = clipboard
        for index in sorted.objects.indices {
            sorted.objects[index].attributes.sort { $0.name < $1.name }
            sorted.objects[index].relationships.sort { $0.name < $1.name }
        }
        for index in sorted.references.indices { sorted.references[index].identity.sort { $0.name < $1.name } }
        return sorted
    }

    @Test(.enabled(if: python != nil, "python3 is not installed"))
    func theJSONSchemaRefusesWhatTheFormatDoesNot() throws {
        let folder = try ClipboardTools.write(ClipboardSamples.small)
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = try String(contentsOf: folder.appendingPathComponent("document.json"), encoding: .utf8)
        let broken = folder.appendingPathComponent("broken.json")
        try json.replacingOccurrences(of: "\"version\": 1", with: "\"version\": 2").write(
            to: broken, atomically: true, encoding: .utf8)
        let script = """
            import json, sys
            try:
                import jsonschema
            except ImportError:
                print("skipped: jsonschema is not installed"); sys.exit(0)
            schema = json.load(open(sys.argv[2]))
            try:
                jsonschema.validate(json.load(open(sys.argv[1])), schema)
                print("accepted")
            except jsonschema.ValidationError as error:
                print("refused:", error.message)
            """
        let result = try ClipboardTools.run(
            Self.python!, ["-c", script, broken.path, Project.url("Formats/clipboard.schema.json").path])
        #expect(result.output.contains("refused") || result.output.contains("skipped"), "\(result.output)")
    }

    @Test(.enabled(if: plutil != nil, "plutil is not installed (it comes with the Swift toolchain)"))
    func plutilReadsBothPropertyLists() throws {
        let folder = try ClipboardTools.write(ClipboardSamples.everyType)
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["document.plist", "document.bplist"] {
            let result = try ClipboardTools.run(Self.plutil!, ["-p", folder.appendingPathComponent(name).path])
            #expect(result.status == 0, "plutil -p \(name): \(result.output)")
            #expect(result.output.contains("graft-clipboard"), "plutil -p \(name): \(result.output.prefix(500))")
            #expect(result.output.contains("9223372036854775807"), "plutil -p \(name) lost Int64.max")
        }
    }

    @Test(.enabled(if: xmllint != nil, "xmllint is not installed"))
    func xmllintValidatesTheXMLAgainstTheSchema() throws {
        let schema = Project.url("Formats/clipboard.xsd").path
        for clipboard in [
            ClipboardSamples.everyType, ClipboardSamples.small, ClipboardSamples.empty,
            ClipboardSamples.company(objects: 300),
        ] {
            let folder = try ClipboardTools.write(clipboard, encodings: [.xml])
            defer { try? FileManager.default.removeItem(at: folder) }
            let result = try ClipboardTools.run(
                Self.xmllint!, ["--noout", "--schema", schema, folder.appendingPathComponent("document.xml").path])
            #expect(result.status == 0, "xmllint: \(result.output)")
        }
    }

    @Test(.enabled(if: xmllint != nil, "xmllint is not installed"))
    func theXMLSchemaRefusesBrokenDocuments() throws {
        let schema = Project.url("Formats/clipboard.xsd").path
        let text = String(decoding: try ClipboardEncoding.xml.encode(ClipboardSamples.small), as: UTF8.self)
        let breakages = [
            ("a dangling target", "<target ref=\"o2\"/>", "<target ref=\"o9\"/>"),
            ("a root that is a reference", "<root ref=\"o1\"/>", "<root ref=\"r1\"/>"),
            ("an unknown entity", "entity=\"Department\"", "entity=\"Nowhere\""),
            ("a repeated id", "id=\"o2\"", "id=\"o1\""),
            ("a newer version", "version=\"1\">", "version=\"2\">"),
            ("an unknown type", "type=\"decimal\"", "type=\"money\""),
        ]
        for (what, find, replacement) in breakages {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-xsd-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("broken.xml")
            #expect(text.contains(find), "\(what): the sample has no \(find)")
            try text.replacingOccurrences(of: find, with: replacement).write(
                to: file, atomically: true, encoding: .utf8)
            let result = try ClipboardTools.run(Self.xmllint!, ["--noout", "--schema", schema, file.path])
            #expect(result.status != 0, "xmllint accepted \(what)")
        }
    }
}

/// Finding and running the tools the interop tests use.
enum ClipboardTools {
    /// An executable on `PATH`, or beside the Swift toolchain (`plutil`).
    static func find(_ name: String) -> URL? {
        var folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        folders += ["/usr/bin", "/usr/local/bin", "/opt/swift/usr/bin"]
        for folder in folders {
            let url = URL(fileURLWithPath: folder).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    /// Runs a tool and returns its exit status and its standard output and error together.
    static func run(_ tool: URL, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// Writes the document in the given encodings into a new temporary folder, as `document.plist`,
    /// `document.bplist`, `document.json` and `document.xml`.
    static func write(_ clipboard: Clipboard, encodings: [ClipboardEncoding] = ClipboardEncoding.allCases) throws -> URL
    {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "graft-clipboard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for encoding in encodings {
            let name = encoding == .binaryPlist ? "document.bplist" : "document.\(encoding.fileExtension)"
            try encoding.encode(clipboard).write(to: folder.appendingPathComponent(name))
        }
        return folder
    }

    /// Reads the four files with Python's own readers, turns each into the same plain form (values typed
    /// by the document's model), and checks that the four agree.
    static let pythonCheck = #"""
        import base64, decimal, json, math, plistlib, sys
        import xml.etree.ElementTree as ET

        folder, schema_path = sys.argv[1], sys.argv[2]

        def number(value):
            value = float(value)
            return "nan" if math.isnan(value) else repr(value)

        def canon(kind, value):
            if kind in ("integer16", "integer32", "integer64"):
                assert type(value) is int, f"{kind}: {value!r} is not an int"
                return value
            if kind in ("double", "float", "date"):
                return number(value)
            if kind == "decimal":
                parsed = decimal.Decimal(str(value))
                return "NaN" if parsed.is_nan() else str(parsed.normalize())
            if kind == "boolean":
                assert type(value) is bool, f"{kind}: {value!r} is not a bool"
                return value
            if kind in ("binary", "transformable"):
                assert type(value) is bytes, f"{kind}: {value!r} is not bytes"
                return value.hex()
            if kind == "string":
                return value.decode("utf-8") if type(value) is bytes else value
            if kind == "uuid":
                return value.upper()
            return value

        def from_tree(tree, binary):
            """A decoded JSON or property-list tree in the plain form; `binary` turns base64 into bytes."""
            types = {}
            entities = []
            for entity in tree["model"]["entities"]:
                types[entity["name"]] = {a["name"]: a["type"] for a in entity.get("attributes", [])}
                entities.append([entity["name"], binary(entity["versionHash"]).hex(),
                                 [[a["name"], a["type"]] for a in entity.get("attributes", [])],
                                 [[r["name"], r["toMany"], r.get("ordered", False)] for r in entity.get("relationships", [])]])
            def values(entity, named):
                result = []
                for name, value in named.items():
                    kind = types[entity][name]
                    if kind in ("binary", "transformable"):
                        value = binary(value)
                    result.append([name, canon(kind, value)])
                return result
            objects = []
            for item in tree["objects"]:
                links = [[name, [targets] if isinstance(targets, str) else list(targets)]
                         for name, targets in item.get("relationships", {}).items()]
                objects.append([item["id"], item["entity"], values(item["entity"], item.get("attributes", {})), links])
            references = [[item["id"], item["entity"], values(item["entity"], item.get("identity", {})), item.get("uri")]
                          for item in tree["references"]]
            contents = tree["model"].get("contents")
            return {"format": tree["format"], "version": tree["version"], "entities": entities,
                    "versionIdentifiers": tree["model"].get("versionIdentifiers", []),
                    "contents": binary(contents).hex() if contents is not None else None,
                    "source": tree.get("source", {}).get("store"), "roots": tree["roots"],
                    "objects": objects, "references": references}

        def from_xml(root):
            entities, types = [], {}
            model = root.find("model")
            for entity in model.findall("entity"):
                attributes = [[a.get("name"), a.get("type")] for a in entity.findall("attribute")]
                types[entity.get("name")] = dict(attributes)
                entities.append([entity.get("name"), base64.b64decode(entity.get("versionHash")).hex(), attributes,
                                 [[r.get("name"), r.get("toMany") == "true", r.get("ordered") == "true"]
                                  for r in entity.findall("relationship")]])
            def text(element):
                content = element.text or ""
                return base64.b64decode(content).decode("utf-8") if element.get("encoding") == "base64" else content
            def values(entity, elements):
                result = []
                for element in elements:
                    kind, raw = types[entity][element.get("name")], text(element)
                    if kind in ("integer16", "integer32", "integer64"):
                        value = int(raw)
                    elif kind == "boolean":
                        value = raw == "true"
                    elif kind in ("binary", "transformable"):
                        value = base64.b64decode(raw)
                    else:
                        value = raw
                    result.append([element.get("name"), canon(kind, value)])
                return result
            objects = [[o.get("id"), o.get("entity"), values(o.get("entity"), o.findall("attribute")),
                        [[r.get("name"), [t.get("ref") for t in r.findall("target")]] for r in o.findall("relationship")]]
                       for o in root.find("objects").findall("object")]
            references = [[r.get("id"), r.get("entity"), values(r.get("entity"), r.findall("identity")), r.get("uri")]
                          for r in root.find("references").findall("reference")]
            source = root.find("source")
            contents = model.find("contents")
            return {"format": root.get("format"), "version": int(root.get("version")), "entities": entities,
                    "versionIdentifiers": [text(v) for v in model.findall("versionIdentifier")],
                    "contents": base64.b64decode(contents.text or "").hex() if contents is not None else None,
                    "source": source.get("store") if source is not None else None,
                    "roots": [r.get("ref") for r in root.find("roots").findall("root")],
                    "objects": objects, "references": references}

        def fix_links(document):
            # A to-one with one target is a string in JSON and property lists, one <target> in XML.
            return json.dumps(document, sort_keys=True)

        with open(f"{folder}/document.json", "rb") as file:
            json_tree = json.load(file)
        plain = {
            "json": from_tree(json_tree, base64.b64decode),
            "plist": from_tree(plistlib.load(open(f"{folder}/document.plist", "rb")), lambda data: data),
            "binary-plist": from_tree(plistlib.load(open(f"{folder}/document.bplist", "rb")), lambda data: data),
            "xml": from_xml(ET.parse(f"{folder}/document.xml").getroot()),
        }
        texts = {name: fix_links(document) for name, document in plain.items()}
        for name, text in texts.items():
            if text != texts["json"]:
                print(f"{name} differs from json:\n{text[:3000]}\n{texts['json'][:3000]}")
                sys.exit(1)
        print("same document in all four encodings")

        schema = json.load(open(schema_path))
        try:
            import jsonschema
            jsonschema.validate(json_tree, schema)
            print("jsonschema: valid")
        except ImportError:
            # A structural check of what the schema requires, without the library.
            for key in schema["required"]:
                assert key in json_tree, f"missing {key}"
            for key in json_tree:
                assert key in schema["properties"], f"unknown member {key}"
            for item in json_tree["objects"]:
                assert set(item) <= {"id", "entity", "attributes", "relationships"}, item
            print("jsonschema: not installed; structure checked by hand")
        """#
}
