// Temporary stand-ins until the predicates branch is merged.
public struct Predicate: Sendable {}
public struct SortDescriptor: Sendable {}
