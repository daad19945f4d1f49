import ServiceLifecycle

/// A service of the node's group that does nothing until the group begins a graceful
/// shutdown, then runs its action once (the executable sends systemd `STOPPING=1` from it).
struct ShutdownObserver: Service {
    let action: (@Sendable () -> Void)?

    func run() async throws {
        guard let action else { return }
        // Returns on graceful shutdown; throws only when the group is cancelled instead.
        do { try await gracefulShutdown() } catch { return }
        action()
    }
}
