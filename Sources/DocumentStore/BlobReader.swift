import Blocking
import Foundation

/// Reads one stored blob from its start, in pieces, decrypting an encrypted one as it goes.
/// One reader per stream: it is handed from task to task, never used by two at once.
public final class BlobReader: @unchecked Sendable {
    /// The blob's plaintext length.
    public let length: Int
    private let handle: FileHandle
    private let cipher: BlobCipher?
    private var prefix: [UInt8] = []
    private var index: UInt32 = 0
    private var remainingSealed: Int = 0

    init(path: String, cipher: BlobCipher?, encrypted: Bool) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CocoaError(.fileNoSuchFile) }
        self.handle = handle
        let size = Int((try? handle.seekToEnd()) ?? 0)
        try handle.seek(toOffset: 0)
        if encrypted {
            guard let cipher, let plain = BlobCipher.plaintextLength(fileSize: size) else {
                try? handle.close()
                throw CocoaError(.fileReadCorruptFile)
            }
            let header = [UInt8](try handle.read(upToCount: BlobCipher.headerSize) ?? Data())
            guard header.count == BlobCipher.headerSize, Array(header[0..<4]) == BlobCipher.magic else {
                try? handle.close()
                throw CocoaError(.fileReadCorruptFile)
            }
            prefix = Array(header[4..<12])
            self.cipher = cipher
            length = plain
            remainingSealed = size - BlobCipher.headerSize
        } else {
            self.cipher = nil
            length = size
        }
    }

    deinit { try? handle.close() }

    /// The next piece of plaintext (up to 64 KiB); empty at the end. Throws when an
    /// encrypted chunk fails authentication.
    public func next() throws -> [UInt8] {
        guard let cipher else {
            return [UInt8](try handle.read(upToCount: BlobCipher.chunk) ?? Data())
        }
        guard remainingSealed > 0 else { return [] }
        let size = min(remainingSealed, BlobCipher.chunk + BlobCipher.tag)
        let sealed = [UInt8](try handle.read(upToCount: size) ?? Data())
        guard sealed.count == size else { throw CocoaError(.fileReadCorruptFile) }
        remainingSealed -= size
        let plain = try cipher.open(sealed, prefix: prefix, index: index, last: remainingSealed == 0)
        index += 1
        return plain
    }

    /// `next()` on the blocking pool (a streamed download's pieces).
    public func nextOffThePool() async throws -> [UInt8] {
        try await BlockingPool.shared.perform { () throws -> [UInt8] in try self.next() }
    }

    /// The whole rest of the blob.
    public func readAll() throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(length)
        while true {
            let piece = try next()
            if piece.isEmpty { return out }
            out += piece
        }
    }
}
