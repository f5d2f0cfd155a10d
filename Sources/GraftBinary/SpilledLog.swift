import Foundation
@_spi(GraftInternal) import GraftCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An append-only log of bytes, read back once from its start, that keeps only its last chunk in
/// memory: full chunks go to a temporary file, which is removed from its folder as soon as it is
/// opened, so that nothing is left behind whatever happens to the process.
///
/// The keyed archive's `$objects` array can only be written once every object is known; its log (a
/// byte or two an entry, a dozen entries a node) waits here rather than in memory.
final class SpilledLog {
    /// The temporary file, opened when the first chunk is full.
    private final class Spill {
        let folder: URL
        var descriptor: Int32 = -1
        var length = 0

        init(folder: URL) { self.folder = folder }

        deinit { if descriptor >= 0 { close(descriptor) } }

        func write(_ bytes: UnsafeRawBufferPointer) throws {
            if descriptor < 0 {
                let path = folder.appendingPathComponent(".graft-\(UUID().uuidString).tmp").path
                descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else {
                    throw GraftError(
                        .io, "cannot create a temporary file beside it: \(String(cString: strerror(errno)))")
                }
                unlink(path)
            }
            try ByteBuffer.write(bytes, to: descriptor, at: length)
            length += bytes.count
        }
    }

    private let spill: Spill
    private let buffer: ByteBuffer

    /// A log whose full chunks go to a temporary file in `folder`.
    init(folder: URL) {
        let spill = Spill(folder: folder)
        self.spill = spill
        buffer = ByteBuffer { try spill.write($0) }
    }

    /// Appends `value` in LEB128 (seven bits a byte, least significant first).
    @inline(__always)
    func appendLEB128(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        buffer.append(UInt8(truncatingIfNeeded: rest))
    }

    /// Hands a full chunk to the file; between appends.
    @inline(__always)
    func flushIfFull() throws { try buffer.flushIfFull() }

    /// Reads the log from its start: the file's chunks, then the bytes still in memory.
    struct Reader {
        private let log: SpilledLog
        private var chunk: [UInt8]
        private var position = 0
        /// Where the next chunk starts in the file.
        private var fileOffset = 0
        private var inMemory = false

        init(_ log: SpilledLog) {
            self.log = log
            chunk = []
        }

        private mutating func nextChunk() throws {
            if fileOffset < log.spill.length {
                let count = min(ByteBuffer.chunkSize, log.spill.length - fileOffset)
                chunk = [UInt8](repeating: 0, count: count)
                var done = 0
                while done < count {
                    let read = chunk.withUnsafeMutableBytes {
                        pread(log.spill.descriptor, $0.baseAddress! + done, count - done, off_t(fileOffset + done))
                    }
                    if read < 0 && errno == EINTR { continue }
                    guard read > 0 else {
                        throw GraftError(
                            .io, "cannot read back a temporary file: \(String(cString: strerror(errno)))")
                    }
                    done += read
                }
                fileOffset += count
            } else if !inMemory {
                chunk = [UInt8](log.buffer.bytes)
                inMemory = true
            } else {
                throw GraftError(.invalidOperation, "read past the end of a log")
            }
            position = 0
        }

        @inline(__always)
        mutating func nextByte() throws -> UInt8 {
            while position == chunk.count { try nextChunk() }
            let byte = chunk[position]
            position += 1
            return byte
        }

        mutating func nextLEB128() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try nextByte()
                if shift < 64 { value |= UInt64(byte & 0x7F) << shift }
                if byte < 0x80 { return value }
                shift += 7
            }
        }
    }

    func reader() -> Reader { Reader(self) }
}
