import DocumentModel
import DocumentStore
import Synchronization

/// The revisions the peer of one connection offered us, recently: it has them,
/// so the session's changes feed does not offer them back over the same connection (echo
/// suppression). In a mesh every node would otherwise offer each revision back to the
/// peer it came from, a `changes` round trip per revision and link for nothing.
///
/// Scoped to one connection on purpose: a peer that reconnects may have lost its data
/// (wiped, restored from a backup) under the same node ID, and then needs everything
/// offered again. Keyed by document (the latest revision offered per document) and
/// bounded: a document that falls out is offered as before and answered "have it".
///
/// A Shoal peer's rows also carry the winner's vector. A winner whose vector here differs
/// from the one the peer offered (grown here by reconciling with another peer's offer,
/// docs/architecture.md §10.9 "Convergence") is offered again: else a node in the middle
/// of a chain would never pass one end's version on to the other.
final class PeerRevisions: Sendable {
    private struct State {
        var latest: [String: (rev: RevID, vector: OfferedVector)] = [:]
        /// The documents of `latest` from `head` on, in the order they were first
        /// recorded (a document recorded again keeps its place): the oldest go first.
        var order: [String] = []
        var head = 0
    }

    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = max(1, capacity)
    }

    /// The peer offered revision `rev` of `docID` (`changes`, `proposeChanges`), with
    /// `vector` when its row carried one: it has it.
    func record(docID: String, rev revID: RevID, vector: OfferedVector = .unknown) {
        state.withLock { state in
            if state.latest.updateValue((revID, vector), forKey: docID) == nil {
                state.order.append(docID)
            }
            while state.latest.count > capacity, state.head < state.order.count {
                state.latest.removeValue(forKey: state.order[state.head])
                state.head += 1
            }
            if state.head > capacity {
                state.order.removeFirst(state.head)
                state.head = 0
            }
        }
    }

    /// The peer turned out to lack part of this revision (its vector, reconciled here):
    /// the feed offers it again.
    func forget(docID: String, rev revID: RevID) {
        state.withLock { state in
            if state.latest[docID]?.rev == revID { state.latest.removeValue(forKey: docID) }
        }
    }

    /// True when the peer offered exactly this revision of `docID` (and it is still
    /// remembered), with the same vector as `vector` when both are known.
    func has(docID: String, rev: RevID, vector: OfferedVector = .unknown) -> Bool {
        state.withLock { state in
            guard let offered = state.latest[docID], offered.rev == rev else { return false }
            return offered.vector == .unknown || vector == .unknown || offered.vector == vector
        }
    }

    /// Documents remembered now.
    var count: Int { state.withLock { $0.latest.count } }
}
