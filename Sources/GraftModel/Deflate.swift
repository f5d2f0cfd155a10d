internal import CZlib
import Foundation
import GraftCore

/// Raw deflate (no zlib header; window bits −15), as Core Data compresses a store's model cache.
@_spi(GraftInternal) public enum RawDeflate {
    /// Decompresses raw-deflate data.
    ///
    /// - Parameter limit: the most bytes the output may have; corrupt or hostile input cannot make
    ///   Graft allocate more.
    /// - Throws: `GraftError.malformedInput` for data that is not raw deflate, is truncated, or inflates
    ///   beyond `limit`.
    public static func inflate(_ data: Data, limit: Int = 256 << 20) throws -> Data {
        var stream = z_stream()
        guard czlib_inflate_init2(&stream, -15) == Z_OK else {
            throw GraftError(.io, "zlib could not start inflating")
        }
        defer { inflateEnd(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = [UInt8](data)
        let status: Int32 = input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            var status: Int32 = Z_OK
            repeat {
                status = chunk.withUnsafeMutableBufferPointer { buffer in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(buffer.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                output.append(contentsOf: chunk[0..<produced])
                if output.count > limit { return Z_MEM_ERROR }
                if produced == 0 && stream.avail_in == 0 && status != Z_STREAM_END { return Z_BUF_ERROR }
            } while status == Z_OK
            return status
        }
        switch status {
        case Z_STREAM_END: return output
        case Z_MEM_ERROR: throw GraftError(.malformedInput, "the compressed data inflates to more than \(limit) bytes")
        case Z_BUF_ERROR: throw GraftError(.malformedInput, "the compressed data is truncated")
        default:
            let reason = stream.msg.map { String(cString: $0) } ?? "error \(status)"
            throw GraftError(.malformedInput, "the data is not raw deflate: \(reason)")
        }
    }

    /// Compresses data with raw deflate at the default level.
    public static func deflate(_ data: Data) throws -> Data {
        var stream = z_stream()
        guard czlib_deflate_init2(&stream, Z_DEFAULT_COMPRESSION, -15) == Z_OK else {
            throw GraftError(.io, "zlib could not start deflating")
        }
        defer { deflateEnd(&stream) }
        var input = [UInt8](data)
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let status: Int32 = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw GraftError(.io, "zlib could not deflate (\(status))") }
        return Data(output[0..<Int(stream.total_out)])
    }
}
