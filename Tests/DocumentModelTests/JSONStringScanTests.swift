import Testing
import TestSupport
@testable import DocumentModel

/// Strings are scanned eight bytes at a time (`JSONParser.hasSpecialByte`): the word
/// test must flag exactly the words holding a byte the byte-wise scan stops at, and a
/// special byte must be found wherever it sits relative to the 8-byte steps.
@Suite struct JSONStringScanTests {
    static func special(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte >= 0x80 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    @Test func theWordTestAgreesWithTheByteTest() {
        // Every byte value in every position of an otherwise plain word.
        for position in 0..<8 {
            for value in 0...255 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 8)
                bytes[position] = UInt8(value)
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                #expect(JSONParser.hasSpecialByte(word) == Self.special(UInt8(value)), "byte \(value) at \(position)")
            }
        }
        // Random words, biased towards the bytes next to the limits.
        var random = SplitMix64(seed: 0x5CA7)
        let near: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7E, 0x7F, 0x80, 0xFF]
        for _ in 0..<200_000 {
            let bytes = (0..<8).map { _ in random.chance(0.5) ? near[random.int(0...near.count - 1)] : UInt8(random.int(0x20...0x7E)) }
            let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            #expect(JSONParser.hasSpecialByte(word) == bytes.contains(where: Self.special), "\(bytes)")
        }
    }

    @Test func aSpecialByteIsFoundAtEveryOffset() throws {
        for offset in 0..<40 {
            let plain = String(repeating: "x", count: offset)
            #expect(try JSON.parse("\"\(plain)\"") == .string(plain))
            #expect(try JSON.parse("\"\(plain)\\n\(plain)\"") == .string(plain + "\n" + plain))
            #expect(try JSON.parse("\"\(plain)é\(plain)\"") == .string(plain + "é" + plain))
            #expect(throws: JSONError.self) { try JSON.parse("\"\(plain)\u{1}\(plain)\"") }
            #expect(throws: JSONError.self) { try JSON.parse("\"\(plain)") }
        }
    }
}
