/// One thing a command accepts on its command line — a positional argument, an option or a flag — and
/// the property it sets.
///
/// Declare a command's arguments as a list of these in ``ParsableCommand/arguments``. The kind of
/// property decides how often the argument may be given:
///
/// | property type | `.positional` | `.option` |
/// | --- | --- | --- |
/// | `V` | required | optional; the initial value is the default |
/// | `V?` | optional | optional, `nil` if not given |
/// | `[V]` | zero or more (must come last) | repeatable, collected in order |
///
/// `V` is any ``ArgumentValue``. A flag sets a `Bool` property to `true`.
///
/// For example:
///
/// ```swift
/// static var arguments: [Argument<Convert>] {
///     [
///         .positional(\.input, name: "in", help: "The store to read, or - for standard input."),
///         .positional(\.output, name: "out", help: "The store to write."),
///         .option(\.format, name: "to", short: "t", valueName: "format", help: "The format to write."),
///         .option(\.follow, name: "follow", valueName: "relationship", help: "Copy along this relationship."),
///         .flag(\.force, name: "force", short: "f", help: "Replace OUT if it exists."),
///     ]
/// }
/// ```
public struct Argument<Command: ParsableCommand> {
    enum Kind: Equatable {
        case positional(Arity)
        case option(Arity)
        case flag
    }

    /// How many times an argument may be given: once (required operand, or option with a default),
    /// at most once, or any number of times.
    enum Arity: Equatable {
        case single
        case optional
        case repeated
    }

    let kind: Kind
    /// The long name of an option or flag, without `--`.
    let name: String
    /// The one-letter name of an option or flag, without `-`.
    let short: Character?
    /// What the help shows for the value, without the angle brackets: an option's `<format>`, a
    /// positional argument's `<in>`.
    let valueName: String
    let help: String
    let allowedValues: [String]
    let expectedValue: String
    /// The value the help shows as the default, from a fresh command, if there is one worth showing.
    let defaultDescription: (Command) -> String?
    /// Parses one word and stores it (sets it, or appends it to the collected values); `false` if the
    /// word is not a valid value.
    let store: (inout Command, String) -> Bool
    /// Empties a repeated argument's collection before its first value replaces the default.
    let clear: (inout Command) -> Void

    var isPositional: Bool {
        if case .positional = kind { return true }
        return false
    }

    var isRepeated: Bool {
        kind == .positional(.repeated) || kind == .option(.repeated)
    }
}

extension Argument {
    /// A required positional argument.
    ///
    /// - Parameters:
    ///   - keyPath: The property the value is stored in.
    ///   - name: The name the help and errors show, as `<name>`.
    ///   - help: A sentence or two for the help.
    public static func positional<Value: ArgumentValue>(
        _ keyPath: WritableKeyPath<Command, Value>, name: String, help: String = ""
    ) -> Argument {
        single(keyPath, kind: .positional(.single), name: name, short: nil, valueName: name, help: help)
    }

    /// An optional positional argument; the property stays `nil` when it is not given.
    public static func positional<Value: ArgumentValue>(
        _ keyPath: WritableKeyPath<Command, Value?>, name: String, help: String = ""
    ) -> Argument {
        optional(keyPath, kind: .positional(.optional), name: name, short: nil, valueName: name, help: help)
    }

    /// A variadic positional argument: every remaining operand, in order. Declare it last.
    public static func positional<Value: ArgumentValue>(
        _ keyPath: WritableKeyPath<Command, [Value]>, name: String, help: String = ""
    ) -> Argument {
        repeated(keyPath, kind: .positional(.repeated), name: name, short: nil, valueName: name, help: help)
    }

    /// An option with a default: `--name value`, `--name=value` or `-s value`.
    ///
    /// The property's initial value is the default, shown in the help. Given twice, the last one counts.
    ///
    /// - Parameters:
    ///   - keyPath: The property the value is stored in.
    ///   - name: The long name, without `--`.
    ///   - short: A one-letter name, without `-`.
    ///   - valueName: What the help calls the value, as `<valueName>`; the long name by default.
    ///   - help: A sentence or two for the help.
    public static func option<Value: ArgumentValue>(
        _ keyPath: WritableKeyPath<Command, Value>, name: String, short: Character? = nil,
        valueName: String? = nil, help: String = ""
    ) -> Argument {
        single(keyPath, kind: .option(.single), name: name, short: short, valueName: valueName ?? name, help: help)
    }

    /// An option without a default: the property stays `nil` when it is not given.
    public static func option<Value: ArgumentValue>(
        _ keyPath: WritableKeyPath<Command, Value?>, name: String, short: Character? = nil,
        valueName: String? = nil, help: String = ""
    ) -> Argument {
        optional(keyPath, kind: .option(.optional), name: name, short: short, valueName: valueName ?? name, help: help)
    }

    /// A repeatable option: `--follow a --follow b` collects `["a", "b"]`, replacing the initial value.
    public static func option<Value: ArgumentValue>(
        _ keyPath: WritableKeyPath<Command, [Value]>, name: String, short: Character? = nil,
        valueName: String? = nil, help: String = ""
    ) -> Argument {
        repeated(keyPath, kind: .option(.repeated), name: name, short: short, valueName: valueName ?? name, help: help)
    }

    /// A flag: `--name` or `-s` sets the property to `true`. Short flags combine: `-fq`.
    public static func flag(
        _ keyPath: WritableKeyPath<Command, Bool>, name: String, short: Character? = nil, help: String = ""
    ) -> Argument {
        Argument(
            kind: .flag, name: name, short: short, valueName: "", help: help, allowedValues: [], expectedValue: "",
            defaultDescription: { _ in nil },
            store: { command, _ in
                command[keyPath: keyPath] = true
                return true
            },
            clear: { _ in }
        )
    }

    private static func single<Value: ArgumentValue>(
        _ keyPath: WritableKeyPath<Command, Value>, kind: Kind, name: String, short: Character?, valueName: String,
        help: String
    ) -> Argument {
        Argument(
            kind: kind, name: name, short: short, valueName: valueName, help: help,
            allowedValues: Value.allowedArguments, expectedValue: Value.expectedArgument,
            defaultDescription: { command in
                guard kind == .option(.single) else { return nil }
                let text = command[keyPath: keyPath].argumentDescription
                return text.isEmpty ? nil : text
            },
            store: { command, word in
                guard let value = Value(argument: word) else { return false }
                command[keyPath: keyPath] = value
                return true
            },
            clear: { _ in })
    }

    private static func optional<Value: ArgumentValue>(
        _ keyPath: WritableKeyPath<Command, Value?>, kind: Kind, name: String, short: Character?, valueName: String,
        help: String
    ) -> Argument {
        Argument(
            kind: kind, name: name, short: short, valueName: valueName, help: help,
            allowedValues: Value.allowedArguments, expectedValue: Value.expectedArgument,
            defaultDescription: { _ in nil },
            store: { command, word in
                guard let value = Value(argument: word) else { return false }
                command[keyPath: keyPath] = value
                return true
            },
            clear: { _ in })
    }

    private static func repeated<Value: ArgumentValue>(
        _ keyPath: WritableKeyPath<Command, [Value]>, kind: Kind, name: String, short: Character?, valueName: String,
        help: String
    ) -> Argument {
        Argument(
            kind: kind, name: name, short: short, valueName: valueName, help: help,
            allowedValues: Value.allowedArguments, expectedValue: Value.expectedArgument,
            defaultDescription: { command in
                let values = command[keyPath: keyPath]
                return values.isEmpty ? nil : values.map(\.argumentDescription).joined(separator: ", ")
            },
            store: { command, word in
                guard let value = Value(argument: word) else { return false }
                command[keyPath: keyPath].append(value)
                return true
            },
            clear: { $0[keyPath: keyPath] = [] })
    }
}
