import GraftCore
import GraftModel

/// How a store reader treats a stored value that is not of its attribute's type, or is outside that
/// type's range: text in an integer column, 10.5 for an Integer 16, 70000 for an Integer 16, text that is
/// not UTF-8, a Float beyond Float's range, a decimal beyond Decimal's.
///
/// Every reader (SQLite, XML, binary) follows the same policy, given beside `missingExternalData`.
///
/// For example:
///
/// ```swift
/// let reader = try SQLiteStoreReader(url: url, model: nil, valueReading: .lenient)
/// try reader.forEachSnapshot { … }
/// reader.warnings.forEach { print("warning:", $0) }   // one per entity.attribute with refused values
/// ```
public enum ValueReading: Sendable, Equatable {
    /// Stop with an error naming the object, the attribute and the value (the default: nothing is read
    /// as a value it is not).
    case strict
    /// Read such a value as no value, with one warning per entity and attribute that counts the objects
    /// and names the first few keys and values (to rescue what can be rescued from a damaged store).
    case lenient
}

/// A stored value a reader cannot take as a value of its attribute's type, thrown by a format's value
/// decoding and handed to ``ValueRefusals`` by the reader, which knows the object and the attribute.
package struct UnreadableValue: Error, Sendable, Equatable {
    /// The stored value for people: "the text 'abc'", "10.5", "a blob of 3 bytes".
    package var found: String
    /// Why it is refused: "is not an Integer 16 value", "is beyond the range of Integer 16 (-32768…32767)".
    package var problem: String

    package init(_ found: String, _ problem: String) {
        self.found = found
        self.problem = problem
    }

    /// A value of the wrong kind for an attribute of `type`.
    package static func notA(_ type: AttributeType, found: String) -> UnreadableValue {
        UnreadableValue(found, "is not \(Wording.withArticle("\(type)")) value")
    }

    /// A number outside the range of `type`.
    package static func outOfRange(_ type: AttributeType, found: String) -> UnreadableValue {
        let range = type.integerRange.map { " (\($0.lowerBound)…\($0.upperBound))" } ?? ""
        return UnreadableValue(found, "is beyond the range of \(type)\(range)")
    }

    /// A whole number is required for an attribute of `type`.
    package static func notWhole(_ type: AttributeType, found: String) -> UnreadableValue {
        UnreadableValue(found, "is not a whole number, as \(Wording.withArticle("\(type)")) value must be")
    }

    /// "holds the text 'abc', which is not an Integer 16 value".
    package var message: String { "holds \(found), which \(problem)" }

    /// Text for people, cut short when long.
    package static func quoted(_ text: String, limit: Int = 40) -> String {
        let shown = text.count > limit ? String(text.prefix(limit)) + "…" : text
        return "'\(shown.replacingOccurrences(of: "\n", with: "\\n"))'"
    }
}

/// What a reader does with the values it cannot read (see ``ValueReading``): under `.strict` it throws
/// the error; under `.lenient` it remembers the value and lets the reader read it as no value, and
/// ``warnings`` has one line per entity and attribute.
///
/// A reader keeps one for its whole life (it is a class so that readers whose reading methods do not
/// mutate can still record), used by one thread at a time.
package final class ValueRefusals: @unchecked Sendable {
    package let policy: ValueReading
    /// How many keys and values each warning names.
    package static let shown = 3

    private struct Group {
        var type: AttributeType
        var count = 0
        var examples: [String] = []
    }

    /// One place: an attribute of an object.
    package struct Slot: Hashable, Sendable {
        package var entity: Int
        package var attribute: Int
        package var key: Int64

        package init(entity: Int, attribute: Int, key: Int64) {
            self.entity = entity
            self.attribute = attribute
            self.key = key
        }
    }

    private var groups: [String: Group] = [:]
    private var order: [String] = []
    /// Every value read as no value, by object and attribute (for `--verify`, which expects those to be
    /// absent in the output and everything else to be the stored value).
    package private(set) var slots: Set<Slot> = []

    package init(_ policy: ValueReading) { self.policy = policy }

    /// Handles a value the reader cannot read: throws `error()` under `.strict`; under `.lenient`
    /// records it (the reader then reads it as no value).
    ///
    /// - Parameters:
    ///   - entity: the entity's name, `attribute` and `type` the attribute's, for the warning; `object`: the
    ///     object as the warning names it (`p12`).
    ///   - slot: the object and attribute, for ``slots``.
    package func refuse(
        _ value: UnreadableValue, entity: String, attribute: String, type: AttributeType, object: String, slot: Slot,
        error: () -> GraftError
    ) throws {
        guard policy == .lenient else { throw error() }
        // A store read object by object may read one object twice: it counts once.
        guard slots.insert(slot).inserted else { return }
        let name = "\(entity).\(attribute)"
        if groups[name] == nil {
            groups[name] = Group(type: type)
            order.append(name)
        }
        groups[name]!.count += 1
        if groups[name]!.examples.count < Self.shown { groups[name]!.examples.append("\(object) (\(value.found))") }
    }

    /// How many values were read as no value.
    package var count: Int { slots.count }

    /// One line per entity and attribute whose values were read as no value: how many, and the first few
    /// objects with their values.
    package var warnings: [String] {
        order.map { name in
            let group = groups[name]!
            let more = group.count > group.examples.count ? ", and \(group.count - group.examples.count) more" : ""
            return "\(name) (\(group.type)): \(Wording.counted(group.count, "stored value")) "
                + (group.count == 1 ? "is" : "are") + " not of the attribute's type or range and "
                + (group.count == 1 ? "was" : "were") + " read as no value: " + group.examples.joined(separator: ", ")
                + more
        }
    }

    /// The way out of the error strict reading gives: the option that reads such values as no value.
    package static let remedy = GraftError.Remedy(
        .readLeniently, "--lenient reads such values as no value, with a warning")
}
