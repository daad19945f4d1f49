import Testing
import TestSupport
@testable import DocumentModel

@Suite(.ownThread) struct RevTreeSerializationTests {
    private func checkRoundTrip(_ tree: RevTree) throws {
        let bytes = tree.serialized()
        let back = try RevTree(serialized: bytes)
        #expect(back == tree)
        #expect(back.leaves == tree.leaves)
        #expect(back.winner == tree.winner)
        #expect(back.mergeBase == tree.mergeBase)
        for (i, node) in tree.nodes.enumerated() { #expect(back.index(of: node.revID) == i) }
        #expect(back.serialized() == bytes)
        #expect(try RevTree(serialized: bytes[...]) == tree)
        #expect(try RevTree(serialized: bytes.lazy.map { $0 }) == tree)
    }

    @Test func emptyAndSmallTrees() throws {
        try checkRoundTrip(RevTree())
        #expect(RevTree().serialized() == [1, 0])
        var tree = RevTree()
        try tree.insert(RevID("1-0a0b")!, parent: nil, deleted: true, hasBody: false, sequence: 300)
        // version, count, parent+1, flags (deleted|packed), generation, sequence (varint 300), 2 raw digest bytes
        #expect(tree.serialized() == [1, 1, 0, 0b101, 1, 0xAC, 0x02, 2, 0x0A, 0x0B])
        try checkRoundTrip(tree)
    }

    @Test func randomTreesRoundTrip() throws {
        var rng = SplitMix64(seed: 300)
        for _ in 0..<300 {
            let ref = ReferenceTree.random(&rng, size: rng.int(1...60), stemmedRoots: true)
            var tree = try ref.buildPairwise(order: ref.topologicalOrder(&rng))
            #expect(tree.shape == ref.shape)
            try checkRoundTrip(tree)
            tree.stem(limit: rng.int(1...5))
            try checkRoundTrip(tree)
        }
    }

    @Test func truncationsAreRejected() throws {
        var rng = SplitMix64(seed: 301)
        let ref = ReferenceTree.random(&rng, size: 30, stemmedRoots: true)
        let bytes = try ref.buildPairwise(order: Array(ref.nodes.indices)).serialized()
        for n in 0..<bytes.count {
            #expect(throws: RevTreeError.self) { try RevTree(serialized: bytes[..<n]) }
        }
        #expect(throws: RevTreeError.self) { try RevTree(serialized: bytes + [0]) }
    }

    static let corrupt: [[UInt8]] = [
        [],
        [2, 0],                                     // unknown version
        [1],                                        // no count
        [1, 1, 0, 0, 1, 1, 1],                      // digest bytes missing
        [1, 1, 1, 0, 1, 1, 1, 0x61],                // parent refers to itself
        [1, 1, 0, 0x08, 1, 1, 1, 0x61],             // unknown flag bit
        [1, 1, 0, 0, 0, 1, 1, 0x61],                // generation 0
        [1, 1, 0, 0, 1, 1, 1, 0xFF],                // digest not UTF-8
        [1, 1, 0, 4, 1, 1, 0],                      // empty packed digest
        [1, 2, 0, 0, 1, 1, 1, 0x61, 1, 0, 3, 2, 1, 0x62],   // child generation is not parent + 1
        [1, 2, 0, 0, 1, 1, 1, 0x61, 0, 0, 1, 2, 1, 0x61],   // duplicate revision
        [1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0],       // absurd count
        [1, 1, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 1, 0x61],  // varint overflow
        [1, 1, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1, 1, 0x61],   // varint too long
        [1, 1, 0, 0, 1, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x61],   // digest length beyond input
    ]

    @Test(arguments: corrupt)
    func rejectsCorruptInput(bytes: [UInt8]) {
        #expect(throws: RevTreeError.self) { try RevTree(serialized: bytes) }
    }

    @Test func randomMutationsNeverCrash() throws {
        var rng = SplitMix64(seed: 302)
        for _ in 0..<2000 {
            let ref = ReferenceTree.random(&rng, size: rng.int(1...12), stemmedRoots: true)
            var bytes = try ref.buildPairwise(order: Array(ref.nodes.indices)).serialized()
            for _ in 0..<rng.int(1...3) {
                let i = rng.int(0...(bytes.count - 1))
                bytes[i] = rng.chance(0.5) ? UInt8.random(in: 0...255, using: &rng) : bytes[i] ^ (1 << UInt8(rng.int(0...7)))
            }
            if let tree = try? RevTree(serialized: bytes) {
                // Anything accepted is internally consistent.
                for (i, node) in tree.nodes.enumerated() {
                    #expect(tree.index(of: node.revID) == i)
                    if let p = node.parent {
                        #expect(p < i)
                        #expect(tree.nodes[p].revID.generation + 1 == node.revID.generation)
                    }
                }
                #expect(try RevTree(serialized: tree.serialized()) == tree)
            }
        }
    }
}
