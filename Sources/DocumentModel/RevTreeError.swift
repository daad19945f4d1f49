/// Why a revision-tree operation was refused.
public enum RevTreeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The revision is already in the tree.
    case duplicate(RevID)
    /// The named parent is not in the tree.
    case unknownParent(RevID)
    /// A history or generation that does not fit (e.g. non-consecutive generations).
    case invalidHistory(String)
    /// Serialized tree bytes that cannot be decoded.
    case corrupt(String)

    public var description: String {
        switch self {
        case .duplicate(let rev): return "revision \(rev) already exists"
        case .unknownParent(let rev): return "unknown parent revision \(rev)"
        case .invalidHistory(let why): return "invalid revision history: \(why)"
        case .corrupt(let why): return "corrupt revision tree: \(why)"
        }
    }
}
