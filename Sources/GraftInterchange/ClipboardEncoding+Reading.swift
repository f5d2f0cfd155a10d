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
    /// Whether the document has its `objects`, read or not.
    var hasObjects = false
    /// The number of objects, when they were counted while the rest was read.
    var objectCount: Int?
    /// The objects, when they were read with the rest.
    var objects: [Clipboard.Object]?
    var references: [Clipboard.Reference]?

    /// How many objects a reader goes through between reports of its progress.
    static let progressInterval = 4096

    /// The first member missing, or a declaration this version does not read.
    func problem(_ encoding: ClipboardEncoding) -> GraftError? {
        let names: [(String, Bool)] = [
            (ClipboardKey.format, format != nil), (ClipboardKey.version, version != nil),
            (ClipboardKey.encoding, declaration != nil), (ClipboardKey.model, entities != nil),
            (ClipboardKey.roots, roots != nil), (ClipboardKey.objects, hasObjects),
            (ClipboardKey.references, references != nil),
        ]
        for (name, present) in names where !present {
            return GraftError(.malformedInput, "the document has no '\(name)'")
        }
        if let declaration, let problem = ClipboardDeclaration.problem(declaration, for: encoding) {
            return GraftError(.unsupportedFormat, problem)
        }
        return nil
    }

    /// Everything but the objects; `problem(_:)` has found nothing missing.
    var header: Clipboard.Header {
        Clipboard.Header(
            entities: entities ?? [], versionIdentifiers: versionIdentifiers, sourceStore: sourceStore,
            roots: roots ?? [], references: references ?? [], modelContents: modelContents)
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
