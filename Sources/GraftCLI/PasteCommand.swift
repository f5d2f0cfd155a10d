import Foundation
import Graft
import GraftCore

/// `graft paste`: a clipboard document, as new objects in a store.
struct PasteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "paste",
        abstract: "Paste a clipboard document into a store as new objects, all or nothing.",
        discussion: """
            The clipboard is read from FILE, or from standard input when FILE is '-' or absent; its encoding \
            is recognised by content. Every copied object becomes a new object with a new ID; links among \
            them are rewired, and references link to the target's object with the same identity (or, \
            pasting back into the store copied from, the same URI). A copy whose identity already exists is \
            handled by --on-conflict. The result is validated as a whole before anything is written, and \
            every problem is reported at once, saying which rules the copied objects already broke in \
            the clipboard; on any failure the store is left exactly as it was. --no-validate pastes \
            objects that break the model's rules (as real stores' objects sometimes do) as they are, with \
            a warning for each rule broken.

            --into names an existing store (SQLite is saved in one transaction; XML and binary documents \
            are rewritten atomically) or a new one, whose format comes from its extension and whose model \
            is --model or, by default, the one the clipboard carries. No other writer can change the store \
            while a paste reads, checks and writes it: another writer waits for this one, and this one \
            waits up to --wait seconds for another, then fails saying the store is busy. A dry run needs no \
            write access and changes nothing, a SQLite store's -wal included.

            On success the map from clipboard ids to the URIs of the objects they became is printed, one \
            tab-separated pair per line (or written as JSON with --id-map), and a summary goes to standard \
            error.
            """,
        examples: [
            CommandExample(
                "graft copy A.sqlite --entity Department --where 'name == \"Sales\"' | graft paste --into B.sqlite",
                "Copy a department from one store into another."),
            CommandExample(
                "graft paste sales.json --into B.xml --on-conflict merge --on-conflict Project=duplicate",
                "Update departments and people that exist already; always add projects."),
            CommandExample("graft paste sales.json --into B.sqlite --dry-run", "Show what the paste would do."),
        ])

    static var arguments: [Argument<PasteCommand>] {
        [
            .positional(\.input, name: "file", help: "The clipboard document ('-' or absent: standard input)."),
            .option(
                \.into, name: "into", short: "i", valueName: "store",
                help: "The store to paste into (created if it does not exist)."),
            .option(
                \.model, name: "model", valueName: "path",
                help: "The model of the store (by default, its own; for a new store, the clipboard's)."),
            .option(
                \.conflicts, name: "on-conflict", valueName: "policy",
                help:
                    "When a copy's identity exists in the store: merge, duplicate, skip or fail; Entity=policy for one entity."
            ),
            .option(
                \.dangling, name: "dangling", valueName: "policy",
                help: "A reference the store has no object for: fail, or drop the link."),
            .option(
                \.identities, name: "identity", valueName: "Entity=attr[,attr]",
                help: "The attributes that identify this entity's objects (by default, its uniqueness constraint)."),
            .flag(\.dryRun, name: "dry-run", short: "n", help: "Report what would be done, and write nothing."),
            .flag(
                \.noValidate, name: "no-validate",
                help: "Paste objects that break the model's rules as they are, with a warning for each rule broken."),
            .option(
                \.idMap, name: "id-map", valueName: "file",
                help: "Write the id map to this file as JSON instead of printing it."),
            .option(
                \.wait, name: "wait", valueName: "seconds",
                help: "How long to wait for another writer to finish with the store before failing as busy."),
            .option(
                \.maxSize, name: "max-size", valueName: "size",
                help: "The largest clipboard accepted, in bytes or with K, M or G (enforced while reading)."),
            .flag(
                \.json, name: "json",
                help: "Print the report as JSON (the id map, counts, notes and broken rules) instead of text."),
            .flag(\.quiet, name: "quiet", short: "q", help: "Print no summary."),
        ]
    }

    var input: PathArgument?
    var into: PathArgument?
    var model: PathArgument?
    var conflicts: [ConflictRule] = []
    var dangling: DanglingPolicy = .fail
    var identities: [IdentityAttributes] = []
    var dryRun = false
    var noValidate = false
    var idMap: PathArgument?
    var wait: Double = FileLock.defaultWait
    var maxSize = ByteCount(bytes: PasteCommand.defaultMaxSize)
    var json = false
    var quiet = false

    /// The largest clipboard `paste` reads unless `--max-size` says otherwise: 1 GiB.
    static let defaultMaxSize = 1 << 30

    mutating func validate() throws {
        if wait < 0 { throw UsageError("--wait must be 0 or more seconds") }
        guard let into else { throw UsageError("name the store to paste into with --into") }
        if into.isStandardStream { throw UsageError("--into names a store file; '-' is not supported") }
        if dryRun && idMap != nil { throw UsageError("--dry-run creates no objects, so --id-map has nothing to write") }
    }

    var options: PasteOptions {
        var options = PasteOptions(
            dangling: dangling, identities: IdentityAttributes.dictionary(identities), dryRun: dryRun,
            validates: !noValidate, wait: wait)
        for rule in conflicts {
            if let entity = rule.entity {
                options.onConflictByEntity[entity] = rule.policy
            } else {
                options.onConflict = rule.policy
            }
        }
        return options
    }

    func run(_ context: CommandContext) throws {
        let storeURL = URL(fileURLWithPath: into!.path)
        if let idMap {
            // The map must not replace the store (or the clipboard) it is about.
            let mapURL = URL(fileURLWithPath: idMap.path)
            let inputs =
                [storeURL]
                + (input.flatMap { $0.isStandardStream ? nil : URL(fileURLWithPath: $0.path) }.map { [$0] } ?? [])
            if inputs.contains(where: {
                $0.standardizedFileURL == mapURL.standardizedFileURL || StoreFiles.isPart(mapURL, ofStoreAt: $0)
            }) {
                throw GraftError(
                    .invalidOperation, "--id-map names the store or the clipboard; choose another file",
                    context: [.file(idMap.path)])
            }
        }
        // The clipboard is read from a file as it is pasted (into a new or empty store it streams): the file
        // named, or what comes on standard input or from a pipe, spooled into a temporary file first.
        let clipboard = try clipboardFile(context)
        defer { clipboard.spill?.remove() }
        // An existing store is read with the version of the model it was written with; a new one gets the
        // file's current version.
        let chosenModel = try model.map {
            try ModelLoading.model(at: URL(fileURLWithPath: $0.path), forStoreAt: storeURL).model
        }
        let report: PasteReport
        do {
            let progress = ProgressLine("pasting", context: context, shown: !quiet && !json)
            defer { progress.finish() }
            let paster = Paster(options: options)
            do {
                report = try paster.paste(clipboardAt: clipboard.url, intoStoreAt: storeURL, model: chosenModel) {
                    progress.update($0, of: $1)
                }
            } catch let error as GraftError where clipboard.spill != nil {
                throw error.replacingFile(clipboard.url.relativePath, with: clipboard.origin)
            }
        } catch var error as GraftError {
            switch error.remedy?.kind {
            case .nameModel?:
                // A new store without a model: the option that gives one.
                error.remedy?.text = "--model names one"
            case .readLeniently?:
                // A paste rewrites its target, so it cannot read the target's damaged values as none: point
                // to the rescue instead of an option paste does not have.
                error.remedy?.text =
                    "the target already holds it; `graft convert --lenient` rescues such a store into a new one"
            default: break
            }
            throw error.namingFile(storeURL.relativePath)
        }
        if json {
            if let idMap, !dryRun { try write(idMap: report, to: idMap) }
            context.print(report.json.text(pretty: true))
            return
        }
        if dryRun {
            context.print(Self.describe(report, store: into!.path), terminator: "")
            return
        }
        if let idMap {
            try write(idMap: report, to: idMap)
        } else {
            try report.writeIDMapLines { context.output.write(bytes: Data($0)) }
        }
        guard !quiet else { return }
        for note in report.notes { context.printError("note: \(note)") }
        for dropped in report.dangling { context.printError("dropped link to: \(dropped)") }
        for violation in report.violations { context.printError("warning: \(violation)") }
        context.printError(Self.summary(report, store: into!.path))
    }

    private func write(idMap report: PasteReport, to path: PathArgument) throws {
        let map = JSONValue.object(report.idMap.map { ($0.id, .string($0.uri)) })
        try FileAccess.writeAtomically(Data((map.text(pretty: true) + "\n").utf8), to: URL(fileURLWithPath: path.path))
    }

    /// The clipboard as a file that can be read more than once: the file named, when it is a regular file,
    /// or else what standard input (or the pipe named) brings, spooled into a temporary file; `origin` is
    /// what messages call it. Either holds at most `--max-size` bytes, and not none.
    private func clipboardFile(_ context: CommandContext) throws -> (url: URL, origin: String, spill: SpillFile?) {
        let origin = input.map { $0.isStandardStream ? "standard input" : $0.path } ?? "standard input"
        do {
            if let input, !input.isStandardStream {
                let url = URL(fileURLWithPath: input.path)
                if FileAccess.fileKind(of: url) == .regular, let size = FileAccess.version(of: url)?.size {
                    guard size > 0 else {
                        throw GraftError(.malformedInput, "the clipboard is empty", context: [.file(origin)])
                    }
                    guard size <= maxSize.bytes else { throw FileAccess.tooLarge(origin, limit: maxSize.bytes) }
                    return (url, origin, nil)
                }
                return try spool(origin) { try FileAccess.forEachChunk(of: url, maxSize: maxSize.bytes, $0) }
            }
            if context.isInputTerminal {
                throw UsageError("no clipboard: name a file, or pipe one in (graft copy … | graft paste --into …)")
            }
            return try spool(origin) { try context.readInputChunks(maxSize.bytes, $0) }
        } catch var error as GraftError where error.remedy?.kind == .raiseLimit {
            // Too large: the option that allows more.
            error.remedy?.text = "--max-size sets the limit"
            throw error
        }
    }

    private func spool(
        _ origin: String, _ read: (_ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws -> (url: URL, origin: String, spill: SpillFile?) {
        let spill = try SpillFile(prefix: "graft-paste")
        do {
            try read { try spill.write($0) }
            guard spill.size > 0 else {
                throw GraftError(.malformedInput, "the clipboard is empty", context: [.file(origin)])
            }
        } catch {
            spill.remove()
            throw error
        }
        return (spill.url, origin, spill)
    }

    static func summary(_ report: PasteReport, store: String) -> String {
        var parts = ["inserted \(report.inserted.values.reduce(0, +))" + counts(report.inserted)]
        if !report.merged.isEmpty {
            parts.append("merged \(report.merged.values.reduce(0, +))" + counts(report.merged))
        }
        if !report.skipped.isEmpty {
            parts.append("skipped \(report.skipped.values.reduce(0, +))" + counts(report.skipped))
        }
        parts.append("linked \(Wording.counted(report.linked, "reference"))")
        if !report.dangling.isEmpty { parts.append("dropped \(Wording.counted(report.dangling.count, "link"))") }
        if !report.violations.isEmpty {
            parts.append("\(Wording.counted(report.violations.count, "rule")) broken (pasted as they are)")
        }
        return "Pasted into \(store)\(report.createdStore ? " (new)" : ""): " + parts.joined(separator: ", ")
    }

    static func describe(_ report: PasteReport, store: String) -> String {
        var text = "Dry run: nothing was written to \(store).\n"
        text +=
            "Would insert \(Wording.counted(report.inserted.values.reduce(0, +), "object"))\(counts(report.inserted))\n"
        text += "Would merge \(Wording.counted(report.merged.values.reduce(0, +), "object"))\(counts(report.merged))\n"
        text += "Would skip \(Wording.counted(report.skipped.values.reduce(0, +), "object"))\(counts(report.skipped))\n"
        text += "Would link \(Wording.counted(report.linked, "reference")) to existing objects\n"
        text += "Would drop \(Wording.counted(report.dangling.count, "link"))\(report.dangling.isEmpty ? "" : ":")\n"
        for dropped in report.dangling { text += "  \(dropped)\n" }
        if !report.violations.isEmpty {
            text +=
                "Would break \(Wording.counted(report.violations.count, "rule")), pasting the objects as they are:\n"
            for violation in report.violations { text += "  \(violation)\n" }
        }
        for note in report.notes { text += "Note: \(note)\n" }
        return text
    }

    private static func counts(_ counts: [String: Int]) -> String {
        counts.isEmpty ? "" : " (\(describeCounts(counts)))"
    }
}
