import Foundation
import Graft

/// A department of version 2 of the Company model, which gives every department an office (an optional
/// to-one to the new `Office` entity).
///
/// Documents written with version 1 have no offices. Rather than migrating them with custom code, the
/// class creates the office when a department is made (`awakeFromInsert`) and when an old one is read
/// (`awakeFromFetch`), without adding an undo step: opening an old document does not make it look edited.
public final class Department: ManagedObject {
    public override func awakeFromInsert() {
        // Part of the insertion's undo step: undoing the insertion removes the office too.
        ensureOffice()
    }

    public override func awakeFromFetch() {
        // Not an undo step: the user did not do anything. (Graft already pauses undo registration around
        // awakeFromFetch, as Core Data disables change processing there; saying so keeps the intent plain.)
        context?.withoutUndoRegistration { ensureOffice() }
    }

    /// The department's office, made when it has none.
    private func ensureOffice() {
        guard let context, (try? relatedObject(forKey: "office")) == nil,
            let office = try? context.insert("Office")
        else { return }
        try? setValue(office, forKey: "office")
    }
}

/// A Company document as an app would keep it: a context over the store, with the model's classes.
public final class CompanyDocument {
    public let context: ObjectContext
    /// Where the document's store is (the upgraded copy, when the document was written with version 1).
    public let url: URL
    /// Whether the document was upgraded from an older model version when it was opened.
    public let wasUpgraded: Bool

    /// Whether the document has unsaved edits, as a document window shows them: the user did something
    /// that can be undone. (Objects made by `awakeFromFetch` are saved with the next save, but they are
    /// not edits.)
    public var isEdited: Bool { context.canUndo }

    /// Opens the document at `url` with the current version of `models`. A document written with an older
    /// version is first copied, whole, into a new document at `upgradedURL` written with the current one
    /// (each object keeps its values; what the new version adds starts empty), and that one is opened.
    ///
    /// - Throws: `GraftError.modelMismatch` when no version of `models` wrote the document; what copying,
    ///   pasting and opening throw.
    public static func open(_ url: URL, models: ModelFile, upgradedURL: URL) throws -> CompanyDocument {
        let current = models.current
        let recorded = try StoreFormat.recordedVersionHashes(of: url)
        var storeURL = url
        var upgraded = false
        if recorded != current.versionHashes {
            guard let version = models.versions.first(where: { $0.model.versionHashes == recorded }) else {
                throw GraftError(
                    .modelMismatch, "no version of the Company model wrote this document",
                    context: [.file(url.relativePath)])
            }
            let copied = try Copier.copy(storeAt: url, selection: Selection(roots: [.all]), model: version.model)
            _ = try Paster().paste(
                copied.clipboard, intoNewStoreAt: upgradedURL, format: try StoreFormat.detect(url), model: current)
            storeURL = upgradedURL
            upgraded = true
        }
        let context = ObjectContext(store: try StoreFormat.open(storeURL, model: current))
        try context.register(Department.self)  // the model's class name for Department
        return CompanyDocument(context: context, url: storeURL, wasUpgraded: upgraded)
    }

    private init(context: ObjectContext, url: URL, wasUpgraded: Bool) {
        self.context = context
        self.url = url
        self.wasUpgraded = wasUpgraded
    }

    /// The departments, by name.
    public func departments() throws -> [ManagedObject] {
        try context.fetch(
            FetchRequest(entityName: "Department", sortDescriptors: [GraftSortDescriptor(keyPath: "name")]))
    }
}

/// The seed case, step by step: open a version-1 document with version 2, see every department get an
/// office without the document looking edited, add a department, undo it, save, and open the result again.
public enum OfficesExample {
    /// The store identifier of `Company-v1.xml`, so that the file is the same each time it is written.
    public static let version1Identifier = "0C0FFEE0-C0DE-4A7A-B1E5-5AFE5EED0002"

    /// What the walk through found; `description` is what `offices-example` prints.
    public struct Report: CustomStringConvertible, Sendable {
        public var wasUpgraded = false
        /// Department name → its office's building, after opening.
        public var offices: [String: String] = [:]
        /// New objects after opening (the offices `awakeFromFetch` made), and whether the document looked
        /// edited.
        public var newObjectsAfterOpening = 0
        public var editedAfterOpening = true
        /// After inserting a department: whether it got an office, and whether the document looked edited.
        public var insertedDepartmentHasOffice = false
        public var editedAfterInsert = false
        /// After undoing the insertion: whether the department and its office both went away.
        public var undoRemovedDepartmentAndOffice = false
        /// After saving and opening the saved document again.
        public var reopenedOffices: [String: String] = [:]
        public var reopenedHasChanges = true
        public var reopenedEdited = true

        public var description: String {
            var lines = ["opened a version-1 document\(wasUpgraded ? ", upgraded to version 2" : "")"]
            for name in offices.keys.sorted() { lines.append("  \(name): office in \(offices[name]!)") }
            lines.append(
                "  \(newObjectsAfterOpening) new objects to save; the document looks \(editedAfterOpening ? "edited" : "unedited")"
            )
            lines.append(
                "inserted a department: \(insertedDepartmentHasOffice ? "it has an office" : "no office"); the document looks \(editedAfterInsert ? "edited" : "unedited")"
            )
            lines.append(
                "undo: \(undoRemovedDepartmentAndOffice ? "the department and its office are gone" : "something is left")"
            )
            lines.append(
                "saved and reopened: \(reopenedOffices.count) departments with offices; \(reopenedHasChanges ? "has" : "no") unsaved changes; \(reopenedEdited ? "edited" : "unedited")"
            )
            return lines.joined(separator: "\n")
        }
    }

    /// Runs the walk through on the version-1 document in `folder` (`examples/Offices`), writing only
    /// into `workingDirectory`.
    public static func run(folder: URL, workingDirectory: URL) throws -> Report {
        let models = try ModelFile.load(folder.appendingPathComponent("Company.xcdatamodeld"))
        let upgradedURL = workingDirectory.appendingPathComponent("Company.xml")
        var report = Report()

        let document = try CompanyDocument.open(
            folder.appendingPathComponent("Company-v1.xml"), models: models, upgradedURL: upgradedURL)
        report.wasUpgraded = document.wasUpgraded
        for department in try document.departments() {
            let office = try department.relatedObject(forKey: "office")
            report.offices[department.value(forKey: "name") as? String ?? "?"] =
                office?.value(forKey: "building") as? String ?? "none"
        }
        report.newObjectsAfterOpening = document.context.insertedObjects.count
        report.editedAfterOpening = document.isEdited

        let marketing = try document.context.insert("Department")
        let office = try marketing.relatedObject(forKey: "office")
        report.insertedDepartmentHasOffice = office != nil
        report.editedAfterInsert = document.isEdited
        document.context.undo()
        report.undoRemovedDepartmentAndOffice =
            document.context.insertedObjects.count == report.newObjectsAfterOpening && marketing.isDeleted
            && (office?.isDeleted ?? false)

        try document.context.save()
        let reopened = try CompanyDocument.open(upgradedURL, models: models, upgradedURL: upgradedURL)
        for department in try reopened.departments() {
            guard let office = try department.relatedObject(forKey: "office") else { continue }
            report.reopenedOffices[department.value(forKey: "name") as? String ?? "?"] =
                office.value(forKey: "building") as? String ?? "none"
        }
        report.reopenedHasChanges = reopened.context.hasChanges
        report.reopenedEdited = reopened.isEdited
        return report
    }

    /// The objects of `Company-v1.xml`: two departments of three people each, written with version 1 of
    /// the model (`GRAFT_RECORD=1 swift test` writes the file from it).
    public static func version1Document(model: Model) throws -> InMemoryStore {
        let store = InMemoryStore(model: model, identifier: version1Identifier)
        let context = ObjectContext(store: store)
        var nextID: Int64 = 1
        for (name, code, people) in [
            ("Research", 20, ["Ada Lovelace", "Alan Turing", "Edsger Dijkstra"]),
            ("Sales", 10, ["Grace Hopper", "Barbara Liskov", "Frances Allen"]),
        ] {
            let department = try context.insert("Department")
            try department.setValue(name, forKey: "name")
            try department.setValue(Int64(code), forKey: "code")
            for person in people {
                let employee = try context.insert("Employee")
                try employee.setValue(person, forKey: "name")
                try employee.setValue(nextID, forKey: "employeeID")
                try employee.setValue(
                    Date(timeIntervalSinceReferenceDate: 600_000_000 + Double(nextID)), forKey: "hireDate")
                try employee.setValue(department, forKey: "department")
                nextID += 1
            }
        }
        try context.save()
        return store
    }
}
