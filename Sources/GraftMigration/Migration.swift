import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel

/// Migrates stores written with an older version of a model to a newer one (`graft migrate`).
///
/// The store is read once with the version that wrote it, its objects pass through every step's
/// mapping, and a new document is written from them as `convert` writes one: streaming, in bounded
/// memory, beside its destination and put in place only when complete. The store's UUID, its metadata
/// keys Graft does not set, and every object's key (so its URI) are kept.
///
/// For example:
///
/// ```swift
/// let plan = try MigrationPlan(store: old, model: ModelFile.load(modelURL))
/// let report = try Migration.migrate(plan, to: .file(newURL))
/// print(report.counts)
/// ```
public enum Migration {
    /// Where the migrated store goes.
    public enum Destination: Sendable {
        /// A new document (in the format its extension names, else the store's).
        case file(URL, format: StoreFormat? = nil, overwrite: Bool = false)
        /// The store itself: replaced in one rename once the new one is complete, no other writer able
        /// to change it meanwhile; or, for steps that only add attributes, altered where it is in one
        /// transaction by a format that can (SQLite, without `verify`; see ``inPlaceAdditions(_:)``).
        case inPlace
    }

    /// What a migration did.
    public struct Report: Sendable {
        public var plan: MigrationPlan
        public var output: URL
        public var outputFormat: StoreFormat
        /// Objects per entity of the new version, each under its own entity.
        public var counts: [String: Int]
        public var objects: Int { counts.values.reduce(0, +) }
        /// Differences `verify` found (empty when none, or when it did not run).
        public var differences: [String]
        public var warnings: [String]

        /// `{"plan": {…}, "output", "outputFormat", "objects", "counts", "differences", "warnings"}`.
        public var json: JSONValue {
            .object([
                ("plan", plan.json), ("output", .string(output.relativePath)),
                ("outputFormat", .string(outputFormat.rawValue)), ("objects", .int(Int64(objects))),
                ("counts", JSONValue.counts(counts)), ("differences", .array(differences.map(JSONValue.string))),
                ("warnings", .array(warnings.map(JSONValue.string))),
            ])
        }
    }

    /// Runs `plan`.
    ///
    /// - Parameters:
    ///   - verify: read the new document back and compare it, object by object, with the store migrated
    ///     again in memory.
    ///   - progress: called now and then with the objects written so far and the total, when known.
    /// - Throws: `GraftError.alreadyExists` for an existing output without `overwrite`;
    ///   `GraftError.migrationBlocked` naming the object and property that cannot be migrated (a required
    ///   value without a default, a to-many become to-one that names several objects, a value the new type
    ///   cannot hold, an object of an entity the new version makes abstract); `GraftError.busy` when another writer holds a store migrated in place; the store's
    ///   errors. Nothing is written, and the store is as it was, on any error.
    public static func migrate(
        _ plan: MigrationPlan, to destination: Destination, reading: StoreReadOptions = StoreReadOptions(),
        verify: Bool = false, progress: ((_ done: Int, _ total: Int?) -> Void)? = nil
    ) throws -> Report {
        if case .inPlace = destination, !verify, let additions = inPlaceAdditions(plan),
            let report = try migrateWhereItIs(plan, adding: additions, reading: reading)
        {
            return report
        }
        let output: URL
        let format: StoreFormat
        let overwrite: Bool
        var lock: AnyObject?
        switch destination {
        case .file(let url, let given, let replace):
            guard
                !(url.standardizedFileURL == plan.store.standardizedFileURL
                    || StoreFiles.isPart(url, ofStoreAt: plan.store))
            else {
                throw GraftError(
                    .invalidOperation, "the output is the store itself; migrate it in place instead",
                    context: [.file(url.relativePath)])
            }
            if !replace && FileAccess.kind(of: url).exists {
                throw GraftError(
                    .alreadyExists, "already exists (use --force to replace it)", context: [.file(url.relativePath)])
            }
            output = url
            format = given ?? StoreFormat.forExtension(url) ?? plan.format
            overwrite = replace
        case .inPlace:
            // The new store is written beside the old one, which stays as it was until the new one is
            // complete (and verified); no other writer can change the old one meanwhile.
            let name = plan.store.lastPathComponent
            output = plan.store.deletingLastPathComponent().appendingPathComponent(
                ".\(name).graft-migrating-\(UUID().uuidString)")
            format = plan.format
            overwrite = false
            lock = try plan.format.driver.holdAgainstWriters(
                plan.store, model: plan.sourceModel, wait: FileLock.defaultWait)
        }
        var options = reading
        options.danglingReferences = format.driver.holdsDanglingReferences ? .keep : .drop
        options.readsOnceInAnyOrder = format.driver.writesSnapshotsInAnyOrder
        let stages = plan.stages
        // Expressions that read through relationships read the related objects from the store.
        var lookup: ((ObjectRef) throws -> Snapshot?)?
        if stages[0].mapping.evaluates {
            let store = try StoreFormat.openForReading(plan.store, model: plan.sourceModel, options: reading)
            lookup = { try store.snapshot(for: $0) }
        }
        var report: Report
        do {
            let source = try plan.format.driver.reader(at: plan.store, model: plan.sourceModel, options: options)
            let reader = try MigratingReader(source, stages: stages, lookup: lookup)
            let written = try Conversion.write(
                reader, to: output, format: format, overwrite: overwrite, progress: progress)
            report = Report(
                plan: plan, output: output, outputFormat: format, counts: written.counts, differences: [],
                warnings: written.warnings)
            if verify {
                var again = options
                again.readsOnceInAnyOrder = false
                let expected = try MigratingReader(
                    plan.format.driver.reader(at: plan.store, model: plan.sourceModel, options: again), stages: stages,
                    lookup: lookup)
                let actual = try format.driver.reader(at: output, model: plan.targetModel, options: StoreReadOptions())
                report.differences = try Verification.differences(between: expected, and: actual, storedValues: nil)
                if !report.differences.isEmpty {
                    throw GraftError(
                        .validationFailed,
                        "the migrated store differs from the store migrated in memory in "
                            + Wording.counted(report.differences.count, "place"),
                        context: [.file(output.relativePath)],
                        underlying: report.differences.prefix(50).map { GraftError(.validationFailed, $0) })
                }
            }
            if case .inPlace = destination {
                // Held until now (the new store complete and checked), let go just before the rename.
                withExtendedLifetime(lock) {}
                lock = nil
                try replace(plan.store, with: output, format: format)
                report.output = plan.store
            }
        } catch {
            if case .inPlace = destination { try? FileManager.default.removeItem(at: output) }
            throw error
        }
        return report
    }

    /// A store migrated where it is, by its format adding attributes to its objects in one transaction,
    /// after every object is checked against the new model's rules; `nil` when the format cannot.
    private static func migrateWhereItIs(
        _ plan: MigrationPlan, adding additions: [AttributeAddition], reading: StoreReadOptions
    ) throws -> Report? {
        let before = try plan.format.driver.reader(at: plan.store, model: plan.sourceModel, options: reading)
        let metadata = StoreMetadata.make(
            for: plan.targetModel, storeType: plan.format.storeType, identifier: before.metadata.identifier,
            keeping: before.metadata.values)
        var counts: [String: Int] = [:]
        var warnings: [String] = []
        let checks = !rulesStayMet(plan, adding: additions)
        let done = try plan.format.driver.addAttributes(
            additions, at: plan.store, from: plan.sourceModel, to: plan.targetModel, metadata: metadata
        ) {
            guard checks else {
                counts = try before.counts().filter { $0.value > 0 }
                return
            }
            // Once no other writer can change the store: every object as it will be, checked (reading
            // only the to-manys the new model's rules count, as the relationships stay as they are).
            var once = reading
            once.readsOnceInAnyOrder = true
            let reader = try MigratingReader(
                plan.format.driver.reader(at: plan.store, model: plan.sourceModel, options: once),
                stages: plan.stages)
            try reader.forEachSnapshotInAnyOrder(
                reading: RelationshipSelection(model: plan.targetModel) { _, _ in false }
            ) {
                _ in
            }
            counts = try reader.counts().filter { $0.value > 0 }
            warnings = reader.warnings
        }
        guard done else { return nil }
        return Report(
            plan: plan, output: plan.store, outputFormat: plan.format, counts: counts, differences: [],
            warnings: warnings)
    }

    /// The attributes a migration adds, when they are all it changes in the store's layout — the same
    /// entities, hierarchy, relationships, indexes and constraints; attributes only added (not indexed)
    /// or become required with a default — so that a format able to add columns can migrate the store
    /// where it is; `nil` otherwise.
    public static func inPlaceAdditions(_ plan: MigrationPlan) -> [AttributeAddition]? {
        let stages = plan.stages
        guard stages.count == 1, stages[0].policies.isEmpty, !stages[0].mapping.evaluates else { return nil }
        let mapping = stages[0].mapping
        let (source, destination) = (mapping.source, mapping.destination)
        guard source.descriptions.count == destination.descriptions.count else { return nil }
        var additions: [AttributeAddition] = []
        for old in source.descriptions {
            guard let object = mapping.objects[old.index] else { return nil }
            let new = destination.descriptions[object.destinationEntity]
            guard new.name == old.name, new.isAbstract == old.isAbstract,
                new.superentityIndex.map({ destination.descriptions[$0].name })
                    == old.superentityIndex.map({ source.descriptions[$0].name }),
                new.declaration.uniquenessConstraints == old.declaration.uniquenessConstraints,
                new.declaration.compoundIndexes == old.declaration.compoundIndexes,
                new.declaration.fetchIndexes == old.declaration.fetchIndexes,
                new.relationships.count == old.relationships.count
            else { return nil }
            for (index, relationship) in new.relationships.enumerated() {
                guard case .source(let from, _) = object.relationships[index] else { return nil }
                let was = old.relationships[from].declaration
                let now = relationship.declaration
                guard was.name == now.name, was.isToMany == now.isToMany, was.isOrdered == now.isOrdered,
                    was.destination == now.destination, was.inverse == now.inverse, was.isTransient == now.isTransient
                else { return nil }
            }
            let declared = Set(new.declaration.attributes.map(\.name))
            var carried = Set<Int>()
            for (index, attribute) in new.attributes.enumerated() where !attribute.isTransient {
                switch object.attributes[index] {
                case .source(let from, let conversions, let whenNil):
                    let was = old.attributes[from]
                    guard conversions.isEmpty, was.name == attribute.name, was.type == attribute.type,
                        was.isIndexed == attribute.isIndexed, !was.isTransient
                    else { return nil }
                    carried.insert(from)
                    if case .value(let value) = whenNil, was.isOptional, declared.contains(attribute.name) {
                        additions.append(
                            AttributeAddition(
                                entity: new.name, attribute: attribute.name, value: value, onlyWhereNil: true))
                    }
                case .value(let value):
                    guard !attribute.isIndexed else { return nil }
                    if declared.contains(attribute.name) {
                        additions.append(AttributeAddition(entity: new.name, attribute: attribute.name, value: value))
                    }
                case .fail, .expression:
                    return nil
                }
            }
            guard carried.count == old.attributes.filter({ !$0.isTransient }).count else { return nil }
        }
        return additions
    }

    /// Whether no object can break a rule of the new model that it met in the old one, for a migration
    /// that only adds attributes: every rule of every carried property is as it was (type, optionality,
    /// range, pattern, counts, uniqueness), and every added value meets its attribute's rules. Then the
    /// objects need not be read at all.
    static func rulesStayMet(_ plan: MigrationPlan, adding additions: [AttributeAddition]) -> Bool {
        let (source, destination) = (plan.sourceModel, plan.targetModel)
        for old in source.descriptions {
            guard let new = destination.entity(named: old.name),
                new.uniquenessConstraints == old.uniquenessConstraints
            else { return false }
            for attribute in new.attributes where !attribute.isTransient {
                guard let was = old.attributes.first(where: { $0.name == attribute.name }) else { continue }
                guard was.type == attribute.type, was.isOptional == attribute.isOptional,
                    was.minValue == attribute.minValue, was.maxValue == attribute.maxValue,
                    was.regularExpression == attribute.regularExpression
                else { return false }
            }
            for relationship in new.relationships {
                guard let index = old.relationshipIndexByName[relationship.declaration.name] else { return false }
                let (was, now) = (old.relationships[index].declaration, relationship.declaration)
                guard was.isOptional == now.isOptional, was.minCount == now.minCount, was.maxCount == now.maxCount
                else { return false }
            }
        }
        return additions.allSatisfy { addition in
            guard let entity = destination.entity(named: addition.entity),
                let attribute = entity.attributes.first(where: { $0.name == addition.attribute })
            else { return false }
            return AttributeRules.broken(addition.value, for: attribute).isEmpty
        }
    }

    /// Puts the complete new store `replacement` in the place of `store` in one rename, and removes the
    /// files the old store kept beside it (a SQLite store's `-wal`, `-shm`, `-journal`).
    private static func replace(_ store: URL, with replacement: URL, format: StoreFormat) throws {
        guard rename(replacement.path, store.path) == 0 else {
            let reason = String(cString: strerror(errno))
            throw GraftError(
                .io, "cannot put the migrated store in place: \(reason); the store is as it was",
                context: [.file(store.relativePath)])
        }
        for suffix in format.driver.sideFileSuffixes {
            try? FileManager.default.removeItem(atPath: store.path + suffix)
        }
    }
}
