import CAvahi
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs every Avahi call of one ``ServiceDiscovery`` on a dedicated thread: one client (one
/// D-Bus connection to avahi-daemon) and its objects live in an `AvahiSimplePoll` that the
/// thread iterates, together with a wake-up pipe; the callbacks' results go to the
/// ``PeerTable``, and the engine carries out the table's effects.
///
/// Only ``post(_:)`` may be called from other threads; everything else belongs to the engine
/// thread (hence `@unchecked Sendable`). Events and availability leave through ``Sink``.
final class DiscoveryEngine: @unchecked Sendable {
    /// Requests from other threads.
    enum Command: Sendable {
        case refresh
        case updateDatabases([String])
        case resolveOnly(Set<String>)
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
    /// The event loop of the Avahi client (nil only if Avahi could not allocate one).
    let simplePoll: OpaquePointer?
    /// The watch of the wake-up pipe in `simplePoll`.
    private var wakeWatch: OpaquePointer?
    /// The connection to avahi-daemon while connected.
    var client: OpaquePointer?
    var advertisement: ServiceAdvertisement
    var table: PeerTable
    var registration: AvahiHandle?
    /// The instance name registered (or being registered): the node ID, or Avahi's
    /// alternative after a name conflict.
    var registeredName: String
    var browse: AvahiHandle?
    /// While the browse is open: when it was opened, or when a reopened browse had read out the
    /// daemon's cache (the rest timer, ``DiscoveryConfiguration/browseRestsAfter``).
    var browseOpenedAt: Instant?
    /// Resolvers and address queries that answered while lookups rest, to close after the
    /// poll iteration (never inside a callback).
    var answeredLookups: [AvahiHandle] = []
    /// Whether the browse was closed to rest (``refresh(now:)`` opens it again).
    var browseResting = false
    /// Whether a reopened browse has yet to read out the daemon's cache (then unlisted
    /// instances are forgotten, and only then may it rest again).
    var browseUnconfirmed = false
    var resolvers: [String: AvahiHandle] = [:]
    /// Host key → query.
    var addressQueries: [String: AvahiHandle] = [:]
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
    var requery: AvahiHandle?
    var requeryEndsAt: Instant?
    /// Set by a callback when the client, the registration or the browse died.
    var connectionLost: String?
    /// Set by a callback when the registration must be added again: its name collided
    /// (rename first), or the daemon's host name changed (the group was reset).
    var registrationToRedo: RegistrationRedo?
    /// Effects produced inside callbacks, carried out after the poll iteration returns.
    var pendingEffects: [PeerTable.Effect] = []
    /// Handles that failed inside callbacks, dealt with after the poll iteration returns.
    var failedHandles: [(AvahiHandle, Int32)] = []

    /// Why the registration is added again.
    enum RegistrationRedo {
        case rename
        case hostChanged
    }

    init(configuration: DiscoveryConfiguration, logger: Logger, sink: Sink) {
        self.configuration = configuration
        self.logger = logger
        self.sink = sink
        self.advertisement = ServiceAdvertisement(configuration: configuration)
        self.table = PeerTable(
            ownNodeID: configuration.nodeID, group: configuration.group, onDemand: configuration.resolveOnDemand)
        registeredName = ServiceNaming.instanceName(forNodeID: configuration.nodeID)
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        simplePoll = avahi_simple_poll_new()
        if let simplePoll, wakeRead >= 0 {
            wakeWatch = cavahi_watch_new(
                avahi_simple_poll_get(simplePoll), wakeRead, AVAHI_WATCH_IN, Self.wakeCallback,
                Unmanaged.passUnretained(self).toOpaque())
        }
    }

    deinit {
        if let simplePoll {
            if let wakeWatch { cavahi_watch_free(avahi_simple_poll_get(simplePoll), wakeWatch) }
            avahi_simple_poll_free(simplePoll)
        }
        if wakeRead >= 0 { close(wakeRead) }
        if wakeWrite >= 0 { close(wakeWrite) }
    }

    /// The wake-up pipe is readable: empty it (the loop then reads the commands).
    private static let wakeCallback: AvahiWatchCallback = { _, fd, _, _ in
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(fd, &buffer, buffer.count) > 0 {}
    }

    /// Queues a command and wakes the engine thread. Safe from any thread.
    func post(_ command: Command) {
        commands.withLock { $0.append(command) }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// The commands to carry out of those queued: a `resolveOnly` set is dropped when a later one
    /// follows (it replaces the set), the rest stay in order. Each set change starts and stops
    /// lookups, and every start or stop is a D-Bus round trip to the daemon that blocks this
    /// thread; while 47 peers are browsed at once the mesh asks for a new set after each, and
    /// against a busy daemon (seconds per round trip) the sets piled up behind each other.
    static func coalesced(_ commands: [Command]) -> [Command] {
        guard let last = commands.lastIndex(where: { if case .resolveOnly = $0 { true } else { false } }) else { return commands }
        return commands.enumerated().compactMap { index, command in
            if case .resolveOnly = command, index != last { return nil }
            return command
        }
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
            for command in Self.coalesced(commands.withLock({ list in defer { list = [] }; return list })) {
                switch command {
                case .stop: break loop
                case .refresh: refresh(now: clock.now)
                case .updateDatabases(let databases): updateDatabases(databases)
                case .resolveOnly(let names):
                    pendingEffects += table.want(names)
                    settle()
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
        for deadline in [reconnectAt, sweepAt, requeryEndsAt, browseRestsAt].compactMap({ $0 }) + Array(resolveRetries.values)
            + Array(queryRetries.values) {
            next = min(next, deadline)
        }
        let remaining = now.duration(to: next)
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        return Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000) + 1
    }

    /// Waits for the daemon, the wake-up pipe or the timeout, and dispatches what arrived
    /// (the callbacks only record), then deals with it.
    func waitAndDispatch(timeoutMilliseconds: Int32) {
        guard let simplePoll else {
            usleep(UInt32(max(timeoutMilliseconds, 1)) * 1000)
            return
        }
        if avahi_simple_poll_iterate(simplePoll, timeoutMilliseconds) < 0 {
            // poll() itself failed (EINTR): try again on the next turn, without spinning.
            usleep(1000)
        }
        settle()
    }
}
