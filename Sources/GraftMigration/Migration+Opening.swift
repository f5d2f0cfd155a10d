import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel

extension Migration {
    /// What opening a store written with another version of the model does, as Core Data's
    /// `shouldMigrateStoreAutomatically` and `shouldInferMappingModelAutomatically` decide.
    public enum Automatic: Sendable {
        /// Migrate the store in place with inferred mappings, then open it.
        case migrate
        /// Open nothing: throw an error that says what migrating would take.
        case report
    }

    /// The plan for bringing the store at `url` to `model`: through the versions of `versions` when
    /// it has the store's version and `model`'s, else in one step from the model the store carries.
    ///
    /// - Throws: as ``MigrationPlan/init(store:model:version:)``.
    public static func plan(for url: URL, to model: Model, versions: ModelFile? = nil) throws -> MigrationPlan {
        if let versions, let target = versions.versions.last(where: { $0.model.versionHashes == model.versionHashes }) {
            return try MigrationPlan(store: url, model: versions, version: target.name)
        }
        let name = "the model given"
        let file = ModelFile(
            url: url, format: .storeDocument, versions: [.init(name: name, model: model)], currentVersionName: name)
        return try MigrationPlan(store: url, model: file, version: name)
    }

    /// Opens the store at `url` for editing with `model`, migrating it first when it was written with
    /// another version (lightweight only: with inferred mappings).
    ///
    /// For example:
    ///
    /// ```swift
    /// let store = try Migration.open(url, model: version2, versions: ModelFile.load(modelsURL))
    /// let context = ObjectContext(store: store)
    /// ```
    ///
    /// - Parameters:
    ///   - versions: the model file whose versions the store may have been written with; without it, the
    ///     store's own model (a SQLite store's model cache) is the source.
    ///   - automatic: ``Automatic/report`` opens nothing when a migration is needed and throws an error
    ///     whose underlying errors are the plan's changes.
    /// - Throws: `GraftError.migrationBlocked` when a migration is needed and `automatic` is `.report`, or
    ///   when it cannot be inferred; what ``migrate(_:to:reading:verify:progress:)`` and the store throw.
    public static func open(
        _ url: URL, model: Model, versions: ModelFile? = nil, automatic: Automatic = .migrate,
        wait: TimeInterval = FileLock.defaultWait
    ) throws -> any PersistentStore {
        let recorded = try StoreFormat.recordedVersionHashes(of: url)
        if recorded.isEmpty || recorded == model.versionHashes {
            return try StoreFormat.open(url, model: model, wait: wait)
        }
        let plan = try plan(for: url, to: model, versions: versions)
        if plan.isNeeded {
            guard automatic == .migrate else {
                throw GraftError(
                    .migrationBlocked,
                    "the store was written with \(plan.storeVersion == MigrationPlan.storeModelName ? "another version of the model" : "version '\(plan.storeVersion)'") "
                        + "and needs migrating (\(Wording.counted(plan.steps.count, "step")))",
                    context: [.file(url.relativePath)],
                    underlying: plan.steps.flatMap { step in
                        step.changes.map { GraftError(.migrationBlocked, "\(step.from) → \(step.to): \($0)") }
                    })
            }
            _ = try migrate(plan, to: .inPlace)
        }
        return try StoreFormat.open(url, model: model, wait: wait)
    }
}
