import Foundation

/// systemd's readiness protocol (`sd_notify(3)`), written without libsystemd: each
/// state change is one datagram of `KEY=VALUE` lines sent to the `AF_UNIX` socket named
/// by `NOTIFY_SOCKET` (a path, or an abstract name when it starts with `@`). Owns the
/// socket address and the watchdog interval read from the environment; outside systemd
/// (no `NOTIFY_SOCKET`) every call does nothing.
///
/// Messages Shoal sends (docs/operations.md): `READY=1` once both listeners answer and
/// the databases are open, `STATUS=…` lines, `WATCHDOG=1` every half `WatchdogSec=`
/// while the node answers its own admin port, `STOPPING=1` when a graceful stop begins.
public struct ServiceNotifier: Sendable {
    /// The socket's address as `sockaddr_un.sun_path` bytes (a leading NUL for an abstract name).
    private let address: [UInt8]?
    /// `WATCHDOG_USEC` when it is meant for this process (`WATCHDOG_PID` absent or ours).
    public let watchdogInterval: Duration?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment, pid: Int32 = getpid()) {
        address = environment["NOTIFY_SOCKET"].flatMap(Self.socketPath)
        let forUs = environment["WATCHDOG_PID"].map { Int32($0) == pid } ?? true
        if forUs, let text = environment["WATCHDOG_USEC"], let micros = UInt64(text), micros > 0 {
            watchdogInterval = .microseconds(Int64(clamping: micros))
        } else {
            watchdogInterval = nil
        }
    }

    /// Whether a service manager listens (`NOTIFY_SOCKET` is set and usable).
    public var isActive: Bool { address != nil }

    /// `NOTIFY_SOCKET`'s value as `sun_path` bytes; nil when empty, relative or too long.
    static func socketPath(_ value: String) -> [UInt8]? {
        var bytes = Array(value.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "/") || first == UInt8(ascii: "@") else { return nil }
        if first == UInt8(ascii: "@") { bytes[0] = 0 }
        guard bytes.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else { return nil }
        return bytes
    }

    /// The node is ready: listeners answer, databases are open.
    public func ready(status: String) { send(["READY=1", "STATUS=\(status)", "MAINPID=\(getpid())"]) }
    /// A graceful stop has begun.
    public func stopping() { send(["STOPPING=1", "STATUS=stopping"]) }
    /// The node is alive (only meaningful with `WatchdogSec=`).
    public func watchdog() { send(["WATCHDOG=1"]) }
    /// A free-form status line (`systemctl status` shows it).
    public func status(_ text: String) { send(["STATUS=\(text)"]) }

    /// Sends one datagram; failures are ignored, as `sd_notify` callers do (the manager
    /// may be gone, and a node must never stop because nobody listens).
    @discardableResult
    public func send(_ lines: [String]) -> Bool {
        guard let address else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var peer = sockaddr_un()
        peer.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &peer.sun_path) { path in
            for (index, byte) in address.enumerated() { path[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + address.count + (address.first == 0 ? 0 : 1))
        let payload = Array(lines.joined(separator: "\n").utf8)
        let sent = withUnsafePointer(to: &peer) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                payload.withUnsafeBytes { bytes in
                    sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
        }
        return sent == payload.count
    }
}
