import Foundation
@_spi(GraftInternal) import GraftCore

/// Reads a clipboard document object by object, in any of the four encodings, so that a document of
/// millions of objects never has to be held in memory whole.
///
/// The reader reads and checks everything but the objects when it is made — the `format`, `version` and
/// `encoding` members, the model, the source, the roots and the references, in whatever order the
/// document has them — and gives them as ``header``. Then ``next()`` reads one object at a time, typed by
/// the document's model and checked as far as one object can be: a known entity, declared attributes and
/// relationships (each once), values of the declared types, to-ones with at most one target, and an id no
/// object or reference had before.
///
/// The rules that need every id are checked as the reader reaches the end: a target that is no object's
/// or reference's id, or a root that is not an object, makes the ``next()`` call that would return nil
/// throw instead. So a document has held together only once ``next()`` has returned nil; a caller that
/// writes objects as it reads them must be ready to discard what it wrote when that last call throws.
///
/// For example:
///
/// ```swift
/// var reader = try ClipboardReader(contentsOf: url)
/// print(reader.header.entities.map(\.name), reader.objectCount ?? -1)
/// while let object = try reader.next() {
///     print(object.id, object.entity)
/// }
/// reader.rewind()   // a second pass reads the same objects again
/// ```
///
/// A reader made with ``init(contentsOf:encoding:)`` maps the file and hands its pages back to the system
/// as it goes, so its memory stays bounded whatever the document's size (a table of a bit or two per id
/// remains, for the checks of the last call).
public struct ClipboardReader {
    /// The document's encoding, as given or detected.
    public let encoding: ClipboardEncoding
    /// Everything the document holds but its objects, checked.
    public let header: Clipboard.Header
    private let count: Int?
    private let storage: Storage?
    /// Where the objects start, for ``rewind()``.
    private let start: Engine
    private var engine: Engine
    /// The objects, when they were read with the header (for ``ClipboardEncoding/decode(_:)``).
    private let collected: [Clipboard.Object]?
    /// The ids of the references, where the checks of each pass start.
    private let referenceIDs: ClipboardIDs
    private var ids: ClipboardIDs
    private var index = 0
    /// Whether ``next()`` gives objects without their attribute values, for a pass that needs only the
    /// graph's shape (ids, entities, relationships); their syntax is still checked. Graft XML documents
    /// give their values regardless.
    var skipsValues = false
    /// Whether ``next()`` gives objects without their relationships, for a pass that knows the graph's
    /// shape already; their syntax is still checked, their targets are not. Graft XML documents give their
    /// relationships regardless.
    var skipsLinks = false
    private var finished = false
    private var failure: GraftError?
    /// Whether the reader handed every object to the visit it was made with (see
    /// ``init(contentsOf:visiting:)``), in a document that holds together.
    private(set) var visitedObjects = false

    /// The number of objects, when it is known without reading them: always, for the reader goes over
    /// the objects once when it is made, skipping them (checking their syntax) to reach the members after
    /// them, and counts them as it does.
    public var objectCount: Int? { count }

    /// A reader of a document in memory; the bytes are copied, so that the reader does not depend on
    /// `data`'s storage.
    ///
    /// - Parameters:
    ///   - data: the document.
    ///   - encoding: its encoding; nil to recognise it from the first bytes (see
    ///     ``ClipboardEncoding/detect(_:)``).
    /// - Throws: `GraftError.unsupportedFormat` when the data is none of the encodings (or not the one
    ///   given), not a Graft clipboard, or a newer version of the format; `GraftError.malformedInput`,
    ///   located, when anything but the objects is malformed or does not hold together.
    public init(data: Data, encoding: ClipboardEncoding? = nil) throws {
        let storage = Storage(copying: data)
        try self.init(bytes: storage.bytes, encoding: encoding, storage: storage, collecting: false)
    }

    /// A reader of a document file, which it maps into memory rather than reading it.
    ///
    /// - Throws: `GraftError.io` when the file cannot be read; otherwise what ``init(data:encoding:)``
    ///   throws.
    public init(contentsOf url: URL, encoding: ClipboardEncoding? = nil) throws {
        let (data, mapping) = try MappedFile.map(url)
        let storage = Storage(mapped: data, mapping: mapping)
        try self.init(bytes: storage.bytes, encoding: encoding, storage: storage, collecting: false)
    }

    /// A reader of a document file that, where it would skip the objects to read the header, reads them
    /// instead and hands each to `visit`, as ``next()`` would give it with ``skipsValues``: a first pass
    /// over the graph's shape made with the header's.
    ///
    /// ``visitedObjects`` says whether `visit` was given every object of a document that holds together
    /// (every rule ``next()`` checks was checked); when not — the encoding counts its objects up front, the
    /// model comes after them, or anything failed — what `visit` was given counts for nothing, and the
    /// reader is as ``init(contentsOf:encoding:)`` makes it, with the same errors, thrown when they would be.
    init(
        contentsOf url: URL,
        visiting visit: @escaping (_ object: Clipboard.Object, _ entities: [Clipboard.EntityInfo]) throws -> Void
    ) throws {
        let (data, mapping) = try MappedFile.map(url)
        let storage = Storage(mapped: data, mapping: mapping)
        do {
            self = try ClipboardReader(
                bytes: storage.bytes, encoding: nil, storage: storage, collecting: false, visiting: visit)
        } catch {
            // Made again without the visit, so that an error comes when and as it always does.
            self = try ClipboardReader(bytes: storage.bytes, encoding: nil, storage: storage, collecting: false)
        }
    }

    /// A reader of `bytes`, which must stay valid as long as the reader is used unless `storage` holds
    /// them. With `collecting`, objects are read with the header when the model comes before them, and
    /// every rule of the document is checked before the reader is made. With `visit`, objects are handed
    /// to it as ``init(contentsOf:visiting:)`` says, and any rule they break throws here.
    init(
        bytes: UnsafeRawBufferPointer, encoding given: ClipboardEncoding?, storage: Storage?, collecting: Bool,
        visiting visit: ((_ object: Clipboard.Object, _ entities: [Clipboard.EntityInfo]) throws -> Void)? = nil
    ) throws {
        let detected = ClipboardDetection.detect(UnsafeRawBufferPointer(rebasing: bytes.prefix(4096)))
        guard let encoding = given ?? detected else {
            throw GraftError(
                .unsupportedFormat,
                "the data is not a clipboard document in any of the four encodings (XML property list, binary "
                    + "property list, JSON, Graft XML)")
        }
        if let detected, detected != encoding {
            throw GraftError(
                .unsupportedFormat,
                "the data is \(Wording.withArticle(detected.displayName)) document, not "
                    + "\(Wording.withArticle(encoding.displayName)) document")
        }
        let parts: ClipboardParts
        let engine: Engine
        var count: Int?
        // The visited objects' ids, checked as next() checks them. Their number is not known yet: an object
        // takes more than a hundred bytes, so that the table has room for the targets ahead from the start.
        var visitedIDs = ClipboardIDs(expected: visit == nil ? 0 : bytes.count / 128)
        let visitor = visit.map { visit in
            { (object: Clipboard.Object, entities: [Clipboard.EntityInfo]) throws in
                try visitedIDs.add(object)
                try visit(object, entities)
            }
        }
        var visited = false
        switch encoding {
        case .json:
            var walker = ClipboardWalker(ClipboardJSONScanner(bytes))
            walker.progress = storage?.release
            walker.visitor = visitor
            (parts, count) = try Self.open(&walker, collecting: collecting)
            (visited, walker.visitor) = (walker.visitedObjects, nil)
            engine = .json(walker)
        case .plist:
            var walker = ClipboardWalker(ClipboardPlistSource(bytes))
            walker.progress = storage?.release
            walker.visitor = visitor
            (parts, count) = try Self.open(&walker, collecting: collecting)
            (visited, walker.visitor) = (walker.visitedObjects, nil)
            engine = .plist(walker)
        case .binaryPlist:
            var walker = ClipboardWalker(try ClipboardBinaryPlistSource(bytes))
            walker.progress = storage?.release
            walker.visitor = visitor
            (parts, count) = try Self.open(&walker, collecting: collecting)
            (visited, walker.visitor) = (walker.visitedObjects, nil)
            engine = .binary(walker)
        case .xml:
            var reader = ClipboardXMLReader(bytes)
            reader.progress = storage?.release
            parts = try reader.readHeader(collecting: collecting)
            count = parts.objects == nil ? try reader.beginObjects() : nil
            engine = .xml(reader)
        }
        self.encoding = encoding
        self.storage = storage
        header = parts.header
        collected = parts.objects
        self.count = parts.objectCount ?? count ?? parts.objects?.count
        self.engine = engine
        start = engine
        storage?.release()
        var ids = ClipboardIDs(expected: (self.count ?? 0) + (parts.references?.count ?? 0))
        try Self.checking(encoding) { try ids.add(references: parts.references ?? []) }
        referenceIDs = ids
        self.ids = ids
        if visited {
            // What the last call of next() checks; a failure makes the reader again, without the visit.
            try visitedIDs.add(references: parts.references ?? [])
            guard !visitedIDs.hasMissingTargets else { throw GraftError(.malformedInput, "a target is missing") }
            try visitedIDs.checkRoots(parts.header.roots)
        }
        visitedObjects = visited
        if let collected {
            try Self.checking(encoding) {
                for object in collected { try ids.add(object) }
            }
            self.ids = ids
            try Self.checking(encoding) { try finishChecks() }
        }
    }

    /// Reads the header through `walker`, explaining a failure by the document's `format` or `version`
    /// when they rule it out.
    private static func open<Source>(
        _ walker: inout ClipboardWalker<Source>, collecting: Bool
    ) throws -> (ClipboardParts, Int?) {
        let initial = walker.source
        do {
            let parts = try walker.readHeader(collecting: collecting)
            return (parts, parts.objects == nil ? try walker.beginObjects() : nil)
        } catch let error as GraftError {
            if !walker.headerChecked, let problem = ClipboardWalker<Source>.headerProblem(initial) { throw problem }
            throw error
        }
    }

    /// Runs the document-wide checks, naming the encoding in their errors.
    private static func checking(_ encoding: ClipboardEncoding, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch var error as GraftError {
            error.message = "\(encoding.documentName): " + error.message
            throw error
        }
    }

    /// The next object, or nil after the last one, when every rule of the document has been checked.
    ///
    /// - Throws: `GraftError.malformedInput` naming the object and key (and the line or offset) when the
    ///   object is malformed, uses an id given before, or — on the call that reaches the end — when a target
    ///   or root does not exist. After an error every later call throws it again; ``rewind()`` starts over.
    public mutating func next() throws -> Clipboard.Object? {
        if let failure { throw failure }
        if finished { return nil }
        do {
            if let collected {
                guard index < collected.count else {
                    finished = true
                    return nil
                }
                index += 1
                return collected[index - 1]
            }
            guard let object = try advance() else {
                try Self.checking(encoding) { try finishChecks() }
                finished = true
                return nil
            }
            try Self.checking(encoding) { try ids.add(object) }
            index += 1
            if index % ClipboardParts.progressInterval == 0 { storage?.release() }
            return object
        } catch let error as GraftError {
            failure = error
            throw error
        }
    }

    /// Goes back to the first object, for another pass; the checks of ``next()`` start over too.
    public mutating func rewind() {
        engine = start
        ids = referenceIDs
        index = 0
        finished = false
        failure = nil
    }

    /// Every object, read and checked: the decoded document's objects.
    mutating func readAll() throws -> [Clipboard.Object] {
        if let collected { return collected }
        var objects: [Clipboard.Object] = []
        objects.reserveCapacity(count ?? 0)
        while let object = try next() { objects.append(object) }
        return objects
    }

    // MARK: The encodings' readers

    /// Each encoding's reader, as a value: a copy is a position to come back to.
    private enum Engine {
        case json(ClipboardWalker<ClipboardJSONScanner>)
        case plist(ClipboardWalker<ClipboardPlistSource>)
        case binary(ClipboardWalker<ClipboardBinaryPlistSource>)
        case xml(ClipboardXMLReader)
        /// While a reader is taken out to be advanced, so that it is not shared (and copied on write).
        case moving
    }

    private mutating func advance() throws -> Clipboard.Object? {
        switch engine {
        case .json(var walker):
            engine = .moving
            defer { engine = .json(walker) }
            walker.skipsValues = skipsValues
            walker.skipsLinks = skipsLinks
            return try walker.nextObject(index: index)
        case .plist(var walker):
            engine = .moving
            defer { engine = .plist(walker) }
            walker.skipsValues = skipsValues
            walker.skipsLinks = skipsLinks
            return try walker.nextObject(index: index)
        case .binary(var walker):
            engine = .moving
            defer { engine = .binary(walker) }
            walker.skipsValues = skipsValues
            walker.skipsLinks = skipsLinks
            return try walker.nextObject(index: index)
        case .xml(var reader):
            engine = .moving
            defer { engine = .xml(reader) }
            return try reader.nextObject(index: index)
        case .moving:
            return nil
        }
    }

    /// The checks that need every id, once the last object has been read: when a target is missing, the
    /// objects are read again from the first (only then) to name the first object and relationship that
    /// has one.
    private func finishChecks() throws {
        if ids.hasMissingTargets {
            if let collected {
                for object in collected { try ids.checkTargets(of: object) }
            } else {
                var again = self
                again.rewind()
                while let object = try again.advance() {
                    again.index += 1
                    try ids.checkTargets(of: object)
                }
            }
        }
        try ids.checkRoots(header.roots)
    }

    /// The bytes a reader reads: a copy of data it was given, or a mapped file.
    final class Storage {
        let bytes: UnsafeRawBufferPointer
        let mapping: MappedFile?
        private let data: Data?
        private let owned: UnsafeMutableRawBufferPointer?

        init(copying data: Data) {
            let owned = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 8)
            data.copyBytes(to: owned)
            self.owned = owned
            bytes = UnsafeRawBufferPointer(rebasing: owned[0..<data.count])
            mapping = nil
            self.data = nil
        }

        init(mapped data: Data, mapping: MappedFile) {
            // The data was made without copying from the mapping's pages, which stay where they are as
            // long as the data lives.
            bytes = data.withUnsafeBytes { $0 }
            self.mapping = mapping
            self.data = data
            owned = nil
        }

        deinit { owned?.deallocate() }

        /// Hands the pages of a mapped file back to the system (they are read again when needed).
        func release() { mapping?.releasePages(in: bytes) }
    }
}
