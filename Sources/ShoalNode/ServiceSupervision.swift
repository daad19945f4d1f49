import BLIP
import Foundation

/// What `shoal serve` tells systemd (`Type=notify`, docs/operations.md): `READY=1` once
/// both listeners answer a request of this process's own, `WATCHDOG=1` every half
/// `WatchdogSec=` while the admin port still answers, `STOPPING=1` when a graceful stop
/// begins. Owns the probes and the watchdog task; outside systemd it does nothing.
public struct ServiceSupervision: Sendable {
    public let notifier: ServiceNotifier
    /// `http://HOST:PORT/` of the admin listener, as this host reaches it.
    let adminURL: URL
    /// The public listener: an HTTP URL, or host and port only when it takes TLS.
    let publicURL: URL
    let publicUsesTLS: Bool

    public init(notifier: ServiceNotifier, adminHost: String, adminPort: Int, publicHost: String, publicPort: Int, publicUsesTLS: Bool) {
        self.notifier = notifier
        adminURL = URL(string: "http://\(Self.reachable(adminHost)):\(adminPort)/")!
        publicURL = URL(string: "http://\(Self.reachable(publicHost)):\(publicPort)/")!
        self.publicUsesTLS = publicUsesTLS
    }

    /// The address to reach a listener bound to `host` from this host: loopback for a
    /// wildcard, IPv6 literals in brackets.
    public static func reachable(_ host: String) -> String {
        switch host {
        case "", "0.0.0.0", "*": return "127.0.0.1"
        case "::", "[::]": return "[::1]"
        default: return host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        }
    }

    /// Waits until both listeners answer (at most `attempts` tries, 100 ms apart), then
    /// sends `READY=1`. Returns whether they answered.
    @discardableResult
    public func announceReady(status: String, attempts: Int = 50) async -> Bool {
        guard notifier.isActive else { return true }
        for attempt in 0..<attempts {
            if await answers(adminURL), publicUsesTLS ? await accepts(publicURL) : await answers(publicURL) {
                notifier.ready(status: status)
                return true
            }
            if attempt + 1 < attempts { try? await Task.sleep(for: .milliseconds(100)) }
        }
        notifier.status("listeners do not answer")
        return false
    }

    /// Sends `WATCHDOG=1` every half interval while the admin port answers, until cancelled.
    /// A node whose admin port stops answering stops pinging, and systemd restarts it.
    public func runWatchdog() async {
        guard notifier.isActive, let interval = notifier.watchdogInterval else { return }
        let period = interval / 2
        while !Task.isCancelled {
            if await answers(adminURL, timeout: period) { notifier.watchdog() }
            try? await Task.sleep(for: period)
        }
    }

    /// Whether `GET url` gets any HTTP answer.
    private func answers(_ url: URL, timeout: Duration = .seconds(2)) async -> Bool {
        let request = PeerHTTPRequest(url: url, timeout: timeout)
        return (try? await request.send()) != nil
    }

    /// Whether a TCP connection to the URL's host and port is accepted (a TLS-only port).
    private func accepts(_ url: URL) async -> Bool {
        guard let host = url.host, let port = url.port else { return false }
        return await Task.detached {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            let unbracketed = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            guard getaddrinfo(unbracketed, String(port), &hints, &list) == 0, let first = list else { return false }
            defer { freeaddrinfo(list) }
            let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            return connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0
        }.value
    }
}
