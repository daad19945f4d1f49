import Logging

extension DiscoveryEngine {
    // MARK: Callback entry points (inside the poll iteration: record, do not act)

    /// The registration is on the network under `registeredName`.
    func registrationEstablished(handle: AvahiHandle) {
        guard handle === registration else { return }
        let wanted = ServiceNaming.instanceName(forNodeID: configuration.nodeID)
        if registeredName != wanted {
            logger.warning("registered as \(String(reflecting: registeredName)) instead of \(String(reflecting: wanted)) (name conflict)")
        } else {
            logger.debug("registered", metadata: ["name": "\(registeredName)"])
        }
        pendingEffects += table.registered(as: registeredName)
    }

    /// Another host on the network has the name: register under the next one.
    func registrationCollided(handle: AvahiHandle) {
        guard handle === registration else { return }
        registrationToRedo = .rename
    }

    func browseReply(added: Bool, instance: String, interface: UInt32, domain: String) {
        logger.trace("browse \(added ? "add" : "remove") \(instance) on interface \(interface)")
        pendingEffects += added
            ? table.browseAdded(instance: instance, interface: interface, domain: domain)
            : table.browseRemoved(instance: instance, interface: interface)
    }

    /// The browse has listed everything the daemon had cached.
    func browseCacheExhausted(handle: AvahiHandle) {
        guard handle === browse, browseUnconfirmed else { return }
        browseUnconfirmed = false
        browseOpenedAt = clock.now
        pendingEffects += table.browseConfirmed()
    }

    func resolveReply(instance: String, hostTarget: String, port: Int, txt: TXTRecord, address: String?) {
        logger.trace("resolved \(instance): \(hostTarget) \(address ?? "-"):\(port)")
        lookupFailures["resolve \(instance)"] = nil
        pendingEffects += table.resolved(instance: instance, hostTarget: hostTarget, port: port, txt: txt, address: address)
        if configuration.browseRestsAfter != nil, let handle = resolvers[instance] { answeredLookups.append(handle) }
    }

    func addressReply(added: Bool, host: String, address: String) {
        logger.trace("address \(added ? "add" : "remove") \(host) \(address)")
        if added { lookupFailures["query \(PeerTable.hostKey(host))"] = nil }
        pendingEffects += added
            ? table.addressAdded(host: host, address: address)
            : table.addressRemoved(host: host, address: address)
        if added, configuration.browseRestsAfter != nil, let handle = addressQueries[PeerTable.hostKey(host)] {
            answeredLookups.append(handle)
        }
    }

    /// A handle reported an error in its callback. Dealt with in ``settle()``.
    func handleFailed(_ handle: AvahiHandle, error: Int32) {
        failedHandles.append((handle, error))
    }

    // MARK: After dispatch

    /// Deals with failed handles, a lost connection and pending effects until nothing is left.
    func settle() {
        while true {
            if let reason = connectionLost {
                connectionLost = nil
                connectionWasLost(reason: reason)
            } else if let redo = registrationToRedo {
                registrationToRedo = nil
                redoRegistration(redo)
            } else if !answeredLookups.isEmpty {
                // Resting lookups: closed once answered (their queriers stop asking), kept in
                // `resolvers`/`addressQueries` so that a refresh opens them again.
                let answered = answeredLookups
                answeredLookups = []
                for handle in answered { handle.deallocate() }
            } else if !failedHandles.isEmpty {
                let failures = failedHandles
                failedHandles = []
                for (handle, error) in failures { handleDidFail(handle, error: error) }
            } else if !pendingEffects.isEmpty {
                let effects = pendingEffects
                pendingEffects = []
                for effect in effects { apply(effect) }
            } else {
                return
            }
        }
    }

    private func handleDidFail(_ handle: AvahiHandle, error: Int32) {
        guard handle.isAlive else { return }  // already torn down with the rest
        let now = clock.now
        switch handle.kind {
        case .registration, .browse:
            connectionLost = AvahiStatus.describe(error, call: "\(handle.kind)")
        case .resolve(let instance):
            logger.debug("\(AvahiStatus.describe(error, call: "resolve")) for \(instance); retrying")
            handle.deallocate()
            if resolvers[instance] === handle { resolvers[instance] = nil }
            resolveRetries[instance] = now + retryDelay(after: "resolve \(instance)")
            pendingEffects += table.resolveFailed(instance: instance)
        case .addressQuery(let host):
            logger.debug("\(AvahiStatus.describe(error, call: "address query")) for \(host); retrying")
            handle.deallocate()
            let key = PeerTable.hostKey(host)
            if addressQueries[key] === handle { addressQueries[key] = nil }
            queryRetries[host] = now + retryDelay(after: "query \(PeerTable.hostKey(host))")
            pendingEffects += table.addressQueryFailed(host: host)
        case .requery:
            logger.debug("\(AvahiStatus.describe(error, call: "re-query"))")
            endRequery()
        }
    }

    /// The registration or the browse died: the daemon (or the bus) went away, or refused us.
    /// Everything is dropped; a new connection is tried at once unless the last attempt was
    /// less than `retryInterval` ago.
    private func connectionWasLost(reason: String) {
        logger.info("lost the avahi-daemon connection: \(reason)")
        tearDownAll()
        let now = clock.now
        if let last = lastConnectAttempt, last.duration(to: now) < configuration.retryInterval {
            reportAvailability(false, reason: reason)
            reconnectAt = last + configuration.retryInterval
        } else {
            connect(now: now)
        }
    }

    private func apply(_ effect: PeerTable.Effect) {
        switch effect {
        case .emit(let event):
            log(event)
            sink.emit(event)
        case .startResolve(let instance, let domain):
            startResolve(instance: instance, domain: domain)
        case .stopResolve(let instance):
            resolvers.removeValue(forKey: instance)?.deallocate()
            resolveRetries[instance] = nil
            lookupFailures["resolve \(instance)"] = nil
        case .startAddressQuery(let host):
            startAddressQuery(host: host)
        case .stopAddressQuery(let host):
            addressQueries.removeValue(forKey: PeerTable.hostKey(host))?.deallocate()
            queryRetries[host] = nil
            lookupFailures["query \(PeerTable.hostKey(host))"] = nil
        }
    }

    private func log(_ event: DiscoveryEvent) {
        switch event {
        case .added(let peer):
            logger.info("peer added", metadata: ["peer": "\(peer.nodeID)", "address": "\(peer.host):\(peer.port)"])
        case .updated(let peer):
            logger.debug("peer updated", metadata: ["peer": "\(peer.nodeID)", "address": "\(peer.host):\(peer.port)"])
        case .browsed(let nodeID):
            logger.debug("peer browsed", metadata: ["peer": "\(nodeID)"])
        case .removed(let nodeID):
            logger.info("peer removed", metadata: ["peer": "\(nodeID)"])
        case .daemonAvailable, .daemonUnavailable:
            break
        }
    }

    // MARK: Timers

    /// Reconnects, sweeps stale peers and retries failed resolvers/queries that are due.
    func runTimers(now: Instant) {
        if !connected, let at = reconnectAt, at <= now {
            connect(now: now)
        }
        if let at = requeryEndsAt, at <= now {
            endRequery()
        }
        if let at = browseRestsAt, at <= now {
            restBrowse()
        }
        if let at = sweepAt, at <= now {
            sweepAt = nil
            pendingEffects += table.sweepStale()
        }
        for (instance, at) in resolveRetries where at <= now {
            resolveRetries[instance] = nil
            pendingEffects += table.retryResolve(instance)
        }
        for (host, at) in queryRetries where at <= now {
            queryRetries[host] = nil
            pendingEffects += table.retryAddressQuery(host)
        }
        settle()
    }
}
