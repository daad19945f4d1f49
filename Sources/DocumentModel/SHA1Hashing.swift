/// An incremental SHA-1 implementation. ``SHA1`` (pure Swift) is DocumentModel's own; a
/// layer that may link a crypto library can pass a faster one where it computes revision
/// IDs (DocumentStore passes swift-crypto's, which uses the CPU's SHA instructions).
/// Every implementation gives the same digests, so a revision ID never depends on which
/// one computed it.
public protocol SHA1Hashing {
    init()
    /// Feeds bytes into the hash.
    mutating func update(_ bytes: UnsafeRawBufferPointer)
    /// The 20-byte digest of everything fed so far.
    mutating func finalize() -> [UInt8]
}

extension SHA1Hashing {
    /// Feeds one byte into the hash.
    public mutating func update(byte: UInt8) {
        withUnsafeBytes(of: byte) { update($0) }
    }
}

extension SHA1: SHA1Hashing {}
