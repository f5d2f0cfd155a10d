/// The candidate closest to a mistyped `word`, if one is close enough to be what was meant.
///
/// Closeness is the number of single-letter insertions, deletions, substitutions and swaps of neighbours
/// between the two words. A candidate qualifies with at most 2 of them and fewer than half its length, so
/// `convrt` suggests `convert` and `hlep` suggests `help`, but `nosuch` suggests nothing. Ties go to the
/// earlier candidate.
func didYouMean(_ word: String, among candidates: [String]) -> String? {
    var best: (candidate: String, distance: Int)?
    for candidate in candidates {
        let distance = editDistance(word, candidate)
        guard distance <= 2, distance * 2 < candidate.count else { continue }
        if best == nil || distance < best!.distance { best = (candidate, distance) }
    }
    return best?.candidate
}

/// The optimal-string-alignment distance between two words (Levenshtein plus swaps of neighbours).
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
    // rows[i][j]: distance between a.prefix(i) and b.prefix(j); three rows are all the swap rule needs.
    var previous2 = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                current[j] = min(current[j], previous2[j - 2] + 1)
            }
        }
        (previous2, previous, current) = (previous, current, previous2)
    }
    return previous[b.count]
}
