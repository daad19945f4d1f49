@testable import DocumentModel
import TestSupport

/// Random JSON values for round-trip and fuzz tests.
enum RandomJSON {
    static let keyPool = ["a", "b", "_id", "é", "z", "\u{1F600}", "key", "A", "\u{FF5E}", "ab", "aa", "", "\u{7F}", "k\"q", "x\ny"]

    static func string(_ rng: inout SplitMix64) -> String {
        let pieces = ["a", "Z", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "中", "\u{1F600}", "\u{FFFD}", "\u{2028}"]
        let n = rng.int(0...8)
        return (0..<n).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    static func number(_ rng: inout SplitMix64) -> JSON {
        switch rng.int(0...5) {
        case 0: return .int(Int64.random(in: -1000...1000, using: &rng))
        case 1: return .int(Int64(bitPattern: rng.next()))
        case 2:
            let d = Double(bitPattern: rng.next())
            return d.isFinite ? JSON.number(d) : .int(0)
        case 3: return JSON.number(Double.random(in: -1e6...1e6, using: &rng))
        case 4: return JSON.number(Double(rng.int(-999...999)) * pow10(rng.int(-30...30)))
        default: return JSON.number(Double(rng.int(-5...5)) / 8)
        }
    }

    static func pow10(_ e: Int) -> Double {
        var r = 1.0
        for _ in 0..<abs(e) { r *= 10 }
        return e < 0 ? 1 / r : r
    }

    /// `bytes` with one to three bytes replaced, inserted or removed (JSON
    /// punctuation, digits, whitespace, a backslash, a stray UTF-8 continuation byte).
    static func mutated(_ bytes: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = bytes
        for _ in 0..<rng.int(1...3) where !bytes.isEmpty {
            let i = rng.int(0...(bytes.count - 1))
            switch rng.int(0...2) {
            case 0: bytes[i] = Array("0123456789 .-eE\"\\,:{}[]aZ".utf8).randomElement(using: &rng)!
            case 1: bytes.insert((Array(" 0.-e\\\"".utf8) + [0x80]).randomElement(using: &rng)!, at: i)
            default: bytes.remove(at: i)
            }
        }
        return bytes
    }

    static func value(_ rng: inout SplitMix64, depth: Int = 0) -> JSON {
        let choice = depth > 4 ? rng.int(0...4) : rng.int(0...6)
        switch choice {
        case 0: return .null
        case 1: return .bool(rng.chance(0.5))
        case 2, 3: return number(&rng)
        case 4: return .string(string(&rng))
        case 5: return .array((0..<rng.int(0...5)).map { _ in value(&rng, depth: depth + 1) })
        default:
            var o = [String: JSON]()
            for _ in 0..<rng.int(0...6) {
                let key = rng.chance(0.6) ? keyPool.randomElement(using: &rng)! : string(&rng)
                o[key] = value(&rng, depth: depth + 1)
            }
            return .object(o)
        }
    }
}

/// A randomly generated revision tree, kept as plain reference data so tests can
/// check `RevTree` against brute-force answers.
struct ReferenceTree {
    struct Node {
        let rev: RevID
        let parent: Int?
        let deleted: Bool
    }

    var nodes: [Node] = []

    /// A random forest: mostly one root, some conflicts, some deleted revisions.
    /// With `stemmedRoots`, extra roots may start above generation 1.
    static func random(_ rng: inout SplitMix64, size: Int, stemmedRoots: Bool = false) -> ReferenceTree {
        var tree = ReferenceTree()
        var used = Set<RevID>()
        func digest() -> String {
            switch rng.int(0...9) {
            case 0: return "Ab" + rng.hexDigest(3)          // not packable as hex
            case 1: return rng.hexDigest(5)                 // odd length
            default: return rng.hexDigest(rng.chance(0.5) ? 40 : 8)
            }
        }
        func add(generation: Int, parent: Int?) {
            var rev: RevID
            repeat { rev = RevID(generation: generation, digest: digest()) } while used.contains(rev)
            used.insert(rev)
            tree.nodes.append(Node(rev: rev, parent: parent, deleted: rng.chance(0.2)))
        }
        add(generation: 1, parent: nil)
        while tree.nodes.count < size {
            if rng.chance(0.03) {
                add(generation: stemmedRoots && rng.chance(0.5) ? rng.int(2...30) : 1, parent: nil)
                continue
            }
            let n = tree.nodes.count
            let p = rng.chance(0.7) ? rng.int(max(0, n - 6)...(n - 1)) : rng.int(0...(n - 1))
            add(generation: tree.nodes[p].rev.generation + 1, parent: p)
        }
        return tree
    }

    var childCounts: [Int] {
        var counts = [Int](repeating: 0, count: nodes.count)
        for node in nodes { if let p = node.parent { counts[p] += 1 } }
        return counts
    }

    var leafIndices: [Int] { childCounts.indices.filter { childCounts[$0] == 0 } }

    /// Brute-force winner order of the leaves.
    var expectedLeaves: [RevID] {
        leafIndices.map { nodes[$0] }.sorted { a, b in
            if a.deleted != b.deleted { return !a.deleted }
            if a.rev.generation != b.rev.generation { return a.rev.generation > b.rev.generation }
            return b.rev.digest.utf8.lexicographicallyPrecedes(a.rev.digest.utf8)
        }.map(\.rev)
    }

    func path(from i: Int) -> [Int] {
        var result = [i]
        while let p = nodes[result.last!].parent { result.append(p) }
        return result
    }

    func history(of i: Int) -> [RevID] { path(from: i).map { nodes[$0].rev } }

    /// (rev, parent rev) pairs describing the shape.
    var shape: Set<String> {
        Set(nodes.map { "\($0.rev)<\($0.parent.map { nodes[$0].rev.description } ?? "root")" })
    }

    /// A random order in which every node comes after its parent.
    func topologicalOrder(_ rng: inout SplitMix64) -> [Int] {
        var children = [[Int]](repeating: [], count: nodes.count)
        var available = [Int]()
        for (i, node) in nodes.enumerated() {
            if let p = node.parent { children[p].append(i) } else { available.append(i) }
        }
        var order = [Int]()
        while !available.isEmpty {
            let i = available.remove(at: rng.int(0...(available.count - 1)))
            order.append(i)
            available += children[i]
        }
        return order
    }

    /// Builds a `RevTree` by inserting in the given order with `insert(_:parent:)`
    /// (requires generation-1 roots).
    func build(order: [Int]) throws -> RevTree {
        var tree = RevTree()
        for (seq, i) in order.enumerated() {
            let node = nodes[i]
            try tree.insert(node.rev, parent: node.parent.map { nodes[$0].rev }, deleted: node.deleted,
                            hasBody: node.deleted == false, sequence: UInt64(seq + 1))
        }
        return tree
    }

    /// Builds a `RevTree` from the histories of all leaves plus some interior
    /// nodes, in random order, each history cut at a random length that still
    /// reaches an already-known revision (or the root).
    func buildFromHistories(_ rng: inout SplitMix64) throws -> RevTree {
        var targets = leafIndices + nodes.indices.filter { _ in rng.chance(0.2) }
        targets.shuffle(using: &rng)
        var tree = RevTree()
        for (seq, t) in targets.enumerated() {
            let full = history(of: t)
            let firstKnown = full.firstIndex { tree.contains($0) }
            let minLength = firstKnown.map { $0 + 1 } ?? full.count
            let length = rng.int(minLength...full.count)
            let result = try tree.insert(history: Array(full[..<length]), deleted: nodes[t].deleted,
                                         hasBody: true, sequence: UInt64(seq + 1))
            if result.added != (firstKnown ?? full.count) { throw RevTreeError.invalidHistory("unexpected added count") }
            if result.commonAncestorIndex != firstKnown { throw RevTreeError.invalidHistory("unexpected ancestor index") }
        }
        return tree
    }
}

extension RevTree {
    /// (rev, parent rev) pairs describing the shape, comparable with `ReferenceTree.shape`.
    var shape: Set<String> {
        Set(nodes.map { "\($0.revID)<\($0.parent.map { nodes[$0].revID.description } ?? "root")" })
    }
}

extension ReferenceTree {
    /// Builds a `RevTree` node by node with `insert(history: [rev, parent])`, so
    /// roots above generation 1 are allowed; keeps every flag and sequence.
    func buildPairwise(order: [Int]) throws -> RevTree {
        var tree = RevTree()
        for (seq, i) in order.enumerated() {
            let node = nodes[i]
            let history = [node.rev] + (node.parent.map { [nodes[$0].rev] } ?? [])
            try tree.insert(history: history, deleted: node.deleted, hasBody: seq % 3 == 0,
                            sequence: UInt64(seq) * 1_000_003)
        }
        return tree
    }
}
