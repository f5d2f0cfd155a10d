import Foundation
import Graft

/// `graft migrate`: a store written with an older version of a model, brought to a newer one.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store written with an older version of a model to a newer version.",
        discussion: """
            The store's version is found among the model's versions by the version hashes the store \
            records (a store whose version is not there but which carries its model, as SQLite stores do, \
            starts from the version nearest to its own). Graft then steps through the versions in order up \
            to the current one (or --version), inferring each step's mapping as Core Data's lightweight \
            migration does: properties and entities added, removed, or renamed through renaming \
            identifiers; optional and required, with the default; numeric type changes; to-one and \
            to-many, ordered and unordered; moves within an inheritance hierarchy. A change no mapping can \
            be inferred for is refused, naming the property and what a mapping model would have to say.

            A step that a mapping model joins (one given with --mapping, or one in the model's folder, \
            matched by the version hashes it records) is run by it: its value expressions that read a \
            source attribute, give a constant, or carry the objects a relationship names. A mapping that \
            names a custom policy class is app code Graft cannot run: such a step is refused, naming the \
            class and the entity (from Swift, a MigrationPolicy registered under that name runs it).

            All steps run in one pass: objects stream from the store through every step into a new \
            document, as convert writes one. The store's UUID, its metadata and every object's key (so \
            its URI) are kept. --plan prints the steps and every change they carry without writing. -o \
            writes a new document; --in-place replaces the store once the new one is complete (and \
            verified, with --verify), so a failed migration leaves the store as it was. A SQLite store \
            whose steps only add attributes is migrated --in-place where it is instead, in one \
            transaction: new columns, filled with the default.
            """,
        examples: [
            CommandExample(
                "graft migrate Old.sqlite --model Company.xcdatamodeld --plan",
                "Say which version wrote the store and what migrating it takes."),
            CommandExample(
                "graft migrate Old.sqlite --model Company.xcdatamodeld -o New.sqlite --verify",
                "Write the migrated store as a new document, then check it."),
            CommandExample(
                "graft migrate App.sqlite --model App.momd --in-place", "Migrate the store itself."),
        ])

    static var arguments: [Argument<MigrateCommand>] {
        [
            .positional(\.store, name: "store", help: "The store document to migrate."),
            .option(
                \.model, name: "model", short: "m", valueName: "path",
                help: "The model with the store's version and the one to migrate to (.xcdatamodeld, .momd)."),
            .option(
                \.version, name: "version", valueName: "name",
                help: "The version to migrate to (by default, the model's current version)."),
            .option(
                \.mappings, name: "mapping", valueName: "path",
                help:
                    "A mapping model (.cdm, .xcmappingmodel) for a step that needs one; those beside the model are found too."
            ),
            .option(\.output, name: "output", short: "o", valueName: "path", help: "Write the migrated store here."),
            .flag(\.inPlace, name: "in-place", help: "Replace the store with the migrated one when it is complete."),
            .option(
                \.format, name: "to", valueName: "format",
                help: "The output's format (by default, from its extension, else the store's)."),
            .flag(\.plan, name: "plan", help: "Print the steps and their changes; write nothing."),
            .flag(\.force, name: "force", short: "f", help: "Replace the output if it exists."),
            .flag(
                \.verify, name: "verify", help: "Read the result back and compare it with the store migrated in memory."
            ),
            .flag(
                \.omitMissingExternalData, name: "omit-missing-external-data",
                help: "Read binary values whose external file is missing as empty, with a warning, instead of failing."),
            .flag(
                \.lenient, name: "lenient",
                help: "Read stored values that are not of their attribute's type or range as no value, with a warning."),
            .flag(\.json, name: "json", help: "Print the plan or the summary as JSON instead of text."),
            .flag(\.quiet, name: "quiet", short: "q", help: "Print no progress and no summary."),
        ]
    }

    var store: PathArgument = ""
    var model: PathArgument?
    var version: String?
    var mappings: [PathArgument] = []
    var output: PathArgument?
    var inPlace = false
    var format: StoreFormat?
    var plan = false
    var force = false
    var verify = false
    var omitMissingExternalData = false
    var lenient = false
    var json = false
    var quiet = false

    mutating func validate() throws {
        if store.isStandardStream || output?.isStandardStream == true {
            throw UsageError("migrate reads and writes files; '-' (standard input or output) is not supported")
        }
        guard model != nil else { throw UsageError("give the model to migrate to with --model") }
        if inPlace && output != nil { throw UsageError("give either -o or --in-place, not both") }
        if !plan && !inPlace && output == nil {
            throw UsageError("give -o OUT for a new document, --in-place to replace the store, or --plan")
        }
        if inPlace && (format != nil || force) {
            throw UsageError("--in-place keeps the store's format and path; --to and --force go with -o")
        }
    }

    func run(_ context: CommandContext) throws {
        let storeURL = URL(fileURLWithPath: store.path)
        let file = try ModelLoading.load(URL(fileURLWithPath: model!.path))
        let migrationPlan = try MigrationPlan(
            store: storeURL, model: file, version: version,
            mappingModels: mappings.map { URL(fileURLWithPath: $0.path) })
        if plan {
            context.print(json ? migrationPlan.json.text(pretty: true) : migrationPlan.text, terminator: "")
            if json { context.print("") }
            return
        }
        guard migrationPlan.isNeeded else {
            if !quiet {
                if json {
                    context.print(migrationPlan.json.text(pretty: true))
                } else {
                    context.print(migrationPlan.text, terminator: "")
                }
            }
            return
        }
        let destination: Migration.Destination =
            inPlace ? .inPlace : .file(URL(fileURLWithPath: output!.path), format: format, overwrite: force)
        let reading = StoreReadOptions(
            valueReading: lenient ? .lenient : .strict, missingExternalData: omitMissingExternalData ? .omit : .fail)
        let progress = ProgressLine("migrating", context: context, shown: !quiet && !json)
        let started = Date()
        let report: Migration.Report
        do {
            defer { progress.finish() }
            report = try Migration.migrate(migrationPlan, to: destination, reading: reading, verify: verify) {
                done, total in progress.update(done, of: total)
            }
        }
        guard !quiet else { return }
        if json {
            context.print(report.json.text(pretty: true))
            return
        }
        context.printWarnings(report.warnings)
        let seconds = Date().timeIntervalSince(started)
        context.print(
            "Migrated \(report.objects) objects from version '\(migrationPlan.storeVersion)' to "
                + "'\(migrationPlan.targetVersion)' in \(Wording.counted(migrationPlan.steps.count, "step")): "
                + (inPlace ? "\(store.path) (in place)" : output!.path) + (verify ? " (verified: no differences)" : "")
                + String(format: " in %.1f s", seconds))
    }
}
