/// Runs a command line from the root command down: finds the subcommand, parses, validates and runs it,
/// and turns the outcome into what is printed and the exit status.
///
/// | outcome | printed | status |
/// | --- | --- | --- |
/// | the command ran | what it wrote | 0 |
/// | `--help`, `-h`, `help <subcommand>`, a group on its own | the help, on standard output | 0 |
/// | `--version` | the version, on standard output | 0 |
/// | a ``UsageError`` | `error: …`, the usage and where to find help, on standard error | 64 |
/// | an ``ExitCode`` | nothing more | its status |
/// | any other error, such as a `GraftError` | `error: ` and its description, on standard error | 1 |
struct CommandRunner {
    let root: any ParsableCommand.Type
    let context: CommandContext

    func run(_ words: [String]) -> Int32 {
        var path: [any ParsableCommand.Type] = [root]
        do {
            let rest = try Self.resolve(words[...], path: &path)
            let command = try path[path.count - 1].parseAndValidate(Array(rest), acceptsVersion: path.count == 1)
            if let help = command as? HelpCommand {
                path = [root]
                let names = try Self.resolve(help.subcommands[...], path: &path)
                if let extra = names.first { throw UsageError("unexpected argument '\(extra)'") }
                throw HelpRequest()
            }
            try command.run(context)
            return ExitCode.success.rawValue
        } catch let error as UsageError {
            let formatter = HelpFormatter(path: path)
            context.printError("error: " + error.message)
            context.printError(formatter.usage(prefix: "usage: "))
            context.printError("See '\(formatter.commandLine) --help'.")
            return ExitCode.usageError.rawValue
        } catch is HelpRequest {
            context.print(HelpFormatter(path: path).help, terminator: "")
            return ExitCode.success.rawValue
        } catch is VersionRequest {
            context.print(root.configuration.version ?? "")
            return ExitCode.success.rawValue
        } catch let exit as ExitCode {
            return exit.rawValue
        } catch {
            context.printError("error: \(error)")
            return ExitCode.failure.rawValue
        }
    }

    /// Follows subcommand names from the start of `words` down the tree, appending each to `path`, and
    /// returns the words after them. Stops at the first option, or at a command without subcommands.
    static func resolve(
        _ words: ArraySlice<String>, path: inout [any ParsableCommand.Type]
    ) throws -> ArraySlice<String> {
        var words = words
        while let word = words.first, !isOptionLike(word) {
            let subcommands = path[path.count - 1].configuration.subcommands
            if subcommands.isEmpty { break }
            guard let next = subcommands.first(where: { $0.configuration.commandName == word }) else {
                let names = subcommands.map { $0.configuration.commandName }
                let suggestion = didYouMean(word, among: names).map { "; did you mean '\($0)'?" } ?? ""
                throw UsageError("unknown subcommand '\(word)'" + suggestion)
            }
            path.append(next)
            words.removeFirst()
        }
        return words
    }
}

extension ParsableCommand {
    /// Parses `words` (after the command's name) and validates the result.
    static func parseAndValidate(_ words: [String], acceptsVersion: Bool) throws -> Self {
        let version = acceptsVersion && configuration.version != nil
        var command = try CommandParser<Self>(acceptsVersion: version).parse(words)
        try command.validate()
        return command
    }

    /// Runs this command as the root of a command line and returns the exit status.
    ///
    /// - Parameters:
    ///   - arguments: The words after the program's name.
    ///   - context: Where to write; ``CommandContext/standard()`` for the process's own streams.
    /// - Returns: 0 on success (help and version included), 64 for a mistake on the command line, 1 when
    ///   the command failed, or the status of an ``ExitCode`` it threw.
    public static func main(_ arguments: [String], context: CommandContext) -> Int32 {
        let status = CommandRunner(root: self, context: context).run(arguments)
        context.output.flush()
        context.errorOutput.flush()
        return status
    }

    /// Parses and validates `arguments` as this command's own (the words after its name), without
    /// running it: for tests.
    ///
    /// - Throws: ``UsageError`` for a mistake on the command line, or whatever ``validate()`` throws.
    ///   Asking for help is a `UsageError` here too; `--version` is not recognized.
    public static func parse(_ arguments: [String]) throws -> Self {
        do {
            return try parseAndValidate(arguments, acceptsVersion: false)
        } catch is HelpRequest {
            throw UsageError("help was requested")
        }
    }
}
