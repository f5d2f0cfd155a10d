import Foundation
import GraftCore

/// A model as found on disk: one or more versions, one of them current.
///
/// Reads every form Xcode and Core Data leave behind: an `.xcdatamodeld` (every version, and which is
/// current), an `.xcdatamodel` folder or its `contents` file (or an Xcode 3 `elements` file),
/// a compiled `.momd` folder or `.mom` file.
/// Stores that carry their model (a SQLite store's model cache) are read by the store modules.
///
/// For example:
///
/// ```swift
/// let file = try ModelFile.load(URL(fileURLWithPath: "Company.xcdatamodeld"))
/// print(file.currentVersionName, file.current.entities.map(\.name))
/// ```
public struct ModelFile: Sendable {
    public enum Format: String, Sendable {
        case xcdatamodeld, xcdatamodel, momd, mom
        /// A SQLite store's `Z_MODELCACHE`.
        case storeModelCache = "store model cache"
        /// A model carried inside a store document (XML or binary store written by Graft).
        case storeDocument = "store document"
        /// A model inferred from a store's own layout (its tables, or an XML document's type information).
        case inferred = "inferred from the store"
    }

    /// One version of the model.
    public struct Version: Sendable {
        public let name: String
        public let model: Model
        public init(name: String, model: Model) {
            self.name = name
            self.model = model
        }
    }

    public let url: URL
    public let format: Format
    /// Every version, in version order (``isOrderedBefore(_:_:)``: the order Xcode's numbered version
    /// names mean, oldest first).
    public let versions: [Version]
    public let currentVersionName: String
    /// Version hashes recorded beside the model (a `.momd`'s `VersionInfo.plist`, a store's metadata),
    /// by version name, then entity name.
    public let recordedVersionHashes: [String: [String: Data]]
    /// Version checksums recorded beside the model, by version name.
    public let recordedVersionChecksums: [String: String]
    /// What was read as Core Data reads it rather than as written (an `ordered` flag on a to-one, a
    /// negative maximum count, a Boolean's `NO` left as a number's default, an archived predicate Graft
    /// cannot read), each naming the file, entity and property.
    public let warnings: [String]

    public init(
        url: URL, format: Format, versions: [Version], currentVersionName: String,
        recordedVersionHashes: [String: [String: Data]] = [:], recordedVersionChecksums: [String: String] = [:],
        warnings: [String] = []
    ) {
        self.url = url
        self.format = format
        self.versions = versions
        self.currentVersionName = currentVersionName
        self.recordedVersionHashes = recordedVersionHashes
        self.recordedVersionChecksums = recordedVersionChecksums
        self.warnings = warnings
    }

    /// The current version's model.
    public var current: Model {
        (versions.first { $0.name == currentVersionName } ?? versions[versions.count - 1]).model
    }

    /// The version with this name.
    public func version(named name: String) -> Model? {
        versions.first { $0.name == name }?.model
    }

    /// Loads a model in any of the forms listed above, recognised by name and content.
    ///
    /// - Throws: `GraftError.fileNotFound`, `GraftError.unsupportedFormat` for something that is not a model,
    ///   `GraftError.malformedInput` or `GraftError.invalidModel` naming the file and what is wrong.
    public static func load(_ url: URL) throws -> ModelFile {
        let kind = FileAccess.kind(of: url)
        guard kind.exists else {
            throw GraftError(.fileNotFound, "no such file or folder", context: [.file(url.relativePath)])
        }
        let fileExtension = url.pathExtension.lowercased()
        if kind.isDirectory {
            switch fileExtension {
            case "xcdatamodeld": return try loadBundle(url)
            case "xcdatamodel": return try loadSingle(url)
            case "momd": return try CompiledModelReader.loadBundle(url)
            default:
                if FileAccess.kind(of: url.appendingPathComponent("contents")).exists
                    || FileAccess.kind(of: url.appendingPathComponent("elements")).exists
                {
                    return try loadSingle(url)
                }
                throw GraftError(
                    .unsupportedFormat, "is a folder but not an .xcdatamodeld, .xcdatamodel or .momd",
                    context: [.file(url.relativePath)])
            }
        }
        if url.lastPathComponent == "contents" {
            var warnings: [String] = []
            let model = try XcdatamodelReader.read(contentsOf: url, warnings: &warnings)
            let name = url.deletingLastPathComponent().deletingPathExtension().lastPathComponent
            return ModelFile(
                url: url, format: .xcdatamodel, versions: [Version(name: name, model: model)], currentVersionName: name,
                warnings: warnings)
        }
        if url.lastPathComponent == "elements" && url.deletingLastPathComponent().pathExtension == "xcdatamodel" {
            var warnings: [String] = []
            let model = try XcodeElementsReader.read(contentsOf: url, warnings: &warnings)
            let name = url.deletingLastPathComponent().deletingPathExtension().lastPathComponent
            return ModelFile(
                url: url, format: .xcdatamodel, versions: [Version(name: name, model: model)], currentVersionName: name,
                warnings: warnings)
        }
        let data = try FileAccess.read(url)
        if data.starts(with: Array("bplist".utf8)) || fileExtension == "mom" {
            return try CompiledModelReader.loadFile(url, data: data)
        }
        if data.prefix(512).range(of: Data("<model".utf8)) != nil {
            var warnings: [String] = []
            let model = try XcdatamodelReader.read(data, path: url.relativePath, warnings: &warnings)
            let name = url.deletingPathExtension().lastPathComponent
            return ModelFile(
                url: url, format: .xcdatamodel, versions: [Version(name: name, model: model)], currentVersionName: name,
                warnings: warnings)
        }
        throw GraftError(
            .unsupportedFormat,
            "is not a model Graft reads (.xcdatamodeld, .xcdatamodel, .mom, .momd, or a store with its model)",
            context: [.file(url.relativePath)])
    }

    /// Whether the version named `first` comes before the one named `second`: names compared run by run,
    /// runs of digits as numbers (`zmessaging2.9` before `zmessaging2.10`, `Model 2` before `Model 10`),
    /// a name before the longer names it begins (`Company` before `Company 2`). Xcode names new versions
    /// by adding or raising such a number, and Core Data itself records no order, so this is the order
    /// migrations step through (see `Formats/migration.md`).
    public static func isOrderedBefore(_ first: some StringProtocol, _ second: some StringProtocol) -> Bool {
        var left = Substring(first).unicodeScalars
        var right = Substring(second).unicodeScalars
        func run(_ scalars: inout Substring.UnicodeScalarView) -> (digits: Bool, text: Substring.UnicodeScalarView) {
            let isDigit = scalars.first.map { ("0"..."9").contains($0) } ?? false
            let end = scalars.firstIndex { ("0"..."9").contains($0) != isDigit } ?? scalars.endIndex
            defer { scalars = scalars[end...] }
            return (isDigit, scalars[..<end])
        }
        while !left.isEmpty, !right.isEmpty {
            let a = run(&left)
            let b = run(&right)
            if a.digits && b.digits {
                let x = a.text.drop { $0 == "0" }
                let y = b.text.drop { $0 == "0" }
                if x.count != y.count { return x.count < y.count }
                if !x.elementsEqual(y) { return String(x) < String(y) }
            } else if !a.text.elementsEqual(b.text) {
                return String(a.text) < String(b.text)
            }
        }
        return left.isEmpty && !right.isEmpty
    }

    /// An `.xcdatamodel` folder: its `contents`, or, for a model last saved by Xcode 3, its `elements`.
    private static func loadSingle(_ url: URL) throws -> ModelFile {
        let name = url.deletingPathExtension().lastPathComponent
        let contents = url.appendingPathComponent("contents")
        let model: Model
        var warnings: [String] = []
        if FileAccess.kind(of: contents).exists {
            model = try XcdatamodelReader.read(contentsOf: contents, warnings: &warnings)
        } else if FileAccess.kind(of: url.appendingPathComponent("elements")).exists {
            // Xcode 3 kept the model in a keyed archive named `elements` (and its diagram in `layout`).
            model = try XcodeElementsReader.read(
                contentsOf: url.appendingPathComponent("elements"), warnings: &warnings)
        } else {
            throw GraftError(
                .malformedInput, "the .xcdatamodel folder has no contents file", context: [.file(url.relativePath)])
        }
        return ModelFile(
            url: url, format: .xcdatamodel, versions: [Version(name: name, model: model)], currentVersionName: name,
            warnings: warnings)
    }

    /// An `.xcdatamodeld` folder: every `.xcdatamodel` inside, and `.xccurrentversion`.
    private static func loadBundle(_ url: URL) throws -> ModelFile {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path)
                .filter { $0.hasSuffix(".xcdatamodel") }
                .sorted { isOrderedBefore($0.dropLast(".xcdatamodel".count), $1.dropLast(".xcdatamodel".count)) }
        } catch {
            throw GraftError(
                .io, "cannot list the folder: \(error.localizedDescription)", context: [.file(url.relativePath)])
        }
        guard !names.isEmpty else {
            throw GraftError(
                .malformedInput, "the .xcdatamodeld holds no .xcdatamodel version", context: [.file(url.relativePath)])
        }
        var warnings: [String] = []
        let versions = try names.map { name in
            let single = try loadSingle(url.appendingPathComponent(name))
            warnings += single.warnings
            return Version(name: String(name.dropLast(".xcdatamodel".count)), model: single.current)
        }
        var current = versions.count == 1 ? versions[0].name : versions[versions.count - 1].name
        let marker = url.appendingPathComponent(".xccurrentversion")
        if FileAccess.kind(of: marker).exists {
            let plist: PropertyList
            do {
                plist = try PropertyList.decode(FileAccess.read(marker))
            } catch let error as GraftError {
                throw error.inFile(marker.relativePath)
            }
            guard let named = plist["_XCCurrentVersionName"]?.stringValue else {
                throw GraftError(.malformedInput, "has no _XCCurrentVersionName", context: [.file(marker.relativePath)])
            }
            let stem = named.hasSuffix(".xcdatamodel") ? String(named.dropLast(".xcdatamodel".count)) : named
            guard versions.contains(where: { $0.name == stem }) else {
                throw GraftError(
                    .malformedInput, "names '\(named)' as the current version, but there is no such version",
                    context: [.file(marker.relativePath)])
            }
            current = stem
        }
        return ModelFile(
            url: url, format: .xcdatamodeld, versions: versions, currentVersionName: current, warnings: warnings)
    }
}
