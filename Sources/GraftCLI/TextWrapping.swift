/// Breaking help text into lines that fit a width.
enum TextWrapping {
    /// The lines of `text` broken at spaces so each fits in `width` characters.
    ///
    /// Line breaks in `text` are kept. A word longer than `width` gets a line of its own.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ") {
                if line.isEmpty {
                    line = String(word)
                } else if line.count + 1 + word.count <= width {
                    line += " " + word
                } else {
                    lines.append(line)
                    line = String(word)
                }
            }
            lines.append(line)
        }
        return lines
    }

    /// Paragraphs separated by blank lines, each wrapped to `width`; a paragraph whose lines start with a
    /// space is kept as written.
    static func wrapParagraphs(_ text: String, width: Int) -> String {
        let paragraphs = text.split(separator: "\n\n", omittingEmptySubsequences: true).map { paragraph in
            if paragraph.hasPrefix(" ") { return String(paragraph) }
            return wrap(paragraph.split(separator: "\n").joined(separator: " "), width: width)
                .joined(separator: "\n")
        }
        return paragraphs.joined(separator: "\n\n")
    }

    /// `parts` joined by spaces, breaking between parts so lines fit in `width`, with every line after the
    /// first indented by `indent` spaces.
    static func hanging(_ parts: [String], width: Int, indent: Int) -> String {
        var lines: [String] = []
        var line = ""
        for part in parts {
            if line.isEmpty {
                line = part
            } else if line.count + 1 + part.count <= width {
                line += " " + part
            } else {
                lines.append(line)
                line = String(repeating: " ", count: indent) + part
            }
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
