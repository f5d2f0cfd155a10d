import CSQLite
import Foundation
import GraftCore
import GraftModel

/// How attribute values sit in a Core Data SQLite store, and how Graft reads and binds them.
///
/// - integers and booleans: INTEGER;
/// - Double and Float: REAL (FLOAT columns);
/// - Decimal: REAL when the value survives the trip through a double, else the exact digits as TEXT
///   (SQLite's NUMERIC affinity keeps text it cannot convert without loss);
/// - String and URI: TEXT; Date: REAL seconds since 2001-01-01 (INTEGER is read too);
/// - Binary and Transformable: BLOB; an attribute that allows external storage holds a 0x01 byte before
///   inline bytes, or 0x02 and a file name in the store's `_EXTERNAL_DATA` folder;
/// - UUID: a 16-byte BLOB.
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
    static func read(
        _ statement: SQLiteStatement, _ index: Int32, as attribute: Attribute, externalData: URL?,
        missing: ((String) throws -> Void)? = nil
    ) throws -> Value? {
        try read(statement, index, as: Kind(attribute), externalData: externalData, missing: missing)
    }

    static func read(
        _ statement: SQLiteStatement, _ index: Int32, as kind: Kind, externalData: URL?,
        missing: ((String) throws -> Void)? = nil
    ) throws -> Value? {
        let storage = statement.columnType(index)
        guard storage != SQLITE_NULL else { return nil }
        switch kind.type {
        case .integer16, .integer32, .integer64:
            if storage == SQLITE_FLOAT {
                let number = statement.double(index)
                return .integer(Int64(exactly: number.rounded(.towardZero)) ?? 0)
            }
            return .integer(statement.int64(index))
        case .boolean:
            return .bool(statement.int64(index) != 0)
        case .double, .float:
            return .double(statement.double(index))
        case .decimal:
            switch storage {
            case SQLITE_INTEGER: return .decimal(Decimal(statement.int64(index)))
            case SQLITE_TEXT:
                guard let text = statement.text(index), let value = Decimal(string: text, locale: posix) else {
                    throw GraftError(.malformedInput, "'\(statement.text(index) ?? "")' is not a decimal number")
                }
                return .decimal(value)
            default: return .decimal(decimal(from: statement.double(index)))
            }
        case .string:
            return .string(statement.text(index) ?? "")
        case .uri:
            let text = statement.text(index) ?? ""
            guard let url = URL(string: text) else { throw GraftError(.malformedInput, "'\(text)' is not a URI") }
            return .uri(url)
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: statement.double(index)))
        case .uuid:
            let bytes = statement.data(index) ?? Data()
            if bytes.count == 16 {
                return .uuid(UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }))
            }
            if let text = statement.text(index), let uuid = UUID(uuidString: text) { return .uuid(uuid) }
            throw GraftError(.malformedInput, "a UUID must be 16 bytes, found \(bytes.count)")
        case .binary where kind.external:
            return try external(statement.data(index) ?? Data(), folder: externalData, missing: missing).map {
                .data($0)
            }
        case .binary, .transformable, .objectID, .composite, .undefined:
            return .data(statement.data(index) ?? Data())
        }
    }

    /// Binds `value` for `attribute` to parameter `index`.
    static func bind(_ value: Value?, as attribute: Attribute, to statement: SQLiteStatement, at index: Int32) throws {
        try bind(value, as: Kind(attribute), to: statement, at: index)
    }

    static func bind(_ value: Value?, as kind: Kind, to statement: SQLiteStatement, at index: Int32) throws {
        guard let value else {
            try statement.bindNull(at: index)
            return
        }
        switch value {
        case .integer(let number): try statement.bind(number, at: index)
        case .bool(let flag): try statement.bind(Int64(flag ? 1 : 0), at: index)
        case .double(let number): try statement.bind(number, at: index)
        case .decimal(let number):
            if let integer = wholeNumber(number) {
                try statement.bind(integer, at: index)
                return
            }
            let double = NSDecimalNumber(decimal: number).doubleValue
            if decimal(from: double) == number {
                try statement.bind(double, at: index)
            } else {
                try statement.bind(number.description, at: index)
            }
        case .string(let text): try statement.bind(text, at: index)
        case .uri(let url): try statement.bind(url.absoluteString, at: index)
        case .date(let date): try statement.bind(date.timeIntervalSinceReferenceDate, at: index)
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
    }

    /// The exact decimal a double stands for, by its shortest text (whole numbers and text without an
    /// exponent take fast paths).
    static func decimal(from double: Double) -> Decimal {
        if double.rounded() == double, abs(double) < 9.0e15 { return Decimal(Int64(double)) }
        var text = "\(double)"
        if let decimal = text.withUTF8({ Decimal(plainDigits: UnsafeRawBufferPointer($0)) }) { return decimal }
        return Decimal(string: text, locale: posix) ?? Decimal(double)
    }

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
