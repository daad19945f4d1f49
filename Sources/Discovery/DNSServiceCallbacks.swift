import CDNSSD

/// The C callbacks handed to the dns_sd API. Each one turns its arguments into Swift values and
/// forwards them to the ``DiscoveryEngine`` that owns the handle in `context`.
///
/// They run on the engine thread, inside `DNSServiceProcessResult`; C strings are only valid
/// during the call, so they are copied here.
enum DNSServiceCallbacks {
    static let register: DNSServiceRegisterReply = { _, _, errorCode, name, _, _, context in
        guard let handle = DNSServiceHandle.from(context) else { return }
        handle.engine.registrationReply(
            handle: handle,
            error: errorCode,
            name: name.map { String(cString: $0) }
        )
    }

    static let browse: DNSServiceBrowseReply = { _, flags, interface, errorCode, name, _, domain, context in
        guard let handle = DNSServiceHandle.from(context) else { return }
        guard errorCode == DNSServiceStatus.noError, let name else {
            handle.engine.handleFailed(handle, error: errorCode)
            return
        }
        handle.engine.browseReply(
            added: flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0,
            instance: String(cString: name),
            interface: interface,
            domain: domain.map { String(cString: $0) } ?? "local."
        )
    }

    static let resolve: DNSServiceResolveReply = { _, _, _, errorCode, _, hostTarget, port, txtLength, txt, context in
        guard let handle = DNSServiceHandle.from(context), case .resolve(let instance) = handle.kind else { return }
        guard errorCode == DNSServiceStatus.noError, let hostTarget else {
            handle.engine.handleFailed(handle, error: errorCode)
            return
        }
        let bytes = txt.map { Array(UnsafeBufferPointer(start: $0, count: Int(txtLength))) } ?? []
        handle.engine.resolveReply(
            instance: instance,
            hostTarget: String(cString: hostTarget),
            port: Int(UInt16(bigEndian: port)),
            txt: TXTRecord(decoding: bytes)
        )
    }

    static let queryRecord: DNSServiceQueryRecordReply = { _, flags, _, errorCode, _, type, _, length, rdata, _, context in
        guard let handle = DNSServiceHandle.from(context) else { return }
        guard errorCode == DNSServiceStatus.noError else {
            handle.engine.handleFailed(handle, error: errorCode)
            return
        }
        guard case .addressQuery(let host) = handle.kind else { return }
        guard type == UInt16(kDNSServiceType_A), let rdata else { return }
        let bytes = UnsafeRawBufferPointer(start: rdata, count: Int(length))
        guard let address = DNSServiceStatus.ipv4String(bytes) else { return }
        handle.engine.addressReply(
            added: flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0,
            host: host,
            address: address
        )
    }
}
