// The expected output `convert`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let convert = #"""
        OVERVIEW: Convert a store from one format to another.

        Reads the store IN and writes every object in it to OUT in the format given by
        --to. The model comes from IN's metadata unless --model names one.

        Either file may be - for standard input or output:

            graft convert - Company.xml --to xml < Company.sqlite

        USAGE: graft convert [--to <format>] [--model <path>] [--batch-size <count>]
               [--follow <relationship> ...] [--force] [--quiet] <in> <out>

        ARGUMENTS:
          <in>                    The store to read, or - for standard input.
          <out>                   The store to write, or - for standard output.

        OPTIONS:
          -t, --to <format>       The format to write. (values: sqlite, xml, binary;
                                  default: sqlite)
          -m, --model <path>      The model to read IN with.
          -b, --batch-size <count>
                                  How many objects to write per transaction.
                                  (default: 1000)
          --follow <relationship>
                                  Copy the objects along this relationship too; give it
                                  once for each relationship.
          -f, --force             Replace OUT if it exists.
          -q, --quiet             Print nothing but errors.
          -h, --help              Show help information.

        EXAMPLES:
          Write an XML copy of a SQLite store.
            graft convert Company.sqlite Company.xml --to xml

          Replace New.sqlite with a SQLite copy of a binary store, following the
          employees relationship, which is an explanation long enough to wrap.
            graft convert -f --follow employees Old.binary New.sqlite

        """#
}
