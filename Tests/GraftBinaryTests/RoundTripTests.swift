import Foundation
import GraftBinary
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

/// Documents written by `BinaryStoreWriter` read back equal through `BinaryStoreReader`.
@Suite struct RoundTripTests {
    /// Writes `snapshots`, reads them back and expects the same document.
    @discardableResult
    func expectRoundTrip(
        _ snapshots: [Snapshot], metadata: StoreMetadata = Company.metadata(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (read: [Snapshot], reader: BinaryStoreReader) {
        let scratch = Scratch()
        let url = scratch.url("Company.binary")
        try writeStore(snapshots, to: url, metadata: metadata)
        let reader = try BinaryStoreReader(url: url, model: Company.model)
        var read: [Snapshot] = []
        try reader.forEachSnapshot { read.append($0) }
        read.sort { $0.ref < $1.ref }
        let expected = snapshots.sorted { $0.ref < $1.ref }
        #expect(read.count == expected.count, sourceLocation: sourceLocation)
        for (ours, theirs) in zip(read, expected) {
            #expect(ours == theirs, sourceLocation: sourceLocation)
            // `==` treats 0.0 and -0.0, and equal decimals of different digits, alike: compare exactly too.
            for (a, b) in zip(ours.attributes, theirs.attributes) {
                switch (a, b) {
                case (.double(let x)?, .double(let y)?):
                    #expect(x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN), sourceLocation: sourceLocation)
                case (.decimal(let x)?, .decimal(let y)?):
                    #expect(x.description == y.description, sourceLocation: sourceLocation)
                case (.date(let x)?, .date(let y)?):
                    let (s, t) = (x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
                    #expect(s.bitPattern == t.bitPattern || (s.isNaN && t.isNaN), sourceLocation: sourceLocation)
                default:
                    break
                }
            }
        }
        #expect(reader.objectCount == snapshots.count, sourceLocation: sourceLocation)
        return (read, reader)
    }

    @Test func edgeDocumentRoundTrips() throws {
        let (_, reader) = try expectRoundTrip(Company.edgeDocument)
        #expect(reader.header.formatVersion == 1)
        #expect(reader.header.databaseVersion == 134_481_920)
        #expect(reader.header.mapOffset == 64)
        #expect(reader.header.primaryKeyCounter == 22)
        #expect(reader.metadata.storeType == "Binary")
        #expect(reader.metadata.identifier == "6F1C1D2E-0000-4000-8000-00000000CAFE")
        #expect(reader.metadata.entitiesDiffering(from: Company.model).isEmpty)
    }

    @Test func emptyDocumentRoundTrips() throws {
        let (_, reader) = try expectRoundTrip([])
        #expect(reader.header.primaryKeyCounter == 0)
    }

    @Test func subentitiesKeepTheirExactEntity() throws {
        let (read, _) = try expectRoundTrip(Company.edgeDocument)
        let research = try #require(read.first { $0.ref == Company.ref("Department", 1) })
        let employees = research[relationship: "employees", in: Company.entity("Department")]?.refs ?? []
        #expect(employees.map { Company.model.descriptions[$0.entity].name } == ["Manager", "Flunky", "Employee"])
        let ann = try #require(read.first { $0.ref == Company.ref("Employee", 12) })
        #expect(ann[relationship: "manager", in: Company.entity("Employee")] == .toOne(Company.ref("Manager", 10)))
    }

    @Test func orderedToManyKeepsItsOrder() throws {
        let (read, _) = try expectRoundTrip(Company.edgeDocument)
        let research = try #require(read.first { $0.ref == Company.ref("Department", 1) })
        let projects = research[relationship: "projects", in: Company.entity("Department")]?.refs.map(\.key)
        #expect(projects == [21, 20, 22])
    }

    static let doubles: [Double] = [
        0, -0.0, 1, -1, .pi, .nan, -.nan, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
        -.greatestFiniteMagnitude, Double(Float(0.1)), 1e-300,
    ]

    @Test(arguments: doubles)
    func doublesRoundTripBitForBit(value: Double) throws {
        // A Float attribute holds only what single precision can (strict reading refuses the rest).
        var values: [String: Value] = ["workload": .double(value)]
        if !value.isFinite || value.magnitude <= Double(Float.greatestFiniteMagnitude) {
            values["rating"] = .double(value)
        }
        try expectRoundTrip([Company.snapshot("Employee", 1, values)])
    }

    static let integers: [Int64] = [
        0, 1, -1, 255, 256, 65_535, 65_536, Int64(UInt32.max), Int64(UInt32.max) + 1, .max, .min,
    ]

    @Test(arguments: integers)
    func integersRoundTrip(value: Int64) throws {
        try expectRoundTrip([Company.snapshot("Employee", 1, ["employeeID": .integer(value)])])
    }

    static let decimals = [
        "0", "1", "-1", "0.1", "52000.50", "-123.4500", "3.402823669209384634633746074317682114550",
        "79228162514264337593543950335", "-79228162514264337593543950335", "1e-100", "12345e120", "NaN",
    ]

    @Test(arguments: decimals)
    func decimalsKeepTheirDigits(text: String) throws {
        let value: Decimal = text == "NaN" ? .nan : try #require(Decimal(string: text))
        try expectRoundTrip([Company.snapshot("Employee", 1, ["salary": .decimal(value)])])
    }

    static let dates: [Double] = [
        0, -0.5, 0.000_001, -978_307_200, 757_382_400.123_456_789, 1e15, -1e15, .nan, .infinity,
    ]

    @Test(arguments: dates)
    func datesRoundTrip(seconds: Double) throws {
        try expectRoundTrip([Company.snapshot("Employee", 1, ["hireDate": Company.date(seconds)])])
    }

    static let strings = [
        "", "a", "$null", "Hélène", "例え", "🧑‍💻 emoji", "\u{0}", String(repeating: "x", count: 70_000), "e\u{301}", "é",
    ]

    @Test(arguments: strings)
    func stringsRoundTrip(value: String) throws {
        let (read, _) = try expectRoundTrip([Company.snapshot("Employee", 1, ["name": .string(value)])])
        let name = read.first?[attribute: "name", in: Company.entity("Employee")]
        // Exactly the same scalars, not merely canonically equivalent ones.
        if case .string(let back)? = name { #expect(Array(back.unicodeScalars) == Array(value.unicodeScalars)) }
    }

    @Test func unknownMetadataKeysAreKept() throws {
        let extra: PropertyList.Dictionary = [
            "MyAppSchemaRevision": 7, "com.example.note": "kept", "com.example.flags": [true, false, 1.5],
            "com.example.nested": [
                "when": .date(Date(timeIntervalSinceReferenceDate: 12.25)), "blob": .data(Data([1, 2])),
            ],
        ]
        let (_, reader) = try expectRoundTrip(Company.edgeDocument, metadata: Company.metadata(extra: extra))
        for (key, value) in extra { #expect(reader.metadata.values[key] == value, "\(key)") }
        #expect(reader.metadata.values["NSStoreModelVersionHashesVersion"] == 3)
        #expect(reader.metadata.values["_NSAutoVacuumLevel"] == nil)
    }

    @Test func metadataIsRefreshedForTheBinaryStoreType() throws {
        var metadata = StoreMetadata.make(for: Company.model, storeType: .sqlite)
        metadata.values["Kept"] = "yes"
        let (_, reader) = try expectRoundTrip(Company.edgeDocument, metadata: metadata)
        #expect(reader.metadata.storeType == "Binary")
        #expect(reader.metadata.values["_NSAutoVacuumLevel"] == nil)
        #expect(reader.metadata.values["Kept"] == "yes")
        #expect(reader.metadata.identifier == metadata.identifier)
    }

    @Test func keysSharedAcrossInheritanceTreesGetTreeOffsetsAndComeBack() throws {
        // Department, Employee (with its subentities) and Project each count keys from 1, as a SQLite
        // store does; the binary store has one key sequence, so each tree after the first is moved up
        // by the highest keys of the trees before it, and the offsets are recorded in the metadata.
        let department = Company.ref("Department", 1), manager = Company.ref("Manager", 1)
        let employee = Company.ref("Employee", 2), project = Company.ref("Project", 1)
        let snapshots = [
            Company.snapshot(
                "Department", 1, ["name": "R"],
                ["employees": .toMany([manager, employee]), "projects": .toMany([project])]),
            Company.snapshot(
                "Manager", 1, ["name": "M"], ["department": .toOne(department), "directReports": .toMany([employee])]),
            Company.snapshot(
                "Employee", 2, ["name": "E"], ["department": .toOne(department), "manager": .toOne(manager)]),
            Company.snapshot("Project", 1, ["title": "P"], ["department": .toOne(department)]),
        ]
        let scratch = Scratch()
        let url = scratch.url("Company.binary")
        try writeStore(snapshots, to: url)
        // Reading gives every object its own key back.
        #expect(try readStore(url) == snapshots.sorted { $0.ref < $1.ref })
        let reader = try BinaryStoreReader(url: url, model: Company.model)
        // In the document: Department 1; Employee tree +1 (Manager 2, Employee 3); Project +3 (4).
        #expect(reader.header.primaryKeyCounter == 4)
        let offsets = reader.metadata.values[DocumentKeys.metadataKey]?.dictionaryValue
        #expect(offsets?["Employee"]?.int64Value == 1)
        #expect(offsets?["Project"]?.int64Value == 3)
        #expect(reader.keyOffsets.count == 3)
    }

    @Test func distinctKeysAreWrittenAsTheyAre() throws {
        let department = Company.ref("Department", 1), project = Company.ref("Project", 2)
        let snapshots = [
            Company.snapshot("Department", 1, ["name": "R"], ["projects": .toMany([project])]),
            Company.snapshot("Project", 2, ["title": "P"], ["department": .toOne(department)]),
        ]
        let scratch = Scratch()
        let url = scratch.url("Company.binary")
        try writeStore(snapshots, to: url)
        let reader = try BinaryStoreReader(url: url, model: Company.model)
        #expect(reader.header.primaryKeyCounter == 2)
        #expect(reader.metadata.values[DocumentKeys.metadataKey] == nil)
        #expect(try readStore(url) == snapshots)
    }

    @Test func openedStoreSavesBackToTheFile() throws {
        let scratch = Scratch()
        let url = scratch.url("Company.binary")
        try writeStore(Company.edgeDocument, to: url)
        let store = try BinaryStore.open(url: url, model: Company.model)
        #expect(store.count == Company.edgeDocument.count)
        let context = ObjectContext(store: store)
        let bob = try context.existingObject(with: ObjectID(entity: Company.entity("Employee").index, key: 13))
        try bob.setValue("Robert", forKey: "name")
        try context.save()
        let reopened = try readStore(url)
        let saved = try #require(reopened.first { $0.ref == Company.ref("Employee", 13) })
        #expect(saved[attribute: "name", in: Company.entity("Employee")] == "Robert")
        #expect(reopened.count == Company.edgeDocument.count)
        #expect(scratch.contents == ["Company.binary"])
    }

    /// A binary document has one key sequence: objects added to one tree must not take keys another tree
    /// holds in the document (they did, once a tree had been moved up by the recorded key offsets).
    @Test func newObjectsContinueTheDocumentsOneKeySequence() throws {
        let scratch = Scratch()
        let url = scratch.url("Company.binary")
        // Two trees with the same keys: written with offsets, Project moved up past the departments.
        let department = Company.ref("Department", 1), project = Company.ref("Project", 1)
        try writeStore(
            [
                Company.snapshot(
                    "Department", 1, ["name": "R", "code": .integer(1)], ["projects": .toMany([project])]),
                Company.snapshot("Project", 1, ["title": "P"], ["department": .toOne(department)]),
            ], to: url)
        #expect(try BinaryStoreReader(url: url, model: Company.model).metadata.values[DocumentKeys.metadataKey] != nil)
        for round in 1...3 {
            let context = ObjectContext(store: try BinaryStore.open(url: url, model: Company.model))
            let unit = try context.insert("Department")
            try unit.setValue("D\(round)", forKey: "name")
            try unit.setValue(Int64(10 + round), forKey: "code")
            let work = try context.insert("Project")
            try work.setValue("P\(round)", forKey: "title")
            try context.save()
        }
        let snapshots = try readStore(url)
        #expect(snapshots.count == 8)
        #expect(Set(snapshots.map(\.ref)).count == 8)
    }

    @Test func isBinaryStoreLooksAtTheMagic() throws {
        let scratch = Scratch()
        let url = scratch.url("Company.binary")
        try writeStore(Company.edgeDocument, to: url)
        #expect(BinaryStore.isBinaryStore(try Data(contentsOf: url).prefix(16)))
        #expect(BinaryStore.isBinaryStore(Data("CoreData".utf8)))
        #expect(!BinaryStore.isBinaryStore(Data("CoreDat".utf8)))
        #expect(!BinaryStore.isBinaryStore(Data("SQLite format 3\u{0}".utf8)))
        #expect(!BinaryStore.isBinaryStore(Data("bplist00".utf8)))
    }
}
