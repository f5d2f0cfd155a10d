// The expected output `help`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let help = #"""
        OVERVIEW: Show help for a subcommand.

        USAGE: graft help [<subcommand> ...]

        ARGUMENTS:
          <subcommand>            The subcommand to show help for, and its subcommands.

        OPTIONS:
          -h, --help              Show help information.

        """#
}
