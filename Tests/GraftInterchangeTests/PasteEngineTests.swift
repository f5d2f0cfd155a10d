import Foundation
import GraftCore
import GraftGraph
import GraftInterchange
import GraftModel
import GraftTestSupport
import Testing

/// The one paste engine on stores that already hold objects, in every format: links that move existing
/// objects, ordered to-manys of existing objects, and identities looked up in batches.
@Suite struct PasteEngineTests {
    /// The Company source store pasted whole into a new store of `format`, reopened for editing.
    static func companyStore(_ format: StoreFormat, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("company.\(format.driver.fileExtensions[0])")
        let everything = try Copier(source: try Company.source()).copy(Selection(roots: [.all]))
        _ = try Paster().paste(everything, intoNewStoreAt: url, format: format)
        return url
    }

    /// One object of `entity` whose `key` attribute is `value`, read from the store at `url` afresh.
    static func object(
        _ entity: String, _ key: String, _ value: String, at url: URL
    ) throws -> (ObjectContext, ManagedObject) {
        let context = ObjectContext(store: try StoreFormat.openForReading(url, model: Company.v2))
        let found = try context.fetch(
            FetchRequest(entityName: entity, predicate: try GraftPredicate(format: "\(key) == '\(value)'")))
        return (context, try #require(found.first))
    }

    static func names(_ objects: [ManagedObject], _ key: String = "name") -> [String] {
        objects.compactMap { $0.value(forKey: key) as? String }
    }

    @Test(arguments: StoreFormat.allCases)
    func aMergedToOneMovesAndTheObjectItLeftLetsGo(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.companyStore(format, in: folder)
        // Ann alone, with her department reference naming Research instead of Sales.
        var ann = try Copier(source: try Company.source()).copy(
            Selection(roots: [.predicate(entity: "Employee", format: "name == 'Ann'")]))
        let department = try #require(ann.references.firstIndex { $0.entity == "Department" })
        ann.references[department].identity = [.init("name", .string("Research"))]

        let report = try Paster(options: PasteOptions(onConflict: .merge, dangling: .drop))
            .paste(ann, intoStoreAt: url)
        #expect(report.merged == ["Employee": 1])
        #expect(report.inserted.isEmpty)

        let (context, research) = try Self.object("Department", "name", "Research", at: url)
        #expect(
            Self.names(try research.relatedObjects(forKey: "employees").allObjects()).sorted() == [
                "Ann", "Dev", "Lee", "Rita",
            ])
        let sales = try #require(
            try context.fetch(
                FetchRequest(entityName: "Department", predicate: try GraftPredicate(format: "name == 'Sales'"))
            )
            .first)
        #expect(
            Self.names(try sales.relatedObjects(forKey: "employees").allObjects()).sorted() == ["Bob", "Cid", "Sandra"])
        let moved = try #require(
            try context.fetch(
                FetchRequest(entityName: "Employee", predicate: try GraftPredicate(format: "name == 'Ann'"))
            )
            .first)
        #expect(try moved.relatedObject(forKey: "department") === research)
        // Her projects were references without identity, dropped: she keeps the ones she had.
        #expect(try moved.relatedObjects(forKey: "projects").count == 2)
    }

    @Test(arguments: StoreFormat.allCases)
    func aNewObjectJoinsTheEndOfAnExistingOrderedToMany(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.companyStore(format, in: folder)
        // The Fair project alone, retitled, its department reference naming Research.
        var fair = try Copier(source: try Company.source()).copy(
            Selection(roots: [.predicate(entity: "Project", format: "title == 'Fair'")]))
        fair.objects[0].attributes = fair.objects[0].attributes.map {
            $0.name == "title" ? .init("title", .string("Outreach")) : $0
        }
        let department = try #require(fair.references.firstIndex { $0.entity == "Department" })
        fair.references[department].identity = [.init("name", .string("Research"))]

        let report = try Paster(options: PasteOptions(dangling: .drop)).paste(fair, intoStoreAt: url)
        #expect(report.inserted == ["Project": 1])
        #expect(report.linked == 3)  // Research, and the two members by employeeID

        let (context, research) = try Self.object("Department", "name", "Research", at: url)
        defer { withExtendedLifetime(context) {} }
        let projects = try research.relatedObjects(forKey: "projects").allObjects()
        #expect(Self.names(projects, "title") == ["Engine", "Outreach"])
    }

    @Test(arguments: StoreFormat.allCases)
    func linksToASkippedObjectReachIt(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.companyStore(format, in: folder)
        // The Engine project with its members copied along; the members exist, and are skipped.
        var engine = try Copier(source: try Company.source()).copy(
            Selection(roots: [.predicate(entity: "Project", format: "title == 'Engine'")], follow: ["Project.members"]))
        engine.objects[0].attributes = engine.objects[0].attributes.map {
            $0.name == "title" ? .init("title", .string("Turbine")) : $0
        }
        let report = try Paster(options: PasteOptions(onConflict: .skip, dangling: .drop)).paste(
            engine, intoStoreAt: url)
        #expect(report.inserted == ["Project": 1])
        #expect(report.skipped.values.reduce(0, +) == 3)

        let (context, lee) = try Self.object("Employee", "name", "Lee", at: url)
        defer { withExtendedLifetime(context) {} }
        #expect(
            Self.names(try lee.relatedObjects(forKey: "projects").allObjects(), "title").sorted() == [
                "Engine", "Turbine",
            ])
    }

    /// Links are followed by the ids' positions in the clipboard, whatever the ids look like: a department
    /// with its people under ids of other forms (a word, a leading zero, a number far beyond the document's
    /// size, a reference-like `r…` on an object) merges and links exactly as under the usual `o…` ids.
    @Test(arguments: StoreFormat.allCases)
    func idsOfAnyFormLinkAsNumberedOnesDo(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.companyStore(format, in: folder)
        var sales = try Copier(source: try Company.source()).copy(
            Selection(
                roots: [.predicate(entity: "Department", format: "name == 'Sales'")], follow: ["Department.employees"]))
        for index in sales.objects.indices where sales.objects[index].entity != "Department" {
            sales.objects[index].attributes = sales.objects[index].attributes.map {
                guard $0.name == "name", case .string(let name) = $0.value else { return $0 }
                return .init("name", .string(name + " (2)"))
            }
        }
        // Ids other than o1, o2, …: each object's id replaced, and every link to it.
        let forms = ["sales", "o007", "o99999999", "r1", "x-2", "o3"]
        var renamed: [String: String] = [:]
        for (index, object) in sales.objects.enumerated() {
            renamed[object.id] = index < forms.count ? forms[index] : "e\(index)"
        }
        var odd = sales
        for index in odd.objects.indices {
            odd.objects[index].id = renamed[odd.objects[index].id]!
            for link in odd.objects[index].relationships.indices {
                odd.objects[index].relationships[link].targets = odd.objects[index].relationships[link].targets.map {
                    renamed[$0] ?? $0
                }
            }
        }
        odd.roots = odd.roots.map { renamed[$0] ?? $0 }
        try odd.check()

        let options = PasteOptions(onConflict: .merge, dangling: .drop)
        let oddURL = folder.appendingPathComponent("odd.\(format.driver.fileExtensions[0])")
        try FileManager.default.copyItem(at: url, to: oddURL)
        let usual = try Paster(options: options).paste(sales, intoStoreAt: url)
        let other = try Paster(options: options).paste(odd, intoStoreAt: oddURL)
        #expect(other.merged == usual.merged && other.inserted == usual.inserted && other.linked == usual.linked)
        #expect(other.idMap.map(\.uri) == usual.idMap.map(\.uri))
        #expect(other.idMap.map(\.id) == odd.objects.map(\.id))
        let people = sales.objects.filter { $0.entity != "Department" }.compactMap {
            if case .string(let name)? = $0[attribute: "name"] { return name } else { return nil }
        }
        #expect(people.count >= 3)
        for pasted in [url, oddURL] {
            let (context, department) = try Self.object("Department", "name", "Sales", at: pasted)
            defer { withExtendedLifetime(context) {} }
            #expect(
                Self.names(try department.relatedObjects(forKey: "employees").allObjects()).sorted() == people.sorted())
        }

        // Into a context, the same.
        let context = ObjectContext(store: try StoreFormat.openForReading(url, model: Company.v2))
        let report = try Paster(options: options).paste(odd, into: context)
        #expect(report.merged == usual.merged)
        let found = try context.fetch(
            FetchRequest(entityName: "Department", predicate: try GraftPredicate(format: "name == 'Sales'")))
        let department = try #require(found.first)
        #expect(try department.relatedObjects(forKey: "employees").count == people.count)
    }

    /// A subentity's identity under its root's uniqueness constraint is looked up over the whole tree:
    /// a Manager copy merges into the Manager with its employeeID, and one that takes a plain Employee's
    /// employeeID is not merged into that Employee (it is no Manager), but refused by the constraint (here
    /// beside Ann, whom the copy's directReports change).
    @Test(arguments: StoreFormat.allCases)
    func aSubentitysIdentityFindsOnlyObjectsOfItsKind(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.companyStore(format, in: folder)
        var sandra = try Copier(source: try Company.source()).copy(
            Selection(roots: [.predicate(entity: "Manager", format: "name == 'Sandra'")]))
        sandra.objects[0].attributes = sandra.objects[0].attributes.map {
            $0.name == "name" ? .init("name", .string("Sandra B.")) : $0
        }
        let options = PasteOptions(onConflict: .merge, dangling: .drop)

        var asAnn = sandra
        asAnn.objects[0].attributes = asAnn.objects[0].attributes.map {
            $0.name == "employeeID" ? .init("employeeID", .integer(2)) : $0
        }
        let refused = try #require(throws: GraftError.self) {
            try Paster(options: options).paste(asAnn, intoStoreAt: url)
        }
        #expect(refused.code == .validationFailed)
        #expect(refused.underlying.contains { $0.message.contains("employeeID = 2: the uniqueness constraint") })
        let (before, ann) = try Self.object("Employee", "name", "Ann", at: url)
        defer { withExtendedLifetime(before) {} }
        #expect(ann.entity.name == "Employee" && ann.value(forKey: "employeeID") as? Int64 == 2)

        let report = try Paster(options: options).paste(sandra, intoStoreAt: url)
        #expect(report.merged == ["Manager": 1])
        #expect(report.inserted.isEmpty)
        let (context, merged) = try Self.object("Manager", "name", "Sandra B.", at: url)
        defer { withExtendedLifetime(context) {} }
        #expect(merged.value(forKey: "employeeID") as? Int64 == 1)
        #expect(try context.count(for: FetchRequest(entityName: "Employee")) == 7)
    }

    /// More departments than one lookup asks for, and enough lookups that a SQLite store shares them with
    /// a second connection on another thread: every one is found and merged, and a second copy of each is
    /// refused by the uniqueness constraint, naming the existing object.
    @Test(arguments: StoreFormat.allCases)
    func identitiesAreLookedUpInBatches(format: StoreFormat) throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("many.\(format.driver.fileExtensions[0])")
        let entity = try #require(Company.v2.entity(named: "Department"))
        let count = 2_345
        let snapshots = (1...count).map { key -> Snapshot in
            var snapshot = Snapshot(entity: entity, key: Int64(key))
            snapshot[attribute: "name", in: entity] = .string("D\(key)")
            snapshot[attribute: "code", in: entity] = .integer(Int64(key))
            return snapshot
        }
        try format.driver.write(
            snapshots, to: url, model: Company.v2,
            metadata: StoreMetadata.make(for: Company.v2, storeType: format.storeType),
            overwrite: false)
        var copied = try Copier.copy(storeAt: url, selection: Selection(roots: [.all]), model: Company.v2).clipboard
        for index in copied.objects.indices {
            copied.objects[index].attributes = copied.objects[index].attributes.map {
                $0.name == "code" ? .init("code", .integer(500)) : $0
            }
        }

        let refused = try #require(throws: GraftError.self) { try Paster().paste(copied, intoStoreAt: url) }
        #expect(refused.code == .alreadyExists)
        #expect(refused.underlying.count == count)

        let duplicate = try #require(throws: GraftError.self) {
            try Paster(options: PasteOptions(onConflict: .duplicate)).paste(copied, intoStoreAt: url)
        }
        #expect(duplicate.code == .validationFailed)
        #expect(duplicate.underlying.count == count)
        #expect(duplicate.underlying.allSatisfy { $0.message.contains("an existing Department") })

        let report = try Paster(options: PasteOptions(onConflict: .merge)).paste(copied, intoStoreAt: url)
        #expect(report.merged == ["Department": count])
        let store = try StoreFormat.openForReading(url, model: Company.v2)
        let all = try store.fetch(StoreFetch(entities: [entity.index]))
        #expect(all.refs.count == count)
        let codes = try store.snapshots(for: all.refs).map { $0[attribute: "code", in: entity] }
        #expect(codes.count == count)
        #expect(codes.allSatisfy { $0 == .integer(500) })
    }

    /// A clipboard that names each identity twice, the second copies after a batch's worth of others: each
    /// pair merges into the one existing object (the later copy's values last), the id map says so for both,
    /// and refused, each copy is named.
    @Test func anIdentityTwiceInTheClipboardMergesIntoOneObject() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("twice.sqlite")
        let entity = try #require(Company.v2.entity(named: "Department"))
        let count = 600  // more than one lookup asks for
        let snapshots = (1...count).map { key -> Snapshot in
            var snapshot = Snapshot(entity: entity, key: Int64(key))
            snapshot[attribute: "name", in: entity] = .string("D\(key)")
            snapshot[attribute: "code", in: entity] = .integer(Int64(key % 900 + 1))
            return snapshot
        }
        try StoreFormat.sqlite.driver.write(
            snapshots, to: url, model: Company.v2, metadata: StoreMetadata.make(for: Company.v2, storeType: .sqlite),
            overwrite: false)
        var copied = try Copier.copy(storeAt: url, selection: Selection(roots: [.all]), model: Company.v2).clipboard
        var again = copied.objects
        for index in again.indices {
            again[index].id = "again\(index)"
            again[index].attributes = again[index].attributes.map {
                $0.name == "code" ? .init("code", .integer(901)) : $0
            }
        }
        copied.objects += again

        let refused = try #require(throws: GraftError.self) { try Paster().paste(copied, intoStoreAt: url) }
        #expect(refused.underlying.count == 2 * count)

        let report = try Paster(options: PasteOptions(onConflict: .merge)).paste(copied, intoStoreAt: url)
        #expect(report.merged == ["Department": 2 * count])
        let uris = report.idMap.map(\.uri)
        #expect(Array(uris[..<count]) == Array(uris[count...]))
        #expect(Set(uris).count == count)
        let store = try StoreFormat.openForReading(url, model: Company.v2)
        let all = try store.fetch(StoreFetch(entities: [entity.index]))
        #expect(all.refs.count == count)
        for ref in all.refs.prefix(20) + all.refs.suffix(20) {
            #expect(try store.snapshot(for: ref)?[attribute: "code", in: entity] == .integer(901))
        }
    }
}
