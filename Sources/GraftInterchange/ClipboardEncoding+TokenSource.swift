import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// What a clipboard encoding's bytes look like to the one document walker (``ClipboardWalker``): a
/// stream of tokens — dictionaries and arrays, their keys, and scalars — with a location for errors.
///
/// An encoding's source knows its syntax only: it never knows a member's name, a check of the document,
/// or what a message says beyond naming its own token kinds. The walker owns the document's shape, every
/// check and every message, once.
///
/// A source's *next value* is the value it is positioned at: after ``nextKey(_:in:)`` the key's value,
/// after ``nextElement(_:in:)`` the element. Reading a scalar, starting a container or skipping consumes
/// it. The walker asks ``kind()`` before reading a scalar and reads only the kind it was told.
protocol ClipboardTokenSource: ClipboardLocating, SendableMetatype {
    /// The state of a dictionary or array being read (whether the first member has been read, or the
    /// position among a binary container's references).
    associatedtype Container
    /// A saved position of a value, to come back to it (values that need something read later).
    associatedtype Mark

    static var encoding: ClipboardEncoding { get }
    /// How messages name a dictionary's entries: "member" or "key".
    static var memberWord: String { get }
    /// How messages name a kind of token: "an object", "<dict>", "a dictionary", ….
    static func form(_ kind: ClipboardTokenKind) -> String
    /// How messages describe the forms a value of `type` may have.
    static func expected(_ type: AttributeType) -> String

    /// The offset of the next value, for errors.
    var offset: Int { mutating get }
    /// The kind of the next value.
    mutating func kind() -> ClipboardTokenKind
    /// The next value, for messages: "a string", "<integer>", "the end of the document (is it truncated?)".
    mutating func describeNext() -> String

    /// Reads up to the top dictionary and starts it.
    mutating func beginDocument() throws -> Container
    /// Checks that nothing but what the encoding allows follows the top dictionary.
    mutating func endDocument() throws
    /// Starts the next value as a dictionary; nil (nothing consumed) when it is something else.
    mutating func beginDictionary() throws -> Container?
    /// The next key's bytes (valid until the next call), with the source at its value; nil at the end.
    mutating func nextKey(
        _ container: inout Container, in what: @autoclosure () -> String
    ) throws
        -> UnsafeRawBufferPointer?
    /// Starts the next value as an array; nil (nothing consumed) when it is something else.
    mutating func beginArray() throws -> Container?
    /// Whether another element follows, with the source at it.
    mutating func nextElement(_ container: inout Container, in what: @autoclosure () -> String) throws -> Bool
    /// The number of elements of an array, when the encoding says it up front.
    func count(of container: Container) -> Int?
    /// Skips the next value, checking what the encoding can check of it.
    mutating func skipValue() throws

    /// A string's UTF-8 bytes (valid until the next call); the next value is a string.
    mutating func string() throws -> UnsafeRawBufferPointer
    /// A number; the next value is an integer, a real or a number.
    mutating func number() throws -> ClipboardNumber
    /// A Boolean; the next value is one.
    mutating func bool() throws -> Bool
    /// Data; the next value is data.
    mutating func data() throws -> Data
    /// A date as seconds since 2001-01-01T00:00:00Z; the next value is a date.
    mutating func date() throws -> Double

    /// The position of the next value.
    var mark: Mark { get }
    /// Goes to a position `mark` saved.
    mutating func seek(_ mark: Mark)
    /// How far into the bytes reading has come, so that pages behind it can be released.
    var consumed: Int { get }
    /// Where `offset` is, for an error's context: the line and offset, or the offset alone.
    func locationContext(_ offset: Int) -> [GraftError.Location]

    // Reading an array's elements in runs on several threads (see ``ClipboardWalker``).

    /// Up to `runs - 1` places that divide the elements after the next of the array `container` into
    /// runs, in order: each a copy of the source at an element (as ``nextElement(_:in:)`` leaves it) that
    /// shares no scratch buffer with the original, the container's state there, and the element's
    /// ``elementPlace(_:)``. A source that cannot tell where its elements are for certain gives places
    /// that are likely elements; the walker keeps a run only when the run before it ends exactly at its
    /// place. None by default, and for arrays too short to be worth dividing.
    mutating func divisions(of container: Container, runs: Int) -> [ClipboardDivision<Self>]
    /// Where the element the source is at lies (after ``nextElement(_:in:)``), growing along the array.
    mutating func elementPlace(_ container: Container) -> Int
}

/// Where a later run of an array's elements starts (see ``ClipboardTokenSource/divisions(of:runs:)``).
struct ClipboardDivision<Source: ClipboardTokenSource> {
    var source: Source
    var container: Source.Container
    let place: Int
}

extension ClipboardTokenSource {
    func divisions(of container: Container, runs: Int) -> [ClipboardDivision<Self>] { [] }
    mutating func elementPlace(_ container: Container) -> Int { offset }
}

/// What gives errors their location: the token sources, and the XML scanner that Graft XML is read with.
protocol ClipboardLocating {
    /// A `malformedInput` error whose message starts with the document's name, located at `offset` (the
    /// current token by default).
    func error(_ message: String, at offset: Int?, context: [GraftError.Location]) -> GraftError
}

extension XMLScanner: ClipboardLocating {}

/// The kinds of token a source yields.
enum ClipboardTokenKind {
    case dictionary, array, string, integer, real, bool, data, date
    /// A number that may be an integer or a real (JSON, whose numbers do not say).
    case number
    /// Anything else: `null`, an element the encoding does not use, the end of the data.
    case other
}

/// A number as a source has it: the text of a number in the text encodings, the value in binary ones.
enum ClipboardNumber {
    /// Text, and whether it is written as an integer.
    case text(UnsafeRawBufferPointer, isInteger: Bool)
    /// An integer; nil when it does not fit in 64 signed bits.
    case integer(Int64?)
    case real(Double)
}

extension ClipboardTokenSource {
    /// `error` with the encoding's name and the location of `offset` added: for the shared checks, whose
    /// errors know neither.
    func located(_ error: GraftError, at offset: Int) -> GraftError {
        var located = error
        located.message = "\(Self.encoding.documentName): " + error.message
        located.context = locationContext(offset) + error.context
        return located
    }
}
