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
        valued(.positional(.single), name: name, short: nil, valueName: name, help: help) {
            $0[keyPath: keyPath] = $1
        }
    }

    /// An optional positional argument; the property stays `nil` when it is not given.
    public static func positional<Value: ArgumentValue>(
        _ keyPath: WritableKeyPath<Command, Value?>, name: String, help: String = ""
    ) -> Argument {
        valued(.positional(.optional), name: name, short: nil, valueName: name, help: help) {
            $0[keyPath: keyPath] = $1
        }
    }

    /// A variadic positional argument: every remaining operand, in order. Declare it last.
    public static func positional<Value: ArgumentValue>(
        _ keyPath: WritableKeyPath<Command, [Value]>, name: String, help: String = ""
    ) -> Argument {
        valued(
            .positional(.repeated), name: name, short: nil, valueName: name, help: help,
            clear: { $0[keyPath: keyPath] = [] }, store: { $0[keyPath: keyPath].append($1) })
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
        valued(
            .option(.single), name: name, short: short, valueName: valueName ?? name, help: help,
            defaultDescription: { command in
                let text = command[keyPath: keyPath].argumentDescription
                return text.isEmpty ? nil : text
            },
            store: { $0[keyPath: keyPath] = $1 })
    }

    /// An option without a default: the property stays `nil` when it is not given.
    public static func option<Value: ArgumentValue>(
        _ keyPath: WritableKeyPath<Command, Value?>, name: String, short: Character? = nil,
        valueName: String? = nil, help: String = ""
    ) -> Argument {
        valued(.option(.optional), name: name, short: short, valueName: valueName ?? name, help: help) {
            $0[keyPath: keyPath] = $1
        }
    }

    /// A repeatable option: `--follow a --follow b` collects `["a", "b"]`, replacing the initial value.
    public static func option<Value: ArgumentValue>(
        _ keyPath: WritableKeyPath<Command, [Value]>, name: String, short: Character? = nil,
        valueName: String? = nil, help: String = ""
    ) -> Argument {
        valued(
            .option(.repeated), name: name, short: short, valueName: valueName ?? name, help: help,
            defaultDescription: { command in
                let values = command[keyPath: keyPath]
                return values.isEmpty ? nil : values.map(\.argumentDescription).joined(separator: ", ")
            },
            clear: { $0[keyPath: keyPath] = [] }, store: { $0[keyPath: keyPath].append($1) })
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
            clear: { _ in })
    }

    /// An argument that takes values of type `Value`, parsing each word and handing it to `store`.
    private static func valued<Value: ArgumentValue>(
        _ kind: Kind, name: String, short: Character?, valueName: String, help: String,
        defaultDescription: @escaping (Command) -> String? = { _ in nil },
        clear: @escaping (inout Command) -> Void = { _ in },
        store: @escaping (inout Command, Value) -> Void
    ) -> Argument {
        Argument(
            kind: kind, name: name, short: short, valueName: valueName, help: help,
            allowedValues: Value.allowedArguments, expectedValue: Value.expectedArgument,
            defaultDescription: defaultDescription,
            store: { command, word in
                guard let value = Value(argument: word) else { return false }
                store(&command, value)
                return true
            },
            clear: clear)
    }
}
