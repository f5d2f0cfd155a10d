// The expected output `graftMigrate`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let graftMigrate = #"""
        OVERVIEW: Migrate a store written with an older version of a model to a newer
        version.

        The store's version is found among the model's versions by the version hashes
        the store records (a store whose version is not there but which carries its
        model, as SQLite stores do, starts from the version nearest to its own). Graft
        then steps through the versions in order up to the current one (or --version),
        inferring each step's mapping as Core Data's lightweight migration does:
        properties and entities added, removed, or renamed through renaming identifiers;
        optional and required, with the default; numeric type changes; to-one and
        to-many, ordered and unordered; moves within an inheritance hierarchy. A change
        no mapping can be inferred for is refused, naming the property and what a
        mapping model would have to say.

        A step that a mapping model joins (one given with --mapping, or one in the
        model's folder, matched by the version hashes it records) is run by it: its
        value expressions that read a source attribute, give a constant, or carry the
        objects a relationship names. A mapping that names a custom policy class is app
        code Graft cannot run: such a step is refused, naming the class and the entity
        (from Swift, a MigrationPolicy registered under that name runs it).

        All steps run in one pass: objects stream from the store through every step into
        a new document, as convert writes one. The store's UUID, its metadata and every
        object's key (so its URI) are kept. --plan prints the steps and every change
        they carry without writing. -o writes a new document; --in-place replaces the
        store once the new one is complete (and verified, with --verify), so a failed
        migration leaves the store as it was. A SQLite store whose steps only add
        attributes is migrated --in-place where it is instead, in one transaction: new
        columns, filled with the default.

        USAGE: graft migrate [--model <path>] [--version <name>] [--mapping <path> ...]
               [--output <path>] [--in-place] [--to <format>] [--plan] [--force]
               [--verify] [--omit-missing-external-data] [--lenient] [--json] [--quiet]
               <store>

        ARGUMENTS:
          <store>                 The store document to migrate.

        OPTIONS:
          -m, --model <path>      The model with the store's version and the one to
                                  migrate to (.xcdatamodeld, .momd).
          --version <name>        The version to migrate to (by default, the model's
                                  current version).
          --mapping <path>        A mapping model (.cdm, .xcmappingmodel) for a step
                                  that needs one; those beside the model are found too.
          -o, --output <path>     Write the migrated store here.
          --in-place              Replace the store with the migrated one when it is
                                  complete.
          --to <format>           The output's format (by default, from its extension,
                                  else the store's). (values: sqlite, xml, binary)
          --plan                  Print the steps and their changes; write nothing.
          -f, --force             Replace the output if it exists.
          --verify                Read the result back and compare it with the store
                                  migrated in memory.
          --omit-missing-external-data
                                  Read binary values whose external file is missing as
                                  empty, with a warning, instead of failing.
          --lenient               Read stored values that are not of their attribute's
                                  type or range as no value, with a warning.
          --json                  Print the plan or the summary as JSON instead of text.
          -q, --quiet             Print no progress and no summary.
          -h, --help              Show help information.

        EXAMPLES:
          Say which version wrote the store and what migrating it takes.
            graft migrate Old.sqlite --model Company.xcdatamodeld --plan

          Write the migrated store as a new document, then check it.
            graft migrate Old.sqlite --model Company.xcdatamodeld -o New.sqlite --verify

          Migrate the store itself.
            graft migrate App.sqlite --model App.momd --in-place

        """#
}
