import Synchronization

/// Faults a node puts on its own BLIP links on purpose: the nemesis of a chaos run
/// (docs/operations.md "The nemesis"). One `LinkFaults` stands for the links to one peer
/// (or to every peer); connections attached to it (`BLIPConnection.setFaults`) consult it
/// before each frame they read and each batch they write, so settings changed while a link
/// runs act at once.
///
/// What each setting does to an attached connection:
/// - `cut`: it closes (503 "cut by the nemesis"), and so does any connection attached
///   while it is set.
/// - `holdInbound` / `holdOutbound`: frames are neither read nor written that way until
///   the hold is lifted (a stall, a one-way partition). The WebSocket below still answers
///   pings, so the link is not dropped as silent: replication just makes no progress.
/// - `delay` (± `jitter`): each write batch goes out that much later.
/// - `lossPercent`: a write batch is lost with this probability and goes out after a
///   retransmission timeout (200 ms, doubling while the retransmission is lost too, at most
///   3.2 s), as TCP hides a lost segment: the frames arrive late, never missing.
///
/// Owns its settings and the connections attached to it (to close them on a cut).
public final class LinkFaults: Sendable {
    /// What the links suffer now.
    public struct Settings: Sendable, Equatable {
        public var cut = false
        public var holdInbound = false
        public var holdOutbound = false
        public var delay: Duration = .zero
        public var jitter: Duration = .zero
        public var lossPercent: Double = 0

        public init(
            cut: Bool = false, holdInbound: Bool = false, holdOutbound: Bool = false,
            delay: Duration = .zero, jitter: Duration = .zero, lossPercent: Double = 0
        ) {
            self.cut = cut
            self.holdInbound = holdInbound
            self.holdOutbound = holdOutbound
            self.delay = delay
            self.jitter = jitter
            self.lossPercent = lossPercent
        }

        /// No fault at all.
        public var isClear: Bool { self == Settings() }
    }

    /// The first retransmission timeout of a lost batch, and the longest.
    static let retransmission = (first: Duration.milliseconds(200), most: Duration.milliseconds(3200))
    /// How often a held direction looks whether the hold was lifted.
    static let holdPoll = Duration.milliseconds(20)

    private struct State {
        var settings = Settings()
        var closers: [UInt64: @Sendable () -> Void] = [:]
        var nextCloser: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// The settings now.
    public var settings: Settings { state.withLock { $0.settings } }

    /// Replaces the settings; a cut closes every attached connection.
    public func set(_ settings: Settings) {
        let closers = state.withLock { state -> [@Sendable () -> Void] in
            state.settings = settings
            return settings.cut ? Array(state.closers.values) : []
        }
        for close in closers { close() }
    }

    /// Registers `close` to run on a cut (at once when the faults cut now); the token
    /// unregisters it.
    func attach(close: @escaping @Sendable () -> Void) -> UInt64 {
        let (token, cut) = state.withLock { state -> (UInt64, Bool) in
            state.nextCloser += 1
            state.closers[state.nextCloser] = close
            return (state.nextCloser, state.settings.cut)
        }
        if cut { close() }
        return token
    }

    func detach(_ token: UInt64) {
        _ = state.withLock { $0.closers.removeValue(forKey: token) }
    }

    /// Waits before an inbound frame is handled; false when the link is cut.
    func admitInbound() async -> Bool {
        while true {
            let settings = self.settings
            if settings.cut { return false }
            guard settings.holdInbound else { return true }
            do { try await Task.sleep(for: Self.holdPoll) } catch { return false }
        }
    }

    /// Waits before a batch of frames is written; false when the link is cut.
    func admitOutbound() async -> Bool {
        while true {
            let settings = self.settings
            if settings.cut { return false }
            if settings.holdOutbound {
                do { try await Task.sleep(for: Self.holdPoll) } catch { return false }
                continue
            }
            let wait = Self.lateness(settings, random: { Double.random(in: 0..<1) })
            if wait > .zero {
                do { try await Task.sleep(for: wait) } catch { return false }
                // The settings may have changed meanwhile (a cut, a hold): look again,
                // without another delay.
                let now = self.settings
                if now.cut { return false }
                if now.holdOutbound { continue }
            }
            return true
        }
    }

    /// How late a write batch goes out: the delay, a jitter drawn from ±`jitter`, and a
    /// retransmission timeout per loss drawn in a row. `random` gives numbers in [0, 1).
    static func lateness(_ settings: Settings, random: () -> Double) -> Duration {
        var wait = settings.delay
        if settings.jitter > .zero {
            wait += settings.jitter * (random() * 2 - 1)
        }
        if settings.lossPercent > 0 {
            var timeout = retransmission.first
            while random() * 100 < settings.lossPercent {
                wait += timeout
                if timeout >= retransmission.most { break }
                timeout = min(timeout * 2, retransmission.most)
            }
        }
        return max(wait, .zero)
    }
}
