import Foundation
import Logging
import Synchronization

/// Sync Gateway style logging: each subsystem logs under its key (`HTTP`, `CRUD`,
/// `Changes`, `Node`, …); keys enabled with `--log`/`"log"` (or `*`) log at debug
/// level, the others at info and above. Lines go to stderr:
/// `2026-11-22T10:00:00.123Z [INF] HTTP: …`.
public struct ShoalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    private let key: String

    public init(label: String, enabledKeys: Set<String>) {
        key = label
        logLevel = enabledKeys.contains("*") || enabledKeys.contains(label) ? .debug : .info
    }

    /// Installs the handler for the whole process (once, from the executable).
    public static func bootstrap(enabledKeys: Set<String>) {
        LoggingSystem.bootstrap { label in ShoalLogHandler(label: label, enabledKeys: enabledKeys) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let level = switch event.level {
        case .trace: "TRC"
        case .debug: "DBG"
        case .info: "INF"
        case .notice: "NTC"
        case .warning: "WRN"
        case .error: "ERR"
        case .critical: "CRT"
        }
        let line = "\(Self.timestamp()) [\(level)] \(key): \(event.message)\n"
        Self.output.withLock { _ in FileHandle.standardError.write(Data(line.utf8)) }
    }

    private static let output = Mutex(())

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, now.tv_nsec / 1_000_000)
    }
}
