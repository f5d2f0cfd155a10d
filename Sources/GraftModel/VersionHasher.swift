internal import CCrypto
import Foundation

/// Computes version hashes exactly as Core Data does.
///
/// All integers are little-endian, strings UTF-8, and every hash SHA-256 unless said otherwise:
///
/// - property: name ‖ uint16 flags (optional 1, transient 2, read-only 4) ‖ version hash modifier;
/// - attribute: property hash ‖ int32 type code ‖ 0x01 if external storage ‖ 0x01 if preserved on deletion;
/// - derived attribute: its derivation expression's predicate-format text, and nothing else;
/// - relationship: property hash ‖ destination name ‖ inverse name ‖ int32 max count ‖ int32 min count
///   ‖ uint16 1 if ordered (the flag and a negative maximum count kept even where they do not apply);
/// - entity: name ‖ byte abstract ‖ superentity hash ‖ stored property hashes sorted by name
///   ‖ version hash modifier ‖ uniqueness constraints (names joined by ".", sorted).
///
/// `Formats/version-hashes.md` gives the evidence for each rule.
enum VersionHasher {
    static func propertyHash(
        name: String, isOptional: Bool, isTransient: Bool, isReadOnly: Bool, modifier: String?
    )
        -> [UInt8]
    {
        var bytes = Array(name.utf8)
        var flags: UInt16 = 0
        if isOptional { flags |= 1 }
        if isTransient { flags |= 2 }
        if isReadOnly { flags |= 4 }
        bytes.append(UInt8(flags & 0xFF))
        bytes.append(UInt8(flags >> 8))
        if let modifier { bytes += Array(modifier.utf8) }
        return sha256(bytes)
    }

    static func hash(of attribute: Attribute) -> [UInt8] {
        if let expression = attribute.derivationExpression {
            // Core Data computes the attribute's own hash and then leaves it out: a derived attribute's
            // hash covers its expression only (Formats/version-hashes.md).
            return sha256(Array(DerivationExpression.normalized(expression).utf8))
        }
        var bytes = propertyHash(
            name: attribute.name, isOptional: attribute.isOptional, isTransient: attribute.isTransient,
            isReadOnly: attribute.isReadOnly, modifier: attribute.versionHashModifier)
        appendLittleEndian(UInt32(bitPattern: attribute.type.rawValue), to: &bytes)
        if attribute.allowsExternalBinaryDataStorage { bytes.append(1) }
        if attribute.preservesValueInHistoryOnDeletion { bytes.append(1) }
        return sha256(bytes)
    }

    /// - Parameter owner: the entity that declares the relationship; a relationship that is its own
    ///   inverse (a `spouse` pointing back at itself) hashes without an inverse name.
    static func hash(of relationship: Relationship, owner: String) -> [UInt8] {
        var bytes = propertyHash(
            name: relationship.name, isOptional: relationship.isOptional, isTransient: relationship.isTransient,
            isReadOnly: relationship.isReadOnly, modifier: relationship.versionHashModifier)
        bytes += Array(relationship.destination.utf8)
        if let inverse = relationship.inverse, !(inverse == relationship.name && relationship.destination == owner) {
            bytes += Array(inverse.utf8)
        }
        let maxCount = relationship.isToMany ? relationship.inapplicable.maxCount ?? relationship.maxCount : 1
        appendLittleEndian(UInt32(truncatingIfNeeded: maxCount), to: &bytes)
        appendLittleEndian(UInt32(truncatingIfNeeded: relationship.minCount), to: &bytes)
        if relationship.isOrdered || relationship.inapplicable.isOrdered {
            bytes += [1, 0]
        }
        return sha256(bytes)
    }

    /// - Parameters:
    ///   - properties: every stored attribute and relationship of the entity, inherited ones included,
    ///     as (name, hash) pairs.
    static func entityHash(
        name: String, isAbstract: Bool, superentityHash: Data?, properties: [(name: String, hash: [UInt8])],
        modifier: String?, uniquenessConstraints: [[String]]
    ) -> Data {
        var bytes = Array(name.utf8)
        bytes.append(isAbstract ? 1 : 0)
        if let superentityHash { bytes += superentityHash }
        for property in properties.sorted(by: { $0.name < $1.name }) {
            bytes += property.hash
        }
        if let modifier { bytes += Array(modifier.utf8) }
        for constraint in uniquenessConstraints.map({ $0.joined(separator: ".") }).sorted() {
            bytes += Array(constraint.utf8)
        }
        return Data(sha256(bytes))
    }

    /// Base64 of SHA-512 over name ‖ hash for each entity in name order.
    static func digest(of hashes: [String: Data]) -> String {
        var bytes: [UInt8] = []
        for name in hashes.keys.sorted() {
            bytes += Array(name.utf8)
            bytes += hashes[name]!
        }
        return Data(sha512(bytes)).base64EncodedString()
    }

    /// Base64 of SHA-256 over the hashes in entity-name order.
    static func checksum(of hashes: [String: Data]) -> String {
        var bytes: [UInt8] = []
        for name in hashes.keys.sorted() { bytes += hashes[name]! }
        return Data(sha256(bytes)).base64EncodedString()
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha256(), length: 32) }
    static func sha512(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha512(), length: 64) }

    private static func digest(_ bytes: [UInt8], _ type: OpaquePointer?, length: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        var size: UInt32 = 0
        let status = bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBufferPointer { out in
                EVP_Digest(input.baseAddress, input.count, out.baseAddress, &size, type, nil)
            }
        }
        precondition(status == 1 && Int(size) == length, "libcrypto failed to compute a digest")
        return output
    }

    private static func appendLittleEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }
}

/// Turns a derivation expression into the text Core Data hashes: what `predicateFormat` prints for the
/// expression once `-[NSDerivedAttributeDescription setDerivationExpression:]` has rewritten a key path
/// ending in `.@count` as `count:(path)`, and one ending in `.@sum` or `.@total` as `sum:(path)`. Other
/// key-path operators (`@max`, `@avg`, …) are left as written.
enum DerivationExpression {
    static func normalized(_ expression: String) -> String {
        let trimmed = expression.trimmingCharacters(in: .whitespaces)
        for (suffix, function) in [(".@count", "count"), (".@sum", "sum"), (".@total", "sum")]
        where trimmed.hasSuffix(suffix) && trimmed.count > suffix.count {
            return "\(function):(\(trimmed.dropLast(suffix.count)))"
        }
        return ModelExpression.parseExpression(trimmed)?.format ?? trimmed
    }
}
