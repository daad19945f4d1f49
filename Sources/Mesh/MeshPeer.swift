import DocumentModel
import Foundation
import Replication

/// What the mesh knows about one peer, and how it is connected.
public struct MeshPeer: Sendable, Equatable {
    /// How the peer became known.
    public enum Source: String, Sendable { case mdns, `static`, inbound }

    /// The peer's node ID (nil for a static peer not identified yet).
    public var nodeID: String?
    /// Its replication endpoint.
    public var url: String?
    public var source: Source
    /// True when this node dials the peer; false when it only accepts.
    public var dialing: Bool
    /// True for a fallback dial: the rule makes the peer the dialer, but it has not
    /// linked to us (see `MeshManager+Fallback.swift`).
    public var fallback = false
    public var state: String
    public var connectedSince: Date?
    public var docsPushed = 0
    public var docsPulled = 0
    public var bytesSent = 0
    public var bytesReceived = 0
    /// Revisions offered, held, left out, asked for, received and stored on this link.
    public var revisions = RevisionCounts()
    public var lastError: String?
    /// When the peer was last heard: now while connected (heartbeats prove it within
    /// three intervals), else when its link went down.
    public var lastHeard: Date?
    /// Replication lag: local sequences not yet pushed to the peer (nil: not known,
    /// for links the peer dialed).
    public var sequencesBehind: Int?
    /// The link's convergence accounting: pending each way, idle, in step (nil: no link
    /// data, e.g. a peer not dialed yet).
    public var link: LinkState?

    /// Connected, idle and nothing pending either way.
    public var inStep: Bool { link?.inStep ?? false }

    public var json: JSON {
        var object: [String: JSON] = [
            "source": .string(source.rawValue),
            "role": .string(dialing ? (fallback ? "fallback-dial" : "dial") : "accept"),
            "state": .string(state),
            "docs_pushed": .int(Int64(docsPushed)),
            "docs_pulled": .int(Int64(docsPulled)),
            "bytes_sent": .int(Int64(bytesSent)),
            "bytes_received": .int(Int64(bytesReceived)),
            "revisions": revisions.json,
        ]
        if let nodeID { object["node_id"] = .string(nodeID) }
        if let url { object["address"] = .string(url) }
        if let connectedSince {
            object["connected_since"] = .string(ISO8601Time.string(connectedSince))
        }
        if let lastError { object["last_error"] = .string(lastError) }
        if let lastHeard {
            object["last_heard"] = .string(ISO8601Time.string(lastHeard))
            object["last_heard_seconds_ago"] = .double((Date().timeIntervalSince(lastHeard) * 10).rounded() / 10)
        }
        if let sequencesBehind { object["sequences_behind"] = .int(Int64(sequencesBehind)) }
        let link = self.link ?? LinkState()
        object["pending_send"] = Self.json(link.pendingSend)
        object["pending_receive"] = link.pendingReceive.map(Self.json) ?? .null
        object["idle"] = .bool(link.idle)
        object["in_step"] = .bool(link.inStep)
        if let peerLastSequence = link.peerLastSequence { object["peer_last_seq"] = .int(Int64(clamping: peerLastSequence)) }
        if link.refused > 0 { object["refused"] = .int(Int64(link.refused)) }
        return .object(object)
    }

    static func json(_ backlog: LinkBacklog) -> JSON {
        ["sequences": .int(Int64(backlog.sequences)), "documents": .int(Int64(backlog.documents))]
    }
}
