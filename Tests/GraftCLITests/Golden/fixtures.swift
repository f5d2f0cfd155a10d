// The expected output `fixtures`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let fixtures = #"""
        OVERVIEW: Generate test objects from a model.

        USAGE: graft fixtures [--count <count>] [--seed <seed>] [--format <format> ...]
               <model> [<entities> ...]

        ARGUMENTS:
          <model>                 The model to generate objects for.
          <entities>              The entities to generate; all if none are named.

        OPTIONS:
          -n, --count <count>     How many objects of each entity. (default: 10)
          --seed <seed>           The random seed.
          --format <format>       The formats to write. (values: sqlite, xml, binary;
                                  default: sqlite, xml)
          -h, --help              Show help information.

        """#
}
