/// The help and usage texts of a command, generated from its configuration and argument table.
///
/// The help has these sections, each left out when it would be empty: `OVERVIEW` (abstract and
/// discussion), `USAGE`, `ARGUMENTS`, `OPTIONS`, `SUBCOMMANDS` and `EXAMPLES`. Lines are at most
/// ``width`` characters, except words that are longer on their own; a label too long for its column
/// puts its description on the next line.
struct HelpFormatter {
    /// The width help text is wrapped to.
    static let width = 80
    /// Where descriptions start in the ARGUMENTS, OPTIONS and SUBCOMMANDS lists.
    static let descriptionColumn = 26

    /// Stands for a space that wrapping must not break at, until the description is wrapped.
    private static let unbreakableSpace: Character = "\u{1}"

    private static func unbreakable(_ text: String) -> String {
        String(text.map { $0 == " " ? unbreakableSpace : $0 })
    }

    /// The command and the commands above it, the root first.
    let path: [any ParsableCommand.Type]

    private var command: any ParsableCommand.Type { path[path.count - 1] }
    private var configuration: CommandConfiguration { command.configuration }

    /// The command as typed: `graft convert`.
    var commandLine: String {
        path.map { $0.configuration.commandName }.joined(separator: " ")
    }

    /// The usage line, wrapped, after `prefix` (`USAGE: ` in the help, `usage: ` after an error).
    func usage(prefix: String) -> String {
        let parts = [prefix + commandLine] + HelpFormatter.usageParts(command)
        return TextWrapping.hanging(parts, width: Self.width, indent: prefix.count)
    }

    /// The whole help text, ending with a newline.
    var help: String {
        var sections: [String] = []
        if !configuration.abstract.isEmpty {
            sections.append(
                TextWrapping.wrap("OVERVIEW: " + configuration.abstract, width: Self.width).joined(separator: "\n"))
        }
        if !configuration.discussion.isEmpty {
            sections.append(TextWrapping.wrapParagraphs(configuration.discussion, width: Self.width))
        }
        sections.append(usage(prefix: "USAGE: "))

        let rows = HelpFormatter.rows(command, acceptsVersion: path.count == 1 && configuration.version != nil)
        if !rows.arguments.isEmpty {
            sections.append("ARGUMENTS:\n" + rows.arguments.map(Self.row).joined(separator: "\n"))
        }
        sections.append("OPTIONS:\n" + rows.options.map(Self.row).joined(separator: "\n"))
        if !configuration.subcommands.isEmpty {
            let list = configuration.subcommands.map {
                Self.row(label: $0.configuration.commandName, description: $0.configuration.abstract)
            }
            sections.append(
                "SUBCOMMANDS:\n" + list.joined(separator: "\n") + "\n\n"
                    + "  See '\(commandLine) <subcommand> --help' for detailed help.")
        }
        if !configuration.examples.isEmpty {
            let examples = configuration.examples.map { example in
                TextWrapping.wrap(example.explanation, width: Self.width - 2).map { "  " + $0 }
                    .joined(separator: "\n") + "\n    " + example.commandLine
            }
            sections.append("EXAMPLES:\n" + examples.joined(separator: "\n\n"))
        }
        return sections.joined(separator: "\n\n") + "\n"
    }

    /// The words after the command's name in its usage: options first, in declaration order, then
    /// operands; or `<subcommand>` for a group.
    private static func usageParts<Command: ParsableCommand>(_ command: Command.Type) -> [String] {
        let arguments = Command.arguments
        var parts: [String] = []
        for argument in arguments {
            switch argument.kind {
            case .flag: parts.append("[--\(argument.name)]")
            case .option(.repeated): parts.append("[--\(argument.name) <\(argument.valueName)> ...]")
            case .option: parts.append("[--\(argument.name) <\(argument.valueName)>]")
            case .positional: continue
            }
        }
        for argument in arguments {
            switch argument.kind {
            case .positional(.single): parts.append("<\(argument.valueName)>")
            case .positional(.optional): parts.append("[<\(argument.valueName)>]")
            case .positional(.repeated): parts.append("[<\(argument.valueName)> ...]")
            case .option, .flag: continue
            }
        }
        if !Command.configuration.subcommands.isEmpty { parts.append("<subcommand>") }
        return parts
    }

    /// The ARGUMENTS and OPTIONS lists as label and description pairs, built-in options last.
    private static func rows<Command: ParsableCommand>(
        _ command: Command.Type, acceptsVersion: Bool
    ) -> (arguments: [(String, String)], options: [(String, String)]) {
        let defaults = Command()
        var arguments: [(String, String)] = []
        var options: [(String, String)] = []
        for argument in Command.arguments {
            var notes: [String] = []
            if !argument.allowedValues.isEmpty {
                notes.append(unbreakable("values: ") + argument.allowedValues.joined(separator: ", "))
            }
            if let value = argument.defaultDescription(defaults) {
                notes.append(unbreakable("default: " + value))
            }
            let description =
                notes.isEmpty
                ? argument.help
                : argument.help + (argument.help.isEmpty ? "" : " ") + "(" + notes.joined(separator: "; ") + ")"
            let short = argument.short.map { "-\($0), " } ?? ""
            switch argument.kind {
            case .positional:
                arguments.append(("<\(argument.valueName)>", description))
            case .option:
                options.append(("\(short)--\(argument.name) <\(argument.valueName)>", description))
            case .flag:
                options.append(("\(short)--\(argument.name)", description))
            }
        }
        if acceptsVersion { options.append(("--version", "Show the version.")) }
        options.append(("-h, --help", "Show help information."))
        return (arguments, options)
    }

    private static func row(_ pair: (String, String)) -> String {
        row(label: pair.0, description: pair.1)
    }

    /// `label` indented by two spaces, and `description` wrapped in the description column.
    private static func row(label: String, description: String) -> String {
        let head = "  " + label
        let lines =
            description.isEmpty
            ? []
            : TextWrapping.wrap(description, width: width - descriptionColumn).map {
                String($0.map { $0 == unbreakableSpace ? " " : $0 })
            }
        guard let first = lines.first else { return head }
        let indent = String(repeating: " ", count: descriptionColumn)
        var text: String
        var rest = lines[...]
        if head.count + 2 <= descriptionColumn {
            text = head + String(repeating: " ", count: descriptionColumn - head.count) + first
            rest = rest.dropFirst()
        } else {
            text = head
        }
        for line in rest { text += "\n" + (line.isEmpty ? "" : indent + line) }
        return text
    }
}
