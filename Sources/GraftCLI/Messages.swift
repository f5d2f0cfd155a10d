import Graft

/// Objects per entity as `Department 1, Employee 4`, in name order.
func describeCounts(_ counts: [String: Int]) -> String {
    counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
}

extension GraftError {
    /// The error with the file a command was working on as its outermost place, unless it already
    /// names a file (a store's own errors do; a selection's or a paste's do not).
    func namingFile(_ path: String) -> GraftError {
        if case .file? = context.first { return self }
        return inFile(path)
    }

    /// The same error with the file `path` called `name` wherever it is named (a temporary copy of
    /// standard input called "standard input"), its underlying errors included.
    func replacingFile(_ path: String, with name: String) -> GraftError {
        var error = self
        error.context = context.map { if case .file(path) = $0 { .file(name) } else { $0 } }
        error.underlying = underlying.map { $0.replacingFile(path, with: name) }
        return error
    }
}
