import CZlib

/// A raw-deflate compression context for one direction of a connection (zlib).
///
/// Each call compresses one frame's data and ends with `Z_SYNC_FLUSH`, so every
/// frame holds complete deflate blocks; the sync marker `00 00 FF FF` that the
/// flush always ends with is not returned (BLIP strips it from the wire). The
/// context (its 32 KB history window) carries over from frame to frame.
///
/// Not thread-safe: owned by exactly one `BLIPFrameEncoder`.
final class Deflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private var scratch: UnsafeMutableBufferPointer<UInt8>

    /// Nil if zlib cannot set up the context (out of memory or invalid level).
    init?(level: Int32) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // -1 is zlib's default level (6); anything else is clamped to 0…9.
        let clamped = level == Z_DEFAULT_COMPRESSION ? level : min(max(level, 0), 9)
        guard czlib_deflate_init_raw(stream, clamped) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            return nil
        }
        scratch = .allocate(capacity: 32 * 1024)
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        scratch.deallocate()
    }

    /// Compresses `input`, sync-flushes, and appends the output without its trailing
    /// `00 00 FF FF` to `output`. Returns false if zlib reports an error.
    func compressFrame(_ input: ArraySlice<UInt8>, appendingTo output: inout [UInt8]) -> Bool {
        let bound = Int(deflateBound(stream, uLong(input.count))) + 16
        if scratch.count < bound {
            grow(to: bound, preserving: 0)
        }
        var produced = 0
        let ok = input.withUnsafeBufferPointer { inBuffer -> Bool in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: inBuffer.baseAddress)
            stream.pointee.avail_in = uInt(inBuffer.count)
            defer {
                stream.pointee.next_in = nil
                stream.pointee.avail_in = 0
            }
            while true {
                guard let base = scratch.baseAddress else { return false }
                let room = scratch.count - produced
                stream.pointee.next_out = base + produced
                stream.pointee.avail_out = uInt(room)
                let rc = deflate(stream, Z_SYNC_FLUSH)
                produced += room - Int(stream.pointee.avail_out)
                stream.pointee.next_out = nil
                guard rc == Z_OK || rc == Z_BUF_ERROR else { return false }
                if stream.pointee.avail_out != 0 {
                    return stream.pointee.avail_in == 0
                }
                // Output buffer full: give zlib more room and flush again.
                grow(to: scratch.count * 2, preserving: produced)
            }
        }
        guard ok else { return false }
        var length = produced
        if length >= 4, scratch[length - 4] == 0, scratch[length - 3] == 0,
           scratch[length - 2] == 0xFF, scratch[length - 1] == 0xFF
        {
            length -= 4
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[0..<length]))
        return true
    }

    /// Replaces the scratch buffer by a larger one, keeping its first `count` bytes.
    private func grow(to capacity: Int, preserving count: Int) {
        let bigger = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: capacity)
        if count > 0 {
            _ = bigger.initialize(fromContentsOf: scratch[0..<count])
        }
        scratch.deallocate()
        scratch = bigger
    }
}
