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
        var line: [UInt8] = []
        line.reserveCapacity(48 + key.utf8.count)
        Self.appendTimestamp(to: &line)
        line.append(contentsOf: " [\(level)] \(key): \(event.message)\n".utf8)
        Self.output.withLock { _ in Self.writeAll(line) }
    }

    private static let output = Mutex(())

    /// Writes the whole line to stderr (one `write(2)` unless interrupted or partial).
    private static func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    /// `2026-11-22T10:00:00.123Z` (UTC), written digit by digit: `String(format:)` cost
    /// a tenth of the CPU of a small request, which logs one line.
    static func appendTimestamp(to line: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int, _ count: Int, then separator: UInt8?) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                line.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
            if let separator { line.append(separator) }
        }
        digits(Int(parts.tm_year) + 1900, 4, then: UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2, then: UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2, then: UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2, then: UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2, then: UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2, then: UInt8(ascii: "."))
        digits(now.tv_nsec / 1_000_000, 3, then: UInt8(ascii: "Z"))
    }
}
