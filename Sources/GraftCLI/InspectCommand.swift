import Foundation
import Graft

/// `graft inspect`: describes a model, or the model and metadata of a store.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Describe a model: entities, attributes, relationships and version hashes.",
        discussion: """
            PATH may be an .xcdatamodeld (every version is read; the current one is shown), an \
            .xcdatamodel, a compiled .mom or .momd, or a store document (SQLite, XML or binary): for a store, \
            inspect shows its format, UUID, metadata and objects per entity, and the model it was read with. The text lists each entity with its parent, version hash, attributes (type and \
            constraints), relationships (destination, inverse, cardinality, delete rule) and fetched \
            properties. --json prints the same for programs.
            """,
        examples: [
            CommandExample("graft inspect Company.xcdatamodeld", "List the current version's entities."),
            CommandExample("graft inspect Company.momd --json", "Print the model and its version hashes as JSON."),
        ])

    static var arguments: [Argument<InspectCommand>] {
        [
            .positional(\.path, name: "path", help: "The model or store to describe."),
            .flag(\.json, name: "json", help: "Print JSON instead of text."),
            .option(
                \.model, name: "model", valueName: "path",
                help: "For a store: the model to read it with (by default, its own)."),
            .flag(
                \.lenient, name: "lenient",
                help:
                    "For a store: read values that are not of their attribute's type or range as no value, with one warning per attribute, instead of failing."
            ),
        ]
    }

    var path: PathArgument = ""
    var json = false
    var model: PathArgument?
    var lenient = false

    func run(_ context: CommandContext) throws {
        let url = URL(fileURLWithPath: path.path)
        if FileAccess.kind(of: url).exists, !FileAccess.kind(of: url).isDirectory,
            let prefix = try? FileHandle(forReadingFrom: url).read(upToCount: 4096),
            let format = StoreFormat.detect(prefix: prefix)
        {
            var given = try model.map { try ModelLoading.model(at: URL(fileURLWithPath: $0.path), forStoreAt: url) }
            // With a model of several versions: what migrating the store to the current one takes.
            var migration: MigrationPlan?
            var migrationBlocked: GraftError?
            if let file = given?.file, file.versions.count > 1 {
                do {
                    let plan = try MigrationPlan(store: url, model: file)
                    if plan.isNeeded { migration = plan }
                    // A store of none of the versions is read with its own model.
                    if plan.storeVersion == MigrationPlan.storeModelName { given = nil }
                } catch let error as GraftError where error.code == .migrationBlocked {
                    migrationBlocked = error
                }
            }
            let reader = try format.driver.reader(
                at: url, model: given?.model, options: StoreReadOptions(valueReading: lenient ? .lenient : .strict))
            let counts = try reader.counts()
            for warning in (given?.file.warnings ?? []) + reader.warnings {
                context.printError("warning: \(warning)")
            }
            let file = StoreReport.modelFile(of: reader, at: url, format: format, given: given)
            if json {
                var report = StoreReport.json(
                    format: format.rawValue, metadata: reader.metadata, counts: counts, model: file)
                if case .object(var fields) = report {
                    if let migration { fields.append(("migration", migration.json)) }
                    if let migrationBlocked {
                        fields.append(("migrationBlocked", .string(migrationBlocked.description)))
                    }
                    report = .object(fields)
                }
                context.print(report.text(pretty: true))
            } else {
                context.print(
                    StoreReport.text(
                        path: path.path, format: format.rawValue, metadata: reader.metadata, counts: counts,
                        model: file,
                        modelNote: given.flatMap(StoreReport.versionNote)),
                    terminator: "")
                if let migration {
                    context.print("\nMigration: ", terminator: "")
                    // The plan's first line names the store, as the report above does.
                    context.print(
                        migration.text.split(separator: "\n", maxSplits: 1).dropFirst().joined(), terminator: "")
                    context.print("(graft migrate \(path.path) --model \(model!.path) -o NEW writes it.)")
                }
                if let migrationBlocked {
                    context.print("\nMigration to the current version is not possible: \(migrationBlocked)")
                    for reason in migrationBlocked.underlying.prefix(20) { context.print("  \(reason)") }
                }
            }
            return
        }
        let file = try ModelLoading.load(url)
        for warning in file.warnings { context.printError("warning: \(warning)") }
        if json {
            context.print(ModelReport.json(for: file).text(pretty: true))
        } else {
            context.print(ModelReport.text(for: file), terminator: "")
        }
    }
}
