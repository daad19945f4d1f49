/// A DNS-SD TXT record: an ordered list of `key=value` strings (RFC 6763 §6).
///
/// This is the pure codec used for registering and for reading resolved services; it does no
/// I/O. On the wire a TXT record is a sequence of strings, each prefixed by its length in one
/// byte (so an entry is at most 255 bytes). An entry without `=` is a boolean attribute (present,
/// no value); `key=` has an empty value.
///
/// Lookups are by key, case-insensitively, and the first occurrence of a key wins, as RFC 6763
/// asks. Never rely on the order of entries: Avahi hands resolved TXT records back in the
/// reverse of the registered order.
public struct TXTRecord: Sendable, Equatable, Hashable {
    /// One `key[=value]` string of a TXT record.
    public struct Entry: Sendable, Equatable, Hashable {
        /// The key: printable ASCII without `=`, not empty.
        public var key: String
        /// The raw value bytes; `nil` for a boolean attribute (no `=` at all).
        public var value: [UInt8]?

        /// An entry with a raw value (or `nil` for a boolean attribute).
        public init(key: String, value: [UInt8]?) {
            self.key = key
            self.value = value
        }

        /// An entry whose value is the UTF-8 encoding of `value`.
        public init(key: String, string value: String) {
            self.init(key: key, value: Array(value.utf8))
        }
    }

    /// The longest entry (`key=value` in bytes) that fits in one length-prefixed string.
    public static let maxEntryLength = 255

    /// The entries in their stored order.
    public var entries: [Entry]

    /// A record with the given entries, in that order.
    public init(entries: [Entry] = []) {
        self.entries = entries
    }

    /// A record with string values, in the order given.
    public init(_ pairs: KeyValuePairs<String, String>) {
        self.entries = pairs.map { Entry(key: $0.key, string: $0.value) }
    }

    /// Decodes the wire form. Decoding is lenient: empty strings are skipped, and a string
    /// whose length byte runs past the end of the data ends the record (what was read so far
    /// is kept). Keys are taken as UTF-8 (invalid bytes replaced).
    public init(decoding bytes: some Collection<UInt8>) {
        let data = Array(bytes)
        var entries: [Entry] = []
        var index = 0
        while index < data.count {
            let length = Int(data[index])
            index += 1
            guard length > 0 else { continue }
            guard index + length <= data.count else { break }
            let string = data[index..<(index + length)]
            index += length
            if let equals = string.firstIndex(of: UInt8(ascii: "=")) {
                let key = String(decoding: string[string.startIndex..<equals], as: UTF8.self)
                guard !key.isEmpty else { continue }
                entries.append(Entry(key: key, value: Array(string[(equals + 1)...])))
            } else {
                entries.append(Entry(key: String(decoding: string, as: UTF8.self), value: nil))
            }
        }
        self.entries = entries
    }

    /// The wire form: each entry as a length byte followed by `key` or `key=value`.
    ///
    /// An empty record encodes as a single empty string (one zero byte), as RFC 6763 §6.1
    /// requires. Throws ``TXTRecordError`` for an invalid key or an entry over 255 bytes.
    public func encoded() throws(TXTRecordError) -> [UInt8] {
        guard !entries.isEmpty else { return [0] }
        var out: [UInt8] = []
        for entry in entries {
            try Self.validate(key: entry.key)
            var string = Array(entry.key.utf8)
            if let value = entry.value {
                string.append(UInt8(ascii: "="))
                string.append(contentsOf: value)
            }
            guard string.count <= Self.maxEntryLength else {
                throw .entryTooLong(key: entry.key, length: string.count)
            }
            out.append(UInt8(string.count))
            out.append(contentsOf: string)
        }
        return out
    }

    /// The first entry whose key equals `key`, ignoring ASCII case.
    public func entry(forKey key: String) -> Entry? {
        let wanted = key.lowercased()
        return entries.first { $0.key.lowercased() == wanted }
    }

    /// Whether the record holds `key` (with or without a value).
    public func contains(key: String) -> Bool {
        entry(forKey: key) != nil
    }

    /// The value of `key` as a string (UTF-8, invalid bytes replaced); `nil` when the key is
    /// missing or is a boolean attribute.
    public subscript(key: String) -> String? {
        guard let value = entry(forKey: key)?.value else { return nil }
        return String(decoding: value, as: UTF8.self)
    }

    /// Appends an entry (a later duplicate of an existing key is ignored by readers).
    public mutating func append(key: String, value: String?) {
        entries.append(Entry(key: key, value: value.map { Array($0.utf8) }))
    }

    static func validate(key: String) throws(TXTRecordError) {
        guard !key.isEmpty else { throw .invalidKey(key) }
        for byte in key.utf8 where byte < 0x20 || byte > 0x7E || byte == UInt8(ascii: "=") {
            throw .invalidKey(key)
        }
    }
}

/// Why a ``TXTRecord`` cannot be encoded.
public enum TXTRecordError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A key that is empty, holds `=`, or is not printable ASCII.
    case invalidKey(String)
    /// An entry longer than 255 bytes (`key=value`).
    case entryTooLong(key: String, length: Int)

    public var description: String {
        switch self {
        case .invalidKey(let key): "invalid TXT key \(String(reflecting: key))"
        case .entryTooLong(let key, let length): "TXT entry \(key) is \(length) bytes (at most 255)"
        }
    }
}
