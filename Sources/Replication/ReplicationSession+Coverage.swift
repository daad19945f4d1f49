import BLIP
import DocumentModel
import DocumentStore

extension ReplicationSession {
    /// Reports of what we cover go out at most this often (a batch of stored revisions
    /// makes one report, not one per revision).
    static let coverageCoalesce = Duration.milliseconds(20)

    /// Whether the peer is a Shoal node that reads everything (`PeerDialect.exchangesCoverage`,
    /// with its node ID known): its offers and ours take part in the mesh's knowledge
    /// (`MeshKnowledge`). Clients and channel-limited peers do not.
    static func exchangesCoverage(_ access: PeerAccess) -> Bool {
        access.dialect.exchangesCoverage && access.origin.node != nil && access.channels == nil
    }

    /// Registers the handler for the peer's reports (before the first frame is read).
    func registerCoverage(_ coverage: PeerCoverage) {
        link.setHandler(for: PeerCoverage.profile, serial: true) { [logger] message in
            if !coverage.record(message) { logger.debug("dropped a malformed \(PeerCoverage.profile) report") }
            return BLIPMessage()
        }
    }

    /// Sends our coverage to the peer until the connection ends: everything so far at
    /// once (and again once the peer first speaks, if it had not yet: the first may have
    /// been dropped), then what grew, whenever it grew (coalesced). What the peer's own store's
    /// feed gave us is left out: the peer needs no news of its own changes. Under our own
    /// store go the entries of our feed the peer holds by our knowledge.
    func reportCoverage(_ coverage: PeerCoverage) async {
        let knowledge = coverage.knowledge
        let serial = coverage.serial
        var report = knowledge.openReport(serial: serial)
        defer { knowledge.closeReport(serial: serial) }
        var first = true
        var liveSent: UInt64?
        // Whether the peer had spoken when our first report went, and whether everything
        // went again since it did.
        var heardBeforeFirst = false
        var resent = false
        while !Task.isCancelled && !connection.isClosed {
            let generation = knowledge.changed.generation
            let heard = coverage.heard.generation > 0
            if !first, !heardBeforeFirst, !resent, heard {
                // The peer spoke after our first report, which may have come before its
                // handler was registered (a dialer registers in its session, beside the
                // reader) and been dropped: everything goes again, once. (The peer's
                // first report wakes this loop: `MeshKnowledge.follow` moves `changed` on.)
                for (source, ranges) in knowledge.snapshot() {
                    report[source, default: SequenceRanges(limit: MeshKnowledge.rangeLimit)].formUnion(ranges)
                }
                liveSent = nil
                resent = true
            }
            let peer = coverage.peerSource
            if peer != 0 { report = report.filter { knowledge.source($0.key) != peer } }
            let yours = coverage.takeYours()
            if !yours.isEmpty { report[store.uuid] = yours }
            let live = knowledge.liveSources()
            if first || !report.isEmpty || live.generation != liveSent {
                let message = PeerCoverage.report(
                    store: store.uuid, report, live: live.generation != liveSent ? live.uuids : nil)
                do {
                    try await link.sendNoReply(message)
                } catch {
                    return
                }
                if first { heardBeforeFirst = heard }
                first = false
                liveSent = live.generation
            }
            await knowledge.changed.wait(after: generation, timeout: .seconds(30))
            try? await Task.sleep(for: Self.coverageCoalesce)
            report = knowledge.takeReport(serial: serial)
        }
    }
}
