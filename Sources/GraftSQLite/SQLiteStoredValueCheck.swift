internal import CSQLite
import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Compares objects with the values a SQLite store holds for them, as SQLite holds them: each value is
/// bound as Graft's writer would store it and compared with the row's column by SQLite itself (`IS`,
/// with the column's affinity), so that nothing goes through the reader's decoding. `graft convert
/// --verify` checks every object it wrote this way, so that a conversion cannot verify its own mistake
/// (a decoding that turned text into 0 would turn it into 0 again when the input is read back).
///
/// Besides what `IS` finds equal, the forms strict reading accepts count as the same value: a decimal's
/// digits as text, a UUID as text, a blob's bytes kept as text, and externally stored data (its marker
/// byte; a value in an external file is compared by the object comparison, not here).
///
/// For example:
///
/// ```swift
/// let check = try SQLiteStoredValueCheck(reader: source)
/// try output.forEachSnapshot { differences += try check.differences(of: $0) }
/// ```
public final class SQLiteStoredValueCheck {
    private let schema: SQLiteSchema
    private let database: SQLiteDatabase
    private let model: Model
    /// Values the read of the store gave as no value (reading leniently): absent in what is compared.
    private let refused: Set<ValueRefusals.Slot>
    private var plans: [Int: Plan] = [:]

    /// One entity's comparison: a statement selecting, for the row with a key, its entity number and for
    /// each attribute whether the column `IS` the bound value.
    private struct Plan {
        var statement: SQLiteStatement
        var attributes: [(index: Int, column: String, kind: SQLiteValues.Kind)]
        var table: String
        var number: Int64
    }

    /// A check against the store `reader` reads.
    ///
    /// - Parameter refused: the values a lenient read of the store gave as no value (its
    ///   `refusedValues`), which must be absent in what is compared; by default the reader's own.
    public convenience init(reader: SQLiteStoreReader) {
        self.init(reader: reader, refused: reader.refusedValues)
    }

    package init(reader: SQLiteStoreReader, refused: Set<ValueRefusals.Slot>) {
        schema = reader.schema
        database = reader.database
        model = reader.model
        self.refused = refused
    }

    /// The attributes of `snapshot` (an object of the store's model) whose value is not the one the
    /// store's row of the same key holds, described for people; empty when the store has no such row
    /// (the object comparison reports that).
    public func differences(of snapshot: Snapshot) throws -> [String] {
        let entity = model.descriptions[snapshot.ref.entity]
        let plan = try self.plan(for: entity)
        let statement = plan.statement
        defer {
            statement.reset()
            statement.clearBindings()
        }
        for (position, attribute) in plan.attributes.enumerated() {
            try SQLiteValues.bind(
                snapshot.attributes[attribute.index], as: attribute.kind, to: statement, at: Int32(position + 1))
        }
        try statement.bind(snapshot.ref.key, at: Int32(plan.attributes.count + 1))
        guard try statement.step(), statement.int64(0) == plan.number else { return [] }
        var found: [String] = []
        for (position, attribute) in plan.attributes.enumerated() {
            let column = Int32(1 + 2 * position)
            let value = snapshot.attributes[attribute.index]
            let slot = ValueRefusals.Slot(entity: entity.index, attribute: attribute.index, key: snapshot.ref.key)
            if refused.contains(slot) {
                // Read as no value on purpose; the store holds something else.
                if value == nil { continue }
            } else if statement.int64(column) == 1 || Self.sameValue(statement, column + 1, value, attribute.kind) {
                continue
            }
            found.append(
                "\(entity.name) p\(snapshot.ref.key).\(entity.attributes[attribute.index].name): the input holds "
                    + "\(SQLiteValues.describe(statement, column + 1)) in \(plan.table).\(attribute.column), the output "
                    + (value.map { "\($0)" } ?? "no value"))
        }
        return found
    }

    /// Whether the raw column holds `value` in one of the forms strict reading accepts beyond what SQLite's
    /// own comparison finds equal.
    private static func sameValue(
        _ statement: SQLiteStatement, _ index: Int32, _ value: Value?, _ kind: SQLiteValues.Kind
    ) -> Bool {
        let storage = statement.columnType(index)
        if kind.external, storage == SQLITE_BLOB || storage == SQLITE_TEXT {
            let stored = statement.data(index) ?? Data()
            guard case .data(let data)? = value else {
                // A value kept in an external file, read as no value when the file is missing (and said so).
                return stored.first == 2
            }
            switch stored.first {
            case 1: return stored.dropFirst() == data
            // The value is in an external file, which the object comparison reads.
            case 2: return true
            default: return stored == data
            }
        }
        switch (value, storage) {
        case (.decimal(let decimal), SQLITE_TEXT):
            return statement.validatedText(index).flatMap { Decimal(exactText: $0) } == decimal
        case (.uuid(let uuid), SQLITE_TEXT):
            return statement.validatedText(index).flatMap { UUID(uuidString: $0) } == uuid
        case (.data(let data), SQLITE_TEXT):
            return statement.data(index) == data
        default:
            return false
        }
    }

    private func plan(for entity: EntityDescription) throws -> Plan {
        if let plan = plans[entity.index] { return plan }
        let table = schema.tables[schema.tableOfEntity[entity.index]]
        let present = Set(table.columns.map(\.name).filter { !$0.isEmpty })
        var attributes: [(index: Int, column: String, kind: SQLiteValues.Kind)] = []
        for (index, attribute) in entity.attributes.enumerated() {
            guard let column = schema.attributeColumns[entity.index][index], present.contains(column) else { continue }
            attributes.append((index, column, SQLiteValues.Kind(attribute)))
        }
        let selected =
            ["Z_ENT"]
            + attributes.enumerated().flatMap { position, attribute in
                let column = SQLiteName.quoted(attribute.column)
                return ["\(column) IS ?\(position + 1)", column]
            }
        let statement = try database.prepare(
            "SELECT \(selected.joined(separator: ", ")) FROM \(SQLiteName.quoted(table.name)) "
                + "WHERE Z_PK = ?\(attributes.count + 1)")
        let plan = Plan(
            statement: statement, attributes: attributes, table: table.name,
            number: Int64(schema.entityNumbers[entity.index]))
        plans[entity.index] = plan
        return plan
    }
}
