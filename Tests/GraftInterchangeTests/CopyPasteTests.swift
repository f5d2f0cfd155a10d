import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel
import GraftTestSupport
import Testing

/// The Company models (both versions) and a populated source store.
enum Company {
    static let file = try! ModelFile.load(Project.url("examples/Company/Company.xcdatamodeld"))
    static let v1 = file.version(named: "Company")!
    static let v2 = file.version(named: "Company 2")!

    /// Sales (4 people: a manager of three) and Research (3 people, with a manager of a manager), projects
    /// with members (ordered per department).
    static func store(model: Model = v2) throws -> InMemoryStore {
        let store = InMemoryStore(model: model, identifier: "50DACE00-0000-4000-8000-000000000001")
        let context = ObjectContext(store: store)
        context.isUndoEnabled = false
        var nextID: Int64 = 1
        func department(_ name: String, code: Int64) throws -> ManagedObject {
            let department = try context.insert("Department")
            try department.setValue(name, forKey: "name")
            try department.setValue(code, forKey: "code")
            return department
        }
        func person(
            _ entity: String, _ name: String, in department: ManagedObject, manager: ManagedObject?
        ) throws -> ManagedObject {
            let person = try context.insert(entity)
            try person.setValue(name, forKey: "name")
            try person.setValue(nextID, forKey: "employeeID")
            nextID += 1
            try person.setValue(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(nextID)), forKey: "hireDate")
            try person.setValue(Decimal(string: "5\(nextID)000.25")!, forKey: "salary")
            try person.setValue(department, forKey: "department")
            try person.setValue(manager, forKey: "manager")
            return person
        }
        let sales = try department("Sales", code: 1)
        let boss = try person("Manager", "Sandra", in: sales, manager: nil)
        let staff = try ["Ann", "Bob", "Cid"].map {
            try person($0 == "Cid" ? "Flunky" : "Employee", $0, in: sales, manager: boss)
        }
        let research = try department("Research", code: 2)
        let head = try person("Manager", "Rita", in: research, manager: nil)
        let lead = try person("Manager", "Lee", in: research, manager: head)
        let dev = try person("Employee", "Dev", in: research, manager: lead)
        for (title, department, members) in [
            ("Fair", sales, [boss, staff[0]]), ("Catalogue", sales, [staff[1], staff[2], staff[0]]),
            ("Engine", research, [head, lead, dev]),
        ] {
            let project = try context.insert("Project")
            try project.setValue(title, forKey: "title")
            try project.setValue(department, forKey: "department")
            try project.setValue(members, forKey: "members")
        }
        try context.save()
        return store
    }

    static func source() throws -> StoreSource { StoreSource(try store()) }

    /// Saves a department named Elsewhere into `store` directly (no context, no validation), so that the
    /// store is not empty.
    static func addElsewhere(to store: any PersistentStore) throws {
        let department = v2.entity(named: "Department")!
        var elsewhere = Snapshot(entity: department, key: 1)
        elsewhere[attribute: "name", in: department] = .string("Elsewhere")
        try store.save(StoreChanges(inserted: [elsewhere]))
    }
}

@Suite struct SelectionTests {
    @Test func defaultRulesCopyWhatARootOwnsAndReferenceTheRest() throws {
        let copier = Copier(source: try Company.source())
        let clipboard = try copier.copy(Selection(roots: [.predicate(entity: "Department", format: "name == 'Sales'")]))
        // Department.projects is Cascade: the projects come along; employees (Deny) and members (Nullify) do not.
        #expect(clipboard.counts == ["Department": 1, "Project": 2])
        #expect(clipboard.roots == ["o1"])
        let sales = clipboard.objects[0]
        #expect(sales[attribute: "name"] == "Sales")
        #expect(sales[relationship: "projects"].count == 2)
        #expect(sales[relationship: "employees"].allSatisfy { $0.hasPrefix("r") })
        // Ordered: the projects keep their order, and each is an object, not a reference.
        #expect(sales[relationship: "projects"].allSatisfy { $0.hasPrefix("o") })
        let references = Dictionary(uniqueKeysWithValues: clipboard.references.map { ($0.id, $0) })
        let ann = try #require(references.values.first { $0.identity.contains { $0.value == .integer(2) } })
        #expect(ann.entity == "Employee")
        #expect(ann.identity == [.init("employeeID", .integer(2))])
        #expect(ann.uri?.hasPrefix("x-coredata://50DACE00-0000-4000-8000-000000000001/Employee/p") == true)
        try clipboard.check()
    }

    @Test func followStopAndDepthOverrideTheRules() throws {
        let copier = Copier(source: try Company.source())
        var selection = Selection(
            roots: [.predicate(entity: "Department", format: "name == 'Research'")], follow: ["Department.employees"])
        let plan = try copier.plan(selection)
        // Research, its 3 people, its project; members and managers are inside already: links, not exits.
        #expect(plan.objects.count == 5)
        #expect(plan.exits.isEmpty)
        selection.stop = ["Project"]
        let stopped = try copier.plan(selection)
        #expect(stopped.objects.count == 4)
        #expect(stopped.exits.contains { $0.relationship == "projects" && $0.rule == .stoppedEntity("Project") })
        selection.stop = []
        selection.depth = 0
        let shallow = try copier.plan(selection)
        #expect(shallow.objects.count == 1)
        #expect(shallow.exits.allSatisfy { $0.rule == .depth(0) })
    }

    @Test func cyclesEndWhereAnObjectIsAlreadyTaken() throws {
        let copier = Copier(source: try Company.source())
        // Managers of managers: follow manager and directReports both ways.
        let selection = Selection(
            roots: [.predicate(entity: "Employee", format: "name == 'Dev'")], follow: ["manager", "directReports"],
            stop: ["Department", "Project"])
        let clipboard = try copier.copy(selection)
        #expect(Set(clipboard.objects.compactMap { $0[attribute: "name"] }) == ["Dev", "Lee", "Rita"])
        let lee = try #require(clipboard.objects.first { $0[attribute: "name"] == "Lee" })
        #expect(lee[relationship: "manager"].count == 1)
        #expect(lee[relationship: "directReports"].count == 1)
    }

    @Test func rootsByURIAndKeyAndMistakesNamed() throws {
        let source = try Company.source()
        let copier = Copier(source: source)
        let all = try copier.plan(Selection(roots: [.all]))
        #expect(all.objects.count == 12)
        let first = all.objects.first { source.model.descriptions[$0.entity].name == "Department" }!
        let byURI = try copier.plan(Selection(roots: [.uris([source.uri(of: first)])]))
        #expect(byURI.roots == [first])
        let byKey = try copier.plan(Selection(roots: [.keys(entity: "Employee", [2])]))
        #expect(byKey.roots.count == 1)
        #expect(throws: GraftError.self) { try copier.plan(Selection(roots: [.keys(entity: "Employee", [99])])) }
        #expect(throws: GraftError.self) { try copier.plan(Selection(roots: [.all], follow: ["Department.nothing"])) }
        #expect(throws: GraftError.self) {
            try copier.plan(Selection(roots: [.predicate(entity: "Department", format: "name ==")]))
        }
    }
}

@Suite struct PasteTests {
    /// Research and its people and project, with references to nothing outside.
    func researchClipboard() throws -> Clipboard {
        try Copier(source: try Company.source()).copy(
            Selection(
                roots: [.predicate(entity: "Department", format: "name == 'Research'")],
                follow: ["Department.employees"]))
    }

    @Test func aSubgraphPastesIntoAnEmptyStoreAsNewObjects() throws {
        let clipboard = try researchClipboard()
        let target = InMemoryStore(model: Company.v2)
        let report = try Paster().paste(clipboard, into: target)
        #expect(report.inserted == ["Department": 1, "Manager": 2, "Employee": 1, "Project": 1])
        #expect(report.idMap.count == 5)
        #expect(report.idMap.allSatisfy { $0.uri.hasPrefix("x-coredata://\(target.identifier)/") })
        // The pasted graph is the copied one: copy it again from the target and compare.
        let again = try Copier(source: StoreSource(target)).copy(
            Selection(
                roots: [.predicate(entity: "Department", format: "name == 'Research'")],
                follow: ["Department.employees"]))
        #expect(again.objects.map { $0.attributes } == clipboard.objects.map { $0.attributes })
        #expect(again.objects.map { $0.relationships } == clipboard.objects.map { $0.relationships })
        #expect(again.references.isEmpty)
        try ObjectContext(store: target).checkInvariants()
    }

    @Test func conflictPoliciesDoWhatTheySay() throws {
        let clipboard = try researchClipboard()
        let target = InMemoryStore(model: Company.v2)
        _ = try Paster().paste(clipboard, into: target)
        let before = target.allSnapshots

        // fail (the default): nothing changes, every conflict is listed.
        let refused = try #require(throws: GraftError.self) { try Paster().paste(clipboard, into: target) }
        #expect(refused.underlying.count == 4)  // the department and three people have identities
        #expect(target.allSnapshots == before)

        // skip: the existing objects stay; the project (no identity) is pasted and linked to them.
        let skipped = try Paster(options: PasteOptions(onConflict: .skip)).paste(clipboard, into: target)
        #expect(skipped.skipped == ["Department": 1, "Manager": 2, "Employee": 1])
        #expect(skipped.inserted == ["Project": 1])
        #expect(target.count == before.count + 1)

        // merge: existing objects take the copied values.
        var changed = clipboard
        changed.objects[0].attributes = changed.objects[0].attributes.map {
            $0.name == "code" ? .init("code", .integer(22)) : $0
        }
        let merged = try Paster(options: PasteOptions(onConflict: .merge, onConflictByEntity: ["Project": .skip]))
            .paste(changed, into: target)
        #expect(merged.merged["Department"] == 1)
        let reader = ObjectContext(store: target)  // objects keep only a weak reference to their context
        let research = try reader.fetch(
            FetchRequest(entityName: "Department", predicate: try GraftPredicate(format: "name == 'Research'")))
        #expect(research.count == 1)
        #expect(research.first?.value(forKey: "code") as? Int64 == 22)

        // duplicate: the uniqueness constraints on name and employeeID forbid a second copy, and say so.
        let duplicate = try #require(throws: GraftError.self) {
            try Paster(options: PasteOptions(onConflict: .duplicate)).paste(clipboard, into: target)
        }
        #expect(duplicate.code == .validationFailed)
        #expect(duplicate.underlying.contains { $0.message.contains("already has name = Research") })
        #expect(duplicate.underlying.contains { $0.message.contains("already has employeeID") })
    }

    @Test func referencesLinkByIdentityOrAreReported() throws {
        // Ann alone: her department, manager and projects are references.
        let source = try Company.source()
        let ann = try Copier(source: source).copy(
            Selection(roots: [.predicate(entity: "Employee", format: "name == 'Ann'")]))
        #expect(ann.counts == ["Employee": 1])
        // Into an empty store: the department is missing.
        let empty = InMemoryStore(model: Company.v2)
        let missing = try #require(throws: GraftError.self) { try Paster().paste(ann, into: empty) }
        #expect(missing.description.contains("Department (name = Sales)"))
        // --dangling drop: the department is required, so validation refuses, naming it.
        let dropped = try #require(throws: GraftError.self) {
            try Paster(options: PasteOptions(dangling: .drop)).paste(ann, into: empty)
        }
        #expect(dropped.code == .validationFailed)
        #expect(dropped.underlying.contains { $0.context.contains(.key("department")) })
        #expect(empty.count == 0)

        // Into a store that has Sales and its people: linked by identity; both sides of each link kept.
        let target = InMemoryStore(model: Company.v2)
        let sales = try Copier(source: source).copy(
            Selection(
                roots: [.predicate(entity: "Department", format: "name == 'Sales'")], follow: ["Department.employees"]))
        _ = try Paster().paste(sales, into: target)
        var newcomer = ann
        newcomer.objects[0].attributes = ann.objects[0].attributes.map {
            $0.name == "employeeID"
                ? .init("employeeID", .integer(42)) : $0.name == "name" ? .init("name", .string("Nan")) : $0
        }
        let report = try Paster(options: PasteOptions(dangling: .drop)).paste(newcomer, into: target)
        #expect(report.linked == 2)  // Sales and Sandra
        #expect(report.dangling.count == 2)  // the projects have no identity
        let reader = ObjectContext(store: target)
        let department = try #require(try reader.fetch(FetchRequest(entityName: "Department")).first)
        let names = try department.relatedObjects(forKey: "employees").allObjects().compactMap {
            $0.value(forKey: "name") as? String
        }
        #expect(names.sorted() == ["Ann", "Bob", "Cid", "Nan", "Sandra"])
        let nan = try #require(
            try reader.fetch(
                FetchRequest(entityName: "Employee", predicate: try GraftPredicate(format: "employeeID == 42"))
            ).first)
        #expect((try nan.relatedObject(forKey: "manager"))?.value(forKey: "name") as? String == "Sandra")
        try reader.checkInvariants()
    }

    @Test func pastingBackIntoTheSourceStoreLinksByURI() throws {
        let store = try Company.store()
        let project = try Copier(source: StoreSource(store)).copy(
            Selection(roots: [.predicate(entity: "Project", format: "title == 'Fair'")]))
        #expect(project.references.contains { $0.entity == "Department" })
        let report = try Paster().paste(project, into: store)
        #expect(report.inserted == ["Project": 1])
        #expect(report.linked == project.references.count)
        let context = ObjectContext(store: store)
        let fairs = try context.fetch(
            FetchRequest(entityName: "Project", predicate: try GraftPredicate(format: "title == 'Fair'")))
        #expect(fairs.count == 2)
        #expect(Set(fairs.map { ($0.value(forKey: "members") as? RelationshipSet)?.count ?? 0 }) == [2])
        try context.checkInvariants()
    }

    @Test func anotherModelVersionPastesWhenItCan() throws {
        // Version 1 has no Department.location; version 2 gives it a default.
        let old = try Copier(source: StoreSource(try Company.store(model: Company.v1))).copy(
            Selection(
                roots: [.predicate(entity: "Department", format: "name == 'Sales'")], follow: ["Department.employees"]))
        let newer = InMemoryStore(model: Company.v2)
        let report = try Paster().paste(old, into: newer)
        #expect(
            report.notes.contains {
                $0.contains(
                    "Department.location: not in the clipboard's model; new objects get its default value Headquarters")
            })
        let reader = ObjectContext(store: newer)
        let sales = try #require(try reader.fetch(FetchRequest(entityName: "Department")).first)
        #expect(sales.value(forKey: "location") as? String == "Headquarters")
        // And back: the target lacks `location`, which is reported.
        let current = try Copier(source: StoreSource(newer)).copy(Selection(roots: [.all]))
        let older = InMemoryStore(model: Company.v1)
        let back = try Paster().paste(current, into: older)
        #expect(back.notes.contains { $0.contains("Department.location: the target model has no such attribute") })
    }

    @Test(arguments: [false, true])
    func anAttributeWithoutAValueDoesNotTakeItsDefault(intoAStoreWithObjects: Bool) throws {
        let store = try Company.store()
        let context = ObjectContext(store: store)
        let research = try #require(
            try context.fetch(
                FetchRequest(entityName: "Department", predicate: try GraftPredicate(format: "name == 'Research'"))
            ).first)
        try research.setValue(nil, forKey: "location")  // the model's default is Headquarters
        try context.save()
        let clipboard = try Copier(source: StoreSource(store)).copy(
            Selection(
                roots: [.predicate(entity: "Department", format: "name == 'Research'")],
                follow: ["Department.employees"]))
        let target = InMemoryStore(model: Company.v2)
        if intoAStoreWithObjects {
            try Company.addElsewhere(to: target)
        }
        let report = try Paster().paste(clipboard, into: target)
        let (_, id) = try ObjectID.parse(uri: report.idMap[0].uri, model: Company.v2)
        let pasted = try #require(try target.snapshot(for: id.ref))
        #expect(pasted[attribute: "name", in: Company.v2.entity(named: "Department")!] == .string("Research"))
        #expect(pasted[attribute: "location", in: Company.v2.entity(named: "Department")!] == nil)
    }

    @Test func aFailedPasteIntoAContextLeavesItAsItWas() throws {
        let context = ObjectContext(store: InMemoryStore(model: Company.v2))
        let mine = try context.insert("Department")
        try mine.setValue("Mine", forKey: "name")
        let clipboard = try researchClipboard()
        var broken = clipboard
        // A salary below the minimum: validation fails after objects were created.
        broken.objects[1].attributes = broken.objects[1].attributes.map {
            $0.name == "salary" ? .init("salary", .decimal(-1)) : $0
        }
        #expect(throws: GraftError.self) { try Paster().paste(broken, into: context) }
        #expect(context.insertedObjects == [mine])
        let report = try Paster().paste(clipboard, into: context)
        #expect(report.inserted.values.reduce(0, +) == 5)
        #expect(context.insertedObjects.count == 6)
        context.undo()  // the paste is one step
        #expect(context.insertedObjects == [mine])
    }

    @Test(arguments: [false, true])
    func aDryRunChecksTheResult(intoAStoreWithObjects: Bool) throws {
        var clipboard = try researchClipboard()
        clipboard.objects[1].attributes = clipboard.objects[1].attributes.map {
            $0.name == "salary" ? .init("salary", .decimal(-1)) : $0
        }
        let target = InMemoryStore(model: Company.v2)
        if intoAStoreWithObjects {
            try Company.addElsewhere(to: target)
        }
        let before = target.allSnapshots
        let error = try #require(throws: GraftError.self) {
            try Paster(options: PasteOptions(dryRun: true)).paste(clipboard, into: target)
        }
        #expect(error.code == .validationFailed)
        #expect(error.underlying.contains { $0.context.contains(.key("salary")) })
        #expect(target.allSnapshots == before)
    }

    @Test func aDryRunReportsAndWritesNothing() throws {
        let clipboard = try researchClipboard()
        let target = InMemoryStore(model: Company.v2)
        let report = try Paster(options: PasteOptions(dryRun: true)).paste(clipboard, into: target)
        #expect(report.dryRun)
        #expect(report.inserted.values.reduce(0, +) == 5)
        #expect(target.count == 0)
    }
}

/// The library round trip: copy from a context (unsaved edits and new objects included), encode, decode,
/// paste into another context with a policy, read the id map, undo.
@Suite struct ContextCopyPasteTests {
    @Test(arguments: ClipboardEncoding.allCases)
    func contextToClipboardToContext(encoding: ClipboardEncoding) throws {
        let store = try Company.store()
        let source = ObjectContext(store: store)
        let research = try #require(
            try source.fetch(
                FetchRequest(entityName: "Department", predicate: try GraftPredicate(format: "name == 'Research'"))
            ).first)
        try research.setValue(Int64(42), forKey: "code")  // unsaved edit
        let newcomer = try source.insert("Employee")  // unsaved new object
        try newcomer.setValue("Nia", forKey: "name")
        try newcomer.setValue(Int64(77), forKey: "employeeID")
        try newcomer.setValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "hireDate")
        try newcomer.setValue(research, forKey: "department")

        var selection = Selection(roots: [.refs([ContextSource.ref(of: research)])])
        selection.follow = ["Department.employees"]
        let clipboard = try Copier(source: ContextSource(source)).copy(selection)
        #expect(clipboard.counts["Employee"] == 2)  // Dev and the newcomer
        #expect(clipboard.objects[0][attribute: "code"] == .integer(42))
        let decoded = try ClipboardEncoding.decode(try encoding.encode(clipboard))
        #expect(decoded == clipboard)

        let target = ObjectContext(store: InMemoryStore(model: Company.v2))
        let report = try Paster(options: PasteOptions(onConflict: .merge)).paste(decoded, into: target)
        #expect(report.inserted.values.reduce(0, +) == clipboard.objects.count)
        #expect(report.idMap.count == clipboard.objects.count)
        let pasted = try #require(target.insertedObjects.first { $0.value(forKey: "employeeID") as? Int64 == 77 })
        #expect(report.idMap.contains { $0.uri == pasted.uri })
        #expect((try pasted.relatedObject(forKey: "department"))?.value(forKey: "code") as? Int64 == 42)
        try target.checkInvariants()
        target.undo()
        #expect(target.insertedObjects.isEmpty)
        #expect(source.hasChanges)  // the source context is untouched by the copy
    }
}
