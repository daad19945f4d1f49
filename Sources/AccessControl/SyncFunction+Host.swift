import DocumentModel
import DocumentStore
import JSEngine

extension SyncFunction {
    /// Wraps the user's function so that `channel`, `access`, `role` and `expiry` are
    /// recorded inside JavaScript and returned together when the function returns (one
    /// crossing per revision instead of one per call), then replayed by `record`. The
    /// prefix is on the first line, so the user's line numbers are unchanged; a source
    /// that is not a function still fails to compile.
    static func recording(_ source: String) -> String {
        let prefix = "function () { var __log = null; "
            + "function __record(name, args) { __log.push([name, Array.prototype.slice.call(args)]); } "
            + "function channel() { __record('channel', arguments); } "
            + "function access() { __record('access', arguments); } "
            + "function role() { __record('role', arguments); } "
            + "function expiry() { __record('expiry', arguments); } "
            + "var __sync = ("
        let suffix = "\n); if (typeof __sync !== 'function') throw new TypeError('the sync function is not a function'); "
            + "return function (doc, oldDoc) { __log = []; __sync(doc, oldDoc); var log = __log; __log = null; return log; }; }()"
        return prefix + source + suffix
    }

    /// What one recorded call of `channel`, `access`, `role` or `expiry` does to a
    /// revision's access (Sync Gateway's rules: strings or nested arrays of strings,
    /// invalid channel names ignored, `role:` prefixes optional).
    static func record(_ name: String, _ arguments: [JSON], into access: inout RevisionAccess) {
        switch name {
        case "channel":
            access.channels.formUnion(arguments.flatMap(ChannelSet.strings).filter(ChannelSet.isValidChannelName))
        case "access":
            guard arguments.count >= 2 else { return }
            let grantees = ChannelSet.strings(arguments[0]).filter { !$0.isEmpty }
            let channels = ChannelSet.strings(arguments[1]).filter(ChannelSet.isValidChannelName)
            guard !channels.isEmpty else { return }
            for grantee in grantees { access.access[grantee, default: []].formUnion(channels) }
        case "role":
            guard arguments.count >= 2 else { return }
            let users = ChannelSet.strings(arguments[0]).filter { !$0.isEmpty }
            let roles = ChannelSet.strings(arguments[1]).map(Self.roleName).filter { !$0.isEmpty }
            guard !roles.isEmpty else { return }
            for user in users { access.roles[user, default: []].formUnion(roles) }
        case "expiry":
            if let value = arguments.first, value != .null { access.expiry = value }
        default:
            return
        }
    }

    static func roleName(_ text: String) -> String {
        text.hasPrefix("role:") ? String(text.dropFirst(5)) : text
    }

    /// The checks that must stop the function where they are called, as host functions.
    static func hostFunctions(logger: (@Sendable (String) -> Void)?) -> [String: HostFunction] {
        @Sendable func user(_ context: (any Sendable)?) -> SyncUser? { (context as? SyncCall)?.user }
        @Sendable func forbidden(_ reason: String) -> JSError { .thrown(.object(["forbidden": .string(reason)])) }
        return [
            "requireUser": { arguments, context in
                guard let user = user(context) else { return nil }
                if !arguments.flatMap(ChannelSet.strings).contains(user.name) { throw forbidden("wrong user") }
                return nil
            },
            "requireRole": { arguments, context in
                guard let user = user(context) else { return nil }
                if user.roles.isDisjoint(with: arguments.flatMap(ChannelSet.strings).map(Self.roleName)) {
                    throw forbidden("missing role")
                }
                return nil
            },
            "requireAccess": { arguments, context in
                guard let user = user(context) else { return nil }
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
