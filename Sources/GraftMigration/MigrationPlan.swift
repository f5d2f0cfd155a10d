import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel

/// What migrating a store to a model version takes: the version that wrote the store, and the steps
/// from it to the version asked for, each with the changes it carries.
///
/// Core Data migrates one step at a time and leaves the order of versions to the app. Graft steps
/// through the model file's versions in version order (``ModelFile/isOrderedBefore(_:_:)``), from the
/// store's version to the one asked for, one inferred mapping per step, and runs all the steps in one
/// pass over the store.
///
/// For example:
///
/// ```swift
/// let plan = try MigrationPlan(store: storeURL, model: ModelFile.load(modelURL))
/// for step in plan.steps { print(step.from, "→", step.to, step.changes.count) }
/// ```
public struct MigrationPlan: Sendable {
    /// One step from a version to the next.
    public struct Step: Sendable {
        /// The version migrated from (``MigrationPlan/storeModelName`` for the store's own model).
        public let from: String
        public let to: String
        public let method: Method
        public let changes: [MigrationChange]
        let mapping: ModelMapping
        /// The Swift policies the step runs, by source entity index.
        let policies: [Int: MigrationPolicy]

        init(
            from: String, to: String, method: Method, changes: [MigrationChange], mapping: ModelMapping,
            policies: [Int: MigrationPolicy] = [:]
        ) {
            self.from = from
            self.to = to
            self.method = method
            self.changes = changes
            self.mapping = mapping
            self.policies = policies
        }
    }

    /// How a step's mapping is found.
    public enum Method: Sendable, Equatable, CustomStringConvertible {
        /// Inferred from the two versions (lightweight).
        case inferred
        /// Run by the mapping model at this path.
        case mappingModel(String)

        public var description: String {
            switch self {
            case .inferred: "inferred"
            case .mappingModel(let path): "mapping model \(path)"
            }
        }
    }

    /// The name a plan gives the model a store carries, when it is none of the model file's versions.
    public static let storeModelName = "the store's own model"

    public let store: URL
    public let format: StoreFormat
    /// The model file's version that wrote the store, or ``storeModelName`` when the store's version is
    /// not among them and the store carries its model.
    public let storeVersion: String
    /// The model the store is read with.
    public let sourceModel: Model
    public let targetVersion: String
    public let targetModel: Model
    public let steps: [Step]
    /// Whether the version the store's model was stepped from was chosen as the nearest one, the store's
    /// own version not being among the model file's.
    public let startsFromNearestVersion: String?

    /// Whether the store needs migrating at all.
    public var isNeeded: Bool { !steps.isEmpty }

    /// The steps' mappings as one: which entity each of the store's entities becomes, and where each
    /// property of the target version comes from. (Swift policies, and a mapping model's expressions and
    /// filters, run only through ``MigratingReader/init(_:plan:lookup:)`` and ``Migration``.)
    public var mapping: ModelMapping {
        steps.dropFirst().reduce(steps.first?.mapping ?? .identity(sourceModel)) { $0.then($1.mapping) }
    }

    /// The steps as the migrating reader runs them: consecutive steps composed into one mapping, except
    /// that a step with Swift policies is a stage of its own (its policies see that step's objects).
    var stages: [MigrationStage] {
        var stages: [MigrationStage] = []
        for step in steps {
            if step.policies.isEmpty, !step.mapping.evaluates, let last = stages.last, last.policies.isEmpty,
                !last.mapping.evaluates
            {
                stages[stages.count - 1] = MigrationStage(mapping: last.mapping.then(step.mapping), policies: [:])
            } else {
                stages.append(MigrationStage(mapping: step.mapping, policies: step.policies))
            }
        }
        return stages.isEmpty ? [MigrationStage(mapping: .identity(sourceModel), policies: [:])] : stages
    }

    /// Plans the migration of the store at `store` to version `version` of `model` (its current version
    /// when `nil`).
    ///
    /// - Parameters:
    ///   - mappingModels: mapping models (`.cdm`, `.xcmappingmodel`) for steps that need one; those in the
    ///     model file's folder and the folders in it are found too. A step one of them joins (by the
    ///     version hashes it records) is run by it; any other step is inferred.
    ///   - mappings: mapping models already read (or made in Swift), tried before those at paths.
    ///   - policies: Swift code for the custom policies mapping models name, and for inferred steps.
    /// - Throws: `GraftError.notFound` for a version the file does not have; `GraftError.migrationBlocked`
    ///   when the store's version cannot be found (it records no hashes, or none of the versions has them
    ///   and the store carries no model), when the store is newer than the version asked for, or when a
    ///   step cannot be inferred or run (naming each property, mapping or policy that blocks it); the
    ///   store's own errors.
    public init(
        store: URL, model file: ModelFile, version: String? = nil, mappingModels: [URL] = [],
        mappings given: [MappingModel] = [], policies: [MigrationPolicy] = []
    ) throws {
        let mappings =
            given.enumerated().map { ("mapping model \($0.offset + 1) given", $0.element) }
            + (try Self.mappingModels(given: mappingModels, beside: file))
        let format = try StoreFormat.detect(store)
        let target = try Self.version(named: version ?? file.currentVersionName, in: file)
        let recorded = try format.driver.recordedVersionHashes(at: store)
        guard !recorded.isEmpty else {
            throw GraftError(
                .migrationBlocked,
                "the store records no version hashes, so the version that wrote it cannot be found; "
                    + "read it with the model that wrote it (--model) and copy its objects instead",
                context: [.file(store.relativePath)])
        }
        var steps: [Step] = []
        let versions = file.versions
        let start: Int
        var nearest: String?
        let sourceModel: Model
        let storeVersion: String
        guard let end = versions.firstIndex(where: { $0.name == target.name }) else {
            throw GraftError(.notFound, "no version named '\(target.name)'", context: [.file(file.url.relativePath)])
        }
        // The store's version: the target itself when it has the store's hashes (a store Core Data would
        // open as it is), else the latest version before it that has them.
        let matching = versions.indices.filter { versions[$0].model.versionHashes == recorded }
        if let later = matching.first(where: { $0 > end }), !matching.contains(end),
            !matching.contains(where: { $0 < end })
        {
            throw GraftError(
                .migrationBlocked,
                "the store was written with version '\(versions[later].name)', which comes after '\(target.name)': "
                    + "Graft does not migrate back to an earlier version",
                context: [.file(store.relativePath)])
        }
        if let index = matching.contains(end) ? end : matching.last(where: { $0 < end }) {
            start = index
            sourceModel = versions[index].model
            storeVersion = versions[index].name
        } else {
            // The store's version is not in the file: read it with the model it carries, and step from
            // that to the version sharing the most entity hashes with it.
            let reader = try format.driver.reader(at: store, model: nil, options: StoreReadOptions())
            guard reader.modelSource == .modelCache, reader.model.versionHashes == recorded else {
                throw GraftError(
                    .migrationBlocked,
                    "the store was written with a version that is not in \(file.url.lastPathComponent) "
                        + "(none of its \(Wording.counted(versions.count, "version")) has the store's version "
                        + "hashes), and the store does not carry its model; give the model file that has that "
                        + "version",
                    context: [.file(store.relativePath)])
            }
            sourceModel = reader.model
            storeVersion = Self.storeModelName
            // Among the versions up to the one asked for: a store is never stepped backwards.
            let shared = versions[...end].map { version in
                recorded.filter { version.model.versionHashes[$0.key] == $0.value }.count
            }
            let best = shared.max() ?? 0
            start = shared.lastIndex(of: best) ?? 0
            nearest = versions[start].name
            let step = try Self.step(
                from: Self.storeModelName, sourceModel, to: versions[start].name, versions[start].model,
                mappings: mappings, policies: policies)
            steps.append(step)
        }
        if end < start {
            throw GraftError(
                .migrationBlocked,
                "the store was written with version '\(versions[start].name)', which comes after '\(target.name)': "
                    + "Graft does not migrate back to an earlier version",
                context: [.file(store.relativePath)])
        }
        if start < end {
            for index in start..<end {
                let from = versions[index]
                let to = versions[index + 1]
                steps.append(
                    try Self.step(
                        from: from.name, from.model, to: to.name, to.model, mappings: mappings, policies: policies))
            }
        }
        self.store = store
        self.format = format
        self.storeVersion = storeVersion
        self.sourceModel = sourceModel
        self.targetVersion = target.name
        self.targetModel = target.model
        self.steps = steps
        self.startsFromNearestVersion = nearest
    }

    private static func version(named name: String, in file: ModelFile) throws -> ModelFile.Version {
        guard let version = file.versions.first(where: { $0.name == name }) else {
            throw GraftError(
                .notFound,
                "the model has no version named '\(name)'; its versions are "
                    + file.versions.map { "'\($0.name)'" }.joined(separator: ", "),
                context: [.file(file.url.relativePath)])
        }
        return version
    }

    /// The mapping models given, and those found in the model file's folder (two levels down), with
    /// the path each is named by. A given one that cannot be read is an error; a found one is skipped.
    private static func mappingModels(
        given: [URL], beside file: ModelFile
    ) throws -> [(path: String, model: MappingModel)] {
        var found: [(String, MappingModel)] = try given.map { ($0.relativePath, try MappingModel.load($0)) }
        let folder = file.url.deletingLastPathComponent()
        guard file.format != .storeDocument, file.format != .storeModelCache, file.format != .inferred,
            let walker = FileManager.default.enumerator(
                at: folder, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles, .skipsPackageDescendants])
        else { return found }
        for case let url as URL in walker {
            if walker.level > 2 { walker.skipDescendants() }
            let name = url.pathExtension.lowercased()
            guard name == "cdm" || name == "xcmappingmodel", !given.contains(url) else { continue }
            if name == "xcmappingmodel" { walker.skipDescendants() }
            if let model = try? MappingModel.load(url) { found.append((url.relativePath, model)) }
        }
        return found
    }

    /// The step from `source` to `destination`: by the first mapping model that joins them, else inferred.
    private static func step(
        from: String, _ source: Model, to: String, _ destination: Model,
        mappings: [(path: String, model: MappingModel)], policies: [MigrationPolicy]
    ) throws -> Step {
        do {
            if let (path, mappingModel) = mappings.first(where: {
                MappingModelStep.joins($0.model, source, destination)
            }) {
                let step = try MappingModelStep.mapping(
                    mappingModel, named: path, from: source, to: destination, policies: policies)
                return Step(
                    from: from, to: to, method: .mappingModel(path), changes: step.changes, mapping: step.mapping,
                    policies: step.policies)
            }
            let inferred = try MappingInference.infer(from: source, to: destination)
            // Swift policies of this step, on the source entities whose objects become theirs.
            var chosen: [Int: MigrationPolicy] = [:]
            var changes = inferred.changes
            for policy in policies {
                guard let (version, entityName) = policy.step, version == to else { continue }
                guard let entity = destination.entity(named: entityName) else {
                    throw GraftError(
                        .notFound, "a Swift policy names the entity \(entityName), which version '\(to)' does not have")
                }
                for sourceEntity in source.descriptions
                where inferred.mapping.destinationEntity(ofSourceEntity: sourceEntity.index) == entity.index {
                    chosen[sourceEntity.index] = policy
                }
                changes.append(.init(entity: entityName, kind: .customPolicy, detail: "also run by a Swift policy"))
            }
            return Step(
                from: from, to: to, method: .inferred, changes: changes, mapping: inferred.mapping, policies: chosen)
        } catch var error as GraftError {
            error.message = "step '\(from)' → '\(to)': " + error.message
            throw error
        }
    }

    /// The plan for people: the store's version, then each step with its changes.
    public var text: String {
        var out = "Store \(store.relativePath) (\(format)): written with "
        out += storeVersion == Self.storeModelName ? "\(storeVersion)" : "version '\(storeVersion)'"
        if let nearest = startsFromNearestVersion {
            out += " (not a version of the model file; nearest version: '\(nearest)')"
        }
        out += "\n"
        guard isNeeded else {
            return out + "Nothing to migrate: the store is at version '\(targetVersion)'.\n"
        }
        out += "Migrating to version '\(targetVersion)' in \(Wording.counted(steps.count, "step")):\n"
        for (number, step) in steps.enumerated() {
            out += "Step \(number + 1): '\(step.from)' → '\(step.to)' (\(step.method))\n"
            if step.changes.isEmpty {
                out += "  no change to objects (the versions differ only in what their hashes cover)\n"
            }
            for change in step.changes { out += "  \(change)\n" }
        }
        return out
    }

    /// `{"store", "format", "storeVersion", "targetVersion", "steps": [{"from", "to", "method",
    /// "changes": [{"entity", "property"?, "change", "detail"}]}]}`.
    public var json: JSONValue {
        var fields: [(String, JSONValue)] = [
            ("store", .string(store.relativePath)), ("format", .string(format.rawValue)),
            ("storeVersion", .string(storeVersion)),
        ]
        if let nearest = startsFromNearestVersion { fields.append(("nearestVersion", .string(nearest))) }
        fields.append(("targetVersion", .string(targetVersion)))
        fields.append(
            (
                "steps",
                .array(
                    steps.map { step in
                        .object([
                            ("from", .string(step.from)), ("to", .string(step.to)),
                            ("method", .string(step.method.description)),
                            ("changes", .array(step.changes.map(\.json))),
                        ])
                    })
            ))
        return .object(fields)
    }
}

extension MigrationChange {
    /// `{"entity", "property"?, "change", "detail", "from"?}`.
    public var json: JSONValue {
        var fields: [(String, JSONValue)] = [("entity", .string(entity))]
        if let property { fields.append(("property", .string(property))) }
        fields.append(("change", .string(kind.rawValue)))
        fields.append(("detail", .string(detail)))
        if let from { fields.append(("from", .string(from))) }
        return .object(fields)
    }
}
