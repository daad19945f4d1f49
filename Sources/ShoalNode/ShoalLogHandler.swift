import Foundation
import Logging

/// Sync Gateway style logging: each subsystem logs under its key (`HTTP`, `CRUD`,
/// `Changes`, `Node`, …); keys enabled with `--log`/`"log"` (or `*`) log at debug
/// level, the others at info and above. Lines go to stderr:
/// `2026-11-22T10:00:00.123Z [INF] HTTP: …`. When stderr is the journal's stream
/// (systemd sets `JOURNAL_STREAM` to its device and inode), a line is instead
/// `<6>HTTP: …`: the syslog priority prefix journald reads, and no timestamp (the
/// journal stamps every entry itself). Lines are written by `LogWriter`'s thread: a
/// caller never waits for the write, and a line that finds its queue full is dropped
/// and counted.
public struct ShoalLogHandler: LogHandler {
    /// How lines are written to stderr.
    public enum Format: Sendable {
        /// `2026-11-22T10:00:00.123Z [INF] HTTP: …` (a terminal, a file, the lab).
        case plain
        /// `<6>HTTP: …` (stderr is connected to systemd-journald).
        case journal
    }

    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    private let key: String
    private let format: Format

    public init(label: String, enabledKeys: Set<String>, format: Format = .plain) {
        key = label
        self.format = format
        logLevel = enabledKeys.contains("*") || enabledKeys.contains(label) ? .debug : .info
    }

    /// Installs the handler for the whole process (once, from the executable), in the
    /// format `detectFormat()` picks.
    public static func bootstrap(enabledKeys: Set<String>) {
        let format = detectFormat()
        LoggingSystem.bootstrap { label in ShoalLogHandler(label: label, enabledKeys: enabledKeys, format: format) }
    }

    /// `.journal` when `JOURNAL_STREAM` (`"<device>:<inode>"`) names the file that
    /// `descriptor` (stderr) is; `.plain` otherwise — also when a child of the service
    /// inherited the variable but writes elsewhere, as systemd.exec(5) advises.
    public static func detectFormat(
        environment: [String: String] = ProcessInfo.processInfo.environment, descriptor: Int32 = 2
    ) -> Format {
        guard let value = environment["JOURNAL_STREAM"] else { return .plain }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return .plain }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .plain }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode ? .journal : .plain
    }

    /// The syslog priority of a level (`sd-daemon(3)`'s `<N>` prefixes).
    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        if format == .journal {
            // One line per entry: a message's own newlines would start entries without a prefix.
            let message = "\(event.message)".replacingOccurrences(of: "\n", with: " ")
            let line = Array("<\(Self.syslogPriority(event.level))>\(key): \(message)\n".utf8)
            Self.emit(line, level: event.level)
            return
        }
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
        Self.emit(line, level: event.level)
    }

    /// Queues the line for the writer thread; a critical one (often right before the
    /// process ends) is waited for.
    private static func emit(_ line: [UInt8], level: Logger.Level) {
        LogWriter.standardError.enqueue(line)
        if level == .critical { LogWriter.standardError.flush(timeout: .seconds(1)) }
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
