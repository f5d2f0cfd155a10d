// The expected output `graftFixtures`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let graftFixtures = #"""
        OVERVIEW: Generate a valid object graph from a model, the same for the same
        seed, as a store or a clipboard.

        Every generated object satisfies every rule of the model: required values,
        ranges, lengths, patterns, uniqueness constraints, relationship counts on both
        sides, inverses; abstract entities get no objects of their own. Each concrete
        entity gets 10 objects unless --count or the spec says otherwise, more where the
        model needs them (a department that must have 3 employees). Counts that cannot
        satisfy the model are refused with the rule named and counts that can.

        The same model, spec and seed give the same output on every run and machine:
        byte for byte for XML and binary stores and clipboards, the same rows for
        SQLite. Each object's values depend only on the seed, its entity and its index,
        so one more object of one entity leaves the others' values as they were. Values
        look like what their attribute's name says (names, emails, cities, dates near 1
        January 2025, prices, colours).

        The output's kind comes from --format, else from its extension: .sqlite, .xml
        and .binary stores; .json, .plist and .bplist clipboards (--format clipboard-xml
        for a Graft XML clipboard), which `graft paste` pastes into an existing store.
        -o - writes a clipboard (JSON by default) to standard output. Files are written
        atomically.

        --spec FILE reads counts, pinned values, value lists and fan-out from JSON (see
        Formats/fixtures.md); --count and --set override it.

        With --from STORE, the fixture is a consistent subset of a real store instead:
        the objects of --entity (matching --where, at most --limit) and everything the
        model says they need, followed on both sides (required to-ones, to-manys with a
        minimum), so that the subset opens and validates on its own. Links to objects
        not taken are left out of a store and kept as references in a clipboard. Rules
        the source already broke are kept and reported; a rule the subset itself would
        break refuses it. --plan shows what would be taken and why, and writes nothing.
        The store is only read.

        USAGE: graft fixtures [--model <path>] [--version <name>]
               [--count <Entity=n> ...] [--seed <n>] [--spec <file>]
               [--set <Entity.attr=value> ...] [--format <format>] [--output <file>]
               [--force] [--from <store>] [--entity <name>] [--where <predicate>]
               [--limit <n>] [--anonymize <Entity.attr[,…]|auto>] [--plan] [--json]
               [--quiet]

        OPTIONS:
          --model <path>          The model to generate from (.xcdatamodeld,
                                  .xcdatamodel, .momd, .mom, or a store's model cache).
          --version <name>        The version of a model with several to use (by
                                  default, its current one).
          --count <Entity=n>      Make n objects of this entity.
          --seed <n>              The seed (a whole number; by default the spec's, else
                                  1).
          --spec <file>           Read counts, values and fan-out from this JSON file.
          --set <Entity.attr=value>
                                  Give every object of the entity this value (empty for
                                  no value).
          -f, --format <format>   The output's format. (values: sqlite, xml, binary,
                                  json, plist, binary-plist, clipboard-xml)
          -o, --output <file>     Write to this file, or '-' for a clipboard on standard
                                  output.
          --force                 Replace the output file if it exists.
          --from <store>          Take a consistent subset of this store (SQLite, XML or
                                  binary) instead of generating.
          -e, --entity <name>     With --from: the entity to take.
          -w, --where <predicate>
                                  With --from: only the objects matching this predicate,
                                  in Apple's format.
          --limit <n>             With --from: at most n of them (the first by key).
          --anonymize <Entity.attr[,…]|auto>
                                  With --from: replace these attributes' values (auto:
                                  names, emails, phones, addresses) with generated ones,
                                  the same for the same value and --seed.
          --plan                  Print what would be made (or, with --from, taken and
                                  why), and write nothing.
          --json                  Print the summary as JSON.
          -q, --quiet             Print no summary.
          -h, --help              Show help information.

        EXAMPLES:
          A store with the default counts, from the model's current version.
            graft fixtures --model Company.xcdatamodeld -o Fixture.sqlite

          A JSON clipboard of 3 departments and their staff, to paste into a store.
            graft fixtures --model Company.xcdatamodeld --count Department=3 --count Employee=40 --seed 7 -o staff.json

          An XML store from a spec kept with the tests, one value pinned.
            graft fixtures --model Company.xcdatamodeld --spec fixtures.json --set Employee.isRemote=NO -o Test.xml

          Twenty well-paid employees of a real store, with their departments and
          colleagues.
            graft fixtures --from App.sqlite --entity Employee --where 'salary > 100000' --limit 20 -o Rich.sqlite

        """#
}
