// Compact binary storage form of a revision tree.
//
// Layout (version 1): version byte, varint node count, then per node in order:
//   varint parent index + 1 (0 = root; must be below the node's own index)
//   flags byte: bit 0 deleted, bit 1 hasBody, bit 2 digest packed as raw bytes
//   varint generation (≥ 1; a child's is its parent's + 1)
//   varint sequence
//   varint byte count, then the digest bytes: raw bytes when the digest is
//   non-empty lowercase hex of even length (it is re-expanded to hex), else UTF-8.

extension RevTree {
    static let serializationVersion: UInt8 = 1

    /// The compact binary form; `init(serialized:)` restores an equal tree.
    public func serialized() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(8 + nodes.count * 28)
        out.append(RevTree.serializationVersion)
        ByteWriter.appendVarint(UInt64(nodes.count), to: &out)
        for node in nodes {
            ByteWriter.appendVarint(node.parent.map { UInt64($0) + 1 } ?? 0, to: &out)
            let flagsAt = out.count
            out.append((node.deleted ? 1 : 0) | (node.hasBody ? 2 : 0))
            ByteWriter.appendVarint(UInt64(clamping: node.revID.generation), to: &out)
            ByteWriter.appendVarint(node.sequence, to: &out)
            var digest = node.revID.digest
            let packed = digest.withUTF8 { RevTree.appendDigest($0, to: &out) }
            if packed { out[flagsAt] |= 4 }
        }
        return out
    }

    /// Appends a digest's length and bytes: raw bytes if it is non-empty
    /// lowercase hex of even length (returns true), else its UTF-8 (returns false).
    static func appendDigest(_ digest: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) -> Bool {
        @inline(__always) func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c &- 0x30
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c &- 0x57
            default: return nil
            }
        }
        let n = digest.count
        var packable = n > 0 && n % 2 == 0
        if packable {
            for c in digest where nibble(c) == nil {
                packable = false
                break
            }
        }
        guard packable else {
            ByteWriter.appendVarint(UInt64(n), to: &out)
            out.append(contentsOf: digest)
            return false
        }
        ByteWriter.appendVarint(UInt64(n / 2), to: &out)
        var i = 0
        while i < n {
            out.append(nibble(digest[i])! << 4 | nibble(digest[i + 1])!)
            i += 2
        }
        return true
    }

    /// Decodes `serialized()` output. Rejects anything malformed with `.corrupt`.
    public init(serialized bytes: some Collection<UInt8>) throws(RevTreeError) {
        let decoded = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(RevTreeError) -> [Node] in try RevTree.decodeNodes(buffer) }
        } ?? Array(bytes).withUnsafeBufferPointer { buffer in
            Result { () throws(RevTreeError) -> [Node] in try RevTree.decodeNodes(buffer) }
        }
        self.init()
        if let duplicate = replaceNodes(try decoded.get()) {
            throw .corrupt("duplicate revision \(duplicate)")
        }
    }

    static func decodeNodes(_ buffer: UnsafeBufferPointer<UInt8>) throws(RevTreeError) -> [Node] {
        var reader = ByteReader(buffer)
        guard let version = reader.readByte() else { throw .corrupt("empty input") }
        guard version == serializationVersion else { throw .corrupt("unknown version \(version)") }
        guard let count = reader.readVarint() else { throw .corrupt("bad node count") }
        // Every node takes at least 5 bytes.
        guard count <= UInt64(reader.remaining / 5) else { throw .corrupt("node count \(count) too large") }
        var nodes = [Node]()
        nodes.reserveCapacity(Int(count))
        for i in 0..<Int(count) {
            guard let parentPlusOne = reader.readVarint(), parentPlusOne <= UInt64(i) else {
                throw .corrupt("node \(i): bad parent")
            }
            guard let flags = reader.readByte(), flags & ~7 == 0 else { throw .corrupt("node \(i): bad flags") }
            guard let generation = reader.readVarint(), generation >= 1, generation <= UInt64(Int.max) else {
                throw .corrupt("node \(i): bad generation")
            }
            guard let sequence = reader.readVarint() else { throw .corrupt("node \(i): bad sequence") }
            guard let length = reader.readVarint(), length <= UInt64(reader.remaining),
                  let raw = reader.readBytes(Int(length)) else {
                throw .corrupt("node \(i): bad digest length")
            }
            let digest: String
            if flags & 4 != 0 {
                guard !raw.isEmpty else { throw .corrupt("node \(i): empty packed digest") }
                digest = Digests.hex(raw)
            } else {
                guard let text = String(validating: raw, as: UTF8.self) else {
                    throw .corrupt("node \(i): digest is not UTF-8")
                }
                digest = text
            }
            let parent = parentPlusOne == 0 ? nil : Int(parentPlusOne - 1)
            let rev = RevID(generation: Int(generation), digest: digest)
            if let parent, nodes[parent].revID.generation &+ 1 != rev.generation {
                throw .corrupt("node \(i): generation does not follow its parent's")
            }
            nodes.append(Node(revID: rev, parent: parent, deleted: flags & 1 != 0,
                              hasBody: flags & 2 != 0, sequence: sequence))
        }
        guard reader.remaining == 0 else { throw .corrupt("\(reader.remaining) trailing bytes") }
        return nodes
    }
}
