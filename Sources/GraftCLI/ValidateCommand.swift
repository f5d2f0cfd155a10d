import Foundation
import Graft

/// `graft validate`: every rule a store's objects break.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "List every rule of its model that a store's objects break.",
        discussion: """
            The checks are those a paste makes of its result: required attributes and relationships, \
            types, integer ranges, minimum and maximum values, lengths and sizes, patterns, to-many counts, \
            destination entities, and uniqueness constraints across the store. Each rule broken is printed \
            on a line of its own: the object (entity and key), the property, the rule and what is wrong; \
            --json prints the same as JSON, with each object's URI. The store (SQLite, XML or binary) is \
            only read, never changed.

            The exit status is 0 when no rule is broken and 1 when any is, so a script can check a store \
            before copying from it (a paste refuses objects that break rules unless given --no-validate).
            """,
        examples: [
            CommandExample("graft validate App.sqlite", "List what the store's objects break, if anything."),
            CommandExample(
                "graft validate Library.xml --model Library.xcdatamodeld --json",
                "Check a document against a model, for a program to read."),
        ])

    static var arguments: [Argument<ValidateCommand>] {
        [
            .positional(\.store, name: "store", help: "The store to check (SQLite, XML or binary)."),
            .option(
                \.model, name: "model", valueName: "path",
                help: "The model to check the store against (by default, its own)."),
            .flag(\.json, name: "json", help: "Print JSON instead of text."),
            .flag(
                \.omitMissingExternalData, name: "omit-missing-external-data",
                help: "Check values kept in missing external files as no value, with a warning, instead of stopping."),
            .flag(
                \.lenient, name: "lenient",
                help:
                    "Check stored values that are not of their attribute's type or range as no value, with one warning per attribute, instead of stopping."
            ),
        ]
    }

    var store: PathArgument = ""
    var model: PathArgument?
    var json = false
    var omitMissingExternalData = false
    var lenient = false

    mutating func validate() throws {
        if store.isStandardStream { throw UsageError("validate reads a store file; '-' is not supported") }
    }

    func run(_ context: CommandContext) throws {
        let storeURL = URL(fileURLWithPath: store.path)
        let chosenModel = try model.map {
            try ModelLoading.model(at: URL(fileURLWithPath: $0.path), forStoreAt: storeURL).model
        }
        let report: StoreValidation.Report
        let opened: any PersistentStore
        do {
            opened = try StoreFormat.openForReading(
                storeURL, model: chosenModel,
                options: StoreReadOptions(
                    valueReading: lenient ? .lenient : .strict,
                    missingExternalData: omitMissingExternalData ? .omit : .fail))
            report = try StoreValidation.check(opened)
        } catch let error as GraftError {
            throw error.namingFile(storeURL.relativePath)
        }
        for warning in opened.warnings { context.printError("warning: \(warning)") }
        if json {
            context.print(report.json.text(pretty: true))
        } else {
            for found in report.violations { context.print(found.line) }
            context.printError("\(store.path): \(report.summary)")
        }
        if !report.violations.isEmpty { throw ExitCode.failure }
    }
}
