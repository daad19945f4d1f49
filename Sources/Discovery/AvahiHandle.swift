import CAvahi

/// Owns one Avahi client object (the registration's entry group, the browse, a service
/// resolver, an address or re-query record browser) and is the `userdata` of its callback.
///
/// The handle is created first, passed unretained as the userdata of the `avahi_*_new` call,
/// and then given the returned object (``attach(_:)``); the engine keeps it alive for as long
/// as the object lives, and Avahi calls back only from inside the engine's poll iteration,
/// so the userdata never dangles. Everything happens on the engine thread. The object is
/// freed exactly once (``deallocate()``, or `deinit` as a last resort), always before the
/// client that owns it.
final class AvahiHandle {
    /// What the object is for.
    enum Kind: Sendable, Equatable, CustomStringConvertible {
        case registration
        case browse
        case resolve(instance: String)
        case addressQuery(host: String)
        /// A short-lived query that makes the daemon ask the network again (see `refresh`).
        case requery

        var description: String {
            switch self {
            case .registration: "registration"
            case .browse: "browse"
            case .resolve(let instance): "resolve \(instance)"
            case .addressQuery(let host): "address query \(host)"
            case .requery: "re-query"
            }
        }
    }

    let kind: Kind
    /// The engine that receives the callbacks; it owns this handle.
    unowned let engine: DiscoveryEngine
    /// The Avahi object, nil before ``attach(_:)`` and after ``deallocate()``.
    private(set) var object: OpaquePointer?

    init(kind: Kind, engine: DiscoveryEngine) {
        self.kind = kind
        self.engine = engine
    }

    deinit {
        deallocate()
    }

    /// The pointer to pass as `userdata`.
    var context: UnsafeMutableRawPointer {
        Unmanaged.passUnretained(self).toOpaque()
    }

    /// The handle behind a callback's `userdata`.
    static func from(_ context: UnsafeMutableRawPointer?) -> AvahiHandle? {
        guard let context else { return nil }
        return Unmanaged<AvahiHandle>.fromOpaque(context).takeUnretainedValue()
    }

    /// Takes ownership of the object the `avahi_*_new` call returned.
    func attach(_ newObject: OpaquePointer) {
        object = newObject
    }

    /// Whether the handle still owns an object.
    var isAlive: Bool { object != nil }

    /// Frees the object (idempotent). For the registration this withdraws the service:
    /// avahi-daemon sends the goodbye packets.
    func deallocate() {
        guard let old = object else { return }
        object = nil
        switch kind {
        case .registration: avahi_entry_group_free(old)
        case .browse: avahi_service_browser_free(old)
        case .resolve: avahi_service_resolver_free(old)
        case .addressQuery, .requery: avahi_record_browser_free(old)
        }
    }
}
