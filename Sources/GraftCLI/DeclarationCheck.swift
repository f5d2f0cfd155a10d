/// Mistakes in how commands are declared, which the parser would otherwise trip over at run time.
///
/// Tests call it on every command tree; each problem names the command and the argument.
enum DeclarationCheck {
    /// Every problem in `root` and the commands below it, in a stable order.
    static func problems(in root: any ParsableCommand.Type) -> [String] {
        var problems: [String] = []
        check(root, path: root.configuration.commandName, isRoot: true, into: &problems)
        return problems
    }

    private static func check<Command: ParsableCommand>(
        _ command: Command.Type, path: String, isRoot: Bool, into problems: inout [String]
    ) {
        let configuration = Command.configuration
        let arguments = Command.arguments
        func problem(_ text: String) { problems.append("\(path): \(text)") }

        if configuration.commandName.isEmpty || configuration.commandName.contains(" ")
            || isOptionLike(configuration.commandName)
        {
            problem("command name '\(configuration.commandName)' must be one word not starting with '-'")
        }
        if !configuration.subcommands.isEmpty && !arguments.isEmpty {
            problem("a command with subcommands takes no arguments of its own")
        }

        var longNames: Set<String> = isRoot && configuration.version != nil ? ["help", "version"] : ["help"]
        var shortNames: Set<Character> = ["h"]
        var positionalNames: Set<String> = []
        var lastArity: Argument<Command>.Arity?
        for argument in arguments {
            if argument.isPositional {
                guard case .positional(let arity) = argument.kind else { continue }
                if !positionalNames.insert(argument.valueName).inserted {
                    problem("positional argument '<\(argument.valueName)>' is declared twice")
                }
                switch (lastArity, arity) {
                case (.repeated?, _):
                    problem("'<\(argument.valueName)>' follows a variadic argument")
                case (.optional?, .single):
                    problem("required '<\(argument.valueName)>' follows an optional argument")
                default: break
                }
                lastArity = arity
            } else {
                if argument.name.isEmpty || argument.name.hasPrefix("-") || argument.name.contains("=")
                    || argument.name.contains(" ")
                {
                    problem("option name '\(argument.name)' must be a word without '-' at the start, '=' or spaces")
                }
                if !longNames.insert(argument.name).inserted {
                    problem("option '--\(argument.name)' is declared twice or is built in")
                }
                if let short = argument.short, short == "-" || short == "=" || !shortNames.insert(short).inserted {
                    problem(
                        "short name '-\(short)' of '--\(argument.name)' is declared twice, built in or not a letter")
                }
            }
        }

        var subcommandNames: Set<String> = []
        let subcommands = configuration.subcommands.filter { subcommand in
            let name = subcommand.configuration.commandName
            if subcommandNames.insert(name).inserted { return true }
            problem("subcommand '\(name)' is listed twice")
            return false
        }
        for subcommand in subcommands {
            check(subcommand, path: path + " " + subcommand.configuration.commandName, isRoot: false, into: &problems)
        }
    }
}
