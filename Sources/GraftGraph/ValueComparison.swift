import Foundation

/// How strings are compared: the `[c]`, `[d]` and `[n]` options of the predicate format.
///
/// For example:
///
/// ```swift
/// ValueComparison.isEqual("Café", "CAFE", options: [.caseInsensitive, .diacriticInsensitive])  // true
/// ```
public struct ComparisonOptions: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `[c]`: "a" equals "A" (Unicode case folding).
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: "é" equals "e".
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
    /// `[n]`: Apple's promise that both strings are already normalised. It is kept for printing and for
    /// stores that use it, and changes no result here.
    public static let normalized = ComparisonOptions(rawValue: 4)

    /// The options as the predicate format writes them after an operator: `""`, `"[c]"`, `"[cd]"`.
    public var formatSuffix: String {
        var letters = ""
        if contains(.caseInsensitive) { letters += "c" }
        if contains(.diacriticInsensitive) { letters += "d" }
        if contains(.normalized) { letters += "n" }
        return letters.isEmpty ? "" : "[\(letters)]"
    }

    /// `s` folded so that plain comparison of folded strings honours the options.
    func fold(_ string: String) -> String {
        var options: String.CompareOptions = []
        if contains(.caseInsensitive) { options.insert(.caseInsensitive) }
        if contains(.diacriticInsensitive) { options.insert(.diacriticInsensitive) }
        if options.isEmpty { return string }
        // ASCII has no diacritics, and its case folding is lowercasing: skip Foundation's slower path.
        if string.utf8.allSatisfy({ $0 < 0x80 }) {
            return options.contains(.caseInsensitive) ? string.lowercased() : string
        }
        return string.folding(options: options, locale: nil)
    }
}

/// Comparing attribute values the way predicates and sort descriptors do.
///
/// The rules:
/// - Numbers compare by value across `Int64` (and every other integer width), `Double`, `Float`,
///   `Decimal` and `NSNumber`; a `Bool` is the number 1 or 0. Integers and doubles compare exactly (no
///   rounding of large integers); a `Decimal` compares with a `Double` as a `Double`. NaN is ordered
///   against nothing.
/// - Strings compare by Swift's `String` ordering (Unicode canonical equivalence); with
///   `.caseInsensitive` and/or `.diacriticInsensitive` both sides are first folded with Foundation's
///   `folding(options:locale:)`.
/// - Dates compare by time; `UUID`s and `Data` by their bytes, lexicographically; URLs by their
///   absolute strings.
/// - Objects (`KeyValueCoding`) are equal only when they are the same object, and are not ordered.
/// - `nil` equals `nil` and is ordered against nothing.
/// - Values of unrelated types (a string and a number, a date and a number) are neither equal nor ordered.
///
/// For example:
///
/// ```swift
/// ValueComparison.compare(Int64(2), 2.5)              // .orderedAscending
/// ValueComparison.isEqual(true, Int64(1))             // true
/// ValueComparison.compare("a", Int64(1))              // nil: not comparable
/// ValueComparison.sortOrder(nil, "a")                 // .orderedAscending: nil sorts first
/// ```
public enum ValueComparison {
    /// How `lhs` orders against `rhs`, or nil when the two cannot be ordered (different kinds of value,
    /// NaN, nil against a value, two different objects).
    ///
    /// `nil` against `nil` is `.orderedSame`.
    public static func compare(_ lhs: Any?, _ rhs: Any?, options: ComparisonOptions = []) -> ComparisonResult? {
        compareOperands(Operand(lhs), Operand(rhs), options: options)
    }

    /// Whether two values are equal as the predicate `==` sees them.
    ///
    /// Two collections are equal when they hold equal elements, the same number of each, in any order.
    public static func isEqual(_ lhs: Any?, _ rhs: Any?, options: ComparisonOptions = []) -> Bool {
        operandsEqual(Operand(lhs), Operand(rhs), options: options)
    }

    /// A total order for sorting: `nil` first, then values by `compare`; values that `compare` cannot
    /// order are ordered by kind (numbers, strings, dates, UUIDs, data, URLs, objects, collections,
    /// others), and NaN sorts before every other number.
    public static func sortOrder(_ lhs: Any?, _ rhs: Any?, options: ComparisonOptions = []) -> ComparisonResult {
        sortOrderOperands(Operand(lhs), Operand(rhs), options: options)
    }
}

// MARK: - The comparisons on classified values

func compareOperands(_ lhs: Operand, _ rhs: Operand, options: ComparisonOptions) -> ComparisonResult? {
    switch (lhs, rhs) {
    case (.null, .null): return .orderedSame
    case (.null, _), (_, .null): return nil
    case (.string(let a), .string(let b)): return compareStrings(a, b, options: options)
    case (.date(let a), .date(let b)):
        return compareDoubles(a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate)
    case (.uuid(let a), .uuid(let b)):
        return withUnsafeBytes(of: a.uuid) { x in withUnsafeBytes(of: b.uuid) { y in compareBytes(x, y) } }
    case (.data(let a), .data(let b)): return compareBytes(a, b)
    case (.url(let a), .url(let b)): return compareStrings(a.absoluteString, b.absoluteString, options: [])
    case (.object(let a), .object(let b)): return a === b ? .orderedSame : nil
    default:
        guard let a = lhs.number, let b = rhs.number else { return nil }
        return compareNumbers(a, b)
    }
}

func operandsEqual(_ lhs: Operand, _ rhs: Operand, options: ComparisonOptions) -> Bool {
    if case .collection(let a) = lhs, case .collection(let b) = rhs {
        return collectionsEqual(a, b, options: options)
    }
    return compareOperands(lhs, rhs, options: options) == .orderedSame
}

/// Equal as multisets: every element of one matched by a distinct equal element of the other.
private func collectionsEqual(_ a: [Operand], _ b: [Operand], options: ComparisonOptions) -> Bool {
    guard a.count == b.count else { return false }
    var unmatched = b
    for element in a {
        guard let index = unmatched.firstIndex(where: { operandsEqual(element, $0, options: options) }) else {
            return false
        }
        unmatched.remove(at: index)
    }
    return true
}

func sortOrderOperands(_ lhs: Operand, _ rhs: Operand, options: ComparisonOptions) -> ComparisonResult {
    if let result = compareOperands(lhs, rhs, options: options) { return result }
    switch (lhs, rhs) {
    case (.null, _): return .orderedAscending
    case (_, .null): return .orderedDescending
    default: break
    }
    let (a, b) = (sortRank(lhs), sortRank(rhs))
    if a != b { return a < b ? .orderedAscending : .orderedDescending }
    if let x = lhs.number, let y = rhs.number {
        // Only NaN is left: it sorts before the other numbers.
        switch (x.isNaN, y.isNaN) {
        case (true, false): return .orderedAscending
        case (false, true): return .orderedDescending
        default: return .orderedSame
        }
    }
    if case .collection(let x) = lhs, case .collection(let y) = rhs {
        for (p, q) in zip(x, y) {
            let order = sortOrderOperands(p, q, options: options)
            if order != .orderedSame { return order }
        }
        return x.count == y.count ? .orderedSame : (x.count < y.count ? .orderedAscending : .orderedDescending)
    }
    return .orderedSame
}

func sortRank(_ operand: Operand) -> Int {
    switch operand {
    case .null: return 0
    case .integer, .double, .decimal, .bool: return 1
    case .string: return 2
    case .date: return 3
    case .uuid: return 4
    case .data: return 5
    case .url: return 6
    case .object: return 7
    case .collection: return 8
    case .other: return 9
    }
}

func compareStrings(_ a: String, _ b: String, options: ComparisonOptions) -> ComparisonResult {
    let (x, y) = (options.fold(a), options.fold(b))
    if x == y { return .orderedSame }
    return x < y ? .orderedAscending : .orderedDescending
}

func compareDoubles(_ a: Double, _ b: Double) -> ComparisonResult? {
    if a < b { return .orderedAscending }
    if a > b { return .orderedDescending }
    if a == b { return .orderedSame }
    return nil
}

private func compareBytes<C: Collection<UInt8>>(_ a: C, _ b: C) -> ComparisonResult {
    for (x, y) in zip(a, b) where x != y {
        return x < y ? .orderedAscending : .orderedDescending
    }
    if a.count == b.count { return .orderedSame }
    return a.count < b.count ? .orderedAscending : .orderedDescending
}

func compareNumbers(_ a: Number, _ b: Number) -> ComparisonResult? {
    switch (a, b) {
    case (.integer(let x), .integer(let y)):
        return x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending)
    case (.integer(let x), .double(let y)):
        return compareExactly(x, y)
    case (.double(let x), .integer(let y)):
        return compareExactly(y, x).map(reversed)
    case (.decimal(let x), .decimal(let y)):
        if x.isNaN || y.isNaN { return nil }
        return x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending)
    case (.decimal(let x), .integer(let y)):
        return compareNumbers(.decimal(x), .decimal(Decimal(y)))
    case (.integer(let x), .decimal(let y)):
        return compareNumbers(.decimal(Decimal(x)), .decimal(y))
    default:
        return compareDoubles(a.doubleValue, b.doubleValue)
    }
}

private func reversed(_ order: ComparisonResult) -> ComparisonResult {
    switch order {
    case .orderedAscending: return .orderedDescending
    case .orderedDescending: return .orderedAscending
    case .orderedSame: return .orderedSame
    }
}

/// Compares an integer with a double without rounding the integer to the nearest double.
private func compareExactly(_ integer: Int64, _ double: Double) -> ComparisonResult? {
    if double.isNaN { return nil }
    if double >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
    if double < -9_223_372_036_854_775_808.0 { return .orderedDescending }
    let whole = double.rounded(.down)
    let wholeInteger = Int64(whole)
    if integer < wholeInteger { return .orderedAscending }
    if integer > wholeInteger { return .orderedDescending }
    return whole == double ? .orderedSame : .orderedAscending
}

extension Number {
    var isNaN: Bool {
        switch self {
        case .integer: return false
        case .double(let value): return value.isNaN
        case .decimal(let value): return value.isNaN
        }
    }
}

extension Operand {
    /// Whether values of this kind have an order among themselves (numbers, strings, dates, UUIDs, data,
    /// URLs); objects, collections and unknown values do not.
    var isOrderable: Bool {
        switch self {
        case .object, .collection, .other: return false
        default: return true
        }
    }
}
