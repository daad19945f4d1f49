import CAvahi
import Logging

extension DiscoveryEngine {
    /// Connects to avahi-daemon, registers this node and starts browsing. On failure (no
    /// daemon, no bus) everything created is dropped, unavailability is reported once, and
    /// another attempt is scheduled after `retryInterval`.
    func connect(now: Instant) {
        lastConnectAttempt = now
        reconnectAt = nil
        if let failure = createClient() ?? createRegistration() ?? createBrowse() {
            tearDownAll()
            reportAvailability(false, reason: failure)
            reconnectAt = now + configuration.retryInterval
            return
        }
        connected = true
        reportAvailability(true, reason: "")
        if table.hasStaleInstances { sweepAt = now + configuration.resyncGracePeriod }
    }

    /// Opens the one connection to the daemon; returns why it failed, or `nil`.
    private func createClient() -> String? {
        guard let simplePoll else { return "avahi_simple_poll_new failed" }
        var error: Int32 = 0
        guard let newClient = avahi_client_new(
            avahi_simple_poll_get(simplePoll), AvahiClientFlags(rawValue: 0), AvahiCallbacks.client,
            Unmanaged.passUnretained(self).toOpaque(), &error)
        else {
            return AvahiStatus.describe(error, call: "avahi_client_new")
        }
        client = newClient
        return nil
    }

    /// The client's state changed (inside its callback: record, do not act).
    func clientStateChanged(_ state: AvahiClientState, error: Int32) {
        switch state {
        case AVAHI_CLIENT_FAILURE:
            connectionLost = AvahiStatus.describe(error, call: "avahi client")
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // The daemon's host name is changing: its records go, ours with them; the
            // registration is added again once the daemon runs.
            if registration != nil { registrationToRedo = .hostChanged }
        default:
            break  // running, connecting
        }
    }

    /// Creates the registration (an entry group with the service and its group subtype);
    /// returns why it failed, or `nil`.
    func createRegistration() -> String? {
        guard let client else { return "no avahi client" }
        let handle = AvahiHandle(kind: .registration, engine: self)
        guard let group = avahi_entry_group_new(client, AvahiCallbacks.entryGroup, handle.context) else {
            return AvahiStatus.describe(avahi_client_errno(client), call: "avahi_entry_group_new")
        }
        handle.attach(group)
        registration = handle
        return addServices(to: group)
    }

    /// Adds this node's service and subtype to `group` and commits it, under a new name
    /// while the name collides with a local service; returns why it failed, or `nil`.
    private func addServices(to group: OpaquePointer) -> String? {
        let txt: [UInt8]
        do {
            txt = try advertisement.txtRecord().encoded()
        } catch {
            // Cannot happen with the fixed keys and truncated values; never fail over it.
            logger.error("cannot encode TXT record: \(error); registering without TXT")
            txt = [0]
        }
        let type = configuration.serviceType
        let subtype = ServiceNaming.subtypeName(serviceType: type, group: configuration.group)
        for _ in 0..<16 {
            var status = AvahiCallbacks.withStringList(txt) { list in
                avahi_entry_group_add_service_strlst(
                    group, Avahi.anyInterface, Avahi.anyProtocol, AVAHI_PUBLISH_NO_COOKIE, registeredName, type, nil, nil,
                    UInt16(truncatingIfNeeded: configuration.port), list)
            }
            if status == Avahi.collision {
                renameRegistration()
                continue
            }
            if status == AvahiStatus.ok {
                status = avahi_entry_group_add_service_subtype(
                    group, Avahi.anyInterface, Avahi.anyProtocol, AvahiPublishFlags(rawValue: 0), registeredName, type, nil, subtype)
            }
            if status == AvahiStatus.ok { status = avahi_entry_group_commit(group) }
            guard status == AvahiStatus.ok else { return AvahiStatus.describe(status, call: "registering \(registeredName)") }
            logger.debug("registering", metadata: ["name": "\(registeredName)", "type": "\(subtype)", "port": "\(configuration.port)"])
            return nil
        }
        return "registering: no free name after 16 alternatives of \(registeredName)"
    }

    /// The next name Avahi proposes after a conflict (`node` → `node #2` → `node #3`…).
    private func renameRegistration() {
        guard let next = avahi_alternative_service_name(registeredName) else { return }
        let old = registeredName
        registeredName = String(cString: next)
        avahi_free(next)
        logger.warning("service name \(String(reflecting: old)) is taken; trying \(String(reflecting: registeredName))")
    }

    /// Adds the registration again after a conflict or a host name change (see
    /// ``registrationToRedo``).
    func redoRegistration(_ redo: RegistrationRedo) {
        guard let group = registration?.object else { return }
        if redo == .rename { renameRegistration() }
        avahi_entry_group_reset(group)
        if let failure = addServices(to: group) {
            connectionLost = failure
        }
    }

    /// Creates the browse of this group's subtype; returns why it failed, or `nil`.
    func createBrowse() -> String? {
        guard let client else { return "no avahi client" }
        let handle = AvahiHandle(kind: .browse, engine: self)
        let type = ServiceNaming.subtypeName(serviceType: configuration.serviceType, group: configuration.group)
        guard let browser = avahi_service_browser_new(
            client, Avahi.anyInterface, Avahi.ipv4, type, "local", AvahiLookupFlags(rawValue: 0), AvahiCallbacks.browse,
            handle.context)
        else {
            return AvahiStatus.describe(avahi_client_errno(client), call: "avahi_service_browser_new")
        }
        handle.attach(browser)
        browse = handle
        browseOpenedAt = clock.now
        browseResting = false
        logger.debug("browsing", metadata: ["type": "\(type)"])
        return nil
    }

    /// Starts resolving an instance: SRV, TXT and the host's IPv4 address in one resolver (one
    /// D-Bus object; an address query is only needed when a resolver answers without one).
    /// A resolver that cannot be created is retried with a backoff.
    func startResolve(instance: String, domain: String) {
        let handle = AvahiHandle(kind: .resolve(instance: instance), engine: self)
        guard let client, let resolver = avahi_service_resolver_new(
            client, Avahi.anyInterface, Avahi.ipv4, instance, configuration.serviceType, domain, Avahi.ipv4,
            AvahiLookupFlags(rawValue: 0), AvahiCallbacks.resolve, handle.context)
        else {
            let error = client.map { avahi_client_errno($0) } ?? AvahiStatus.failure
            logger.debug("\(AvahiStatus.describe(error, call: "avahi_service_resolver_new")) for \(instance)")
            resolveRetries[instance] = clock.now + retryDelay(after: "resolve \(instance)")
            pendingEffects += table.resolveFailed(instance: instance)
            return
        }
        handle.attach(resolver)
        resolvers[instance]?.deallocate()
        resolvers[instance] = handle
    }

    /// Starts querying the A records of a host target.
    func startAddressQuery(host: String) {
        let key = PeerTable.hostKey(host)
        let handle = AvahiHandle(kind: .addressQuery(host: host), engine: self)
        guard let client, let browser = avahi_record_browser_new(
            client, Avahi.anyInterface, Avahi.ipv4, host, 1 /* IN */, 1 /* A */, AvahiLookupFlags(rawValue: 0),
            AvahiCallbacks.record, handle.context)
        else {
            let error = client.map { avahi_client_errno($0) } ?? AvahiStatus.failure
            logger.debug("\(AvahiStatus.describe(error, call: "avahi_record_browser_new")) for \(host)")
            queryRetries[host] = clock.now + retryDelay(after: "query \(key)")
            pendingEffects += table.addressQueryFailed(host: host)
            return
        }
        handle.attach(browser)
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
        guard let client else { return }
        let name = ServiceNaming.subtypeName(serviceType: configuration.serviceType, group: configuration.group) + ".local"
        let handle = AvahiHandle(kind: .requery, engine: self)
        guard let browser = avahi_record_browser_new(
            client, Avahi.anyInterface, Avahi.anyProtocol, name, Self.requeryClass, 12 /* PTR */, AvahiLookupFlags(rawValue: 0),
            AvahiCallbacks.record, handle.context)
        else {
            logger.debug("\(AvahiStatus.describe(avahi_client_errno(client), call: "avahi_record_browser_new")) for \(name)")
            return
        }
        handle.attach(browser)
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
        browseOpenedAt = nil
        browseResting = false
        browseUnconfirmed = false
        for handle in resolvers.values { handle.deallocate() }
        resolvers = [:]
        for handle in addressQueries.values { handle.deallocate() }
        addressQueries = [:]
        answeredLookups = []
        resolveRetries = [:]
        queryRetries = [:]
        lookupFailures = [:]
        pendingEffects += table.handlesLost()
    }

    /// Drops every handle, the registration first (its goodbye goes out at once), then the
    /// connection to the daemon.
    func tearDownAll() {
        registration?.deallocate()
        registration = nil
        registrationToRedo = nil
        tearDownLookups()
        if let client { avahi_client_free(client) }
        client = nil
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
        if browseResting { reopenBrowse() }
        reopenAnsweredLookups()
        startRequery(now: now)
        settle()
    }

    /// When the open browse is due to rest: ``DiscoveryConfiguration/browseRestsAfter`` after
    /// it was opened (reopened: after it read out the daemon's cache).
    var browseRestsAt: Instant? {
        guard let rest = configuration.browseRestsAfter, let at = browseOpenedAt, !browseUnconfirmed else { return nil }
        return at + rest
    }

    /// Closes the browse until the next refresh (see ``DiscoveryConfiguration/browseRestsAfter``);
    /// the instances, resolvers and address queries stay.
    func restBrowse() {
        browse?.deallocate()
        browse = nil
        browseOpenedAt = nil
        browseResting = true
        logger.debug("browse resting after \(configuration.browseRestsAfter ?? .zero); a refresh opens it again")
    }

    /// Opens again the resolvers and address queries closed after their answer (lookups rest
    /// with the browse): a peer dialed in vain may have moved.
    private func reopenAnsweredLookups() {
        for (instance, handle) in resolvers.sorted(by: { $0.key < $1.key }) where !handle.isAlive {
            startResolve(instance: instance, domain: table.instances[instance]?.domain ?? "local")
        }
        for handle in addressQueries.values where !handle.isAlive {
            if case .addressQuery(let host) = handle.kind { startAddressQuery(host: host) }
        }
    }

    /// Opens the rested browse again; the instances it does not list before the daemon's cache
    /// is read out are forgotten (``PeerTable/browseConfirmed()``).
    private func reopenBrowse() {
        if let failure = createBrowse() {
            connectionLost = failure
            return
        }
        table.browseReopened()
        browseUnconfirmed = true
    }

    /// Advertises a new database list (updates the TXT record in place).
    func updateDatabases(_ databases: [String]) {
        advertisement.databases = databases
        guard let group = registration?.object, connected else { return }
        guard let txt = try? advertisement.txtRecord().encoded() else { return }
        let status = AvahiCallbacks.withStringList(txt) { list in
            avahi_entry_group_update_service_txt_strlst(
                group, Avahi.anyInterface, Avahi.anyProtocol, AVAHI_PUBLISH_NO_COOKIE, registeredName, configuration.serviceType,
                nil, list)
        }
        if status != AvahiStatus.ok {
            logger.warning("\(AvahiStatus.describe(status, call: "avahi_entry_group_update_service_txt_strlst"))")
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
