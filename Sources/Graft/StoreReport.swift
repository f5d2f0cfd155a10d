import Foundation

/// Describes a store document for `graft inspect`: its format, UUID, metadata and objects per entity.
public enum StoreReport {
    /// The model a store was read with, as a `ModelFile` that says where it came from: the file given
    /// (with the version used), the store's own model cache, or a model inferred from the store.
    public static func modelFile(
        of reader: any StoreReader, at storeURL: URL, format: StoreFormat, given: ModelLoading.StoreModel?
    ) -> ModelFile {
        if let given, reader.modelSource == .given {
            return ModelFile(
                url: given.file.url, format: given.file.format,
                versions: [.init(name: given.versionName, model: reader.model)], currentVersionName: given.versionName)
        }
        let origin: ModelFile.Format
        switch reader.modelSource {
        case .inferred: origin = .inferred
        case .modelCache, .given: origin = format == .sqlite ? .storeModelCache : .storeDocument
        }
        return ModelFile(
            url: storeURL, format: origin, versions: [.init(name: "store", model: reader.model)],
            currentVersionName: "store")
    }

    /// What to say about the version of a given model file that was used, when the file has several.
    public static func versionNote(_ given: ModelLoading.StoreModel) -> String? {
        guard given.file.versions.count > 1 else { return nil }
        if given.chosenByHashes {
            return "Model version: \(given.versionName) (the version whose hashes the store records; the current "
                + "version is \(given.file.currentVersionName))"
        }
        return "Model version: \(given.versionName) (the current version)"
    }

    /// `{"format", "uuid", "metadata", "counts": {"Entity": n, …}, "model": {…}}`: each object is counted
    /// under its own entity only, not its parents'.
    public static func json(
        format: String, metadata: StoreMetadata, counts: [String: Int], model: ModelFile
    ) -> JSONValue {
        // The model's `source` and `format` say where it came from: the file given, or the store itself.
        let modelJSON = ModelReport.json(for: model)
        return .object([
            ("format", .string(format)),
            ("uuid", .string(metadata.identifier)),
            ("metadata", json(.dictionary(metadata.values))),
            ("counts", JSONValue.counts(counts)),
            ("model", modelJSON),
        ])
    }

    /// The same for people.
    ///
    /// - Parameter modelNote: a line to print before the model (which version of a given file was used).
    public static func text(
        path: String, format: String, metadata: StoreMetadata, counts: [String: Int], model: ModelFile,
        modelNote: String? = nil
    ) -> String {
        var out = "Store \(path) (\(format))\n"
        out += "UUID: \(metadata.identifier)\n"
        if let version = metadata.frameworkVersion { out += "Written by Core Data framework version \(version)\n" }
        if !metadata.versionIdentifiers.isEmpty {
            out += "Model version identifiers: \(metadata.versionIdentifiers.joined(separator: ", "))\n"
        }
        let standard: Set<String> = [
            "NSStoreType", "NSStoreUUID", "NSStoreModelVersionHashes", "NSStoreModelVersionHashesVersion",
            "NSStoreModelVersionHashesDigest", "NSStoreModelVersionChecksumKey", "NSStoreModelVersionIdentifiers",
            "NSPersistenceFrameworkVersion", "_NSAutoVacuumLevel",
        ]
        let others = metadata.values.keys.filter { !standard.contains($0) }
        if !others.isEmpty { out += "Other metadata keys: \(others.sorted().joined(separator: ", "))\n" }
        let total = counts.values.reduce(0, +)
        out += "Objects: \(total)\n"
        let width = counts.keys.map(\.count).max() ?? 0
        for name in counts.keys.sorted() {
            out += "  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(counts[name]!)\n"
        }
        out += "\n"
        if let modelNote { out += modelNote + "\n" }
        out += ModelReport.text(for: model)
        return out
    }

    /// A property list as JSON: data as base64 strings, dates as seconds since 2001-01-01.
    public static func json(_ value: PropertyList) -> JSONValue {
        switch value {
        case .string(let text): return .string(text)
        case .integer(let number): return .int(number)
        case .unsignedInteger(let number): return .string(String(number))
        case .real(let number): return .double(number)
        case .bool(let flag): return .bool(flag)
        case .date(let date): return .double(date.timeIntervalSinceReferenceDate)
        case .data(let data): return .string(data.base64EncodedString())
        case .array(let values): return .array(values.map(json))
        case .dictionary(let dictionary): return .object(dictionary.map { ($0.key, json($0.value)) })
        case .uid(let uid): return .int(Int64(truncatingIfNeeded: uid))
        }
    }
}
