import GraftCore

/// Makes `GraftError.syntaxError`s that show where in the text the problem is.
///
/// The error's context holds `.offset(n)`, the offset in characters (grapheme clusters) from the start
/// of the text, and its message ends with the text's line and a caret under the offending character:
///
/// ```
/// expected ')' to close the '(' at offset 0
///   (name == "Ann"
///                 ^
/// ```
struct SyntaxErrorFactory {
    /// The text being parsed.
    var text: String
    /// What the text is, for messages: "predicate", "key path".
    var subject: String

    func error(_ message: String, at offset: Int) -> GraftError {
        GraftError(.syntaxError, message + "\n" + pointer(at: offset), context: [.offset(offset)])
    }

    /// The line of `text` holding `offset`, and a caret line under it.
    private func pointer(at offset: Int) -> String {
        let characters = Array(text)
        let clamped = max(0, min(offset, characters.count))
        var lineStart = clamped
        while lineStart > 0, !characters[lineStart - 1].isNewline { lineStart -= 1 }
        var lineEnd = clamped
        while lineEnd < characters.count, !characters[lineEnd].isNewline { lineEnd += 1 }
        let line = characters[lineStart..<lineEnd].map { $0 == "\t" ? " " : $0 }
        return "  " + String(line) + "\n  " + String(repeating: " ", count: clamped - lineStart) + "^"
    }
}
