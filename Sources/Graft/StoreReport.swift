import Foundation

/// Describes a store document for `graft inspect`: its format, UUID, metadata and objects per entity.
public enum StoreReport {
    /// `{"format", "uuid", "metadata", "counts": {"Entity": n, …}, "model": {…}}`: each object is counted
    /// under its own entity only, not its parents'.
    public static func json(
        format: String, metadata: StoreMetadata, counts: [String: Int], model: ModelFile
    ) -> JSONValue {
        var modelJSON = ModelReport.json(for: model)
        if case .object(var members) = modelJSON {
            members.removeAll { $0.0 == "source" || $0.0 == "format" }
            modelJSON = .object(members)
        }
        return .object([
            ("format", .string(format)),
            ("uuid", .string(metadata.identifier)),
            ("metadata", json(.dictionary(metadata.values))),
            ("counts", .object(counts.keys.sorted().map { ($0, .int(Int64(counts[$0]!))) })),
            ("model", modelJSON),
        ])
    }

    /// The same for people.
    public static func text(
        path: String, format: String, metadata: StoreMetadata, counts: [String: Int], model: ModelFile
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
        out += "\n" + ModelReport.text(for: model)
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
