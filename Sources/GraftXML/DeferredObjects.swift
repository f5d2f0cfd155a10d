import Foundation
@_spi(GraftInternal) import GraftCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The objects a one-pass read sets aside: those whose key or references could not be settled when
/// they were read, because they name objects further on (or ids whose keys depend on the whole
/// document). Their text is copied, as it stands in the document, into a temporary file while the
/// document's pages are still in memory, and parsed again once every id is known — so the document is
/// read from its file once, and what is read twice is only the text of these objects.
///
/// Each object's text runs from the end of the one before it (white space, comments and processing
/// instructions between objects come along) and is preceded by `<?graft-line N?>`, the line it
/// starts on in the document, so that errors found in the second parse name the document's lines.
final class DeferredObjects {
    private let descriptor: Int32
    private let path: String
    /// The temporary file, made when the text outgrows a chunk.
    private final class Spill {
        var file: SpillFile?
    }
    private let spill = Spill()
    private let buffer: ByteBuffer
    /// How many objects were set aside.
    private(set) var count = 0

    /// The processing instruction's target that carries a line.
    static let lineTarget = "graft-line"

    /// - Parameter url: the document, opened once more to copy objects' text from.
    init(url: URL, path: String) throws {
        self.path = path
        descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw GraftError(.io, "cannot be opened: \(String(cString: strerror(errno)))", context: [.file(path)])
        }
        // The set-aside text stays in memory up to a chunk, and goes to a temporary file beyond.
        let spill = self.spill
        buffer = ByteBuffer { chunk in
            if spill.file == nil { spill.file = try SpillFile(prefix: "graft-xml") }
            try spill.file!.write(chunk)
        }
    }

    deinit {
        close(descriptor)
        spill.file?.remove()
    }

    /// Sets aside the document's bytes `start..<end`, which begin on line `line`.
    func add(from start: Int, to end: Int, line: Int) throws {
        buffer.append("<?graft-line ")
        buffer.append(decimal: Int64(line))
        buffer.append("?>")
        var offset = start
        while offset < end {
            buffer.reserve(min(end - offset, ByteBuffer.chunkSize))
            let got = pread(descriptor, buffer.end, min(end - offset, ByteBuffer.chunkSize), off_t(offset))
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else {
                let reason =
                    got < 0 ? String(cString: strerror(errno)) : "it ended early (did it change while it was read?)"
                throw GraftError(.io, "cannot be read: \(reason)", context: [.file(path)])
            }
            buffer.commit(got)
            offset += got
            try buffer.flushIfFull()
        }
        count += 1
    }

    /// Hands the set-aside objects to `feed` as one document (`<database>` and the objects' text), in
    /// pieces; stops when `feed` returns `false`.
    func replay(_ feed: (UnsafeRawBufferPointer) throws -> Bool) throws {
        var going = try feed(Self.bytes("<database>"))
        if going, let file = spill.file {
            try file.copy { chunk in
                if going { going = try feed(chunk) }
            }
        }
        if going { going = try feed(buffer.bytes) }
        if going { _ = try feed(Self.bytes("</database>")) }
    }

    private static func bytes(_ text: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    }
}
