/// The `_revisions` object of CouchDB / Sync Gateway (`{"start": N, "ids":
/// [digests, newest first]}`); owns its conversion to and from revision histories.
public enum RevisionsJSON: Sendable {
    /// `{"start": history[0].generation, "ids": [digests]}`. The history is
    /// assumed to have consecutive descending generations (as `RevTree.history(of:)`
    /// returns); only the first generation is recorded. An empty history gives
    /// `{"start": 0, "ids": []}`, which `decode` rejects.
    public static func encode(_ history: [RevID]) -> JSON {
        .object([
            "start": .int(Int64(history.first?.generation ?? 0)),
            "ids": .array(history.map { .string($0.digest) }),
        ])
    }

    /// The history newest first, or nil if malformed: not an object, `start` not
    /// an integer in 1...Int32.max, `ids` empty or longer than `start`, or an id
    /// that is not a valid digest (1...128 ASCII letters/digits).
    public static func decode(_ json: JSON) -> [RevID]? {
        guard case .object(let o) = json,
              let start = o["start"]?.intValue,
              start >= 1, start <= Int64(Int32.max),
              case .array(let ids)? = o["ids"],
              !ids.isEmpty, Int64(ids.count) <= start
        else { return nil }
        var history = [RevID]()
        history.reserveCapacity(ids.count)
        var generation = Int(start)
        for id in ids {
            guard case .string(let digest) = id, RevID.isValidDigest(digest) else { return nil }
            history.append(RevID(generation: generation, digest: digest))
            generation -= 1
        }
        return history
    }
}
