// The expected output `graftCopy`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let graftCopy = #"""
        OVERVIEW: Copy chosen objects, and what they own, from a store into a clipboard
        document.

        Choose roots with --entity (and --where), --uri, --key or --all. From the roots
        the copy follows the model: relationships whose delete rule is Cascade bring
        along the objects a root owns; every other relationship leaves the selection,
        and the object at its end is written as a reference (entity, identity and URI)
        that a paste links to the target's own object. --follow, --stop and --depth
        override the rules; --plan shows what they decide without copying.

        The document goes to standard output, or to -o FILE (written atomically). Its
        encoding comes from --format, else from FILE's extension (.json, .xml, .plist,
        .bplist), else JSON. The store is only read, never changed. A binary value whose
        external file is missing (Core Data keeps large values beside a SQLite store,
        and copies of stores often leave them behind) stops the copy, unless
        --omit-missing-external-data copies it as no value, with a warning. So does a
        stored value that is not of its attribute's type or is outside its range, unless
        --lenient copies it as no value, with one warning per attribute.

        USAGE: graft copy [--entity <name>] [--where <predicate>] [--uri <uri> ...]
               [--key <Entity=key> ...] [--all] [--follow <relationship> ...]
               [--stop <entity|relationship> ...] [--depth <n>]
               [--identity <Entity=attr[,attr]> ...] [--format <encoding>]
               [--output <file>] [--force] [--model <path>]
               [--omit-missing-external-data] [--lenient] [--no-model] [--plan] [--json]
               [--quiet] <store>

        ARGUMENTS:
          <store>                 The store to copy from (SQLite, XML or binary).

        OPTIONS:
          -e, --entity <name>     Take objects of this entity (and its subentities) as
                                  roots.
          -w, --where <predicate>
                                  With --entity: only the objects matching this
                                  predicate, in Apple's format.
          --uri <uri>             Take the object with this URI (x-coredata://…) as a
                                  root.
          --key <Entity=key>      Take the object with this primary key as a root.
          --all                   Take every object of the store.
          --follow <relationship>
                                  Also copy what this relationship reaches
                                  (Entity.relationship, or relationship for every
                                  entity).
          --stop <entity|relationship>
                                  Never copy this entity's objects, or never follow this
                                  relationship: reference them instead.
          --depth <n>             Follow relationships at most n steps from a root.
          --identity <Entity=attr[,attr]>
                                  The attributes that identify this entity's objects in
                                  references (by default, its uniqueness constraint).
          -f, --format <encoding>
                                  The clipboard's encoding. (values: plist,
                                  binary-plist, json, xml)
          -o, --output <file>     Write the clipboard to this file.
          --force                 Replace the output file if it exists.
          --model <path>          The model to read the store with (by default, its
                                  own).
          --omit-missing-external-data
                                  Copy binary values whose external file is missing as
                                  no value, with a warning, instead of failing.
          --lenient               Copy stored values that are not of their attribute's
                                  type or range as no value, with one warning per
                                  attribute, instead of failing.
          --no-model              Leave the source model out of the clipboard (a paste
                                  into a new store then needs --model).
          --plan                  Print what would be copied and what would be
                                  referenced, and copy nothing.
          --json                  Print the summary (or the --plan) as JSON, warnings
                                  included: on standard output when the clipboard goes
                                  to a file, else on standard error.
          -q, --quiet             Print no summary.
          -h, --help              Show help information.

        EXAMPLES:
          Copy the Sales department and its projects.
            graft copy Company.sqlite --entity Department --where 'name == "Sales"' > sales.json

          Show what copying every department with its employees would take.
            graft copy Company.sqlite --entity Department --follow Department.employees --plan

          Copy a whole store into a binary property list.
            graft copy App.sqlite --all --format binary-plist -o everything.bplist

        """#
}
