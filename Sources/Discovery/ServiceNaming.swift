/// How Shoal names what it registers in DNS-SD: the subtype for a mesh group, the instance
/// name for a node, and the subtype browsed and registered. Pure functions.
///
/// A mesh group becomes the DNS-SD subtype `_<label>._sub._shoal._tcp`, where `<label>` is the
/// group reduced to DNS label rules:
/// - ASCII letters are lowercased (DNS names compare case-insensitively anyway);
/// - ASCII letters, digits and `-` are kept; every other character (`_`, `.`, spaces, `/`,
///   non-ASCII, …) becomes `-`; runs of `-` collapse to one; leading/trailing `-` are dropped;
/// - an empty result becomes `default`;
/// - a label longer than 62 characters (63 with the leading `_`) is cut to 53 characters and
///   gets `-` plus 8 hex digits of the FNV-1a hash of the raw group, so long groups that share
///   a prefix stay apart.
///
/// Different groups can map to the same label (`my_db` and `my.db` both give `my-db`); the raw
/// group is therefore also advertised in the TXT key `group` (``txtGroupValue(for:)``), and a
/// browser ignores services whose `group` differs from its own.
public enum ServiceNaming {
    /// The longest DNS label (and DNS-SD instance name) in bytes.
    public static let maxLabelLength = 63
    /// The longest TXT `group` value that is stored verbatim (255 minus `group=`).
    public static let maxTXTGroupLength = 249

    /// The subtype label for `group`, with its leading underscore (e.g. `_orders`).
    public static func subtypeLabel(forGroup group: String) -> String {
        var label = ""
        var lastWasDash = true  // drops leading dashes
        for scalar in group.unicodeScalars {
            let mapped: Character
            switch scalar {
            case "a"..."z", "0"..."9": mapped = Character(scalar)
            case "A"..."Z": mapped = Character(Unicode.Scalar(scalar.value + 32)!)
            default: mapped = "-"
            }
            if mapped == "-" {
                if lastWasDash { continue }
                lastWasDash = true
            } else {
                lastWasDash = false
            }
            label.append(mapped)
        }
        while label.hasSuffix("-") { label.removeLast() }
        if label.isEmpty { label = "default" }
        let maxBody = maxLabelLength - 1
        if label.utf8.count > maxBody {
            var prefix = String(label.prefix(maxBody - 9))
            while prefix.hasSuffix("-") { prefix.removeLast() }
            label = prefix + "-" + hex8(fnv1a32(Array(group.utf8)))
        }
        return "_" + label
    }

    /// The full subtype name for browsing, e.g. `_orders._sub._shoal._tcp`.
    public static func subtypeName(serviceType: String, group: String) -> String {
        subtypeLabel(forGroup: group) + "._sub." + serviceType
    }

    /// The DNS-SD instance name for a node: the node ID, cut to 63 bytes of UTF-8 on a
    /// character boundary (the TXT `id` always carries the whole ID). An empty ID gives `shoal`.
    public static func instanceName(forNodeID nodeID: String) -> String {
        guard !nodeID.isEmpty else { return "shoal" }
        return truncateUTF8(nodeID, maxBytes: maxLabelLength)
    }

    /// The value of the TXT `group` key for `group`: the raw group when it fits in a TXT entry,
    /// otherwise its subtype label without the underscore.
    public static func txtGroupValue(for group: String) -> String {
        if group.utf8.count <= maxTXTGroupLength { return group }
        return String(subtypeLabel(forGroup: group).dropFirst())
    }

    /// `string` cut to at most `maxBytes` bytes of UTF-8, never inside a character.
    static func truncateUTF8(_ string: String, maxBytes: Int) -> String {
        guard string.utf8.count > maxBytes else { return string }
        var result = ""
        var used = 0
        for character in string {
            let size = character.utf8.count
            if used + size > maxBytes { break }
            result.append(character)
            used += size
        }
        return result
    }

    /// 32-bit FNV-1a.
    static func fnv1a32(_ bytes: [UInt8]) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in bytes {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return hash
    }

    static func hex8(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
