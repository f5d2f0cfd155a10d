// The expected output `graftPaste`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let graftPaste = #"""
        OVERVIEW: Paste a clipboard document into a store as new objects, all or
        nothing.

        The clipboard is read from FILE, or from standard input when FILE is '-' or
        absent; its encoding is recognised by content. Every copied object becomes a new
        object with a new ID; links among them are rewired, and references link to the
        target's object with the same identity (or, pasting back into the store copied
        from, the same URI). A copy whose identity already exists is handled by
        --on-conflict. The result is validated as a whole before anything is written,
        and every problem is reported at once, saying which rules the copied objects
        already broke in the clipboard; on any failure the store is left exactly as it
        was. --no-validate pastes objects that break the model's rules (as real stores'
        objects sometimes do) as they are, with a warning for each rule broken.

        --into names an existing store (SQLite is saved in one transaction; XML and
        binary documents are rewritten atomically) or a new one, whose format comes from
        its extension and whose model is --model or, by default, the one the clipboard
        carries. No other writer can change the store while a paste reads, checks and
        writes it: another writer waits for this one, and this one waits up to --wait
        seconds for another, then fails saying the store is busy. A dry run needs no
        write access and changes nothing, a SQLite store's -wal included.

        On success the map from clipboard ids to the URIs of the objects they became is
        printed, one tab-separated pair per line (or written as JSON with --id-map), and
        a summary goes to standard error.

        USAGE: graft paste [--into <store>] [--model <path>]
               [--on-conflict <policy> ...] [--dangling <policy>]
               [--identity <Entity=attr[,attr]> ...] [--dry-run] [--no-validate]
               [--id-map <file>] [--wait <seconds>] [--max-size <size>] [--json]
               [--quiet] [<file>]

        ARGUMENTS:
          <file>                  The clipboard document ('-' or absent: standard
                                  input).

        OPTIONS:
          -i, --into <store>      The store to paste into (created if it does not
                                  exist).
          --model <path>          The model of the store (by default, its own; for a new
                                  store, the clipboard's).
          --on-conflict <policy>  When a copy's identity exists in the store: merge,
                                  duplicate, skip or fail; Entity=policy for one entity.
          --dangling <policy>     A reference the store has no object for: fail, or drop
                                  the link. (values: fail, drop; default: fail)
          --identity <Entity=attr[,attr]>
                                  The attributes that identify this entity's objects (by
                                  default, its uniqueness constraint).
          -n, --dry-run           Report what would be done, and write nothing.
          --no-validate           Paste objects that break the model's rules as they
                                  are, with a warning for each rule broken.
          --id-map <file>         Write the id map to this file as JSON instead of
                                  printing it.
          --wait <seconds>        How long to wait for another writer to finish with the
                                  store before failing as busy. (default: 5.0)
          --max-size <size>       The largest clipboard accepted, in bytes or with K, M
                                  or G (enforced while reading). (default: 1G)
          --json                  Print the report as JSON (the id map, counts, notes
                                  and broken rules) instead of text.
          -q, --quiet             Print no summary.
          -h, --help              Show help information.

        EXAMPLES:
          Copy a department from one store into another.
            graft copy A.sqlite --entity Department --where 'name == "Sales"' | graft paste --into B.sqlite

          Update departments and people that exist already; always add projects.
            graft paste sales.json --into B.xml --on-conflict merge --on-conflict Project=duplicate

          Show what the paste would do.
            graft paste sales.json --into B.sqlite --dry-run

        """#
}
