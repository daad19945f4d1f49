import DocumentModel
import DocumentStore
import Testing
import TestSupport

/// The store computes revision IDs with swift-crypto's SHA-1: it must give exactly the
/// digests of DocumentModel's own `SHA1` (revision IDs may not depend on the node).
@Suite struct CryptoSHA1Tests {
    static func digest<Hash: SHA1Hashing>(_ bytes: [UInt8], chunks: [Int], _: Hash.Type) -> [UInt8] {
        var sha = Hash()
        var offset = 0
        for size in chunks + [bytes.count] where offset < bytes.count {
            let end = min(bytes.count, offset + size)
            bytes[offset..<end].withUnsafeBytes { sha.update($0) }
            offset = end
        }
        return sha.finalize()
    }

    @Test func sameDigestsAsThePureSwiftOne() {
        var random = SplitMix64(seed: 0x5A1)
        // Every length around the 64-byte block and its 56-byte padding limit, then larger ones.
        let lengths = Array(0...200) + [1000, 1023, 1024, 1025, 4096, 65_537, 1_000_000]
        for length in lengths {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let chunks = (0..<5).map { _ in random.int(1...97) }
            let expected = SHA1.hash(bytes)
            #expect(Self.digest(bytes, chunks: [], CryptoSHA1.self) == expected, "length \(length)")
            #expect(Self.digest(bytes, chunks: chunks, CryptoSHA1.self) == expected, "length \(length) in chunks \(chunks)")
        }
        // FIPS 180 test vector.
        #expect(Digests.hex(Self.digest(Array("abc".utf8), chunks: [], CryptoSHA1.self)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test func sameRevisionIDs() {
        var random = SplitMix64(seed: 0x2E7)
        for _ in 0..<500 {
            let body = (0..<random.int(0...3000)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let parent = random.chance(0.3) ? nil : RevID("\(random.int(1...5000))-\(random.hexDigest())")
            let deleted = random.chance(0.2)
            let pure = RevID.compute(parent: parent, deleted: deleted, canonicalBody: body)
            let crypto = RevID.compute(parent: parent, deleted: deleted, canonicalBody: body, using: CryptoSHA1.self)
            #expect(pure == crypto)
        }
    }
}
