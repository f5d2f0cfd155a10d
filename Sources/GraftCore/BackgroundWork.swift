import Dispatch

/// Work started on another thread now and waited for later: a pass that the work after it needs only at
/// some later point, run meanwhile beside what comes first (on a machine with a second core).
///
/// What `work` captures is used on the other thread until ``wait()`` returns, so it must be its own: a
/// database connection of its own, values copied or not changed meanwhile.
package final class BackgroundWork<Result>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var outcome: Swift.Result<Result, any Error>?

    /// Starts `work` on a background thread.
    package init(_ work: @escaping () throws -> Result) {
        let box = WorkBox(work)
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            outcome = Swift.Result { try box.work() }
            done.signal()
        }
    }

    /// What the work returned, once it has finished; what it threw, rethrown.
    package func wait() throws -> Result {
        done.wait()
        done.signal()  // for the next wait
        return try outcome!.get()
    }

    /// Carries the closure to the other thread, which alone calls it.
    private final class WorkBox: @unchecked Sendable {
        let work: () throws -> Result
        init(_ work: @escaping () throws -> Result) { self.work = work }
    }
}
