import Foundation
import Testing
import TestSupport
@testable import DocumentModel

/// Strings are scanned and written eight bytes at a time (`ByteWord`): the word tests
/// must flag exactly the words holding a byte the byte-wise loops stop at, and a special
/// byte must be handled wherever it sits relative to the 8-byte steps.
@Suite struct JSONStringScanTests {
    static func escaped(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    static func special(_ byte: UInt8) -> Bool { escaped(byte) || byte >= 0x80 }

    static func word(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } }

    @Test func theWordTestAgreesWithTheByteTest() {
        // Every byte value in every position of an otherwise plain word.
        for position in 0..<8 {
            for value in 0...255 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 8)
                bytes[position] = UInt8(value)
                #expect(ByteWord.hasEscapeOrNonASCII(Self.word(bytes)) == Self.special(UInt8(value)), "byte \(value) at \(position)")
                #expect(ByteWord.hasEscape(Self.word(bytes)) == Self.escaped(UInt8(value)), "byte \(value) at \(position)")
            }
        }
        // Random words, biased towards the bytes next to the limits.
        var random = SplitMix64(seed: 0x5CA7)
        let near: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7E, 0x7F, 0x80, 0xFF]
        for _ in 0..<200_000 {
            let bytes = (0..<8).map { _ in random.chance(0.5) ? near[random.int(0...near.count - 1)] : UInt8(random.int(0x20...0x7E)) }
            #expect(ByteWord.hasEscapeOrNonASCII(Self.word(bytes)) == bytes.contains(where: Self.special), "\(bytes)")
            #expect(ByteWord.hasEscape(Self.word(bytes)) == bytes.contains(where: Self.escaped), "\(bytes)")
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

    /// The canonical writer escapes exactly `"`, `\` and control characters, wherever
    /// they sit (compared with a byte-by-byte reference).
    @Test func theWriterEscapesAtEveryOffset() {
        func reference(_ text: String) -> [UInt8] {
            var out: [UInt8] = [0x22]
            for byte in text.utf8 {
                switch byte {
                case 0x22: out += [0x5C, 0x22]
                case 0x5C: out += [0x5C, 0x5C]
                case 0x08: out += Array("\\b".utf8)
                case 0x0C: out += Array("\\f".utf8)
                case 0x0A: out += Array("\\n".utf8)
                case 0x0D: out += Array("\\r".utf8)
                case 0x09: out += Array("\\t".utf8)
                case ..<0x20: out += Array(String(format: "\\u%04x", Int(byte)).utf8)
                default: out.append(byte)
                }
            }
            return out + [0x22]
        }
        for offset in 0..<40 {
            let plain = String(repeating: "y", count: offset)
            for special in ["\"", "\\", "\n", "\u{1}", "\u{1f}", "é", "\u{7f}", "/", "x"] {
                let text = plain + special + plain + special
                #expect(JSON.string(text).canonicalBytes() == reference(text), "\(text.debugDescription)")
            }
        }
    }
}
