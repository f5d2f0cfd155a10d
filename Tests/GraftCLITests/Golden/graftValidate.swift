// The expected output `graftValidate`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let graftValidate = #"""
        OVERVIEW: List every rule of its model that a store's objects break.

        The checks are those a paste makes of its result: required attributes and
        relationships, types, integer ranges, minimum and maximum values, lengths and
        sizes, patterns, to-many counts, destination entities, and uniqueness
        constraints across the store. Each rule broken is printed on a line of its own:
        the object (entity and key), the property, the rule and what is wrong; --json
        prints the same as JSON, with each object's URI. The store (SQLite, XML or
        binary) is only read, never changed.

        The exit status is 0 when no rule is broken and 1 when any is, so a script can
        check a store before copying from it (a paste refuses objects that break rules
        unless given --no-validate).

        USAGE: graft validate [--model <path>] [--json] [--omit-missing-external-data]
               [--lenient] <store>

        ARGUMENTS:
          <store>                 The store to check (SQLite, XML or binary).

        OPTIONS:
          --model <path>          The model to check the store against (by default, its
                                  own).
          --json                  Print JSON instead of text.
          --omit-missing-external-data
                                  Check values kept in missing external files as no
                                  value, with a warning, instead of stopping.
          --lenient               Check stored values that are not of their attribute's
                                  type or range as no value, with one warning per
                                  attribute, instead of stopping.
          -h, --help              Show help information.

        EXAMPLES:
          List what the store's objects break, if anything.
            graft validate App.sqlite

          Check a document against a model, for a program to read.
            graft validate Library.xml --model Library.xcdatamodeld --json

        """#
}
