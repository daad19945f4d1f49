import Foundation
import Logging
import Synchronization

/// Registers this node and browses for peers of the same group through the host's
/// avahi-daemon (Avahi's client library: one D-Bus connection per node).
///
/// The node is registered as `<nodeID>.<serviceType>.local.` with the subtype of its group and
/// the TXT keys `id`, `db`, `proto`, `group` (see `Discovery.md`); peers are found by browsing
/// the subtype, resolving each instance (SRV + TXT) and querying the A record of its host.
/// All Avahi work runs on one dedicated thread, never on the Swift concurrency pool.
///
/// When no daemon is reachable, ``DiscoveryEvent/daemonUnavailable(_:)`` is reported once and
/// the connection is tried again quietly every `retryInterval`; when the daemon goes away
/// later (the client fails) the same happens, and ``DiscoveryEvent/daemonAvailable`` follows once it
/// is back. Nothing here crashes or blocks the caller for want of a daemon.
public final class ServiceDiscovery: Sendable {
    private enum Phase {
        case idle
        case running(DiscoveryEngine)
        case stopping(DiscoveryEngine)
        case stopped
    }

    private struct State {
        var phase: Phase = .idle
        var eventsHandedOut = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// State shared with the engine's sink (no reference back to `self`, so `deinit` runs).
    private final class Shared: Sendable {
        let state = Mutex(State())
        let available = Mutex(false)
        let continuation: AsyncStream<DiscoveryEvent>.Continuation

        init(continuation: AsyncStream<DiscoveryEvent>.Continuation) {
            self.continuation = continuation
        }

        func finished() {
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.phase = .stopped
                defer { state.stopWaiters = [] }
                return state.stopWaiters
            }
            continuation.finish()
            for waiter in waiters { waiter.resume() }
        }
    }

    /// What this instance registers and browses for.
    public let configuration: DiscoveryConfiguration
    private let logger: Logger
    private let stream: AsyncStream<DiscoveryEvent>
    private let shared: Shared

    /// Prepares discovery; nothing happens before ``start()``.
    public init(configuration: DiscoveryConfiguration, logger: Logger = Logger(label: "Discovery")) {
        self.configuration = configuration
        self.logger = logger
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self, bufferingPolicy: .unbounded)
        self.stream = stream
        self.shared = Shared(continuation: continuation)
    }

    deinit {
        let engine = shared.state.withLock { state -> DiscoveryEngine? in
            if case .running(let engine) = state.phase { return engine }
            return nil
        }
        engine?.post(.stop)
    }

    /// The events, in order, from the start until ``stop()``. Events that happen before the
    /// stream is iterated are buffered. Call it once (before or after ``start()``): a second
    /// call gets an already finished stream.
    public func events() -> AsyncStream<DiscoveryEvent> {
        let first = shared.state.withLock { state -> Bool in
            defer { state.eventsHandedOut = true }
            return !state.eventsHandedOut
        }
        guard first else {
            logger.warning("ServiceDiscovery.events() called more than once; returning a finished stream")
            return AsyncStream { $0.finish() }
        }
        return stream
    }

    /// Starts registering and browsing on the discovery thread. The own node is never
    /// reported; peers of other groups are ignored. Calling it again, or after ``stop()``,
    /// does nothing.
    public func start() {
        let shared = self.shared
        let sink = DiscoveryEngine.Sink(
            emit: { shared.continuation.yield($0) },
            setAvailable: { value in shared.available.withLock { $0 = value } },
            finished: { shared.finished() }
        )
        let engine = shared.state.withLock { state -> DiscoveryEngine? in
            guard case .idle = state.phase else { return nil }
            let engine = DiscoveryEngine(configuration: configuration, logger: logger, sink: sink)
            state.phase = .running(engine)
            return engine
        }
        guard let engine else {
            logger.debug("ServiceDiscovery.start() ignored: already started or stopped")
            return
        }
        engine.startThread()
    }

    /// Withdraws the registration (avahi-daemon sends goodbye packets), stops browsing, ends
    /// the event stream, and returns once the discovery thread has finished. Final: the
    /// instance cannot be started again.
    public func stop() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let action = shared.state.withLock { state -> (DiscoveryEngine?, Bool) in
                switch state.phase {
                case .idle:
                    state.phase = .stopped
                    return (nil, true)
                case .running(let engine):
                    state.phase = .stopping(engine)
                    state.stopWaiters.append(waiter)
                    return (engine, false)
                case .stopping:
                    state.stopWaiters.append(waiter)
                    return (nil, false)
                case .stopped:
                    return (nil, true)
                }
            }
            action.0?.post(.stop)
            if action.1 {
                shared.continuation.finish()
                waiter.resume()
            }
        }
        shared.available.withLock { $0 = false }
    }

    /// Makes the daemon ask the network again at once (one fresh question for this group's
    /// subtype) instead of waiting for its backed-off queries; the running browse sees the
    /// answers, so peers registered meanwhile (across a healed partition) are `added`. Nothing
    /// is torn down and nobody is reported removed: a refresh costs one query however many
    /// peers are known. Call it when a partition may have healed. While the daemon is
    /// unreachable it makes the next reconnection attempt happen now.
    public func refresh() {
        runningEngine()?.post(.refresh)
    }

    /// With ``DiscoveryConfiguration/resolveOnDemand``: resolves (and keeps resolving) exactly
    /// the peers whose instance names are in `nodeIDs`, as browsed; the others are only
    /// ``DiscoveryEvent/browsed(nodeID:)``. A peer resolved before stays reported when it
    /// leaves the set (its address is then no longer followed). Without on-demand resolution
    /// every peer is resolved and this does nothing.
    public func resolve(only nodeIDs: Set<String>) {
        guard configuration.resolveOnDemand else { return }
        runningEngine()?.post(.resolveOnly(nodeIDs))
    }

    /// Advertises a new list of databases (TXT `db`) without re-registering.
    public func update(databases: [String]) {
        runningEngine()?.post(.updateDatabases(databases))
    }

    /// Whether the daemon is reachable and this node is registered and browsing.
    public var isDaemonAvailable: Bool {
        shared.available.withLock { $0 }
    }

    private func runningEngine() -> DiscoveryEngine? {
        shared.state.withLock { state in
            if case .running(let engine) = state.phase { return engine }
            return nil
        }
    }
}
