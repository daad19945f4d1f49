import DocumentModel
import DocumentStore

/// Which entries of a Shoal peer's feed this database now holds whole: an entry (one
/// sequence of the peer's feed: a document's change, with one row per leaf offered) is
/// covered once every revision it offered is here, either at once (answered "have") or
/// when the last one wanted is stored. An entry with a revision that failed (refused,
/// `norev`, the connection lost) is never covered: a peer that got it elsewhere may
/// still need to offer it to us.
struct CoverageBook: Sendable {
    /// Revisions still awaited per peer sequence.
    private var open: [UInt64: Int] = [:]
    /// Peer sequences with a revision that failed (dropped once none is awaited).
    private var failed: Set<UInt64> = []
    /// The peer sequence of each awaited revision (`RevisionReceiver.key`).
    private var sequences: [String: UInt64] = [:]

    /// Adds a `changes` batch: per row its peer sequence (nil: not a number) and, when the
    /// revision was asked for, its key. Returns the sequences covered already.
    mutating func add(_ rows: [(sequence: UInt64?, key: String?)]) -> [UInt64] {
        var seen: [UInt64] = []
        for (sequence, key) in rows {
            guard let sequence else { continue }
            if seen.last != sequence { seen.append(sequence) }
            if let key {
                open[sequence, default: 0] += 1
                sequences[key] = sequence
            }
        }
        return seen.filter { open[$0] == nil }
    }

    /// A revision asked for arrived (or failed); returns its sequence when that covers it.
    mutating func finish(_ key: String, failed didFail: Bool) -> UInt64? {
        guard let sequence = sequences.removeValue(forKey: key) else { return nil }
        if didFail { failed.insert(sequence) }
        let remaining = (open[sequence] ?? 1) - 1
        guard remaining <= 0 else {
            open[sequence] = remaining
            return nil
        }
        open[sequence] = nil
        return failed.remove(sequence) == nil ? sequence : nil
    }
}

extension RevisionReceiver {
    /// Tells the database's knowledge that we hold the peer's entries at `sequences`.
    func cover(_ sequences: [UInt64]) {
        coverage?.cover(sequences)
    }

    /// Records where the revisions of a batch about to be saved came from: this
    /// connection, and the peer's feed at their `sequence` (`MeshKnowledge`). Before the
    /// commit, so that no feed reads them without it.
    static func recordArrivals(_ arrivals: [RevisionInserter.Arrival], coverage: PeerCoverage) {
        let source = coverage.peerSource
        coverage.knowledge.recordArrivals(arrivals.map { arrival in
            (MeshKnowledge.key(docID: arrival.docID, rev: arrival.rev),
             MeshKnowledge.Arrival(source: source, sequence: arrival.remoteSequence, link: coverage.serial))
        })
    }
}
