import Foundation
import Testing
import TestSupport
@testable import DocumentModel

/// Never-crash fuzzing and round-trip properties of the parser.
@Suite struct JSONParserFuzzTests {
    /// Parses and checks the outcome is a value or a well-formed error.
    private func parseNeverCrashes(_ bytes: [UInt8]) {
        do {
            let v = try JSON.parse(bytes)
            // Whatever parsed must re-encode and re-parse to the same value.
            let again = try? JSON.parse(v.canonicalBytes())
            #expect(again == v)
        } catch {
            #expect(error.offset >= 0 && error.offset <= bytes.count, "\(error) for \(bytes)")
            #expect(!error.reason.isEmpty)
        }
    }

    @Test func randomBytes() {
        var rng = SplitMix64(seed: 1)
        let alphabet = Array("{}[]\":,.-+eE0123456789tfnrulas \\/u\n".utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC3, 0xE2, 0xED, 0xF0, 0xF4, 0xFF]
        for _ in 0..<5000 {
            let n = rng.int(0...48)
            let bytes: [UInt8] = (0..<n).map { _ in
                rng.chance(0.8) ? alphabet.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
            }
            parseNeverCrashes(bytes)
        }
    }

    @Test func mutationsOfValidJSON() {
        var rng = SplitMix64(seed: 2)
        for _ in 0..<3000 {
            var bytes = RandomJSON.value(&rng).canonicalBytes()
            for _ in 0..<rng.int(1...4) {
                let i = bytes.isEmpty ? 0 : rng.int(0...(bytes.count - 1))
                switch rng.int(0...4) {
                case 0 where !bytes.isEmpty: bytes[i] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes.insert(Array("{}[]\",:\\u0e-".utf8).randomElement(using: &rng)!, at: min(i, bytes.count))
                case 2 where !bytes.isEmpty: bytes.remove(at: i)
                case 3: bytes.removeLast(min(bytes.count, rng.int(0...3)))
                default: if !bytes.isEmpty { bytes[i] ^= 1 << UInt8(rng.int(0...7)) }
                }
            }
            parseNeverCrashes(bytes)
        }
    }

    @Test func canonicalRoundTrip() throws {
        var rng = SplitMix64(seed: 3)
        for _ in 0..<2000 {
            let v = RandomJSON.value(&rng)
            let bytes = v.canonicalBytes()
            let parsed = try JSON.parse(bytes)
            #expect(parsed == v, "\(v)")
            #expect(parsed.canonicalBytes() == bytes)
        }
    }

    /// Writes JSON with random whitespace, random key order and needless escapes,
    /// independently of the canonical writer.
    private func looseText(_ v: JSON, _ rng: inout SplitMix64) -> String {
        func ws() -> String { ["", " ", "\n", "\t ", "\r\n  "].randomElement(using: &rng)! }
        switch v {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return i.magnitude <= 1 << 53 && rng.chance(0.2) ? "\(i).0" : "\(i)"
        case .double(let d): return rng.chance(0.5) ? "\(d)" : String(format: "%.17g", d)
        case .string(let s): return quote(s, &rng)
        case .array(let a):
            return "[" + ws() + a.map { looseText($0, &rng) }.joined(separator: ws() + "," + ws()) + ws() + "]"
        case .object(let o):
            let members = o.shuffled(using: &rng).map { quote($0.key, &rng) + ws() + ":" + ws() + looseText($0.value, &rng) }
            return "{" + ws() + members.joined(separator: "," + ws()) + ws() + "}"
        }
    }

    private func quote(_ s: String, _ rng: inout SplitMix64) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/" where rng.chance(0.5): out += "\\/"
            default:
                if scalar.value < 0x20 || rng.chance(0.2) {
                    for unit in String(scalar).utf16 { out += "\\u" + hex4(unit) }
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    private func hex4(_ u: UInt16) -> String {
        let h = String(u, radix: 16)
        return String(repeating: "0", count: 4 - h.count) + (u & 1 == 0 ? h : h.uppercased())
    }

    @Test func looseTextParsesToTheSameValue() throws {
        var rng = SplitMix64(seed: 4)
        for _ in 0..<1500 {
            let v = RandomJSON.value(&rng)
            let text = looseText(v, &rng)
            let parsed = try JSON.parse(text)
            #expect(parsed == v, "\(text)")
            #expect(parsed.canonicalBytes() == v.canonicalBytes(), "\(text)")
        }
    }
}
