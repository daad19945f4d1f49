import DocumentModel

/// Channel names and the special channels of Sync Gateway's model.
///
/// `ChannelSet` owns what a channel name may be and how the sync function's loosely
/// typed arguments (a string, an array of strings, null) become sets of names.
public enum ChannelSet {
    /// The star channel: a user who has it sees every document.
    public static let all = "*"
    /// The public channel: every user (and GUEST when enabled) can read it.
    public static let publicChannel = "!"

    /// Any non-empty name of at most 250 UTF-8 bytes without control characters or
    /// commas (commas separate channels in `?channels=` lists).
    public static func isValidChannelName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 250 else { return false }
        return !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0 == "," }
    }

    /// Strings from a sync function argument: a string, or an array of strings (nested
    /// arrays flattened); null/undefined and other types give nothing.
    public static func strings(_ value: JSON) -> [String] {
        switch value {
        case .string(let text): return [text]
        case .array(let items): return items.flatMap(strings)
        default: return []
        }
    }
}
