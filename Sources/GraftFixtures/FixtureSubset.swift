import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel

/// A consistent subset of a real store: chosen objects plus everything the model says they need, so
/// that the subset opens and validates on its own.
///
/// What they need is followed from every object taken, on both sides: a required to-one brings its
/// object (an employee its department), a to-many with a minimum count or that is required brings all
/// its objects (a department that must have 3 employees brings its employees), and so on from those.
/// Links to objects not taken are left out of a store (each optional, or it would have been followed),
/// and kept as references in a clipboard, which a paste links to the target's own objects.
///
/// ```swift
/// let subset = FixtureSubset(storeAt: url, entity: "Employee", predicate: "salary > 100000", limit: 20)
/// print(try subset.plan().plan.objects.count)
/// try subset.write(to: URL(fileURLWithPath: "HighEarners.sqlite"))
/// ```
public struct FixtureSubset: Sendable {
    public var store: URL
    public var entity: String
    /// A predicate in Apple's format choosing the objects (empty: all of the entity's).
    public var predicate: String
    /// At most this many chosen objects (the first by key).
    public var limit: Int?
    /// The model to read the store with; by default its own.
    public var model: Model?
    public var options: StoreReadOptions
    /// Which attributes' values are replaced with generated ones (nil: none), and the seed they are
    /// drawn with.
    public var anonymizing: FixtureAnonymization.Choice?
    public var seed: UInt64

    public init(
        storeAt store: URL, entity: String, predicate: String = "", limit: Int? = nil, model: Model? = nil,
        options: StoreReadOptions = StoreReadOptions(), anonymizing: FixtureAnonymization.Choice? = nil,
        seed: UInt64 = FixtureGenerator.defaultSeed
    ) {
        self.anonymizing = anonymizing
        self.seed = seed
        self.store = store
        self.entity = entity
        self.predicate = predicate
        self.limit = limit
        self.model = model
        self.options = options
    }

    /// The relationships a subset follows from every object it takes: the required ones, `Entity.name`.
    public static func neededRelationships(of model: Model) -> [String] {
        var found: [String] = []
        for entity in model.descriptions {
            for relationship in entity.declaration.relationships where !relationship.isTransient {
                let required =
                    relationship.isToMany
                    ? (relationship.minCount > 0 || !relationship.isOptional) : !relationship.isOptional
                if required { found.append("\(entity.name).\(relationship.name)") }
            }
        }
        return found
    }

    /// What the subset takes and why: the copy's plan (objects taken, by rule, and references), and the
    /// model the store was read with, which names the plan's entities.
    public func plan() throws -> (plan: Copier.Plan, model: Model) {
        let (source, selection) = try open()
        return (try Copier(source: StoreSource(source)).plan(selection), source.model)
    }

    /// The subset as a clipboard document, its chosen values replaced.
    public func clipboard() throws -> Clipboard {
        let (source, selection) = try open()
        var clipboard = try Copier(source: StoreSource(source)).copy(selection)
        if let anonymizing {
            try FixtureAnonymization(model: source.model, seed: seed, attributes: anonymizing).apply(to: &clipboard)
        }
        return clipboard
    }

    /// Writes the subset to a new file: a store (links to objects not taken left out; a rule the source
    /// already broke is kept and reported, a new one refuses the subset) or a clipboard.
    ///
    /// - Returns: what was written, and the rules the subset breaks that its source already broke.
    @discardableResult
    public func write(
        to url: URL, as output: FixtureOutput? = nil, overwrite: Bool = false
    ) throws -> (
        written: FixtureGenerator.Written, inherited: [RuleViolation]
    ) {
        guard let output = output ?? FixtureOutput.forExtension(url) else {
            throw GraftError(
                .unsupportedFormat,
                "cannot tell the output format from its name; give --format \(FixtureOutput.names.joined(separator: "|"))",
                context: [.file(url.relativePath)])
        }
        if StoreFiles.isPart(url, ofStoreAt: store) {
            throw GraftError(
                .invalidOperation, "is the store the subset comes from; choose another output",
                context: [.file(url.relativePath)])
        }
        if FileAccess.kind(of: url).isDirectory {
            throw GraftError(.invalidOperation, "is a folder; give a file to write", context: [.file(url.relativePath)])
        }
        if !overwrite && FileAccess.kind(of: url).exists {
            throw GraftError(
                .alreadyExists, "already exists (use --force to replace it)", context: [.file(url.relativePath)])
        }
        let clipboard = try clipboard()
        let counts = Self.counts(of: clipboard)
        switch output {
        case .clipboard(let encoding):
            try FileAccess.writeAtomically(try encoding.encode(clipboard), to: url, overwrite: overwrite)
            return (FixtureGenerator.Written(output: output, counts: counts), [])
        case .store(let format):
            // Pasted into a new store in a folder of its own beside the output, then moved into place.
            let folder = url.deletingLastPathComponent().appendingPathComponent(
                ".\(url.lastPathComponent).graft-subset-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(at: folder) }
            let staged = folder.appendingPathComponent(url.lastPathComponent)
            let paster = Paster(options: PasteOptions(dangling: .drop, acceptsViolationsTheClipboardHas: true))
            let report = try paster.paste(clipboard, intoStoreAt: staged, format: format)
            try Self.place(staged, at: url, sideFileSuffixes: format.driver.sideFileSuffixes)
            return (FixtureGenerator.Written(output: output, counts: counts), report.violations)
        }
    }

    /// Writes the subset as a clipboard document in `encoding`, handed to `sink`.
    ///
    /// - Returns: objects per entity.
    @discardableResult
    public func write(_ encoding: ClipboardEncoding, to sink: (Data) throws -> Void) throws -> [String: Int] {
        let clipboard = try clipboard()
        try sink(try encoding.encode(clipboard))
        return Self.counts(of: clipboard)
    }

    private static func counts(of clipboard: Clipboard) -> [String: Int] {
        var counts: [String: Int] = [:]
        for object in clipboard.objects { counts[object.entity, default: 0] += 1 }
        return counts
    }

    /// Puts a finished store in place of `url` by renaming (in one folder, so in one step), with any side
    /// files it has; side files of the document it replaces go first, so that none is read with it.
    private static func place(_ staged: URL, at url: URL, sideFileSuffixes: [String]) throws {
        let manager = FileManager.default
        for suffix in sideFileSuffixes { try? manager.removeItem(atPath: url.path + suffix) }
        for suffix in [""] + sideFileSuffixes where suffix.isEmpty || manager.fileExists(atPath: staged.path + suffix) {
            guard rename(staged.path + suffix, url.path + suffix) == 0 else {
                throw GraftError(
                    .io, "cannot put the subset in place: \(String(cString: strerror(errno)))",
                    context: [.file(url.relativePath + suffix)])
            }
        }
    }

    private func open() throws -> (any PersistentStore, Selection) {
        let source = try StoreFormat.openForReading(store, model: model, options: options)
        guard let chosen = source.model.entity(named: entity) else {
            throw GraftError(.notFound, "the store's model has no entity '\(entity)'", context: [.other("--entity")])
        }
        let condition: GraftPredicate?
        do {
            condition = predicate.isEmpty ? nil : try GraftPredicate(format: predicate)
        } catch let error as GraftError {
            throw GraftError(error.code, error.message, context: [.other("--where")])
        }
        let found = try source.fetch(
            StoreFetch(entities: [chosen.index] + chosen.descendantIndices, predicate: condition, limit: limit))
        let selection = Selection(roots: [.refs(found.refs)], follow: Self.neededRelationships(of: source.model))
        return (source, selection)
    }
}
