internal import CLibXML2
import Foundation
@_spi(GraftInternal) import GraftCore
import GraftGraph
import GraftModel

/// The SAX pass that turns each `<object>` into a snapshot and hands it on.
final class SnapshotPass: SAXPass {
    private let tables: ReadTables
    private let ids: ObjectIDTable
    /// Whether to check that referenced objects are of the relationship's destination (or a subentity).
    private let checkDestinations: Bool
    /// What to do with values that are not of their attribute's type or range.
    private let refusals: ValueRefusals
    private let body: (Snapshot) throws -> Void
    /// When the document is read once: the objects set aside for a second parse. Ids are then added to
    /// `ids` as their objects start, and an object whose own key or a reference is not settled yet (an
    /// object further on, see `ObjectIDTable.insertKeying`) is set aside rather than handed on.
    private let deferring: DeferredObjects?
    /// The root entity's index, by entity index (for `deferring`).
    private let roots: [Int]
    /// By relationship slot: whether the consumer leaves the relationship out (empty when it reads all).
    /// Such a relationship is handed on `.unloaded`, its ids only checked: at once when their objects
    /// were read, else (reading once) noted in `forward`.
    private let leftOut: [Bool]
    /// When the document is read once: the ids further on that relationships left out name.
    private let forward: ForwardReferences?
    /// Whether the pass reads objects set aside (whose `<?graft-line N?>` say their lines).
    private var isReplaying = false
    /// Whether the object being read is set aside.
    @exclusivity(unchecked) private var isDeferred = false
    /// Where the object being read starts, counting from the end of the one before, and on which line.
    @exclusivity(unchecked) private var boundary = 0
    @exclusivity(unchecked) private var boundaryLine = 1

    private enum Place { case outside, database, object, attribute, relationship, skipping }
    @exclusivity(unchecked) private var place = Place.outside
    @exclusivity(unchecked) private var depth = 0
    /// The depth at which skipping (of `<databaseInfo>`) ends.
    @exclusivity(unchecked) private var skipUntil = 0
    /// The object being read. Between objects, each entity's snapshot waits in `spare` (the current one
    /// is swapped out of it), so that its arrays are reused object to object rather than copied from the
    /// template and thrown away.
    @exclusivity(unchecked) private var snapshot: Snapshot
    @exclusivity(unchecked) private var spare: [Snapshot]
    /// The entity whose place in `spare` `snapshot` came from.
    @exclusivity(unchecked) private var snapshotEntity = 0
    @exclusivity(unchecked) private var entity = 0
    @exclusivity(unchecked) private var attribute = 0
    @exclusivity(unchecked) private var attributeKind = XMLValueKind.string
    /// Whether the current attribute's value was refused already (written as another type), and is read
    /// as no value.
    @exclusivity(unchecked) private var attributeRefused = false
    @exclusivity(unchecked) private var attributeHint = 0
    @exclusivity(unchecked) private var relationshipHint = 0
    private let text = ByteBuffer(capacity: 4096)
    /// The current object's id, for error messages.
    private let objectID = ByteBuffer(capacity: 64)

    init(
        url: URL, path: String, tables: ReadTables, ids: ObjectIDTable, checkDestinations: Bool,
        refusals: ValueRefusals, leavingOut leftOut: [Bool] = [], deferring: DeferredObjects? = nil,
        forward: ForwardReferences? = nil, body: @escaping (Snapshot) throws -> Void
    ) {
        self.deferring = deferring
        self.leftOut = leftOut
        self.forward = forward
        roots = tables.model.descriptions.map(\.rootIndex)
        self.tables = tables
        self.ids = ids
        self.checkDestinations = checkDestinations
        self.refusals = refusals
        self.body = body
        spare = tables.templates
        snapshot = Snapshot(ref: ObjectRef(entity: 0, key: 0), attributes: [], relationships: [])
        if !spare.isEmpty { swap(&snapshot, &spare[0]) }
        super.init(url: url, path: path)
    }

    private func handler() -> xmlSAXHandler {
        var handler = Self.baseHandler()
        // `_withUnsafeGuaranteedRef` spares a retain and a release per callback: the pass outlives the parse.
        handler.startElementNs = { context, localName, _, _, _, _, attributeCount, _, attributes in
            Unmanaged<SnapshotPass>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                $0.start(localName!, SAXAttributes(pointer: attributes, count: Int(attributeCount)))
            }
        }
        handler.endElementNs = { context, _, _, _ in
            Unmanaged<SnapshotPass>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.end() }
        }
        handler.characters = { context, characters, length in
            Unmanaged<SnapshotPass>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                if $0.place == .attribute { $0.text.append(characters!, count: Int(length)) }
            }
        }
        handler.cdataBlock = handler.characters
        // The lines of set-aside objects, when they are parsed again (see `DeferredObjects`).
        handler.processingInstruction = { context, target, data in
            Unmanaged<SnapshotPass>.fromOpaque(context!)._withUnsafeGuaranteedRef { pass in
                guard pass.isReplaying, let target, let data, String(cString: target) == DeferredObjects.lineTarget,
                    let line = Int(String(cString: data))
                else { return }
                pass.lineShift = line - pass.parserLine
            }
        }
        return handler
    }

    /// Reads the document, handing on its snapshots.
    func run() throws { try run(handler()) }

    /// Reads the objects `deferred` set aside, once every id is known, handing on their snapshots.
    func run(replaying deferred: DeferredObjects) throws {
        isReplaying = true
        try run(handler()) { feed in try deferred.replay(feed) }
    }

    // MARK: Errors

    private var currentObject: String { Bytes.string(objectID.bytes) }

    private func objectError(_ code: GraftError.Code, _ message: String, key: String? = nil) -> GraftError {
        var context: [GraftError.Location] = [
            .file(path), .line(line), .entity(tables.entityName(entity)), .object(currentObject),
        ]
        if let key { context.append(.key(key)) }
        return GraftError(code, message, context: context)
    }

    // MARK: Elements

    private func start(_ name: UnsafePointer<UInt8>, _ attributes: SAXAttributes) {
        depth += 1
        switch place {
        case .skipping:
            return
        case .outside:
            place = .database
            if deferring != nil { markBoundary() }
        case .database:
            if Bytes.equal(name, "object") {
                startObject(attributes)
            } else if Bytes.equal(name, "databaseInfo") {
                place = .skipping
                skipUntil = depth
            } else {
                fail(error(.malformedInput, "unexpected element <\(String(cString: name))> in <database>"))
            }
        case .object:
            if Bytes.equal(name, "attribute") {
                startAttribute(attributes)
            } else if Bytes.equal(name, "relationship") {
                readRelationship(attributes)
            } else {
                fail(objectError(.malformedInput, "unexpected element <\(String(cString: name))> in <object>"))
            }
        case .attribute, .relationship:
            fail(objectError(.malformedInput, "unexpected element <\(String(cString: name))> inside a property"))
        }
    }

    private func end() {
        defer { depth -= 1 }
        switch place {
        case .skipping:
            if depth == skipUntil {
                place = .database
                if deferring != nil { markBoundary() }
            }
        case .attribute:
            finishAttribute()
            if place == .attribute { place = .object }
        case .relationship:
            place = .object
        case .object:
            place = .database
            do {
                if let deferring {
                    if isDeferred { try deferring.add(from: boundary, to: byteOffset, line: boundaryLine) }
                    markBoundary()
                    if isDeferred {
                        isDeferred = false
                        return
                    }
                }
                try body(snapshot)
            } catch {
                fail(error)
            }
        case .database:
            place = .outside
        case .outside:
            break
        }
    }

    /// Notes that the next object's text starts here.
    private func markBoundary() {
        boundary = byteOffset
        boundaryLine = line
    }

    private func startObject(_ attributes: SAXAttributes) {
        objectID.removeAll()
        guard let id = attributes.value("id") else {
            fail(error(.malformedInput, "an <object> without an id"))
            return
        }
        objectID.append(id)
        guard let type = attributes.value("type") else {
            fail(error(.malformedInput, "the object has no type", [.object(currentObject)]))
            return
        }
        guard let entity = tables.entity(type.bytePointer, type.count) else {
            fail(
                error(
                    .modelMismatch, "the object's type '\(Bytes.excerpt(type))' is not an entity of the model",
                    [.object(currentObject)]))
            return
        }
        let key: Int64
        if deferring != nil {
            switch ids.insertKeying(id.bytePointer, id.count, entity: Int32(entity), root: { roots[$0] }) {
            case .settled(let settled):
                key = settled
            case .unsettled:
                isDeferred = true
                key = 0
            case .duplicate:
                fail(
                    error(
                        .malformedInput, "the id '\(Bytes.excerpt(id))' is used by two objects",
                        [.object(currentObject)]))
                return
            case .contradicted:
                fail(OrderedReadNeeded())
                return
            }
        } else {
            guard let found = ids.lookup(id.bytePointer, id.count), found.entity == entity else {
                fail(
                    error(
                        .malformedInput,
                        "the object is not where the first pass saw it (did the file change while it was read?)",
                        [.object(currentObject)]))
                return
            }
            key = found.key
        }
        self.entity = entity
        startSnapshot(entity: entity, key: key)
        attributeHint = Int(tables.entities[entity].firstAttribute)
        relationshipHint = Int(tables.entities[entity].firstRelationship)
        place = .object
    }

    /// Makes `snapshot` an empty object of `entity` (as its template is), reusing its storage.
    private func startSnapshot(entity: Int, key: Int64) {
        if snapshotEntity != entity {
            swap(&snapshot, &spare[snapshotEntity])
            swap(&snapshot, &spare[entity])
            snapshotEntity = entity
        }
        snapshot.reset(to: ObjectRef(entity: entity, key: key), entity: tables.model.descriptions[entity])
    }

    private func startAttribute(_ attributes: SAXAttributes) {
        if isDeferred {
            place = .relationship  // nothing to read: the object is parsed again later
            return
        }
        guard let name = attributes.value("name") else {
            fail(objectError(.malformedInput, "an <attribute> without a name"))
            return
        }
        guard let position = tables.attribute(name.bytePointer, name.count, in: entity, hint: attributeHint) else {
            fail(
                objectError(
                    .modelMismatch, "\(tables.entityName(entity)) has no attribute '\(Bytes.excerpt(name))'",
                    key: Bytes.string(name)))
            return
        }
        attribute = position
        attributeHint = position + 1
        guard let type = attributes.value("type") else {
            fail(
                objectError(
                    .malformedInput, "the attribute has no type", key: tables.attributeName(position, in: entity)))
            return
        }
        let slot = tables.attributes[position]
        if let expected = slot.kind, tables.isOwnKind(type.bytePointer, type.count, slot: position) {
            attributeKind = expected
        } else {
            guard let kind = XMLValueKind.named(type.bytePointer, type.count) else {
                fail(
                    objectError(
                        .malformedInput, "unknown attribute type '\(Bytes.excerpt(type))'",
                        key: tables.attributeName(position, in: entity)))
                return
            }
            attributeRefused = false
            if let expected = slot.kind, kind != expected {
                let compatible = kind == .base64String ? slot.type == .string : kind.family == expected.family
                if !compatible {
                    refuse(
                        UnreadableValue(
                            "a value written as \(kind.spelling)", "is not \(Wording.withArticle("\(slot.type)")) value"
                        ),
                        attribute: position)
                    attributeRefused = true
                }
            }
            attributeKind = kind
        }
        text.removeAll()
        place = .attribute
    }

    private func finishAttribute() {
        let slot = tables.attributes[attribute]
        if slot.isTransient || attributeRefused { return }
        do {
            snapshot.attributes[Int(slot.index)] = try decode(text.bytes, type: slot.type)
        } catch let refused as UnreadableValue {
            refuse(refused, attribute: attribute)
        } catch let failure as GraftError {
            fail(objectError(failure.code, failure.message, key: tables.attributeName(attribute, in: entity)))
        } catch {
            fail(error)
        }
    }

    /// A value the attribute at `position` cannot hold: an error, or (reading leniently) no value.
    private func refuse(_ refused: UnreadableValue, attribute position: Int) {
        let slot = tables.attributes[position]
        let name = tables.attributeName(position, in: entity)
        do {
            try refusals.refuse(
                refused, entity: tables.entityName(entity), attribute: name, type: slot.type, object: currentObject,
                slot: .init(entity: snapshot.ref.entity, attribute: Int(slot.index), key: snapshot.ref.key)
            ) {
                objectError(.typeMismatch, refused.message, key: name).with(ValueRefusals.remedy)
            }
            snapshot.attributes[Int(slot.index)] = nil
        } catch {
            fail(error)
        }
    }

    /// An attribute's text as the value its model type holds.
    ///
    /// - Throws: `UnreadableValue` for text that is not a value of the type, or is outside its range.
    private func decode(_ bytes: UnsafeRawBufferPointer, type: AttributeType) throws -> Value {
        func found() -> String { "the text '\(Bytes.excerpt(bytes))'" }
        func bad() -> UnreadableValue { .notA(type, found: found()) }
        switch type {
        case .integer16, .integer32, .integer64:
            guard let integer = ValueText.parseInteger(bytes) else {
                // Digits beyond Int64 are a number out of range, not text of another kind.
                let digits = Bytes.string(ByteText.trimmed(bytes)).drop { $0 == "-" || $0 == "+" }
                if !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) {
                    throw UnreadableValue.outOfRange(type, found: found())
                }
                throw bad()
            }
            guard type.integerRange!.contains(integer) else {
                throw UnreadableValue.outOfRange(type, found: "\(integer)")
            }
            return .integer(integer)
        case .double:
            guard let number = ValueText.parseDouble(bytes) else { throw bad() }
            return .double(number)
        case .float:
            // Read as single precision, as Core Data keeps Float attributes.
            if let single = ValueText.parseFloat(bytes) { return .double(Double(single)) }
            guard let number = ValueText.parseDouble(bytes) else { throw bad() }
            let single = Float(Bytes.string(ByteText.trimmed(bytes))) ?? Float(number)
            // A finite number that single precision cannot hold would become infinity.
            if single.isInfinite && number.isFinite { throw UnreadableValue.outOfRange(type, found: found()) }
            return .double(Double(single))
        case .decimal:
            guard let decimal = ValueText.parseDecimal(bytes) else {
                if ValueText.isDecimalNumber(Bytes.string(ByteText.trimmed(bytes))) {
                    throw UnreadableValue(
                        found(), "is beyond what a Decimal holds exactly (38 digits, 10⁻¹²⁸ to 10¹⁶⁵)")
                }
                throw bad()
            }
            return .decimal(decimal)
        case .string:
            if attributeKind == .base64String {
                guard let data = Base64.decode(bytes) else { throw UnreadableValue(found(), "is not base64") }
                guard let string = String(validating: data, as: UTF8.self) else {
                    throw UnreadableValue("base64 of \(Wording.counted(data.count, "byte"))", "is not UTF-8 text")
                }
                return .string(string)
            }
            return .string(Bytes.string(bytes))
        case .boolean:
            guard let bool = ValueText.parseBool(bytes) else {
                throw UnreadableValue(found(), "is not a Boolean value (0 or 1)")
            }
            return .bool(bool)
        case .date:
            guard let seconds = ValueText.parseDate(bytes) else {
                throw UnreadableValue(found(), "is not a date (seconds since 2001)")
            }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .binary, .transformable:
            guard let data = Base64.decode(bytes) else { throw UnreadableValue(found(), "is not base64") }
            return .data(data)
        case .uuid:
            guard let uuid = UUID(uuidString: Bytes.string(ByteText.trimmed(bytes))) else { throw bad() }
            return .uuid(uuid)
        case .uri:
            guard let uri = URL(string: Bytes.string(ByteText.trimmed(bytes))) else { throw bad() }
            return .uri(uri)
        case .objectID, .undefined, .composite:
            throw GraftError(.unsupportedFormat, "Graft does not read \(type) attributes from XML stores")
        }
    }

    private func readRelationship(_ attributes: SAXAttributes) {
        place = .relationship
        if isDeferred { return }
        guard let name = attributes.value("name") else {
            fail(objectError(.malformedInput, "a <relationship> without a name"))
            return
        }
        guard let position = tables.relationship(name.bytePointer, name.count, in: entity, hint: relationshipHint)
        else {
            fail(
                objectError(
                    .modelMismatch, "\(tables.entityName(entity)) has no relationship '\(Bytes.excerpt(name))'",
                    key: Bytes.string(name)))
            return
        }
        relationshipHint = position + 1
        let slot = tables.relationships[position]
        if slot.isTransient { return }
        // An empty relationship is already empty in the template.
        guard let idrefs = attributes.value("idrefs") else { return }
        if !leftOut.isEmpty && leftOut[position] {
            checkLeftOut(idrefs, position: position)
            return
        }
        let accepts = tables.accepts.baseAddress! + Int(slot.accepts)
        var single: ObjectRef?
        var many: [ObjectRef] = []
        var reused = false
        if slot.isToMany, case .toMany(let existing) = snapshot.relationships[Int(slot.index)], existing.isEmpty,
            existing.capacity > 0
        {
            // The storage an earlier object's to-many left (emptied when this object started): take it out
            // of the snapshot, so that it is uniquely referenced, and put it back below.
            snapshot.relationships[Int(slot.index)] = .unloaded
            many = existing
            reused = true
        }
        defer {
            // After a failure, leave the relationship empty, as it was.
            if reused, case .unloaded = snapshot.relationships[Int(slot.index)] {
                snapshot.relationships[Int(slot.index)] = .toMany([])
            }
        }
        var count = 0
        var words = ByteText.Words(idrefs)
        while let (id, length) = words.next() {
            let found = ids.lookup(id, length)
            if deferring != nil && (found?.key ?? -1) < 0 {
                // An object further on, or one whose key is not settled yet: read this one again later.
                isDeferred = true
                return
            }
            guard let target = found else { return failUnknownID(id, length, position: position) }
            if checkDestinations && !accepts[target.entity] {
                return failWrongEntity(id, length, target.entity, position: position)
            }
            let ref = ObjectRef(entity: target.entity, key: target.key)
            count += 1
            if slot.isToMany {
                if many.isEmpty { many.reserveCapacity(idrefs.count / 5 + 1) }
                many.append(ref)
            } else {
                single = ref
            }
        }
        if slot.isToMany {
            if count > 0 {
                snapshot.relationships[Int(slot.index)] = .toMany(many)
            } else if reused {
                snapshot.relationships[Int(slot.index)] = .toMany(many)  // empty, keeping its storage
            }
        } else {
            guard count <= 1 else { return failTooMany(count, position: position) }
            if count == 1 { snapshot.relationships[Int(slot.index)] = .toOne(single) }
        }
    }

    /// Checks the ids of a relationship the consumer leaves out, which is handed on `.unloaded`: each
    /// names an object of the destination (one further on, when reading once, is noted in `forward`, or
    /// sets the object aside when its id is not `z<number>`), and a to-one names one at most.
    private func checkLeftOut(_ idrefs: UnsafeRawBufferPointer, position: Int) {
        let slot = tables.relationships[position]
        let accepts = tables.accepts.baseAddress! + Int(slot.accepts)
        var count = 0
        var words = ByteText.Words(idrefs)
        while let (id, length) = words.next() {
            count += 1
            guard let found = ids.lookup(id, length) else {
                if let forward, let number = ObjectIDs.number(id, length) {
                    forward.note(number, row: slot.accepts)
                    continue
                }
                if deferring != nil {
                    isDeferred = true
                    return
                }
                return failUnknownID(id, length, position: position)
            }
            if checkDestinations && !accepts[found.entity] {
                return failWrongEntity(id, length, found.entity, position: position)
            }
        }
        guard slot.isToMany || count <= 1 else { return failTooMany(count, position: position) }
        snapshot.relationships[Int(slot.index)] = .unloaded
    }
    /// Fails with the id at `bytes` (`count` bytes), in the relationship at `position`, that names no object.
    private func failUnknownID(_ bytes: UnsafePointer<UInt8>, _ count: Int, position: Int) {
        fail(
            objectError(
                .malformedInput, "refers to '\(Bytes.string(bytes, count))', which is not the id of any object",
                key: tables.relationshipName(position, in: entity)))
    }

    /// Fails with the id at `bytes` (`count` bytes), in the relationship at `position`, that names an object
    /// of `found`, an entity the relationship's destination does not include.
    private func failWrongEntity(_ bytes: UnsafePointer<UInt8>, _ count: Int, _ found: Int, position: Int) {
        fail(
            objectError(
                .typeMismatch,
                "refers to \(Bytes.string(bytes, count)), a \(tables.entityName(found)), "
                    + "which is not a kind of \(tables.destinationName(position))",
                key: tables.relationshipName(position, in: entity)))
    }

    /// Fails with the to-one at `position` that lists `count` objects.
    private func failTooMany(_ count: Int, position: Int) {
        fail(
            objectError(
                .malformedInput, "a to-one relationship lists \(count) objects",
                key: tables.relationshipName(position, in: entity)))
    }
}
