import Foundation
import Graft

extension ClipboardEncoding: ArgumentValue {}

/// `--key Entity=12`: an object by entity and primary key.
struct EntityKey: ArgumentValue, Hashable {
    var entity: String
    var key: Int64

    init?(argument: String) {
        guard let (entity, value) = splitAssignment(argument), let key = Int64(value), key > 0 else { return nil }
        self.entity = entity
        self.key = key
    }

    static var expectedArgument: String { "Entity=key, such as Employee=12" }

    var argumentDescription: String { "\(entity)=\(key)" }
}

/// `--identity Entity=attribute[,attribute]`: the attributes that identify an entity's objects.
struct IdentityAttributes: ArgumentValue, Hashable {
    var entity: String
    var attributes: [String]

    init?(argument: String) {
        guard let (entity, list) = splitAssignment(argument) else { return nil }
        let attributes = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard !attributes.isEmpty, !attributes.contains(where: \.isEmpty) else { return nil }
        self.entity = entity
        self.attributes = attributes
    }

    static var expectedArgument: String { "Entity=attribute[,attribute], such as Employee=employeeID" }

    var argumentDescription: String { "\(entity)=\(attributes.joined(separator: ","))" }

    /// The identities as `Selection` and `PasteOptions` take them.
    static func dictionary(_ list: [IdentityAttributes]) -> [String: [String]] {
        Dictionary(list.map { ($0.entity, $0.attributes) }, uniquingKeysWith: { $1 })
    }
}

/// `--on-conflict merge` for every entity, or `--on-conflict Project=skip` for one.
struct ConflictRule: ArgumentValue, Hashable {
    var entity: String?
    var policy: ConflictPolicy

    init?(argument: String) {
        if let policy = ConflictPolicy(rawValue: argument) {
            self.entity = nil
            self.policy = policy
        } else if let (entity, word) = splitAssignment(argument), let policy = ConflictPolicy(rawValue: word) {
            self.entity = entity
            self.policy = policy
        } else {
            return nil
        }
    }

    static var expectedArgument: String {
        "one of " + ConflictPolicy.allCases.map(\.rawValue).joined(separator: ", ")
            + ", or Entity=policy for one entity"
    }

    var argumentDescription: String { (entity.map { "\($0)=" } ?? "") + policy.rawValue }
}

extension DanglingPolicy: ArgumentValue {}

/// `--max-size 64M`: a number of bytes, with an optional `K`, `M`, `G` or `T` for KiB, MiB, GiB or TiB.
struct ByteCount: ArgumentValue, Hashable {
    var bytes: Int

    init(bytes: Int) { self.bytes = bytes }

    init?(argument: String) {
        let units: [Character: Int] = ["K": 10, "M": 20, "G": 30, "T": 40]
        var digits = Substring(argument.trimmingCharacters(in: .whitespaces))
        var shift = 0
        if let last = digits.last?.uppercased().first, let unitShift = units[last] {
            shift = unitShift
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let count = Int(digits, radix: 10), count > 0 else {
            return nil
        }
        let (bytes, overflow) = count.multipliedReportingOverflow(by: 1 << shift)
        guard !overflow else { return nil }
        self.bytes = bytes
    }

    static var expectedArgument: String { "a size in bytes, or with K, M, G or T (powers of 1024), such as 512M" }

    var argumentDescription: String {
        for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] where bytes % (1 << shift) == 0 {
            return "\(bytes >> shift)\(unit)"
        }
        return String(bytes)
    }
}

/// `Name=value` split at the first `=`, both sides non-empty.
func splitAssignment(_ word: String) -> (String, String)? {
    guard let equals = word.firstIndex(of: "=") else { return nil }
    let name = word[..<equals].trimmingCharacters(in: .whitespaces)
    let value = word[word.index(after: equals)...].trimmingCharacters(in: .whitespaces)
    guard !name.isEmpty, !value.isEmpty else { return nil }
    return (name, value)
}
