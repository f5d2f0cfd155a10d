import Foundation
import GraftCore
import GraftGraph
import Testing

@Suite struct KeyValuePathTests {
    let graph = Company()

    func value(_ path: String, of object: Any?) throws -> Any? {
        try KeyValuePath(parsing: path).evaluate(on: object)
    }

    @Test func parsesComponents() throws {
        let path = try KeyValuePath(parsing: "department.employees.@avg.salary")
        #expect(path.components == [.key("department"), .key("employees"), .collectionOperator(.avg), .key("salary")])
        #expect(path.description == "department.employees.@avg.salary")
        #expect(try KeyValuePath(parsing: "SELF.name").components == [.identity, .key("name")])
        #expect(try KeyValuePath(parsing: "tags.@COUNT").components == [.key("tags"), .collectionOperator(.count)])
        #expect(KeyValuePath(key: "a.b").components == [.key("a.b")])
        let literal: KeyValuePath = "employees.@count"
        #expect(try literal == KeyValuePath(parsing: "employees.@count"))
    }

    @Test(arguments: [
        ("a..b", 2, "empty key"),
        (".a", 0, "empty key"),
        ("a.", 2, "empty key"),
        ("", 0, "empty key"),
        ("employees.@median.salary", 10, "unknown collection operator '@median'"),
        ("employees.@distinctUnion.name", 10, "unknown collection operator '@distinctUnion' (expected @count"),
    ])
    func rejectsMalformedPaths(text: String, offset: Int, message: String) {
        let error = #expect(throws: GraftError.self) { try KeyValuePath(parsing: text) }
        #expect(error?.code == .syntaxError)
        #expect(error?.context == [.offset(offset)])
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
    }

    @Test func followsToOnes() throws {
        #expect(try value("name", of: graph.bob) as? String == "Bob")
        #expect(try value("manager.name", of: graph.bob) as? String == "Ann")
        #expect(try value("manager.department.name", of: graph.bob) as? String == "Sales")
        #expect(try value("department.manager.department.manager.name", of: graph.eve) as? String == "Dée")
        #expect(try GraftGraph.value(forKeyPath: "department.name", of: graph.cy) as? String == "Sales")
    }

    @Test func nilShortCircuits() throws {
        #expect(try value("manager", of: graph.ann) == nil)
        #expect(try value("manager.name", of: graph.ann) == nil)
        #expect(try value("manager.manager.department.name", of: graph.bob) == nil)
        #expect(try value("manager.reports.@count", of: graph.ann) == nil)
        #expect(try value("name", of: nil) == nil)
    }

    @Test func selfIsTheValueItself() throws {
        #expect(try value("SELF", of: graph.ann) as? Record === graph.ann)
        #expect(try value("SELF.name", of: graph.ann) as? String == "Ann")
        #expect(try value("manager.SELF.name", of: graph.bob) as? String == "Ann")
        #expect(try value("SELF", of: "text") as? String == "text")
    }

    @Test func keysAfterToManyMapOverElements() throws {
        let names = try #require(try value("employees.name", of: graph.sales) as? [Any?])
        #expect(names.compactMap { $0 as? String } == ["Ann", "Bob", "Cy"])
        // Nil values stay in place.
        let nicknames = try #require(try value("employees.nickname", of: graph.sales) as? [Any?])
        #expect(nicknames.count == 3)
        #expect(nicknames[1] as? String == "Bobby")
        #expect(nicknames[0] == nil)
        // A to-one after a to-many, then a key of it.
        let managers = try #require(try value("employees.manager.name", of: graph.sales) as? [Any?])
        #expect(managers.map { $0 as? String } == [nil, "Ann", "Ann"])
    }

    @Test func nestedToManysFlatten() throws {
        let names = try #require(try value("departments.employees.name", of: graph.company) as? [Any?])
        #expect(names.compactMap { $0 as? String } == ["Ann", "Bob", "Cy", "Dée", "eve"])
        let reports = try #require(try value("departments.employees.reports.name", of: graph.company) as? [Any?])
        #expect(reports.compactMap { $0 as? String } == ["Bob", "Cy", "eve"])
    }

    @Test func countOperator() throws {
        #expect(try value("employees.@count", of: graph.sales) as? Int64 == 3)
        #expect(try value("employees.@count", of: graph.empty) as? Int64 == 0)
        #expect(try value("departments.@count", of: graph.company) as? Int64 == 3)
        // Left to right: the flattened employees of every department.
        #expect(try value("departments.employees.@count", of: graph.company) as? Int64 == 5)
        // An operator's right-hand path is read per element: here, each department's own count.
        #expect(try value("departments.@max.employees.@count", of: graph.company) as? Int64 == 3)
        #expect(try value("departments.@sum.employees.@count", of: graph.company) as? Int64 == 5)
        // @count of plain values, and of a path through a to-one.
        #expect(try value("@count", of: [1, 2, 3]) as? Int64 == 3)
        #expect(try value("tags.@count", of: Record(["tags": ["a", "b"]])) as? Int64 == 2)
        #expect(try value("department.employees.@count", of: graph.eve) as? Int64 == 2)
    }

    @Test func sumKeepsIntegersAsInt64() throws {
        let records = [
            Record(["n": Int64(2)]), Record(["n": Int64(3)]), Record(["n": nil as Int64? as Any]), Record(["n": true]),
        ]
        let total = try value("@sum.n", of: records.map { $0 as any KeyValueCoding })
        #expect(total as? Int64 == 6)
        #expect(try value("@sum.n", of: [any KeyValueCoding]()) as? Int64 == 0)
    }

    @Test func sumOverflowingInt64BecomesDecimal() throws {
        let total = try value("@sum", of: [Int64.max, Int64(1), Int64(1)])
        #expect(total as? Decimal == Decimal(string: "9223372036854775809"))
    }

    @Test func sumWithDecimalIsExactDecimal() throws {
        let total = try value("employees.@sum.salary", of: graph.engineering)
        #expect(total as? Decimal == Decimal(string: "170000.25"))
        // Doubles join a Decimal sum at their shortest decimal text.
        #expect(try value("@sum", of: [0.1, Decimal(string: "0.2")!] as [Any]) as? Decimal == Decimal(string: "0.3"))
    }

    @Test func sumWithDoubleIsDouble() throws {
        #expect(try value("employees.@sum.salary", of: graph.sales) as? Double == 157000.5)
    }

    @Test func average() throws {
        #expect(try value("@avg", of: [Int64(1), Int64(2)]) as? Double == 1.5)
        #expect(try value("employees.@avg.salary", of: graph.engineering) as? Decimal == Decimal(string: "85000.125"))
        #expect(try value("employees.@avg.age", of: graph.sales) as? Double == 35)
        #expect(try value("employees.@avg.salary", of: graph.empty) == nil)
        #expect(try value("employees.@avg.nickname", of: graph.engineering) == nil)
    }

    @Test func minimumAndMaximum() throws {
        #expect(try value("employees.@max.salary", of: graph.sales) as? Int64 == 60000)
        #expect(try value("employees.@min.salary", of: graph.sales) as? Int64 == 45000)
        #expect(
            try value("departments.employees.@max.salary", of: graph.company) as? Decimal == Decimal(string: "90000.25")
        )
        #expect(try value("employees.@min.name", of: graph.sales) as? String == "Ann")
        #expect(try value("employees.@max.name", of: graph.sales) as? String == "Cy")
        #expect(try value("employees.@min.hireDate", of: graph.sales) as? Date == Company.date(100))
        #expect(try value("employees.@max.hireDate", of: graph.sales) as? Date == Company.date(300))
        #expect(try value("employees.@max.salary", of: graph.empty) == nil)
        #expect(try value("employees.@max.nickname", of: graph.sales) as? String == "Bobby")
    }

    @Test func dictionariesHaveKeys() throws {
        let dictionary: [String: Any] = ["source": graph.bob, "limit": Int64(3)]
        #expect(try value("source.manager.name", of: dictionary) as? String == "Ann")
        #expect(try value("limit", of: dictionary) as? Int64 == 3)
        #expect(try value("missing", of: dictionary) == nil)
    }

    @Test func evaluationErrorsNameTheKeyPath() {
        var error = #expect(throws: GraftError.self) { try value("name.first", of: graph.ann) }
        #expect(error?.code == .evaluationFailed)
        #expect(error?.context == [.key("name.first")])
        #expect(error?.message.contains("cannot read the key 'first' of a String") == true)

        error = #expect(throws: GraftError.self) { try value("name.@count", of: graph.ann) }
        #expect(error?.message.contains("@count needs a collection") == true)

        error = #expect(throws: GraftError.self) { try value("employees.@sum.name", of: graph.sales) }
        #expect(error?.context == [.key("employees.@sum.name")])
        #expect(error?.message.contains("@sum needs numbers, but found a String") == true)

        error = #expect(throws: GraftError.self) { try value("@max", of: ["a", Int64(1)] as [Any]) }
        #expect(error?.message.contains("@max cannot order") == true)
    }

    @Test func arraysOfObjectsAreToManys() throws {
        let employees: [any KeyValueCoding] = [graph.ann, graph.bob]
        #expect(try value("@count", of: employees) as? Int64 == 2)
        #expect(try value("@sum.salary", of: employees) as? Int64 == 105000)
        let holder = Record(["staff": employees])
        #expect(try value("staff.@avg.salary", of: holder) as? Double == 52500)
    }
}
