import Foundation
import GraftCore
import GraftGraph
@_spi(GraftInternal) import GraftModel
import GraftTestSupport
import GraftXML
import Testing

/// The Company example model with objects of every attribute type, edge values included, written and
/// read back exactly.
@Suite struct CompanyRoundTripTests {
    static let model = Support.company
    static var department: EntityDescription { model.entity(named: "Department")! }
    static var employee: EntityDescription { model.entity(named: "Employee")! }
    static var manager: EntityDescription { model.entity(named: "Manager")! }
    static var flunky: EntityDescription { model.entity(named: "Flunky")! }
    static var project: EntityDescription { model.entity(named: "Project")! }

    static func ref(_ entity: EntityDescription, _ key: Int64) -> ObjectRef {
        ObjectRef(entity: entity.index, key: key)
    }

    /// Strings that test escaping and encoding.
    static let strings: [String] = [
        "", "plain", "héllo wörld", "astral 𝄞 and 😀 and 𠜎", "<&>\"' and ]]> and &amp;", "a\u{1}control",
        "bell \u{7} and escape \u{1B}", "nul \u{0} inside", "line1\nline2\r\nline3\rline4\ttab",
        "  leading and trailing spaces  ", "\u{FFFE} non-character", "right-to-left \u{202E} override",
        String(repeating: "long text ", count: 2_000),
    ]

    /// Doubles at the edges.
    static let doubles: [Double] = [
        .nan, .infinity, -.infinity, -0.0, 0, 0.1, 1e-300, -1e300, .greatestFiniteMagnitude,
        .leastNonzeroMagnitude, 1.0 / 3.0, 123_456_789.123_456_79,
    ]

    /// Dates as seconds since 2001.
    static let dates: [Double] = [
        0, 325_145_972.144_198_000_431_060_791_02, -1_000_000_000.5, -0.25, 63_113_835_600, 1.5e-7, -978_307_200,
        1e15, 0.1, 700_000_000.123_456_7,
    ]

    static let decimals: [Decimal] = [
        Decimal(string: "12345678901234567890.123456789012345678")!,
        Decimal(string: "-0.000000000000000000000000000001")!,
        Decimal(string: "0")!, Decimal(string: "52000.50")!,
        Decimal(string: "-99999999999999999999999999999999999999")!,
        Decimal(string: "3.4028236692093846346337460743176821145e40")!,
    ]

    static let binaries: [Data] = [
        Data(), Data([0]), Data([0xFF, 0xFE, 0x00, 0x41]), Data((0..<57).map { UInt8($0) }),
        Data((0..<58).map { UInt8($0) }),
        {
            var generator = SeededGenerator(seed: 7)
            return Data((0..<1_200_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }(),
    ]

    /// The document: three departments, a project per department (ordered), managers and flunkies
    /// referenced through `Employee` relationships, a many-to-many between employees and projects.
    static func snapshots() -> [Snapshot] {
        var all: [Snapshot] = []
        let e = employee
        let employeeCount = max(strings.count, doubles.count, dates.count, decimals.count, binaries.count) + 3
        // Employee keys 1…n; key 1 is a Manager, key 2 a Flunky, the rest plain Employees.
        func entity(ofEmployee key: Int64) -> EntityDescription {
            key == 1 ? manager : key == 2 ? flunky : e
        }
        for key in Int64(1)...Int64(employeeCount) {
            let entity = entity(ofEmployee: key)
            var snapshot = Snapshot(entity: entity, key: key)
            let position = Int(key) - 1
            func set(_ name: String, _ value: Value?) { snapshot[attribute: name, in: entity] = value }
            set("name", .string(strings[position % strings.count]))
            set("email", position < strings.count ? .string(strings[(position + 3) % strings.count]) : nil)
            set("employeeID", .integer([Int64.min, Int64.max, 0, -1, 1][position % 5]))
            set("yearsOfService", .integer([Int64(Int32.min), Int64(Int32.max), 0][position % 3]))
            set("workload", .double(doubles[position % doubles.count]))
            set("rating", .double(Double(Float([0.1, -0.0, 3.4e38, 1e-45, .nan, -.infinity][position % 6] as Float))))
            set("hireDate", .date(Date(timeIntervalSinceReferenceDate: dates[position % dates.count])))
            set("salary", .decimal(decimals[position % decimals.count]))
            set("isRemote", .bool(position % 2 == 0))
            set("photo", position < binaries.count ? .data(binaries[position]) : nil)
            set("preferences", .data(Data("transformable \(position)".utf8)))
            set("badge", .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!))
            set(
                "homepage",
                .uri(
                    URL(
                        string: ["https://example.com/a?b=c&d=e#f", "file:///tmp/x%20y", "mailto:ann@example.com"][
                            position % 3])!))
            if entity === manager {
                set("parkingSpot", .integer(Int64(Int16.min)))
                snapshot[relationship: "directReports", in: entity] = .toMany([
                    ref(e, 5), ref(flunky, 2), ref(e, 4), ref(e, 3),
                ])
            }
            if entity === flunky { set("coffeeOrder", .string("flat white <no sugar>")) }
            snapshot[relationship: "department", in: entity] = .toOne(ref(department, key % 3 + 1))
            snapshot[relationship: "manager", in: entity] = key == 1 ? .toOne(nil) : .toOne(ref(manager, 1))
            snapshot[relationship: "projects", in: entity] = .toMany(
                key % 2 == 0 ? [ref(project, 2), ref(project, 1)] : [ref(project, 1)])
            all.append(snapshot)
        }
        // Departments share keys 1…3 with the Employee tree: the writer must keep their ids apart.
        for key in Int64(1)...3 {
            var snapshot = Snapshot(entity: department, key: key)
            snapshot[attribute: "name", in: department] = .string("Department \(key)")
            snapshot[attribute: "code", in: department] = .integer(
                [Int64(Int16.min), Int64(Int16.max), 7][Int(key) - 1])
            snapshot[attribute: "budget", in: department] = key == 3 ? nil : .decimal(decimals[Int(key)])
            snapshot[attribute: "location", in: department] = .string("")
            let members = (Int64(1)...Int64(employeeCount)).filter { $0 % 3 + 1 == key }.reversed().map {
                ref(entity(ofEmployee: $0), $0)
            }
            snapshot[relationship: "employees", in: department] = .toMany(members)
            snapshot[relationship: "projects", in: department] = .toMany(
                key == 1 ? [ref(project, 2), ref(project, 1)] : [])
            all.append(snapshot)
        }
        for key in Int64(1)...2 {
            var snapshot = Snapshot(entity: project, key: key)
            snapshot[attribute: "title", in: project] = .string("Project \(key)")
            snapshot[attribute: "deadline", in: project] = .date(
                Date(timeIntervalSinceReferenceDate: -0.5 * Double(key)))
            snapshot[relationship: "department", in: project] = .toOne(ref(department, 1))
            let members = (Int64(1)...Int64(employeeCount)).filter { key == 1 || $0 % 2 == 0 }.map {
                ref(entity(ofEmployee: $0), $0)
            }
            snapshot[relationship: "members", in: project] = .toMany(members)
            all.append(snapshot)
        }
        return all
    }

    static func metadata() -> StoreMetadata {
        var metadata = StoreMetadata.make(for: model, storeType: .xml)
        metadata.values["MyAppSchemaRevision"] = .integer(7)
        metadata.values["MyAppNotes"] = .string("<kept> & \"quoted\"\nsecond line")
        metadata.values["MyAppFlags"] = .array([.bool(true), .bool(false), .real(.nan), .real(-.infinity), .real(2.5)])
        metadata.values["MyAppBlob"] = .data(Data((0..<200).map { UInt8($0) }))
        metadata.values["MyAppWhen"] = .date(Date(timeIntervalSinceReferenceDate: 86_400))
        metadata.values["MyAppNested"] = .dictionary(["empty": .dictionary([:]), "none": .array([])])
        return metadata
    }

    @Test func everyValueRoundTripsExactly() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("Company.xml")
        let snapshots = Self.snapshots()
        let metadata = Self.metadata()
        try Support.write(snapshots, model: Self.model, metadata: metadata, to: url)
        let reader = try XMLStoreReader(url: url, model: Self.model)
        #expect(reader.modelSource == .given)
        #expect(reader.warnings.isEmpty, "\(reader.warnings)")
        #expect(reader.objectCount == snapshots.count)
        let read = try Support.snapshots(reader)
        #expect(read.count == snapshots.count)
        for (written, back) in zip(snapshots, read) {
            #expect(written.ref == back.ref)
            let entity = Self.model.descriptions[written.ref.entity]
            for (index, attribute) in entity.attributes.enumerated()
            where written.attributes[index] != back.attributes[index] {
                let wrote = String(describing: written.attributes[index])
                let read = String(describing: back.attributes[index])
                Issue.record("\(entity.name) \(written.ref.key) \(attribute.name): wrote \(wrote), read \(read)")
            }
            for (index, relationship) in entity.relationships.enumerated()
            where written.relationships[index] != back.relationships[index] {
                Issue.record("\(entity.name) \(written.ref.key) \(relationship.name) differs")
            }
        }
        #expect(read == snapshots)
        #expect(reader.metadata == metadata)
        #expect(reader.metadata.identifier == metadata.identifier)
    }

    @Test func aSecondRoundTripGivesTheSameBytes() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let first = folder.appendingPathComponent("first.xml")
        try Support.write(Self.snapshots(), model: Self.model, metadata: Self.metadata(), to: first)
        let reader = try XMLStoreReader(url: first, model: Self.model)
        let second = folder.appendingPathComponent("second.xml")
        try Support.convert(reader, to: second)
        #expect(try Data(contentsOf: first) == Data(contentsOf: second))
    }

    @Test func subentitiesKeepTheirExactEntity() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("Company.xml")
        try Support.write(Self.snapshots(), model: Self.model, metadata: Self.metadata(), to: url)
        let read = try Support.snapshots(XMLStoreReader(url: url, model: Self.model))
        let department = read.first { $0.ref == Self.ref(Self.department, 2) }!
        let employees = department[relationship: "employees", in: Self.department]!.refs
        #expect(employees.contains(Self.ref(Self.manager, 1)))
        #expect(!employees.contains(Self.ref(Self.employee, 1)))
        let boss = read.first { $0.ref == Self.ref(Self.manager, 1) }!
        #expect(
            boss[relationship: "directReports", in: Self.manager]
                == .toMany([
                    Self.ref(Self.employee, 5), Self.ref(Self.flunky, 2), Self.ref(Self.employee, 4),
                    Self.ref(Self.employee, 3),
                ]))
    }

    @Test(.enabled(if: Support.xmllint != nil, "xmllint is not installed"))
    func outputIsWellFormedForXmllint() throws {
        let xmllint = try #require(Support.xmllint)
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("Company.xml")
        try Support.write(Self.snapshots(), model: Self.model, metadata: Self.metadata(), to: url)
        let result = try Support.run(xmllint, ["--noout", "--nonet", url.path])
        #expect(result.status == 0, "xmllint: \(result.errors)")
    }

    @Test func theEmbeddedPlistIsAValidPropertyList() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("Company.xml")
        let metadata = Self.metadata()
        try Support.write(Self.snapshots(), model: Self.model, metadata: metadata, to: url)
        let text = try String(contentsOf: url, encoding: .utf8)
        let start = text.range(of: "<plist version=\"1.0\">")!.lowerBound
        let end = text.range(of: "</plist>")!.upperBound
        let document = XMLPropertyList.header + text[start..<end]
        let decoded = try XMLPropertyList.decode(Data(document.utf8))
        var expected = metadata.values
        expected["NSStoreUUID"] = nil
        expected["NSStoreType"] = nil
        #expect(decoded == .dictionary(expected))
        if let xmllint = Support.xmllint {
            let plist = folder.appendingPathComponent("metadata.plist")
            try Data(document.utf8).write(to: plist)
            let result = try Support.run(xmllint, ["--noout", "--nonet", plist.path])
            #expect(result.status == 0, "xmllint: \(result.errors)")
        }
    }

    @Test func readsWithoutAModelByInferringOne() throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("Company.xml")
        var metadata = Self.metadata()
        metadata.values[StoreMetadata.graftModelKey] = nil  // as in a document Core Data wrote
        try Support.write(Self.snapshots(), model: Self.model, metadata: metadata, to: url)
        let reader = try XMLStoreReader(url: url, model: nil)
        #expect(reader.modelSource == .inferred)
        let inferred = reader.model
        #expect(inferred.entity(named: "Manager")?.superentityIndex == inferred.entity(named: "Employee")?.index)
        #expect(inferred.entity(named: "Flunky")?.superentityIndex == inferred.entity(named: "Employee")?.index)
        #expect(inferred.entity(named: "Employee")?.attribute(named: "employeeid")?.type == .integer64)
        #expect(inferred.entity(named: "Employee")?.attribute(named: "badge")?.type == .uuid)
        #expect(inferred.entity(named: "Employee")?.attribute(named: "homepage")?.type == .uri)
        #expect(inferred.entity(named: "Employee")?.attribute(named: "salary")?.type == .decimal)
        #expect(inferred.entity(named: "Employee")?.attribute(named: "preferences")?.type == .transformable)
        let departmentEmployees = inferred.entity(named: "Department")?.relationship(named: "employees")
        #expect(
            departmentEmployees?.isToMany == true && departmentEmployees?.minCount == 3
                && departmentEmployees?.maxCount == 40)
        #expect(departmentEmployees?.inverse == "department")
        // Entity names take their case from the metadata's version hashes; property names cannot.
        #expect(reader.warnings.contains { $0.contains("original case of property names is unknown") })
        var counts: [String: Int] = [:]
        try reader.forEachSnapshot { counts[inferred.descriptions[$0.ref.entity].name.uppercased(), default: 0] += 1 }
        #expect(counts == (try Support.objectCountsByRegex(url)))
        try Support.expectRoundTrip(url, model: nil)
    }

    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)))
    func theModelCacheInTheMetadataIsUsed() throws {
        let mom = Corpus.url(
            "models/FreeCoreData/Examples/EmployeeDirectory/EmployeeDirectory.momd/EmployeeDirectory.mom")
        let archive = try Data(contentsOf: mom)
        let model = try CompiledModelReader.read(archive)
        var metadata = StoreMetadata.make(for: model, storeType: .xml)
        metadata.values[XMLStore.modelCacheKey] = .data(try RawDeflate.deflate(archive))
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = folder.appendingPathComponent("cached.xml")
        let snapshots = model.descriptions.filter { !$0.isAbstract }.prefix(2).enumerated().map { position, entity in
            Snapshot(entity: entity, key: Int64(position + 1))
        }
        try Support.write(snapshots, model: model, metadata: metadata, to: url)
        let reader = try XMLStoreReader(url: url, model: nil)
        #expect(reader.modelSource == .modelCache)
        #expect(reader.model.versionHashes == model.versionHashes)
        #expect(try Support.snapshots(reader) == snapshots)
    }
}

/// A small random number generator with a seed, so failures replay.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
