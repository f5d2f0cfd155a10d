import Foundation
import Graft

/// `graft fixtures`: a valid, reproducible object graph generated from a model.
struct FixturesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fixtures",
        abstract: "Generate a valid object graph from a model, the same for the same seed, as a store or a clipboard.",
        discussion: """
            Every generated object satisfies every rule of the model: required values, ranges, lengths, \
            patterns, uniqueness constraints, relationship counts on both sides, inverses; abstract entities \
            get no objects of their own. Each concrete entity gets 10 objects unless --count or the spec says \
            otherwise, more where the model needs them (a department that must have 3 employees). Counts \
            that cannot satisfy the model are refused with the rule named and counts that can.

            The same model, spec and seed give the same output on every run and machine: byte for byte for \
            XML and binary stores and clipboards, the same rows for SQLite. Each object's values depend only \
            on the seed, its entity and its index, so one more object of one entity leaves the others' values \
            as they were. Values look like what their attribute's name says (names, emails, cities, dates near \
            1 January 2025, prices, colours).

            The output's kind comes from --format, else from its extension: .sqlite, .xml and .binary \
            stores; .json, .plist and .bplist clipboards (--format clipboard-xml for a Graft XML clipboard), \
            which `graft paste` pastes into an existing store. -o - writes a clipboard (JSON by default) to \
            standard output. Files are written atomically.

            --spec FILE reads counts, pinned values, value lists and fan-out from JSON (see \
            Formats/fixtures.md); --count and --set override it.

            With --from STORE, the fixture is a consistent subset of a real store instead: the objects of \
            --entity (matching --where, at most --limit) and everything the model says they need, followed \
            on both sides (required to-ones, to-manys with a minimum), so that the subset opens and \
            validates on its own. Links to objects not taken are left out of a store and kept as references \
            in a clipboard. Rules the source already broke are kept and reported; a rule the subset itself \
            would break refuses it. --plan shows what would be taken and why, and writes nothing. The store \
            is only read.
            """,
        examples: [
            CommandExample(
                "graft fixtures --model Company.xcdatamodeld -o Fixture.sqlite",
                "A store with the default counts, from the model's current version."),
            CommandExample(
                "graft fixtures --model Company.xcdatamodeld --count Department=3 --count Employee=40 --seed 7 -o staff.json",
                "A JSON clipboard of 3 departments and their staff, to paste into a store."),
            CommandExample(
                "graft fixtures --model Company.xcdatamodeld --spec fixtures.json --set Employee.isRemote=NO -o Test.xml",
                "An XML store from a spec kept with the tests, one value pinned."),
            CommandExample(
                "graft fixtures --from App.sqlite --entity Employee --where 'salary > 100000' --limit 20 -o Rich.sqlite",
                "Twenty well-paid employees of a real store, with their departments and colleagues."),
        ])

    static var arguments: [Argument<FixturesCommand>] {
        [
            .option(
                \.model, name: "model", valueName: "path",
                help: "The model to generate from (.xcdatamodeld, .xcdatamodel, .momd, .mom, or a store's model cache)."
            ),
            .option(
                \.version, name: "version", valueName: "name",
                help: "The version of a model with several to use (by default, its current one)."),
            .option(\.counts, name: "count", valueName: "Entity=n", help: "Make n objects of this entity."),
            .option(
                \.seed, name: "seed", valueName: "n", help: "The seed (a whole number; by default the spec's, else 1)."),
            .option(
                \.spec, name: "spec", valueName: "file", help: "Read counts, values and fan-out from this JSON file."),
            .option(
                \.assignments, name: "set", valueName: "Entity.attr=value",
                help: "Give every object of the entity this value (empty for no value)."),
            .option(\.format, name: "format", short: "f", valueName: "format", help: "The output's format."),
            .option(
                \.output, name: "output", short: "o", valueName: "file",
                help: "Write to this file, or '-' for a clipboard on standard output."),
            .flag(\.force, name: "force", help: "Replace the output file if it exists."),
            .option(
                \.from, name: "from", valueName: "store",
                help: "Take a consistent subset of this store (SQLite, XML or binary) instead of generating."),
            .option(\.entity, name: "entity", short: "e", valueName: "name", help: "With --from: the entity to take."),
            .option(
                \.predicate, name: "where", short: "w", valueName: "predicate",
                help: "With --from: only the objects matching this predicate, in Apple's format."),
            .option(\.limit, name: "limit", valueName: "n", help: "With --from: at most n of them (the first by key)."),
            .option(
                \.anonymize, name: "anonymize", valueName: "Entity.attr[,…]|auto",
                help:
                    "With --from: replace these attributes' values (auto: names, emails, phones, addresses) with generated ones, the same for the same value and --seed."
            ),
            .flag(
                \.plan, name: "plan",
                help: "Print what would be made (or, with --from, taken and why), and write nothing."),
            .flag(\.json, name: "json", help: "Print the summary as JSON."),
            .flag(\.quiet, name: "quiet", short: "q", help: "Print no summary."),
        ]
    }

    var model: PathArgument?
    var version: String?
    var counts: [EntityCount] = []
    var seed: Int?
    var spec: PathArgument?
    var assignments: [String] = []
    var format: FixtureFormat?
    var output: PathArgument?
    var force = false
    var from: PathArgument?
    var entity: String?
    var predicate: String?
    var limit: Int?
    var anonymize: String?
    var plan = false
    var json = false
    var quiet = false

    mutating func validate() throws {
        if from != nil {
            if entity == nil { throw UsageError("--from needs --entity, the entity whose objects to take") }
            if !counts.isEmpty || spec != nil || !assignments.isEmpty || version != nil {
                throw UsageError("--count, --spec, --set and --version generate; --from takes objects as they are")
            }
            if seed != nil && anonymize == nil { throw UsageError("--seed with --from is for --anonymize") }
            if plan && output != nil { throw UsageError("--plan writes nothing, so -o has nothing to write") }
            if let limit, limit < 0 { throw UsageError("--limit must be 0 or more") }
            if !plan && output == nil {
                throw UsageError("fixtures needs -o FILE (or -o - for a clipboard on standard output), or --plan")
            }
            return
        }
        if entity != nil || predicate != nil || limit != nil || anonymize != nil {
            throw UsageError("--entity, --where, --limit and --anonymize are for a store given with --from")
        }
        if model == nil { throw UsageError("fixtures needs --model, the model to generate from, or --from STORE") }
        if plan && output != nil { throw UsageError("--plan writes nothing, so -o has nothing to write") }
        if output == nil && !plan {
            throw UsageError("fixtures needs -o FILE (or -o - for a clipboard on standard output), or --plan")
        }
        if let seed, seed < 0 { throw UsageError("--seed must be 0 or more") }
    }

    func run(_ context: CommandContext) throws {
        if let from {
            try takeSubset(of: URL(fileURLWithPath: from.path), context)
            return
        }
        let modelURL = URL(fileURLWithPath: model!.path)
        let file = try ModelLoading.load(modelURL)
        let chosen: Model
        if let version {
            guard let named = file.version(named: version) else {
                throw GraftError(
                    .notFound,
                    "has no version '\(version)' (it has \(file.versions.map { "'\($0.name)'" }.joined(separator: ", ")))",
                    context: [.file(modelURL.relativePath)])
            }
            chosen = named
        } else {
            chosen = file.current
        }
        var fixtureSpec = try spec.map { try FixtureSpec(contentsOf: URL(fileURLWithPath: $0.path)) } ?? FixtureSpec()
        for count in counts { fixtureSpec.counts[count.entity] = count.count }
        for assignment in assignments { try fixtureSpec.set(assignment) }
        let generator = try FixtureGenerator(model: chosen, seed: seed.map(UInt64.init), spec: fixtureSpec)
        if plan {
            // The counts the model's rules led to, without making an object.
            if json {
                let summary = JSONValue.object([
                    ("seed", .int(Int64(bitPattern: generator.seed))), ("objects", .int(Int64(generator.objectCount))),
                    ("counts", .counts(generator.counts)),
                ])
                context.print(summary.text(pretty: true))
            } else {
                context.print(
                    "Would generate \(Wording.counted(generator.objectCount, "object")) (seed \(generator.seed)):")
                let width = generator.counts.keys.map(\.count).max() ?? 0
                for (name, count) in generator.counts.sorted(by: { $0.key < $1.key }) {
                    context.print("  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(count)")
                }
            }
            return
        }

        let written = try write(generator, context)
        report(written, context, seed: generator.seed) {
            "Generated \($0) as \(written.output.phrase)\($1), seed \(generator.seed)"
        }
    }

    /// Writes the fixture to -o, with a progress line on a terminal.
    private func write(_ generator: FixtureGenerator, _ context: CommandContext) throws -> FixtureGenerator.Written {
        let progress = ProgressLine("generating", context: context, shown: !quiet && !json)
        defer { progress.finish() }
        guard output!.isStandardStream else {
            return try generator.write(to: URL(fileURLWithPath: output!.path), as: format?.output, overwrite: force) {
                progress.update($0, of: $1)
            }
        }
        let encoding = try standardOutputEncoding(context)
        let counts = try generator.write(encoding, progress: { progress.update($0, of: $1) }) { chunk in
            context.output.write(bytes: Data(chunk))
        }
        context.output.flush()
        return FixtureGenerator.Written(output: .clipboard(encoding), counts: counts)
    }

    /// The summary of what was written: as JSON (on standard error when the fixture went to standard
    /// output), or as the line `line` makes of the objects ("42 objects (Department 4, …)") and the
    /// destination (" to FILE", or nothing).
    private func report(
        _ written: FixtureGenerator.Written, _ context: CommandContext, seed: UInt64? = nil,
        inherited: [RuleViolation]? = nil, line: (_ objects: String, _ destination: String) -> String
    ) {
        let toStandardOutput = output!.isStandardStream
        if json {
            var fields: [(String, JSONValue)] = [
                ("output", .string(output!.path)), ("format", .string(written.output.description)),
            ]
            if let seed { fields.append(("seed", .int(Int64(bitPattern: seed)))) }
            fields += [("objects", .int(Int64(written.objects))), ("counts", .counts(written.counts))]
            if let inherited { fields.append(("violationsTheSourceHad", .int(Int64(inherited.count)))) }
            let text = JSONValue.object(fields).text(pretty: true)
            toStandardOutput ? context.printError(text) : context.print(text)
            return
        }
        guard !quiet else { return }
        for violation in inherited ?? [] {
            context.printError("warning: the source already breaks this: \(violation.error.description)")
        }
        context.printError(
            line(
                "\(Wording.counted(written.objects, "object")) (\(describeCounts(written.counts)))",
                toStandardOutput ? "" : " to \(output!.path)"))
    }
}

extension FixturesCommand {
    /// The clipboard encoding for `-o -`: JSON unless --format names another; a store or a binary
    /// property list on a terminal is refused.
    private func standardOutputEncoding(_ context: CommandContext) throws -> ClipboardEncoding {
        guard let format else { return .json }
        guard case .clipboard(let encoding) = format.output else {
            throw UsageError("a \(format.rawValue) store cannot go to standard output; write it to a file with -o")
        }
        if encoding == .binaryPlist && context.isOutputTerminal {
            throw GraftError(
                .invalidOperation,
                "a binary property list would garble the terminal; redirect standard output, or write to a file with -o"
            )
        }
        return encoding
    }

    /// `--from`: a consistent subset of a store, planned or written.
    private func takeSubset(of storeURL: URL, _ context: CommandContext) throws {
        let chosenModel = try model.map {
            try ModelLoading.model(at: URL(fileURLWithPath: $0.path), forStoreAt: storeURL).model
        }
        let anonymizing = anonymize.map { list -> FixtureAnonymization.Choice in
            list == "auto"
                ? .automatic
                : .named(list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        }
        let subset = FixtureSubset(
            storeAt: storeURL, entity: entity!, predicate: predicate ?? "", limit: limit, model: chosenModel,
            anonymizing: anonymizing, seed: seed.map(UInt64.init) ?? FixtureGenerator.defaultSeed)
        do {
            if plan {
                let (taken, model) = try subset.plan()
                if json {
                    context.print(taken.json(model: model).text(pretty: true))
                } else {
                    context.print(CopyCommand.describe(taken, model: model), terminator: "")
                }
                return
            }
            let written: FixtureGenerator.Written
            var inherited: [RuleViolation] = []
            if output!.isStandardStream {
                let encoding = try standardOutputEncoding(context)
                let counts = try subset.write(encoding) { context.output.write(bytes: $0) }
                context.output.flush()
                written = FixtureGenerator.Written(output: .clipboard(encoding), counts: counts)
            } else {
                (written, inherited) = try subset.write(
                    to: URL(fileURLWithPath: output!.path), as: format?.output, overwrite: force)
            }
            report(written, context, inherited: inherited) {
                "Took \($0) from \(storeURL.relativePath) as \(written.output.phrase)\($1)"
            }
        } catch let error as GraftError {
            throw error.namingFile(storeURL.relativePath)
        }
    }
}

/// `--count Entity=n`.
struct EntityCount: ArgumentValue, Hashable {
    var entity: String
    var count: Int

    init?(argument: String) {
        guard let (entity, value) = splitAssignment(argument), let count = Int(value), count >= 0 else { return nil }
        self.entity = entity
        self.count = count
    }

    static var expectedArgument: String { "Entity=n, such as Employee=40" }

    var argumentDescription: String { "\(entity)=\(count)" }
}

/// `--format` of `graft fixtures`: a store format or a clipboard encoding.
enum FixtureFormat: String, CaseIterable, ArgumentValue {
    case sqlite, xml, binary, json, plist
    case binaryPlist = "binary-plist"
    case clipboardXML = "clipboard-xml"

    var output: FixtureOutput { FixtureOutput(name: rawValue)! }
}
