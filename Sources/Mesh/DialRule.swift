import DocumentModel

/// The deterministic rules that shape the mesh, pure functions of node IDs:
/// which side of a pair dials, and which peers a node connects to when the
/// group is larger than its degree bound.
public enum DialRule {
    /// True when `local` should dial `remote` (the other side only accepts).
    ///
    /// A coin flip both sides compute identically: the first bit of SHA-1 over the
    /// two IDs in sorted order picks the smaller or the larger ID as the dialer, so
    /// each node dials about half of its peers whatever its ID.
    public static func shouldDial(local: String, remote: String) -> Bool {
        guard local != remote else { return false }
        let (low, high) = local.utf8.lexicographicallyPrecedes(remote.utf8) ? (local, remote) : (remote, local)
        let digest = SHA1.hash(Array("\(low)\u{0}\(high)".utf8))
        let dialer = digest[0] & 1 == 0 ? low : high
        return dialer == local
    }

    /// The peers `local` keeps connections with.
    ///
    /// All node IDs (the group, including `local`) are placed on a ring ordered by
    /// SHA-1 of the ID; each node connects to its `k = max(1, maxPeers / 2)`
    /// successors and `k` predecessors. The relation is symmetric — if A picks B,
    /// B picks A — and the ring keeps the graph connected, so replication (which is
    /// transitive) reaches every node. Groups of at most `maxPeers + 1` nodes are
    /// fully connected. (With an odd bound a node uses one connection less; with
    /// `maxPeers = 1` it still keeps the two ring links needed for connectivity.)
    public static func neighbors(of local: String, among nodes: Set<String>, maxPeers: Int) -> Set<String> {
        var all = nodes
        all.insert(local)
        let others = all.subtracting([local])
        if others.count <= max(maxPeers, 0) { return others }
        let ring = all.map { (key: ringKey($0), id: $0) }
            .sorted { $0.key == $1.key ? $0.id < $1.id : $0.key.lexicographicallyPrecedes($1.key) }
            .map(\.id)
        guard let position = ring.firstIndex(of: local) else { return [] }
        let k = max(1, maxPeers / 2)
        var chosen = Set<String>()
        for step in 1...k {
            chosen.insert(ring[(position + step) % ring.count])
            chosen.insert(ring[(position - step % ring.count + ring.count) % ring.count])
        }
        chosen.remove(local)
        return chosen
    }

    /// The peers `local` keeps connections with while some known nodes are unreachable
    /// (a partition, a crashed host): the rule's neighbors among all `nodes` (still
    /// dialed, so that the links come back at the heal) and, when `unreachable` is not
    /// empty, also the rule's neighbors among the nodes not known to be unreachable, so
    /// that each side of a partition stays linked within itself. Each node learns
    /// unreachability only from its own links, so views differ; a pair chosen by one
    /// side only is linked by that side's fallback dial (`MeshManager+Fallback.swift`).
    public static func neighbors(of local: String, among nodes: Set<String>, maxPeers: Int, unreachable: Set<String>) -> Set<String> {
        let ideal = neighbors(of: local, among: nodes, maxPeers: maxPeers)
        guard !unreachable.isEmpty else { return ideal }
        return ideal.union(neighbors(of: local, among: nodes.subtracting(unreachable), maxPeers: maxPeers))
    }

    private static func ringKey(_ id: String) -> [UInt8] {
        SHA1.hash(Array(id.utf8))
    }
}
