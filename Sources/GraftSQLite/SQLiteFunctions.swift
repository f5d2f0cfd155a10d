internal import CSQLite
import Foundation
import GraftGraph

/// The SQL functions and collations Graft registers on every connection, so that predicates and sorts
/// run in SQLite give exactly the answers evaluation in memory gives: each calls the same Swift code
/// the in-memory evaluation uses.
///
/// - `x REGEXP pattern` (SQLite's operator calls `regexp(pattern, x)`), and `regexp(pattern, x, options)`
///   for `MATCHES[c]`/`[d]`: the whole of `x` matches the ICU pattern;
/// - `graft_match(operator, x, pattern, options)`: `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE` and
///   `==` of strings with `[c]`/`[d]` (operator codes in ``StringOperatorCode``);
/// - collations `GRAFT` (Swift's string order), `GRAFT_C` (`[c]`), `GRAFT_D` (`[d]`), `GRAFT_CD`.
///
/// All of them give `NULL` (false) for a `NULL` argument, as comparisons with `nil` are false in memory.
enum SQLiteFunctions {
    /// The codes `graft_match` takes for its first argument.
    enum StringOperatorCode: Int64 {
        case beginsWith = 0, endsWith, contains, like, equalTo

        var predicateOperator: GraftPredicate.Operator {
            switch self {
            case .beginsWith: return .beginsWith
            case .endsWith: return .endsWith
            case .contains: return .contains
            case .like: return .like
            case .equalTo: return .equalTo
            }
        }

        init?(_ op: GraftPredicate.Operator) {
            switch op {
            case .beginsWith: self = .beginsWith
            case .endsWith: self = .endsWith
            case .contains: self = .contains
            case .like: self = .like
            case .equalTo: self = .equalTo
            default: return nil
            }
        }
    }

    /// The collation for string sorts and comparisons with these options.
    static func collation(_ options: ComparisonOptions) -> String {
        switch (options.contains(.caseInsensitive), options.contains(.diacriticInsensitive)) {
        case (false, false): return "GRAFT"
        case (true, false): return "GRAFT_C"
        case (false, true): return "GRAFT_D"
        case (true, true): return "GRAFT_CD"
        }
    }

    /// Registers the functions and collations on a connection.
    static func register(on handle: OpaquePointer) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(handle, "regexp", 2, flags, nil, regexpFunction, nil, nil, nil)
        sqlite3_create_function_v2(handle, "regexp", 3, flags, nil, regexpFunction, nil, nil, nil)
        sqlite3_create_function_v2(handle, "graft_match", 4, flags, nil, matchFunction, nil, nil, nil)
        for options in [
            ComparisonOptions(), [.caseInsensitive], [.diacriticInsensitive],
            [
                .caseInsensitive, .diacriticInsensitive,
            ],
        ] {
            // The options travel in the collation's context pointer (never 0, which would be nil).
            sqlite3_create_collation_v2(
                handle, collation(options), SQLITE_UTF8, UnsafeMutableRawPointer(bitPattern: 0x100 | options.rawValue),
                collationFunction, nil)
        }
    }
}

private func text(_ value: OpaquePointer?) -> String? {
    guard sqlite3_value_type(value) != SQLITE_NULL, let bytes = sqlite3_value_text(value) else { return nil }
    let count = Int(sqlite3_value_bytes(value))
    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
}

private func argument(_ values: UnsafeMutablePointer<OpaquePointer?>?, _ index: Int) -> OpaquePointer? {
    values?[index]
}

private func report(_ context: OpaquePointer?, _ message: String) {
    sqlite3_result_error(context, message, -1)
}

/// `regexp(pattern, text[, options])`.
private let regexpFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, count, values in
    guard let pattern = text(argument(values, 0)), let subject = text(argument(values, 1)) else {
        sqlite3_result_null(context)
        return
    }
    let options = count > 2 ? ComparisonOptions(rawValue: Int(sqlite3_value_int64(argument(values, 2)))) : []
    do {
        let matches = try GraftPredicate.Operator.matchesRegularExpression(subject, pattern, options: options)
        sqlite3_result_int64(context, matches ? 1 : 0)
    } catch {
        report(context, "\(error)")
    }
}

/// `graft_match(operator, text, pattern, options)`.
private let matchFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, _, values in
    guard let code = SQLiteFunctions.StringOperatorCode(rawValue: sqlite3_value_int64(argument(values, 0))) else {
        report(context, "graft_match: unknown operator code")
        return
    }
    guard let subject = text(argument(values, 1)), let pattern = text(argument(values, 2)) else {
        sqlite3_result_null(context)
        return
    }
    let options = ComparisonOptions(rawValue: Int(sqlite3_value_int64(argument(values, 3))))
    let matches = code.predicateOperator.matchesStrings(subject, pattern, options: options)
    sqlite3_result_int64(context, matches ? 1 : 0)
}

/// The `GRAFT*` collations: ASCII compared byte by byte (folding case for `[c]`), which is the order
/// Swift gives ASCII; anything else through the same comparison sorts in memory use.
private let collationFunction:
    @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32 = {
        context, leftCount, left, rightCount, right in
        let options = ComparisonOptions(rawValue: Int(bitPattern: context) & 0xFF)
        let a = UnsafeBufferPointer(start: left?.assumingMemoryBound(to: UInt8.self), count: Int(leftCount))
        let b = UnsafeBufferPointer(start: right?.assumingMemoryBound(to: UInt8.self), count: Int(rightCount))
        let folding = options.contains(.caseInsensitive)
        var ascii = true
        var index = 0
        while index < a.count && index < b.count {
            var x = a[index]
            var y = b[index]
            if x >= 0x80 || y >= 0x80 {
                ascii = false
                break
            }
            if folding {
                if x >= 0x41 && x <= 0x5A { x += 0x20 }
                if y >= 0x41 && y <= 0x5A { y += 0x20 }
            }
            if x != y { return x < y ? -1 : 1 }
            index += 1
        }
        if ascii {
            // One is a prefix of the other so far; what follows decides only if it is ASCII too.
            let restA = a[index...].allSatisfy { $0 < 0x80 }
            let restB = b[index...].allSatisfy { $0 < 0x80 }
            if restA && restB { return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1) }
        }
        let x = String(decoding: a, as: UTF8.self)
        let y = String(decoding: b, as: UTF8.self)
        switch ValueComparison.compareText(x, y, options: options) {
        case .orderedAscending: return -1
        case .orderedDescending: return 1
        case .orderedSame: return 0
        }
    }
