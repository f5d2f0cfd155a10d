import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// Strict reading of a SQLite store's values: a value that is not of its attribute's type, or outside its
/// range, is an error naming the object, the attribute and the value (`ValueReading.strict`), or no value
/// with one warning per attribute (`.lenient`); what real stores hold besides Core Data's own storage
/// classes is still read. Each case is a small store written by `SQLiteStoreWriter` and changed with SQL.
@Suite final class SQLiteStrictValueTests {
    /// One entity with an attribute of every type whose column can hold something else.
    static let model: Model = try! Model(entities: [
        Entity(
            name: "Reading",
            attributes: [
                Attribute(name: "small", type: .integer16), Attribute(name: "medium", type: .integer32),
                Attribute(name: "big", type: .integer64), Attribute(name: "flag", type: .boolean),
                Attribute(name: "ratio", type: .double), Attribute(name: "single", type: .float),
                Attribute(name: "amount", type: .decimal), Attribute(name: "label", type: .string),
                Attribute(name: "link", type: .uri), Attribute(name: "stamp", type: .date),
                Attribute(name: "tag", type: .uuid), Attribute(name: "blob", type: .binary),
                Attribute(name: "photo", type: .binary, allowsExternalBinaryDataStorage: true),
            ])
    ])

    let folder: URL
    let url: URL

    /// A store with two readings, p1 and p2, every attribute of p1 set, p2's left empty.
    init() throws {
        folder = try scratchFolder()
        url = folder.appendingPathComponent("Readings.sqlite")
        let entity = Self.model.descriptions[0]
        var first = Snapshot(entity: entity, key: 1)
        let values: [String: Value] = [
            "small": .integer(7), "medium": .integer(70_000), "big": .integer(1 << 40), "flag": .bool(true),
            "ratio": .double(0.25), "single": .double(1.5), "amount": .decimal(Decimal(string: "12.5")!),
            "label": .string("hello"), "link": .uri(URL(string: "https://example.com/a")!),
            "stamp": .date(Date(timeIntervalSinceReferenceDate: 700_000_000.5)), "tag": .uuid(UUID()),
            "blob": .data(Data([1, 2, 3])), "photo": .data(Data([4, 5])),
        ]
        for (name, value) in values { first[attribute: name, in: entity] = value }
        let writer = try SQLiteStoreWriter(
            url: url, model: Self.model, metadata: StoreMetadata.make(for: Self.model, storeType: .sqlite),
            overwrite: false)
        try writer.write(first)
        try writer.write(Snapshot(entity: entity, key: 2))
        try writer.finish()
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    func alter(_ statements: String...) throws {
        let database = try SQLiteDatabase.openForWriting(url)
        for statement in statements { try database.execute(statement) }
        database.close()
    }

    /// Makes an attribute's column a BLOB column, which keeps whatever is put in it as it is (a typed
    /// column converts: an INTEGER column turns 12.0 into 12, a FLOAT column 3 into 3.0), as columns of
    /// stores written by other models or migrated are.
    func retype(_ attribute: String) throws {
        let column = "Z" + attribute.uppercased()
        try alter(
            "ALTER TABLE ZREADING RENAME COLUMN \(column) TO OLD", "ALTER TABLE ZREADING ADD COLUMN \(column) BLOB",
            "UPDATE ZREADING SET \(column) = OLD", "ALTER TABLE ZREADING DROP COLUMN OLD")
    }

    /// Sets p1's attribute to what `sql` gives, in a column retyped first when asked.
    func store(_ sql: String, in attribute: String, retyped: Bool) throws {
        if retyped { try retype(attribute) }
        try alter("UPDATE ZREADING SET Z\(attribute.uppercased()) = \(sql) WHERE Z_PK = 1")
    }

    func read(_ policy: ValueReading = .strict) throws -> (reader: SQLiteStoreReader, readings: [Snapshot]) {
        let reader = try SQLiteStoreReader(url: url, model: Self.model, valueReading: policy)
        var readings: [Snapshot] = []
        try reader.forEachSnapshot { readings.append($0) }
        return (reader, readings.sorted { $0.ref.key < $1.ref.key })
    }

    /// A value strict reading refuses: the column, the SQL for what it holds, and what the error says of it.
    struct Refused: CustomTestStringConvertible, Sendable {
        var attribute: String
        var sql: String
        var found: String
        var problem: String
        var retyped = false
        var testDescription: String { "\(attribute) = \(sql)" }
    }

    static let refused: [Refused] = [
        Refused(attribute: "small", sql: "'abc'", found: "the text 'abc'", problem: "is not an Integer 16 value"),
        Refused(
            attribute: "small", sql: "x'0102'", found: "a blob of 2 bytes (01 02)",
            problem: "is not an Integer 16 value"),
        Refused(attribute: "small", sql: "10.5", found: "10.5", problem: "is not a whole number"),
        Refused(
            attribute: "small", sql: "70000", found: "70000",
            problem: "is beyond the range of Integer 16 (-32768…32767)"),
        Refused(
            attribute: "medium", sql: "3000000000", found: "3000000000", problem: "is beyond the range of Integer 32"),
        Refused(attribute: "big", sql: "1e19", found: "1e+19", problem: "is beyond the range of Integer 64"),
        Refused(attribute: "flag", sql: "2", found: "2", problem: "is not a Boolean value (0 or 1)"),
        Refused(attribute: "flag", sql: "'yes'", found: "the text 'yes'", problem: "is not a Boolean value"),
        Refused(attribute: "ratio", sql: "'abc'", found: "the text 'abc'", problem: "is not a Double value"),
        Refused(
            attribute: "ratio", sql: "9007199254740993", found: "9007199254740993",
            problem: "cannot be held exactly by a Double value", retyped: true),
        Refused(
            attribute: "stamp", sql: "9007199254740993", found: "9007199254740993",
            problem: "cannot be held exactly by a Date value"),
        Refused(attribute: "small", sql: "12.5e0", found: "12.5", problem: "is not a whole number", retyped: true),
        Refused(attribute: "single", sql: "1e300", found: "1e+300", problem: "is beyond the range of Float"),
        // SQLite's NUMERIC affinity turns the text into an infinite real.
        Refused(attribute: "amount", sql: "'1e999999'", found: "inf", problem: "is beyond the range of Decimal"),
        Refused(attribute: "amount", sql: "1e300", found: "1e+300", problem: "is beyond the range of Decimal"),
        Refused(
            attribute: "amount", sql: "'12abc'", found: "the text '12abc'",
            problem: "is not a decimal number a Decimal holds exactly"),
        Refused(attribute: "amount", sql: "x'00'", found: "a blob of 1 byte (00)", problem: "is not a Decimal value"),
        Refused(
            attribute: "label", sql: "CAST(x'61ff62' AS TEXT)", found: "text that is not UTF-8 (61 ff 62)",
            problem: "is not UTF-8 text"),
        Refused(
            attribute: "label", sql: "x'6869'", found: "a blob of 2 bytes (68 69)", problem: "is not a String value"),
        Refused(attribute: "link", sql: "x'00'", found: "a blob of 1 byte (00)", problem: "is not a URI value"),
        Refused(attribute: "stamp", sql: "'yesterday'", found: "the text 'yesterday'", problem: "is not a Date value"),
        Refused(attribute: "stamp", sql: "x'0102'", found: "a blob of 2 bytes (01 02)", problem: "is not a Date value"),
        Refused(
            attribute: "tag", sql: "x'0102'", found: "a blob of 2 bytes (01 02)", problem: "is not a UUID (16 bytes)"),
        Refused(attribute: "tag", sql: "'not-a-uuid'", found: "the text 'not-a-uuid'", problem: "is not a UUID value"),
        Refused(attribute: "blob", sql: "12", found: "12", problem: "is not a Binary value"),
        Refused(attribute: "photo", sql: "1.5", found: "1.5", problem: "is not a Binary value"),
    ]

    @Test(arguments: refused)
    func strictReadingRefusesAValueNotOfItsAttributesTypeOrRange(_ case: Refused) throws {
        try store(`case`.sql, in: `case`.attribute, retyped: `case`.retyped)
        let error = try #require(throws: GraftError.self) { try read() }
        #expect(error.code == .typeMismatch)
        #expect(error.context == [.file(url.relativePath), .object("Reading p1"), .key(`case`.attribute)])
        #expect(error.message.hasPrefix("holds \(`case`.found), which \(`case`.problem)"), "\(error.message)")
        #expect(error.remedy?.kind == .readLeniently)
        #expect(error.description.hasSuffix("(--lenient reads such values as no value, with a warning)"))
    }

    @Test(arguments: refused)
    func lenientReadingReadsItAsNoValueWithAWarning(_ case: Refused) throws {
        try store(`case`.sql, in: `case`.attribute, retyped: `case`.retyped)
        let (reader, readings) = try read(.lenient)
        let entity = Self.model.descriptions[0]
        #expect(readings[0][attribute: `case`.attribute, in: entity] == nil)
        // Every other value is read as it is.
        #expect(readings[0].attributes.compactMap { $0 }.count == entity.attributes.count - 1)
        let type = entity.attributes[entity.attributeIndexByName[`case`.attribute]!].type
        #expect(
            reader.warnings == [
                "Reading.\(`case`.attribute) (\(type)): 1 stored value is not of the attribute's type or range and was "
                    + "read as no value: p1 (\(`case`.found))"
            ])
        #expect(
            reader.refusedValues == [
                .init(entity: 0, attribute: entity.attributeIndexByName[`case`.attribute]!, key: 1)
            ])
    }

    /// One warning per attribute, counting the objects and naming the first three.
    @Test func aWarningCountsTheObjectsAndNamesTheFirstFew() throws {
        let entity = Self.model.descriptions[0]
        let writer = try SQLiteStoreWriter(
            url: url, model: Self.model, metadata: StoreMetadata.make(for: Self.model, storeType: .sqlite),
            overwrite: true)
        for key in 1...6 { try writer.write(Snapshot(entity: entity, key: Int64(key))) }
        try writer.finish()
        try alter(
            "UPDATE ZREADING SET ZSMALL = 'x' || Z_PK, ZLABEL = x'00' WHERE Z_PK > 1",
            "UPDATE ZREADING SET ZSMALL = 5 WHERE Z_PK = 1")
        let (reader, readings) = try read(.lenient)
        #expect(readings.map { $0[attribute: "small", in: entity] } == [.integer(5), nil, nil, nil, nil, nil])
        #expect(
            reader.warnings == [
                "Reading.small (Integer 16): 5 stored values are not of the attribute's type or range and were read as "
                    + "no value: p2 (the text 'x2'), p3 (the text 'x3'), p4 (the text 'x4'), and 2 more",
                "Reading.label (String): 5 stored values are not of the attribute's type or range and were read as no "
                    + "value: p2 (a blob of 1 byte (00)), p3 (a blob of 1 byte (00)), p4 (a blob of 1 byte (00)), and 2 "
                    + "more",
            ])
    }

    /// What real stores hold besides Core Data's own storage classes, read as the value it stands for.
    struct Accepted: CustomTestStringConvertible, Sendable {
        var attribute: String
        var sql: String
        var value: Value
        var retyped = false
        var testDescription: String { "\(attribute) = \(sql)\(retyped ? " (untyped column)" : "")" }
    }

    static let accepted: [Accepted] = [
        // Dates stored as whole seconds (integers in a TIMESTAMP column, whose affinity keeps them).
        Accepted(attribute: "stamp", sql: "700000000", value: .date(Date(timeIntervalSinceReferenceDate: 700_000_000))),
        Accepted(attribute: "ratio", sql: "3", value: .double(3), retyped: true),
        Accepted(attribute: "single", sql: "3", value: .double(3), retyped: true),
        // An infinite real is Float's infinity too.
        Accepted(attribute: "single", sql: "9e999", value: .double(.infinity)),
        Accepted(attribute: "small", sql: "12.0", value: .integer(12), retyped: true),
        Accepted(attribute: "big", sql: "-9223372036854775808", value: .integer(.min)),
        Accepted(attribute: "flag", sql: "0", value: .bool(false)),
        Accepted(attribute: "flag", sql: "1.0", value: .bool(true), retyped: true),
        Accepted(attribute: "amount", sql: "7", value: .decimal(7)),
        Accepted(attribute: "amount", sql: "0.1", value: .decimal(Decimal(string: "0.1")!)),
        Accepted(attribute: "amount", sql: "'12.50'", value: .decimal(Decimal(string: "12.5")!), retyped: true),
        Accepted(
            attribute: "tag", sql: "'0F1E2D3C-AAAA-4BBB-8CCC-DDDDEEEEFFFF'",
            value: .uuid(UUID(uuidString: "0F1E2D3C-AAAA-4BBB-8CCC-DDDDEEEEFFFF")!)),
        Accepted(attribute: "blob", sql: "'hi'", value: .data(Data("hi".utf8))),
        Accepted(attribute: "photo", sql: "x'0168'", value: .data(Data("h".utf8))),
        Accepted(attribute: "label", sql: "''", value: .string("")),
        Accepted(attribute: "label", sql: "'a\u{1F600}b'", value: .string("a\u{1F600}b")),
    ]

    @Test(arguments: accepted)
    func strictReadingReadsWhatRealStoresHold(_ case: Accepted) throws {
        try store(`case`.sql, in: `case`.attribute, retyped: `case`.retyped)
        let (reader, readings) = try read()
        #expect(readings[0][attribute: `case`.attribute, in: Self.model.descriptions[0]] == `case`.value)
        #expect(reader.warnings.isEmpty)
    }

    /// A decimal NaN is kept as the text `NaN` (SQLite keeps no NaN real) and read back as NaN.
    @Test func aDecimalNaNIsKeptAsText() throws {
        try alter("UPDATE ZREADING SET ZAMOUNT = 'NaN' WHERE Z_PK = 1")
        let (_, readings) = try read()
        guard case .decimal(let value)? = readings[0][attribute: "amount", in: Self.model.descriptions[0]] else {
            Issue.record("no decimal read")
            return
        }
        #expect(value.isNaN)
    }

    /// Text digits that SQLite kept as text (a store written by a SQLite that did, or edited so): read
    /// exactly, all 38 digits.
    @Test func decimalDigitsKeptAsTextAreReadExactly() throws {
        // A BLOB column keeps text as text whatever it looks like (a DECIMAL column turns it into a real).
        try retype("amount")
        try alter(
            "UPDATE ZREADING SET ZAMOUNT = '0.1000000000000000000000000000000000001' WHERE Z_PK = 1",
            "UPDATE ZREADING SET ZAMOUNT = '1e-130' WHERE Z_PK = 2")
        let error = try #require(throws: GraftError.self) { try read() }
        #expect(error.context.contains(.object("Reading p2")))
        #expect(
            error.message.hasPrefix("holds the text '1e-130', which is not a decimal number a Decimal holds exactly"))
        try alter("UPDATE ZREADING SET ZAMOUNT = NULL WHERE Z_PK = 2")
        let (_, readings) = try read()
        #expect(
            readings[0][attribute: "amount", in: Self.model.descriptions[0]]
                == .decimal(Decimal(string: "0.1000000000000000000000000000000000001")!))
    }

    /// A decimal no double holds is written as the nearest double (SQLite would turn its digits into a
    /// real anyway), and the writer says so.
    @Test func aDecimalNoDoubleHoldsIsStoredRoundedWithAWarning() throws {
        let entity = Self.model.descriptions[0]
        var reading = Snapshot(entity: entity, key: 1)
        reading[attribute: "amount", in: entity] = .decimal(Decimal(string: "0.1000000000000000000001")!)
        let writer = try SQLiteStoreWriter(
            url: url, model: Self.model, metadata: StoreMetadata.make(for: Self.model, storeType: .sqlite),
            overwrite: true)
        try writer.write(reading)
        try writer.finish()
        #expect(
            writer.warnings == [
                "Reading.amount: 1 decimal value with more digits than a SQLite store keeps (a 64-bit real, as Core "
                    + "Data writes decimals) was stored rounded: p1 0.1000000000000000000001 as 0.1"
            ])
        let (_, readings) = try read()
        #expect(readings[0][attribute: "amount", in: entity] == .decimal(Decimal(string: "0.1")!))
    }

    /// Money amounts a double holds to its shortest text are stored as that double, exactly what the
    /// text reads as (not one unit in the last place off, as Foundation's conversion gives), with no
    /// warning, and read back as the same decimal.
    @Test(arguments: ["19.99", "3019890.53", "7928.46", "-0.07", "120131.61"])
    func aMoneyAmountIsStoredAsItsNearestDouble(text: String) throws {
        let entity = Self.model.descriptions[0]
        var reading = Snapshot(entity: entity, key: 1)
        reading[attribute: "amount", in: entity] = .decimal(Decimal(string: text)!)
        let writer = try SQLiteStoreWriter(
            url: url, model: Self.model, metadata: StoreMetadata.make(for: Self.model, storeType: .sqlite),
            overwrite: true)
        try writer.write(reading)
        try writer.finish()
        #expect(writer.warnings.isEmpty)
        let database = try SQLiteDatabase.openForReading(url)
        let row = try database.prepare("SELECT ZAMOUNT FROM ZREADING")
        #expect(try row.step())
        #expect(row.double(0) == Double(text)!)
        let (_, readings) = try read()
        #expect(readings[0][attribute: "amount", in: entity] == .decimal(Decimal(string: text)!))
    }

    /// SQLite keeps no NaN (a NaN real is stored as NULL): the writer says so rather than let a value
    /// become no value silently.
    @Test func aNaNIsStoredAsNoValueWithAWarning() throws {
        let entity = Self.model.descriptions[0]
        var reading = Snapshot(entity: entity, key: 1)
        reading[attribute: "ratio", in: entity] = .double(.nan)
        reading[attribute: "stamp", in: entity] = .date(Date(timeIntervalSinceReferenceDate: .nan))
        reading[attribute: "single", in: entity] = .double(.infinity)
        let writer = try SQLiteStoreWriter(
            url: url, model: Self.model, metadata: StoreMetadata.make(for: Self.model, storeType: .sqlite),
            overwrite: true)
        try writer.write(reading)
        try writer.finish()
        #expect(
            writer.warnings == [
                "Reading.ratio: 1 NaN value was stored as no value (SQLite keeps no NaN): p1",
                "Reading.stamp: 1 NaN value was stored as no value (SQLite keeps no NaN): p1",
            ])
        let (_, readings) = try read()
        #expect(readings[0][attribute: "ratio", in: entity] == nil)
        #expect(readings[0][attribute: "single", in: entity] == .double(.infinity))
    }

    /// A NaN in a required attribute would be stored as no value, breaking the rule the paste checked:
    /// the writer refuses it, naming the object and attribute.
    @Test func aNaNInARequiredAttributeIsRefused() throws {
        let model = try Model(entities: [
            Entity(name: "Visit", attributes: [Attribute(name: "when", type: .date, isOptional: false)])
        ])
        let entity = model.descriptions[0]
        var visit = Snapshot(entity: entity, key: 1)
        visit[attribute: "when", in: entity] = .date(Date(timeIntervalSinceReferenceDate: .nan))
        let writer = try SQLiteStoreWriter(
            url: url, model: model, metadata: StoreMetadata.make(for: model, storeType: .sqlite), overwrite: true)
        let error = try #require(throws: GraftError.self) { try writer.write(visit) }
        writer.cancel()
        #expect(error.code == .validationFailed)
        #expect(error.description.contains("Visit p1: when: is NaN, which a SQLite store keeps as no value"))
    }

    /// The store opened for a context (copying a selection, validating) reads the same way.
    @Test func aStoreOpenedForReadingReadsStrictlyOrLeniently() throws {
        try alter("UPDATE ZREADING SET ZSMALL = 'abc' WHERE Z_PK = 1")
        let ref = ObjectRef(entity: 0, key: 1)
        let strict = try SQLiteStore.openForReading(url, model: Self.model)
        let error = try #require(throws: GraftError.self) { try strict.snapshot(for: ref) }
        #expect(error.context == [.file(url.relativePath), .object("Reading p1"), .key("small")])
        let lenient = try SQLiteStore.openForReading(url, model: Self.model, valueReading: .lenient)
        #expect(try lenient.snapshot(for: ref)?[attribute: "small", in: Self.model.descriptions[0]] == nil)
        // Read twice, counted once.
        _ = try lenient.snapshot(for: ref)
        #expect(lenient.warnings.count == 1)
        #expect(lenient.warnings.first?.hasPrefix("Reading.small (Integer 16): 1 stored value is not") == true)
    }

    // MARK: Keys

    /// New keys after `Z_MAX`, or after the highest `Z_PK`, at Int64's largest value: an error, not a trap.
    @Test(arguments: [
        ("UPDATE Z_PRIMARYKEY SET Z_MAX = 9223372036854775807", "Z_MAX is 9223372036854775807"),
        (
            "UPDATE ZREADING SET Z_PK = 9223372036854775807 WHERE Z_PK = 2",
            "the highest Z_PK in ZREADING is 9223372036854775807"
        ),
        ("UPDATE Z_PRIMARYKEY SET Z_MAX = 9223372036854775806", "Z_MAX is 9223372036854775806"),
    ])
    func noKeysLeftIsAnError(sql: String, recorded: String) throws {
        try alter(sql)
        let store = try SQLiteStore.open(url, model: Self.model)
        let count = recorded.hasSuffix("806") ? 2 : 1
        let error = try #require(throws: GraftError.self) { try store.allocateKeys(rootEntity: 0, count: count) }
        #expect(error.code == .malformedInput)
        #expect(error.context == [.file(url.relativePath)])
        #expect(
            error.message
                == "no keys left for Reading: \(recorded), so \(count) new key\(count == 1 ? "" : "s") would pass "
                + "9223372036854775807, the largest a key can be")
        // The last key there is can still be handed out.
        if count == 2 { #expect(try store.allocateKeys(rootEntity: 0, count: 1) == [.max]) }
    }

    @Test func keysStartAfterZMaxAndTheHighestKey() throws {
        try alter("UPDATE Z_PRIMARYKEY SET Z_MAX = -5")
        let store = try SQLiteStore.open(url, model: Self.model)
        #expect(try store.allocateKeys(rootEntity: 0, count: 2) == [3, 4])
        #expect(try store.allocateKeys(rootEntity: 0, count: 1) == [5])
    }
}
