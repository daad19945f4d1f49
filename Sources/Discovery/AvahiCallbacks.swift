import CAvahi

/// The C callbacks handed to Avahi's client library. Each one turns its arguments into
/// Swift values and forwards them to the ``DiscoveryEngine`` that owns the handle in
/// `userdata` (the client's callback gets the engine itself).
///
/// They run on the engine thread, inside `avahi_simple_poll_iterate` (the client's and an
/// entry group's also inside their `avahi_*_new`); C strings are only valid during the call,
/// so they are copied here.
enum AvahiCallbacks {
    static let client: AvahiClientCallback = { client, state, userdata in
        guard let userdata else { return }
        let engine = Unmanaged<DiscoveryEngine>.fromOpaque(userdata).takeUnretainedValue()
        engine.clientStateChanged(state, error: client.map { avahi_client_errno($0) } ?? AvahiStatus.failure)
    }

    static let entryGroup: AvahiEntryGroupCallback = { group, state, userdata in
        guard let handle = AvahiHandle.from(userdata) else { return }
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            handle.engine.registrationEstablished(handle: handle)
        case AVAHI_ENTRY_GROUP_COLLISION:
            handle.engine.registrationCollided(handle: handle)
        case AVAHI_ENTRY_GROUP_FAILURE:
            handle.engine.handleFailed(handle, error: errorCode(group.flatMap(avahi_entry_group_get_client)))
        default:
            break  // uncommitted, registering
        }
    }

    static let browse: AvahiServiceBrowserCallback = { browser, interface, _, event, name, _, domain, _, userdata in
        guard let handle = AvahiHandle.from(userdata) else { return }
        switch event {
        case AVAHI_BROWSER_NEW, AVAHI_BROWSER_REMOVE:
            guard let name else { return }
            handle.engine.browseReply(
                added: event == AVAHI_BROWSER_NEW,
                instance: String(cString: name),
                interface: UInt32(bitPattern: interface),
                domain: domain.map { String(cString: $0) } ?? "local"
            )
        case AVAHI_BROWSER_FAILURE:
            handle.engine.handleFailed(handle, error: errorCode(browser.flatMap(avahi_service_browser_get_client)))
        case AVAHI_BROWSER_CACHE_EXHAUSTED:
            handle.engine.browseCacheExhausted(handle: handle)
        default:
            break  // all for now
        }
    }

    static let resolve: AvahiServiceResolverCallback = {
        resolver, _, _, event, _, _, _, hostName, address, port, txt, _, userdata in
        guard let handle = AvahiHandle.from(userdata), case .resolve(let instance) = handle.kind else { return }
        guard event == AVAHI_RESOLVER_FOUND, let hostName else {
            handle.engine.handleFailed(handle, error: errorCode(resolver.flatMap(avahi_service_resolver_get_client)))
            return
        }
        handle.engine.resolveReply(
            instance: instance,
            hostTarget: String(cString: hostName),
            port: Int(port),
            txt: TXTRecord(decoding: wireBytes(of: txt)),
            address: address.flatMap(ipv4String)
        )
    }

    /// An IPv4 address as a dotted quad (nil for any other protocol).
    static func ipv4String(_ address: UnsafePointer<AvahiAddress>) -> String? {
        guard address.pointee.proto == Avahi.ipv4 else { return nil }
        // `address` is in network byte order: its bytes in memory are the quad's, in order.
        return withUnsafeBytes(of: address.pointee.data.ipv4.address) { AvahiStatus.ipv4String($0) }
    }

    static let record: AvahiRecordBrowserCallback = {
        browser, _, _, event, _, _, type, rdata, size, _, userdata in
        guard let handle = AvahiHandle.from(userdata) else { return }
        switch event {
        case AVAHI_BROWSER_NEW, AVAHI_BROWSER_REMOVE:
            guard case .addressQuery(let host) = handle.kind, type == 1 /* A */, let rdata else { return }
            let bytes = UnsafeRawBufferPointer(start: rdata, count: size)
            guard let address = AvahiStatus.ipv4String(bytes) else { return }
            handle.engine.addressReply(added: event == AVAHI_BROWSER_NEW, host: host, address: address)
        case AVAHI_BROWSER_FAILURE:
            handle.engine.handleFailed(handle, error: errorCode(browser.flatMap(avahi_record_browser_get_client)))
        default:
            break
        }
    }

    /// The client's last error, or `AvahiStatus.failure` without a client.
    private static func errorCode(_ client: OpaquePointer?) -> Int32 {
        guard let client else { return AvahiStatus.failure }
        let code = avahi_client_errno(client)
        return code == AvahiStatus.ok ? AvahiStatus.failure : code
    }

    /// A TXT string list in DNS wire format (length-prefixed strings, in order).
    static func wireBytes(of list: UnsafeMutablePointer<AvahiStringList>?) -> [UInt8] {
        guard let list else { return [] }
        var bytes = [UInt8](repeating: 0, count: 65_536)  // a TXT record's largest size
        let used = bytes.withUnsafeMutableBytes { avahi_string_list_serialize(list, $0.baseAddress, $0.count) }
        return Array(bytes.prefix(used))
    }

    /// Runs `body` with `wire` (a TXT record in DNS wire format) as Avahi's string list;
    /// returns Avahi's parse error without calling `body` if `wire` is malformed.
    static func withStringList(_ wire: [UInt8], _ body: (UnsafeMutablePointer<AvahiStringList>?) -> Int32) -> Int32 {
        var list: UnsafeMutablePointer<AvahiStringList>?
        let parsed = wire.withUnsafeBytes { avahi_string_list_parse($0.baseAddress, $0.count, &list) }
        guard parsed == AvahiStatus.ok else { return parsed }
        defer { avahi_string_list_free(list) }
        return body(list)
    }
}
