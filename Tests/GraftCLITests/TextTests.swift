import Testing

@testable import GraftCLI

@Suite struct SuggestionTests {
    @Test(arguments: [
        ("", "", 0), ("a", "", 1), ("", "abc", 3), ("help", "help", 0), ("hlep", "help", 1), ("convrt", "convert", 1),
        ("kitten", "sitting", 3), ("ab", "ba", 1), ("abc", "ca", 3), ("forse", "force", 1),
    ])
    func editDistance(_ a: String, _ b: String, _ distance: Int) {
        #expect(GraftCLI.editDistance(a, b) == distance)
        #expect(GraftCLI.editDistance(b, a) == distance)
    }

    @Test func suggestsOnlyCloseCandidates() {
        let names = ["convert", "copy", "paste", "inspect", "fixtures", "help"]
        #expect(didYouMean("convrt", among: names) == "convert")
        #expect(didYouMean("cpoy", among: names) == "copy")
        #expect(didYouMean("inpsect", among: names) == "inspect")
        #expect(didYouMean("nosuch", among: names) == nil)
        #expect(didYouMean("c", among: names) == nil)
        #expect(didYouMean("x", among: ["to", "t"]) == nil)
        // Ties go to the earlier candidate.
        #expect(didYouMean("cat", among: ["car", "cap"]) == "car")
    }
}

@Suite struct TextWrappingTests {
    @Test func wrapsAtSpaces() {
        #expect(TextWrapping.wrap("aaa bbb ccc", width: 7) == ["aaa bbb", "ccc"])
        #expect(TextWrapping.wrap("aaa bbb ccc", width: 6) == ["aaa", "bbb", "ccc"])
        #expect(TextWrapping.wrap("aaa  bbb", width: 80) == ["aaa bbb"])
        #expect(TextWrapping.wrap("", width: 10) == [""])
    }

    @Test func keepsLongWordsAndLineBreaks() {
        #expect(TextWrapping.wrap("a verylongword b", width: 5) == ["a", "verylongword", "b"])
        #expect(TextWrapping.wrap("one\ntwo three", width: 80) == ["one", "two three"])
    }

    @Test func wrapsParagraphsAndKeepsIndentedOnes() {
        let text = "one two\nthree four five\n\n    keep   this\n    as is\n\nsix"
        #expect(
            TextWrapping.wrapParagraphs(text, width: 9)
                == "one two\nthree\nfour five\n\n    keep   this\n    as is\n\nsix")
    }

    @Test func hangsContinuationLines() {
        #expect(
            TextWrapping.hanging(["usage: x", "[--a]", "[--bb]", "<c>"], width: 15, indent: 7)
                == "usage: x [--a]\n       [--bb]\n       <c>")
    }
}

@Suite struct GoldenTests {
    @Test func diffsShowRemovedLinesBeforeAddedOnes() {
        #expect(lineDiff("a\nb\nc", "a\nB\nc") == "  a\n- b\n+ B\n  c")
        #expect(lineDiff("a\n", "a  \nb\n") == "- a\n+ a··\n+ b\n  ")
    }

    @Test func goldenSourcesHoldTheTextExactly() {
        let text = "one\n\n  two \\(x) \"\"\"\n"
        #expect(
            Golden.source(named: "sample", text: text) == """
                // The expected output `sample`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
                extension Golden {
                    static let sample = #\"\"\"
                        one

                          two \\(x) \"\"\"

                        \"\"\"#
                }

                """)
    }
}
