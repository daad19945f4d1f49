/// A JSON parse failure: where in the input it happened and why.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset in the input at which the problem was found.
    public let offset: Int
    /// Human-readable message, including the offset, e.g. "unexpected character 'x' at offset 12".
    public let reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { reason }
}

extension JSONError {
    /// Renders a byte for messages: printable ASCII as `'x'`, anything else as `byte 0xNN`.
    static func describe(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F {
            return "character '\(Character(Unicode.Scalar(byte)))'"
        }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x\(hex.count == 1 ? "0" + hex : hex)"
    }

    static func unexpected(_ byte: UInt8, at offset: Int, expected: String? = nil) -> JSONError {
        var reason = "unexpected \(describe(byte)) at offset \(offset)"
        if let expected { reason += " (expected \(expected))" }
        return JSONError(offset: offset, reason: reason)
    }

    static func endOfInput(at offset: Int) -> JSONError {
        JSONError(offset: offset, reason: "unexpected end of input at offset \(offset)")
    }

    static func make(_ what: String, at offset: Int) -> JSONError {
        JSONError(offset: offset, reason: "\(what) at offset \(offset)")
    }
}
