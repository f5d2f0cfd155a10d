import Foundation
import Graft

/// `graft inspect`: describes a model, or the model and metadata of a store.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Describe a model: entities, attributes, relationships and version hashes.",
        discussion: """
            PATH may be an .xcdatamodeld (every version is read; the current one is shown), an \
            .xcdatamodel, a compiled .mom or .momd, or a Core Data SQLite store whose model cache holds its \
            model. The text lists each entity with its parent, version hash, attributes (type and \
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
        ]
    }

    var path: PathArgument = ""
    var json = false

    func run(_ context: CommandContext) throws {
        let url = URL(fileURLWithPath: path.path)
        if SQLiteStoreFile.isSQLite(url) {
            let reader = try SQLiteStoreReader(url: url, model: nil)
            let counts = try reader.counts()
            let model = ModelFile(
                url: url, format: .storeModelCache, versions: [.init(name: "store", model: reader.model)],
                currentVersionName: "store")
            if json {
                context.print(StoreReport.json(format: "sqlite", metadata: reader.metadata, counts: counts, model: model).text(pretty: true))
            } else {
                context.print(StoreReport.text(path: path.path, format: "sqlite", metadata: reader.metadata, counts: counts, model: model), terminator: "")
            }
            return
        }
        let file = try ModelLoading.load(url)
        if json {
            context.print(ModelReport.json(for: file).text(pretty: true))
        } else {
            context.print(ModelReport.text(for: file), terminator: "")
        }
    }
}
