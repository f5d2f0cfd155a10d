import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file mapped read-only into memory, whose pages a reader can hand back as it moves on.
///
/// A mapped file's pages count as the process's own memory once touched, so reading a whole binary
/// store would make the process as large as the file. Every so often the reader calls
/// `releasePages(in:)`: the kernel drops the pages from the process (they stay in the page cache, and
/// the next access maps them again), so that memory stays bounded whatever the file's size.
@_spi(GraftInternal) public final class MappedFile: @unchecked Sendable {
    /// How many nodes a reader handles between releases.
    public static let releaseInterval = 1 << 16

    private let base: UnsafeMutableRawPointer?
    private let size: Int

    private init(base: UnsafeMutableRawPointer?, size: Int) {
        self.base = base
        self.size = size
    }

    deinit {
        if let base { munmap(base, size) }
    }

    /// The file's bytes, mapped (an empty file gives empty data), and the mapping.
    public static func map(_ url: URL) throws -> (data: Data, mapping: MappedFile) {
        func failure() -> GraftError { GraftError(.io, "cannot be read: \(String(cString: strerror(errno)))") }
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure() }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure() }
        let size = Int(info.st_size)
        guard size > 0 else { return (Data(), MappedFile(base: nil, size: 0)) }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), base != MAP_FAILED else {
            throw failure()
        }
        let mapping = MappedFile(base: base, size: size)
        // The data keeps the mapping alive; the mapping unmaps the file when both are gone.
        let data = Data(bytesNoCopy: base, count: size, deallocator: .custom { _, _ in _ = mapping })
        return (data, mapping)
    }

    /// Drops the whole pages of `bytes` that lie in this mapping from the process's memory (nothing
    /// for bytes elsewhere, such as a copy the data made of a tiny file).
    public func releasePages(in bytes: UnsafeRawBufferPointer) {
        guard let base, let start = bytes.baseAddress, bytes.count > 0 else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let low = max(Int(bitPattern: start), Int(bitPattern: base))
        let high = min(Int(bitPattern: start) + bytes.count, Int(bitPattern: base) + size)
        let first = (low + page - 1) / page * page
        let end = high / page * page
        guard end > first, let pointer = UnsafeMutableRawPointer(bitPattern: first) else { return }
        _ = madvise(pointer, end - first, Int32(MADV_DONTNEED))
    }
}
