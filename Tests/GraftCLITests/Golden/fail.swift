// The expected output `fail`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let fail = #"""
        OVERVIEW: Fail at run time.

        USAGE: graft fail [--status <status>] [--other]

        OPTIONS:
          --status <status>       Exit with this status instead of throwing an error.
          --other                 Throw an error that is not a GraftError.
          -h, --help              Show help information.

        """#
}
