import Foundation
@_spi(GraftInternal) import GraftCore

/// Parses and prints attribute values in the text forms model files use (`defaultValueString`,
/// `minValueString`, `maxValueString`).
///
/// Text is read whole and checked against its type's range: `10abc`, `1e400`, `1.5` for an integer and
/// `70000` for an Integer 16 are not values, never the number Foundation's `intValue` would take from
/// them.
///
/// For example:
///
/// ```swift
/// try ValueText.parse("60", as: .integer16)      // .integer(60)
/// try ValueText.parse("1e400", as: .integer16)   // throws: is not a whole number
/// ValueText.format(.bool(true))                  // "YES"
/// ```
public enum ValueText {
    /// Parses `text` as a value of `type`; returns `nil` for types that have no text form (binary data).
    ///
    /// - Parameter what: what the text is, for the message (`"defaultValueString"`).
    /// - Throws: `GraftError.typeMismatch` when the text is not a value of the type or is outside its range.
    public static func parse(_ text: String, as type: AttributeType, what: String = "value") throws -> Value? {
        switch reading(text, as: type) {
        case .value(let value): return value
        case .problem(let problem):
            throw GraftError(.typeMismatch, "\(what) '\(Wording.excerpt(text))' \(problem) for \(target(type))")
        }
    }

    /// "an Integer 16 attribute", for messages.
    static func target(_ type: AttributeType) -> String { Wording.withArticle(type.modelName) + " attribute" }

    /// A value read from text, or why the text is not one ("is not a whole number").
    enum Reading {
        case value(Value?)
        case problem(String)
    }

    static func reading(_ text: String, as type: AttributeType) -> Reading {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch type {
        case .integer16, .integer32, .integer64:
            // Whole numbers, also written with a zero fraction ("0.0", which Xcode accepts for integers).
            guard let digits = NumberText.wholeNumber(trimmed) else { return .problem("is not a whole number") }
            let range = type.integerRange ?? Int64.min...Int64.max
            guard let value = Int64(digits), range.contains(value) else {
                return .problem("is out of range (\(range.lowerBound) to \(range.upperBound))")
            }
            return .value(.integer(value))
        case .double, .float:
            guard NumberText.isDecimal(trimmed), let value = Double(trimmed) else { return .problem("is not a number") }
            let rounded = type == .float ? Double(Float(value)) : value
            guard rounded.isFinite else { return .problem("is out of range") }
            return .value(.double(rounded))
        case .decimal:
            guard NumberText.isDecimal(trimmed) else { return .problem("is not a number") }
            guard let value = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")), !value.isNaN else {
                return .problem("is out of range")
            }
            return .value(.decimal(value))
        case .string:
            return .value(.string(text))
        case .boolean:
            switch trimmed.lowercased() {
            case "yes", "true", "1": return .value(.bool(true))
            case "no", "false", "0": return .value(.bool(false))
            default: return .problem("is not YES or NO")
            }
        case .date:
            guard NumberText.isDecimal(trimmed), let seconds = Double(trimmed), seconds.isFinite else {
                return .problem("is not a number of seconds")
            }
            return .value(.date(Date(timeIntervalSinceReferenceDate: seconds)))
        case .uuid:
            guard let value = UUID(uuidString: trimmed) else { return .problem("is not a UUID") }
            return .value(.uuid(value))
        case .uri:
            guard let value = URL(string: trimmed) else { return .problem("is not a URL") }
            return .value(.uri(value))
        case .binary, .transformable, .undefined, .objectID, .composite:
            return .value(nil)
        }
    }

    /// The text form of a value, as `parse` reads it back.
    public static func format(_ value: Value) -> String {
        switch value {
        case .integer(let number): return String(number)
        case .double(let number): return number.description
        case .decimal(let number): return number.description
        case .string(let text): return text
        case .bool(let flag): return flag ? "YES" : "NO"
        case .date(let date): return formatSeconds(date.timeIntervalSinceReferenceDate)
        case .data(let data): return data.base64EncodedString()
        case .uuid(let uuid): return uuid.uuidString
        case .uri(let url): return url.absoluteString
        }
    }

    /// Seconds printed without a needless ".0".
    static func formatSeconds(_ seconds: Double) -> String {
        if seconds.rounded() == seconds, abs(seconds) < 1e15 { return String(Int64(seconds)) }
        return seconds.description
    }
}

// MARK: - Model files

extension ValueText {
    /// `modelDefault` or `modelBound`: text, the attribute's type, the field the text comes from.
    typealias ModelTextReader = (String, AttributeType, String) throws -> ModelText

    /// What a model file's text for a default value or a bound reads as, and what to warn about.
    struct ModelText {
        var value: Value?
        /// Set when the text was read as Core Data reads it rather than as written, or left out.
        var warning: String?
    }

    /// Reads the text a model file gives as an attribute's default value (`defaultValueString` in
    /// `contents`, `XD_PAttK_defaultValueAsString` in `elements`).
    ///
    /// Xcode keeps the text typed for a default when the attribute's type changes: a Boolean's `YES` or
    /// `NO` left on a number attribute reads as 1 or 0, with a warning (`wire-ios-data-model`: `isSilenced`,
    /// a Boolean defaulting to `NO` in `zmessaging2.53.0`, is `mutedStatus`, an Integer 32 with the same
    /// text, from `2.54.0` on, and the stores' model caches hold the default 0). Text for a type that takes
    /// no default from text (binary data) is left out with a warning. Any other text that is not a value
    /// of the type is an error.
    ///
    /// - Parameter field: the XML attribute or key the text comes from, for messages.
    /// - Throws: `GraftError.malformedInput` naming the field and the text.
    static func modelDefault(_ text: String, type: AttributeType, field: String) throws -> ModelText {
        switch reading(text, as: type) {
        case .value(nil):
            return ModelText(
                warning: "its \(field) '\(Wording.excerpt(text))' is left out: "
                    + "\(Wording.withArticle(type.modelName)) attribute takes no default value from text")
        case .value(let value):
            return ModelText(value: value)
        case .problem(let problem):
            if type.isNumeric, let flag = ["NO": 0, "YES": 1][text] {
                let value: Value =
                    type.isInteger
                    ? .integer(Int64(flag)) : type == .decimal ? .decimal(Decimal(flag)) : .double(Double(flag))
                return ModelText(
                    value: value,
                    warning: "its \(field) '\(text)' is a Boolean's default, which Xcode keeps when an attribute's "
                        + "type changes; it is read as \(flag)")
            }
            throw GraftError(.malformedInput, "\(field) '\(Wording.excerpt(text))' \(problem) for \(target(type))")
        }
    }

    /// Reads the text a model file gives as an attribute's minimum or maximum (`minValueString`,
    /// `maxValueString`): a value of the attribute's type for numbers and dates, a whole number of
    /// characters or bytes for strings, binary data and transformables. Types without bounds leave the
    /// text out with a warning.
    ///
    /// - Throws: `GraftError.malformedInput` naming the field and the text.
    static func modelBound(_ text: String, type: AttributeType, field: String) throws -> ModelText {
        let boundType: AttributeType
        let kind: String
        switch type {
        case .string, .binary, .transformable:
            boundType = .integer64
            kind = "\(target(type))'s length"
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .date:
            boundType = type
            kind = target(type)
        case .boolean, .uuid, .uri, .undefined, .objectID, .composite:
            return ModelText(
                warning: "its \(field) '\(Wording.excerpt(text))' is left out: "
                    + "\(Wording.withArticle(type.modelName)) attribute has no minimum or maximum")
        }
        switch reading(text, as: boundType) {
        case .value(let value): return ModelText(value: value)
        case .problem(let problem):
            throw GraftError(.malformedInput, "\(field) '\(Wording.excerpt(text))' \(problem) for \(kind)")
        }
    }
}
