import Foundation
import GraftCore
import GraftModel

extension GraftPredicate {
    /// The predicate with `$NAME` variables replaced by values.
    ///
    /// Variables that `variables` does not name stay as they are, to be given at evaluation time (as
    /// `$FETCH_SOURCE` is when a fetched property is evaluated).
    ///
    /// For example:
    ///
    /// ```swift
    /// let template = try GraftPredicate(format: "department.name == $DEPARTMENT AND salary > $MINIMUM")
    /// let sales = try template.substituting(["DEPARTMENT": "Sales", "MINIMUM": 50000])
    /// print(sales)   // department.name == "Sales" AND salary > 50000
    /// ```
    ///
    /// - Parameter variables: values by variable name, without the `$`; see
    ///   ``Expression/init(value:)`` for the values a predicate can hold.
    /// - Throws: `GraftError.typeMismatch`, naming the variable, for a value a predicate cannot hold.
    public func substituting(_ variables: [String: Any]) throws -> GraftPredicate {
        switch self {
        case .truePredicate, .falsePredicate: return self
        case .comparison(var comparison):
            comparison.left = try comparison.left.substituting(variables)
            comparison.right = try comparison.right.substituting(variables)
            return .comparison(comparison)
        case .not(let predicate): return .not(try predicate.substituting(variables))
        case .and(let predicates): return .and(try predicates.map { try $0.substituting(variables) })
        case .or(let predicates): return .or(try predicates.map { try $0.substituting(variables) })
        }
    }
}

extension GraftPredicate.Expression {
    /// The expression with `$NAME` variables replaced by values; see ``GraftPredicate/substituting(_:)``.
    public func substituting(_ variables: [String: Any]) throws -> GraftPredicate.Expression {
        switch self {
        case .variable(let name):
            guard let value = variables[name] else { return self }
            do {
                return try GraftPredicate.Expression(value: value)
            } catch let error as GraftError {
                throw error.at(.key("$" + name))
            }
        case .member(let base, let path): return .member(try base.substituting(variables), path)
        case .aggregate(let elements): return .aggregate(try elements.map { try $0.substituting(variables) })
        case .arithmetic(let op, let left, let right):
            return .arithmetic(op, try left.substituting(variables), try right.substituting(variables))
        case .function(let function, let arguments):
            return .function(function, try arguments.map { try $0.substituting(variables) })
        case .method(let receiver, let selector, let arguments):
            return .method(
                try receiver.substituting(variables), selector, try arguments.map { try $0.substituting(variables) })
        case .subquery(let collection, let variable, let predicate):
            // The subquery's own variable is bound by the subquery, not by the caller.
            var outer = variables
            outer[variable] = nil
            return .subquery(
                try collection.substituting(variables), variable: variable, predicate: try predicate.substituting(outer)
            )
        case .index(let base, let selector):
            if case .at(let index) = selector {
                return .index(try base.substituting(variables), .at(try index.substituting(variables)))
            }
            return .index(try base.substituting(variables), selector)
        case .cast(let inner, let typeName): return .cast(try inner.substituting(variables), typeName)
        case .ternary(let condition, let whenTrue, let whenFalse):
            return .ternary(
                try condition.substituting(variables), try whenTrue.substituting(variables),
                try whenFalse.substituting(variables))
        case .fetch(let request, let context, let countOnly):
            return .fetch(
                try request.substituting(variables), context: try context.substituting(variables), countOnly: countOnly)
        case .constant, .null, .object, .evaluatedObject, .keyPath: return self
        }
    }

    /// The expression for a Swift value, as `%@` and substitution make it.
    ///
    /// - nil, `NSNull` and nil optionals become `.null`;
    /// - numbers of every width, `Decimal`, `Bool`, `String`, `Date`, `Data`, `UUID`, `URL` and
    ///   `Value`s become `.constant`;
    /// - `KeyValueCoding` objects become `.object`;
    /// - arrays, sets and to-many values become `.aggregate` of their elements;
    /// - an `Expression` is used as it is.
    ///
    /// - Throws: `GraftError.typeMismatch` for anything else (dictionaries, unknown types).
    public init(value: Any?) throws {
        if let expression = unwrapped(value) as? GraftPredicate.Expression {
            self = expression
            return
        }
        self = try GraftPredicate.Expression(Operand(value))
    }

    private init(_ operand: Operand) throws {
        switch operand {
        case .null: self = .null
        case .integer(let value): self = .constant(.integer(value))
        case .double(let value): self = .constant(.double(value))
        case .decimal(let value): self = .constant(.decimal(value))
        case .bool(let value): self = .constant(.bool(value))
        case .string(let value): self = .constant(.string(value))
        case .date(let value): self = .constant(.date(value))
        case .data(let value): self = .constant(.data(value))
        case .uuid(let value): self = .constant(.uuid(value))
        case .url(let value): self = .constant(.uri(value))
        case .object(let object): self = .object(GraftPredicate.ObjectReference(object))
        case .collection(let elements): self = .aggregate(try elements.map { try GraftPredicate.Expression($0) })
        case .other(let box):
            throw GraftError(.typeMismatch, "a value of type \(type(of: box.value)) cannot be used in a predicate")
        }
    }
}
