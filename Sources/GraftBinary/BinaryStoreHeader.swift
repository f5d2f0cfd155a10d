import Foundation
import GraftCore

/// The 64-byte header of a binary store: format and database versions, where the object map and the
/// metadata lie, and the primary-key counter.
///
/// For example:
///
/// ```swift
/// let header = try BinaryStoreHeader(decoding: bytes.prefix(64), fileSize: bytes.count)
/// print(header.mapRange, header.metadataRange)
/// ```
public struct BinaryStoreHeader: Hashable, Sendable {
    public var formatVersion: UInt32
    public var databaseVersion: UInt32
    public var metadataOffset: UInt64
    public var metadataLength: UInt64
    public var mapOffset: UInt64
    public var mapLength: UInt64
    /// The highest primary key in the document (see ``BinaryStoreLayout/HeaderField``).
    public var primaryKeyCounter: UInt64

    public init(
        formatVersion: UInt32 = BinaryStoreLayout.formatVersion,
        databaseVersion: UInt32 = BinaryStoreLayout.databaseVersion, metadataOffset: UInt64,
        metadataLength: UInt64, mapOffset: UInt64 = UInt64(BinaryStoreLayout.headerSize), mapLength: UInt64,
        primaryKeyCounter: UInt64
    ) {
        self.formatVersion = formatVersion
        self.databaseVersion = databaseVersion
        self.metadataOffset = metadataOffset
        self.metadataLength = metadataLength
        self.mapOffset = mapOffset
        self.mapLength = mapLength
        self.primaryKeyCounter = primaryKeyCounter
    }

    /// The object map's bytes in the file.
    public var mapRange: Range<Int> { Int(mapOffset)..<Int(mapOffset + mapLength) }
    /// The metadata's bytes in the file.
    public var metadataRange: Range<Int> { Int(metadataOffset)..<Int(metadataOffset + metadataLength) }

    /// Reads and checks a header against the size of its file.
    ///
    /// - Throws: `GraftError.malformedInput` when the file is shorter than a header, the magic is not
    ///   `CoreData`, or a range lies outside the file, inside the header, or overlaps the other;
    ///   `GraftError.unsupportedFormat` for a format version other than 1.
    public init(decoding header: Data, fileSize: Int) throws {
        let size = BinaryStoreLayout.headerSize
        guard fileSize >= size, header.count >= size else {
            throw GraftError(
                .malformedInput,
                "binary store: the file is truncated: \(fileSize) bytes is too short for the \(size)-byte header",
                context: [.offset(fileSize)])
        }
        let bytes = [UInt8](header.prefix(size))
        guard bytes.starts(with: BinaryStoreLayout.magic) else {
            throw GraftError(
                .malformedInput, "binary store: the file does not start with 'CoreData', so it is not a binary store",
                context: [.offset(0)])
        }
        func field(_ field: (offset: Int, size: Int)) -> UInt64 {
            bytes[field.offset..<(field.offset + field.size)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        typealias Field = BinaryStoreLayout.HeaderField
        formatVersion = UInt32(field(Field.formatVersion))
        databaseVersion = UInt32(field(Field.databaseVersion))
        metadataOffset = field(Field.metadataOffset)
        metadataLength = field(Field.metadataLength)
        mapOffset = field(Field.mapOffset)
        mapLength = field(Field.mapLength)
        primaryKeyCounter = field(Field.primaryKeyCounter)
        guard formatVersion == BinaryStoreLayout.formatVersion else {
            throw GraftError(
                .unsupportedFormat,
                "binary store: format version \(formatVersion) is not supported (only \(BinaryStoreLayout.formatVersion))",
                context: [.offset(Field.formatVersion.offset)])
        }
        try Self.check(
            "object map", offset: mapOffset, length: mapLength, at: Field.mapOffset.offset, fileSize: fileSize)
        try Self.check(
            "metadata", offset: metadataOffset, length: metadataLength, at: Field.metadataOffset.offset,
            fileSize: fileSize)
        if mapOffset < metadataOffset + metadataLength && metadataOffset < mapOffset + mapLength {
            throw GraftError(
                .malformedInput,
                "binary store: the object map (bytes \(mapOffset)..<\(mapOffset + mapLength)) and the metadata "
                    + "(bytes \(metadataOffset)..<\(metadataOffset + metadataLength)) overlap",
                context: [.offset(Field.mapOffset.offset)])
        }
    }

    private static func check(_ name: String, offset: UInt64, length: UInt64, at position: Int, fileSize: Int) throws {
        let size = UInt64(BinaryStoreLayout.headerSize)
        guard offset >= size else {
            throw GraftError(
                .malformedInput, "binary store: the \(name) starts at byte \(offset), inside the \(size)-byte header",
                context: [.offset(position)])
        }
        guard offset <= UInt64(fileSize), length <= UInt64(fileSize) - offset else {
            let end = offset.addingReportingOverflow(length)
            let endText = end.overflow ? "beyond 2⁶⁴" : "at \(end.partialValue)"
            throw GraftError(
                .malformedInput,
                "binary store: the \(name) (\(length) bytes from byte \(offset)) ends \(endText), beyond the end of "
                    + "the file (\(fileSize) bytes); the file may be truncated",
                context: [.offset(position)])
        }
    }

    /// The header's 64 bytes.
    public var encoded: Data {
        var bytes = [UInt8](repeating: 0, count: BinaryStoreLayout.headerSize)
        bytes.replaceSubrange(0..<8, with: BinaryStoreLayout.magic)
        func put(_ value: UInt64, _ field: (offset: Int, size: Int)) {
            for index in 0..<field.size {
                bytes[field.offset + index] = UInt8(truncatingIfNeeded: value >> UInt64(8 * (field.size - 1 - index)))
            }
        }
        typealias Field = BinaryStoreLayout.HeaderField
        put(UInt64(formatVersion), Field.formatVersion)
        put(UInt64(databaseVersion), Field.databaseVersion)
        put(metadataOffset, Field.metadataOffset)
        put(metadataLength, Field.metadataLength)
        put(mapOffset, Field.mapOffset)
        put(mapLength, Field.mapLength)
        put(primaryKeyCounter, Field.primaryKeyCounter)
        return Data(bytes)
    }
}
