import Foundation

/// Work on another thread, to wait for with a time limit.
public final class Background<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let guardLock = NSLock()
    private var result: Result<T, any Error>?

    public init(_ body: @escaping @Sendable () throws -> T) {
        Thread.detachNewThread {
            let outcome = Result { try body() }
            self.guardLock.withLock { self.result = outcome }
            self.done.signal()
        }
    }

    public var isFinished: Bool { guardLock.withLock { result != nil } }

    /// The outcome, or `nil` when the work did not finish within `seconds`.
    public func wait(_ seconds: Double) -> Result<T, any Error>? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        done.signal()
        return guardLock.withLock { result }
    }
}
