import DocumentModel
import Foundation
import RESTServer
import ShoalNode
import Testing
import TestSupport

/// A web app in a real browser (Debian's headless Chromium, driven over the DevTools
/// protocol) using Shoal cross-origin: the page and its JavaScript module come from a
/// static server on another loopback port, Shoal allows that origin through CORS, and
/// the app logs in with `/_session` (a cookie), writes and reads documents with
/// `fetch`, runs a `_bulk_docs`, and follows `_changes?feed=eventsource` with an
/// `EventSource`, which receives a change the test writes afterwards. Skipped, with
/// the reason printed, when Chromium cannot start.
@Suite struct BrowserAppTests {
    static let page = """
        <!doctype html>
        <html><head><meta charset="utf-8"><title>Shoal browser app</title>
        <script type="module" src="/app.js"></script></head>
        <body>Shoal browser app</body></html>
        """

    /// The app, a plain JavaScript module: `window.app` resolves (to its results as
    /// JSON text) once it has done its requests and its `EventSource` is open;
    /// `window.waitForChange(id)` resolves with the feed's entry for `id`.
    static let module = """
        const params = new URLSearchParams(location.search);
        const server = params.get("server");
        const db = `${server}/${params.get("db")}`;
        const results = { origin: location.origin, steps: [], changes: [] };

        async function call(method, url, body) {
          const init = { method, credentials: "include", headers: { "Accept": "application/json" } };
          if (body !== undefined) {
            init.headers["Content-Type"] = "application/json";
            init.body = JSON.stringify(body);
          }
          const response = await fetch(url, init);
          const json = await response.json();
          results.steps.push(`${method} ${url.slice(server.length)} ${response.status}`);
          if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(json)}`);
          return json;
        }

        async function run() {
          await call("POST", `${server}/_session`, { name: params.get("user"), password: params.get("password") });
          const session = await call("GET", `${server}/_session`);
          results.user = session.userCtx.name;
          results.authenticated = session.info.authenticated;
          const created = await call("PUT", `${db}/from-page`, { type: "note", text: "héllo wörld", big: 1e21 });
          results.read = await call("GET", `${db}/from-page?rev=${created.rev}`);
          results.bulk = await call("POST", `${db}/_bulk_docs`, { docs: [{ _id: "bulk-1", n: 1 }, { _id: "bulk-2", n: 2 }] });
          results.allDocs = (await call("GET", `${db}/_all_docs`)).rows.map(row => row.id);
          const since = (await call("GET", `${db}/`)).update_seq;
          await new Promise((resolve, reject) => {
            const source = new EventSource(`${db}/_changes?feed=eventsource&since=${since}&heartbeat=1000`, { withCredentials: true });
            source.onopen = () => resolve();
            source.onerror = () => { if (source.readyState === EventSource.CLOSED) reject(new Error("EventSource closed")); };
            source.onmessage = event => results.changes.push(JSON.parse(event.data));
          });
          return JSON.stringify(results);
        }

        window.app = run();
        window.waitForChange = id => new Promise((resolve, reject) => {
          const started = Date.now();
          const poll = () => {
            const change = results.changes.find(entry => entry.id === id);
            if (change) return resolve(JSON.stringify(change));
            if (Date.now() - started > 10000) return reject(new Error(`no change for ${id}: ${JSON.stringify(results.changes)}`));
            setTimeout(poll, 50);
          };
          poll();
        });
        """

    @Test func aWebAppUsesShoalCrossOrigin() async throws {
        guard let chromium = try await HeadlessChromium.launchOrSkip("BrowserAppTests") else { return }
        defer { chromium.stop() }
        let site = try StaticHTTPServer(files: [
            "/index.html": .init(contentType: "text/html; charset=utf-8", text: Self.page),
            "/app.js": .init(contentType: "text/javascript; charset=utf-8", text: Self.module),
        ])
        defer { site.close() }
        let node = try await TestNode.start { configuration in
            configuration.passwordIterations = 1000
            configuration.databases[0].users = ["app": ["password": "secret", "admin_channels": ["*"]]]
            configuration.cors = CORSPolicy(origins: [site.origin], loginOrigins: [site.origin])
        }
        defer { Task { await node.stop() } }
        let server = "http://127.0.0.1:\(node.ports.publicPort)"
        #expect(site.origin != server)

        let (results, change) = try await chromium.withPage { page in
            try await page.navigate("\(site.origin)/index.html?server=\(server)&db=db&user=app&password=secret")
            let loaded = try await eventually(timeout: .seconds(10)) {
                try await page.evaluate("typeof window.app") == "object"
            }
            #expect(loaded, "the page's module did not run")
            let results = try JSON.parse(try await page.evaluate("window.app").stringValue ?? "")
            // A change written after the EventSource opened reaches the page.
            let written = try await node.request("PUT", "/db/from-test", json: ["by": "test"], admin: true)
            #expect(written.status == 201, "\(written)")
            let change = try JSON.parse(try await page.evaluate("window.waitForChange('from-test')", timeout: .seconds(15)).stringValue ?? "")
            return (results, change)
        }

        #expect(results["origin"]?.stringValue == site.origin)
        // The session cookie went with the cross-origin requests.
        #expect(results["user"] == "app", "\(results)")
        #expect(results["authenticated"] == "cookie", "\(results)")
        #expect(results["read"]?["text"] == "héllo wörld", "\(results)")
        #expect(results["read"]?["big"] == 1e21, "\(results)")
        #expect(results["bulk"]?.arrayValue?.map { $0["id"] } == ["bulk-1", "bulk-2"], "\(results)")
        #expect(results["allDocs"] == ["bulk-1", "bulk-2", "from-page"], "\(results)")
        #expect(change["id"] == "from-test", "\(change)")
        #expect(change["changes"]?[0]?["rev"]?.stringValue?.hasPrefix("1-") == true, "\(change)")
        // Shoal stored what the page wrote.
        #expect(try await node.request("GET", "/db/bulk-2", admin: true).json["n"] == 2)
    }
}
