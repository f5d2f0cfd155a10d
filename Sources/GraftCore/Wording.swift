/// Small helpers for messages people read.
package enum Wording {
    /// `noun` with "a" or "an" before it, by its first letter: "an Employee", "a Department", "an
    /// integer16". U counts as a consonant ("a URI", "a uuid"), as it does for the names Graft writes.
    package static func withArticle(_ noun: String) -> String {
        guard let first = noun.first?.lowercased() else { return noun }
        return ("aeio".contains(first) ? "an " : "a ") + noun
    }

    /// `count` and `noun`, plural unless the count is one: "1 object", "3 objects".
    package static func counted(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }

    /// `text` as a message quotes it: at most `limit` characters (then "…"), control characters shown as
    /// `\u{…}`, so that text read from a damaged file cannot flood or garble a message.
    package static func excerpt(_ text: String, limit: Int = 60) -> String {
        var shown = ""
        for scalar in text.unicodeScalars.prefix(limit) {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                shown += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return text.unicodeScalars.dropFirst(limit).isEmpty ? shown : shown + "…"
    }
}
