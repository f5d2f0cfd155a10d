import GraftCLI
import GraftCore

// Commands that exist only for these tests, shaped like the ones `graft` will have, so the parser and the
// help are exercised on every kind of argument without the real binary carrying stand-ins.

/// A root command like `graft`'s, with the test commands below it.
struct TestRoot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graft",
        abstract: "Work with Core Data object graphs: models, stores, conversion, copy and paste.",
        version: "graft 9.8.7",
        subcommands: [
            FakeConvert.self, FakeCopy.self, FakeFixtures.self, FakeModel.self, FakeFail.self, HelpCommand.self,
        ])
}

enum StoreFormat: String, CaseIterable, ArgumentValue {
    case sqlite, xml, binary
}

/// `convert <in> <out>` with an enum option, an optional option, an integer option, a repeatable option
/// and two flags.
struct FakeConvert: ParsableCommand, Equatable {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert a store from one format to another.",
        discussion: """
            Reads the store IN and writes every object in it to OUT in the format given by --to. The model \
            comes from IN's metadata unless --model names one.

            Either file may be - for standard input or output:

                graft convert - Company.xml --to xml < Company.sqlite
            """,
        examples: [
            CommandExample("graft convert Company.sqlite Company.xml --to xml", "Write an XML copy of a SQLite store."),
            CommandExample(
                "graft convert -f --follow employees Old.binary New.sqlite",
                "Replace New.sqlite with a SQLite copy of a binary store, following the employees relationship, "
                    + "which is an explanation long enough to wrap."),
        ])

    static var arguments: [Argument<FakeConvert>] {
        [
            .positional(\.input, name: "in", help: "The store to read, or - for standard input."),
            .positional(\.output, name: "out", help: "The store to write, or - for standard output."),
            .option(\.format, name: "to", short: "t", valueName: "format", help: "The format to write."),
            .option(\.model, name: "model", short: "m", valueName: "path", help: "The model to read IN with."),
            .option(
                \.batchSize, name: "batch-size", short: "b", valueName: "count",
                help: "How many objects to write per transaction."),
            .option(
                \.follow, name: "follow", valueName: "relationship",
                help: "Copy the objects along this relationship too; give it once for each relationship."),
            .flag(\.force, name: "force", short: "f", help: "Replace OUT if it exists."),
            .flag(\.quiet, name: "quiet", short: "q", help: "Print nothing but errors."),
        ]
    }

    var input: PathArgument = ""
    var output: PathArgument = ""
    var format = StoreFormat.sqlite
    var model: PathArgument?
    var batchSize = 1000
    var follow: [String] = []
    var force = false
    var quiet = false

    mutating func validate() throws {
        if batchSize < 1 { throw UsageError("'--batch-size' must be at least 1") }
        if input == output && !input.isStandardStream { throw UsageError("<in> and <out> must be different files") }
    }

    func run(_ context: CommandContext) throws {
        if !quiet { context.printError("converting \(input)") }
        context.print("\(input) -> \(output) as \(format.rawValue), following \(follow), force \(force)")
    }
}

/// `copy <store> [<out>]`: an optional positional argument and an optional option.
struct FakeCopy: ParsableCommand, Equatable {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy objects from a store to a clipboard document.")

    static var arguments: [Argument<FakeCopy>] {
        [
            .positional(\.store, name: "store", help: "The store to copy from."),
            .positional(\.output, name: "out", help: "Where to write the clipboard; standard output if left out."),
            .option(\.predicate, name: "where", valueName: "predicate", help: "Which objects to copy."),
            .option(\.ratio, name: "ratio", help: "The share of objects to copy."),
        ]
    }

    var store: PathArgument = ""
    var output: PathArgument?
    var predicate: String?
    var ratio = 1.0
}

/// `fixtures <model> [<entities> ...]`: a variadic positional argument and a repeatable option with a
/// default.
struct FakeFixtures: ParsableCommand, Equatable {
    static let configuration = CommandConfiguration(
        commandName: "fixtures",
        abstract: "Generate test objects from a model.")

    static var arguments: [Argument<FakeFixtures>] {
        [
            .positional(\.model, name: "model", help: "The model to generate objects for."),
            .positional(\.entities, name: "entities", help: "The entities to generate; all if none are named."),
            .option(\.count, name: "count", short: "n", help: "How many objects of each entity."),
            .option(\.seed, name: "seed", help: "The random seed."),
            .option(\.formats, name: "format", valueName: "format", help: "The formats to write."),
        ]
    }

    var model: PathArgument = ""
    var entities: [String] = []
    var count = 10
    var seed: Int?
    var formats: [StoreFormat] = [.sqlite, .xml]
}

/// `model`: a group of subcommands below the root.
struct FakeModel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Work with models.",
        subcommands: [FakeModelHash.self])
}

/// `model hash <model>`.
struct FakeModelHash: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash",
        abstract: "Print the version hashes of a model's entities.")

    static var arguments: [Argument<FakeModelHash>] {
        [.positional(\.model, name: "model", help: "The model to read.")]
    }

    var model: PathArgument = ""

    func run(_ context: CommandContext) throws {
        context.print("hashes of \(model)")
    }
}

/// `fail`: fails at run time in the way its options ask.
struct FakeFail: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fail",
        abstract: "Fail at run time.")

    static var arguments: [Argument<FakeFail>] {
        [
            .option(\.status, name: "status", help: "Exit with this status instead of throwing an error."),
            .flag(\.other, name: "other", help: "Throw an error that is not a GraftError."),
        ]
    }

    struct OtherError: Error, CustomStringConvertible {
        var description: String { "something else went wrong" }
    }

    var status: Int?
    var other = false

    func run(_ context: CommandContext) throws {
        context.print("started")
        if let status {
            context.printError("failing with status \(status)")
            throw ExitCode(Int32(status))
        }
        if other { throw OtherError() }
        throw GraftError(
            .fileNotFound, "there is no such file", context: [.file("Company.sqlite"), .entity("Employee")],
            underlying: [GraftError(.io, "first cause"), GraftError(.io, "second cause")])
    }
}

/// Runs `words` (without the program name) under ``TestRoot`` with captured output.
func runTestRoot(_ words: [String]) -> (status: Int32, output: String, error: String) {
    let context = CommandContext.capturing()
    let status = TestRoot.main(words, context: context)
    return (status, context.capturedOutput ?? "", context.capturedErrorOutput ?? "")
}
