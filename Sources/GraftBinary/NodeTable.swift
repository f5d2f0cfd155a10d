import GraftCore
import GraftGraph
import GraftModel

/// The binary store writer's record of every object of the document, met as a node or as a related
/// object: per inheritance tree and key, the reserved integer object that will hold the object's final
/// key, and the reference to its node once written (before that, the first object that referred to it,
/// for the message should it never come).
///
/// The format forces two object numbers an object: the object map lists each node's key and node in
/// key order, and both are object numbers only known once written. Nothing else is kept: the key is
/// where the record is, the order of first sight is the order of the key objects' numbers (reserved as
/// each object is first met), and the entity is kept only for trees with subentities. Keys are mostly
/// dense (Core Data's and Graft's are), so records live in pages of 4096 keys allocated when first
/// used, without the slack and copying of a growing array; keys far from the others (negative, or much
/// larger than the number of objects would explain) go in a dictionary.
struct NodeTable {
    /// One object: its key's integer object (0 for no object: object 0 is the archive's `$null`), and
    /// its node's reference once written, else the key object of the first object that referred to it.
    struct Slot {
        var keyObject: UInt32 = 0
        var node: UInt32 = 0
    }

    static let pageShift = 12
    static let pageSize = 1 << pageShift

    /// How a tree keeps each object's entity index: not at all (a tree of one entity), in 16 bits
    /// (models of fewer than 65535 entities), or in 32.
    enum EntityWidth {
        case none, narrow, wide
    }

    /// 4096 consecutive keys of a tree.
    final class Page {
        let slots: UnsafeMutablePointer<Slot>
        /// The entity index of each object, for trees with subentities.
        private let narrow: UnsafeMutablePointer<UInt16>?
        private let wide: UnsafeMutablePointer<UInt32>?
        /// Whether each object's node is written, a bit per key.
        let written: UnsafeMutablePointer<UInt64>

        init(entities width: EntityWidth) {
            slots = .allocate(capacity: NodeTable.pageSize)
            slots.initialize(repeating: Slot(), count: NodeTable.pageSize)
            narrow = width == .narrow ? .allocate(capacity: NodeTable.pageSize) : nil
            narrow?.initialize(repeating: 0, count: NodeTable.pageSize)
            wide = width == .wide ? .allocate(capacity: NodeTable.pageSize) : nil
            wide?.initialize(repeating: 0, count: NodeTable.pageSize)
            written = .allocate(capacity: NodeTable.pageSize / 64)
            written.initialize(repeating: 0, count: NodeTable.pageSize / 64)
        }

        deinit {
            slots.deallocate()
            narrow?.deallocate()
            wide?.deallocate()
            written.deallocate()
        }

        /// The entity of the object at `index`, or `root` for a tree of one entity.
        @inline(__always)
        func entity(_ index: Int, root: Int) -> Int {
            if let narrow { return Int(narrow[index]) }
            if let wide { return Int(wide[index]) }
            return root
        }

        @inline(__always)
        func setEntity(_ entity: Int, at index: Int) {
            narrow?[index] = UInt16(truncatingIfNeeded: entity)
            wide?[index] = UInt32(truncatingIfNeeded: entity)
        }

        @inline(__always)
        func isWritten(_ index: Int) -> Bool { written[index >> 6] & (1 << UInt64(index & 63)) != 0 }

        @inline(__always)
        func markWritten(_ index: Int) { written[index >> 6] |= 1 << UInt64(index & 63) }
    }

    /// An object kept outside the pages.
    struct Sparse {
        var slot: Slot
        var entity: UInt32
        var isWritten: Bool
    }

    /// One inheritance tree's objects.
    final class Tree {
        let root: Int
        /// How each object's entity is kept (not at all for a tree of one entity).
        let entities: EntityWidth
        var keepsEntities: Bool { entities != .none }
        /// Pages by key >> pageShift, for keys from 0.
        var pages: [Page?] = []
        var sparse: [Int64: Sparse] = [:]
        var count = 0

        init(root: Int, entities: EntityWidth) {
            self.root = root
            self.entities = entities
        }

        /// The page holding `key`, if allocated.
        @inline(__always)
        func page(of key: Int64) -> Page? {
            guard key >= 0 else { return nil }
            let number = Int(truncatingIfNeeded: key >> Int64(NodeTable.pageShift))
            return number < pages.count ? pages[number] : nil
        }
    }

    /// One object as the table knows it.
    struct Record {
        var key: Int64
        var entity: Int
        var slot: Slot
        var isWritten: Bool
    }

    let model: Model
    /// Tree ordinal by entity index.
    let treeOfEntity: [Int]
    let trees: [Tree]
    /// Objects in every tree.
    private(set) var count = 0

    init(model: Model) {
        self.model = model
        var ordinals: [Int: Int] = [:]
        var trees: [Tree] = []
        treeOfEntity = model.descriptions.map { entity in
            if let ordinal = ordinals[entity.rootIndex] { return ordinal }
            ordinals[entity.rootIndex] = trees.count
            let root = model.descriptions[entity.rootIndex]
            let width: EntityWidth =
                root.descendantIndices.isEmpty ? .none : model.descriptions.count <= Int(UInt16.max) ? .narrow : .wide
            trees.append(Tree(root: root.index, entities: width))
            return trees.count - 1
        }
        self.trees = trees
    }

    // MARK: Finding and adding objects

    /// The record of `ref`, if the table has it.
    @inline(__always)
    func record(of ref: ObjectRef) -> Record? {
        let tree = trees[treeOfEntity[ref.entity]]
        let key = ref.key
        if let page = tree.page(of: key) {
            let index = Int(truncatingIfNeeded: key) & (Self.pageSize - 1)
            let slot = page.slots[index]
            if slot.keyObject != 0 {
                return Record(
                    key: key, entity: page.entity(index, root: tree.root), slot: slot, isWritten: page.isWritten(index))
            }
        }
        // A key filed while it lay beyond the pages stays in the dictionary, even once pages reach it.
        if !tree.sparse.isEmpty, let found = tree.sparse[key] {
            let entity = tree.keepsEntities ? Int(found.entity) : tree.root
            return Record(key: key, entity: entity, slot: found.slot, isWritten: found.isWritten)
        }
        return nil
    }

    /// Adds an object the table does not have, with its key object and (unless met as a node) the key
    /// object of the object that referred to it.
    mutating func add(_ ref: ObjectRef, keyObject: UInt32, referrer: UInt32) {
        let tree = trees[treeOfEntity[ref.entity]]
        let key = ref.key
        let slot = Slot(keyObject: keyObject, node: referrer)
        count += 1
        tree.count += 1
        // Pages while keys stay dense enough to fill them: up to four times the objects, and some.
        if key >= 0 && key <= 4 * Int64(count) + (1 << 20) {
            let number = Int(key >> Int64(Self.pageShift))
            if number >= tree.pages.count {
                tree.pages.append(contentsOf: repeatElement(nil, count: number + 1 - tree.pages.count))
            }
            let page: Page
            if let existing = tree.pages[number] {
                page = existing
            } else {
                page = Page(entities: tree.entities)
                tree.pages[number] = page
            }
            let index = Int(key) & (Self.pageSize - 1)
            page.slots[index] = slot
            page.setEntity(ref.entity, at: index)
            return
        }
        tree.sparse[key] = Sparse(slot: slot, entity: UInt32(truncatingIfNeeded: ref.entity), isWritten: false)
    }

    /// Records the node of an object the table has.
    mutating func setNode(_ node: UInt32, of ref: ObjectRef) {
        let tree = trees[treeOfEntity[ref.entity]]
        let key = ref.key
        if let page = tree.page(of: key) {
            let index = Int(truncatingIfNeeded: key) & (Self.pageSize - 1)
            if page.slots[index].keyObject != 0 {
                page.slots[index].node = node
                page.markWritten(index)
                return
            }
        }
        tree.sparse[key]?.slot.node = node
        tree.sparse[key]?.isWritten = true
    }

    // MARK: Walking the objects

    /// Calls `body` with every object of a tree, in key order.
    func forEach(inTree ordinal: Int, _ body: (Record) throws -> Void) rethrows {
        var cursor = Cursor(trees[ordinal])
        while let record = cursor.next() { try body(record) }
    }

    /// Calls `body` with every object, tree by tree.
    func forEach(_ body: (Record) throws -> Void) rethrows {
        for ordinal in trees.indices { try forEach(inTree: ordinal, body) }
    }

    /// A tree's objects in key order: its pages and its dictionary, merged.
    struct Cursor {
        private let tree: Tree
        private let sparseKeys: [Int64]
        private var sparsePosition = 0
        /// The next key of the pages to look at.
        private var pageKey: Int64 = 0
        private let pageEnd: Int64

        init(_ tree: Tree) {
            self.tree = tree
            sparseKeys = tree.sparse.keys.sorted()
            pageEnd = Int64(tree.pages.count) << Int64(NodeTable.pageShift)
        }

        /// The next object of the pages, from `pageKey` on.
        private mutating func nextPaged() -> Record? {
            while pageKey < pageEnd {
                let number = Int(pageKey >> Int64(NodeTable.pageShift))
                guard let page = tree.pages[number] else {
                    pageKey = Int64(number + 1) << Int64(NodeTable.pageShift)
                    continue
                }
                let index = Int(pageKey) & (NodeTable.pageSize - 1)
                let key = pageKey
                pageKey += 1
                let slot = page.slots[index]
                guard slot.keyObject != 0 else { continue }
                return Record(
                    key: key, entity: page.entity(index, root: tree.root), slot: slot, isWritten: page.isWritten(index))
            }
            return nil
        }

        /// The object paged next, without moving past it.
        private var pagedAhead: Record?
        private var hasPagedAhead = false

        mutating func next() -> Record? {
            if !hasPagedAhead {
                pagedAhead = nextPaged()
                hasPagedAhead = true
            }
            if sparsePosition < sparseKeys.count {
                let key = sparseKeys[sparsePosition]
                if pagedAhead.map({ key < $0.key }) ?? true {
                    sparsePosition += 1
                    let found = tree.sparse[key]!
                    let entity = tree.keepsEntities ? Int(found.entity) : tree.root
                    return Record(key: key, entity: entity, slot: found.slot, isWritten: found.isWritten)
                }
            }
            hasPagedAhead = false
            return pagedAhead
        }
    }

    /// Calls `body` with every object whose final key (its key plus its tree's offset) does not overflow
    /// and whose key object comes before `limit`, in order of final key, objects sharing one in order of
    /// first sight.
    func forEachInFinalKeyOrder(
        offsets: [Int64], below limit: UInt32 = .max, _ body: (_ record: Record, _ finalKey: Int64) throws -> Void
    ) rethrows {
        var cursors = trees.map(Cursor.init)
        /// Each tree's next object and its final key, as a heap by (final key, key object).
        var heap: [(final: Int64, record: Record, tree: Int)] = []
        func advance(_ ordinal: Int) -> (final: Int64, record: Record, tree: Int)? {
            while let record = cursors[ordinal].next() {
                guard record.slot.keyObject < limit else { continue }
                let (final, overflow) = record.key.addingReportingOverflow(offsets[ordinal])
                if !overflow { return (final, record, ordinal) }
            }
            return nil
        }
        func before(
            _ a: (final: Int64, record: Record, tree: Int), _ b: (final: Int64, record: Record, tree: Int)
        )
            -> Bool
        {
            a.final != b.final ? a.final < b.final : a.record.slot.keyObject < b.record.slot.keyObject
        }
        func siftDown(_ start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1
                guard left < heap.count else { return }
                var child = left
                if left + 1 < heap.count && before(heap[left + 1], heap[left]) { child = left + 1 }
                guard before(heap[child], heap[parent]) else { return }
                heap.swapAt(child, parent)
                parent = child
            }
        }
        for ordinal in trees.indices { if let first = advance(ordinal) { heap.append(first) } }
        for start in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(start) }
        while let top = heap.first {
            try body(top.record, top.final)
            if let next = advance(top.tree) {
                heap[0] = next
            } else {
                heap[0] = heap[heap.count - 1]
                heap.removeLast()
            }
            if !heap.isEmpty { siftDown(0) }
        }
    }
}
