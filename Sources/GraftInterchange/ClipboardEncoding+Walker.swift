import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// The one reader of a clipboard document's shape, generic over the encoding's tokens: JSON, XML and
/// binary property lists are each a ``ClipboardTokenSource``, and this walker turns their tokens into the
/// document, typing every value by the document's own model as it goes.
///
/// It owns the member names, every check and every message. Members may come in any order: objects and
/// references that come before the model, and attributes or identities that come before their entity,
/// are skipped (checked as far as the encoding can) and read once what they need is known.
///
/// The objects are read one at a time (``beginObjects()``, ``nextObject(index:)``), so a streaming
/// reader can hand them on without holding the document; ``readHeader(collecting:)`` reads every other
/// member first, and reads the objects in passing when asked to collect them and the model came first.
struct ClipboardWalker<Source: ClipboardTokenSource> {
    var source: Source
    private(set) var schema: ClipboardSchema?
    /// The schema's entities, for the objects' hot path.
    private var entities: [ClipboardSchema.Entity] = []
    /// The model's entities as the document lists them, for ``visitor``.
    private var entityList: [Clipboard.EntityInfo] = []
    private var lastEntity = -1
    /// Where the objects are, when they were not read while the header was.
    private var objectsMark: Source.Mark?
    private var objects: Source.Container?
    /// Whether `format` and `version` have been read and are acceptable, so that a later error cannot be
    /// explained by the document being something else or newer.
    private(set) var headerChecked = false
    /// Called every ``ClipboardParts/progressInterval`` objects while they are skipped, so that a reader of a
    /// mapped file can hand back the pages behind it.
    var progress: (() -> Void)?
    /// Whether objects are read without their attribute values (skipped, their syntax checked, and
    /// given as none): for a pass that needs only the graph's shape.
    var skipsValues = false
    /// Whether objects are read without their relationships (skipped, their syntax checked, and given as
    /// none): for a pass that knows the graph's shape already.
    var skipsLinks = false
    /// Called, when set, with each object while ``readHeader(collecting:)`` goes over the objects to reach
    /// what follows them, where it would otherwise skip them: each read as ``nextObject(index:)`` reads it
    /// with ``skipsValues``, so that a pass over the graph's shape costs no pass of its own. Only where the
    /// model comes before the objects and the encoding does not count them up front; ``visitedObjects``
    /// says whether it was called.
    var visitor: ((_ object: Clipboard.Object, _ entities: [Clipboard.EntityInfo]) throws -> Void)?
    /// Whether ``readHeader(collecting:)`` handed the objects to ``visitor``.
    private(set) var visitedObjects = false
    /// Where one object's values and relationships are gathered before they are copied at their size
    /// (see ``own(_:)``).
    private var valueScratch = ClipboardScratchList<Clipboard.NamedValue>()
    private var linkScratch = ClipboardScratchList<Clipboard.Link>()
    private var idScratch = ClipboardScratchList<String>()
    /// Per entity and relationship, the targets of the last to-one read as a single id, shared with the
    /// next object that has the same.
    private var lastToOne: [[[String]]] = []

    init(_ source: Source) {
        self.source = source
    }

    // MARK: The document

    /// Reads every member but the objects, checks the header, and leaves the objects to
    /// ``beginObjects()``, or reads them into `parts.objects` when `collecting` and the model is known
    /// by the time they come.
    mutating func readHeader(collecting: Bool) throws -> ClipboardParts {
        var top = try source.beginDocument()
        var parts = ClipboardParts()
        var seen = ClipboardSeenSet()
        var deferredReferences: Source.Mark?
        while let key = try source.nextKey(&top, in: "the document") {
            let at = source.offset
            guard let member = ClipboardTopMember(key) else { throw unknownMember(key, in: "the document", at: at) }
            guard seen.insert(member.rawValue) else {
                throw source.error("the \(Source.memberWord) '\(member.name)' appears twice", at: at, context: [])
            }
            switch member {
            case .format:
                let format = try string("the format's name")
                if let problem = ClipboardHeader.formatProblem(format) { throw source.located(problem, at: at) }
                parts.format = format
            case .version:
                let version = try integer("the format version")
                if let problem = ClipboardHeader.versionProblem(version) { throw source.located(problem, at: at) }
                parts.version = version
            case .encoding:
                var section = try dictionary("the encoding section")
                var entries: [(key: String, value: String)] = []
                while let key = try source.nextKey(&section, in: "the encoding section") {
                    let name = String(decoding: key, as: UTF8.self)
                    entries.append((name, try string("how \(name) values are written")))
                }
                if let problem = ClipboardDeclaration.problem(entries, for: Source.encoding) {
                    throw source.located(GraftError(.unsupportedFormat, problem), at: at)
                }
                parts.declaration = entries
            case .model:
                try readModel(into: &parts)
            case .source:
                var section = try dictionary("the source")
                while let key = try source.nextKey(&section, in: "the source") {
                    guard ByteText.equals(key, "store") else { throw unknownMember(key, in: "the source") }
                    parts.sourceStore = try string("the source store's UUID")
                }
            case .roots:
                parts.roots = try ids("the roots")
            case .objects:
                parts.hasObjects = true
                if collecting && schema != nil {
                    parts.objects = try readAllObjects()
                } else {
                    try expect(.array, "the objects")
                    objectsMark = source.mark
                    parts.objectCount = try skipObjects()
                }
            case .references:
                if schema != nil {
                    parts.references = try readReferences()
                } else {
                    try expect(.array, "the references")
                    deferredReferences = source.mark
                    try source.skipValue()
                }
            }
            if parts.format != nil && parts.version != nil { headerChecked = true }
        }
        try source.endDocument()
        let end = source.offset
        if (deferredReferences != nil || objectsMark != nil) && schema == nil {
            throw source.error("the document has no 'model'", at: end, context: [])
        }
        let resume = source.mark
        if collecting, let objectsMark {
            source.seek(objectsMark)
            parts.objects = try readAllObjects()
            self.objectsMark = nil
        }
        if let deferredReferences {
            source.seek(deferredReferences)
            parts.references = try readReferences()
        }
        source.seek(resume)
        if let problem = parts.problem(Source.encoding) { throw source.located(problem, at: end) }
        return parts
    }

    /// Skips the objects (or hands them to ``visitor``), counting them and reporting ``progress`` as it goes.
    private mutating func skipObjects() throws -> Int {
        var list = try array("the objects")
        if let count = source.count(of: list) { return count }
        let visitor = schema != nil ? self.visitor : nil
        let skipped = (skipsValues, skipsLinks)
        (skipsValues, skipsLinks) = (true, false)
        defer { (skipsValues, skipsLinks) = skipped }
        var count = 0
        if let visitor, Self.runs > 1 {
            // Read on several threads in short runs, a few at a time, each run's objects handed on in order
            // as soon as the runs before it are: the pass takes the time of a part, and holds a few runs.
            let divisions = source.divisions(of: list, runs: Self.runs * Self.visitingRunsPerThread)
            if !divisions.isEmpty {
                let (entities, progress) = (entityList, self.progress)
                let resumption = try readObjects(list, divisions, wave: Self.runs) { objects in
                    for object in objects { try visitor(object, entities) }
                    count += objects.count
                    progress?()
                }
                switch resumption {
                case .done:
                    visitedObjects = true
                    return count
                case .fromStart:
                    // The first run missed: nothing was handed on, and the objects are read from the first.
                    break
                case .atObject(let rest):
                    list = rest
                    try visitor(try readObject(count), entityList)
                    count += 1
                }
            }
        }
        while try source.nextElement(&list, in: "the objects") {
            if let visitor { try visitor(try readObject(count), entityList) } else { try source.skipValue() }
            count += 1
            if count % ClipboardParts.progressInterval == 0 { progress?() }
        }
        visitedObjects = visitor != nil
        return count
    }

    /// Starts the objects; their number, when the encoding says it up front.
    mutating func beginObjects() throws -> Int? {
        if let objectsMark { source.seek(objectsMark) }
        let list = try array("the objects")
        objects = list
        return source.count(of: list)
    }

    /// The next object, or nil after the last; `index` is its position, for messages.
    mutating func nextObject(index: Int) throws -> Clipboard.Object? {
        guard var list = objects else { return nil }
        guard try source.nextElement(&list, in: "the objects") else {
            objects = nil
            return nil
        }
        objects = list
        return try readObject(index)
    }

    /// When the document's `format` or `version` rules it out, the error saying so; read leniently, so
    /// that it explains documents that fail elsewhere, wherever they say it.
    static func headerProblem(_ source: Source) -> GraftError? {
        var source = source
        guard var top = try? source.beginDocument() else { return nil }
        var format: (String, Int)?
        var version: (Int64, Int)?
        while let key = try? source.nextKey(&top, in: "the document") {
            let at = source.offset
            let kind = source.kind()
            let member = ClipboardTopMember(key)
            if member == .format, kind == .string, let text = try? source.string() {
                format = (String(decoding: text, as: UTF8.self), at)
            } else if member == .version, kind == .integer || kind == .number,
                let number = try? source.number(), let value = Self.integer(number)
            {
                version = (value, at)
            } else if (try? source.skipValue()) == nil {
                break
            }
        }
        if let (text, at) = format, let problem = ClipboardHeader.formatProblem(text) {
            return source.located(problem, at: at)
        }
        if let (value, at) = version, let problem = ClipboardHeader.versionProblem(value) {
            return source.located(problem, at: at)
        }
        return nil
    }

    // MARK: The model

    private mutating func readModel(into parts: inout ClipboardParts) throws {
        var model = try dictionary("the model")
        var entities: [Clipboard.EntityInfo]?
        while let key = try source.nextKey(&model, in: "the model") {
            if ByteText.equals(key, "entities") {
                var list: [Clipboard.EntityInfo] = []
                var array = try self.array("the model's entities")
                while try source.nextElement(&array, in: "the model's entities") { list.append(try readEntity()) }
                entities = list
            } else if ByteText.equals(key, "versionIdentifiers") {
                parts.versionIdentifiers = try ids("the model's version identifiers")
            } else if ByteText.equals(key, "contents") {
                parts.modelContents = try data("the model's contents")
            } else {
                throw unknownMember(key, in: "the model")
            }
        }
        let at = source.offset
        guard let entities else { throw source.error("the model has no 'entities'", at: at, context: []) }
        do {
            let schema = try ClipboardSchema(entities: entities)
            self.schema = schema
            self.entities = schema.entities
            lastToOne = schema.entities.map { Array(repeating: [], count: $0.relationships.count) }
            entityList = entities
        } catch let error as GraftError {
            throw source.located(error, at: at)
        }
        parts.entities = entities
    }

    private mutating func readEntity() throws -> Clipboard.EntityInfo {
        var entity = try dictionary("an entity")
        let start = source.offset
        var name: String?
        var hash: Data?
        var attributes: [Clipboard.AttributeInfo] = []
        var relationships: [Clipboard.RelationshipInfo] = []
        while let key = try source.nextKey(&entity, in: "an entity") {
            if ByteText.equals(key, "name") {
                name = try string("the entity's name")
            } else if ByteText.equals(key, "versionHash") {
                hash = try data("the entity's version hash")
            } else if ByteText.equals(key, "attributes") {
                var list = try array("the entity's attributes")
                while try source.nextElement(&list, in: "the entity's attributes") {
                    var attribute = try dictionary("an attribute")
                    var attributeName: String?
                    var type: AttributeType?
                    while let key = try source.nextKey(&attribute, in: "an attribute") {
                        if ByteText.equals(key, "name") {
                            attributeName = try string("the attribute's name")
                        } else if ByteText.equals(key, "type") {
                            let at = source.offset
                            let typeName = try string("the attribute's type")
                            guard let known = ClipboardValues.type(named: typeName) else {
                                throw source.error(
                                    "'\(ByteText.excerpt(typeName))' is not an attribute type", at: at, context: [])
                            }
                            type = known
                        } else {
                            throw unknownMember(key, in: "an attribute")
                        }
                    }
                    guard let attributeName, let type else {
                        throw source.error("an attribute needs a 'name' and a 'type'", at: nil, context: [])
                    }
                    attributes.append(.init(name: attributeName, type: type))
                }
            } else if ByteText.equals(key, "relationships") {
                var list = try array("the entity's relationships")
                while try source.nextElement(&list, in: "the entity's relationships") {
                    var relationship = try dictionary("a relationship")
                    var relationshipName: String?
                    var toMany: Bool?
                    var ordered = false
                    while let key = try source.nextKey(&relationship, in: "a relationship") {
                        if ByteText.equals(key, "name") {
                            relationshipName = try string("the relationship's name")
                        } else if ByteText.equals(key, "toMany") {
                            toMany = try bool("whether the relationship is to-many")
                        } else if ByteText.equals(key, "ordered") {
                            ordered = try bool("whether the relationship is ordered")
                        } else {
                            throw unknownMember(key, in: "a relationship")
                        }
                    }
                    guard let relationshipName, let toMany else {
                        throw source.error("a relationship needs a 'name' and 'toMany'", at: nil, context: [])
                    }
                    relationships.append(.init(name: relationshipName, isToMany: toMany, isOrdered: ordered))
                }
            } else {
                throw unknownMember(key, in: "an entity")
            }
        }
        guard let name, let hash else {
            throw source.error("an entity needs a 'name' and a 'versionHash'", at: start, context: [])
        }
        return Clipboard.EntityInfo(name: name, versionHash: hash, attributes: attributes, relationships: relationships)
    }

    // MARK: Objects and references

    private mutating func readAllObjects() throws -> [Clipboard.Object] {
        var list = try array("the objects")
        var objects: [Clipboard.Object] = []
        objects.reserveCapacity(source.count(of: list) ?? 0)
        if Self.runs > 1 {
            let divisions = source.divisions(of: list, runs: Self.runs)
            if !divisions.isEmpty {
                let resumption = readObjects(list, divisions, wave: divisions.count + 1) { read in
                    // The first run's objects taken as they are, not copied one by one.
                    if objects.isEmpty { objects = read } else { objects.append(contentsOf: read) }
                }
                switch resumption {
                case .done:
                    return objects
                case .fromStart:
                    break
                case .atObject(let rest):
                    list = rest
                    objects.append(try readObject(objects.count))
                }
            }
        }
        while try source.nextElement(&list, in: "the objects") { objects.append(try readObject(objects.count)) }
        return objects
    }

    // MARK: Objects in runs on several threads

    /// How many runs a long array of objects is read in at once.
    static var runs: Int { min(ProcessInfo.processInfo.activeProcessorCount, 8) }
    /// The fewest objects worth reading on a thread of their own.
    static var minimumRun: Int { 4096 }
    /// How many short runs per thread a pass that visits the objects reads them in, so that it holds only
    /// a few runs' objects at a time.
    static var visitingRunsPerThread: Int { 64 }

    /// How a run of objects ended.
    private enum RunEnd {
        /// At the next run's place: the runs joined up.
        case met
        /// At the end of the array.
        case ended
        /// Past the next run's place, or at an error: what follows is read again, one object at a time.
        case missed
    }

    /// Where reading one object at a time goes on after the runs.
    private enum Resumption {
        /// Nowhere: the runs read every object, and the source is after the array.
        case done
        /// From the first object: the first run did not meet the second.
        case fromStart
        /// From the object the source is at, with the array's state there: the first run that did not
        /// meet the next, or failed, starts there.
        case atObject(Source.Container)
    }

    /// Reads the objects in runs, one from each division's place, `wave` runs at a time on as many threads,
    /// and hands each run's objects to `take` in order for as long as each run ends exactly where the next
    /// begins. What no run read for certain is left to be read one object at a time, so that an error is
    /// always met, and told, as one thread reading in order meets it.
    private mutating func readObjects(
        _ list: Source.Container, _ divisions: [ClipboardDivision<Source>], wave: Int,
        taking take: ([Clipboard.Object]) throws -> Void
    ) rethrows -> Resumption {
        typealias Run = (objects: [Clipboard.Object], end: RunEnd, source: Source)
        let count = divisions.count + 1
        // Each thread reads copies of its own; the scratch lists, the one thing the walker shares with its
        // copies, each copy replaces with its own the first time it gathers.
        nonisolated(unsafe) let start = self
        nonisolated(unsafe) let (list, divisions) = (list, divisions)
        for first in stride(from: 0, to: count, by: wave) {
            let size = min(wave, count - first)
            nonisolated(unsafe) var runs = [Run?](repeating: nil, count: size)
            runs.withUnsafeMutableBufferPointer { results in
                nonisolated(unsafe) let results = results
                DispatchQueue.concurrentPerform(iterations: size) { offset in
                    let run = first + offset
                    var walker = start
                    if run > 0 { walker.unshare() }
                    var list = list
                    if run > 0 {
                        walker.source = divisions[run - 1].source
                        list = divisions[run - 1].container
                    }
                    let stop = run < divisions.count ? divisions[run].place : nil
                    var read: [Clipboard.Object] = []
                    var end = RunEnd.missed
                    do {
                        // A later run starts at its first object; the first run, before its first.
                        if run > 0 { read.append(try walker.readObject(read.count)) }
                        end = .ended
                        while try walker.source.nextElement(&list, in: "the objects") {
                            if let stop {
                                let place = walker.source.elementPlace(list)
                                if place >= stop {
                                    end = place == stop ? .met : .missed
                                    break
                                }
                            }
                            read.append(try walker.readObject(read.count))
                        }
                    } catch {
                        end = .missed
                    }
                    results[offset] = (read, end, walker.source)
                }
            }
            for offset in 0..<size {
                let run = first + offset
                // Every run leaves its result; one that did not would count as missed, read again in order.
                let (read, end, source) = runs[offset] ?? ([], .missed, start.source)
                runs[offset] = nil
                guard end != .missed else {
                    guard run > 0 else { return .fromStart }
                    self.source = divisions[run - 1].source
                    return .atObject(divisions[run - 1].container)
                }
                try take(read)
                if end == .ended {
                    self.source = source
                    return .done
                }
            }
        }
        // The last run always ends, or misses.
        return .fromStart
    }

    /// Gives this copy tables of its own (``ClipboardSchema/unshared()``), for a run on another thread.
    private mutating func unshare() {
        guard let own = schema?.unshared() else { return }
        schema = own
        entities = own.entities
        lastToOne = own.entities.map { Array(repeating: [], count: $0.relationships.count) }
    }

    private mutating func readObject(_ index: Int) throws -> Clipboard.Object {
        let item = try readItem(index, of: .object)
        return Clipboard.Object(
            id: item.id, entity: entities[item.entity].name, attributes: item.values, relationships: item.links)
    }

    private mutating func readReferences() throws -> [Clipboard.Reference] {
        var list = try array("the references")
        var references: [Clipboard.Reference] = []
        references.reserveCapacity(source.count(of: list) ?? 0)
        while try source.nextElement(&list, in: "the references") {
            references.append(try readReference(references.count))
        }
        return references
    }

    private mutating func readReference(_ index: Int) throws -> Clipboard.Reference {
        let item = try readItem(index, of: .reference)
        return Clipboard.Reference(
            id: item.id, entity: entities[item.entity].name, identity: item.values, uri: item.uri)
    }

    /// What an object and a reference have in common: an id, an entity and values typed by it, and one
    /// more member (an object's relationships, a reference's URI).
    private enum ItemKind {
        case object, reference

        var what: String { self == .object ? "an object" : "a reference" }
        var values: String { self == .object ? "attributes" : "identity" }
        var valuesKey: StaticString { self == .object ? "attributes" : "identity" }
        var last: StaticString { self == .object ? "relationships" : "uri" }
        func label(_ index: Int) -> String { self == .object ? "objects[\(index)]" : "references[\(index)]" }
    }

    private struct Item {
        var id: String
        var entity: Int
        var values: [Clipboard.NamedValue]
        var links: [Clipboard.Link]
        var uri: String?
    }

    /// Reads an object or a reference; values (and relationships) that come before the entity are
    /// skipped and read once it is known.
    private mutating func readItem(_ index: Int, of kind: ItemKind) throws -> Item {
        guard var dictionary = try source.beginDictionary() else { throw mismatch(kind.what, .dictionary) }
        let start = source.offset
        var id: String?
        var entity = -1
        var values: [Clipboard.NamedValue] = []
        var links: [Clipboard.Link] = []
        var uri: String?
        var deferredValues: Source.Mark?
        var deferredLinks: Source.Mark?
        var seen: UInt8 = 0
        while let key = try source.nextKey(&dictionary, in: kind.what) {
            let member: UInt8 =
                ByteText.equals(key, "id")
                ? 1
                : ByteText.equals(key, "entity")
                    ? 2 : ByteText.equals(key, kind.valuesKey) ? 4 : ByteText.equals(key, kind.last) ? 8 : 0
            guard member != 0, seen & member == 0 else {
                throw member == 0
                    ? unknownMember(key, in: kind.what, context: [.object(id ?? kind.label(index))])
                    : twice(key, context: [.object(id ?? kind.label(index))])
            }
            seen |= member
            switch member {
            case 1:
                id = try string(kind == .object ? "the object's id" : "the reference's id")
            case 2:
                entity = try entityIndex(label: id ?? kind.label(index))
            case 4:
                if skipsValues && kind == .object {
                    try expect(.dictionary, "the \(kind.values)", context: [.object(id ?? kind.label(index))])
                    try source.skipValue()
                } else if entity >= 0 {
                    values = try readValues(entity: entity, label: id ?? kind.label(index), what: kind.values)
                } else {
                    try expect(.dictionary, "the \(kind.values)", context: [.object(id ?? kind.label(index))])
                    deferredValues = source.mark
                    try source.skipValue()
                }
            default:
                if kind == .reference {
                    uri = try string("the reference's URI")
                } else if skipsLinks {
                    try expect(.dictionary, "the relationships", context: [.object(id ?? kind.label(index))])
                    try source.skipValue()
                } else if entity >= 0 {
                    links = try readLinks(entity: entity, label: id ?? kind.label(index))
                } else {
                    try expect(.dictionary, "the relationships", context: [.object(id ?? kind.label(index))])
                    deferredLinks = source.mark
                    try source.skipValue()
                }
            }
        }
        guard let id, entity >= 0 else {
            throw source.error(
                "\(kind.what) needs an 'id' and an 'entity'", at: start, context: [.object(id ?? kind.label(index))])
        }
        if deferredValues != nil || deferredLinks != nil {
            let resume = source.mark
            if let deferredValues {
                source.seek(deferredValues)
                values = try readValues(entity: entity, label: id, what: kind.values)
            }
            if let deferredLinks {
                source.seek(deferredLinks)
                links = try readLinks(entity: entity, label: id)
            }
            source.seek(resume)
        }
        return Item(id: id, entity: entity, values: values, links: links, uri: uri)
    }

    private mutating func entityIndex(label: @autoclosure () -> String) throws -> Int {
        guard source.kind() == .string else {
            throw mismatch("the entity's name", .string, context: [.object(label())])
        }
        let at = source.offset
        let name = try source.string()
        guard let index = schema?.entity(bytes: name, last: lastEntity) else {
            throw source.error(ClipboardSchema.unknownEntity(name), at: at, context: [.object(label())])
        }
        lastEntity = index
        return index
    }

    // MARK: Values

    /// An object's attribute values or a reference's identity.
    private mutating func readValues(entity index: Int, label: String, what: String) throws -> [Clipboard.NamedValue] {
        let entity = entities[index]
        guard var dictionary = try source.beginDictionary() else {
            throw mismatch("the \(what)", .dictionary, context: [.object(label)])
        }
        // Gathered in the walker's scratch list, then moved into an array of their number: an object keeps
        // no room for the attributes it has no value for.
        let values = Self.own(&valueScratch)
        values.begin()
        var cursor = ClipboardSchema.Cursor()
        while let key = try source.nextKey(&dictionary, in: "the \(what)") {
            let at = source.offset
            let attribute = try entity.attribute(key, cursor: &cursor).mapError {
                source.error($0.message, at: at, context: $0.context(label))
            }.get()
            let name = entity.attributeNames[attribute]
            do {
                values.append(Clipboard.NamedValue(name, try value(entity.attributeTypes[attribute], label, name)))
            } catch let error as GraftError {
                throw error.within(object: label, key: name)
            }
        }
        return values.take()
    }

    /// One value, read as the attribute's type says.
    @inline(__always)
    private mutating func value(_ type: AttributeType, _ label: String, _ key: String) throws -> Value {
        let kind = source.kind()
        let start = source.offset
        func fail(_ message: String) -> GraftError {
            source.error(message, at: start, context: [.object(label), .key(key)])
        }
        switch type {
        case .integer16, .integer32, .integer64:
            guard kind == .integer || kind == .number else { break }
            switch try source.number() {
            case .text(let text, let isInteger):
                if isInteger, let integer = NumberText.int64(text) { return .integer(integer) }
                throw fail("'\(ByteText.excerpt(text))' is not an integer in −2⁶³ … 2⁶³−1")
            case .integer(let integer?): return .integer(integer)
            case .integer(nil): throw fail("the integer is outside −2⁶³ … 2⁶³−1")
            case .real: break
            }
        case .double, .float, .date:
            let seconds: Double
            switch kind {
            case .integer, .real, .number:
                switch try source.number() {
                case .text(let text, _):
                    guard let double = NumberText.double(text) ?? NumberText.nonFinite(text) else {
                        throw fail(
                            "'\(ByteText.excerpt(text))' is "
                                + (kind == .number ? "beyond the range of a double" : "not a number"))
                    }
                    seconds = double
                case .integer(let integer?): seconds = Double(integer)
                case .integer(nil): throw fail("the integer is outside −2⁶³ … 2⁶³−1")
                case .real(let double): seconds = double
                }
            case .string where Source.encoding == .json:
                let text = try source.string()
                guard let double = NumberText.nonFinite(text) else {
                    throw fail(
                        "'\(ByteText.excerpt(text))' is not a number; the only strings "
                            + "\(Wording.withArticle(ClipboardValues.typeName(type))) value may be are NaN, Infinity "
                            + "and -Infinity")
                }
                seconds = double
            case .date where type == .date:
                seconds = try source.date()
            default:
                return try mismatch(type, label, key)
            }
            return type == .date ? .date(Date(timeIntervalSinceReferenceDate: seconds)) : .double(seconds)
        case .boolean:
            if kind == .bool { return .bool(try source.bool()) }
        case .decimal:
            let text: UnsafeRawBufferPointer
            switch kind {
            case .string: text = Source.encoding == .plist ? ByteText.trimmed(try source.string()) : try source.string()
            case .integer, .number:
                switch try source.number() {
                case .text(let digits, _): text = digits
                case .integer(let integer?): return .decimal(Decimal(integer))
                case .integer(nil): throw fail("the integer is outside −2⁶³ … 2⁶³−1")
                case .real: return try mismatch(type, label, key)
                }
            default: return try mismatch(type, label, key)
            }
            switch ClipboardDecimal.parse(text) {
            case .success(let decimal): return .decimal(decimal)
            case .failure(let problem): throw fail("'\(ByteText.excerpt(text))' \(ClipboardDecimal.message(problem))")
            }
        case .string:
            if kind == .string {
                guard let string = ByteText.string(try source.string()) else {
                    throw fail("the string is not valid UTF-8")
                }
                return .string(string)
            }
            if kind == .data && Source.encoding == .plist {
                // A string XML cannot carry, as its UTF-8 bytes.
                guard let text = String(data: try source.data(), encoding: .utf8) else {
                    throw fail("the data is not UTF-8 text")
                }
                return .string(text)
            }
        case .binary, .transformable:
            if kind == .data { return .data(try source.data()) }
            if kind == .string && Source.encoding == .json { return try valueText(type, start, label, key) }
        case .uuid, .uri:
            if kind == .string { return try valueText(type, start, label, key) }
        case .undefined, .objectID, .composite:
            throw fail(ClipboardValueText.uncarried(type))
        }
        return try mismatch(type, label, key)
    }

    private mutating func valueText(
        _ type: AttributeType, _ start: Int, _ label: String, _ key: String
    ) throws
        -> Value
    {
        switch ClipboardValueText.value(try source.string(), type: type) {
        case .success(let value): return value
        case .failure(let problem):
            throw source.error(problem.message, at: start, context: [.object(label), .key(key)])
        }
    }

    private mutating func mismatch(_ type: AttributeType, _ label: String, _ key: String) throws -> Value {
        throw source.error(
            "expected \(Source.expected(type)) for \(Wording.withArticle(ClipboardValues.typeName(type))) attribute, "
                + "found \(source.describeNext())", at: source.offset, context: [.object(label), .key(key)])
    }

    private mutating func readLinks(entity index: Int, label: String) throws -> [Clipboard.Link] {
        let entity = entities[index]
        guard var dictionary = try source.beginDictionary() else {
            throw mismatch("the relationships", .dictionary, context: [.object(label)])
        }
        let links = Self.own(&linkScratch)
        links.begin()
        var cursor = ClipboardSchema.Cursor()
        while let key = try source.nextKey(&dictionary, in: "the relationships") {
            let at = source.offset
            let position = try entity.relationship(key, cursor: &cursor).mapError {
                source.error($0.message, at: at, context: $0.context(label))
            }.get()
            let name = entity.relationshipNames[position]
            let toMany = entity.relationships[position].isToMany
            let kind = source.kind()
            if kind == .string && !toMany {
                let target = try string("a target id")
                // Objects that come together often point to the same object (employees of a department,
                // to their department): they share one list.
                if let last = lastToOne[index][position].first, last == target {
                    links.append(Clipboard.Link(name, lastToOne[index][position]))
                } else {
                    let targets = [target]
                    lastToOne[index][position] = targets
                    links.append(Clipboard.Link(name, targets))
                }
            } else if kind == .array {
                let targets = try ids("the targets")
                if let problem = entity.targetsProblem(position, count: targets.count) {
                    throw source.error(problem, at: at, context: [.object(label), .key(name)])
                }
                links.append(Clipboard.Link(name, targets))
            } else {
                throw source.error(
                    toMany
                        ? "expected ids (\(Source.form(.array))) for a to-many relationship, found \(source.describeNext())"
                        : "expected an id (\(Source.form(.string))) for a to-one relationship, found "
                            + source.describeNext(), at: at, context: [.object(label), .key(name)])
            }
        }
        return links.take()
    }

    // MARK: Small pieces

    /// The scratch list, this walker's own: a copy of the walker (one read on another thread, say) makes
    /// its own the first time it gathers, rather than sharing the original's.
    @inline(__always)
    private static func own<Element>(_ list: inout ClipboardScratchList<Element>) -> ClipboardScratchList<Element> {
        if !isKnownUniquelyReferenced(&list) { list = ClipboardScratchList() }
        return list
    }

    private mutating func dictionary(_ what: @autoclosure () -> String) throws -> Source.Container {
        guard let container = try source.beginDictionary() else { throw mismatch(what(), .dictionary) }
        return container
    }

    private mutating func array(_ what: @autoclosure () -> String) throws -> Source.Container {
        guard let container = try source.beginArray() else { throw mismatch(what(), .array) }
        return container
    }

    /// Checks that the next value is of `kind`.
    private mutating func expect(
        _ kind: ClipboardTokenKind, _ what: @autoclosure () -> String,
        context: @autoclosure () -> [GraftError.Location] = []
    ) throws {
        guard source.kind() == kind else { throw mismatch(what(), kind, context: context()) }
    }

    private mutating func string(_ what: @autoclosure () -> String) throws -> String {
        try expect(.string, what())
        let at = source.offset
        guard let text = ByteText.string(try source.string()) else {
            throw source.error("\(what()) is not valid UTF-8", at: at, context: [])
        }
        return text
    }

    private mutating func ids(_ what: @autoclosure () -> String) throws -> [String] {
        var list = try array(what())
        if let count = source.count(of: list) {
            var ids: [String] = []
            ids.reserveCapacity(count)
            while try source.nextElement(&list, in: what()) { ids.append(try string("an id")) }
            return ids
        }
        // An encoding that does not count: gathered in the scratch list, then moved into an array of their number.
        let ids = Self.own(&idScratch)
        ids.begin()
        while try source.nextElement(&list, in: what()) { ids.append(try string("an id")) }
        return ids.take()
    }

    private mutating func integer(_ what: @autoclosure () -> String) throws -> Int64 {
        let kind = source.kind()
        guard kind == .integer || kind == .number else { throw mismatch(what(), .integer) }
        let at = source.offset
        let number = try source.number()
        guard let value = Self.integer(number) else {
            let found: String
            if case .text(let text, _) = number { found = ByteText.excerpt(text) } else { found = "a larger number" }
            throw source.error("expected \(what()) (\(Source.form(.integer))), found \(found)", at: at, context: [])
        }
        return value
    }

    private static func integer(_ number: ClipboardNumber) -> Int64? {
        switch number {
        case .text(let text, let isInteger): return isInteger ? NumberText.int64(ByteText.trimmed(text)) : nil
        case .integer(let value): return value
        case .real: return nil
        }
    }

    private mutating func bool(_ what: @autoclosure () -> String) throws -> Bool {
        try expect(.bool, what())
        return try source.bool()
    }

    /// Bytes: data, or base64 text in an encoding without data.
    private mutating func data(_ what: @autoclosure () -> String) throws -> Data {
        let kind = source.kind()
        let at = source.offset
        if kind == .data { return try source.data() }
        guard kind == .string && Source.encoding == .json else { throw mismatch(what(), .data) }
        guard let data = Base64.decode(try source.string()) else {
            throw source.error("\(what()) is not valid base64", at: at, context: [])
        }
        return data
    }

    private mutating func mismatch(
        _ what: String, _ kind: ClipboardTokenKind, context: [GraftError.Location] = []
    ) -> GraftError {
        source.error(
            "expected \(what) (\(Source.form(kind))), found \(source.describeNext())", at: source.offset,
            context: context)
    }

    private mutating func unknownMember(
        _ key: UnsafeRawBufferPointer, in what: String, at offset: Int? = nil, context: [GraftError.Location] = []
    ) -> GraftError {
        source.error(
            "\(what) has no \(Source.memberWord) '\(ByteText.excerpt(key))'", at: offset ?? source.offset,
            context: context)
    }

    private mutating func twice(_ key: UnsafeRawBufferPointer, context: [GraftError.Location]) -> GraftError {
        source.error(
            "the \(Source.memberWord) '\(ByteText.excerpt(key))' appears twice", at: source.offset, context: context)
    }
}

/// A list one object's values, relationships or targets are gathered in before they are moved into an
/// array of their number, so that arrays read from an encoding that does not count have no spare capacity
/// and the gathering allocates nothing once it has grown.
///
/// Each copy of the walker gathers in its own (``ClipboardWalker``'s `own(_:)`); what an error left in it
/// is dropped by the next ``begin()``.
final class ClipboardScratchList<Element> {
    private var base = UnsafeMutablePointer<Element>.allocate(capacity: 16)
    private var capacity = 16
    private var count = 0

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    /// Empties the list.
    @inline(__always)
    func begin() {
        if count > 0 { base.deinitialize(count: count) }
        count = 0
    }

    @inline(__always)
    func append(_ element: Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    private func grow() {
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = larger
        capacity *= 2
    }

    /// The elements, moved into an array of their number; the list is left empty, and gives back the room
    /// of a list longer than ``keptCapacity`` (the roots of a large document), which it would otherwise
    /// hold for the rest of the read.
    ///
    /// Reserved and appended to rather than made with `Array(unsafeUninitializedCapacity:)`, whose
    /// allocation the standard library keeps out of line and unspecialised: it looks up the array type's
    /// metadata at run time on every call, a shared table the reading threads then contend for.
    @inline(__always)
    func take() -> [Element] {
        let taken = count
        count = 0
        guard taken > 0 else { return [] }
        var elements: [Element] = []
        elements.reserveCapacity(taken)
        for offset in 0..<taken { elements.append((base + offset).move()) }
        if capacity > Self.keptCapacity { shrink() }
        return elements
    }

    /// The most elements whose room the list keeps between uses.
    static var keptCapacity: Int { 4096 }

    private func shrink() {
        base.deallocate()
        capacity = 16
        base = UnsafeMutablePointer<Element>.allocate(capacity: capacity)
    }
}
