import DocumentModel

/// The document body every write benchmark stores: a realistic order-like object
/// of 16 string and number properties whose canonical JSON is exactly
/// `SampleBody.targetSize` bytes. Built once, fully deterministic.
public enum SampleBody {
    /// Size of the canonical JSON of `properties`, in bytes.
    public static let targetSize = 1024

    /// The user properties (no `_` keys).
    public static let properties: [String: JSON] = makeProperties()

    /// `properties` as canonical JSON (what the store writes for a new revision).
    public static let canonicalBytes: [UInt8] = JSON.object(properties).canonicalBytes()

    private static func makeProperties() -> [String: JSON] {
        var body: [String: JSON] = [
            "type": "order",
            "order_id": "ORD-2026-000481516",
            "customer_id": "cust-0007341",
            "customer_name": "Margarethe van der Linden-Okonkwo",
            "email": "margarethe.vanderlinden@example.org",
            "status": "awaiting_shipment",
            "created_at": "2026-11-20T09:41:27.512Z",
            "updated_at": "2026-11-21T16:03:05.004Z",
            "currency": "EUR",
            "total": .double(1842.37),
            "tax_rate": .double(0.21),
            "items_count": 7,
            "priority": 3,
            "revision": 12,
            "shipping_address": "Keizersgracht 452, 1016 GD Amsterdam, Netherlands",
            "notes": "",
        ]
        // Fill `notes` with deterministic text so the whole body is exactly targetSize bytes.
        let base = JSON.object(body).canonicalBytes().count
        let words = ["deliver", "after", "noon", "ring", "twice", "fragile", "glass", "keep", "upright",
                     "leave", "with", "neighbour", "at", "number", "454", "if", "absent"]
        var notes = ""
        var i = 0
        while base + notes.utf8.count < targetSize {
            let word = words[i % words.count]
            notes += notes.isEmpty ? word : " " + word
            i += 1
        }
        if base + notes.utf8.count > targetSize {
            notes = String(notes.utf8.prefix(targetSize - base))!
        }
        body["notes"] = .string(notes)
        precondition(JSON.object(body).canonicalBytes().count == targetSize, "sample body must be \(targetSize) bytes")
        return body
    }

}

/// Deterministic, UUID-like document IDs (32 lowercase hex characters from a
/// SplitMix64 sequence), as clients and `_bulk_docs` generate them: keys arrive in
/// random order, like in production. The same seed gives the same IDs, so a raw
/// SQLite baseline and the store insert exactly the same keys.
public struct DocumentIDGenerator: Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    private mutating func nextWord() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func next() -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(16)
        for _ in 0..<2 {
            var word = nextWord()
            for _ in 0..<8 {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return Digests.hex(bytes)
    }

    public mutating func next(_ count: Int) -> [String] {
        (0..<count).map { _ in next() }
    }
}
