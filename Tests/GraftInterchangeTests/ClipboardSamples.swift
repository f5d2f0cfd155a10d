import Foundation
import GraftCore
import GraftInterchange
import GraftModel
import GraftTestSupport

/// Clipboard documents for the encoding tests.
enum ClipboardSamples {
    /// Every attribute type, with the values that are hardest to carry.
    static let everyType: Clipboard = {
        let hash = Data((0..<32).map { UInt8($0 * 7 & 0xFF) })
        let thing = Clipboard.EntityInfo(
            name: "Thing", versionHash: hash,
            attributes: [
                .init(name: "small", type: .integer16), .init(name: "medium", type: .integer32),
                .init(name: "large", type: .integer64), .init(name: "amount", type: .decimal),
                .init(name: "ratio", type: .double), .init(name: "single", type: .float),
                .init(name: "text", type: .string), .init(name: "flag", type: .boolean),
                .init(name: "when", type: .date), .init(name: "blob", type: .binary),
                .init(name: "identifier", type: .uuid), .init(name: "link", type: .uri),
                .init(name: "archived", type: .transformable), .init(name: "unused", type: .undefined),
            ],
            relationships: [
                .init(name: "owner", isToMany: false), .init(name: "parts", isToMany: true, isOrdered: true),
                .init(name: "tags", isToMany: true),
            ])
        let person = Clipboard.EntityInfo(
            name: "Person", versionHash: Data(repeating: 0xAB, count: 32),
            attributes: [.init(name: "email", type: .string), .init(name: "number", type: .integer64)],
            relationships: [.init(name: "things", isToMany: true)])
        let largeData = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        func makeThing(
            _ id: String, _ values: [Clipboard.NamedValue], _ links: [Clipboard.Link] = []
        ) -> Clipboard.Object {
            .init(id: id, entity: "Thing", attributes: values, relationships: links)
        }
        let objects: [Clipboard.Object] = [
            makeThing(
                "o1",
                [
                    .init("small", .integer(-32768)), .init("medium", .integer(2_147_483_647)),
                    .init("large", .integer(Int64.max)),
                    .init("amount", .decimal(Decimal(string: "-12345678901234567890.1234567890123")!)),
                    .init("ratio", .double(0.1)), .init("single", .double(Double(Float(3.14159)))),
                    .init("text", .string("")), .init("flag", .bool(true)),
                    .init("when", .date(Date(timeIntervalSinceReferenceDate: 725_846_400.123_456))),
                    .init("blob", .data(Data())),
                    .init("identifier", .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)),
                    .init("link", .uri(URL(string: "https://example.com/a/b?q=1&r=two%20words#frag")!)),
                    .init("archived", .data(Data([0, 1, 2, 255]))),
                ],
                [.init("owner", ["r1"]), .init("parts", ["o3", "o2", "o4"]), .init("tags", ["o2"])]),
            makeThing(
                "o2",
                [
                    .init("large", .integer(Int64.min)), .init("ratio", .double(.nan)),
                    .init("single", .double(.infinity)), .init("text", .string("<&>\"' ]]> tab\there\r\nCRLF")),
                    .init("flag", .bool(false)),
                    .init("when", .date(Date(timeIntervalSinceReferenceDate: -978_307_200.5))),
                    .init("blob", .data(largeData)),
                    .init("amount", .decimal(Decimal(string: "0.000000000000000000000000000000001")!)),
                ],
                [.init("owner", ["o1"])]),
            makeThing(
                "o3",
                [
                    .init("ratio", .double(-.infinity)), .init("single", .double(-0.0)),
                    .init("text", .string("control \u{01}\u{1F} and \u{0} nul")),
                    .init("amount", .decimal(.nan)), .init("when", .date(Date(timeIntervalSinceReferenceDate: 0))),
                    .init("link", .uri(URL(string: "https://例え.jp/パス?ключ=значение")!)),
                ]),
            makeThing(
                "o4",
                [
                    .init("ratio", .double(-0.0)), .init("single", .double(Double.leastNonzeroMagnitude)),
                    .init("large", .integer(0)),
                    .init("text", .string("unicode: é e\u{301} 日本語 𝄞 😀 \u{FEFF} \u{2028}")),
                    .init("amount", .decimal(Decimal(string: "123456789012345678901234567890123456")!)),
                    .init("when", .date(Date(timeIntervalSinceReferenceDate: 1e-7))),
                    .init("small", .integer(32767)),
                ],
                [.init("parts", []), .init("owner", [])]),
            makeThing(
                "o5",
                [
                    .init("ratio", .double(Double.greatestFiniteMagnitude)), .init("single", .double(1e-5)),
                    .init("amount", .decimal(Decimal(sign: .plus, exponent: 100, significand: 42))),
                    .init("medium", .integer(-2_147_483_648)),
                    .init("text", .string(String(repeating: "long ", count: 5000))),
                    .init("when", .date(Date(timeIntervalSinceReferenceDate: 9.87654321e15))),
                ]),
            .init(
                id: "o6", entity: "Person", attributes: [.init("email", "ann@example.com"), .init("number", 7)],
                relationships: [.init("things", ["o1", "o5"])]),
        ]
        return Clipboard(
            entities: [thing, person], versionIdentifiers: ["v1", "2.0 ☃"],
            sourceStore: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0", roots: ["o1", "o6"], objects: objects,
            references: [
                .init(
                    id: "r1", entity: "Person",
                    identity: [.init("email", "boss@example.com"), .init("number", .integer(-1))],
                    uri: "x-coredata://0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0/Person/p42"),
                .init(id: "r2", entity: "Thing", identity: [.init("text", .string("tab\t<x>\u{7}"))]),
                .init(id: "r3", entity: "Thing"),
            ],
            // The model's contents are carried as bytes, whatever they hold.
            modelContents: Data(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\">…</model>\n"
                    .utf8) + Data([0, 0xFF, 0x0D, 0x0A]))
    }()

    /// The smallest document: a model, nothing copied.
    static let empty = Clipboard(entities: [.init(name: "Thing", versionHash: Data(repeating: 0, count: 32))])

    /// The document from `ClipboardCheckTests`, small enough to read in a message.
    static let small = Clipboard(
        entities: [
            .init(
                name: "Department", versionHash: Data(repeating: 1, count: 32),
                attributes: [.init(name: "name", type: .string)],
                relationships: [.init(name: "employees", isToMany: true)]),
            .init(
                name: "Employee", versionHash: Data(repeating: 2, count: 32),
                attributes: [.init(name: "salary", type: .decimal), .init(name: "hired", type: .date)],
                relationships: [.init(name: "department", isToMany: false)]),
        ],
        sourceStore: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0",
        roots: ["o1"],
        objects: [
            .init(
                id: "o1", entity: "Department", attributes: [.init("name", "Sales")],
                relationships: [.init("employees", ["o2", "r1"])]),
            .init(
                id: "o2", entity: "Employee",
                attributes: [
                    .init("salary", .decimal(Decimal(string: "52000.50")!)),
                    .init("hired", .date(Date(timeIntervalSinceReferenceDate: 1.5))),
                ],
                relationships: [.init("department", ["o1"])]),
        ],
        references: [.init(id: "r1", entity: "Employee", identity: [.init("salary", .decimal(5))])])

    /// A document of `count` objects shaped like the benchmark's: departments and employees with short
    /// strings, an integer, a decimal, a date, a Boolean and two to-ones.
    static func company(objects count: Int, seed: UInt64 = 42) -> Clipboard {
        var random = RepeatableRandomNumberGenerator(seed: seed)
        let department = Clipboard.EntityInfo(
            name: "Department", versionHash: Data(repeating: 1, count: 32),
            attributes: [.init(name: "name", type: .string), .init(name: "budget", type: .decimal)],
            relationships: [.init(name: "employees", isToMany: true)])
        let employee = Clipboard.EntityInfo(
            name: "Employee", versionHash: Data(repeating: 2, count: 32),
            attributes: [
                .init(name: "name", type: .string), .init(name: "email", type: .string),
                .init(name: "number", type: .integer64),
                .init(name: "salary", type: .decimal), .init(name: "hired", type: .date),
                .init(name: "active", type: .boolean),
            ],
            relationships: [.init(name: "department", isToMany: false), .init(name: "manager", isToMany: false)])
        let departments = max(1, count / 100)
        var objects: [Clipboard.Object] = []
        objects.reserveCapacity(count)
        for index in 0..<departments {
            objects.append(
                .init(
                    id: "o\(index + 1)", entity: "Department",
                    attributes: [
                        .init("name", .string("Department \(index)")), .init("budget", .decimal(Decimal(index * 1000))),
                    ]))
        }
        for index in departments..<count {
            let salary = Decimal(
                sign: .plus, exponent: -2,
                significand: Decimal(UInt64.random(in: 2_000_000...20_000_000, using: &random)))
            objects.append(
                .init(
                    id: "o\(index + 1)", entity: "Employee",
                    attributes: [
                        .init("name", .string("Employee \(index)")), .init("email", .string("e\(index)@example.com")),
                        .init("number", .integer(Int64(index))), .init("salary", .decimal(salary)),
                        .init(
                            "hired",
                            .date(
                                Date(
                                    timeIntervalSinceReferenceDate: Double(
                                        Int.random(in: 0...800_000_000, using: &random)) + 0.25))),
                        .init("active", .bool(index % 3 != 0)),
                    ],
                    relationships: [
                        .init("department", ["o\(index % departments + 1)"]),
                        .init("manager", ["o\(max(departments + 1, index))"]),
                    ]))
        }
        return Clipboard(
            entities: [department, employee], sourceStore: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0",
            roots: (1...departments).map { "o\($0)" }, objects: objects)
    }
}
