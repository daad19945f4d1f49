import DocumentStore
import Foundation
import Testing
@testable import Replication

/// The revisions a database's connections are receiving: one holder per revision, the
/// others wait for it to be released (or for their patience to run out).
@Suite struct RevisionClaimsTests {
    final class Owner {}

    @Test func aRevisionHasOneHolderUntilItIsReleased() {
        let claims = RevisionClaims()
        let (a, b) = (ObjectIdentifier(Owner.self), ObjectIdentifier(Owner?.self))
        #expect(claims.claim(["d\u{0}1-x", "e\u{0}1-y"], owner: a) == [])
        // b is offered one of a's and one of its own.
        #expect(claims.claim(["f\u{0}1-z", "e\u{0}1-y"], owner: b) == [1])
        #expect(claims.heldElsewhere(["e\u{0}1-y"], owner: b))
        #expect(!claims.heldElsewhere(["e\u{0}1-y"], owner: a), "its own claim is not elsewhere")
        // A holder claiming again keeps it.
        #expect(claims.claim(["e\u{0}1-y"], owner: a) == [])
        claims.release(["e\u{0}1-y"], owner: b)
        #expect(claims.heldElsewhere(["e\u{0}1-y"], owner: b), "only the holder releases")
        claims.release(["e\u{0}1-y"], owner: a)
        #expect(!claims.heldElsewhere(["e\u{0}1-y"], owner: b))
        #expect(claims.claim(["e\u{0}1-y"], owner: b) == [])
        #expect(claims.count == 3)
    }

    @Test func releaseAllEndsEveryClaimOfAnOwnerAndNoOther() {
        let claims = RevisionClaims()
        let (a, b) = (ObjectIdentifier(Owner.self), ObjectIdentifier(Owner?.self))
        _ = claims.claim(["1", "2", "3"], owner: a)
        _ = claims.claim(["4"], owner: b)
        claims.releaseAll(owner: a)
        #expect(claims.count == 1)
        #expect(!claims.heldElsewhere(["1", "2", "3"], owner: b))
        #expect(claims.heldElsewhere(["4"], owner: a))
    }

    @Test func takeMovesAClaimAndItsFormerHolderNoLongerReleasesIt() {
        let claims = RevisionClaims()
        let (a, b) = (ObjectIdentifier(Owner.self), ObjectIdentifier(Owner?.self))
        _ = claims.claim(["k"], owner: a)
        claims.take(["k"], owner: b)
        claims.releaseAll(owner: a)
        #expect(claims.heldElsewhere(["k"], owner: a), "b holds it now")
        claims.release(["k"], owner: b)
        #expect(claims.count == 0)
    }

    @Test func aWaitEndsWhenTheClaimIsReleased() async {
        let claims = RevisionClaims()
        let (a, b) = (ObjectIdentifier(Owner.self), ObjectIdentifier(Owner?.self))
        _ = claims.claim(["k"], owner: a)
        async let released = claims.waitForRelease(["k"], owner: b, patience: .seconds(60))
        try? await Task.sleep(for: .milliseconds(50))
        claims.release(["k"], owner: a)
        #expect(await released, "released before its patience ran out")
    }

    @Test func aWaitGivesUpAfterItsPatience() async {
        let claims = RevisionClaims()
        let (a, b) = (ObjectIdentifier(Owner.self), ObjectIdentifier(Owner?.self))
        _ = claims.claim(["k"], owner: a)
        #expect(await !claims.waitForRelease(["k"], owner: b, patience: .milliseconds(30)))
        #expect(await claims.waitForRelease(["other"], owner: b, patience: .milliseconds(30)), "nothing held: at once")
    }

    @Test func eachStoreHasItsOwnClaims() throws {
        let first = try DocumentStore(configuration: .init(name: "claims-a", location: .memory))
        let second = try DocumentStore(configuration: .init(name: "claims-b", location: .memory))
        #expect(RevisionClaims.of(first) === RevisionClaims.of(first))
        #expect(RevisionClaims.of(first) !== RevisionClaims.of(second))
    }
}
