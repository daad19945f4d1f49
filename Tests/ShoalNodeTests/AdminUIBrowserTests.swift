import DocumentModel
import Foundation
import ShoalNode
import Testing
import TestSupport

/// The admin UI in a real browser (Debian's headless Chromium over the DevTools
/// protocol), on a mesh of three nodes in this process: the mesh graph shows the three
/// nodes and their links and a link going down when a node stops; a conflicted
/// document shows its two leaves and the winner in its revision tree and is resolved
/// with a chosen leaf, after which its tree labels the resolution with A's resolver; a
/// sync function deployed from the editor rejects a document and its resync's progress
/// shows completed;
/// a user and a role are created; a replication is stopped and started again. Screenshots of every page (1280×800) go to
/// `.build/test-output/AdminUIBrowserTests/`. Skipped, with the reason printed, when
/// Chromium cannot start.
@Suite struct AdminUIBrowserTests {
    static let ownerOnly = """
        function(doc, oldDoc) {
          if (!doc.owner) throw({forbidden: "documents need an owner"});
          channel("owner-" + doc.owner);
        }
        """

    /// Where the screenshots go (beside the build, out of git).
    static var outputDirectory: URL {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/test-output/AdminUIBrowserTests", isDirectory: true)
    }

    static func start(peers: [TestNode] = []) async throws -> TestNode {
        try await TestNode.start(conflicts: ConflictPolicy.none) { configuration in
            configuration.heartbeat = .milliseconds(500)
            configuration.nemesis = NemesisSettings(enabled: true)
            configuration.passwordIterations = 1000
            configuration.peers = peers.map { "ws://127.0.0.1:\($0.ports.publicPort)/db" }
            configuration.databases[0].users = ["ann": ["password": "pw", "admin_channels": ["notes"]]]
        }
    }

    @Test func theAdminUIShowsAndSteersAMeshOfThree() async throws {
        guard let chromium = try await HeadlessChromium.launchOrSkip("AdminUIBrowserTests") else { return }
        defer { chromium.stop() }
        let c = try await Self.start()
        let b = try await Self.start(peers: [c])
        let a = try await Self.start(peers: [b, c])
        defer { Task { for node in [a, b] { await node.stop() } } }
        let cID = try #require(try await c.request("GET", "/_mesh", admin: true).json["node_id"]?.stringValue)
        let aID = try #require(try await a.request("GET", "/_mesh", admin: true).json["node_id"]?.stringValue)
        for index in 0..<25 {
            try await a.request("PUT", "/db/note-\(index)", json: ["type": "note", "text": .string("Note \(index)")], admin: true)
                .expectStatus(201)
        }
        // A conflict that stays (policy none): two branches from one parent.
        let hexA = String(repeating: "a", count: 32)
        let hexB = String(repeating: "b", count: 32)
        let hexC = String(repeating: "c", count: 32)
        try await a.request("POST", "/db/_bulk_docs", json: ["new_edits": false, "docs": [
            ["_id": "conflicted", "_rev": .string("2-\(hexB)"), "_revisions": ["start": 2, "ids": [.string(hexB), .string(hexA)]], "side": "left"],
            ["_id": "conflicted", "_rev": .string("2-\(hexC)"), "_revisions": ["start": 2, "ids": [.string(hexC), .string(hexA)]], "side": "right"],
        ]], admin: true).expectStatus(201)
        try FileManager.default.createDirectory(at: Self.outputDirectory, withIntermediateDirectories: true)
        let admin = "http://127.0.0.1:\(a.ports.adminPort)"

        try await chromium.withPage { page in
            try await page.setViewport(width: 1280, height: 800)
            func shot(_ name: String) async throws {
                try await Task.sleep(for: .milliseconds(300))
                try await page.screenshot().write(to: Self.outputDirectory.appendingPathComponent("\(name).png"))
            }
            func expectPage(_ condition: String, _ what: String, timeout: Duration = .seconds(20)) async throws {
                let held = try await page.waitFor(condition, timeout: timeout)
                if !held {
                    let shown = try? await page.evaluate("location.href + ' ' + document.readyState + '\\n' + document.querySelector('#view')?.innerText + '\\n' + performance.getEntriesByType('resource').map(e => e.name + ' ' + Math.round(e.duration)).join('\\n')")
                    let console = page.connection.console.withLock { $0 }.suffix(10).joined(separator: "\n")
                    Issue.record("\(what): \(condition)\n\(shown?.stringValue ?? "?")\n\(console)")
                }
            }

            // Mesh: three nodes, A's two links up.
            try await page.navigate("\(admin)/_admin/")
            try await expectPage("document.querySelectorAll('.mesh-node').length === 3", "three nodes in the graph")
            try await expectPage("document.querySelectorAll('.mesh-link.connected').length === 2", "two links up")
            try await shot("1-mesh")
            try await page.evaluate("document.querySelector('.mesh-node.peer').dispatchEvent(new MouseEvent('click', {bubbles: true})); true")
            try await expectPage("document.querySelector('#mesh-details').textContent.includes('Last heard')", "peer details")
            // Stop C: its link goes down.
            await c.stop()
            try await expectPage(
                "[...document.querySelectorAll('.mesh-link')].some(l => l.dataset.to === '\(cID)' && l.dataset.state !== 'connected')",
                "C's link goes down")
            try await Task.sleep(for: .seconds(2))
            try await shot("2-mesh-node-stopped")
            // An injected fault shows above the graph until it is lifted.
            let bID = try #require(try await b.request("GET", "/_mesh", admin: true).json["node_id"]?.stringValue)
            try await a.request("POST", "/_nemesis", json: ["fault": "stall", "peers": [.string(bID)], "duration": 60], admin: true)
                .expectStatus(201)
            try await expectPage("document.querySelector('#mesh-nemesis li[data-fault=stall]') !== null", "the injected stall")
            try await shot("2b-mesh-nemesis")
            try await a.request("DELETE", "/_nemesis", admin: true).expectStatus(200)
            try await expectPage("document.querySelector('#mesh-nemesis') === null", "the stall lifted")

            // Documents: the list, then the conflicted document's tree.
            try await page.navigate("\(admin)/_admin/db/db")
            try await expectPage("document.querySelectorAll('#doc-list tr').length === 21", "a page of 20 documents")
            try await shot("3-documents")
            try await page.navigate("\(admin)/_admin/db/db/doc/conflicted")
            try await expectPage("document.querySelectorAll('#rev-tree .rev.leaf').length === 2", "two leaves")
            try await expectPage("document.querySelector('#rev-tree .rev.winner')?.dataset.rev === '2-\(hexC)'", "the winner")
            #expect(try await page.evaluate("document.querySelectorAll('#rev-tree .rev').length") == 3)
            try await shot("4-document-conflicted")

            // Conflicts: keep the losing leaf.
            try await page.navigate("\(admin)/_admin/db/db/conflicts")
            try await expectPage("document.querySelector('[data-doc=\"conflicted\"]')", "the conflict is listed")
            try await shot("5-conflicts")
            try await page.evaluate("document.querySelector('[data-keep=\"2-\(hexB)\"]').click(); true")
            try await expectPage("document.querySelector('#no-conflicts')", "no conflict left")
            let resolved = try await a.request("GET", "/db/conflicted?conflicts=true", admin: true).json
            #expect(resolved["side"] == "left" && resolved["_conflicts"] == nil, "\(resolved)")
            // The tree now shows the resolution and that A's resolver wrote it.
            try await page.navigate("\(admin)/_admin/db/db/doc/conflicted")
            try await expectPage("document.querySelectorAll('#rev-tree .rev').length === 4", "the resolution in the tree")
            try await expectPage(
                "[...document.querySelectorAll('#rev-tree .rev[data-origin=\"resolver\"]')].some(n => n.dataset.originNode === '\(aID)' && n.querySelector('.rev-origin')?.textContent.includes('resolver'))",
                "the resolution is labelled with A's resolver")
            #expect(try await page.evaluate("document.querySelector('#origin-legend')?.textContent.includes('resolver')") == true)
            try await shot("5b-document-resolved")
            // On B, the same resolution arrived from A.
            try await page.navigate("http://127.0.0.1:\(b.ports.adminPort)/_admin/db/db/doc/conflicted")
            try await expectPage(
                "[...document.querySelectorAll('#rev-tree .rev.deleted[data-origin=\"peer\"]')].some(n => n.dataset.originNode === '\(aID)')",
                "on B the resolution is labelled as received from A")
            try await shot("5c-document-resolved-on-b")

            // Sync function: deploy, test, and a document rejected by it.
            try await page.navigate("\(admin)/_admin/db/db/sync")
            try await expectPage("document.querySelector('#sync-editor')?.value.includes('function')", "the editor")
            try await page.evaluate("document.querySelector('#sync-editor').value = \(JSON.string(Self.ownerOnly).canonicalString); document.querySelector('#sync-deploy').click(); true")
            try await expectPage("document.querySelector('#sync-result').textContent.includes('Deployed')", "deployed")
            // The resync the deploy ran, as the event stream reported it.
            let resync = try await a.request("GET", "/db/_resync", admin: true).json
            #expect(resync["status"] == "completed" && resync["trigger"] == "config", "\(resync)")
            let counts = "\(resync["docs_processed"]?.intValue ?? -1) of \(resync["docs_total"]?.intValue ?? -1) documents processed"
            try await expectPage(
                "document.querySelector('#resync-counts')?.dataset.status === 'completed' && document.querySelector('#resync-counts').textContent.includes('\(counts)')",
                "the resync's progress reached completed")
            try await page.evaluate("document.querySelector('#test-doc').value = '{\"title\": \"no owner\"}'; document.querySelector('#test-run').click(); true")
            try await expectPage("document.querySelector('#test-result').textContent.includes('documents need an owner')", "test rejects")
            try await shot("6-sync-function")
            try await page.navigate("\(admin)/_admin/db/db/doc/rejected?new=1")
            try await expectPage("document.querySelector('#doc-json')", "the new document's editor")
            try await page.evaluate("document.querySelector('#doc-json').value = '{\"_id\": \"rejected\", \"title\": \"x\"}'; document.querySelector('#doc-save').click(); true")
            try await expectPage("document.querySelector('#doc-message').textContent.includes('documents need an owner')", "save rejected")
            try await shot("7-document-rejected")
            try await a.request("GET", "/db/rejected", admin: true).expectStatus(404)

            // Users: create one.
            try await page.navigate("\(admin)/_admin/db/db/users")
            try await expectPage("document.querySelector('[data-user=\"ann\"]')", "the configured user")
            try await page.evaluate("""
                document.querySelector('#user-name').value = 'carol';
                document.querySelector('#user-password').value = 'secret';
                document.querySelector('#user-channels').value = 'owner-carol, notes';
                document.querySelector('#user-save').click(); true
                """)
            try await expectPage("document.querySelector('[data-user=\"carol\"]')", "carol is listed")
            try await page.evaluate("document.querySelector('#role-name').value = 'editors'; document.querySelector('#role-channels').value = 'drafts'; document.querySelector('#role-name').parentElement.querySelector('button').click(); true")
            try await expectPage("document.querySelector('[data-role=\"editors\"]')", "the role is listed")
            try await shot("8-users")
            let carol = try await a.request("GET", "/db/_user/carol", admin: true).json
            #expect(carol["admin_channels"] == ["notes", "owner-carol"], "\(carol)")

            // Replications: a configured one is stopped and started from the page.
            try await a.request("PUT", "/db/_replication/from-b", json: [
                "remote": .string("ws://127.0.0.1:\(b.ports.publicPort)/db"), "direction": "pull", "continuous": true,
            ], admin: true).expectStatus(201)
            try await page.navigate("\(admin)/_admin/db/db/replications")
            try await expectPage("document.querySelectorAll('[data-replication]').length >= 3", "the replication and the mesh links")
            try await page.evaluate("document.querySelector('[data-replication=\"from-b\"] button').click(); true")
            try await expectPage("document.querySelector('[data-replication=\"from-b\"]').textContent.includes('Start')", "stopped")
            #expect(try await a.request("GET", "/db/_replicationStatus/from-b", admin: true).json["status"] == "stopped")
            try await page.evaluate("document.querySelector('[data-replication=\"from-b\"] button').click(); true")
            try await expectPage("document.querySelector('[data-replication=\"from-b\"]').textContent.includes('Stop')", "started again")
            try await shot("9-replications")
            try await page.navigate("\(admin)/_admin/db/db/metrics")
            try await expectPage("document.querySelectorAll('#metric-charts svg polyline').length >= 2", "charts drawn", timeout: .seconds(30))
            try await expectPage("document.querySelectorAll('#changes-feed li').length > 0", "the changes feed")
            try await shot("10-metrics")
        }
    }

    /// The page follows a node that goes away and comes back: a banner says it is away,
    /// then that it is back and restarted, and the live status continues.
    @Test func thePageShowsThatTheNodeWasAwayAndRestarted() async throws {
        guard let chromium = try await HeadlessChromium.launchOrSkip("AdminUIBrowserTests") else { return }
        defer { chromium.stop() }
        let directory = TemporaryDirectory(prefix: "shoal-admin-restart")
        defer { directory.remove() }
        let first = try await TestNode.start(persistent: true, directory: directory)
        let ports = first.ports
        try FileManager.default.createDirectory(at: Self.outputDirectory, withIntermediateDirectories: true)
        let restarted = try await chromium.withPage { page in
            try await page.setViewport(width: 1280, height: 800)
            try await page.navigate("http://127.0.0.1:\(ports.adminPort)/_admin/")
            #expect(try await page.waitFor("document.querySelector('#node-pill').classList.contains('up')"))
            await first.stop(keepingData: true)
            #expect(try await page.waitFor("document.querySelector('#banner.away') && !document.querySelector('#banner').hidden"))
            try await page.screenshot().write(to: Self.outputDirectory.appendingPathComponent("11-node-away.png"))
            let again = try await TestNode.start(persistent: true, directory: directory) { configuration in
                configuration.publicAddress = ListenAddress(host: "127.0.0.1", port: ports.publicPort)
                configuration.adminAddress = ListenAddress(host: "127.0.0.1", port: ports.adminPort)
            }
            #expect(try await page.waitFor("document.querySelector('#banner.back')?.textContent.includes('restarted')", timeout: .seconds(20)))
            try await page.screenshot().write(to: Self.outputDirectory.appendingPathComponent("12-node-back.png"))
            return again
        }
        await restarted.stop()
    }
}
