import CDNSSD
import Foundation

/// Owns one `DNSServiceRef` (a registration, a browse, a resolve or an address query) and is
/// the `void *context` of its C callback.
///
/// The handle is created first, passed unretained as the context of the `DNSService*` call, and
/// then given the returned ref (``attach(_:)``); the engine keeps it alive for as long as the
/// ref lives, and Avahi calls back only from inside `DNSServiceProcessResult`, so the context
/// never dangles. The ref is guarded by a lock and deallocated exactly once (``deallocate()``,
/// or `deinit` as a last resort). All calls come from the engine thread; callbacks must not
/// deallocate a handle while it is dispatching (the engine defers such work).
final class DNSServiceHandle: @unchecked Sendable {
    /// What the ref is for.
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
    private let lock = NSLock()
    /// The ref; guarded by `lock`.
    private var ref: OpaquePointer?
    /// `DNSServiceRefSockFD` of the ref, or -1 before ``attach(_:)`` / after ``deallocate()``;
    /// guarded by `lock`.
    private var socket: Int32 = -1

    init(kind: Kind, engine: DiscoveryEngine) {
        self.kind = kind
        self.engine = engine
    }

    deinit {
        deallocate()
    }

    /// The pointer to pass as `context`.
    var context: UnsafeMutableRawPointer {
        Unmanaged.passUnretained(self).toOpaque()
    }

    /// The handle behind a callback's `context`.
    static func from(_ context: UnsafeMutableRawPointer?) -> DNSServiceHandle? {
        guard let context else { return nil }
        return Unmanaged<DNSServiceHandle>.fromOpaque(context).takeUnretainedValue()
    }

    /// Takes ownership of the ref that the `DNSService*` call returned.
    func attach(_ newRef: OpaquePointer) {
        let fd = DNSServiceRefSockFD(newRef)
        lock.withLock {
            ref = newRef
            socket = fd
        }
    }

    /// The descriptor to poll for readability, -1 when there is none.
    var fileDescriptor: Int32 { lock.withLock { socket } }

    /// Whether the handle still owns a ref.
    var isAlive: Bool { lock.withLock { ref != nil } }

    /// Runs `DNSServiceProcessResult` (the callbacks run inside it). Call only when the
    /// descriptor is readable, or it blocks. Returns the dns_sd status; `BadReference` when
    /// the handle was already deallocated.
    func processResult() -> Int32 {
        lock.withLock { () -> Int32 in
            guard let ref else { return -65541 }
            return DNSServiceProcessResult(ref)
        }
    }

    /// Updates the TXT record of a registration (`DNSServiceUpdateRecord` with no record ref).
    func updateTXT(_ bytes: [UInt8]) -> Int32 {
        lock.withLock { () -> Int32 in
            guard let ref else { return -65541 }
            return bytes.withUnsafeBytes { raw in
                DNSServiceUpdateRecord(ref, nil, 0, UInt16(raw.count), raw.baseAddress, 0)
            }
        }
    }

    /// Deallocates the ref (idempotent). For a registration this withdraws the service:
    /// avahi-daemon sends the goodbye packets.
    func deallocate() {
        let old = lock.withLock { () -> OpaquePointer? in
            defer {
                ref = nil
                socket = -1
            }
            return ref
        }
        if let old { DNSServiceRefDeallocate(old) }
    }
}
