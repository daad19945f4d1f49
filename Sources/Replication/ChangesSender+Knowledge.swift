import DocumentModel
import DocumentStore

/// What the sender leaves out for a Shoal peer that holds it (docs/architecture.md §10.10,
/// `Replication.md` "Offers as knowledge").
extension ChangesSender {
    /// Per document of the page, the leaves the peer holds by the mesh's knowledge: they
    /// arrived here over this connection, or from a store whose change the peer covers
    /// (`PeerCoverage.holding`). A winner is left out only while the document's latest
    /// change is the winner's own arrival: a later change may have grown its vector here
    /// (reconciled with another offer), which the peer has not seen. Also how many leaves
    /// the peer may be receiving from their source right now (`coming`).
    func heldByPeer(_ page: [ChangedDocument]) -> (held: [Set<RevID>], coming: Int) {
        guard let coverage else { return ([], 0) }
        var keys: [Int] = []
        var owners: [(page: Int, rev: RevID)] = []
        for (index, document) in page.enumerated() {
            let tree = document.listing.tree
            for rev in tree.leaves {
                guard let node = tree.node(for: rev) else { continue }
                if rev == tree.winner, node.sequence != document.listing.sequence { continue }
                keys.append(MeshKnowledge.key(docID: document.listing.docID, rev: rev))
                owners.append((index, rev))
            }
        }
        guard !keys.isEmpty else { return ([], 0) }
        var held = Array(repeating: Set<RevID>(), count: page.count)
        var coming = 0
        for (position, holding) in coverage.holding(coverage.knowledge.arrivals(keys)).enumerated() {
            switch holding {
            case .held: held[owners[position].page].insert(owners[position].rev)
            case .coming: coming += 1
            case .unknown: break
            }
        }
        return (held, coming)
    }

    /// How long a page waits for the peer's reports while it holds revisions the peer may
    /// be receiving from their source at the same moment (`PeerCoverage.Holding.coming`:
    /// it receives from that source now, near them). In a fully linked mesh every node
    /// receives a write from its writer at about the same time; without the wait, each
    /// would offer it to every other before hearing that they have it. Every report that
    /// covers more starts the wait again (the peer is moving), up to `coverageMaxWait`.
    static let coveragePatience = Duration.milliseconds(300)
    static let coverageMaxWait = Duration.seconds(3)
    /// How long the first offers wait for the peer's first report (it sends one as the
    /// connection starts, with everything it covers).
    static let firstReportWait = Duration.seconds(10)

    /// `heldByPeer`, once the peer's first report is in (at most `firstReportWait`),
    /// waiting while some leaves are `coming` for the peer's reports and looking again:
    /// until none is `coming`, the peer's coverage has not grown for `coveragePatience`,
    /// or `coverageMaxWait` passed.
    func heldByPeerWaiting(_ page: [ChangedDocument]) async -> [Set<RevID>] {
        guard let coverage else { return [] }
        // The peer's first report holds everything it covers: nothing is offered before it.
        if coverage.heard.generation == 0 {
            await coverage.heard.wait(after: 0, timeout: Self.firstReportWait)
        }
        var (held, coming) = heldByPeer(page)
        guard coming > 0 else { return held }
        let clock = ContinuousClock()
        let end = clock.now + Self.coverageMaxWait
        var deadline = min(end, clock.now + Self.coveragePatience)
        var covered = coverage.coveredCount
        while coming > 0, !Task.isCancelled, !connection.isClosed {
            let generation = coverage.heard.generation
            let left = deadline - clock.now
            guard left > .zero else { break }
            await coverage.heard.wait(after: generation, timeout: left)
            (held, coming) = heldByPeer(page)
            let now = coverage.coveredCount
            if now > covered {
                covered = now
                deadline = min(end, clock.now + Self.coveragePatience)
            }
        }
        return held
    }
}
