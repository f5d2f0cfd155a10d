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

/// Everything left to read from a descriptor, such as standard input (0).
///
/// The corresponding C function is `read`.
func readToEnd(fileDescriptor descriptor: Int32) throws -> Data {
    var data = Data()
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            chunk.withUnsafeBytes { data.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        } else if count == 0 {
            return data
        } else if errno != EINTR {
            throw GraftError(.io, "cannot read standard input: \(String(cString: strerror(errno)))")
        }
    }
}
