/// A type an option or positional argument can hold: made from one command-line word.
///
/// `String`, `Int`, `Double` and ``PathArgument`` conform. So does any `enum` with `String` raw values
/// that is `CaseIterable`, once it declares the conformance: its raw values are the allowed words, listed
/// in the help and in the error for a word that is not one of them.
///
/// For example:
///
/// ```swift
/// enum StoreFormat: String, CaseIterable, ArgumentValue {
///     case sqlite, xml, binary
/// }
/// ```
public protocol ArgumentValue {
    /// The value a command-line word stands for, or `nil` if the word is not a valid value.
    init?(argument: String)

    /// The only words allowed, in the order the help lists them, or empty if any word may do.
    static var allowedArguments: [String] { get }

    /// What a valid word looks like, completing "expected …" in the error for an invalid one.
    static var expectedArgument: String { get }

    /// The value written as a command-line word, as the help shows a default.
    var argumentDescription: String { get }
}

extension ArgumentValue {
    public static var allowedArguments: [String] { [] }

    public var argumentDescription: String { String(describing: self) }
}

extension ArgumentValue where Self: CaseIterable, Self: RawRepresentable, RawValue == String {
    public init?(argument: String) {
        self.init(rawValue: argument)
    }

    public static var allowedArguments: [String] { allCases.map(\.rawValue) }

    public static var expectedArgument: String {
        "one of " + allowedArguments.joined(separator: ", ")
    }

    public var argumentDescription: String { rawValue }
}

extension String: ArgumentValue {
    public init?(argument: String) {
        self = argument
    }

    public static var expectedArgument: String { "a string" }
}

extension Int: ArgumentValue {
    public init?(argument: String) {
        self.init(argument, radix: 10)
    }

    public static var expectedArgument: String { "an integer" }
}

extension Double: ArgumentValue {
    public init?(argument: String) {
        guard let value = Double(argument), value.isFinite else { return nil }
        self = value
    }

    public static var expectedArgument: String { "a number" }
}

/// A file or folder named on the command line, or `-` for standard input or output.
///
/// The path is kept as typed, relative paths included; an empty word is not a path.
///
/// For example:
///
/// ```swift
/// var input: PathArgument = "-"
/// ...
/// let data = input.isStandardStream ? readStandardInput() : try read(input.path)
/// ```
public struct PathArgument: ArgumentValue, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The path as typed.
    public var path: String

    public init(_ path: String) {
        self.path = path
    }

    public init(stringLiteral path: String) {
        self.path = path
    }

    public init?(argument: String) {
        guard !argument.isEmpty else { return nil }
        self.path = argument
    }

    public static var expectedArgument: String { "a path" }

    /// Whether the path is `-`, which stands for standard input (or output, where one is written).
    public var isStandardStream: Bool { path == "-" }

    public var description: String { path }
}
