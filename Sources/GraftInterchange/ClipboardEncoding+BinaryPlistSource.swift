import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// The binary property-list encoding's tokens for ``ClipboardWalker``, read through GraftCore's
/// ``BinaryPlistView``, which checks every offset, count and reference against the data.
///
/// The next value is an object reference; a container is the position of its references. The walker
/// follows references only where the document's shape says, so reference cycles and deep nesting cannot
/// make it recurse, and skipping a value costs nothing.
struct ClipboardBinaryPlistSource: ClipboardTokenSource {
    struct Container {
        let start: Int
        let count: Int
        var position = 0
    }
    /// A value's reference and its object's offset.
    struct Mark {
        let reference: Int
        let offset: Int
    }

    private let view: BinaryPlistView
    /// The next value's reference, and the offset of its object (checked once, when the source moves to it).
    private var current: Int
    private var currentOffset: Int
    private var scratch = ByteBuffer(capacity: 256)

    init(_ bytes: UnsafeRawBufferPointer) throws {
        view = try BinaryPlistView(bytes, name: "binary property-list clipboard")
        current = view.topObject
        currentOffset = try view.offset(of: current)
    }

    /// Makes `reference` the next value.
    @inline(__always)
    private mutating func move(to reference: Int) throws {
        currentOffset = try view.offset(of: reference)
        current = reference
    }

    static var encoding: ClipboardEncoding { .binaryPlist }
    static var memberWord: String { "member" }

    static func form(_ kind: ClipboardTokenKind) -> String {
        switch kind {
        case .dictionary: return "a dictionary"
        case .array: return "an array"
        case .string: return "a string"
        case .integer: return "an integer"
        case .real, .number: return "a real"
        case .bool: return "a Boolean"
        case .data: return "data"
        case .date: return "a date"
        case .other: return "a value"
        }
    }

    static func expected(_ type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64: return "an integer"
        case .double, .float: return "a real"
        case .date: return "a real (seconds since 2001-01-01)"
        case .boolean: return "a Boolean"
        case .decimal: return "a string of decimal digits"
        case .binary, .transformable: return "data"
        default: return "a string"
        }
    }

    func error(_ message: String, at offset: Int?, context: [GraftError.Location]) -> GraftError {
        view.failure(message, at: offset ?? self.offset, context: context)
    }

    func locationContext(_ offset: Int) -> [GraftError.Location] { [.offset(view.baseOffset + offset)] }

    var offset: Int { currentOffset }
    var mark: Mark { Mark(reference: current, offset: currentOffset) }
    var consumed: Int { currentOffset }

    mutating func seek(_ mark: Mark) {
        current = mark.reference
        currentOffset = mark.offset
    }

    @inline(__always)
    mutating func kind() -> ClipboardTokenKind {
        let marker = view.bytes[currentOffset]
        switch marker >> 4 {
        case BinaryMarker.simple: return marker == 0x08 || marker == 0x09 ? .bool : .other
        case BinaryMarker.integer: return .integer
        case BinaryMarker.real: return .real
        case BinaryMarker.date: return marker == BinaryMarker.dateValue ? .date : .other
        case BinaryMarker.data: return .data
        case BinaryMarker.asciiString, BinaryMarker.utf16String, BinaryMarker.utf8String: return .string
        case BinaryMarker.array: return .array
        case BinaryMarker.dictionary: return .dictionary
        default: return .other
        }
    }

    func describeNext() -> String { view.kind(of: current) }

    mutating func beginDocument() throws -> Container {
        try move(to: view.topObject)
        guard let top = try beginDictionary() else {
            throw error("expected the document (a dictionary), found \(describeNext())", at: nil, context: [])
        }
        return top
    }

    mutating func endDocument() throws {}

    @inline(__always)
    private func contents(_ type: UInt8) throws -> Container? {
        guard view.bytes[currentOffset] >> 4 == type else { return nil }
        let (start, count) = try view.contents(at: currentOffset, type: type)
        return Container(start: start, count: count)
    }

    @inline(__always)
    mutating func beginDictionary() throws -> Container? { try contents(BinaryMarker.dictionary) }

    @inline(__always)
    mutating func nextKey(
        _ container: inout Container, in what: @autoclosure () -> String
    ) throws
        -> UnsafeRawBufferPointer?
    {
        guard container.position < container.count else { return nil }
        try move(to: view.element(container.position, from: container.start))
        guard kind() == .string else {
            throw error("expected a key in \(what()) (a string), found \(describeNext())", at: nil, context: [])
        }
        let key = try string()
        try move(to: view.element(container.count &+ container.position, from: container.start))
        container.position += 1
        return key
    }

    @inline(__always)
    mutating func beginArray() throws -> Container? { try contents(BinaryMarker.array) }

    @inline(__always)
    mutating func nextElement(_ container: inout Container, in what: @autoclosure () -> String) throws -> Bool {
        guard container.position < container.count else { return false }
        try move(to: view.element(container.position, from: container.start))
        container.position += 1
        return true
    }

    func count(of container: Container) -> Int? { container.count }

    /// An array's elements are its references, so a run can start at any of them: the rest divided
    /// evenly, in as many runs up to `runs` as have ``ClipboardWalker/minimumRun`` elements each.
    func divisions(of container: Container, runs wanted: Int) -> [ClipboardDivision<Self>] {
        let remaining = container.count - container.position
        let runs = min(wanted, remaining / ClipboardWalker<Self>.minimumRun)
        guard runs > 1 else { return [] }
        var divisions: [ClipboardDivision<Self>] = []
        for run in 1..<runs {
            let index = container.position + remaining / runs * run
            var copy = self
            copy.scratch = ByteBuffer(capacity: 256)
            // A reference out of range ends the divisions; the run before meets it and says so.
            guard (try? copy.move(to: view.element(index, from: container.start))) != nil else { break }
            var state = container
            state.position = index + 1
            divisions.append(ClipboardDivision(source: copy, container: state, place: index))
        }
        return divisions
    }

    func elementPlace(_ container: Container) -> Int { container.position - 1 }

    mutating func skipValue() throws {}

    /// A string's UTF-8 bytes: the object's own bytes when it is ASCII or UTF-8, else decoded from UTF-16
    /// into the scratch buffer.
    @inline(__always)
    mutating func string() throws -> UnsafeRawBufferPointer {
        let offset = currentOffset
        if view.bytes[offset] >> 4 == BinaryMarker.utf16String {
            let (start, count) = try view.contents(at: offset, type: BinaryMarker.utf16String)
            scratch.removeAll()
            let scratch = scratch
            guard view.transcodeUTF16(start, count, { scratch.append($0) }) else {
                throw view.failure("a UTF-16 string holds half of a surrogate pair", at: offset)
            }
            return scratch.bytes
        }
        let (start, count) = try view.contents(at: offset, type: BinaryMarker.asciiString)
        return view.bytes(start, count)
    }

    mutating func number() throws -> ClipboardNumber {
        let offset = currentOffset
        if view.bytes[offset] >> 4 == BinaryMarker.integer {
            guard case .integer(let integer) = try view.integer(at: offset) else { return .integer(nil) }
            return .integer(integer)
        }
        return .real(try view.real(at: offset, reference: current))
    }

    mutating func bool() throws -> Bool { view.bytes[currentOffset] == BinaryMarker.trueValue }

    mutating func data() throws -> Data {
        let (start, count) = try view.contents(at: currentOffset, type: BinaryMarker.data)
        return view.data(start, count)
    }

    mutating func date() throws -> Double {
        guard case .date(let seconds) = try view.object(at: currentOffset, reference: current) else {
            throw error("expected a date", at: nil, context: [])
        }
        return seconds
    }
}
