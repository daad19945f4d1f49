/// Finds the end of an HTTP request head — an empty line: `\r\n\r\n`, or the bare
/// `\n\n` that lenient parsers accept — in bytes fed in pieces of any size (pure).
struct HeadTerminatorScanner: Sendable {
    /// 0: inside a line; 1: just after a line feed; 2: after a line feed and a carriage return.
    private var state = 0
    /// Whether the end of the head has been seen.
    private(set) var found = false
    /// Bytes of the head seen so far (all of it, terminator included, once `found`).
    private(set) var headLength = 0

    /// Feeds the next bytes; returns `found`.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> Bool {
        guard !found else { return true }
        for byte in bytes {
            headLength += 1
            switch (byte, state) {
            case (0x0A, 1), (0x0A, 2):
                found = true
                return true
            case (0x0A, _):
                state = 1
            case (0x0D, 1):
                state = 2
            case (0x0D, _):
                break
            default:
                state = 0
            }
        }
        return false
    }
}
