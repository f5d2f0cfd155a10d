import Foundation

/// One sort key of a fetch: a key path, a direction, and string options.
///
/// Values are ordered by ``ValueComparison/sortOrder(_:_:options:)``: `nil` first when ascending (last
/// when descending), numbers by value across types, strings by Swift's ordering (folded first with
/// `.caseInsensitive` or `.diacriticInsensitive`), dates by time.
///
/// For example:
///
/// ```swift
/// let byDepartmentThenSalary = [
///     try GraftSortDescriptor("department.name"),
///     try GraftSortDescriptor("salary", ascending: false),
/// ]
/// let sorted = try employees.sorted(using: byDepartmentThenSalary)
/// ```
///
/// It is named `GraftSortDescriptor` so that it never clashes with Foundation's `SortDescriptor`.
public struct GraftSortDescriptor: Hashable, Sendable, CustomStringConvertible {
    /// What to sort by.
    public var keyPath: KeyValuePath
    /// Smallest first when true.
    public var ascending: Bool
    /// How strings compare: `[.caseInsensitive]` sorts "apple" and "Banana" alphabetically.
    public var options: ComparisonOptions

    public init(keyPath: KeyValuePath, ascending: Bool = true, options: ComparisonOptions = []) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.options = options
    }

    /// A sort descriptor for key-value coding text such as `department.name`.
    ///
    /// - Throws: `GraftError.syntaxError` for a malformed key path.
    public init(_ keyPath: String, ascending: Bool = true, options: ComparisonOptions = []) throws {
        self.init(keyPath: try KeyValuePath(parsing: keyPath), ascending: ascending, options: options)
    }

    /// `name ascending`, `salary descending`.
    public var description: String {
        "\(keyPath) \(ascending ? "ascending" : "descending")\(options.formatSuffix)"
    }

    /// How two objects order by this descriptor alone (the direction applied).
    ///
    /// - Throws: `GraftError.evaluationFailed` when the key path cannot be read.
    public func compare(_ lhs: Any?, _ rhs: Any?) throws -> ComparisonResult {
        order(Operand(try keyPath.resolve(on: lhs)), Operand(try keyPath.resolve(on: rhs)))
    }

    fileprivate func order(_ lhs: Operand, _ rhs: Operand) -> ComparisonResult {
        let result = sortOrderOperands(lhs, rhs, options: options)
        guard !ascending else { return result }
        switch result {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// `elements` sorted by the first descriptor, ties broken by the next, and so on; elements that
    /// tie on every descriptor keep their order (the sort is stable).
    ///
    /// Each key path is read once per element.
    ///
    /// - Throws: `GraftError.evaluationFailed` when a key path cannot be read.
    public static func sort<S: Sequence>(_ elements: S, by descriptors: [GraftSortDescriptor]) throws -> [S.Element] {
        let elements = Array(elements)
        guard !descriptors.isEmpty, elements.count > 1 else { return elements }
        let keys: [[Operand]] = try elements.map { element in
            try descriptors.map { Operand(try $0.keyPath.resolve(on: element)) }
        }
        let order = elements.indices.sorted { a, b in
            for (position, descriptor) in descriptors.enumerated() {
                switch descriptor.order(keys[a][position], keys[b][position]) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return a < b
        }
        return order.map { elements[$0] }
    }
}

extension Sequence {
    /// The elements sorted by several sort descriptors; see ``GraftSortDescriptor/sort(_:by:)``.
    public func sorted(using descriptors: [GraftSortDescriptor]) throws -> [Element] {
        try GraftSortDescriptor.sort(self, by: descriptors)
    }
}
