import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Converts whole documents between store formats, streaming snapshots from a reader to a writer with
/// no context in between, so memory stays bounded whatever the document's size.
///
/// For example:
///
/// ```swift
/// let report = try Conversion.convert(from: input, to: output, options: .init(format: .xml))
/// print(report.objects)
/// ```
public enum Conversion {
    public struct Options: Sendable {
        /// The output format; by default the one the output's extension names.
        public var format: StoreFormat?
        /// The model to read the input with; by default the input's own.
        public var model: Model?
        /// Replace an existing output.
        public var overwrite: Bool
        /// Read the output back and compare it with the input, object by object.
        public var verify: Bool
        /// How to read the input: what to do with binary values kept in missing external files, and with
        /// stored values that are not of their attribute's type or range (stop, or convert them as no
        /// value with a warning per attribute). References to objects the input does not have are kept
        /// when the output format can hold them and left out, each named in a warning, when it cannot.
        public var reading: StoreReadOptions

        public init(
            format: StoreFormat? = nil, model: Model? = nil, overwrite: Bool = false, verify: Bool = false,
            reading: StoreReadOptions = StoreReadOptions()
        ) {
            self.format = format
            self.model = model
            self.overwrite = overwrite
            self.verify = verify
            self.reading = reading
        }
    }

    /// What a conversion did.
    public struct Report: Sendable {
        public var inputFormat: StoreFormat
        public var outputFormat: StoreFormat
        /// Objects per entity, each under its own entity.
        public var counts: [String: Int]
        public var objects: Int { counts.values.reduce(0, +) }
        /// Differences `verify` found (empty when it found none or did not run).
        public var differences: [String]
        public var warnings: [String]

        /// `{"inputFormat", "outputFormat", "objects", "counts": {entity: n}, "differences": […],
        /// "warnings": […]}`, entities in name order.
        public var json: JSONValue {
            .object([
                ("inputFormat", .string(inputFormat.rawValue)), ("outputFormat", .string(outputFormat.rawValue)),
                ("objects", .int(Int64(objects))), ("counts", JSONValue.counts(counts)),
                ("differences", .array(differences.map(JSONValue.string))),
                ("warnings", .array(warnings.map(JSONValue.string))),
            ])
        }
    }

    /// Streams every snapshot of `reader` into `writer` (a concrete writer type, so the per-object call is
    /// direct), counting objects per entity. The reader runs on a thread of its own (see
    /// ``SnapshotStream``), as reading and writing are each about half the work of a conversion.
    static func pump<W: StoreWriter>(
        _ reader: any StoreReader, into writer: inout W, counts: inout [Int], total: Int?,
        progress: ((_ done: Int, _ total: Int?) -> Void)?, anyOrder: Bool = true
    ) throws {
        var done = 0
        try SnapshotStream.forEach(
            of: reader, anyOrder: anyOrder && writer.acceptsSnapshotsInAnyOrder, reading: writer.relationshipsRead
        ) { snapshot in
            try writer.write(snapshot)
            counts[snapshot.ref.entity] += 1
            done += 1
            if done % 10_000 == 0 { progress?(done, total) }
        }
    }

    /// What ``write(_:to:format:overwrite:progress:)`` wrote.
    public struct Written: Sendable {
        /// Objects per entity (each under its own entity; entities without objects left out).
        public var counts: [String: Int]
        /// The reader's warnings, then the writer's.
        public var warnings: [String]
    }

    /// Writes every object a reader streams into a new document at `output`, as ``convert(from:to:options:progress:)``
    /// does: the reader's UUID and metadata kept, written beside `output` and placed only when complete.
    ///
    /// - Throws: `GraftError.alreadyExists` when `output` exists and `overwrite` is off; the reader's and
    ///   writer's errors (nothing is then left at `output`).
    public static func write(
        _ reader: any StoreReader, to output: URL, format outputFormat: StoreFormat, overwrite: Bool = false,
        progress: ((_ done: Int, _ total: Int?) -> Void)? = nil
    ) throws -> Written {
        var metadata = StoreMetadata.make(
            for: reader.model, storeType: outputFormat.storeType, identifier: reader.metadata.identifier,
            keeping: reader.metadata.values)
        // A document with one key sequence (binary): record how the input's keys map into it. (XML
        // documents keep keys that trees share in their ids; SQLite stores keep a sequence per tree.)
        DocumentKeys.record(
            outputFormat.driver.hasOneKeySequence ? reader.keyOffsets : [:], model: reader.model, in: &metadata)
        var writer = try outputFormat.driver.writer(
            at: output, model: reader.model, metadata: metadata, overwrite: overwrite)
        let total = reader.objectCount
        var perEntity = [Int](repeating: 0, count: reader.model.descriptions.count)
        do {
            do {
                try pump(reader, into: &writer, counts: &perEntity, total: total, progress: progress)
            } catch is OrderedReadNeeded {
                // The reader could not read in its own order after all: start again, in document order.
                writer.cancel()
                writer = try outputFormat.driver.writer(
                    at: output, model: reader.model, metadata: metadata, overwrite: overwrite)
                perEntity = [Int](repeating: 0, count: reader.model.descriptions.count)
                try pump(reader, into: &writer, counts: &perEntity, total: total, progress: progress, anyOrder: false)
            }
            try writer.finish()
        } catch {
            writer.cancel()
            throw error
        }
        var counts: [String: Int] = [:]
        for (index, count) in perEntity.enumerated() where count > 0 {
            counts[reader.model.descriptions[index].name] = count
        }
        progress?(perEntity.reduce(0, +), total)
        return Written(counts: counts, warnings: reader.warnings + writer.warnings)
    }

    /// Converts `input` into a new document at `output`.
    ///
    /// The input is never changed. The output is written into a temporary file beside it and renamed
    /// into place only when complete; on any failure nothing is left at `output`.
    ///
    /// - Parameter progress: called now and then with the objects written so far and the total, when known.
    /// - Throws: `GraftError.alreadyExists` when `output` exists and `overwrite` is off; the reader's and
    ///   writer's errors; `GraftError.validationFailed` when `verify` finds differences (the output is
    ///   kept, since it was written completely; the error lists the differences).
    public static func convert(
        from input: URL, to output: URL, options: Options = Options(),
        progress: ((_ done: Int, _ total: Int?) -> Void)? = nil
    ) throws -> Report {
        let inputFormat = try StoreFormat.detect(input)
        guard let outputFormat = options.format ?? StoreFormat.forExtension(output) else {
            throw GraftError(
                .unsupportedFormat, "cannot tell the output format from its name; give --to sqlite|xml|binary",
                context: [.file(output.relativePath)])
        }
        if input.standardizedFileURL.resolvingSymlinksInPath() == output.standardizedFileURL.resolvingSymlinksInPath()
            || StoreFiles.isPart(output, ofStoreAt: input)
        {
            throw GraftError(
                .invalidOperation, "the output is the input; choose another path", context: [.file(output.relativePath)]
            )
        }
        if !options.overwrite && FileAccess.kind(of: output).exists {
            throw GraftError(
                .alreadyExists, "already exists (use --force to replace it)", context: [.file(output.relativePath)])
        }
        // A reference to an object the input does not have is left out (each named in a warning) when the
        // output cannot hold it.
        var reading = options.reading
        reading.danglingReferences = outputFormat.driver.holdsDanglingReferences ? .keep : .drop
        // A writer that takes objects in any order lets the reader choose the cheapest (an XML document is
        // then read once).
        reading.readsOnceInAnyOrder = outputFormat.driver.writesSnapshotsInAnyOrder
        let reader = try inputFormat.driver.reader(at: input, model: options.model, options: reading)
        let written = try write(
            reader, to: output, format: outputFormat, overwrite: options.overwrite, progress: progress)
        var report = Report(
            inputFormat: inputFormat, outputFormat: outputFormat, counts: written.counts, differences: [],
            warnings: written.warnings)
        if options.verify {
            let written = try outputFormat.driver.reader(at: output, model: reader.model, options: StoreReadOptions())
            // The input again, exactly as it was read (a model inferred from an XML document is inferred
            // again, rather than checked against the version hashes the document records): strictly, so
            // that every value compared is the one stored, unless the conversion read leniently, whose
            // values read as no value must be absent from the output too.
            var readingAgain = reading
            readingAgain.readsOnceInAnyOrder = false
            let again = try inputFormat.driver.reader(at: input, model: options.model, options: readingAgain)
            // Where the input's format can, its values are also compared as it holds them, without its
            // reader (SQLite).
            report.differences = try Verification.differences(
                between: again, and: written,
                storedValues: inputFormat.driver.storedValueCheck(of: again, readWith: reader))
            if !report.differences.isEmpty {
                throw GraftError(
                    .validationFailed,
                    "the output differs from the input in \(Wording.counted(report.differences.count, "place"))",
                    context: [.file(output.relativePath)],
                    underlying: report.differences.prefix(50).map { GraftError(.validationFailed, $0) })
            }
        }
        return report
    }
}
