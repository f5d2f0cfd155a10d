import Foundation
import Graft

/// `graft copy`: a chosen part of a store's object graph, as a clipboard document.
struct CopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy chosen objects, and what they own, from a store into a clipboard document.",
        discussion: """
            Choose roots with --entity (and --where), --uri, --key or --all. From the roots the copy follows \
            the model: relationships whose delete rule is Cascade bring along the objects a root owns; every \
            other relationship leaves the selection, and the object at its end is written as a reference \
            (entity, identity and URI) that a paste links to the target's own object. --follow, --stop and \
            --depth override the rules; --plan shows what they decide without copying.

            The document goes to standard output, or to -o FILE (written atomically). Its encoding comes \
            from --format, else from FILE's extension (.json, .xml, .plist, .bplist), else JSON. The store \
            is only read, never changed. A binary value whose external file is missing (Core Data keeps \
            large values beside a SQLite store, and copies of stores often leave them behind) stops the \
            copy, unless --omit-missing-external-data copies it as no value, with a warning. So does a stored \
            value that is not of its attribute's type or is outside its range, unless --lenient copies it as \
            no value, with one warning per attribute.
            """,
        examples: [
            CommandExample(
                "graft copy Company.sqlite --entity Department --where 'name == \"Sales\"' > sales.json",
                "Copy the Sales department and its projects."),
            CommandExample(
                "graft copy Company.sqlite --entity Department --follow Department.employees --plan",
                "Show what copying every department with its employees would take."),
            CommandExample(
                "graft copy App.sqlite --all --format binary-plist -o everything.bplist",
                "Copy a whole store into a binary property list."),
        ])

    static var arguments: [Argument<CopyCommand>] {
        [
            .positional(\.store, name: "store", help: "The store to copy from (SQLite, XML or binary)."),
            .option(
                \.entity, name: "entity", short: "e", valueName: "name",
                help: "Take objects of this entity (and its subentities) as roots."),
            .option(
                \.predicate, name: "where", short: "w", valueName: "predicate",
                help: "With --entity: only the objects matching this predicate, in Apple's format."),
            .option(
                \.uris, name: "uri", valueName: "uri", help: "Take the object with this URI (x-coredata://…) as a root."
            ),
            .option(
                \.keys, name: "key", valueName: "Entity=key", help: "Take the object with this primary key as a root."),
            .flag(\.all, name: "all", help: "Take every object of the store."),
            .option(
                \.follow, name: "follow", valueName: "relationship",
                help:
                    "Also copy what this relationship reaches (Entity.relationship, or relationship for every entity)."),
            .option(
                \.stop, name: "stop", valueName: "entity|relationship",
                help: "Never copy this entity's objects, or never follow this relationship: reference them instead."),
            .option(\.depth, name: "depth", valueName: "n", help: "Follow relationships at most n steps from a root."),
            .option(
                \.identities, name: "identity", valueName: "Entity=attr[,attr]",
                help:
                    "The attributes that identify this entity's objects in references (by default, its uniqueness constraint)."
            ),
            .option(\.format, name: "format", short: "f", valueName: "encoding", help: "The clipboard's encoding."),
            .option(\.output, name: "output", short: "o", valueName: "file", help: "Write the clipboard to this file."),
            .flag(\.force, name: "force", help: "Replace the output file if it exists."),
            .option(
                \.model, name: "model", valueName: "path",
                help: "The model to read the store with (by default, its own)."),
            .flag(
                \.omitMissingExternalData, name: "omit-missing-external-data",
                help:
                    "Copy binary values whose external file is missing as no value, with a warning, instead of failing."
            ),
            .flag(
                \.lenient, name: "lenient",
                help:
                    "Copy stored values that are not of their attribute's type or range as no value, with one warning per attribute, instead of failing."
            ),
            .flag(
                \.noModel, name: "no-model",
                help: "Leave the source model out of the clipboard (a paste into a new store then needs --model)."),
            .flag(
                \.plan, name: "plan", help: "Print what would be copied and what would be referenced, and copy nothing."
            ),
            .flag(
                \.json, name: "json",
                help:
                    "Print the summary (or the --plan) as JSON, warnings included: on standard output when the clipboard goes to a file, else on standard error."
            ),
            .flag(\.quiet, name: "quiet", short: "q", help: "Print no summary."),
        ]
    }

    var store: PathArgument = ""
    var entity: String?
    var predicate: String?
    var uris: [String] = []
    var keys: [EntityKey] = []
    var all = false
    var follow: [String] = []
    var stop: [String] = []
    var depth: Int?
    var identities: [IdentityAttributes] = []
    var format: ClipboardEncoding?
    var output: PathArgument?
    var force = false
    var model: PathArgument?
    var omitMissingExternalData = false
    var lenient = false
    var noModel = false
    var plan = false
    var json = false
    var quiet = false

    mutating func validate() throws {
        if store.isStandardStream { throw UsageError("copy reads a store file; '-' (standard input) is not supported") }
        if predicate != nil && entity == nil {
            throw UsageError("--where needs --entity to say which objects it filters")
        }
        if entity == nil && uris.isEmpty && keys.isEmpty && !all {
            throw UsageError("choose what to copy: --entity (with --where), --uri, --key or --all")
        }
        if let depth, depth < 0 { throw UsageError("--depth must be 0 or more") }
        if plan && output != nil { throw UsageError("--plan copies nothing, so -o has nothing to write") }
    }

    var selection: Selection {
        var roots: [Selection.Roots] = []
        if all { roots.append(.all) }
        if let entity { roots.append(.predicate(entity: entity, format: predicate ?? "")) }
        if !uris.isEmpty { roots.append(.uris(uris)) }
        for key in keys { roots.append(.keys(entity: key.entity, [key.key])) }
        return Selection(
            roots: roots, follow: follow, stop: stop, depth: depth,
            identities: IdentityAttributes.dictionary(identities))
    }

    func run(_ context: CommandContext) throws {
        let outputURL = output.flatMap { $0.isStandardStream ? nil : URL(fileURLWithPath: $0.path) }
        let encoding = format ?? outputURL.flatMap(ClipboardEncoding.forExtension) ?? .json
        if outputURL == nil, !plan, encoding == .binaryPlist, context.isOutputTerminal {
            throw GraftError(
                .invalidOperation,
                "a binary property list would garble the terminal; redirect standard output, or write to a file with -o"
            )
        }
        if let outputURL, StoreFiles.isPart(outputURL, ofStoreAt: URL(fileURLWithPath: store.path)) {
            throw GraftError(
                .invalidOperation, "is the store being copied (or one of its files); choose another output",
                context: [.file(outputURL.relativePath)])
        }
        if let outputURL, !force, FileAccess.kind(of: outputURL).exists {
            throw GraftError(
                .alreadyExists, "already exists (use --force to replace it)", context: [.file(outputURL.relativePath)])
        }
        if let predicate {
            // A predicate that does not parse is the option's fault, not the store's: the caret shows where.
            do {
                _ = try GraftPredicate(format: predicate)
            } catch let error as GraftError {
                throw GraftError(error.code, error.message, context: [.other("--where")])
            }
        }
        let storeURL = URL(fileURLWithPath: store.path)
        let chosenModel = try model.map {
            try ModelLoading.model(at: URL(fileURLWithPath: $0.path), forStoreAt: storeURL).model
        }
        if plan {
            do {
                try printPlan(of: storeURL, model: chosenModel, context)
            } catch let error as GraftError {
                throw error.namingFile(storeURL.relativePath)
            }
            return
        }
        // The document is written as it is copied: to a temporary file renamed over -o only when the
        // copy is whole, or to standard output.
        var written: Copier.StreamedCopy?
        if let outputURL {
            try FileAccess.writeAtomically(to: outputURL, overwrite: force) { write in
                written = try copy(from: storeURL, model: chosenModel, encoding: encoding, context, to: write)
            }
        } else {
            written = try copy(from: storeURL, model: chosenModel, encoding: encoding, context) { chunk in
                context.output.write(bytes: Data(chunk))
            }
            context.output.flush()
        }
        guard let copied = written else { return }
        if json {
            let text = copied.json.text(pretty: true)
            outputURL == nil ? context.printError(text) : context.print(text)
            return
        }
        guard !quiet else { return }
        for warning in copied.warnings { context.printError("warning: \(warning)") }
        let counts = describeCounts(copied.counts)
        context.printError(
            "Copied \(Wording.counted(copied.objects, "object"))\(counts.isEmpty ? "" : " (\(counts))") and "
                + "\(Wording.counted(copied.references, "reference")) as \(encoding.displayName)"
                + (outputURL.map { " to \($0.relativePath)" } ?? ""))
    }

    /// Copies the selection into `sink`, with a progress line on a terminal.
    private func copy(
        from storeURL: URL, model chosenModel: Model?, encoding: ClipboardEncoding, _ context: CommandContext,
        to sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Copier.StreamedCopy {
        let progress = ProgressLine("copying", context: context, shown: !quiet && !json)
        defer { progress.finish() }
        do {
            return try Copier.copy(
                storeAt: storeURL, selection: selection, model: chosenModel, options: readOptions,
                includesModel: !noModel, encoding: encoding, to: sink
            ) { done, total in progress.update(done, of: total) }
        } catch let error as GraftError {
            throw error.namingFile(storeURL.relativePath)
        }
    }

    private var readOptions: StoreReadOptions {
        StoreReadOptions(
            valueReading: lenient ? .lenient : .strict, missingExternalData: omitMissingExternalData ? .omit : .fail)
    }

    /// Prints what a copy would take (`--plan`).
    private func printPlan(of storeURL: URL, model chosenModel: Model?, _ context: CommandContext) throws {
        let source = try StoreFormat.openForReading(storeURL, model: chosenModel, options: readOptions)
        let copyPlan = try Copier(source: StoreSource(source)).plan(selection)
        if json {
            context.print(copyPlan.json(model: source.model, warnings: source.warnings).text(pretty: true))
        } else {
            if !quiet { for warning in source.warnings { context.printError("warning: \(warning)") } }
            context.print(Self.describe(copyPlan, model: source.model), terminator: "")
        }
    }

    /// The text `--plan` prints: objects per entity, then each relationship that leaves the selection.
    static func describe(_ plan: Copier.Plan, model: Model) -> String {
        var counts: [String: Int] = [:]
        for ref in plan.objects { counts[model.descriptions[ref.entity].name, default: 0] += 1 }
        var text =
            "Would copy \(Wording.counted(plan.objects.count, "object")) from \(Wording.counted(plan.roots.count, "root")):\n"
        let width = counts.keys.map(\.count).max() ?? 0
        for (name, count) in counts.sorted(by: { $0.key < $1.key }) {
            text += "  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(count)\n"
        }
        let exits = plan.exits
        let targets = Set(exits.map(\.to))
        text += "\(Wording.counted(targets.count, "object")) outside the selection would be referenced"
        text += exits.isEmpty ? ".\n" : ":\n"
        func label(_ ref: ObjectRef) -> String { "\(model.descriptions[ref.entity].name) p\(ref.key)" }
        // One line per relationship and rule, with how many links it covers and an example.
        var groups: [String: (count: Int, example: Copier.Plan.Exit)] = [:]
        var order: [String] = []
        for exit in exits {
            let group = "\(model.descriptions[exit.from.entity].name).\(exit.relationship) (\(exit.rule))"
            if groups[group] == nil {
                order.append(group)
                groups[group] = (0, exit)
            }
            groups[group]!.count += 1
        }
        for group in order {
            let (count, example) = groups[group]!
            text +=
                "  \(group): \(Wording.counted(count, "link")), e.g. \(label(example.from)) → \(label(example.to))\n"
        }
        return text
    }
}
