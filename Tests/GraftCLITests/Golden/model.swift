// The expected output `model`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let model = #"""
        OVERVIEW: Work with models.

        USAGE: graft model <subcommand>

        OPTIONS:
          -h, --help              Show help information.

        SUBCOMMANDS:
          hash                    Print the version hashes of a model's entities.

          See 'graft model <subcommand> --help' for detailed help.

        """#
}
