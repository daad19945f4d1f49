import Blocking
import Crypto
import DocumentModel
import DocumentStore
import Foundation

/// Authentication on the public port: HTTP Basic, `SyncGatewaySession` cookies, GUEST.
extension DatabaseSecurity {
    /// The session cookie's name, as Sync Gateway names it.
    public static let sessionCookieName = "SyncGatewaySession"
    /// Default session lifetime (Sync Gateway: 24 hours).
    public static let defaultSessionTTL: TimeInterval = 24 * 3600
    /// Longest accepted `Authorization` header.
    static let maxAuthorizationLength = 4096

    /// Who makes a request, from its `Authorization` and `Cookie` headers. Without
    /// credentials the request is GUEST's, if GUEST is enabled. Throws 401 with
    /// Sync Gateway's reasons (`Invalid login`, `Login required`, `Session expired`),
    /// or 403 `User is disabled` for the right password (or a session) of a disabled
    /// user: logging in again cannot help.
    public func authenticate(authorization: String?, cookie: String?) async throws(PrincipalError) -> Principal {
        if let authorization {
            guard authorization.utf8.count <= Self.maxAuthorizationLength else { throw Self.invalidLogin }
            guard let (name, password) = Self.basicCredentials(authorization) else { throw Self.invalidLogin }
            guard let entry = try await userAccess(named: name), let hash = entry.user.passwordHash,
                  await verify(user: name, password: password, hash: hash)
            else { throw Self.invalidLogin }
            if entry.user.disabled { throw Self.disabledUser }
            return .user(entry.access)
        }
        if let sessionID = cookie.flatMap(Self.sessionID(fromCookie:)) {
            let session: StoredSession?
            do throws(StoreError) {
                session = try await store.session(id: sessionID)
            } catch {
                throw PrincipalError(error)
            }
            guard let session, session.expires > Date() else { throw PrincipalError(status: 401, reason: "Session expired") }
            guard let entry = try await userAccess(named: session.user) else { throw Self.invalidLogin }
            if entry.user.disabled { throw Self.disabledUser }
            return .user(entry.access)
        }
        guard let guest = try await userAccess(named: User.guestName), !guest.user.disabled else {
            throw PrincipalError(status: 401, reason: "Login required")
        }
        return .user(guest.access)
    }

    static let invalidLogin = PrincipalError(status: 401, reason: "Invalid login")
    static let disabledUser = PrincipalError(status: 403, reason: "User is disabled")

    /// Checks a password, remembering a success until the stored hash changes. A check
    /// that is not remembered derives the key (PBKDF2, tens of milliseconds) on the
    /// blocking pool.
    func verify(user name: String, password: String, hash: PasswordHash) async -> Bool {
        let digest = Array(SHA256.hash(data: Array(password.utf8)))
        let encoded = hash.encoded
        if let cached = verified.withLock({ $0[name] }), cached.hash == encoded,
           PasswordHash.constantTimeEqual(cached.digest, digest)
        {
            return true
        }
        guard await BlockingPool.shared.perform({ hash.verify(password) }) else { return false }
        verified.withLock { $0[name] = (digest, encoded) }
        return true
    }

    /// `Basic base64(name:password)` → its parts; nil when malformed.
    static func basicCredentials(_ header: String) -> (String, String)? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
              let data = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
              let text = String(data: data, encoding: .utf8),
              let colon = text.firstIndex(of: ":")
        else { return nil }
        let name = String(text[..<colon])
        return name.isEmpty ? nil : (name, String(text[text.index(after: colon)...]))
    }

    /// The session ID in a `Cookie` header, if it carries `SyncGatewaySession`.
    public static func sessionID(fromCookie header: String) -> String? {
        for pair in header.split(separator: ";") {
            let trimmed = pair.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix(sessionCookieName + "=") {
                let value = String(trimmed.dropFirst(sessionCookieName.count + 1))
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }

    // MARK: Sessions

    /// Logs a user in with name and password (public `POST /{db}/_session`); the
    /// session gets `sessionID` when given (server-level `POST /_session` logs in to
    /// every database under one ID), else a random one.
    public func login(
        name: String, password: String, ttl: TimeInterval = DatabaseSecurity.defaultSessionTTL, sessionID: String? = nil
    ) async throws(PrincipalError) -> StoredSession {
        guard let user = try await user(named: name), let hash = user.passwordHash,
              await verify(user: name, password: password, hash: hash)
        else { throw Self.invalidLogin }
        if user.disabled { throw Self.disabledUser }
        return try await createSession(user: name, ttl: ttl, id: sessionID)
    }

    /// Creates a session for an existing user (admin `POST /{db}/_session`).
    public func createSession(
        user name: String, ttl: TimeInterval = DatabaseSecurity.defaultSessionTTL, id given: String? = nil
    ) async throws(PrincipalError) -> StoredSession {
        guard try await user(named: name) != nil else { throw PrincipalError(status: 404, reason: "missing") }
        let id = given ?? Self.newSessionID()
        let session = StoredSession(id: id, user: name, expires: Date().addingTimeInterval(ttl), ttl: ttl)
        do throws(StoreError) {
            try await store.saveSession(session)
        } catch {
            throw PrincipalError(error)
        }
        return session
    }

    /// A new random session ID (40 hex digits).
    public static func newSessionID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<20).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }

    /// Ends a session (`DELETE /{db}/_session`); false when there was none.
    public func endSession(id: String) async -> Bool {
        (try? await store.deleteSession(id: id)) ?? false
    }
}
