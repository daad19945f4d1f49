import Testing
import TestSupport

@testable import DocumentModel

/// Property tests over version vectors made by a seeded simulation of replicas that
/// edit one document, replicate it and merge conflicts, with the true ancestry of every
/// revision kept beside: comparison must agree with that ancestry, merges must not
/// depend on the order of their inputs, text forms must round-trip.
@Suite struct VersionVectorPropertyTests {
    /// A revision of the simulated document: its vector and every revision it descends from.
    struct Revision {
        let vector: VersionVector
        let ancestors: Set<Int>   // indices into `revisions`, itself included
    }

    struct Simulation {
        var rng: SplitMix64
        var wall: UInt64 = 0x1800_0000_0000_0000
        var clocks: [HybridLogicalClock]
        var sources: [SourceID]
        var heads: [Int]            // each replica's current revision
        var revisions: [Revision] = []

        init(seed: UInt64, replicas: Int) {
            rng = SplitMix64(seed: seed)
            clocks = Array(repeating: HybridLogicalClock(), count: replicas)
            var sources = [SourceID]()
            for _ in 0..<replicas { sources.append(SourceID(high: rng.next(), low: rng.next() | 1)) }
            self.sources = sources
            heads = Array(repeating: -1, count: replicas)
        }

        mutating func newTime(_ replica: Int, floor: UInt64?) -> UInt64 {
            wall += UInt64(rng.int(0...3_000_000))
            let skew = UInt64(replica) * 5_000_000    // every replica's wall clock is off differently
            return clocks[replica].now(wall: wall - skew, after: floor ?? 0)!
        }

        mutating func step() throws {
            let r = rng.int(0...(sources.count - 1))
            if heads[r] < 0 || rng.chance(0.45) {
                let parent = heads[r] < 0 ? nil : revisions[heads[r]]
                let time = newTime(r, floor: parent?.vector.time(of: sources[r]))
                let vector = try parent?.vector.addingLocalEdit(source: sources[r], time: time)
                    ?? VersionVector(Version(time: time, source: sources[r]))
                revisions.append(Revision(vector: vector, ancestors: (parent?.ancestors ?? []).union([revisions.count])))
                heads[r] = revisions.count - 1
                return
            }
            let s = rng.int(0...(sources.count - 1))
            guard s != r, heads[s] >= 0 else { return }
            let mine = revisions[heads[r]], theirs = revisions[heads[s]]
            clocks[r].observe(theirs.vector, wall: wall)
            switch mine.vector.compare(to: theirs.vector) {
            case .older: heads[r] = heads[s]
            case .same, .newer: break
            case .conflicting:
                let time = newTime(r, floor: VersionVector.joinedTimes([mine.vector, theirs.vector])[sources[r]])
                let merged = try VersionVector.merged([mine.vector, theirs.vector], as: Version(time: time, source: sources[r]))
                revisions.append(Revision(vector: merged, ancestors: mine.ancestors.union(theirs.ancestors).union([revisions.count])))
                heads[r] = revisions.count - 1
            }
        }

        static func run(seed: UInt64, replicas: Int = 4, steps: Int = 60) throws -> Simulation {
            var sim = Simulation(seed: seed, replicas: replicas)
            for _ in 0..<steps { try sim.step() }
            return sim
        }
    }

    static func truth(_ a: Revision, _ ai: Int, _ b: Revision, _ bi: Int) -> VersionOrder {
        if ai == bi { return .same }
        if b.ancestors.contains(ai) { return .older }
        if a.ancestors.contains(bi) { return .newer }
        return .conflicting
    }

    @Test(arguments: 0..<12) func comparisonAgreesWithAncestry(seed: Int) throws {
        let sim = try Simulation.run(seed: UInt64(seed) &* 0x9E37, replicas: 2 + seed % 4)
        #expect(sim.revisions.count > 10)
        for (i, a) in sim.revisions.enumerated() {
            for (j, b) in sim.revisions.enumerated() {
                let order = a.vector.compare(to: b.vector)
                #expect(order == Self.truth(a, i, b, j), "\(a.vector) vs \(b.vector)")
                #expect(b.vector.compare(to: a.vector) == order.reversed)
            }
        }
    }

    @Test(arguments: 0..<8) func textFormsRoundTrip(seed: Int) throws {
        let sim = try Simulation.run(seed: UInt64(seed) + 500)
        let legacy = [RevID("3-cafe")!, RevID("2-beef")!]
        for v in sim.revisions.map(\.vector) {
            for style in [VersionVector.TextStyle.couchbaseLite, .syncGateway] {
                #expect(try VersionVector(parsing: v.text(style: style)) == v)
                let (w, revs) = try VersionVector.parseHistory(v.text(style: style, legacy: legacy))
                #expect(w == v && revs == legacy)
                let message = try VersionVector.parseRevMessage(rev: v.current.description, history: v.historyText(style: style))
                #expect(message.vector == v && message.legacy.isEmpty)
                let local = v.current.source
                #expect(try VersionVector(parsing: v.text(style: style, abbreviating: local), localSource: local) == v)
            }
        }
    }

    @Test(arguments: 0..<8) func mergeIsOrderIndependent(seed: Int) throws {
        var sim = try Simulation.run(seed: UInt64(seed) + 900, replicas: 5)
        let vectors = sim.revisions.map(\.vector)
        let mergeSource = SourceID(high: 42, low: 42)
        for _ in 0..<40 {
            let picks = (0..<sim.rng.int(1...4)).map { _ in vectors[sim.rng.int(0...(vectors.count - 1))] }
            let version = Version(time: VersionVector.joinedTimes(picks).values.max()! + 1, source: mergeSource)
            let merged = try VersionVector.merged(picks, as: version)
            var shuffled = picks + [picks[0]]
            shuffled.shuffle(using: &sim.rng)
            #expect(try VersionVector.merged(shuffled, as: version) == merged)
            for p in picks { #expect(merged.compare(to: p) == .newer) }
            #expect(merged.times == VersionVector.joinedTimes(picks).merging([mergeSource: version.time]) { max($0, $1) })
            // Associativity of the causal summary: ((a·b)·c) and (a·(b·c)) know the same times.
            if picks.count >= 3 {
                let v1 = Version(time: version.time, source: SourceID(high: 1, low: 1))
                let v2 = Version(time: version.time + 1, source: SourceID(high: 2, low: 2))
                let left = try VersionVector.merged([try VersionVector.merged([picks[0], picks[1]], as: v1), picks[2]], as: v2)
                let right = try VersionVector.merged([picks[0], try VersionVector.merged([picks[1], picks[2]], as: v1)], as: v2)
                #expect(left.times == right.times)
            }
        }
    }

    @Test(arguments: 0..<6) func reconcilingIsCommutativeAssociativeIdempotent(seed: Int) throws {
        var sim = try Simulation.run(seed: UInt64(seed) + 1300)
        let vectors = sim.revisions.map(\.vector)
        func pick() -> VersionVector { vectors[sim.rng.int(0...(vectors.count - 1))] }
        for _ in 0..<60 {
            let (a, b, c) = (pick(), pick(), pick())
            let flat = try VersionVector.reconciling([a, b, c])
            #expect(try VersionVector.reconciling([c, a, b]) == flat)
            #expect(try VersionVector.reconciling([try VersionVector.reconciling([a, b]), c]) == flat)
            #expect(try VersionVector.reconciling([a, try VersionVector.reconciling([b, c])]) == flat)
            #expect(try VersionVector.reconciling([a, a]) == a)
            #expect(flat.dominates(a) || flat.compare(to: a) == .conflicting || a.isMerge)
        }
    }

    @Test(arguments: 0..<6) func pruningKeepsIdentity(seed: Int) throws {
        var sim = try Simulation.run(seed: UInt64(seed) + 1700, replicas: 7, steps: 120)
        for v in sim.revisions.map(\.vector) {
            let maxCount = sim.rng.int(0...6)
            let cutoff: UInt64? = sim.rng.chance(0.5) ? v.versions.map(\.time).min()! + UInt64(sim.rng.int(0...5_000_000)) : nil
            let p = v.pruned(keepingAtMost: maxCount, olderThan: cutoff)
            #expect(p == v.pruned(keepingAtMost: maxCount, olderThan: cutoff))
            #expect(p.current == v.current && p.merges == v.merges)
            #expect(p.compare(to: v) == .same)
            #expect(Set(p.previous).isSubset(of: Set(v.previous)))
            #expect(cutoff != nil || p.count <= max(maxCount, 1 + v.merges.count))
            for dropped in Set(v.previous).subtracting(p.previous) {
                #expect(p.previous.allSatisfy { Version.precedesInVector($0, dropped) })
                if let cutoff { #expect(dropped.time < cutoff) }
            }
        }
    }
}
