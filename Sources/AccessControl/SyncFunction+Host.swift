import DocumentModel
import JSEngine

extension SyncFunction {
    /// The sync function API as host functions; each writes into the call's `SyncCall`.
    static func hostFunctions(logger: (@Sendable (String) -> Void)?) -> [String: HostFunction] {
        @Sendable func call(_ context: (any Sendable)?) -> SyncCall? { context as? SyncCall }
        @Sendable func forbidden(_ reason: String) -> JSError { .thrown(.object(["forbidden": .string(reason)])) }
        return [
            "channel": { arguments, context in
                let names = arguments.flatMap(ChannelSet.strings).filter(ChannelSet.isValidChannelName)
                call(context)?.update { $0.channels.formUnion(names) }
                return nil
            },
            "access": { arguments, context in
                guard arguments.count >= 2 else { return nil }
                let grantees = ChannelSet.strings(arguments[0]).filter { !$0.isEmpty }
                let channels = ChannelSet.strings(arguments[1]).filter(ChannelSet.isValidChannelName)
                guard !channels.isEmpty else { return nil }
                call(context)?.update { access in
                    for grantee in grantees { access.access[grantee, default: []].formUnion(channels) }
                }
                return nil
            },
            "role": { arguments, context in
                guard arguments.count >= 2 else { return nil }
                let users = ChannelSet.strings(arguments[0]).filter { !$0.isEmpty }
                // Sync Gateway's role() takes "role:name" and plain names alike.
                let roles = ChannelSet.strings(arguments[1]).map { $0.hasPrefix("role:") ? String($0.dropFirst(5)) : $0 }
                    .filter { !$0.isEmpty }
                guard !roles.isEmpty else { return nil }
                call(context)?.update { access in
                    for user in users { access.roles[user, default: []].formUnion(roles) }
                }
                return nil
            },
            "expiry": { arguments, context in
                if let value = arguments.first, value != .null { call(context)?.update { $0.expiry = value } }
                return nil
            },
            "requireUser": { arguments, context in
                guard let user = call(context)?.user else { return nil }
                let names = arguments.flatMap(ChannelSet.strings)
                if !names.contains(user.name) { throw forbidden("wrong user") }
                return nil
            },
            "requireRole": { arguments, context in
                guard let user = call(context)?.user else { return nil }
                let roles = arguments.flatMap(ChannelSet.strings).map { $0.hasPrefix("role:") ? String($0.dropFirst(5)) : $0 }
                if user.roles.isDisjoint(with: roles) { throw forbidden("missing role") }
                return nil
            },
            "requireAccess": { arguments, context in
                guard let user = call(context)?.user else { return nil }
                let channels = arguments.flatMap(ChannelSet.strings)
                if !user.channels.contains(ChannelSet.all) && user.channels.isDisjoint(with: channels) {
                    throw forbidden("missing channel access")
                }
                return nil
            },
            "console.log": { arguments, _ in
                logger?(arguments.map { $0.stringValue ?? $0.canonicalString }.joined(separator: " "))
                return nil
            },
        ]
    }
}
