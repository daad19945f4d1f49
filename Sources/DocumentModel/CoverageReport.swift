/// One `shoal/covered` report between two Shoal nodes, as a value: the sender's store,
/// what it covers of each source store's changes feed, and (when it changed) the stores it
/// receives from now (docs/architecture.md §10.10 "Offers as knowledge"). Pure: the wire
/// form is a BLIP message's `store` and `live` properties and its JSON body, which
/// `init(store:live:body:)` parses and `body`/`liveProperty` write.
///
/// Parsing is all or nothing: a report with any malformed part is refused whole (nil), so
/// a peer's knowledge is never guessed from half a report.
public struct CoverageReport: Sendable, Equatable {
    /// The longest store UUID accepted (Shoal's are 32 hex digits).
    public static let maxUUIDLength = 64

    /// The sender's store UUID.
    public var store: String
    /// Source store UUID → the entries of its feed the sender covers (under `store`
    /// itself: the entries of the sender's feed the receiver holds by the sender's knowledge).
    public var ranges: [String: SequenceRanges]
    /// The stores the sender receives from now, when that changed (nil: unchanged).
    public var live: [String]?

    public init(store: String, ranges: [String: SequenceRanges], live: [String]? = nil) {
        self.store = store
        self.ranges = ranges
        self.live = live
    }

    /// Parses a report's parts; nil when any of them is malformed: a missing, empty or
    /// overlong `store`, a body that is not a JSON object of strings in the
    /// `SequenceRanges` text form, an overlong UUID anywhere.
    public init?(store: String?, live: String?, body: some Collection<UInt8>, limit: Int = 65_536) {
        guard let store, Self.isUUID(store),
              let parsed = try? JSON.parse(body), let object = parsed.objectValue
        else { return nil }
        var ranges: [String: SequenceRanges] = [:]
        for (uuid, value) in object {
            guard Self.isUUID(uuid), let text = value.stringValue,
                  let set = SequenceRanges(text: text, limit: limit)
            else { return nil }
            ranges[uuid, default: SequenceRanges(limit: limit)].formUnion(set)
        }
        var stores: [String]?
        if let live {
            let uuids = live.split(separator: ",").map(String.init)
            guard uuids.allSatisfy(Self.isUUID) else { return nil }
            stores = uuids
        }
        self.init(store: store, ranges: ranges, live: stores)
    }

    /// The body: a canonical JSON object from UUID to ranges text.
    public var body: [UInt8] {
        JSON.object(ranges.mapValues { .string($0.description) }).canonicalBytes()
    }

    /// The `live` property's text, when there is one.
    public var liveProperty: String? { live?.joined(separator: ",") }

    private static func isUUID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= maxUUIDLength
    }
}
