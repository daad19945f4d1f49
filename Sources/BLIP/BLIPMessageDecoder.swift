/// Bytes in, messages out: decodes one direction of a BLIP connection (pure: no I/O).
///
/// Feed it every binary transport message (one frame each) in order. It verifies
/// checksums, inflates compressed frames, reassembles interleaved messages, and
/// reports ACKs received and ACKs due. A thrown `BLIPError` is fatal for the
/// connection and latches: every later call throws it again. Frame errors (the
/// spec's recoverable ones) come back as `.ignoredFrame` / `.malformedMessage`.
///
/// Replies are accepted only for requests announced with `noteRequestSent`.
public struct BLIPMessageDecoder: ~Copyable, Sendable {
    private var frames: BLIPFrameDecoder
    private var assembler: MessageAssembler
    private var failure: BLIPError?

    /// A decoder with the limits of `configuration`.
    public init(configuration: BLIPConfiguration = .init()) {
        frames = BLIPFrameDecoder(maxFrameOutput: configuration.maxMessageSize)
        assembler = MessageAssembler(configuration: configuration)
    }

    /// Announces that our request `number` went out; if `expectsReply`, its RPY/ERR
    /// is accepted. Replies to numbers never announced are fatal; replies to
    /// announced requests that await none are ignored (frame error).
    public mutating func noteRequestSent(_ number: UInt64, expectsReply: Bool = true) {
        assembler.noteRequestSent(number, expectsReply: expectsReply)
    }

    /// Number of incoming messages in progress.
    public var incompleteMessageCount: Int { assembler.incompleteCount }

    /// Decodes one frame.
    public mutating func decode(_ bytes: [UInt8]) throws(BLIPError) -> BLIPDecoderEvent {
        if let failure {
            throw failure
        }
        do {
            let frame = try frames.decode(bytes)
            return try assembler.receive(frame)
        } catch {
            failure = error
            throw error
        }
    }

    /// Decodes several frames in order; stops at (and throws) the first fatal error.
    public mutating func decode(contentsOf frames: some Sequence<[UInt8]>) throws(BLIPError) -> [BLIPDecoderEvent] {
        var events: [BLIPDecoderEvent] = []
        for frame in frames {
            events.append(try decode(frame))
        }
        return events
    }
}
