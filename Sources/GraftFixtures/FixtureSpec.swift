import Foundation
import GraftCore

/// What a test suite asks of its fixtures, beyond the model: how many objects of each entity, values
/// pinned or drawn from lists, and how many objects each to-many holds. Kept in a repository as JSON
/// (`Formats/fixtures.md` gives the schema); `--count` and `--set` override it.
///
/// For example:
///
/// ```json
/// {
///   "seed": 7,
///   "counts": { "Department": 4, "Employee": 40 },
///   "set": { "Employee.isRemote": false },
///   "choices": { "Department.location": ["Berlin", "Lisbon", "Osaka"] },
///   "fanOut": { "Department.employees": "3...10" }
/// }
/// ```
public struct FixtureSpec: Sendable, Equatable {
    /// The seed, when the spec fixes one (a seed given to the generator wins).
    public var seed: UInt64?
    /// Objects per entity. A concrete entity's count is of objects of that entity itself; an abstract
    /// entity's is shared among its concrete subentities.
    public var counts: [String: Int]
    /// Values every object gets (`"Employee.isRemote"` → its text, as `--set` reads it); `nil` for no
    /// value.
    public var values: [String: String?]
    /// Lists of values (as text) that each object draws one of (`nil` for no value).
    public var choices: [String: [String?]]
    /// How many objects each object's to-many holds (`"Department.employees"` → 3...10): within the
    /// model's own minimum and maximum.
    public var fanOut: [String: ClosedRange<Int>]

    public init(
        seed: UInt64? = nil, counts: [String: Int] = [:], values: [String: String?] = [:],
        choices: [String: [String?]] = [:], fanOut: [String: ClosedRange<Int>] = [:]
    ) {
        self.seed = seed
        self.counts = counts
        self.values = values
        self.choices = choices
        self.fanOut = fanOut
    }

    /// Reads a spec file.
    ///
    /// - Throws: `GraftError.fileNotFound`; `GraftError.malformedInput` naming the file and the entry
    ///   that is wrong.
    public init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw GraftError(.fileNotFound, "cannot read the spec file", context: [.file(url.relativePath)])
        }
        try self.init(json: data, file: url.relativePath)
    }

    /// Reads a spec from JSON text; `file` names it in messages.
    public init(json data: Data, file: String = "spec") throws {
        func fail(_ message: String) -> GraftError { GraftError(.malformedInput, message, context: [.file(file)]) }
        let top: [String: JSON]
        do {
            guard case .object(let object) = try JSONDecoder().decode(JSON.self, from: data) else {
                throw fail("is not a JSON object")
            }
            top = object
        } catch let error as GraftError {
            throw error
        } catch {
            throw fail("is not JSON")
        }
        self.init()
        for key in top.keys.sorted() {
            let entry = top[key]!
            switch key {
            case "$schema", "comment":
                continue
            case "seed":
                guard case .integer(let number) = entry, number >= 0 else {
                    throw fail("'seed' is not a whole number of 0 or more")
                }
                seed = UInt64(number)
            case "counts":
                guard case .object(let entries) = entry else { throw fail("'counts' is not an object") }
                for (name, value) in entries {
                    guard case .integer(let count) = value, count >= 0, let exact = Int(exactly: count) else {
                        throw fail("counts.\(name) is not a whole number of 0 or more")
                    }
                    counts[name] = exact
                }
            case "set":
                guard case .object(let entries) = entry else { throw fail("'set' is not an object") }
                for (path, value) in entries {
                    guard let text = value.scalarText else {
                        throw fail("set.\(path) is not a string, number, Boolean or null")
                    }
                    values[path] = .some(text)
                }
            case "choices":
                guard case .object(let entries) = entry else { throw fail("'choices' is not an object") }
                for (path, value) in entries {
                    guard case .array(let list) = value, !list.isEmpty else {
                        throw fail("choices.\(path) is not a list of at least one value")
                    }
                    var texts: [String?] = []
                    for element in list {
                        guard let text = element.scalarText else {
                            throw fail("choices.\(path) holds something that is not a string, number, Boolean or null")
                        }
                        texts.append(text)
                    }
                    choices[path] = texts
                }
            case "fanOut":
                guard case .object(let entries) = entry else { throw fail("'fanOut' is not an object") }
                for (path, value) in entries {
                    guard let range = value.range else {
                        throw fail("fanOut.\(path) is not a count (5), a range (\"3...10\") or a pair ([3, 10])")
                    }
                    fanOut[path] = range
                }
            default:
                throw fail("has an entry '\(key)' that a spec does not have (seed, counts, set, choices, fanOut)")
            }
        }
    }

    /// A spec file's JSON, read strictly (a Boolean is never a number).
    private enum JSON: Decodable {
        case null, bool(Bool), integer(Int64), number(Double), string(String), array([JSON]), object([String: JSON])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .integer(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([JSON].self) {
                self = .array(value)
            } else {
                self = .object(try container.decode([String: JSON].self))
            }
        }

        /// A scalar as the text `--set` would give (`nil` inside for null); nil for a list or object.
        var scalarText: String?? {
            switch self {
            case .null: return .some(nil)
            case .bool(let value): return .some(value ? "YES" : "NO")
            case .integer(let value): return .some(String(value))
            case .number(let value): return .some(String(value))
            case .string(let value): return .some(value)
            case .array, .object: return nil
            }
        }

        var range: ClosedRange<Int>? {
            switch self {
            case .integer(let count): return count >= 0 ? Int(count)...Int(count) : nil
            case .string(let text): return FixtureSpec.range(text: text)
            case .array(let pair):
                guard pair.count == 2, case .integer(let low) = pair[0], case .integer(let high) = pair[1], low >= 0,
                    high >= low
                else { return nil }
                return Int(low)...Int(high)
            default: return nil
            }
        }
    }

    /// Applies `Entity.attribute=VALUE` (as `--set` gives it; an empty VALUE is no value only for
    /// non-string attributes, where it cannot be a value).
    public mutating func set(_ assignment: String) throws {
        guard let equals = assignment.firstIndex(of: "="), assignment[..<equals].contains(".") else {
            throw GraftError(.syntaxError, "'\(assignment)' is not Entity.attribute=VALUE")
        }
        values[String(assignment[..<equals])] = .some(String(assignment[assignment.index(after: equals)...]))
    }

    /// A fan-out range from its text: `5`, `3...10`, `3…10` or `3..10`.
    public static func range(text: String) -> ClosedRange<Int>? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        for separator in ["...", "…", ".."] {
            let parts = trimmed.components(separatedBy: separator)
            if parts.count == 2, let low = Int(parts[0].trimmingCharacters(in: .whitespaces)),
                let high = Int(parts[1].trimmingCharacters(in: .whitespaces)), low >= 0, high >= low
            {
                return low...high
            }
        }
        if let count = Int(trimmed), count >= 0 { return count...count }
        return nil
    }
}
