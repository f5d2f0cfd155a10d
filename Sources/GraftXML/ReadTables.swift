import GraftGraph
import GraftModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The model as the reader matches names against it: entity names as Core Data writes them (in
/// capitals), property names in lower case, and each entity's empty snapshot.
///
/// Names match byte for byte first (the written form, then the model's own spelling), then ignoring
/// case, so hand-edited files (`saveSlices` in `atomlib`) read too.
///
/// The tables the SAX callbacks consult for every element are plain data in buffers allocated once, so
/// that looking a name up costs no reference counting.
final class ReadTables {
    /// A run of bytes in `names`.
    struct Name {
        var start: Int32
        var length: Int32
    }

    struct AttributeSlot {
        /// Position in the entity's `attributes` (and the snapshot's).
        var index: Int32
        var type: AttributeType
        var kind: XMLValueKind?
        var isTransient: Bool
        var written: Name
        var exact: Name
        /// The spelling of `kind`, for the common case of a document that agrees with the model.
        var kindSpelling: Name
    }

    struct RelationshipSlot {
        var index: Int32
        var isToMany: Bool
        var isTransient: Bool
        var destination: Int32
        /// Where this relationship's row of `accepts` starts: whether an object of each entity may be
        /// referenced (the destination and its subentities).
        var accepts: Int32
        var written: Name
        var exact: Name
    }

    struct EntitySlot {
        var firstAttribute: Int32
        var attributeCount: Int32
        var firstRelationship: Int32
        var relationshipCount: Int32
        var written: Name
        var exact: Name
    }

    let model: Model
    let entityCount: Int
    let names: UnsafeMutableBufferPointer<UInt8>
    let entities: UnsafeMutableBufferPointer<EntitySlot>
    let attributes: UnsafeMutableBufferPointer<AttributeSlot>
    let relationships: UnsafeMutableBufferPointer<RelationshipSlot>
    let accepts: UnsafeMutableBufferPointer<Bool>
    /// Each entity's empty snapshot.
    let templates: [Snapshot]
    @exclusivity(unchecked) private var lastEntity = 0

    init(model: Model) {
        self.model = model
        let descriptions = model.descriptions
        entityCount = descriptions.count
        var nameBytes: [UInt8] = []
        func name(_ text: String) -> Name {
            let start = nameBytes.count
            nameBytes.append(contentsOf: text.utf8)
            return Name(start: Int32(start), length: Int32(nameBytes.count - start))
        }
        var entitySlots: [EntitySlot] = []
        var attributeSlots: [AttributeSlot] = []
        var relationshipSlots: [RelationshipSlot] = []
        var acceptRows: [Bool] = []
        var templates: [Snapshot] = []
        for entity in descriptions {
            entitySlots.append(
                EntitySlot(
                    firstAttribute: Int32(attributeSlots.count), attributeCount: Int32(entity.attributes.count),
                    firstRelationship: Int32(relationshipSlots.count),
                    relationshipCount: Int32(entity.relationships.count), written: name(entity.name.uppercased()),
                    exact: name(entity.name)))
            for (index, attribute) in entity.attributes.enumerated() {
                let kind = XMLValueKind(attribute.type)
                attributeSlots.append(
                    AttributeSlot(
                        index: Int32(index), type: attribute.type, kind: kind, isTransient: attribute.isTransient,
                        written: name(attribute.name.lowercased()), exact: name(attribute.name),
                        kindSpelling: name(kind?.spelling ?? "")))
            }
            for (index, relationship) in entity.relationships.enumerated() {
                let destination = model.destination(of: relationship)
                let row = acceptRows.count
                acceptRows.append(contentsOf: repeatElement(false, count: descriptions.count))
                acceptRows[row + destination.index] = true
                for descendant in destination.descendantIndices { acceptRows[row + descendant] = true }
                relationshipSlots.append(
                    RelationshipSlot(
                        index: Int32(index), isToMany: relationship.isToMany, isTransient: relationship.isTransient,
                        destination: Int32(destination.index), accepts: Int32(row),
                        written: name(relationship.name.lowercased()), exact: name(relationship.name)))
            }
            var template = Snapshot(entity: entity, key: 0)
            template.ref = ObjectRef(entity: entity.index, key: 0)
            templates.append(template)
        }
        func buffer<T>(_ array: [T]) -> UnsafeMutableBufferPointer<T> {
            let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: max(array.count, 1))
            _ = buffer.initialize(from: array)
            return UnsafeMutableBufferPointer(rebasing: buffer[0..<array.count])
        }
        names = buffer(nameBytes)
        entities = buffer(entitySlots)
        attributes = buffer(attributeSlots)
        relationships = buffer(relationshipSlots)
        accepts = buffer(acceptRows)
        self.templates = templates
    }

    deinit {
        names.deallocate()
        entities.deallocate()
        attributes.deallocate()
        relationships.deallocate()
        accepts.deallocate()
    }

    @inline(__always)
    private func matches(_ pointer: UnsafePointer<UInt8>, _ length: Int, _ name: Name) -> Bool {
        Int(name.length) == length && Bytes.equal(pointer, names.baseAddress! + Int(name.start), length)
    }

    private func string(_ name: Name) -> String {
        Bytes.string(UnsafeRawBufferPointer(start: names.baseAddress! + Int(name.start), count: Int(name.length)))
    }

    /// The entity an `<object type="…">` names.
    @inline(__always)
    func entity(_ pointer: UnsafePointer<UInt8>, _ length: Int) -> Int? {
        guard entityCount > 0 else { return nil }
        if matches(pointer, length, entities[lastEntity].written) { return lastEntity }
        for index in 0..<entityCount where matches(pointer, length, entities[index].written) {
            lastEntity = index
            return index
        }
        for index in 0..<entityCount where matches(pointer, length, entities[index].exact) { return index }
        let upper = Bytes.string(pointer, length).uppercased()
        return (0..<entityCount).first { string(entities[$0].written) == upper }
    }

    /// The slot (in `attributes`) of the attribute `<attribute name="…">` names, trying slot `hint` first.
    @inline(__always)
    func attribute(_ pointer: UnsafePointer<UInt8>, _ length: Int, in entity: Int, hint: Int) -> Int? {
        let slot = entities[entity]
        let first = Int(slot.firstAttribute)
        let end = first + Int(slot.attributeCount)
        if hint >= first && hint < end && matches(pointer, length, attributes[hint].written) { return hint }
        for index in first..<end where matches(pointer, length, attributes[index].written) { return index }
        for index in first..<end where matches(pointer, length, attributes[index].exact) { return index }
        let lower = Bytes.string(pointer, length).lowercased()
        return (first..<end).first { string(attributes[$0].written) == lower }
    }

    /// The slot (in `relationships`) of the relationship `<relationship name="…">` names.
    @inline(__always)
    func relationship(_ pointer: UnsafePointer<UInt8>, _ length: Int, in entity: Int, hint: Int) -> Int? {
        let slot = entities[entity]
        let first = Int(slot.firstRelationship)
        let end = first + Int(slot.relationshipCount)
        if hint >= first && hint < end && matches(pointer, length, relationships[hint].written) { return hint }
        for index in first..<end where matches(pointer, length, relationships[index].written) { return index }
        for index in first..<end where matches(pointer, length, relationships[index].exact) { return index }
        let lower = Bytes.string(pointer, length).lowercased()
        return (first..<end).first { string(relationships[$0].written) == lower }
    }

    /// Whether a `type="…"` is the spelling of the slot's own kind.
    @inline(__always)
    func isOwnKind(_ pointer: UnsafePointer<UInt8>, _ length: Int, slot: Int) -> Bool {
        matches(pointer, length, attributes[slot].kindSpelling)
    }

    /// By relationship slot: whether `selection` leaves the relationship out (empty when it reads all).
    func leftOut(by selection: RelationshipSelection) -> [Bool] {
        guard !selection.isAll else { return [] }
        var leftOut = [Bool](repeating: false, count: relationships.count)
        for entity in 0..<entityCount {
            let slot = entities[entity]
            let first = Int(slot.firstRelationship)
            for position in first..<first + Int(slot.relationshipCount) {
                leftOut[position] = !selection.includes(
                    entity: entity, relationship: Int(relationships[position].index))
            }
        }
        return leftOut
    }

    func entityName(_ entity: Int) -> String { model.descriptions[entity].name }

    func attributeName(_ slot: Int, in entity: Int) -> String {
        model.descriptions[entity].attributes[Int(attributes[slot].index)].name
    }

    func relationshipName(_ slot: Int, in entity: Int) -> String {
        model.descriptions[entity].relationships[Int(relationships[slot].index)].name
    }

    func destinationName(_ slot: Int) -> String {
        model.descriptions[Int(relationships[slot].destination)].name
    }
}
