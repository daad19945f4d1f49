import Foundation
import Testing
import TestSupport
@testable import DocumentModel

@Suite struct SHA1Tests {
    private func hex(_ s: String) -> String { Digests.hex(SHA1.hash(Array(s.utf8))) }

    @Test func fipsVectors() {
        #expect(hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
            == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")
            == "a49b2446a02c645bf419f995b67091253a04a259")
        #expect(Digests.hex(SHA1.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
            == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
        #expect(SHA1.hash([UInt8]()).count == 20)
    }

    /// Lengths around the padding boundary (55/56 mod 64), computed independently.
    static let paddingVectors: [(Int, String)] = [
        (1, "9842926af7ca0a8cca12604f945414f07b01e13d"),
        (55, "ddf57317ef34bfee3b6df83d359098930eb278bc"),
        (56, "a0d492bb0fc889d0eca3bc137066ab6f4f74f369"),
        (57, "11a02dcf95859677a62e75024067c22b165d890f"),
        (63, "c55856749bef509bdfe6bfebfc7bf4e793e82132"),
        (64, "bede92be29c3874e1b54ddc77988d606fc857a8e"),
        (65, "b05a80522b053d6dc7e0a517d0e70212c7dad11f"),
        (119, "504e27376a6e0f0dba8295b85cb25dc4dfa17d23"),
        (120, "82134b02fb3f702491be9bed581eeab59334acb2"),
        (121, "f004a54c50aa3705ccc2f03f21016ca6a25755cb"),
        (127, "34d5e582029e9b9b85b2febe31da3db7cdabaaea"),
        (128, "a09133e6730ffe899efb70204cb5646cd5dc24ee"),
        (129, "808aea332ce367541d37adae7f94e59c5c1a934e"),
        (1000, "4231a8a50a10fa9758db8ec71fdef855b751048a"),
    ]

    @Test(arguments: paddingVectors)
    func paddingBoundaries(length: Int, expected: String) {
        let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
        #expect(Digests.hex(SHA1.hash(message)) == expected)
    }

    @Test func millionAsInChunks() {
        var sha = SHA1()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 999)
        for _ in 0..<1001 { sha.update(chunk) }
        sha.update([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000 - 999 * 1001))
        #expect(Digests.hex(sha.finalize()) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func incrementalSplitAtEveryBoundary() {
        let message = (0..<768).map { UInt8(truncatingIfNeeded: $0) }
        let expected = "ac2a264c8ec1f4232a40854e8239bc3a697ab1d2"
        #expect(Digests.hex(SHA1.hash(message)) == expected)
        for split in 0...message.count {
            var sha = SHA1()
            sha.update(message[..<split])
            sha.update(message[split...])
            #expect(Digests.hex(sha.finalize()) == expected, "split at \(split)")
        }
        // Three-way splits around block boundaries.
        for a in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128] {
            for b in [a, a + 1, a + 63, a + 64, a + 200] where b <= message.count {
                var sha = SHA1()
                message[..<a].withUnsafeBytes { sha.update($0) }
                sha.update(message[a..<b])
                sha.update(message[b...].lazy.map { $0 })   // non-contiguous path
                #expect(Digests.hex(sha.finalize()) == expected, "splits \(a) \(b)")
            }
        }
    }

    @Test func lengthsAroundPaddingBoundary() {
        // Every length 0...200, hashed whole, byte by byte, and via a non-contiguous sequence.
        var rng = SplitMix64(seed: 11)
        let data = (0..<200).map { _ in UInt8.random(in: 0...255, using: &rng) }
        for n in 0...200 {
            let whole = SHA1.hash(data[..<n])
            var byteWise = SHA1()
            for b in data[..<n] { byteWise.update(byte: b) }
            #expect(byteWise.finalize() == whole, "length \(n)")
            #expect(SHA1.hash(data[..<n].reversed().reversed()) == whole)
        }
    }

    @Test func finalizeDoesNotDisturbState() {
        var sha = SHA1()
        sha.update(Array("ab".utf8))
        let first = sha.finalize()
        #expect(sha.finalize() == first)
        #expect(Digests.hex(first) == "da23614e02469a0d7c7bd1bdab5c9c474b1904dc")
        sha.update(Array("c".utf8))
        #expect(Digests.hex(sha.finalize()) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test func agreesWithHashOfRandomMessages() {
        // Consistency between one-shot and randomly chunked hashing.
        var rng = SplitMix64(seed: 12)
        for _ in 0..<200 {
            let n = rng.int(0...2000)
            let message = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var sha = SHA1()
            var i = 0
            while i < n {
                let step = min(n - i, rng.int(1...150))
                sha.update(message[i..<i + step])
                i += step
            }
            #expect(sha.finalize() == SHA1.hash(message))
        }
    }
}
