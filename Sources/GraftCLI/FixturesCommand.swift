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
    var json = false
    var quiet = false

    mutating func validate() throws {
        if model == nil { throw UsageError("fixtures needs --model, the model to generate from") }
        if output == nil { throw UsageError("fixtures needs -o FILE (or -o - for a clipboard on standard output)") }
        if let seed, seed < 0 { throw UsageError("--seed must be 0 or more") }
    }

    func run(_ context: CommandContext) throws {
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

        let progress = ProgressLine("generating", context: context, shown: !quiet && !json)
        let written: FixtureGenerator.Written
        if output!.isStandardStream {
            var encoding = ClipboardEncoding.json
            if let format {
                guard case .clipboard(let chosen) = format.output else {
                    progress.finish()
                    throw UsageError(
                        "a \(format.rawValue) store cannot go to standard output; write it to a file with -o")
                }
                encoding = chosen
            }
            if encoding == .binaryPlist && context.isOutputTerminal {
                progress.finish()
                throw GraftError(
                    .invalidOperation,
                    "a binary property list would garble the terminal; redirect standard output, or write to a file with -o"
                )
            }
            let counts = try generator.write(encoding, progress: { progress.update($0, of: $1) }) { chunk in
                context.output.write(bytes: Data(chunk))
            }
            context.output.flush()
            written = FixtureGenerator.Written(output: .clipboard(encoding), counts: counts)
        } else {
            let url = URL(fileURLWithPath: output!.path)
            do {
                written = try generator.write(to: url, as: format?.output, overwrite: force) {
                    progress.update($0, of: $1)
                }
            } catch {
                progress.finish()
                throw error
            }
        }
        progress.finish()
        if json {
            let summary = JSONValue.object([
                ("output", .string(output!.path)), ("format", .string(written.output.description)),
                ("seed", .int(Int64(bitPattern: generator.seed))), ("objects", .int(Int64(written.objects))),
                ("counts", .counts(generator.counts)),
            ])
            output!.isStandardStream
                ? context.printError(summary.text(pretty: true)) : context.print(summary.text(pretty: true))
            return
        }
        guard !quiet else { return }
        context.printError(
            "Generated \(Wording.counted(written.objects, "object")) (\(describeCounts(generator.counts))) as "
                + "\(written.output.phrase)\(output!.isStandardStream ? "" : " to \(output!.path)"), seed \(generator.seed)"
        )
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
