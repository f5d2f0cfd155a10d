import Foundation
import GraftCore
import GraftModel

/// The members of a document as a reader collects them, in whatever order they come, and the checks
/// every reader makes once it has them all.
struct ClipboardParts {
    var format: String?
    var version: Int64?
    var declaration: [(key: String, value: String)]?
    var entities: [Clipboard.EntityInfo]?
    var versionIdentifiers: [String] = []
    var modelContents: Data?
    var sourceStore: String?
    var roots: [String]?
    var objects: [Clipboard.Object]?
    var references: [Clipboard.Reference]?

    /// Whether `format` and `version` have been read and are acceptable, so that a later error cannot be
    /// explained by the document being something else.
    var headerChecked: Bool { format != nil && version != nil }

    /// The document, or the first thing missing or wrong in it.
    func assemble(_ encoding: ClipboardEncoding) -> Result<Clipboard, GraftError> {
        let names: [(String, Bool)] = [
            (ClipboardKey.format, format != nil), (ClipboardKey.version, version != nil),
            (ClipboardKey.encoding, declaration != nil), (ClipboardKey.model, entities != nil),
            (ClipboardKey.roots, roots != nil), (ClipboardKey.objects, objects != nil),
            (ClipboardKey.references, references != nil),
        ]
        for (name, present) in names where !present {
            return .failure(GraftError(.malformedInput, "the document has no '\(name)'"))
        }
        if let problem = ClipboardDeclaration.problem(declaration!, for: encoding) {
            return .failure(GraftError(.unsupportedFormat, problem))
        }
        return .success(
            Clipboard(
                entities: entities!, versionIdentifiers: versionIdentifiers, sourceStore: sourceStore, roots: roots!,
                objects: objects!, references: references!, modelContents: modelContents))
    }
}

/// Small set of the attribute indexes an object has given values for, to refuse repeats.
struct ClipboardSeenSet {
    private var low: UInt64 = 0
    private var high: Set<Int> = []

    /// Records `index`; false when it was recorded already.
    @inline(__always)
    mutating func insert(_ index: Int) -> Bool {
        if index < 64 {
            let bit = UInt64(1) << UInt64(index)
            if low & bit != 0 { return false }
            low |= bit
            return true
        }
        return high.insert(index).inserted
    }
}

extension GraftError {
    /// The error with the object and key added when it does not name an object yet: errors the tokenizers
    /// raise inside a value know where they are in the bytes, not in the document.
    func within(object label: String, key: String? = nil) -> GraftError {
        guard !context.contains(where: { if case .object = $0 { true } else { false } }) else { return self }
        var located = self
        located.context.append(.object(label))
        if let key { located.context.append(.key(key)) }
        return located
    }
}
