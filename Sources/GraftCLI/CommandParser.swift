/// Turns the words after a command's name into a command value, following its ``Argument`` table.
///
/// The rules, from left to right:
/// - `--name value` and `--name=value` set an option; `-s value` and `-svalue` do too.
/// - `--name` and `-s` set a flag; short flags combine (`-fq`), and the last letter of a cluster may be an
///   option taking the next word (`-ft xml`).
/// - An option's value is the next word unless that word starts with `-` (other than `-` itself): write a
///   value that starts with `-` as `--name=-value`.
/// - `--` ends the options: every word after it is an operand. `-` on its own is an operand (standard
///   input or output).
/// - `--help` or `-h` anywhere before `--` asks for help instead, and `--version` for the version where
///   the command has one, whatever else the line holds.
/// - Operands fill the positional arguments in declaration order.
struct CommandParser<Command: ParsableCommand> {
    let arguments: [Argument<Command>]
    /// Whether `--version` is recognized: the root command, when it has a version.
    let acceptsVersion: Bool

    init(acceptsVersion: Bool = false) {
        self.arguments = Command.arguments
        self.acceptsVersion = acceptsVersion
    }

    /// Parses `words` into a command. It is not yet validated.
    ///
    /// - Throws: ``UsageError`` for a word the command does not accept, ``HelpRequest`` or
    ///   ``VersionRequest`` when one is asked for.
    func parse(_ words: [String]) throws -> Command {
        let optionWords = words.prefix { $0 != "--" }
        if optionWords.contains("--help") || optionWords.contains("-h") { throw HelpRequest() }
        if acceptsVersion && optionWords.contains("--version") { throw VersionRequest() }

        var state = State(arguments: arguments)
        var operands: [String] = []
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || !isOptionLike(word) {
                operands.append(word)
            } else if word == "--" {
                optionsEnded = true
            } else if word.hasPrefix("--") {
                try parseLongOption(word, words: words, index: &index, state: &state)
            } else {
                try parseShortOptions(word, words: words, index: &index, state: &state)
            }
        }
        try state.storeOperands(operands)
        return state.command
    }

    private func parseLongOption(_ word: String, words: [String], index: inout Int, state: inout State) throws {
        let body = word.dropFirst(2)
        let name = String(body.prefix { $0 != "=" })
        let inlineValue = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
        let builtIns = acceptsVersion ? ["help", "version"] : ["help"]
        if builtIns.contains(name) {
            // Without a value, the scan in `parse(_:)` has already handled them.
            throw UsageError("flag '--\(name)' does not take a value")
        }
        guard let position = arguments.firstIndex(where: { !$0.isPositional && $0.name == name }) else {
            let candidates = arguments.filter { !$0.isPositional }.map(\.name) + builtIns
            let suggestion = didYouMean(name, among: candidates).map { "; did you mean '--\($0)'?" } ?? ""
            throw UsageError("unknown option '--\(name)'" + suggestion)
        }
        let argument = arguments[position]
        if argument.kind == .flag {
            if inlineValue != nil { throw UsageError("flag '--\(name)' does not take a value") }
            _ = argument.store(&state.command, "")
            return
        }
        let spelling = "--\(name) <\(argument.valueName)>"
        let value = try inlineValue ?? takeValue(words, &index, for: spelling)
        try state.store(value, at: position, spelling: spelling)
    }

    private func parseShortOptions(_ word: String, words: [String], index: inout Int, state: inout State) throws {
        var letters = word.dropFirst()
        while let letter = letters.popFirst() {
            if letter == "h" { throw HelpRequest() }
            guard let position = arguments.firstIndex(where: { !$0.isPositional && $0.short == letter }) else {
                throw UsageError("unknown option '-\(letter)'" + (word.count > 2 ? " in '\(word)'" : ""))
            }
            let argument = arguments[position]
            if argument.kind == .flag {
                _ = argument.store(&state.command, "")
                continue
            }
            let spelling = "-\(letter) <\(argument.valueName)>"
            let value = letters.isEmpty ? try takeValue(words, &index, for: spelling) : String(letters)
            try state.store(value, at: position, spelling: spelling)
            return
        }
    }

    private func takeValue(_ words: [String], _ index: inout Int, for spelling: String) throws -> String {
        guard index < words.count, !isOptionLike(words[index]) else {
            throw UsageError("missing value for '\(spelling)'")
        }
        index += 1
        return words[index - 1]
    }

    /// The command being filled in, and which repeated arguments have replaced their defaults.
    private struct State {
        let arguments: [Argument<Command>]
        var command = Command()
        var started: Set<Int> = []

        init(arguments: [Argument<Command>]) {
            self.arguments = arguments
        }

        mutating func store(_ word: String, at position: Int, spelling: String) throws {
            let argument = arguments[position]
            if argument.isRepeated && started.insert(position).inserted {
                argument.clear(&command)
            }
            guard argument.store(&command, word) else {
                throw UsageError("invalid value '\(word)' for '\(spelling)': expected \(argument.expectedValue)")
            }
        }

        mutating func storeOperands(_ operands: [String]) throws {
            var remaining = operands[...]
            for (position, argument) in arguments.enumerated() {
                let spelling = "<\(argument.valueName)>"
                switch argument.kind {
                case .positional(.single):
                    guard let word = remaining.popFirst() else { throw UsageError("missing argument '\(spelling)'") }
                    try store(word, at: position, spelling: spelling)
                case .positional(.optional):
                    if let word = remaining.popFirst() { try store(word, at: position, spelling: spelling) }
                case .positional(.repeated):
                    while let word = remaining.popFirst() { try store(word, at: position, spelling: spelling) }
                case .option, .flag:
                    continue
                }
            }
            if let extra = remaining.first { throw UsageError("unexpected argument '\(extra)'") }
        }
    }
}

/// Whether a word is an option (or `--`) rather than an operand: it starts with `-` and is not just `-`.
func isOptionLike(_ word: String) -> Bool {
    word.hasPrefix("-") && word != "-"
}
