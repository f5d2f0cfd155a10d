// The expected output `copy`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let copy = #"""
        OVERVIEW: Copy objects from a store to a clipboard document.

        USAGE: graft copy [--where <predicate>] [--ratio <ratio>] <store> [<out>]

        ARGUMENTS:
          <store>                 The store to copy from.
          <out>                   Where to write the clipboard; standard output if left
                                  out.

        OPTIONS:
          --where <predicate>     Which objects to copy.
          --ratio <ratio>         The share of objects to copy. (default: 1.0)
          -h, --help              Show help information.

        """#
}
