/// An error raised by Graft: a code to branch on, a message for people, and where it happened.
///
/// Every error says *what* went wrong and *where*: the file, the entity, the object, the key path,
/// the line. Codes can grow without breaking callers, so switch over them with a `default` case.
///
/// For example:
///
/// ```swift
/// do {
///     let model = try ModelReader.read(at: url)
/// } catch let error as GraftError where error.code == .invalidModel {
///     print(error)   // "Employee.department: destination entity 'Dept' does not exist"
/// }
/// ```
public struct GraftError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A file or folder that should exist does not.
        public static let fileNotFound = Code(rawValue: "fileNotFound")
        /// Reading or writing a file failed at the operating-system level.
        public static let io = Code(rawValue: "io")
        /// Input bytes are not in the format they claim to be (truncated, corrupt, malformed).
        public static let malformedInput = Code(rawValue: "malformedInput")
        /// A format or format version Graft does not read.
        public static let unsupportedFormat = Code(rawValue: "unsupportedFormat")
        /// A model contradicts itself (unknown destination, inverse mismatch, duplicate names, …).
        public static let invalidModel = Code(rawValue: "invalidModel")
        /// A model does not match the store or document it is used with.
        public static let modelMismatch = Code(rawValue: "modelMismatch")
        /// An entity, property or object that was asked for does not exist.
        public static let notFound = Code(rawValue: "notFound")
        /// A value has the wrong type for the property it is assigned to.
        public static let typeMismatch = Code(rawValue: "typeMismatch")
        /// Objects break the model's rules (optionality, ranges, counts, Deny rules).
        public static let validationFailed = Code(rawValue: "validationFailed")
        /// A deletion was refused by a Deny delete rule.
        public static let deleteDenied = Code(rawValue: "deleteDenied")
        /// A predicate or key path could not be parsed.
        public static let syntaxError = Code(rawValue: "syntaxError")
        /// A predicate or key path could not be evaluated.
        public static let evaluationFailed = Code(rawValue: "evaluationFailed")
        /// An operation was used in a way it does not support.
        public static let invalidOperation = Code(rawValue: "invalidOperation")
        /// Writing an output would overwrite something that must be kept.
        public static let alreadyExists = Code(rawValue: "alreadyExists")
        /// Another writer holds the file or database a write needs (longer than the writer waits), or
        /// changed it since it was read: try again.
        public static let busy = Code(rawValue: "busy")
        /// A save would overwrite changes another context or writer saved since the objects were read
        /// (an optimistic-locking failure; Core Data's `NSManagedObjectMergeError`, 133020).
        public static let mergeConflict = Code(rawValue: "mergeConflict")
        /// A store cannot be migrated to the model asked for: a change no inferred mapping carries, a step
        /// that needs a mapping model or a custom policy, or a store whose model version is unknown.
        public static let migrationBlocked = Code(rawValue: "migrationBlocked")
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence a person can act on.
    public var message: String
    /// Where it happened, outermost first: a file, then an entity, an object, a key.
    public var context: [Location]
    /// Further errors collected together with this one (validation reports every failure).
    public var underlying: [GraftError]
    /// What a person can do about it, if there is a way out to name.
    public var remedy: Remedy?

    /// A way out of an error, kept apart from its message so that a caller can put it in its own terms
    /// (the command line names the option of the command at hand); ``description`` adds its text in
    /// parentheses. Callers recognise a remedy by its kind, never by its words.
    public struct Remedy: Hashable, Sendable {
        public var kind: Kind
        /// The way out in words, as the library says it.
        public var text: String

        public init(_ kind: Kind, _ text: String) {
            self.kind = kind
            self.text = text
        }

        /// Which way out a remedy names.
        public struct Kind: RawRepresentable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }

            /// Reading the values that are not of their attribute's type or range as no value, with a
            /// warning (`ValueReading.lenient`).
            public static let readLeniently = Kind(rawValue: "readLeniently")
            /// Naming a model the operation can use.
            public static let nameModel = Kind(rawValue: "nameModel")
            /// Allowing more than a size limit lets through.
            public static let raiseLimit = Kind(rawValue: "raiseLimit")
        }
    }

    /// One step of "where": a file, a line, an entity, an object, a key path.
    public enum Location: Hashable, Sendable, CustomStringConvertible {
        case file(String)
        case line(Int)
        case offset(Int)
        case entity(String)
        case object(String)
        case key(String)
        case other(String)

        public var description: String {
            switch self {
            case .file(let path): return path
            case .line(let line): return "line \(line)"
            case .offset(let offset): return "offset \(offset)"
            case .entity(let name): return name
            case .object(let id): return id
            case .key(let key): return key
            case .other(let text): return text
            }
        }
    }

    public init(
        _ code: Code, _ message: String, context: [Location] = [], underlying: [GraftError] = [],
        remedy: Remedy? = nil
    ) {
        self.code = code
        self.message = message
        self.context = context
        self.underlying = underlying
        self.remedy = remedy
    }

    /// The same error with `location` added as the outermost place.
    public func at(_ location: Location) -> GraftError {
        var copy = self
        copy.context.insert(location, at: 0)
        return copy
    }

    /// The same error with `remedy` as its way out.
    public func with(_ remedy: Remedy) -> GraftError {
        var copy = self
        copy.remedy = remedy
        return copy
    }

    /// The same error with a file path added as the outermost place.
    public func inFile(_ path: String) -> GraftError { at(.file(path)) }

    /// How many underlying errors ``description`` lists.
    public static let listedLimit = 25

    public var description: String {
        var text = ""
        for location in context {
            switch location {
            case .line(let line) where !text.isEmpty: text.removeLast(2); text += ":\(line): "
            case .offset(let offset) where !text.isEmpty: text.removeLast(2); text += "@\(offset): "
            default: text += "\(location): "
            }
        }
        text += message
        if let remedy { text += " (\(remedy.text))" }
        // A long list (every rule a million pasted objects break) is cut short; `underlying` has it all.
        for error in underlying.prefix(Self.listedLimit) {
            text += "\n  - " + error.description.replacingOccurrences(of: "\n", with: "\n    ")
        }
        if underlying.count > Self.listedLimit {
            text += "\n  - … and \(underlying.count - Self.listedLimit) more"
        }
        return text
    }
}

extension GraftError {
    /// Rethrows any error as a `GraftError`, keeping Graft's own errors as they are.
    public static func wrap(_ error: any Error, code: Code = .io) -> GraftError {
        if let error = error as? GraftError { return error }
        return GraftError(code, String(describing: error))
    }
}
