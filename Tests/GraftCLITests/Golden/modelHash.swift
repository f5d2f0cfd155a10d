// The expected output `modelHash`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let modelHash = #"""
        OVERVIEW: Print the version hashes of a model's entities.

        USAGE: graft model hash <model>

        ARGUMENTS:
          <model>                 The model to read.

        OPTIONS:
          -h, --help              Show help information.

        """#
}
