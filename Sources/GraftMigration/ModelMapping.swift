import GraftCore
import GraftGraph
import GraftModel

/// How the objects of one model become objects of another, as the migration engine runs it: for each
/// source entity, the destination entity its objects become (or none) and where each destination
/// property's value comes from.
///
/// A mapping is inferred from two models (``MappingInference``) or composed from several steps
/// (``then(_:)``), so that a store several versions old is read once and written once, whatever the
/// number of steps between.
public struct ModelMapping: Sendable {
    public let source: Model
    public let destination: Model
    /// By source entity index: how its objects are carried, or `nil` when they are not.
    let objects: [ObjectMapping?]

    init(source: Model, destination: Model, objects: [ObjectMapping?]) {
        self.source = source
        self.destination = destination
        self.objects = objects
    }

    /// The mapping that leaves every object as it is (from a model to itself).
    static func identity(_ model: Model) -> ModelMapping {
        ModelMapping(
            source: model, destination: model,
            objects: model.descriptions.map { entity in
                ObjectMapping(
                    destinationEntity: entity.index,
                    attributes: entity.attributes.indices.map { .source($0, conversions: [], whenNil: .keep) },
                    relationships: entity.relationships.indices.map {
                        .source($0, toMany: entity.relationships[$0].isToMany)
                    }
                )
            })
    }

    /// Whether the mapping evaluates a mapping model's expressions or filters, which read the objects of
    /// its own source model: such a mapping runs in a stage of its own, not composed with others.
    var evaluates: Bool {
        objects.contains { object in
            guard let object else { return false }
            return object.filter != nil
                || object.attributes.contains {
                    if case .expression = $0 { return true }
                    return false
                }
        }
    }

    /// The destination entity the objects of source entity `index` become.
    func destinationEntity(ofSourceEntity index: Int) -> Int? { objects[index]?.destinationEntity }

    /// This mapping followed by `next` (whose source is this mapping's destination), as one mapping.
    func then(_ next: ModelMapping) -> ModelMapping {
        let composed = objects.map { first -> ObjectMapping? in
            guard let first, let second = next.objects[first.destinationEntity] else { return nil }
            return ObjectMapping(
                destinationEntity: second.destinationEntity, filter: first.filter,
                attributes: second.attributes.map { $0.after(first.attributes) },
                relationships: second.relationships.map { $0.after(first.relationships) })
        }
        return ModelMapping(source: source, destination: next.destination, objects: composed)
    }
}

/// How the objects of one source entity are carried.
struct ObjectMapping: Sendable {
    var destinationEntity: Int
    /// Objects for which this predicate is false are not carried (a mapping model's filter, `SELF` the
    /// source object); `nil` carries all.
    var filter: GraftPredicate? = nil
    /// By destination attribute index.
    var attributes: [AttributeFill]
    /// By destination relationship index.
    var relationships: [RelationshipFill]
}

/// Where a destination attribute's value comes from.
enum AttributeFill: Sendable, Equatable {
    /// The value of source attribute `index`, converted through `conversions` in turn.
    case source(Int, conversions: [AttributeType], whenNil: NilRule)
    /// The same value for every object (a new attribute's default; `nil` for none).
    case value(Value?)
    /// No value can be given: the migration of any object fails with this message.
    case fail(String)
    /// A mapping model's value expression, evaluated with `$source` the source object (its text kept for
    /// messages). A step with such fills is never composed with the steps before it.
    case expression(GraftPredicate.Expression, String)

    /// What an object without a value gets.
    enum NilRule: Sendable, Equatable {
        /// No value.
        case keep
        /// This value (an attribute become required, and its default).
        case value(Value)
        /// Nothing: the object cannot be migrated (a required attribute without a default).
        case fail(String)
    }

    /// This fill, whose source attributes are the destination attributes `previous` fills, in terms of
    /// `previous`'s source.
    func after(_ previous: [AttributeFill]) -> AttributeFill {
        switch self {
        case .value, .fail, .expression:
            return self
        case .source(let index, let conversions, let whenNil):
            switch previous[index] {
            case .fail(let message):
                return .fail(message)
            case .expression:
                return .fail("an expression cannot be composed with the step after it")
            case .value(let value):
                return Self.apply(conversions, whenNil: whenNil, to: value)
            case .source(let first, let earlier, let earlierNil):
                let nilRule: NilRule
                switch earlierNil {
                case .keep: nilRule = whenNil
                case .fail(let message): nilRule = .fail(message)
                case .value(let value):
                    switch Self.apply(conversions, whenNil: whenNil, to: value) {
                    case .value(let converted?): nilRule = .value(converted)
                    case .fail(let message): nilRule = .fail(message)
                    default: nilRule = whenNil
                    }
                }
                return .source(first, conversions: earlier + conversions, whenNil: nilRule)
            }
        }
    }

    /// A constant value carried through conversions, as a fill.
    static func apply(_ conversions: [AttributeType], whenNil: NilRule, to value: Value?) -> AttributeFill {
        guard var value else {
            switch whenNil {
            case .keep: return .value(nil)
            case .value(let value): return .value(value)
            case .fail(let message): return .fail(message)
            }
        }
        for type in conversions {
            guard let converted = convert(value, to: type) else {
                return .fail("the value \(value) cannot be held by a \(type.modelName) attribute")
            }
            value = converted
        }
        return .value(value)
    }

    /// `value` as an attribute of `type` holds it, or `nil` when it cannot be held without loss: as
    /// `ValueConversion.coerce` converts, and also booleans and numbers both ways (`YES` is 1; only 0 and
    /// 1 become booleans), as an inferred type change between the numeric types and Boolean promises.
    static func convert(_ value: Value, to type: AttributeType) -> Value? {
        switch (type, value) {
        case (.double, .bool(let flag)), (.float, .bool(let flag)): return .double(flag ? 1 : 0)
        case (.decimal, .bool(let flag)): return .decimal(flag ? 1 : 0)
        case (.boolean, .double(let number)) where number == 0 || number == 1: return .bool(number == 1)
        case (.boolean, .decimal(let number)) where number == 0 || number == 1: return .bool(number == 1)
        default: return ValueConversion.coerce(value, to: type)
        }
    }
}

/// Where a destination relationship's objects come from.
enum RelationshipFill: Sendable, Equatable {
    /// The objects of source relationship `index`, as a to-many when `toMany` (else a to-one).
    case source(Int, toMany: Bool)
    /// None (a new relationship).
    case empty

    func after(_ previous: [RelationshipFill]) -> RelationshipFill {
        guard case .source(let index, let toMany) = self else { return self }
        guard case .source(let first, _) = previous[index] else { return .empty }
        return .source(first, toMany: toMany)
    }
}
