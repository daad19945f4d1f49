import AccessControl
import DocumentModel
import DocumentStore
import Testing

/// The sync function API as Sync Gateway defines it: routing, grants, requirements and
/// rejections, with the errors Sync Gateway users know.
@Suite struct SyncFunctionTests {
    func doc(_ object: [String: JSON]) -> JSON { .object(object) }

    @Test func defaultFunctionRoutesToChannelsProperty() throws {
        let sync = try SyncFunction()
        let access = try sync.run(doc: ["_id": "a", "channels": ["x", "y"]], oldDoc: nil, user: nil)
        #expect(access.channels == ["x", "y"])
        #expect(try sync.run(doc: ["_id": "b", "channels": "z"], oldDoc: nil, user: nil).channels == ["z"])
        #expect(try sync.run(doc: ["_id": "c"], oldDoc: nil, user: nil).channels.isEmpty)
    }

    @Test func grantsRolesAndExpiry() throws {
        let sync = try SyncFunction(source: """
            function(doc, oldDoc) {
              channel("list." + doc._id, ["moderators"]);
              access(doc.owner, "list." + doc._id);
              access(["a", "b"], ["c1", "c2"]);
              access("role:moderator", "list." + doc._id);
              role(doc.owner, "role:editor");
              expiry(3600);
            }
            """)
        let access = try sync.run(doc: ["_id": "l1", "owner": "user1"], oldDoc: nil, user: nil)
        #expect(access.channels == ["list.l1", "moderators"])
        #expect(access.access["user1"] == ["list.l1"])
        #expect(access.access["a"] == ["c1", "c2"])
        #expect(access.access["role:moderator"] == ["list.l1"])
        #expect(access.roles["user1"] == ["editor"])
        #expect(access.expiry == .int(3600))
    }

    @Test func requireChecksPassForAdminAndFailWithSyncGatewayReasons() throws {
        let sync = try SyncFunction(source: """
            function(doc, oldDoc) {
              if (doc.kind == "user") requireUser(doc.owner);
              if (doc.kind == "role") requireRole(["moderator", "admin"]);
              if (doc.kind == "access") requireAccess("secret");
              if (doc.kind == "either") { try { requireRole("moderator"); } catch (e) { requireUser(doc.owner); } }
            }
            """)
        let user1 = SyncUser(name: "user1", roles: ["editor"], channels: ["!", "public"])
        let cases: [(String, String)] = [("user", "wrong user"), ("role", "missing role"), ("access", "missing channel access")]
        for (kind, reason) in cases {
            let document: JSON = ["_id": "d", "kind": .string(kind), "owner": "someone-else"]
            // An administrator (or the mesh) passes every require…
            _ = try sync.run(doc: document, oldDoc: nil, user: nil)
            #expect(throws: StoreError(.forbidden, error: "forbidden", reason: reason)) {
                _ = try sync.run(doc: document, oldDoc: nil, user: user1)
            }
        }
        _ = try sync.run(doc: ["_id": "d", "kind": "user", "owner": "user1"], oldDoc: nil, user: user1)
        _ = try sync.run(doc: ["_id": "d", "kind": "either", "owner": "user1"], oldDoc: nil, user: user1)
        let moderator = SyncUser(name: "mod", roles: ["moderator"], channels: [])
        _ = try sync.run(doc: ["_id": "d", "kind": "either", "owner": "user1"], oldDoc: nil, user: moderator)
        let star = SyncUser(name: "s", channels: ["*"])
        _ = try sync.run(doc: ["_id": "d", "kind": "access"], oldDoc: nil, user: star)
    }

    @Test func thrownObjectsBecomeForbiddenOrUnauthorized() throws {
        let sync = try SyncFunction(source: """
            function(doc, oldDoc) {
              if (!doc.type) throw({forbidden: "type is not provided."});
              if (doc.type == "secret") throw({unauthorized: "log in first"});
              if (doc.type == "bug") { var x = null; x.boom(); }
              if (oldDoc && oldDoc.type != doc.type) throw({forbidden: "type cannot change"});
            }
            """)
        #expect(throws: StoreError(.forbidden, error: "forbidden", reason: "type is not provided.")) {
            _ = try sync.run(doc: ["_id": "a"], oldDoc: nil, user: nil)
        }
        #expect(throws: StoreError(.unauthorized, error: "Unauthorized", reason: "log in first")) {
            _ = try sync.run(doc: ["_id": "a", "type": "secret"], oldDoc: nil, user: nil)
        }
        do {
            _ = try sync.run(doc: ["_id": "a", "type": "bug"], oldDoc: nil, user: nil)
            Issue.record("expected an exception")
        } catch {
            #expect(error.httpStatus == 500)
            #expect(error.reason.hasPrefix("Exception in JS sync function"))
        }
        #expect(throws: StoreError(.forbidden, error: "forbidden", reason: "type cannot change")) {
            _ = try sync.run(doc: ["_id": "a", "type": "task"], oldDoc: ["_id": "a", "type": "list"], user: nil)
        }
        _ = try sync.run(doc: ["_id": "a", "type": "task"], oldDoc: ["_id": "a", "type": "task"], user: nil)
    }

    @Test func badJavaScriptFailsWithTheLine() {
        do {
            _ = try SyncFunction(source: "function(doc, oldDoc) {\n  channel(doc.x;\n}")
            Issue.record("expected a compile error")
        } catch {
            guard case .compile(_, let line) = error else { Issue.record("\(error)"); return }
            #expect(line == 2)
        }
    }

    @Test func sourceThatIsNotAFunctionFailsToCompile() {
        for source in ["42", "'channel'", "{}"] {
            #expect(throws: (any Error).self, "\(source)") { _ = try SyncFunction(source: source) }
        }
    }

    @Test func outputsOfACallThatThrowsOrIsCaughtFollowJavaScript() throws {
        // channel() before a throw: rejected, nothing kept; a caught requireUser failure
        // goes on and the outputs recorded around it count.
        let sync = try SyncFunction(source: """
            function(doc, oldDoc) {
              channel("before");
              try { requireUser("someone-else"); } catch (e) { channel("caught-" + e.forbidden); }
              access(["ann", ["bob"]], [["x"], "y", 3, null]);
              role("ann", "role:editor");
              if (doc.fail) throw({forbidden: "no"});
            }
            """)
        let access = try sync.run(doc: ["_id": "a"], oldDoc: nil, user: SyncUser(name: "ann"))
        #expect(access.channels == ["before", "caught-wrong user"])
        #expect(access.access == ["ann": ["x", "y"], "bob": ["x", "y"]])
        #expect(access.roles == ["ann": ["editor"]])
        #expect(throws: StoreError(.forbidden, error: "forbidden", reason: "no")) {
            _ = try sync.run(doc: ["_id": "a", "fail": true], oldDoc: nil, user: nil)
        }
        // The next call starts with nothing recorded.
        #expect(try sync.run(doc: ["_id": "b"], oldDoc: nil, user: nil).channels == ["before"])
    }

    @Test func batchesSplitOverEnginesGiveTheSameOutcomes() async throws {
        let source = """
            function(doc, oldDoc) {
              if (doc.n % 7 == 0) throw({forbidden: "seven " + doc.n});
              requireUser(doc.owner);
              channel("c" + (doc.n % 5));
              if (oldDoc) access(doc.owner, "old" + oldDoc.n);
            }
            """
        var batch: [(doc: JSON, oldDoc: JSON?)] = []
        for n in 0..<301 {
            let owner: JSON = n % 11 == 0 ? "bob" : "ann"
            let doc: JSON = ["_id": .string("d\(n)"), "n": .int(Int64(n)), "owner": owner]
            let oldDoc: JSON? = n % 3 == 0 ? ["_id": .string("d\(n)"), "n": .int(Int64(n - 1))] : nil
            batch.append((doc, oldDoc))
        }
        let one = try await SyncFunction(source: source, engines: 1).run(batch: batch, user: SyncUser(name: "ann"))
        let two = try await SyncFunction(source: source, engines: 2).run(batch: batch, user: SyncUser(name: "ann"))
        #expect(one.count == 301)
        #expect(one.map { try? $0.get() } == two.map { try? $0.get() })
        #expect(one.map { $0.error?.reason } == two.map { $0.error?.reason })
        let reasons = Set(one.compactMap { $0.error?.reason })
        let expected = Set((0...42).map { "seven \($0 * 7)" } + ["wrong user"])
        #expect(reasons == expected)
    }

    @Test func runawayFunctionWedgesWithServiceUnavailable() throws {
        // A loop far longer than the budget (but finite, so that the abandoned engine
        // thread does not spin for the rest of the test run).
        let sync = try SyncFunction(
            source: "function(doc) { if (doc.loop) { var end = Date.now() + 1500; while (Date.now() < end) {} } }",
            timeout: .milliseconds(200))
        _ = try sync.run(doc: ["_id": "ok"], oldDoc: nil, user: nil)
        #expect(throws: StoreError.self) { _ = try sync.run(doc: ["_id": "bad", "loop": true], oldDoc: nil, user: nil) }
        #expect(sync.isWedged)
        do {
            _ = try sync.run(doc: ["_id": "next"], oldDoc: nil, user: nil)
            Issue.record("a wedged function must refuse")
        } catch {
            #expect(error.httpStatus == 503)
        }
    }
}

extension Result {
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
