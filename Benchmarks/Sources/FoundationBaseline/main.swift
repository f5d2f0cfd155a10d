// Baseline for the copy/paste benchmark: Foundation's JSONEncoder/JSONDecoder and
// PropertyListEncoder/PropertyListDecoder (binary) on the objects of a clipboard document, as Codable
// structs with the same fields. Prints `<step> <seconds>` lines on standard error.
//
//   foundation-baseline CLIPBOARD

import Foundation
import Graft

/// One copied object, as an app would declare it for Codable.
struct CodableObject: Codable {
    var id: String
    var entity: String
    var attributes: [String: Field]
    var relationships: [String: [String]]
}

/// An attribute value: encoded as the plain value, decoded by trying each kind in turn.
enum Field: Codable {
    case integer(Int64), double(Double), string(String), bool(Bool), date(Date), data(Data), decimal(Decimal)

    init(_ value: Value) {
        switch value {
        case .integer(let number): self = .integer(number)
        case .double(let number): self = .double(number)
        case .decimal(let number): self = .decimal(number)
        case .bool(let flag): self = .bool(flag)
        case .date(let date): self = .date(date)
        case .data(let data): self = .data(data)
        default: self = .string("\(value)")
        }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .integer(let number): try container.encode(number)
        case .double(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .bool(let flag): try container.encode(flag)
        case .date(let date): try container.encode(date)
        case .data(let data): try container.encode(data)
        case .decimal(let number): try container.encode(number)
        }
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Int64.self) {
            self = .integer(number)
        } else if let number = try? container.decode(Double.self) {
            self = .double(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let date = try? container.decode(Date.self) {
            self = .date(date)
        } else if let number = try? container.decode(Decimal.self) {
            self = .decimal(number)
        } else {
            self = .data(try container.decode(Data.self))
        }
    }
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

let clipboard = try ClipboardEncoding.decode(try Data(contentsOf: URL(fileURLWithPath: CommandLine.arguments[1])))
let objects = clipboard.objects.map { object in
    CodableObject(
        id: object.id, entity: object.entity,
        attributes: Dictionary(object.attributes.map { ($0.name, Field($0.value)) }, uniquingKeysWith: { $1 }),
        relationships: Dictionary(object.relationships.map { ($0.name, $0.targets) }, uniquingKeysWith: { $1 }))
}
var json = Data(), plist = Data()
let jsonEncode = try seconds { json = try JSONEncoder().encode(objects) }
let jsonDecode = try seconds { _ = try JSONDecoder().decode([CodableObject].self, from: json) }
let encoder = PropertyListEncoder()
encoder.outputFormat = .binary
let plistEncode = try seconds { plist = try encoder.encode(objects) }
let plistDecode = try seconds { _ = try PropertyListDecoder().decode([CodableObject].self, from: plist) }
FileHandle.standardError.write(
    Data(
        """
        foundation-json-encode \(jsonEncode)
        foundation-json-decode \(jsonDecode)
        foundation-plist-encode \(plistEncode)
        foundation-plist-decode \(plistDecode)

        """.utf8))
