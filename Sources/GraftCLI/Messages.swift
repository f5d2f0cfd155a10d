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
}
