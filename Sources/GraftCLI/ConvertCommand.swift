import Foundation
import Graft

extension StoreFormat: ArgumentValue {}

/// `graft convert`: a whole document from one store format to another.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert a whole store document between the SQLite, XML and binary formats.",
        discussion: """
            The input's format is recognised by its content; the output's comes from --to or from its \
            extension (.sqlite, .xml, .binary). Objects stream from reader to writer, so documents of \
            millions of objects convert in bounded memory. The input is never changed; the output is written \
            to a temporary file beside it and renamed into place when complete, so a failed conversion \
            leaves nothing behind. An existing output is replaced only with --force.

            Values are read strictly: a stored value that is not of its attribute's type or is outside its \
            range (text or a blob in an integer or date column, 10.5 for an Integer 16, text that is not \
            UTF-8) stops the conversion with an error naming the object, the attribute and the value. \
            --lenient converts such values as no value instead, with one warning per attribute. --verify \
            compares the output with the input's stored values (for a SQLite input, as SQLite holds them).
            """,
        examples: [
            CommandExample("graft convert App.sqlite App.xml", "Write the store as Core Data XML."),
            CommandExample(
                "graft convert Library.xml Library.sqlite --verify",
                "Convert, then compare the result object by object."),
        ])

    static var arguments: [Argument<ConvertCommand>] {
        [
            .positional(\.input, name: "in", help: "The store document to read."),
            .positional(\.output, name: "out", help: "The document to write."),
            .option(
                \.format, name: "to", valueName: "format", help: "The output format (by default, from OUT's extension)."
            ),
            .option(
                \.model, name: "model", valueName: "path",
                help: "The model to read IN with (by default, the one IN carries)."),
            .flag(\.force, name: "force", short: "f", help: "Replace OUT if it exists."),
            .flag(\.verify, name: "verify", help: "Read OUT back and compare it with IN, object by object."),
            .flag(
                \.omitMissingExternalData, name: "omit-missing-external-data",
                help: "Read binary values whose external file is missing as empty, with a warning, instead of failing."),
            .flag(
                \.lenient, name: "lenient",
                help:
                    "Convert stored values that are not of their attribute's type or range (text in an integer column, 70000 for an Integer 16) as no value, with one warning per attribute, instead of failing."
            ),
            .flag(\.json, name: "json", help: "Print the summary as JSON (warnings included) instead of text."),
            .flag(\.quiet, name: "quiet", short: "q", help: "Print no progress and no summary."),
        ]
    }

    var input: PathArgument = ""
    var output: PathArgument = ""
    var format: StoreFormat?
    var model: PathArgument?
    var force = false
    var verify = false
    var omitMissingExternalData = false
    var lenient = false
    var json = false
    var quiet = false

    mutating func validate() throws {
        if input.isStandardStream || output.isStandardStream {
            throw UsageError("convert reads and writes files; '-' (standard input or output) is not supported")
        }
    }

    func run(_ context: CommandContext) throws {
        let inputURL = URL(fileURLWithPath: input.path)
        let outputURL = URL(fileURLWithPath: output.path)
        let chosenModel = try model.map {
            try ModelLoading.model(at: URL(fileURLWithPath: $0.path), forStoreAt: inputURL).model
        }
        var options = Conversion.Options(
            format: format, model: chosenModel, overwrite: force, verify: verify,
            reading: StoreReadOptions(
                valueReading: lenient ? .lenient : .strict, missingExternalData: omitMissingExternalData ? .omit : .fail
            ))
        options.overwrite = force
        let progress = ProgressLine("converting", context: context, shown: !quiet && !json)
        let started = Date()
        let report = try Conversion.convert(from: inputURL, to: outputURL, options: options) { done, total in
            progress.update(done, of: total)
        }
        progress.finish()
        guard !quiet else { return }
        if json {
            context.print(report.json.text(pretty: true))
            return
        }
        context.printWarnings(report.warnings)
        let seconds = Date().timeIntervalSince(started)
        context.print(
            "Converted \(report.objects) objects from \(report.inputFormat) to \(report.outputFormat): \(output.path)"
                + (verify ? " (verified: no differences)" : "") + String(format: " in %.1f s", seconds))
    }
}
