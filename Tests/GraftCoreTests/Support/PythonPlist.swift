import Foundation
import GraftCore
import Testing

/// Reads property lists with Python's `plistlib` and compares its view with ours.
///
/// The Python side prints a tagged JSON tree (`["int", "42"]`, `["real", "<bit pattern>"]`,
/// `["dict", [[key, value], …]]`, …) that keeps types, bit patterns and key order.
enum PythonPlist {
    static let script = """
        import base64, datetime, json, plistlib, struct, sys

        def convert(x):
            if isinstance(x, bool): return ["bool", x]
            if isinstance(x, int): return ["int", str(x)]
            if isinstance(x, float): return ["real", str(struct.unpack('>Q', struct.pack('>d', x))[0])]
            if isinstance(x, str): return ["string", x]
            if isinstance(x, (bytes, bytearray)): return ["data", base64.b64encode(x).decode()]
            if isinstance(x, datetime.datetime):
                delta = x.replace(tzinfo=None) - datetime.datetime(2001, 1, 1)
                return ["date", repr(delta.total_seconds())]
            if isinstance(x, plistlib.UID): return ["uid", str(x.data)]
            if isinstance(x, list): return ["array", [convert(e) for e in x]]
            if isinstance(x, dict): return ["dict", [[k, convert(v)] for k, v in x.items()]]
            raise TypeError(type(x).__name__)

        with open(sys.argv[1], 'rb') as f:
            value = plistlib.load(f)
        sys.stdout.write(json.dumps(convert(value)))
        """

    /// Python's reading of the property list in `file`, as a tagged tree.
    static func read(_ file: URL) throws -> Any {
        let python = try #require(Tool.python3)
        let result = try Tool.run(python, ["-c", script, file.path])
        guard result.status == 0 else {
            throw GraftError(.io, "plistlib could not read \(file.lastPathComponent): \(result.errorOutput)")
        }
        return try JSONSerialization.jsonObject(with: result.output, options: [.fragmentsAllowed])
    }

    /// Python's reading of `data`, written to a temporary file.
    static func read(_ data: Data) throws -> Any {
        try Scratch.withFile(data) { try read($0) }
    }

    /// Where `ours` and Python's `tagged` tree first differ, or `nil` when they agree.
    ///
    /// Dates agree to the microsecond (Python's precision); a Python dictionary holding only
    /// `CF$UID` (what plistlib reads from XML archives) matches our `.uid`.
    static func difference(_ ours: PropertyList, _ tagged: Any, path: String = "$") -> String? {
        guard let pair = tagged as? [Any], pair.count == 2, let tag = pair[0] as? String else {
            return "\(path): unexpected Python value \(tagged)"
        }
        let payload = pair[1]
        func mismatch() -> String { "\(path): ours \(ours), Python \(tag) \(payload)" }
        switch (ours, tag) {
        case (.string(let string), "string"):
            return (payload as? String).map { Array($0.utf8) == Array(string.utf8) } == true ? nil : mismatch()
        case (.integer, "int"), (.unsignedInteger, "int"):
            let text: String
            if case .integer(let value) = ours { text = String(value) } else { text = String(ours.uint64Value!) }
            return payload as? String == text ? nil : mismatch()
        case (.real(let real), "real"):
            guard let bits = (payload as? String).flatMap(UInt64.init) else { return mismatch() }
            let theirs = Double(bitPattern: bits)
            return (real.isNaN && theirs.isNaN) || real.bitPattern == bits ? nil : mismatch()
        case (.bool(let bool), "bool"):
            return payload as? Bool == bool ? nil : mismatch()
        case (.date(let date), "date"):
            guard let seconds = (payload as? String).flatMap(Double.init) else { return mismatch() }
            return abs(seconds - date.timeIntervalSinceReferenceDate) <= 1e-6 * max(1, abs(seconds)) ? nil : mismatch()
        case (.data(let data), "data"):
            return (payload as? String).flatMap { Data(base64Encoded: $0) } == data ? nil : mismatch()
        case (.uid(let uid), "uid"):
            return payload as? String == String(uid) ? nil : mismatch()
        case (.uid(let uid), "dict"):
            guard let entries = payload as? [[Any]], entries.count == 1, entries[0][0] as? String == "CF$UID" else {
                return mismatch()
            }
            return difference(PropertyList(integer: uid), entries[0][1], path: path + ".CF$UID")
        case (.array(let elements), "array"):
            guard let theirs = payload as? [Any], theirs.count == elements.count else { return mismatch() }
            for (index, element) in elements.enumerated() {
                if let difference = difference(element, theirs[index], path: "\(path)[\(index)]") { return difference }
            }
            return nil
        case (.dictionary(let dictionary), "dict"):
            guard let theirs = payload as? [[Any]], theirs.count == dictionary.count else { return mismatch() }
            for (index, entry) in dictionary.enumerated() {
                guard theirs[index].count == 2, theirs[index][0] as? String == entry.key else {
                    return "\(path): key \(index) is \(entry.key.debugDescription) here, \(theirs[index][0]) in Python"
                }
                if let difference = difference(entry.value, theirs[index][1], path: "\(path).\(entry.key)") {
                    return difference
                }
            }
            return nil
        default:
            return mismatch()
        }
    }
}

/// Expects `body` to throw a `GraftError` with the code `.malformedInput` and, unless told otherwise,
/// a line or byte offset.
@discardableResult
func expectMalformed(
    _ what: Comment? = nil, located: Bool = true, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Any
) -> GraftError? {
    do {
        let value = try body()
        let note = what.map { " (\($0.rawValue))" } ?? ""
        Issue.record("expected a malformedInput error, got \(value)\(note)", sourceLocation: sourceLocation)
        return nil
    } catch let error as GraftError {
        #expect(error.code == .malformedInput, "\(error)", sourceLocation: sourceLocation)
        #expect(
            !located
                || error.context.contains {
                    if case .offset = $0 { return true }
                    if case .line = $0 { return true }
                    return false
                }, "no offset or line in: \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a GraftError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
