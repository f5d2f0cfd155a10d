// The expected output `testRoot`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let testRoot = #"""
        OVERVIEW: Work with Core Data object graphs: models, stores, conversion, copy
        and paste.

        USAGE: graft <subcommand>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          convert                 Convert a store from one format to another.
          copy                    Copy objects from a store to a clipboard document.
          fixtures                Generate test objects from a model.
          model                   Work with models.
          fail                    Fail at run time.
          help                    Show help for a subcommand.

          See 'graft <subcommand> --help' for detailed help.

        """#
}
