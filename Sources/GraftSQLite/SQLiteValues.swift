internal import CSQLite
import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// How attribute values sit in a Core Data SQLite store, and how Graft reads and binds them.
///
/// - integers and booleans: INTEGER;
/// - Double and Float: REAL (FLOAT columns);
/// - Decimal: INTEGER for whole numbers, else REAL, as Core Data writes them; a decimal no double holds
///   exactly is written rounded to the nearest double (SQLite's NUMERIC affinity would turn its text into a
///   real too, keeping 15 digits), with a warning from the writer. Text digits (stores written by a
///   SQLite that kept them) are read exactly;
/// - String and URI: TEXT (UTF-8); Date: REAL seconds since 2001-01-01 (INTEGER is read too);
/// - Binary and Transformable: BLOB; an attribute that allows external storage holds a 0x01 byte before
///   inline bytes, or 0x02 and a file name in the store's `_EXTERNAL_DATA` folder;
/// - UUID: a 16-byte BLOB.
///
/// Reading is strict (see `read(_:_:as:externalData:missing:)`): a value that is not of its
/// attribute's type, or outside its range, is refused rather than turned into another value.
enum SQLiteValues {
    /// What reading and binding need of an attribute, without copying the whole description per value.
    struct Kind {
        var type: AttributeType
        /// Binary data that may live in an external file (marked with a leading 0x01 or 0x02 byte).
        var external: Bool

        init(_ attribute: Attribute) {
            type = attribute.type
            external = attribute.type == .binary && attribute.allowsExternalBinaryDataStorage
        }
    }

    /// The value of column `index` of the current row, as `type` holds it.
    ///
    /// - Parameter externalData: the folder holding externally stored binary data, if any.
    /// - Throws: `UnreadableValue` for a stored value that is not of the attribute's type or is outside
    ///   its range (the caller names the object and attribute); `GraftError` for a missing external file.
    static func read(
        _ statement: SQLiteStatement, _ index: Int32, as attribute: Attribute, externalData: URL?,
        missing: ((String) throws -> Void)? = nil
    ) throws -> Value? {
        try read(statement, index, as: Kind(attribute), externalData: externalData, missing: missing)
    }

    /// Reads strictly: what SQLite holds must be a value of the attribute's type, within its range, read
    /// without loss. Accepted besides the storage class Core Data writes: integers in REAL and TIMESTAMP
    /// columns (when a Double holds them exactly), reals that are whole numbers in integer columns, 0 and 1
    /// (as integers or reals) for Booleans, a Decimal's digits as text, a UUID as text, text as a blob's
    /// bytes. Everything else throws `UnreadableValue`.
    static func read(
        _ statement: SQLiteStatement, _ index: Int32, as kind: Kind, externalData: URL?,
        missing: ((String) throws -> Void)? = nil
    ) throws -> Value? {
        // One lookup of the column; its value is then read without another (see `SQLiteColumn`).
        let column = statement.column(index)
        let storage = column.type
        guard storage != SQLITE_NULL else { return nil }
        let type = kind.type
        func refused() -> UnreadableValue { .notA(type, found: describe(statement, index)) }
        switch type {
        case .integer16, .integer32, .integer64:
            let number: Int64
            switch storage {
            case SQLITE_INTEGER: number = column.int64
            case SQLITE_FLOAT:
                let real = column.double
                guard real.rounded(.towardZero) == real else { throw UnreadableValue.notWhole(type, found: "\(real)") }
                guard let whole = Int64(exactly: real) else { throw UnreadableValue.outOfRange(type, found: "\(real)") }
                number = whole
            default: throw refused()
            }
            guard type.integerRange?.contains(number) != false else {
                throw UnreadableValue.outOfRange(type, found: "\(number)")
            }
            return .integer(number)
        case .boolean:
            switch storage {
            case SQLITE_INTEGER where (0...1).contains(column.int64):
                return .bool(column.int64 == 1)
            case SQLITE_FLOAT where column.double == 0 || column.double == 1:
                return .bool(column.double == 1)
            case SQLITE_INTEGER, SQLITE_FLOAT:
                throw UnreadableValue(describe(statement, index), "is not a Boolean value (0 or 1)")
            default: throw refused()
            }
        case .double, .float:
            let number: Double
            switch storage {
            case SQLITE_FLOAT: number = column.double
            case SQLITE_INTEGER: number = try exactDouble(column.int64, type)
            default: throw refused()
            }
            if type == .float, number.isFinite, number.magnitude > Double(Float.greatestFiniteMagnitude) {
                throw UnreadableValue.outOfRange(type, found: "\(number)")
            }
            return .double(number)
        case .decimal:
            switch storage {
            case SQLITE_INTEGER: return .decimal(Decimal(column.int64))
            case SQLITE_FLOAT:
                let real = column.double
                guard let value = Decimal(shortestOf: real) else {
                    throw UnreadableValue.outOfRange(type, found: "\(real)")
                }
                return .decimal(value)
            case SQLITE_TEXT:
                guard let text = column.validatedText(), let value = Decimal(exactText: text) else {
                    throw UnreadableValue(describe(statement, index), "is not a decimal number a Decimal holds exactly")
                }
                return .decimal(value)
            default: throw refused()
            }
        case .string:
            guard storage == SQLITE_TEXT else { throw refused() }
            guard let text = column.validatedText() else { throw notUTF8(statement, index) }
            return .string(text)
        case .uri:
            guard storage == SQLITE_TEXT else { throw refused() }
            guard let text = column.validatedText() else { throw notUTF8(statement, index) }
            guard let url = URL(string: text) else {
                throw UnreadableValue.notA(type, found: describe(statement, index))
            }
            return .uri(url)
        case .date:
            switch storage {
            case SQLITE_FLOAT: return .date(Date(timeIntervalSinceReferenceDate: column.double))
            case SQLITE_INTEGER:
                return .date(Date(timeIntervalSinceReferenceDate: try exactDouble(column.int64, type)))
            default: throw refused()
            }
        case .uuid:
            switch storage {
            case SQLITE_BLOB:
                let bytes = column.data() ?? Data()
                guard bytes.count == 16 else {
                    throw UnreadableValue(describe(statement, index), "is not a UUID (16 bytes)")
                }
                return .uuid(UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }))
            case SQLITE_TEXT:
                guard let text = column.validatedText(), let uuid = UUID(uuidString: text) else {
                    throw refused()
                }
                return .uuid(uuid)
            default: throw refused()
            }
        case .binary where kind.external:
            guard storage == SQLITE_BLOB || storage == SQLITE_TEXT else { throw refused() }
            return try external(column.data() ?? Data(), folder: externalData, missing: missing).map {
                .data($0)
            }
        case .binary, .transformable, .objectID, .composite, .undefined:
            // Bytes are bytes, whether SQLite keeps them as a blob or as text; a number is not.
            guard storage == SQLITE_BLOB || storage == SQLITE_TEXT else { throw refused() }
            return .data(column.data() ?? Data())
        }
    }

    /// An integer as a Double, when a Double holds it exactly (every integer up to 2⁵³ does).
    private static func exactDouble(_ integer: Int64, _ type: AttributeType) throws -> Double {
        guard let number = Double(exactly: integer) else {
            throw UnreadableValue("\(integer)", "cannot be held exactly by \(Wording.withArticle("\(type)")) value")
        }
        return number
    }

    private static func notUTF8(_ statement: SQLiteStatement, _ index: Int32) -> UnreadableValue {
        UnreadableValue(describe(statement, index), "is not UTF-8 text")
    }

    /// The stored value for messages: `42`, `10.5`, `the text 'abc'`, `a blob of 3 bytes (61 62 63)`,
    /// `text that is not UTF-8 (61 ff)`.
    static func describe(_ statement: SQLiteStatement, _ index: Int32) -> String {
        func hex(_ bytes: Data) -> String {
            let shown = bytes.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
            return bytes.count > 8 ? shown + " …" : shown
        }
        switch statement.columnType(index) {
        case SQLITE_NULL: return "no value"
        case SQLITE_INTEGER: return "\(statement.int64(index))"
        case SQLITE_FLOAT: return "\(statement.double(index))"
        case SQLITE_TEXT:
            guard let text = statement.validatedText(index) else {
                return "text that is not UTF-8 (\(hex(statement.data(index) ?? Data())))"
            }
            return "the text \(UnreadableValue.quoted(text))"
        default:
            let bytes = statement.data(index) ?? Data()
            return "a blob of \(Wording.counted(bytes.count, "byte"))\(bytes.isEmpty ? "" : " (\(hex(bytes)))")"
        }
    }

    /// Binds `value` for `attribute` to parameter `index`.
    ///
    /// - Returns: `false` when the store cannot keep the value exactly: a decimal that no 64-bit real
    ///   holds (SQLite's NUMERIC affinity turns decimal text into a real, keeping 15 digits), bound as
    ///   the nearest double instead; a NaN double or date, which SQLite stores as NULL.
    @discardableResult
    static func bind(
        _ value: Value?, as attribute: Attribute, to statement: SQLiteStatement, at index: Int32
    ) throws
        -> Bool
    {
        try bind(value, as: Kind(attribute), to: statement, at: index)
    }

    @discardableResult
    static func bind(_ value: Value?, as kind: Kind, to statement: SQLiteStatement, at index: Int32) throws -> Bool {
        guard let value else {
            try statement.bindNull(at: index)
            return true
        }
        switch value {
        case .integer(let number): try statement.bind(number, at: index)
        case .bool(let flag): try statement.bind(Int64(flag ? 1 : 0), at: index)
        case .double(let number):
            try statement.bind(number, at: index)
            // SQLite keeps no NaN: a NaN real is stored as NULL.
            return !number.isNaN
        case .decimal(let number):
            if let integer = wholeNumber(number) {
                try statement.bind(integer, at: index)
                return true
            }
            if number.isNaN {
                // SQLite keeps no NaN (a NaN real is stored as NULL): its text stays text.
                try statement.bind(number.description, at: index)
                return true
            }
            let double = number.nearestDouble
            try statement.bind(double, at: index)
            return decimal(from: double) == number
        case .string(let text): try statement.bind(text, at: index)
        case .uri(let url): try statement.bind(url.absoluteString, at: index)
        case .date(let date):
            try statement.bind(date.timeIntervalSinceReferenceDate, at: index)
            return !date.timeIntervalSinceReferenceDate.isNaN
        case .uuid(let uuid):
            try statement.bind(withUnsafeBytes(of: uuid.uuid) { Data($0) }, at: index)
        case .data(let data):
            if kind.external {
                var marked = Data([1])
                marked.append(data)
                try statement.bind(marked, at: index)
            } else {
                try statement.bind(data, at: index)
            }
        }
        return true
    }

    /// The exact decimal a double stands for, by its shortest text (whole numbers and text without an
    /// exponent take fast paths); `nil` for what a Decimal cannot hold (infinities, beyond its range).
    static func decimal(from double: Double) -> Decimal? { Decimal(shortestOf: double) }

    /// The decimal as an `Int64` when it is a whole number that small (most money amounts in a store).
    static func wholeNumber(_ value: Decimal) -> Int64? {
        if let parts = value.compactParts {
            // `significand` has no trailing zeros (its representation is Decimal(significand)'s, which is
            // compact), so a negative exponent means a fraction.
            guard parts.exponent >= 0, parts.exponent < 19 else { return nil }
            var magnitude = parts.significand
            for _ in 0..<parts.exponent {
                let (product, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                if overflow { return nil }
                magnitude = product
            }
            if parts.isNegative {
                return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil
            }
            return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
        }
        guard value.exponent >= 0, value.exponent < 19, !value.isNaN else { return nil }
        let magnitude = NSDecimalNumber(decimal: value).int64Value
        return Decimal(magnitude) == value ? magnitude : nil
    }

    private static let posix = Locale(identifier: "en_US_POSIX")

    /// Reads an externally stored value: 0x01 + inline bytes, or 0x02 + a file name (NUL-terminated).
    ///
    /// - Parameter missing: called with the file's path when it does not exist; when `nil`, or when it
    ///   returns, the value is read as absent after the call; it may throw to fail the read instead.
    private static func external(_ stored: Data, folder: URL?, missing: ((String) throws -> Void)?) throws -> Data? {
        guard let marker = stored.first else { return stored }
        switch marker {
        case 1: return Data(stored.dropFirst())
        case 2:
            let name = String(decoding: stored.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
            let file = folder?.appendingPathComponent(name)
            if let file, let contents = try? Data(contentsOf: file) { return contents }
            let path = file?.relativePath ?? name
            guard let missing else {
                throw GraftError(
                    .notFound,
                    "the value is kept in an external file that is missing (--omit-missing-external-data reads such "
                        + "values as no value, with a warning)",
                    context: [.file(path)])
            }
            try missing(path)
            return nil
        default:
            // Stores written before external storage was switched on hold plain bytes.
            return stored
        }
    }
}

extension SQLiteStatement {
    func columnType(_ index: Int32) -> Int32 { sqlite3_column_type(statementHandle, index) }
}
