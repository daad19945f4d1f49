import CZlib

/// A raw-deflate decompression context for one direction of a connection (zlib).
///
/// Each call inflates one frame's compressed data followed by the `00 00 FF FF`
/// sync marker that the sender stripped, and returns everything the frame
/// decodes to. The context carries over from frame to frame.
///
/// Not thread-safe: owned by exactly one `BLIPFrameDecoder`.
final class Inflater {
    /// Why a frame could not be inflated.
    enum Failure: Error, Equatable {
        /// zlib rejected the data (message from zlib when it has one).
        case invalidData(String)
        /// The data ended the deflate stream (a final block); BLIP never does that.
        case streamEnded
        /// The frame inflated to more than the allowed number of bytes.
        case tooLarge
        /// The frame's data ends in the middle of a deflate block.
        case truncated
    }

    private static let syncMarker: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]
    private let stream: UnsafeMutablePointer<z_stream>
    private let scratch: UnsafeMutableBufferPointer<UInt8>

    /// Nil if zlib cannot set up the context (out of memory).
    init?() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard czlib_inflate_init_raw(stream) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            return nil
        }
        scratch = .allocate(capacity: 64 * 1024)
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        scratch.deallocate()
    }

    /// Inflates one frame's data (without its sync marker), appending the result to
    /// `output`; fails if that would append more than `limit` bytes.
    func inflateFrame(_ input: ArraySlice<UInt8>, limit: Int, appendingTo output: inout [UInt8]) throws(Failure) {
        var budget = limit
        try run(input, budget: &budget, output: &output)
        try run(Self.syncMarker[...], budget: &budget, output: &output)
        // zlib sets bit 128 of data_type when it stopped right after a block ended.
        // A well-formed frame always ends there (the sender sync-flushed); anything
        // else would make every later frame undecodable.
        guard stream.pointee.data_type & 128 != 0 else {
            throw .truncated
        }
    }

    private func run(_ input: ArraySlice<UInt8>, budget: inout Int, output: inout [UInt8]) throws(Failure) {
        let failure: Failure? = input.withUnsafeBufferPointer { inBuffer -> Failure? in
            guard let scratchBase = scratch.baseAddress else { return .invalidData("no buffer") }
            stream.pointee.next_in = UnsafeMutablePointer(mutating: inBuffer.baseAddress)
            stream.pointee.avail_in = uInt(inBuffer.count)
            defer {
                stream.pointee.next_in = nil
                stream.pointee.avail_in = 0
                stream.pointee.next_out = nil
                stream.pointee.avail_out = 0
            }
            while true {
                let availableIn = stream.pointee.avail_in
                stream.pointee.next_out = scratchBase
                stream.pointee.avail_out = uInt(scratch.count)
                let rc = inflate(stream, Z_SYNC_FLUSH)
                let produced = scratch.count - Int(stream.pointee.avail_out)
                if produced > 0 {
                    if produced > budget { return .tooLarge }
                    budget -= produced
                    output.append(contentsOf: UnsafeBufferPointer(start: scratchBase, count: produced))
                }
                switch rc {
                case Z_OK, Z_BUF_ERROR:
                    break
                case Z_STREAM_END:
                    return .streamEnded
                default:
                    let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(rc)"
                    return .invalidData(reason)
                }
                if stream.pointee.avail_out != 0 {
                    // Output not full: zlib has written everything it can from this input.
                    return stream.pointee.avail_in == 0 ? nil : .truncated
                }
                if produced == 0 && stream.pointee.avail_in == availableIn {
                    return .truncated  // no progress at all: never loop forever
                }
                // Output buffer was full: call again for the rest.
            }
        }
        if let failure {
            throw failure
        }
    }
}
