import struct Foundation.Data

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Somewhere a command writes text (or, for a document such as a binary property list, bytes): a file
/// descriptor, or a string kept for a test to read.
public protocol TextSink: AnyObject {
    /// Writes `text` as UTF-8, possibly buffered.
    func write(_ text: String)
    /// Writes `bytes` as they are, possibly buffered.
    func write(bytes: Data)
    /// Writes out anything buffered.
    func flush()
}

/// Writes to a file descriptor, such as standard output (1) or standard error (2).
///
/// A buffered sink collects up to 64 KiB before writing and writes the rest on ``flush()`` or when it
/// goes away; an unbuffered one writes each text at once. Write errors (a closed pipe) are ignored: there
/// is nowhere left to report them.
public final class FileDescriptorSink: TextSink {
    /// The descriptor written to.
    public let fileDescriptor: Int32
    private let isBuffered: Bool
    private var buffer: [UInt8] = []
    private static let bufferCapacity = 64 * 1024

    public init(fileDescriptor: Int32, isBuffered: Bool) {
        self.fileDescriptor = fileDescriptor
        self.isBuffered = isBuffered
    }

    /// A sink that buffers unless the descriptor is a terminal, where each text should show at once.
    public convenience init(fileDescriptor: Int32) {
        self.init(fileDescriptor: fileDescriptor, isBuffered: isatty(fileDescriptor) != 1)
    }

    deinit {
        flush()
    }

    /// Whether the descriptor is a terminal rather than a file or a pipe.
    ///
    /// The corresponding C function is `isatty`.
    public var isTerminal: Bool { isatty(fileDescriptor) == 1 }

    public func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if !isBuffered || buffer.count >= Self.bufferCapacity { flush() }
    }

    public func write(bytes: Data) {
        buffer.append(contentsOf: bytes)
        if !isBuffered || buffer.count >= Self.bufferCapacity { flush() }
    }

    public func flush() {
        var written = 0
        while written < buffer.count {
            let count = buffer[written...].withUnsafeBytes { bytes in
                systemWrite(fileDescriptor, bytes.baseAddress, bytes.count)
            }
            if count > 0 {
                written += count
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

/// Keeps everything written, for tests to compare.
public final class StringSink: TextSink {
    /// Everything written so far, as bytes.
    public private(set) var bytes = Data()

    public init() {}

    /// Everything written so far, as UTF-8 text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public func write(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    public func write(bytes: Data) {
        self.bytes.append(bytes)
    }

    public func flush() {}
}
