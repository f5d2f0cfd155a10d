import Foundation
import GraftCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The C library's `exit`, under a name that does not clash with ``GraftCommandLine/exit(_:)``.
func systemExit(_ status: Int32) -> Never {
    exit(status)
}

/// Whether the descriptor is a terminal.
///
/// The corresponding C function is `isatty`.
func isTerminal(_ descriptor: Int32) -> Bool {
    isatty(descriptor) == 1
}
