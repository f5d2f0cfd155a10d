import Dispatch

/// Frees large values on another thread.
///
/// What a long operation builds (a decoded clipboard, a paste's plan, hundreds of thousands of snapshots)
/// is as many small allocations, and freeing them costs a good part of the time that building them did.
/// Handing the last reference to a background thread lets that overlap the work that follows (writing the
/// store, printing the report) instead of adding to it, on a machine with a second core.
package enum Teardown {
    /// Frees `value` on a background thread. The caller gives it up (`Teardown.elsewhere(consume value)`);
    /// a copy it keeps is freed where it drops that copy, as usual, so nothing is freed early.
    package static func elsewhere<T>(_ value: consuming T) {
        let box = Box(value)
        DispatchQueue.global(qos: .utility).async { withExtendedLifetime(box) {} }
    }

    /// Carries the value to the other thread. Only released there, never read, so sharing it is safe.
    private final class Box<T>: @unchecked Sendable {
        let value: T
        init(_ value: consuming T) { self.value = value }
    }
}
