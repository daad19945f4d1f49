import BLIP
import DocumentModel

/// One fault the nemesis is asked to inject (`POST /_nemesis`), as a value: what, on
/// which peers or databases, and for how long. Pure: parsed from the request's JSON with
/// a reason for anything wrong, and written back as JSON for `GET /_nemesis` and `_mesh`.
///
/// Request body: `{"fault": KIND, "duration": SECONDS, …}`, with per kind:
/// - `partition`: `"peers": [node IDs]` (required), `"direction": "both" | "in" | "out"`
///   (default `both`: links closed and refused; `in`/`out`: that direction held);
/// - `stall`: `"peers"` (default every peer): links held both ways;
/// - `pause`: replication paused: every mesh link held both ways;
/// - `delay`: `"ms"`, `"jitter_ms"` (default 0), `"peers"`: write batches that much later;
/// - `loss`: `"percent"` (0–100), `"peers"`: lost batches resent after a retransmission timeout;
/// - `clock`: `"offset_ms"` (±7 days): the hybrid logical clock reads the wall clock that far off;
/// - `disk_full`: `"databases"` (default every database): writes answer 507;
/// - `crash`: `"after_ms"` (default 200, no `duration`): the process kills itself with SIGKILL.
public struct NemesisFault: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case partition, stall, pause, delay, loss, clock
        case diskFull = "disk_full"
        case crash
    }

    public enum Direction: String, Sendable {
        case both
        case inbound = "in"
        case outbound = "out"
    }

    public var kind: Kind
    /// The peers' node IDs (nil: every peer).
    public var peers: [String]?
    public var direction: Direction = .both
    public var delay: Duration = .zero
    public var jitter: Duration = .zero
    public var lossPercent: Double = 0
    public var clockOffset: Duration = .zero
    /// The databases of a `disk_full` (nil: every database).
    public var databases: [String]?
    /// How long until the fault lifts itself (a crash: how long until it happens).
    public var duration: Duration

    public init(kind: Kind, duration: Duration) {
        self.kind = kind
        self.duration = duration
    }

    /// The largest clock offset.
    static let maxClockOffset = Duration.seconds(7 * 24 * 3600)
    /// A crash's default wait: long enough for its answer to go out.
    static let crashDelay = Duration.milliseconds(200)

    /// Parses a request body; `maxDuration` bounds `duration`.
    public init(json: JSON, maxDuration: Duration) throws(NemesisError) {
        guard let object = json.objectValue else { throw NemesisError("the body must be a JSON object like {\"fault\": \"stall\", \"duration\": 10}") }
        let kinds = Kind.allCases.map(\.rawValue).joined(separator: ", ")
        guard let name = object["fault"]?.stringValue, let kind = Kind(rawValue: name) else {
            throw NemesisError("\"fault\" must be one of \(kinds)")
        }
        let known: Set<String> = switch kind {
        case .partition: ["peers", "direction"]
        case .stall: ["peers"]
        case .pause: []
        case .delay: ["peers", "ms", "jitter_ms"]
        case .loss: ["peers", "percent"]
        case .clock: ["offset_ms"]
        case .diskFull: ["databases"]
        case .crash: ["after_ms"]
        }
        for key in object.keys.sorted() where key != "fault" && key != "duration" && !known.contains(key) {
            throw NemesisError("\"\(key)\" is not a setting of a \(name) fault")
        }
        func milliseconds(_ key: String, _ range: ClosedRange<Double>) throws(NemesisError) -> Duration? {
            guard let value = object[key] else { return nil }
            guard let number = value.doubleValue, range.contains(number) else {
                throw NemesisError("\"\(key)\" must be a number of milliseconds from \(Int64(range.lowerBound)) to \(Int64(range.upperBound))")
            }
            return .milliseconds(Int64(number.rounded()))
        }
        func names(_ key: String) throws(NemesisError) -> [String]? {
            guard let value = object[key] else { return nil }
            guard let array = value.arrayValue, !array.isEmpty,
                  case let names = array.compactMap(\.stringValue), names.count == array.count, names.allSatisfy({ !$0.isEmpty })
            else { throw NemesisError("\"\(key)\" must be a non-empty array of names") }
            return names
        }
        if kind == .crash {
            guard object["duration"] == nil else { throw NemesisError("a crash has no duration: \"after_ms\" says when it happens") }
            duration = try milliseconds("after_ms", 0...60_000) ?? Self.crashDelay
        } else {
            let most = Double(maxDuration.components.seconds)
            guard let seconds = object["duration"]?.doubleValue, seconds > 0, seconds <= most else {
                throw NemesisError("\"duration\" must be a number of seconds above 0, at most \(Int64(most)) (the config's nemesis.max_duration): every fault lifts itself")
            }
            duration = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        self.kind = kind
        peers = try names("peers")
        databases = try names("databases")
        switch kind {
        case .partition:
            guard peers != nil else { throw NemesisError("a partition needs \"peers\": the node IDs to cut off") }
            if let value = object["direction"] {
                guard let text = value.stringValue, let direction = Direction(rawValue: text) else {
                    throw NemesisError("\"direction\" must be both, in or out")
                }
                self.direction = direction
            }
        case .delay:
            guard let delay = try milliseconds("ms", 1...60_000) else { throw NemesisError("a delay needs \"ms\" (1 to 60000)") }
            self.delay = delay
            jitter = try milliseconds("jitter_ms", 0...60_000) ?? .zero
        case .loss:
            guard let percent = object["percent"]?.doubleValue, percent > 0, percent <= 100 else {
                throw NemesisError("a loss needs \"percent\", above 0 and at most 100")
            }
            lossPercent = percent
        case .clock:
            let most = Double(Self.maxClockOffset.components.seconds) * 1000
            guard let offset = try milliseconds("offset_ms", -most...most), offset != .zero else {
                throw NemesisError("a clock fault needs a non-zero \"offset_ms\" within ±7 days")
            }
            clockOffset = offset
        case .stall, .pause, .diskFull, .crash:
            break
        }
    }

    /// Whether the fault acts on the links to `peer`.
    func touches(peer: String) -> Bool {
        switch kind {
        case .pause: true
        case .partition, .stall, .delay, .loss: peers.map { $0.contains(peer) } ?? true
        case .clock, .diskFull, .crash: false
        }
    }

    /// What the fault does to the links to `peer`, added to `settings`.
    func add(to settings: inout LinkFaults.Settings, peer: String) {
        guard touches(peer: peer) else { return }
        switch kind {
        case .partition:
            switch direction {
            case .both: settings.cut = true
            case .inbound: settings.holdInbound = true
            case .outbound: settings.holdOutbound = true
            }
        case .stall, .pause:
            settings.holdInbound = true
            settings.holdOutbound = true
        case .delay:
            settings.delay = max(settings.delay, delay)
            settings.jitter = max(settings.jitter, jitter)
        case .loss:
            settings.lossPercent = max(settings.lossPercent, lossPercent)
        case .clock, .diskFull, .crash:
            break
        }
    }

    /// The fault as JSON: its request's settings.
    public var json: JSON {
        var object: [String: JSON] = ["fault": .string(kind.rawValue)]
        if kind == .crash {
            object["after_ms"] = .int(duration.wholeMilliseconds)
        } else {
            object["duration"] = .double(Double(duration.wholeMilliseconds) / 1000)
        }
        if let peers { object["peers"] = .array(peers.map { .string($0) }) }
        if let databases { object["databases"] = .array(databases.map { .string($0) }) }
        switch kind {
        case .partition: object["direction"] = .string(direction.rawValue)
        case .delay:
            object["ms"] = .int(delay.wholeMilliseconds)
            object["jitter_ms"] = .int(jitter.wholeMilliseconds)
        case .loss: object["percent"] = .double(lossPercent)
        case .clock: object["offset_ms"] = .int(clockOffset.wholeMilliseconds)
        case .stall, .pause, .diskFull, .crash: break
        }
        return .object(object)
    }
}

/// Why a nemesis request was refused (400 unless `status` says otherwise).
public struct NemesisError: Error, Sendable, Equatable {
    public let reason: String
    public let status: Int

    public init(_ reason: String, status: Int = 400) {
        self.reason = reason
        self.status = status
    }
}
