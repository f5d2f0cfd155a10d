import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// The examples of Apple's Predicate Programming Guide (Introduction, Creating Predicates, Predicate
/// Format String Syntax, Using Predicates, Comparison of NSPredicate and Spotlight) and of
/// `NSExpression`'s documentation that Graft's domain can express, each fetched from an in-memory
/// store and from a SQLite store holding the same objects: the answers must be equal, and where the
/// translator claims the predicate, SQLite must have answered it alone.
///
/// The guide's examples use its own example keys (`firstName`, `lastName`, `age`, `birthday`, `grade`,
/// `children`, `group`, `residents`, …); the model here has those keys, so the examples are written as
/// the guide writes them. Where the guide quotes a number (`grade == "7"`, its `grade` being a string)
/// or uses a form outside an object graph (`SELF beginswith[c] 'a'` over an array of strings), the
/// comment says how the example was carried over.
@Suite struct PredicateGuideTests {
    static let model: Model = {
        let person = Entity(
            name: "Person",
            attributes: [
                Attribute(name: "firstName", type: .string, isIndexed: true),
                Attribute(name: "lastName", type: .string),
                Attribute(name: "nickname", type: .string),
                Attribute(name: "age", type: .integer16),
                Attribute(name: "grade", type: .integer16),
                Attribute(name: "birthday", type: .date),
                Attribute(name: "isActive", type: .boolean),
                Attribute(name: "salary", type: .double),
            ],
            relationships: [
                Relationship(name: "group", destination: "Group", inverse: "members"),
                Relationship(name: "parent", destination: "Person", inverse: "children"),
                Relationship(name: "children", destination: "Person", inverse: "parent", isToMany: true),
                Relationship(name: "pets", destination: "Pet", inverse: "owner", isToMany: true, isOrdered: true),
                Relationship(name: "apartment", destination: "Apartment", inverse: "residents"),
                Relationship(name: "clubs", destination: "Club", inverse: "members", isToMany: true),
            ])
        let group = Entity(
            name: "Group", attributes: [Attribute(name: "name", type: .string)],
            relationships: [Relationship(name: "members", destination: "Person", inverse: "group", isToMany: true)])
        let pet = Entity(
            name: "Pet", attributes: [Attribute(name: "name", type: .string)],
            relationships: [Relationship(name: "owner", destination: "Person", inverse: "pets")])
        let apartment = Entity(
            name: "Apartment", attributes: [Attribute(name: "number", type: .integer16)],
            relationships: [
                Relationship(name: "residents", destination: "Person", inverse: "apartment", isToMany: true)
            ])
        let club = Entity(
            name: "Club", attributes: [Attribute(name: "title", type: .string)],
            relationships: [Relationship(name: "members", destination: "Person", inverse: "clubs", isToMany: true)])
        return try! Model(entities: [person, group, pet, apartment, club])
    }()

    static func date(_ year: Int) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(year - 2001) * 365.25 * 86_400)
    }

    /// People (first, last, age, grade, birth year, active, salary, nickname), their groups, children,
    /// pets, apartments and clubs.
    static func populate(_ context: ObjectContext) throws {
        let groups = try ["work", "home", "workshop"].map { name -> ManagedObject in
            let group = try context.insert("Group")
            try group.setValue(name, forKey: "name")
            return group
        }
        let people: [(String, String, Int64, Int64, Int?, Bool, Double, String?)] = [
            ("Adam", "Turner", 40, 7, 1985, true, 52_000, nil),
            ("Ben", "Worsley", 45, 8, 1980, true, 120_000, "Benny"),
            ("Melissa", "Adderley", 38, 7, 1987, false, 75_000, nil),
            ("Matthew", "Adderley", 12, 6, 2013, true, 0, "Matt"),
            ("Mark", "Adderley", 15, 9, 2010, true, 0, nil),
            ("Nick", "Citroën", 70, 1, 1955, false, 30_000, nil),
            ("Jane", "Doe", 33, 7, 1992, true, 64_000, nil),
            ("John", "Doe", 35, 8, nil, false, 58_000, "Johnny"),
            ("Jane", "Smith", 29, 7, 1996, true, 41_000, nil),
            ("éva", "Ångström", 19, 2, 2006, true, 9_000, nil),
            ("Éric", "adams", 66, 3, 1959, false, 99_000, nil),
            ("zoë", "Worsley", 8, 1, 2017, true, 0, "Zo"),
        ]
        var persons: [ManagedObject] = []
        for (index, entry) in people.enumerated() {
            let person = try context.insert("Person")
            try person.setValue(entry.0, forKey: "firstName")
            try person.setValue(entry.1, forKey: "lastName")
            try person.setValue(entry.2, forKey: "age")
            try person.setValue(entry.3, forKey: "grade")
            try person.setValue(entry.4.map(date), forKey: "birthday")
            try person.setValue(entry.5, forKey: "isActive")
            try person.setValue(entry.6, forKey: "salary")
            try person.setValue(entry.7, forKey: "nickname")
            try person.setValue(groups[index % 3], forKey: "group")
            persons.append(person)
        }
        // Melissa's children are Matthew and Mark; Ben's is zoë.
        try persons[3].setValue(persons[2], forKey: "parent")
        try persons[4].setValue(persons[2], forKey: "parent")
        try persons[11].setValue(persons[1], forKey: "parent")
        for (owner, names) in [(0, ["Rex", "Tom"]), (2, ["Tom"]), (6, ["Rex", "Fido", "Tom"])] {
            var pets: [ManagedObject] = []
            for name in names {
                let pet = try context.insert("Pet")
                try pet.setValue(name, forKey: "name")
                pets.append(pet)
            }
            try persons[owner].setValue(pets, forKey: "pets")
        }
        for (number, residents) in [(1, [6, 1]), (2, [7, 8]), (3, [0]), (4, [] as [Int])] {
            let apartment = try context.insert("Apartment")
            try apartment.setValue(Int64(number), forKey: "number")
            try apartment.setValue(residents.map { persons[$0] }, forKey: "residents")
        }
        for (title, members) in [("Chess", [0, 1, 5]), ("Choir", [2, 6, 9]), ("Empty", [] as [Int])] {
            let club = try context.insert("Club")
            try club.setValue(title, forKey: "title")
            try club.setValue(members.map { persons[$0] }, forKey: "members")
        }
    }

    /// One example: the entity fetched, the format and its arguments, variables, and whether SQLite
    /// answers it alone.
    struct Example: Sendable, CustomTestStringConvertible {
        var entity = "Person"
        var format: String
        var arguments: [any Sendable] = []
        var variables: [String: any Sendable] = [:]
        var inSQL: Bool

        var testDescription: String { "\(entity): \(format)" }
    }

    static let examples: [Example] = [
        // Introduction.
        Example(format: "grade == 7", inSQL: true),
        Example(format: "firstName like 'Mark'", inSQL: true),
        Example(format: "lastName contains[cd] 'citroen'", inSQL: true),
        Example(format: "(firstName beginswith 'M') AND (lastName like 'Adderley')", inSQL: true),
        Example(format: "group.name matches 'work.*'", inSQL: true),
        Example(format: "ALL children.age > 12", inSQL: true),
        Example(format: "ANY children.age > 12", inSQL: true),
        // The guide's "@sum.items.price < 1000", over the object's own to-many.
        Example(format: "children.@sum.age < 20", inSQL: false),
        // Creating Predicates.
        Example(format: "(lastName like[cd] %@) AND (birthday > %@)", arguments: ["Turner", date(1980)], inSQL: true),
        // The guide's grade is a string ("7"); here it is a number.
        Example(format: "grade == 7 OR grade == 8", inSQL: true),
        Example(format: "%K like %@", arguments: ["firstName", "Adam"], inSQL: true),
        // Quoted, %@ is not a format specifier but the text "%@".
        Example(format: "%K like '%@'", arguments: ["firstName"], inSQL: true),
        Example(format: "lastName like[c] $LAST_NAME", variables: ["LAST_NAME": "adderley"], inSQL: true),
        Example(
            format: "(lastName like[cd] $LAST_NAME) AND (birthday > $BIRTHDAY)",
            variables: ["LAST_NAME": "ADDERLEY", "BIRTHDAY": date(2000)], inSQL: true),
        Example(format: "birthday = $DATE", variables: ["DATE": String?.none], inSQL: true),
        Example(format: "isActive == YES", inSQL: true),
        Example(format: "isActive == %@", arguments: [false], inSQL: true),
        // Predicate Format String Syntax.
        Example(format: "firstName IN {'Ben', 'Melissa', 'Nick'}", inSQL: true),
        Example(format: "age BETWEEN {18, 65}", inSQL: true),
        Example(format: "firstName BEGINSWITH[cd] 'e'", inSQL: true),
        Example(format: "lastName ENDSWITH[c] 'LEY'", inSQL: true),
        Example(format: "firstName CONTAINS 'at'", inSQL: true),
        Example(format: "firstName LIKE[c] 'm*'", inSQL: true),
        Example(format: "firstName LIKE '?a*'", inSQL: true),
        Example(format: "lastName MATCHES '[A-Z][a-z]+'", inSQL: true),
        Example(format: "lastName MATCHES[cd] 'a.*'", inSQL: true),
        Example(format: "ANY children.age < 18", inSQL: true),
        Example(format: "SOME children.firstName == 'Matthew'", inSQL: true),
        Example(format: "ALL children.age < 18", inSQL: true),
        Example(format: "NONE children.age < 13", inSQL: true),
        Example(format: "NOT (ANY children.age < 13)", inSQL: true),
        Example(format: "ANY children.firstName BEGINSWITH[c] 'MA'", inSQL: true),
        Example(format: "pets[FIRST].name == 'Rex'", inSQL: false),
        Example(format: "pets[LAST].name == 'Tom'", inSQL: false),
        Example(format: "pets[SIZE] >= 2", inSQL: false),
        Example(format: "pets[SIZE] > 1 AND pets[1].name == 'Fido'", inSQL: false),
        Example(format: "nickname == nil", inSQL: true),
        Example(format: "nickname != NULL AND isActive == TRUE", inSQL: true),
        Example(format: "age > 0x20 AND age < 0o100", inSQL: true),
        Example(format: "#firstName == 'Ben'", inSQL: true),
        Example(format: "firstName == \"Jane\" && lastName == 'Doe'", inSQL: true),
        Example(format: "!(age < 30) || firstName =[c] 'JANE'", inSQL: true),
        Example(format: "age * 2 > 100", inSQL: false),
        // Using Predicates ("SELF IN %@" and "SELF beginswith[c] 'a'" over arrays, here over a key).
        Example(format: "firstName IN %@", arguments: [["Ben", "Melissa"]], inSQL: true),
        Example(format: "firstName beginswith[c] 'a'", inSQL: true),
        Example(format: "(lastName LIKE[c] 'Worsley') AND (salary > %@)", arguments: [50_000.0], inSQL: true),
        Example(format: "group.name like %@", arguments: ["work*"], inSQL: true),
        Example(entity: "Group", format: "ANY members.firstName like 'Matthew'", inSQL: true),
        Example(entity: "Group", format: "ANY members.salary > %f", arguments: [100_000.0], inSQL: true),
        Example(format: "(birthday == nil) OR (birthday > %@)", arguments: [date(2000)], inSQL: true),
        Example(format: "(grade == 1) OR (firstName MATCHES '.*ar[1-10]')", inSQL: true),
        Example(format: "lastName MATCHES '.*ley'", inSQL: true),
        // NSExpression: SUBQUERY, and the "flawed" CONTAINS version it explains.
        Example(
            entity: "Apartment",
            format: "SUBQUERY(residents, $x, $x.firstName == 'Jane' && $x.lastName == 'Doe').@count != 0", inSQL: true),
        Example(
            entity: "Apartment", format: "residents.firstName CONTAINS 'Jane' && residents.lastName CONTAINS 'Doe'",
            inSQL: false),
        Example(entity: "Apartment", format: "SUBQUERY(residents, $r, $r.age > 30)[SIZE] >= 1", inSQL: true),
        Example(
            entity: "Apartment", format: "SUBQUERY(residents, $r, $r.age > 30 AND $r.age < 40).@count == 2", inSQL: true
        ),
        // NSExpression's functions.
        Example(format: "uppercase:(firstName) == 'ADAM'", inSQL: false),
        Example(format: "lowercase:(lastName) BEGINSWITH 'ad'", inSQL: false),
        Example(format: "count:(children) == 2", inSQL: false),
        Example(format: "add:to:(age, 1) == 41", inSQL: false),
        Example(format: "now() > birthday", inSQL: false),
        Example(format: "CAST(birthday, 'NSNumber') > 0", inSQL: false),
        Example(format: "FUNCTION(firstName, 'length') == 4", inSQL: false),
        Example(format: "children.@avg.age > 10", inSQL: false),
        Example(entity: "Group", format: "members.@distinctUnionOfObjects.lastName CONTAINS 'Doe'", inSQL: false),
        // Many-to-many and counts.
        Example(format: "ANY clubs.title == 'Chess'", inSQL: true),
        Example(entity: "Club", format: "ALL members.age > 20", inSQL: true),
        Example(entity: "Club", format: "members.@count >= 2", inSQL: true),
        Example(entity: "Club", format: "SUBQUERY(members, $m, $m.isActive == YES).@count == 2", inSQL: true),
        Example(format: "children.@count == 2", inSQL: true),
    ]

    /// A SQLite store with the people, and an in-memory store with the same objects.
    final class Stores {
        let folder: URL
        let sqlite: SQLiteStore
        let memory: InMemoryStore

        init() throws {
            folder = try scratchFolder()
            let url = folder.appendingPathComponent("Guide.sqlite")
            let writer = ObjectContext(store: try SQLiteStore.create(url, model: PredicateGuideTests.model))
            writer.isUndoEnabled = false
            try PredicateGuideTests.populate(writer)
            try writer.save()
            sqlite = try SQLiteStore.open(url, model: PredicateGuideTests.model)
            memory = try InMemoryStore(
                model: PredicateGuideTests.model,
                snapshots: Array(allSnapshots(SQLiteStoreReader(url: url, model: PredicateGuideTests.model)).values))
        }

        deinit { try? FileManager.default.removeItem(at: folder) }
    }

    @Test(arguments: examples)
    func sameAnswerInMemoryAndInSQLite(example: Example) throws {
        let stores = try Stores()
        var request = FetchRequest(
            entityName: example.entity,
            predicate: try GraftPredicate.parse(example.format, arguments: example.arguments.map { $0 as Any? }))
        request.variables = example.variables
        let inMemory = try ObjectContext(store: stores.memory).fetch(request).map(\.objectID)
        let inSQLite = try ObjectContext(store: stores.sqlite).fetch(request).map(\.objectID)
        #expect(Set(inSQLite) == Set(inMemory))
        #expect(inSQLite.count == inMemory.count)

        // Whether SQLite answered alone.
        let entity = try #require(Self.model.entity(named: example.entity))
        let predicate = try request.predicate?.substituting(request.variables)
        let answer = try stores.sqlite.fetch(
            StoreFetch(entities: [entity.index] + entity.descendantIndices, predicate: predicate))
        #expect(answer.predicateApplied == example.inSQL)
        if answer.predicateApplied {
            #expect(Set(answer.refs.map { ObjectID(entity: $0.entity, key: $0.key) }) == Set(inMemory))
        }
    }

    @Test func theExamplesSelectSomethingAndNotEverything() throws {
        let stores = try Stores()
        let context = ObjectContext(store: stores.memory)
        var informative = 0
        for example in Self.examples {
            var request = FetchRequest(
                entityName: example.entity,
                predicate: try GraftPredicate.parse(example.format, arguments: example.arguments.map { $0 as Any? }))
            request.variables = example.variables
            let all = try context.fetch(FetchRequest(entityName: example.entity)).count
            let some = try context.fetch(request).count
            if some > 0 && some < all { informative += 1 }
        }
        // A few examples select nothing on purpose (the quoted '%@'); nearly all must discriminate.
        #expect(informative >= Self.examples.count - 4)
    }

    /// String sorts run in SQL with Graft's collations, in the order memory sorts them, and a limit is
    /// applied there too.
    @Test(arguments: [
        [GraftSortDescriptor(keyPath: "lastName")],
        [GraftSortDescriptor(keyPath: "lastName", options: .caseInsensitive)],
        [
            GraftSortDescriptor(
                keyPath: "lastName", ascending: false, options: [.caseInsensitive, .diacriticInsensitive])
        ],
        [
            GraftSortDescriptor(keyPath: "firstName", options: .diacriticInsensitive),
            GraftSortDescriptor(keyPath: "age"),
        ],
        [GraftSortDescriptor(keyPath: "nickname", ascending: false), GraftSortDescriptor(keyPath: "firstName")],
        [GraftSortDescriptor(keyPath: "isActive"), GraftSortDescriptor(keyPath: "lastName", ascending: false)],
    ])
    func stringSortsRunInSQL(sort: [GraftSortDescriptor]) throws {
        let stores = try Stores()
        var request = FetchRequest(entityName: "Person", sortDescriptors: sort)
        let inMemory = try ObjectContext(store: stores.memory).fetch(request).map(\.objectID)
        let inSQLite = try ObjectContext(store: stores.sqlite).fetch(request).map(\.objectID)
        #expect(inSQLite == inMemory)
        let person = try #require(Self.model.entity(named: "Person"))
        let answer = try stores.sqlite.fetch(StoreFetch(entities: [person.index], sortDescriptors: sort, limit: 3))
        #expect(answer.sortedAndLimited)
        #expect(answer.snapshots.count == 3)
        #expect(answer.refs.map { ObjectID(entity: $0.entity, key: $0.key) } == Array(inMemory.prefix(3)))
        request.fetchLimit = 3
        request.fetchOffset = 2
        #expect(try ObjectContext(store: stores.sqlite).fetch(request).map(\.objectID) == Array(inMemory[2..<5]))
    }

    @Test func anInvalidPatternIsLeftToMemoryWhichReportsIt() throws {
        let stores = try Stores()
        var request = FetchRequest(entityName: "Person", predicate: try GraftPredicate(format: "lastName MATCHES $P"))
        request.variables = ["P": "(["]
        let error = #expect(throws: GraftError.self) { try ObjectContext(store: stores.sqlite).fetch(request) }
        #expect(error?.message.contains("MATCHES needs an ICU regular expression, but \"([\" is not one") == true)
        #expect(error?.message.contains("NSCocoaErrorDomain") == false)
    }

    @Test func mismatchedTypesFailInSQLiteToo() throws {
        let stores = try Stores()
        let request = FetchRequest(entityName: "Person", predicate: try GraftPredicate(format: "firstName > 5"))
        let error = #expect(throws: GraftError.self) { try ObjectContext(store: stores.sqlite).fetch(request) }
        #expect(error?.message.hasPrefix("> needs two values of one kind, but firstName is a String") == true)
        #expect(error?.context == [.entity("Person"), .key("firstName")])
        // Found from the model, so also when there is no object to evaluate it on.
        let empty = ObjectContext(store: InMemoryStore(model: Self.model))
        for format in ["firstName > 5", "ANY children.age BEGINSWITH 'x'", "group.name < CAST(0, 'NSDate')"] {
            let request = FetchRequest(entityName: "Person", predicate: try GraftPredicate(format: format))
            let error = #expect(throws: GraftError.self, "\(format)") { try empty.fetch(request) }
            #expect(error?.code == .evaluationFailed)
            #expect(error?.message.contains("in \(format.prefix(6))") == true, "\(String(describing: error))")
        }
        // Equality of different kinds is simply false.
        let equal = FetchRequest(entityName: "Person", predicate: try GraftPredicate(format: "firstName == 5"))
        #expect(try ObjectContext(store: stores.sqlite).fetch(equal).isEmpty)
    }
}
