import Foundation
import GraftCore
import GraftGraph
import GraftInterchange

/// Where a fixture goes: a store document or a clipboard.
public enum FixtureOutput: Hashable, Sendable, CustomStringConvertible {
    case store(StoreFormat)
    case clipboard(ClipboardEncoding)

    /// The names `--format` takes: the store formats (`sqlite`, `xml`, `binary`) and the clipboard
    /// encodings (`json`, `plist`, `binary-plist`, and `clipboard-xml`, since `xml` is the store).
    public static let names = ["sqlite", "xml", "binary", "json", "plist", "binary-plist", "clipboard-xml"]

    public init?(name: String) {
        switch name {
        case "clipboard-xml": self = .clipboard(.xml)
        case "xml": self = .store(.xml)
        default:
            if let format = StoreFormat(rawValue: name) {
                self = .store(format)
            } else if let encoding = ClipboardEncoding(rawValue: name) {
                self = .clipboard(encoding)
            } else {
                return nil
            }
        }
    }

    /// The output a file's extension names: a store's first (`.sqlite`, `.xml`, `.binary`), then a
    /// clipboard's (`.json`, `.plist`, `.bplist`).
    public static func forExtension(_ url: URL) -> FixtureOutput? {
        if let format = StoreFormat.forExtension(url) { return .store(format) }
        return ClipboardEncoding.forExtension(url).map(FixtureOutput.clipboard)
    }

    /// The description with its article, for a sentence: "an XML store", "a JSON clipboard".
    public var phrase: String {
        let text = description
        return (["XML", "a", "e", "i", "o", "u"].contains { text.hasPrefix($0) } ? "an " : "a ") + text
    }

    public var description: String {
        switch self {
        case .store(let format):
            return ["sqlite": "SQLite", "xml": "XML"][format.rawValue, default: format.rawValue] + " store"
        case .clipboard(let encoding): return encoding.displayName + " clipboard"
        }
    }
}

extension FixtureGenerator {
    /// What was written.
    public struct Written: Sendable {
        public var output: FixtureOutput
        /// Objects per entity.
        public var counts: [String: Int]
        public var objects: Int { counts.values.reduce(0, +) }

        public init(output: FixtureOutput, counts: [String: Int]) {
            self.output = output
            self.counts = counts
        }
    }

    /// Writes the fixture to a new file: a store through its format's writer (as `convert` writes), a
    /// clipboard through its encoder (as `copy --all` writes), streaming, written beside `url` and put
    /// in place only when complete.
    ///
    /// - Parameter output: by default the one `url`'s extension names.
    /// - Throws: `GraftError.unsupportedFormat` when neither is given; `GraftError.alreadyExists` when
    ///   `url` exists and `overwrite` is off; what writing throws.
    @discardableResult
    public func write(
        to url: URL, as output: FixtureOutput? = nil, overwrite: Bool = false,
        progress: ((_ done: Int, _ total: Int?) -> Void)? = nil
    ) throws -> Written {
        guard let output = output ?? FixtureOutput.forExtension(url) else {
            throw GraftError(
                .unsupportedFormat,
                "cannot tell the output format from its name; give --format \(FixtureOutput.names.joined(separator: "|"))",
                context: [.file(url.relativePath)])
        }
        if !overwrite && FileAccess.kind(of: url).exists {
            throw GraftError(
                .alreadyExists, "already exists (use --force to replace it)", context: [.file(url.relativePath)])
        }
        switch output {
        case .store(let format):
            let written = try Conversion.write(
                document, to: url, format: format, overwrite: overwrite, progress: progress)
            return Written(output: output, counts: written.counts)
        case .clipboard(let encoding):
            var counts: [String: Int] = [:]
            try FileAccess.writeAtomically(to: url, overwrite: overwrite) { append in
                counts = try write(encoding, progress: progress, to: append)
            }
            return Written(output: output, counts: counts)
        }
    }

    /// Inserts the fixture's objects into a context, as a paste does (one undo step, unsaved, the whole
    /// checked against the model): for tests that want objects, not files.
    ///
    /// ```swift
    /// let context = ObjectContext(model: model)
    /// try FixtureGenerator(model: model, seed: 7).fill(context)
    /// let departments = try context.fetch(FetchRequest(entityName: "Department"))
    /// ```
    ///
    /// - Returns: the paste's report (objects inserted per entity, the id map).
    @discardableResult
    public func fill(_ context: ObjectContext) throws -> PasteReport {
        try Paster().paste(try Copier.copyAll(from: document), into: context)
    }

    /// Writes the fixture as a clipboard document in `encoding`, handed to `sink` in chunks.
    ///
    /// - Returns: objects per entity.
    @discardableResult
    public func write(
        _ encoding: ClipboardEncoding, progress: ((_ done: Int, _ total: Int?) -> Void)? = nil,
        to sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> [String: Int] {
        let copied = try Copier.copyAll(from: document, encoding: encoding, to: sink, progress: progress)
        return copied.counts
    }
}
