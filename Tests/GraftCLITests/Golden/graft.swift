// The expected output `graft`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let graft = #"""
        OVERVIEW: Work with Core Data object graphs: models, stores, conversion, copy
        and paste, fixtures, migration.

        Graft reads and writes Core Data models and the SQLite, XML and binary store
        formats without Apple's frameworks. Run a subcommand with --help, or 'graft help
        <subcommand>', to see what it takes.

        USAGE: graft <subcommand>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          inspect                 Describe a model: entities, attributes, relationships
                                  and version hashes.
          convert                 Convert a whole store document between the SQLite, XML
                                  and binary formats.
          copy                    Copy chosen objects, and what they own, from a store
                                  into a clipboard document.
          paste                   Paste a clipboard document into a store as new
                                  objects, all or nothing.
          validate                List every rule of its model that a store's objects
                                  break.
          fixtures                Generate a valid object graph from a model, the same
                                  for the same seed, as a store or a clipboard.
          migrate                 Migrate a store written with an older version of a
                                  model to a newer version.
          help                    Show help for a subcommand.

          See 'graft <subcommand> --help' for detailed help.

        """#
}
