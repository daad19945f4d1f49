/// Eight bytes at once (SWAR) for the JSON parser, the canonical scan and the canonical
/// writer: whether a word of string content holds a byte that ends a plain run.
enum ByteWord {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The eight bytes at `offset` (any alignment).
    @inline(__always)
    static func load(_ base: UnsafePointer<UInt8>, at offset: Int) -> UInt64 {
        UnsafeRawPointer(base).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
    }

    /// Whether any byte of `word` is a quote, a backslash or below 0x20: what canonical
    /// JSON escapes. Each test sets the high bit of a byte that matches (and of none when
    /// no byte does), so it never misses one.
    @inline(__always)
    static func hasEscape(_ word: UInt64) -> Bool {
        escapeMarks(word) & highBits != 0
    }

    /// `hasEscape`, or a byte at or above 0x80 (the parser validates UTF-8 byte by byte).
    @inline(__always)
    static func hasEscapeOrNonASCII(_ word: UInt64) -> Bool {
        (escapeMarks(word) | word) & highBits != 0
    }

    @inline(__always)
    private static func escapeMarks(_ word: UInt64) -> UInt64 {
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let control = (word &- ones &* 0x20) & ~word
        return control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
    }
}
