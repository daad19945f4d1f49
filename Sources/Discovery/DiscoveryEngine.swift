import CDNSSD
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs every dns_sd call of one ``ServiceDiscovery`` on a dedicated thread: it polls the
/// descriptors of all its handles (`DNSServiceRefSockFD`) plus a wake-up pipe, calls
/// `DNSServiceProcessResult` on the readable ones, feeds the results to the ``PeerTable`` and
/// carries out the table's effects.
///
/// Only ``post(_:)`` may be called from other threads; everything else belongs to the engine
/// thread (hence `@unchecked Sendable`). Events and availability leave through ``Sink``.
final class DiscoveryEngine: @unchecked Sendable {
    /// Requests from other threads.
    enum Command: Sendable {
        case refresh
        case updateDatabases([String])
        case stop
    }

    /// Where the engine reports to; every closure may be called from the engine thread.
    struct Sink: Sendable {
        var emit: @Sendable (DiscoveryEvent) -> Void
        var setAvailable: @Sendable (Bool) -> Void
        var finished: @Sendable () -> Void
    }

    typealias Instant = ContinuousClock.Instant

    let configuration: DiscoveryConfiguration
    let logger: Logger
    let sink: Sink
    let clock = ContinuousClock()
    private let commands = Mutex<[Command]>([])
    private let wakeRead: Int32
    private let wakeWrite: Int32

    // Engine-thread state.
    var advertisement: ServiceAdvertisement
    var table: PeerTable
    var registration: DNSServiceHandle?
    var browse: DNSServiceHandle?
    var resolvers: [String: DNSServiceHandle] = [:]
    /// Host key → query.
    var addressQueries: [String: DNSServiceHandle] = [:]
    /// Whether the registration and the browse are up.
    var connected = false
    /// The last availability reported (`nil` before the first).
    var reportedAvailability: Bool?
    var lastConnectAttempt: Instant?
    var reconnectAt: Instant?
    var sweepAt: Instant?
    var resolveRetries: [String: Instant] = [:]
    var queryRetries: [String: Instant] = [:]
    /// Failures in a row of a resolver ("resolve <instance>") or address query ("query <host>").
    var lookupFailures: [String: Int] = [:]
    /// The re-query of the last refresh, and when it ends.
    var requery: DNSServiceHandle?
    var requeryEndsAt: Instant?
    /// Set by a callback when the registration or the browse died.
    var connectionLost: String?
    /// Effects produced inside callbacks, carried out after `DNSServiceProcessResult` returns.
    var pendingEffects: [PeerTable.Effect] = []
    /// Handles that failed inside callbacks, dealt with after `DNSServiceProcessResult` returns.
    var failedHandles: [(DNSServiceHandle, Int32)] = []

    init(configuration: DiscoveryConfiguration, logger: Logger, sink: Sink) {
        self.configuration = configuration
        self.logger = logger
        self.sink = sink
        self.advertisement = ServiceAdvertisement(configuration: configuration)
        self.table = PeerTable(ownNodeID: configuration.nodeID, group: configuration.group)
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
    }

    deinit {
        if wakeRead >= 0 { close(wakeRead) }
        if wakeWrite >= 0 { close(wakeWrite) }
    }

    /// Queues a command and wakes the engine thread. Safe from any thread.
    func post(_ command: Command) {
        commands.withLock { $0.append(command) }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// Starts the engine thread.
    func startThread() {
        let thread = Thread { [self] in run() }
        thread.name = "shoal-discovery"
        thread.start()
    }

    /// The engine thread's body: connect, then poll and dispatch until stopped.
    func run() {
        logger.debug("discovery thread started", metadata: ["node": "\(configuration.nodeID)"])
        connect(now: clock.now)
        loop: while true {
            for command in commands.withLock({ list in defer { list = [] }; return list }) {
                switch command {
                case .stop: break loop
                case .refresh: refresh(now: clock.now)
                case .updateDatabases(let databases): updateDatabases(databases)
                }
            }
            runTimers(now: clock.now)
            waitAndDispatch(timeoutMilliseconds: pollTimeout(now: clock.now))
        }
        tearDownAll()
        logger.debug("discovery thread stopped", metadata: ["node": "\(configuration.nodeID)"])
        sink.finished()
    }

    /// Milliseconds until the next timer (at most 5 s; the wake-up pipe ends the wait early).
    func pollTimeout(now: Instant) -> Int32 {
        var next = now + .seconds(5)
        for deadline in [reconnectAt, sweepAt, requeryEndsAt].compactMap({ $0 }) + Array(resolveRetries.values)
            + Array(queryRetries.values) {
            next = min(next, deadline)
        }
        let remaining = now.duration(to: next)
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        return Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000) + 1
    }

    /// Polls the wake-up pipe and every live handle, then processes the readable handles one
    /// by one, carrying out the effects after each.
    func waitAndDispatch(timeoutMilliseconds: Int32) {
        let handles = liveHandles()
        var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        fds += handles.map { pollfd(fd: $0.fileDescriptor, events: Int16(POLLIN), revents: 0) }
        let ready = poll(&fds, nfds_t(fds.count), timeoutMilliseconds)
        guard ready > 0 else { return }
        if fds[0].revents != 0 { drainWakePipe() }
        for (index, handle) in handles.enumerated() {
            let events = Int32(fds[index + 1].revents)
            guard events != 0, handle.isAlive else { continue }
            let status: Int32
            if events & Int32(POLLIN) != 0 {
                status = handle.processResult()
            } else {
                status = DNSServiceStatus.unknown  // POLLHUP / POLLERR / POLLNVAL
            }
            if status != DNSServiceStatus.noError { handleFailed(handle, error: status) }
            settle()
        }
    }

    private func liveHandles() -> [DNSServiceHandle] {
        var list: [DNSServiceHandle] = []
        if let registration { list.append(registration) }
        if let browse { list.append(browse) }
        if let requery { list.append(requery) }
        list += resolvers.keys.sorted().compactMap { resolvers[$0] }
        list += addressQueries.keys.sorted().compactMap { addressQueries[$0] }
        return list.filter { $0.fileDescriptor >= 0 }
    }

    private func drainWakePipe() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &buffer, buffer.count) > 0 {}
    }
}
