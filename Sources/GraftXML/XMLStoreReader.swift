import Foundation
import GraftCore
import GraftGraph
@_spi(GraftInternal) import GraftModel

/// Reads a Core Data XML store as a stream of snapshots.
///
/// Opening a document reads its `<databaseInfo>` (UUID and metadata), settles the model, and makes one
/// cheap pass over the file to learn every object's id and entity, because relationships name their
/// declared destination while the objects they hold may belong to subentities, and may come later in
/// the document. `forEachSnapshot(_:)` then parses the document with libxml2's SAX2 interface, one
/// object at a time, so memory stays bounded apart from the id map (a few bytes an object).
///
/// The model is, in order of preference:
///
/// 1. the one given, checked against the version hashes the metadata records;
/// 2. the compiled model Graft keeps in the metadata under `GraftModelCache`;
/// 3. a model inferred from the document's own type information, with `warnings` saying what could not
///    be known.
///
/// Entity and property names match the model ignoring case (Core Data writes entity names in capitals
/// and property names in lower case).
///
/// For example:
///
/// ```swift
/// let reader = try XMLStoreReader(url: URL(fileURLWithPath: "Database.xml"), model: nil)
/// for warning in reader.warnings { print("warning:", warning) }
/// try reader.forEachSnapshot { snapshot in print(snapshot.ref) }
/// ```
public final class XMLStoreReader: StoreReader {
    /// Where the model came from: given, the compiled model in the metadata's `GraftModelCache`, or
    /// inferred from the document.
    public typealias ModelSource = GraftGraph.ModelSource

    public let url: URL
    public let model: Model
    public let modelSource: ModelSource
    /// The store's UUID (`<UUID>`) and metadata (the `<metadata>` property list, every key kept, with
    /// `NSStoreUUID` and `NSStoreType` added).
    public let metadata: StoreMetadata
    /// What the reader could not know or check: how the model was inferred, a missing `<databaseInfo>`,
    /// metadata without version hashes, an unknown `<version>`.
    public var warnings: [String] { readWarnings + refusals.warnings }
    private var readWarnings: [String] = []
    /// Values that are not of their attribute's type or range: an error, or no value and a warning.
    private let refusals: ValueRefusals
    /// The values read as no value under `ValueReading.lenient`, by object and attribute.
    package var refusedValues: Set<ValueRefusals.Slot> { refusals.slots }
    /// The `<nextObjectID>` the document records, if any.
    public let nextObjectID: Int64?

    private let path: String
    private let header: HeaderPass.Header
    private var ids: ObjectIDTable
    /// Whether `ids` holds every object (with its key): after the first pass, or after a one-pass read.
    private var idsComplete = false
    /// Whether the document may be read once (see `forEachSnapshotInAnyOrder(_:)`).
    private let readsOnce: Bool
    private let tables: ReadTables

    /// Opens a document.
    ///
    /// - Parameters:
    ///   - url: the XML store.
    ///   - model: the model its objects follow, or `nil` to use the model the document carries or to
    ///     infer one.
    ///   - valueReading: what to do with a value that is not of its attribute's type or range (text that
    ///     is not a number, 70000 for an Integer 16, a Float beyond Float's range): an error naming the
    ///     object, attribute and value, or no value and one warning per attribute.
    /// - Throws: `GraftError.fileNotFound`; `GraftError.unsupportedFormat` when the root element is not
    ///   `<database>`; `GraftError.malformedInput` with the line for XML that is not well-formed, declares
    ///   entities, has duplicate ids or unreadable metadata; `GraftError.modelMismatch` naming the
    ///   entities whose version hashes differ from `model`'s, or an object whose type the model lacks.
    ///   - readsOnceInAnyOrder: leave the pass over the document that learns every object's id to the
    ///     first use that needs it, so that `forEachSnapshotInAnyOrder(_:)` can read the file once (the
    ///     errors of that pass, duplicate ids and unknown entities, then come from the reading).
    public init(
        url: URL, model: Model?, valueReading: ValueReading = .strict, readsOnceInAnyOrder: Bool = false
    ) throws {
        self.url = url
        refusals = ValueRefusals(valueReading)
        path = url.relativePath
        let kind = FileAccess.kind(of: url)
        guard kind.exists else { throw GraftError(.fileNotFound, "no such file", context: [.file(path)]) }
        guard !kind.isDirectory else { throw GraftError(.io, "is a folder, not a file", context: [.file(path)]) }

        let header = try HeaderPass.read(url: url, path: path)
        self.header = header
        var warnings: [String] = []
        if !header.hasDatabaseInfo {
            warnings.append("the document has no <databaseInfo>: it records no UUID, version or metadata")
        } else if let version = header.version, version != String(XMLStoreFormat.databaseVersion) {
            warnings.append(
                "the document's <version> is \(version); Graft knows version \(XMLStoreFormat.databaseVersion)")
        }
        let identifier: String
        if let uuid = header.uuid, !uuid.isEmpty {
            do {
                identifier = try StoreMetadata.checkedIdentifier(uuid, field: "<UUID>")
            } catch let error as GraftError {
                throw error.at(.line(header.uuidLine)).inFile(path)
            }
        } else {
            identifier = UUID().uuidString
            if header.hasDatabaseInfo { warnings.append("the document records no UUID; it was given \(identifier)") }
        }
        var values = header.metadata
        values["NSStoreUUID"] = .string(identifier)
        values["NSStoreType"] = .string(StoreMetadata.StoreType.xml.rawValue)
        let metadata = StoreMetadata(identifier: identifier, values: values)
        self.metadata = metadata
        nextObjectID = header.nextObjectID.flatMap { Int64($0) }

        let ids = ObjectIDTable()
        self.ids = ids
        if let model {
            if metadata.versionHashes.isEmpty {
                warnings.append(
                    "the metadata records no model version hashes, so the model was not checked against them")
            } else {
                try metadata.check(against: model, path: path)
            }
            self.model = model
            modelSource = .given
        } else if let cache = values[XMLStoreFormat.modelCacheKey]?.dataValue {
            let cachePath = "\(path) (\(XMLStoreFormat.modelCacheKey))"
            do {
                self.model = try CompiledModelReader.read(RawDeflate.inflate(cache), path: cachePath)
            } catch let error as GraftError {
                throw error.context.isEmpty ? error.inFile(cachePath) : error
            }
            modelSource = .modelCache
        } else {
            let schema = SchemaCollector()
            let pass = IDPass(url: url, path: path, ids: ids, schema: schema) { schema.entity($0, $1) }
            try pass.run()
            schema.resolvePending(ids)
            let inferred = try ModelInference.infer(
                from: schema, path: path, knownEntityNames: Array(metadata.versionHashes.keys))
            ids.remapEntities(inferred.entityIndex)
            self.model = inferred.model
            modelSource = .inferred
            warnings += inferred.warnings
        }
        tables = ReadTables(model: self.model)
        // One pass serves only UTF-8 documents read strictly (a value read as no value would otherwise
        // be warned about twice when its object is parsed again), whose ids a model inferred did not
        // need already.
        readsOnce = readsOnceInAnyOrder && modelSource != .inferred && !header.isTranscoded && valueReading == .strict
        self.readWarnings = warnings
        if modelSource == .inferred {
            try assignKeys()
        } else if !readsOnce {
            try completeIDs()
        }
    }

    /// The first pass, unless done: every object's id, entity and key.
    private func completeIDs() throws {
        guard !idsComplete else { return }
        try Self.collectIDs(url: url, path: path, header: header, tables: tables, ids: ids)
        try assignKeys()
    }

    private func assignKeys() throws {
        let model = self.model
        do {
            try ids.assignKeys { model.descriptions[$0].rootIndex }
        } catch let error as GraftError {
            throw error.inFile(path)
        }
        idsComplete = true
    }

    /// The first pass: every object's id and entity.
    private static func collectIDs(
        url: URL, path: String, header: HeaderPass.Header, tables: ReadTables, ids: ObjectIDTable
    ) throws {
        if header.isTranscoded {
            let pass = IDPass(url: url, path: path, ids: ids, schema: nil) { pointer, length in
                tables.entity(pointer, length).map(Int32.init)
            }
            try pass.run()
            return
        }
        var failure: GraftError?
        try ObjectTagScanner.scan(url: url, path: path, from: header.bodyOffset) { type, id, offset in
            guard failure == nil else { return }
            guard id.count > 0 else {
                failure = GraftError(.malformedInput, "an <object> without an id", context: [.offset(offset)])
                return
            }
            guard let entity = tables.entity(type.bytePointer, type.count) else {
                failure = GraftError(
                    .modelMismatch,
                    type.count == 0
                        ? "the object has no type"
                        : "the object's type '\(Bytes.excerpt(type))' is not an entity of the model",
                    context: [.offset(offset), .object(Bytes.string(id))])
                return
            }
            if !ids.insert(id.bytePointer, id.count, entity: Int32(entity)) {
                failure = GraftError(
                    .malformedInput, "the id '\(Bytes.excerpt(id))' is used by two objects",
                    context: [.offset(offset), .object(Bytes.string(id))])
            }
        }
        if var failure {
            // Name the line rather than the byte offset.
            if case .offset(let offset) = failure.context.first,
                let line = ObjectTagScanner.line(ofOffset: offset, in: url)
            {
                failure.context[0] = .line(line)
            }
            throw failure.inFile(path)
        }
    }

    /// How many objects the document holds (`nil` before a reader opened with `readsOnceInAnyOrder` has
    /// read them).
    public var objectCount: Int? { idsComplete ? ids.count : nil }

    /// Calls `body` with every object, in document order.
    ///
    /// - Throws: the first error `body` throws; `GraftError.malformedInput` with the line and object for
    ///   XML that is not well-formed or values that do not parse (an integer out of its type's range, a
    ///   bad date or base64), references to ids no object has, a to-one holding several objects;
    ///   `GraftError.modelMismatch` for properties the model lacks; `GraftError.typeMismatch` for a
    ///   reference to an object that is not of the relationship's destination.
    /// Offsets that make this document's keys distinct across inheritance trees, for writers of binary
    /// documents (see `DocumentKeys`): keys an XML document shares between trees come back from ids
    /// such as `z5-EMPLOYEE`.
    public var keyOffsets: [Int: Int64] {
        // A reader opened to read once learns its ids here (any error comes again from the reading).
        try? completeIDs()
        let model = self.model
        let extents = ids.keyExtents { model.descriptions[$0].rootIndex }
        return DocumentKeys.offsets(maxKeys: extents.maxKeys, collide: extents.collide)
    }

    public func forEachSnapshot(_ body: (Snapshot) throws -> Void) throws { try readInOrder(leavingOut: [], body) }

    /// Every object in document order, the relationships `leftOut` names (by slot) handed on `.unloaded`.
    private func readInOrder(leavingOut leftOut: [Bool], _ body: (Snapshot) throws -> Void) throws {
        try completeIDs()
        try withoutActuallyEscaping(body) { body in
            let pass = SnapshotPass(
                url: url, path: path, tables: tables, ids: ids, checkDestinations: modelSource != .inferred,
                refusals: refusals, leavingOut: leftOut, body: body)
            try pass.run()
        }
    }

    /// Calls `body` with every object. A reader opened with `readsOnceInAnyOrder` (and whose ids are not
    /// known yet) reads the file once: it learns the ids as it goes, hands on each object whose key and
    /// references are settled when it is read, and sets the others aside (`DeferredObjects`) — objects
    /// that refer to objects further on, or whose ids' keys depend on the whole document — to parse
    /// them again, in document order, once every id is known. Otherwise as `forEachSnapshot(_:)`.
    ///
    /// Relationships `relationships` leaves out are handed on `.unloaded` (however the document is
    /// read) and do not hold an object back: the ids they name are only checked, those of objects
    /// further on once every id is known (`ForwardReferences`).
    ///
    /// Errors are those of `forEachSnapshot(_:)`, but where a document has several, another may come
    /// first (one in an object set aside comes after those of the objects handed on).
    ///
    /// - Throws: also ``OrderedReadNeeded`` when a relationship left out names an object further on
    ///   that the document lacks, or of another entity than the relationship's destination: the read in
    ///   order says which, and where.
    public func forEachSnapshotInAnyOrder(
        reading relationships: RelationshipSelection, _ body: (Snapshot) throws -> Void
    ) throws {
        let leftOut = tables.leftOut(by: relationships)
        guard readsOnce && !idsComplete else { return try readInOrder(leavingOut: leftOut, body) }
        // After a failure, a read in order starts again from no ids.
        var done = false
        defer {
            if !done {
                ids = ObjectIDTable()
                idsComplete = false
            }
        }
        let ids = self.ids
        try withoutActuallyEscaping(body) { body in
            let deferred = try DeferredObjects(url: url, path: path)
            let forward = ForwardReferences()
            let checkDestinations = modelSource != .inferred
            try SnapshotPass(
                url: url, path: path, tables: tables, ids: ids, checkDestinations: checkDestinations,
                refusals: refusals, leavingOut: leftOut, deferring: deferred, forward: forward, body: body
            ).run()
            let accepts = checkDestinations ? tables.accepts : nil
            guard forward.allFound(accepts: accepts, entity: ids.entity(ofNumber:)) else { throw OrderedReadNeeded() }
            try assignKeys()
            guard deferred.count > 0 else { return }
            try SnapshotPass(
                url: url, path: path, tables: tables, ids: ids, checkDestinations: checkDestinations,
                refusals: refusals, leavingOut: leftOut, body: body
            ).run(replaying: deferred)
        }
        done = true
    }
}
