import BLIP
import DocumentStore
import Foundation

/// What a link's sessions tell their progress as they move, and the `LinkState` made of it.
struct LinkLedger {
    /// Per store (collection) of the link: the store, and the local sequence through
    /// which the peer acknowledged everything (nil: no feed to the peer yet).
    var sent: [ObjectIdentifier: (store: DocumentStore, through: UInt64?)] = [:]
    /// Per store: revisions awaited from the peer, and how many of the peer's sequences
    /// they span.
    var receiving: [ObjectIdentifier: (revisions: Int, sequences: Int)] = [:]
    /// Revisions the peer refused over the current connection.
    var refused = 0
    /// The peer's last report, the connection it came over and when.
    var report: (lastSequence: UInt64?, pending: LinkBacklog, connection: ObjectIdentifier, at: ContinuousClock.Instant)?
}

extension ReplicationProgress {
    /// Documents counted per collection for `LinkBacklog.documents`; beyond it the
    /// count stops (the sequences still say how far behind the link is).
    public static let documentCountLimit = 10_000

    /// The link as it stands, documents pending counted in the stores (bounded by
    /// `documentCountLimit`). A peer report older than `reportMaxAge` is not used.
    public func linkState(reportMaxAge: Duration) async -> LinkState {
        let (state, sent) = snapshot(reportMaxAge: reportMaxAge)
        var counted = state
        var documents = 0
        for (store, through) in sent {
            documents += (try? await store.countChanged(since: through, limit: Self.documentCountLimit))
                ?? Int(clamping: store.committedSequence - min(through, store.committedSequence))
        }
        counted.pendingSend.documents = documents
        return counted
    }

    /// The link as it stands without reading the stores: `pendingSend.documents` is the
    /// sequences pending (an upper bound). For metrics and quick checks.
    public func linkStateEstimate(reportMaxAge: Duration) -> LinkState {
        snapshot(reportMaxAge: reportMaxAge).state
    }

    private func snapshot(reportMaxAge: Duration) -> (state: LinkState, sent: [(DocumentStore, UInt64)]) {
        let connected = hasOpenConnection
        let ledger = ledger.withLock { $0 }
        var state = LinkState()
        state.connected = connected
        var behind: [(DocumentStore, UInt64)] = []
        for (store, through) in ledger.sent.values {
            guard let through else {
                state.sendKnown = false
                continue
            }
            let committed = store.committedSequence
            if committed > through {
                state.pendingSend.sequences += Int(clamping: committed - through)
                behind.append((store, through))
            }
        }
        state.pendingSend.documents = state.pendingSend.sequences
        state.refused = ledger.refused
        let awaited = ledger.receiving.values.reduce((revisions: 0, sequences: 0)) {
            ($0.revisions + $1.revisions, $0.sequences + $1.sequences)
        }
        if connected, let report = ledger.report, ContinuousClock.now - report.at <= reportMaxAge {
            state.peerLastSequence = report.lastSequence
            state.pendingReceive = LinkBacklog(
                sequences: max(report.pending.sequences, awaited.sequences),
                documents: max(report.pending.documents, awaited.revisions))
        }
        state.idle = connected && state.sendKnown && state.pendingSend.sequences == 0 && awaited.revisions == 0
            && (state.pendingReceive?.sequences ?? 0) == 0
        return (state, behind)
    }

    /// What the peer reported over `connection` about its side of this link: its latest
    /// sequence and what it has not had acknowledged by us yet (nil: not known, the
    /// report is dropped).
    public func recordPeerReport(lastSequence: UInt64?, pendingSend: LinkBacklog?, on connection: BLIPConnection) {
        ledger.withLock { ledger in
            ledger.report = pendingSend.map {
                (lastSequence, $0, ObjectIdentifier(connection), ContinuousClock.now)
            }
        }
    }

    // MARK: Reported by the sessions

    /// A session of `store` opened on this link: the store is part of it, its feed to
    /// the peer not known until the sender starts.
    func attach(_ store: DocumentStore) {
        ledger.withLock { ledger in
            let key = ObjectIdentifier(store)
            if ledger.sent[key] == nil { ledger.sent[key] = (store, nil) }
        }
        sendSignal.notify()
    }

    /// The peer acknowledged every change of `store` through `sequence`. It only moves
    /// forward (reports of one sender may arrive out of order), except that a new feed
    /// (`starting`) sets where it starts.
    func recordSent(_ store: DocumentStore, through sequence: UInt64, starting: Bool = false) {
        let moved = ledger.withLock { ledger -> Bool in
            let key = ObjectIdentifier(store)
            let previous = ledger.sent[key]?.through
            if let previous, starting ? previous == sequence : previous >= sequence { return false }
            ledger.sent[key] = (store, sequence)
            return true
        }
        if moved { sendSignal.notify() }
    }

    /// The peer refused a revision of this link.
    func recordRefused() {
        ledger.withLock { $0.refused += 1 }
        sendSignal.notify()
    }

    /// Revisions of `store` awaited from the peer, spanning `sequences` of its feed.
    func recordReceiving(_ store: DocumentStore, revisions: Int, sequences: Int) {
        ledger.withLock { $0.receiving[ObjectIdentifier(store)] = (revisions, sequences) }
    }

    func connectionStarted(_ connection: BLIPConnection) {
        ledger.withLock { ledger in
            ledger.refused = 0
            ledger.report = nil
        }
    }

    func connectionEnded(_ connection: BLIPConnection) {
        ledger.withLock { ledger in
            ledger.receiving.removeAll()
            if ledger.report?.connection == ObjectIdentifier(connection) { ledger.report = nil }
        }
        sendSignal.notify()
    }
}
