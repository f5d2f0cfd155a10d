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
