import AccessControl
import Foundation
import Testing
import TestSupport

/// The mesh secret's proofs: bound to the node, the database, the time, a nonce and
/// the TLS certificate the dialer saw; answered by the accepting node; good once.
@Suite struct MeshSecretTests {
    let secret = MeshSecret("correct horse battery")
    let certificate: [UInt8] = Array(repeating: 7, count: 32)
    let relay: [UInt8] = Array(repeating: 9, count: 32)

    @Test func dialProofIsBoundToEverythingItNames() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let proof = secret.dialProof(nodeID: "n1", database: "db", binding: certificate, now: now)
        #expect(secret.verifyDial(proof, nodeID: "n1", database: "db", binding: certificate, now: now))
        #expect(!secret.verifyDial(proof, nodeID: "n2", database: "db", binding: certificate, now: now))
        #expect(!secret.verifyDial(proof, nodeID: "n1", database: "other", binding: certificate, now: now))
        #expect(!secret.verifyDial(proof, nodeID: "n1", database: "db", binding: nil, now: now), "a TLS proof is not a plain one")
        #expect(!secret.verifyDial(proof, nodeID: "n1", database: "db", binding: relay, now: now),
                "a proof relayed through a man in the middle (another certificate) fails")
        #expect(!MeshSecret("another secret").verifyDial(proof, nodeID: "n1", database: "db", binding: certificate, now: now))
        #expect(!secret.verifyDial(proof, nodeID: "n1", database: "db", binding: certificate, now: now + 301), "stale")
        #expect(secret.verifyDial(proof, nodeID: "n1", database: "db", binding: certificate, now: now - 299))
        let plain = secret.dialProof(nodeID: "n1", database: "db", binding: nil, now: now)
        #expect(secret.verifyDial(plain, nodeID: "n1", database: "db", binding: nil, now: now))
    }

    @Test func malformedProofsFail() {
        for proof in [nil, "", "123", "123.abc", "x.y.z", "1800000000..abcd", String(repeating: "1", count: 400)] {
            #expect(!secret.verifyDial(proof, nodeID: "n1", database: "db", binding: nil), "\(proof ?? "nil")")
        }
        let proof = secret.dialProof(nodeID: "n1", database: "db", binding: nil)
        let parts = proof.split(separator: ".")
        let tampered = "\(parts[0]).\(MeshSecret.makeNonce()).\(parts[2])"
        #expect(!secret.verifyDial(tampered, nodeID: "n1", database: "db", binding: nil), "the nonce is covered")
    }

    @Test func acceptProofAnswersOneDialProof() {
        let dial = secret.dialProof(nodeID: "n1", database: "db", binding: certificate)
        let answer = secret.acceptProof(dialProof: dial, nodeID: "n2", database: "db", binding: certificate)
        #expect(secret.verifyAccept(answer, dialProof: dial, nodeID: "n2", database: "db", binding: certificate))
        #expect(!secret.verifyAccept(answer, dialProof: dial, nodeID: "n3", database: "db", binding: certificate))
        #expect(!secret.verifyAccept(answer, dialProof: dial, nodeID: "n2", database: "db", binding: relay),
                "an answer relayed through another certificate fails")
        let otherDial = secret.dialProof(nodeID: "n1", database: "db", binding: certificate)
        #expect(!secret.verifyAccept(answer, dialProof: otherDial, nodeID: "n2", database: "db", binding: certificate),
                "an old answer does not answer a new dial")
        #expect(!MeshSecret("guess").verifyAccept(
            MeshSecret("guess").acceptProof(dialProof: dial, nodeID: "n2", database: "db", binding: certificate),
            dialProof: dial, nodeID: "n2", database: "db", binding: nil))
        #expect(!secret.verifyAccept(nil, dialProof: dial, nodeID: "n2", database: "db", binding: certificate))
    }

    /// A member whose wall clock jumped is told so, not that it lacks the secret.
    @Test func authenticProofFromAFarClockIsRefusedForTheClock() throws {
        let now = Date()
        let ahead = secret.dialProof(nodeID: "n1", database: "db", binding: certificate, now: now + 3 * 3600)
        #expect(!secret.verifyDial(ahead, nodeID: "n1", database: "db", binding: certificate, now: now))
        let skew = secret.dialSkew(ahead, nodeID: "n1", database: "db", binding: certificate, now: now)
        #expect(skew.map { abs($0 - 3 * 3600) < 2 } == true, "\(String(describing: skew))")
        #expect(secret.dialSkew(ahead, nodeID: "n1", database: "db", binding: certificate, now: now + 3 * 3600) == nil, "in time")
        #expect(MeshSecret("another secret").dialSkew(ahead, nodeID: "n1", database: "db", binding: certificate, now: now) == nil)
        #expect(secret.dialSkew(ahead, nodeID: "n2", database: "db", binding: certificate, now: now) == nil)

        let test = try TestStore()
        let security = DatabaseSecurity(store: test.store, syncFunction: nil, meshSecret: secret, meshRequiresTLS: true)
        let behind = secret.dialProof(nodeID: "n1", database: test.store.name, binding: certificate, now: Date() - 2 * 86400)
        let refusal = security.meshRefusal(nodeID: "n1", proof: behind, binding: certificate)
        #expect(refusal?.contains("clocks of this node and the dialing node differ by -1728") == true, "\(refusal ?? "nil")")
        let forged = MeshSecret("wrong secret").dialProof(nodeID: "n1", database: test.store.name, binding: certificate, now: Date() - 86400)
        #expect(security.meshRefusal(nodeID: "n1", proof: forged, binding: certificate) == DatabaseSecurity.meshSecretMissing)
    }

    @Test func databaseSecurityAcceptsEachProofOnceAndCanRequireTLS() throws {
        let test = try TestStore()
        let security = DatabaseSecurity(store: test.store, syncFunction: nil, meshSecret: secret, meshRequiresTLS: true)
        let name = test.store.name
        let proof = secret.dialProof(nodeID: "n1", database: name, binding: certificate)
        #expect(security.meshRefusal(nodeID: "n1", proof: proof, binding: certificate, consume: false) == nil)
        #expect(security.meshRefusal(nodeID: "n1", proof: proof, binding: certificate) == nil)
        #expect(security.meshRefusal(nodeID: "n1", proof: proof, binding: certificate) == "This mesh proof was already used")
        let plain = secret.dialProof(nodeID: "n1", database: name, binding: nil)
        #expect(security.meshRefusal(nodeID: "n1", proof: plain, binding: nil)?.contains("must use TLS") == true)
        #expect(security.meshRefusal(nodeID: "n1", proof: "nonsense", binding: certificate) == DatabaseSecurity.meshSecretMissing)
        #expect(security.meshRefusal(nodeID: "n1", proof: "nonsense", binding: nil) == DatabaseSecurity.meshSecretMissing)

        let open = DatabaseSecurity(store: test.store, syncFunction: nil, meshSecret: nil, meshRequiresTLS: true)
        #expect(open.meshRefusal(nodeID: "n1", proof: nil, binding: nil) == nil, "no secret: development mesh, no TLS rule")
        #expect(open.meshAnswer(nodeID: "n2", dialProof: proof, binding: certificate) == nil)
    }

    @Test func ledgerForgetsOnlyExpiredProofs() {
        let ledger = MeshProofLedger(lifetime: 10)
        let start = Date(timeIntervalSince1970: 1_000)
        #expect(ledger.firstUse("p0", now: start))
        for index in 1...300 { #expect(ledger.firstUse("p\(index)", now: start + 20)) }
        #expect(!ledger.firstUse("p300", now: start + 21))
        #expect(ledger.firstUse("p0", now: start + 21), "pruned after its lifetime (the clock check rejects it by then)")
    }
}
