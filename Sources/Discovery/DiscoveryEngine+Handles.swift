import CDNSSD
import Logging

extension DiscoveryEngine {
    /// Registers this node and starts browsing. On failure (no daemon, no bus) everything
    /// created is dropped, unavailability is reported once, and another attempt is scheduled
    /// after `retryInterval`.
    func connect(now: Instant) {
        lastConnectAttempt = now
        reconnectAt = nil
        if let failure = createRegistration() ?? createBrowse() {
            tearDownAll()
            reportAvailability(false, reason: failure)
            reconnectAt = now + configuration.retryInterval
            return
        }
        connected = true
        reportAvailability(true, reason: "")
        if table.hasStaleInstances { sweepAt = now + configuration.resyncGracePeriod }
    }

    /// Creates the registration; returns why it failed, or `nil`.
    private func createRegistration() -> String? {
        let txt: [UInt8]
        do {
            txt = try advertisement.txtRecord().encoded()
        } catch {
            // Cannot happen with the fixed keys and truncated values; never fail over it.
            logger.error("cannot encode TXT record: \(error); registering without TXT")
            txt = [0]
        }
        let handle = DNSServiceHandle(kind: .registration, engine: self)
        let name = ServiceNaming.instanceName(forNodeID: configuration.nodeID)
        let regType = ServiceNaming.subtypeRegType(serviceType: configuration.serviceType, group: configuration.group)
        var ref: OpaquePointer?
        let status = txt.withUnsafeBytes { raw in
            DNSServiceRegister(
                &ref, 0, 0, name, regType, nil, nil,
                UInt16(truncatingIfNeeded: configuration.port).bigEndian,
                UInt16(raw.count), raw.baseAddress,
                DNSServiceCallbacks.register, handle.context
            )
        }
        guard status == DNSServiceStatus.noError, let ref else {
            return DNSServiceStatus.describe(status, call: "DNSServiceRegister")
        }
        handle.attach(ref)
        registration = handle
        logger.debug("registering", metadata: ["name": "\(name)", "type": "\(regType)", "port": "\(configuration.port)"])
        return nil
    }

    /// Creates the browse of this group's subtype; returns why it failed, or `nil`.
    func createBrowse() -> String? {
        let handle = DNSServiceHandle(kind: .browse, engine: self)
        let regType = ServiceNaming.subtypeRegType(serviceType: configuration.serviceType, group: configuration.group)
        var ref: OpaquePointer?
        let status = DNSServiceBrowse(&ref, 0, 0, regType, "local.", DNSServiceCallbacks.browse, handle.context)
        guard status == DNSServiceStatus.noError, let ref else {
            return DNSServiceStatus.describe(status, call: "DNSServiceBrowse")
        }
        handle.attach(ref)
        browse = handle
        logger.debug("browsing", metadata: ["type": "\(regType)"])
        return nil
    }

    /// Starts resolving an instance (SRV + TXT). A resolver that cannot be created is retried
    /// after `retryInterval`.
    func startResolve(instance: String, domain: String) {
        let handle = DNSServiceHandle(kind: .resolve(instance: instance), engine: self)
        var ref: OpaquePointer?
        let status = DNSServiceResolve(
            &ref, 0, 0, instance, configuration.serviceType, domain, DNSServiceCallbacks.resolve, handle.context
        )
        guard status == DNSServiceStatus.noError, let ref else {
            logger.debug("\(DNSServiceStatus.describe(status, call: "DNSServiceResolve")) for \(instance)")
            resolveRetries[instance] = clock.now + retryDelay(after: "resolve \(instance)")
            pendingEffects += table.resolveFailed(instance: instance)
            return
        }
        handle.attach(ref)
        resolvers[instance]?.deallocate()
        resolvers[instance] = handle
    }

    /// Starts querying the A records of a host target.
    func startAddressQuery(host: String) {
        let key = PeerTable.hostKey(host)
        let handle = DNSServiceHandle(kind: .addressQuery(host: host), engine: self)
        var ref: OpaquePointer?
        let status = DNSServiceQueryRecord(
            &ref, 0, 0, host, UInt16(kDNSServiceType_A), UInt16(kDNSServiceClass_IN),
            DNSServiceCallbacks.queryRecord, handle.context
        )
        guard status == DNSServiceStatus.noError, let ref else {
            logger.debug("\(DNSServiceStatus.describe(status, call: "DNSServiceQueryRecord")) for \(host)")
            queryRetries[host] = clock.now + retryDelay(after: "query \(key)")
            pendingEffects += table.addressQueryFailed(host: host)
            return
        }
        handle.attach(ref)
        addressQueries[key]?.deallocate()
        addressQueries[key] = handle
    }

    /// When a resolver or address query that failed `n` times in a row is tried again:
    /// `retryInterval` doubled per failure up to 32×, ±25%. A daemon or bus that refuses new
    /// clients under load (dozens of peers starting lookups at once) is not hammered every
    /// `retryInterval` by every lookup.
    func retryDelay(after lookup: String) -> Duration {
        let failures = (lookupFailures[lookup] ?? 0) + 1
        lookupFailures[lookup] = failures
        return Self.retryDelay(failures: failures, base: configuration.retryInterval, jitter: Double.random(in: 0.75...1.25))
    }

    /// The pure rule of `retryDelay(after:)`: `base` × 2^(failures − 1), at most 32×, × `jitter`.
    static func retryDelay(failures: Int, base: Duration, jitter: Double) -> Duration {
        base * (1 << min(max(failures, 1) - 1, 5)) * jitter
    }

    /// The DNS class of the re-query: IN with the mDNS "unicast response" (QU) bit. Avahi keys
    /// its queriers by (name, class, type), so this is a key of its own, with a fresh querier
    /// that asks the network at once; responders treat it as a question for class IN.
    static let requeryClass: UInt16 = 0x8001

    /// Asks the network for this group's subtype PTR records right now.
    ///
    /// Re-creating the browse alone does not: avahi-daemon keeps the querier of a dropped
    /// browse until its next (backed-off, up to one hour) query and hands it to the new browse
    /// as it is. A query under another key does go out at once; the answers land in the
    /// daemon's cache, and the browse sees the subtype PTR records in them. The query's own
    /// results are ignored; it is dropped after `resyncGracePeriod`.
    func startRequery(now: Instant) {
        endRequery()
        let name = ServiceNaming.subtypeName(serviceType: configuration.serviceType, group: configuration.group) + ".local."
        let handle = DNSServiceHandle(kind: .requery, engine: self)
        var ref: OpaquePointer?
        let status = DNSServiceQueryRecord(
            &ref, 0, 0, name, UInt16(kDNSServiceType_PTR), Self.requeryClass, DNSServiceCallbacks.queryRecord, handle.context
        )
        guard status == DNSServiceStatus.noError, let ref else {
            logger.debug("\(DNSServiceStatus.describe(status, call: "DNSServiceQueryRecord")) for \(name)")
            return
        }
        handle.attach(ref)
        requery = handle
        requeryEndsAt = now + configuration.resyncGracePeriod
    }

    func endRequery() {
        requery?.deallocate()
        requery = nil
        requeryEndsAt = nil
    }

    /// Drops the browse, the resolvers and the address queries (not the registration), and
    /// tells the table so; known peers become stale.
    func tearDownLookups() {
        endRequery()
        browse?.deallocate()
        browse = nil
        for handle in resolvers.values { handle.deallocate() }
        resolvers = [:]
        for handle in addressQueries.values { handle.deallocate() }
        addressQueries = [:]
        resolveRetries = [:]
        queryRetries = [:]
        lookupFailures = [:]
        pendingEffects += table.handlesLost()
    }

    /// Drops every handle; the registration first, so its goodbye goes out at once.
    func tearDownAll() {
        registration?.deallocate()
        registration = nil
        tearDownLookups()
        connected = false
        sweepAt = nil
    }

    /// Asks the network again (see ``ServiceDiscovery/refresh()``): one fresh question; the
    /// browse, resolvers and address queries stay as they are and see the answers.
    func refresh(now: Instant) {
        guard connected else {
            if reconnectAt != nil { reconnectAt = now }
            return
        }
        logger.debug("refresh: asking the network again")
        startRequery(now: now)
        settle()
    }

    /// Advertises a new database list (updates the TXT record in place).
    func updateDatabases(_ databases: [String]) {
        advertisement.databases = databases
        guard let registration, connected else { return }
        guard let txt = try? advertisement.txtRecord().encoded() else { return }
        let status = registration.updateTXT(txt)
        if status != DNSServiceStatus.noError {
            logger.warning("\(DNSServiceStatus.describe(status, call: "DNSServiceUpdateRecord"))")
        }
    }

    /// Reports a change of availability once per transition.
    func reportAvailability(_ available: Bool, reason: String) {
        guard reportedAvailability != available else {
            if !available { logger.trace("avahi-daemon still unreachable: \(reason)") }
            return
        }
        reportedAvailability = available
        sink.setAvailable(available)
        if available {
            logger.info("avahi-daemon reachable: registered and browsing")
            sink.emit(.daemonAvailable)
        } else {
            let message = "no avahi-daemon reachable (\(reason)); mDNS discovery is off, retrying every \(configuration.retryInterval)"
            logger.warning("\(message)")
            sink.emit(.daemonUnavailable(message))
        }
    }
}
