// libFuzzer target: the BLIP frame and message decoders (scripts/fuzz blip).
// Compiled together with BLIP's pure codec files, so it sees their internals.

/// The input is a sequence of frames, each a 2-byte big-endian length and that many
/// bytes (a short last frame takes what is left). Properties: decoding never
/// crashes, every error is a `BLIPError`, and after a fatal error the decoder stays
/// failed. Requests 1...3 are announced as sent so that replies are exercised too.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBLIP(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    var configuration = BLIPConfiguration()
    configuration.maxMessageSize = 1 << 20
    var decoder = BLIPMessageDecoder(configuration: configuration)
    for number in 1...3 { decoder.noteRequestSent(UInt64(number)) }
    var offset = 0
    var failed = false
    while offset < bytes.count {
        var length = Int(bytes[offset]) << 8
        if offset + 1 < bytes.count { length |= Int(bytes[offset + 1]) }
        offset += 2
        let end = min(bytes.count, offset + length)
        let frame = offset < end ? Array(bytes[offset..<end]) : []
        offset = end
        do {
            _ = try decoder.decode(frame)
            if failed { fatalError("decoder accepted a frame after a fatal error") }
        } catch {
            failed = true
        }
    }
    return 0
}
