import Foundation
import GraftGraph

/// Overlaps making snapshots with writing them: a producer (a store's reader, a paste's second pass)
/// runs on a thread of its own and hands its snapshots over in batches to the consumer on the calling
/// thread (a store writer), so that the two halves of the work take the time of the longer one rather
/// than of both.
///
/// The consumer sees exactly the sequence a serial loop would give it, and errors are as a serial loop
/// would meet them: the producer's error comes after every snapshot made before it, and a consumer's
/// error stops the producer.
enum SnapshotStream {
    /// Every snapshot of `reader`, read on a thread of its own, given to `body` here, in the reader's order
    /// (with `anyOrder`, the order cheapest for the reader: `StoreReader.forEachSnapshotInAnyOrder`, where
    /// `body` reads only `relationships`).
    static func forEach(
        of reader: any StoreReader, anyOrder: Bool = false, reading relationships: RelationshipSelection = .all,
        _ body: (Snapshot) throws -> Void
    ) throws {
        try forEachBatch(
            of: reader, anyOrder: anyOrder, reading: relationships, size: SnapshotPipe.defaultBatchSize
        ) { batch in
            for snapshot in batch { try body(snapshot) }
        }
    }

    /// Every snapshot of `reader`, read on a thread of its own, given to `body` here in batches of
    /// `size` (the last may hold fewer), in the reader's order (with `anyOrder`, the order cheapest for
    /// the reader, where `body` reads only `relationships`). A batch is valid during the call only: its
    /// storage is filled again with later snapshots, so a consumer that keeps its snapshots makes the
    /// producer copy them.
    ///
    /// - Parameter meanwhile: work of the consumer's that goes before the first batch (a document's
    ///   header), done here while the first batches are read; its error stops the reading.
    static func forEachBatch(
        of reader: any StoreReader, anyOrder: Bool = false, reading relationships: RelationshipSelection = .all,
        size: Int, meanwhile: (() throws -> Void)? = nil, _ body: ([Snapshot]) throws -> Void
    ) throws {
        // A reader that hands its snapshots over fills the batches' storage itself (in its one order).
        if let handing = reader as? any SnapshotExchangingReader {
            try run(
                producing: { emit in try handing.handOverEachSnapshot(emit) }, exchanging: true,
                batchSize: size, meanwhile: meanwhile, consuming: body)
        } else {
            try run(
                producing: { emit in
                    func lend(_ snapshot: Snapshot) throws {
                        var lent = snapshot
                        try emit(&lent)
                    }
                    if anyOrder {
                        try reader.forEachSnapshotInAnyOrder(reading: relationships, lend)
                    } else {
                        try reader.forEachSnapshot(lend)
                    }
                },
                exchanging: false, batchSize: size, meanwhile: meanwhile, consuming: body)
        }
    }

    /// Runs `produce` on a thread of its own, giving each snapshot it emits to `consume` here, in order.
    ///
    /// `produce` and what it captures are used by that thread alone until this function returns, so it
    /// may capture state the caller reads afterwards.
    static func run(
        producing produce: @escaping (_ emit: (Snapshot) throws -> Void) throws -> Void,
        consuming consume: (Snapshot) throws -> Void
    ) throws {
        try run(
            producing: { emit in
                try produce { snapshot in
                    var lent = snapshot
                    try emit(&lent)
                }
            }, exchanging: false,
            batchSize: SnapshotPipe.defaultBatchSize
        ) { batch in
            for snapshot in batch { try consume(snapshot) }
        }
    }

    /// Runs `produce` on a thread of its own as ``run(producing:consuming:)`` does, but `produce` hands its
    /// snapshots over rather than lending them: `emit` may exchange the snapshot for a spent one of the
    /// same entity, which the producer fills again (as ``SnapshotExchangingReader`` does), so that a
    /// producer that reuses one snapshot per entity has none copied.
    static func run(
        handingOver produce: @escaping (_ emit: (inout Snapshot) throws -> Void) throws -> Void,
        consuming consume: (Snapshot) throws -> Void
    ) throws {
        try run(producing: produce, exchanging: true, batchSize: SnapshotPipe.defaultBatchSize) { batch in
            for snapshot in batch { try consume(snapshot) }
        }
    }

    /// Runs `produce` on a thread of its own, giving what it emits to `consume` here in batches of
    /// `batchSize`, in order (see ``forEachBatch(of:size:_:)``). When `exchanging`, the snapshots
    /// emitted are exchanged for spent ones of the same entity (see ``SnapshotExchangingReader``);
    /// else they are copied and left as they are.
    private static func run(
        producing produce: @escaping (_ emit: (inout Snapshot) throws -> Void) throws -> Void, exchanging: Bool,
        batchSize: Int, meanwhile: (() throws -> Void)? = nil, consuming consume: ([Snapshot]) throws -> Void
    ) throws {
        let pipe = SnapshotPipe(batchSize: batchSize)
        let thread = ProducingThread(produce: produce, exchanging: exchanging, pipe: pipe)
        thread.start()
        defer {
            pipe.stop()
            thread.wait()
        }
        try meanwhile?()
        while let batch = try pipe.receive() {
            try consume(batch)
            // Given back without a reference kept here, so that the producer can fill it without a copy.
            pipe.recycle(consume batch)
        }
    }
}

/// Batches of snapshots on their way from a producing thread to the consuming one, with at most a few
/// batches in flight so that memory stays bounded, and the same few batches filled again and again.
private final class SnapshotPipe: @unchecked Sendable {
    static let defaultBatchSize = 256
    let batchSize: Int
    /// At most this many batches wait for the consumer: about 2,000 snapshots, or one batch of a larger
    /// size (while the consumer works through one and the producer fills the next).
    let batchesInFlight: Int

    init(batchSize: Int) {
        self.batchSize = max(1, batchSize)
        batchesInFlight = max(1, 2048 / self.batchSize)
    }

    /// Thrown inside the producing thread when the consumer has stopped, to end the production.
    struct Stopped: Error {}

    private let condition = NSCondition()
    private var batches: [[Snapshot]] = []
    /// Batches the consumer is done with, for the producer to fill again: their snapshots' storage is
    /// reused, so that snapshots cost no allocations once the first batches are made.
    private var spare: [[Snapshot]] = []
    /// The batches made: at most those in flight, the one the consumer works through and the one the
    /// producer fills. A producer ahead of the consumer waits for a batch given back rather than making
    /// another, whose snapshots would all be copies.
    private var made = 0
    private var mostMade: Int { batchesInFlight + 2 }
    private var first = 0
    private var producerFinished = false
    private var producerFailure: (any Error)?
    private var stopped = false

    /// Adds a batch; waits while the writer is behind. Throws `Stopped` when the writer has stopped.
    func send(_ batch: [Snapshot]) throws {
        condition.lock()
        defer { condition.unlock() }
        while batches.count - first >= batchesInFlight && !stopped { condition.wait() }
        if stopped { throw Stopped() }
        batches.append(batch)
        condition.broadcast()
    }

    /// Ends the stream: after the batches already sent, the writer gets `failure` (or the end).
    func finish(failure: (any Error)?) {
        condition.lock()
        defer { condition.unlock() }
        producerFinished = true
        producerFailure = failure
        condition.broadcast()
    }

    /// The next batch; `nil` at the end of a complete read; throws the producer's error once every batch
    /// read before it has been taken.
    func receive() throws -> [Snapshot]? {
        condition.lock()
        defer { condition.unlock() }
        while first == batches.count && !producerFinished { condition.wait() }
        if first < batches.count {
            let batch = batches[first]
            batches[first] = []
            first += 1
            if first == batches.count {
                batches.removeAll(keepingCapacity: true)
                first = 0
            }
            condition.broadcast()
            return batch
        }
        if let producerFailure { throw producerFailure }
        return nil
    }

    /// Gives back a batch the writer is done with.
    func recycle(_ batch: consuming [Snapshot]) {
        condition.lock()
        defer { condition.unlock() }
        if !stopped {
            spare.append(batch)
            condition.broadcast()
        }
    }

    /// A batch to fill: one the writer gave back, or a new one while fewer than ``mostMade`` are; else
    /// waits for one to be given back (or the stop).
    func emptyBatch() -> [Snapshot] {
        condition.lock()
        defer { condition.unlock() }
        while spare.isEmpty && made >= mostMade && !stopped { condition.wait() }
        if let batch = spare.popLast() { return batch }
        made += 1
        var batch: [Snapshot] = []
        batch.reserveCapacity(batchSize)
        return batch
    }

    /// Tells the reading thread to stop (when the writer has finished or failed).
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        stopped = true
        batches.removeAll()
        spare.removeAll()
        first = 0
        condition.broadcast()
    }
}

/// The thread that runs a producer into a `SnapshotPipe`. The producer is used by this thread alone
/// from `start()` until `wait()` returns.
private final class ProducingThread: @unchecked Sendable {
    private let produce: (_ emit: (inout Snapshot) throws -> Void) throws -> Void
    /// Whether emitted snapshots may be exchanged for spent ones rather than copied.
    private let exchanging: Bool
    private let pipe: SnapshotPipe
    private let done = NSCondition()
    private var isDone = false

    init(
        produce: @escaping (_ emit: (inout Snapshot) throws -> Void) throws -> Void, exchanging: Bool,
        pipe: SnapshotPipe
    ) {
        self.produce = produce
        self.exchanging = exchanging
        self.pipe = pipe
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.stackSize = 16 << 20
        thread.start()
    }

    /// Waits until the thread has finished with the producer.
    func wait() {
        done.lock()
        while !isDone { done.wait() }
        done.unlock()
    }

    private func run() {
        var filling = BatchFilling(pipe: pipe, exchanging: exchanging)
        do {
            try produce { snapshot in try filling.add(&snapshot) }
            try filling.sendFilled()
            pipe.finish(failure: nil)
        } catch is SnapshotPipe.Stopped {
            pipe.finish(failure: nil)
        } catch {
            // What was read before the failure goes first, as it would in a serial loop.
            do {
                try filling.sendFilled()
                pipe.finish(failure: error)
            } catch {
                pipe.finish(failure: nil)
            }
        }
        done.lock()
        isDone = true
        done.broadcast()
        done.unlock()
    }
}

/// The batch a producing thread fills, sent to the pipe when full.
///
/// Snapshots are exchanged for the spent ones of a batch given back, when of the same entity, or copied
/// into the batch's own storage; never shared, so that the producer's snapshot stays uniquely
/// referenced and can reuse its storage too. (One value, so that the producer's closure reaches one
/// variable per snapshot.)
private struct BatchFilling {
    let pipe: SnapshotPipe
    /// Whether emitted snapshots may be exchanged for spent ones rather than copied.
    let exchanging: Bool
    private var batch: [Snapshot]
    private var filled = 0
    private var spent = SpentSnapshots()

    init(pipe: SnapshotPipe, exchanging: Bool) {
        self.pipe = pipe
        self.exchanging = exchanging
        batch = pipe.emptyBatch()
    }

    mutating func add(_ snapshot: inout Snapshot) throws {
        let entity = snapshot.ref.entity
        if filled < batch.count {
            // A slot that held another entity keeps its snapshot for a later object of that entity and
            // takes a spent one of this entity, when there is one.
            if exchanging && batch[filled].ref.entity != entity, var other = spent.take(entity) {
                swap(&other, &batch[filled])
                spent.keep(other)
            }
            if exchanging && batch[filled].ref.entity == entity {
                swap(&batch[filled], &snapshot)
            } else {
                batch[filled].copyContents(of: snapshot)
            }
        } else if exchanging, var other = spent.take(entity) {
            swap(&other, &snapshot)
            batch.append(other)
        } else {
            batch.append(snapshot.copyWithOwnStorage())
        }
        filled += 1
        if filled == pipe.batchSize {
            try sendFilled()
            batch = pipe.emptyBatch()
        }
    }

    /// Sends what the batch holds (nothing when empty); the next `add` starts a batch of its own.
    mutating func sendFilled() throws {
        if filled < batch.count { batch.removeLast(batch.count - filled) }
        let full = batch
        batch = []
        filled = 0
        if !full.isEmpty { try pipe.send(full) }
    }
}

/// Spent snapshots a producing thread took out of a batch's slots that held another entity, by entity:
/// batches given back do not repeat the order of entities of the objects read next (a table of several
/// entities, the start of another table), and a spent snapshot of the right entity is exchanged where
/// one of another would have to be copied.
private struct SpentSnapshots {
    /// At most this many are kept for one entity; the others are let go.
    static let limit = 4096
    private var byEntity: [[Snapshot]] = []

    mutating func take(_ entity: Int) -> Snapshot? { entity < byEntity.count ? byEntity[entity].popLast() : nil }

    mutating func keep(_ snapshot: Snapshot) {
        let entity = snapshot.ref.entity
        if entity >= byEntity.count { byEntity += Array(repeating: [], count: entity + 1 - byEntity.count) }
        if byEntity[entity].count < Self.limit { byEntity[entity].append(snapshot) }
    }
}

extension Snapshot {
    /// The same snapshot in arrays of its own (none shared with `self`).
    fileprivate func copyWithOwnStorage() -> Snapshot {
        Snapshot(
            ref: ref, attributes: attributes.map { $0 },
            relationships: relationships.map { value in
                if case .toMany(let refs) = value { return .toMany(refs.isEmpty ? [] : refs.map { $0 }) }
                return value
            })
    }

    /// Makes this snapshot equal to `source`, reusing this one's arrays (which must not be shared) and
    /// sharing none with `source`.
    fileprivate mutating func copyContents(of source: Snapshot) {
        guard attributes.count == source.attributes.count, relationships.count == source.relationships.count else {
            self = source.copyWithOwnStorage()
            return
        }
        ref = source.ref
        for index in attributes.indices { attributes[index] = source.attributes[index] }
        for index in relationships.indices {
            switch source.relationships[index] {
            case .toMany(let refs):
                if case .toMany(var mine) = relationships[index] {
                    if mine.isEmpty && refs.isEmpty { continue }
                    relationships[index] = .unloaded  // so that `mine` is uniquely referenced
                    mine.removeAll(keepingCapacity: true)
                    mine.append(contentsOf: refs)
                    relationships[index] = .toMany(mine)
                } else {
                    relationships[index] = .toMany(refs.isEmpty ? [] : refs.map { $0 })
                }
            case let other:
                relationships[index] = other
            }
        }
    }
}
