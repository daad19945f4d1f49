@preconcurrency import Crypto
import Foundation

/// Encrypts attachment blobs at rest: AES-256-GCM in 64 KiB chunks under the database's
/// random attachment key (kept inside the encrypted database, so rotating the database
/// key needs no blob rewrite).
///
/// File format (`<sha1 hex>.enc`): a 16-byte header, `SHB1` + an 8-byte random nonce
/// prefix + 4 zero bytes; then chunks of up to 64 KiB of plaintext, each sealed (its
/// ciphertext then its 16-byte tag) with nonce = prefix ‖ big-endian chunk index and
/// additional data = big-endian chunk index ‖ 1 for the last chunk else 0, so chunks can
/// be neither reordered nor cut off. The digest in the name stays that of the plaintext.
final class BlobCipher: Sendable {
    static let chunk = 64 * 1024
    static let tag = 16
    static let headerSize = 16
    static let magic: [UInt8] = Array("SHB1".utf8)

    let key: SymmetricKey

    init(key: [UInt8]) {
        self.key = SymmetricKey(data: key)
    }

    /// Plaintext length of an encrypted file of `size` bytes, or nil if no such file can exist.
    static func plaintextLength(fileSize size: Int) -> Int? {
        let body = size - headerSize
        guard body >= tag else { return nil }
        let sealedChunk = chunk + tag
        let remainder = body % sealedChunk
        guard remainder == 0 || remainder >= tag else { return nil }
        let chunks = body / sealedChunk + (remainder == 0 ? 0 : 1)
        return body - chunks * tag
    }

    func makeSealer() -> Sealer { Sealer(key: key) }

    /// Seals a stream of plaintext: feed it bytes, take what it gives back, then finish.
    struct Sealer {
        let key: SymmetricKey
        let prefix: [UInt8]
        private var pending: [UInt8] = []
        private var index: UInt32 = 0

        init(key: SymmetricKey) {
            self.key = key
            var generator = SystemRandomNumberGenerator()
            prefix = (0..<8).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        }

        var header: [UInt8] { BlobCipher.magic + prefix + [0, 0, 0, 0] }

        /// Adds plaintext; returns sealed chunks that are complete (never the last one).
        mutating func add(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
            pending.append(contentsOf: bytes)
            var out: [UInt8] = []
            while pending.count > BlobCipher.chunk {
                out += try seal(pending[..<BlobCipher.chunk], last: false)
                pending.removeFirst(BlobCipher.chunk)
            }
            return out
        }

        /// Seals what is left as the last chunk.
        mutating func finish() throws -> [UInt8] {
            let out = try seal(pending[...], last: true)
            pending = []
            return out
        }

        private mutating func seal(_ plain: ArraySlice<UInt8>, last: Bool) throws -> [UInt8] {
            let box = try AES.GCM.seal(
                plain, using: key, nonce: try BlobCipher.nonce(prefix, index),
                authenticating: BlobCipher.additionalData(index, last: last))
            index += 1
            return [UInt8](box.ciphertext) + [UInt8](box.tag)
        }
    }

    /// Opens sealed chunk `index` (ciphertext then tag).
    func open(_ sealed: [UInt8], prefix: [UInt8], index: UInt32, last: Bool) throws -> [UInt8] {
        guard sealed.count >= Self.tag else { throw CocoaError(.fileReadCorruptFile) }
        let box = try AES.GCM.SealedBox(
            nonce: try Self.nonce(prefix, index), ciphertext: sealed.dropLast(Self.tag), tag: sealed.suffix(Self.tag))
        return [UInt8](try AES.GCM.open(box, using: key, authenticating: Self.additionalData(index, last: last)))
    }

    static func nonce(_ prefix: [UInt8], _ index: UInt32) throws -> AES.GCM.Nonce {
        try AES.GCM.Nonce(data: prefix + bigEndian(index))
    }

    static func additionalData(_ index: UInt32, last: Bool) -> [UInt8] {
        bigEndian(index) + [last ? 1 : 0]
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }
}
