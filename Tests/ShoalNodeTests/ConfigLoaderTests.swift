import DocumentModel
import Foundation
import RESTServer
@testable import ShoalNode
import Testing
import TestSupport

@Suite struct ConfigLoaderTests {
    @Test func seedConfigsLoadUnchanged() throws {
        let todo = try ConfigLoader.load(text: SeedConfigs.todo)
        var todoDatabase = NodeConfiguration.Database(name: "todo", inMemory: true)
        todoDatabase.users = ["GUEST": ["disabled": false, "admin_channels": ["*"]]]
        #expect(todo.configuration.databases == [todoDatabase])
        #expect(todo.configuration.publicAddress == ListenAddress(host: "0.0.0.0", port: 4984))
        #expect(todo.configuration.logKeys == ["HTTP", "Auth"])
        #expect(todo.warnings.isEmpty)

        let janeJoe = try ConfigLoader.load(text: SeedConfigs.janeJoe)
        #expect(janeJoe.configuration.databases.map(\.name) == ["demo"])
        #expect(janeJoe.configuration.databases[0].inMemory)
        #expect(janeJoe.configuration.logKeys == ["*"])
        for key in ["bucket", "unsupported"] {
            #expect(janeJoe.warnings.contains { $0.contains("\"\(key)\"") }, "no warning for \(key)")
        }
        // Seed 004's `"CORS": {"Origin": ["*"]}`: keys without regard to case, as Sync Gateway reads them.
        #expect(janeJoe.configuration.cors == CORSPolicy(origins: ["*"]))
        for key in ["users", "sync", "CORS"] {
            #expect(!janeJoe.warnings.contains { $0.contains("\"\(key)\"") }, "\(key) is used")
        }
        let demo = janeJoe.configuration.databases[0]
        #expect(demo.users.keys.sorted() == ["GUEST", "jane", "joe"])
        #expect(demo.users["GUEST"]?["disabled"] == true)
        #expect(demo.sync?.contains("access(docOwner,[publicChannel,privateChannel]);") == true)
    }

    @Test func corsAsSyncGatewayConfiguresIt() throws {
        let loaded = try ConfigLoader.load(text: """
            {"CORS": {"origin": ["https://app.example", "*"], "loginorigin": ["https://app.example"],
                      "headers": ["Content-Type", "Authorization"], "maxAge": 600}}
            """)
        #expect(loaded.warnings.isEmpty)
        #expect(loaded.configuration.cors == CORSPolicy(
            origins: ["https://app.example", "*"], loginOrigins: ["https://app.example"],
            headers: ["Content-Type", "Authorization"], maxAge: 600))
        #expect(try ConfigLoader.load(text: #"{"CORS": {"origin": ["*"], "admin": true}}"#).configuration.cors?.onAdminPort == true)
        // No CORS unless configured.
        #expect(try ConfigLoader.load(text: "{}").configuration.cors == nil)
        for bad in [#"{"CORS": ["*"]}"#, #"{"CORS": {"origin": "*"}}"#, #"{"CORS": {"maxAge": "long"}}"#, #"{"CORS": {"origins": []}}"#] {
            #expect(throws: ConfigLoader.ConfigError.self, "\(bad)") { try ConfigLoader.load(text: bad) }
        }
    }

    /// The packaged config (packaging/shoal.json) explains itself with `//` keys: they
    /// load without warnings, and the config is what the package promises (admin on
    /// loopback, GUEST without access).
    @Test func commentKeysAndThePackagedConfig() throws {
        let commented = try ConfigLoader.load(text: #"{"//": "a", "databases": {"db": {"// users": "b", "users": {}}}}"#)
        #expect(commented.warnings.isEmpty, "\(commented.warnings)")
        let unknown = try ConfigLoader.load(text: #"{"databases": {"db": {"nonsense": 1}}}"#)
        #expect(!unknown.warnings.isEmpty)
        let packaged = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../packaging/shoal.json").standardized.path
        let loaded = try ConfigLoader.load(path: packaged)
        #expect(loaded.warnings.isEmpty, "\(loaded.warnings)")
        #expect(loaded.configuration.adminAddress.host == "127.0.0.1")
        #expect(loaded.configuration.publicAddress.port == 4984)
        let database = try #require(loaded.configuration.databases.first)
        #expect(database.name == "db")
        #expect(database.users.isEmpty)
    }

    @Test func backquotedStringsBecomeJSONStrings() throws {
        let converted = try ConfigLoader.convertBackquotes("{\"sync\": `function(doc) {\n  if (doc.a == \"x\") throw({forbidden: \"no\"});\n}`, \"b\": \"`kept`\"}")
        let json = try JSON.parse(converted)
        #expect(json["sync"] == "function(doc) {\n  if (doc.a == \"x\") throw({forbidden: \"no\"});\n}")
        #expect(json["b"] == "`kept`")
        #expect(throws: ConfigLoader.ConfigError.self) { try ConfigLoader.load(text: "{\"sync\": `never closed}") }
    }

    @Test func httpIdleTimeout() throws {
        #expect(NodeConfiguration().httpIdleTimeout == .seconds(30))
        #expect(try ConfigLoader.load(text: #"{"httpIdleTimeout": 2.5}"#).configuration.httpIdleTimeout == .milliseconds(2500))
        #expect(try ConfigLoader.load(text: #"{"httpIdleTimeout": 0}"#).configuration.httpIdleTimeout == nil)
        #expect(throws: ConfigLoader.ConfigError.self) { try ConfigLoader.load(text: #"{"httpIdleTimeout": "soon"}"#) }
    }

    @Test func shoalKeysAndDefaults() throws {
        let loaded = try ConfigLoader.load(text: """
            {"interface": "127.0.0.1:7000", "adminInterface": ":7001", "data": "/tmp/x", "maxRequestBytes": 1000,
             "databases": {"a": {"revs_limit": 50, "max_document_size": 999, "durability": "normal"}, "b": {}}}
            """)
        let config = loaded.configuration
        #expect(loaded.warnings.isEmpty)
        #expect(loaded.namesDatabases)
        #expect(config.publicAddress == ListenAddress(host: "127.0.0.1", port: 7000))
        #expect(config.adminAddress == ListenAddress(host: "127.0.0.1", port: 7001))
        #expect(config.dataDirectory == "/tmp/x")
        #expect(config.maxRequestBytes == 1000)
        // A database from a config file has exactly the users the file names: none here.
        var a = NodeConfiguration.Database(name: "a", revsLimit: 50, maxDocumentSize: 999, durability: .normal)
        var b = NodeConfiguration.Database(name: "b")
        a.users = [:]
        b.users = [:]
        #expect(config.databases == [a, b])
        // A database made in code (embedded defaults, --db) lets GUEST read everything.
        #expect(NodeConfiguration.Database(name: "c").users == ["GUEST": NodeConfiguration.Database.openGuest])
        #expect(try ConfigLoader.load(text: "{}").namesDatabases == false)
    }

    @Test(arguments: [
        "not json",
        "[]",
        #"{"interface": 4984}"#,
        #"{"interface": "nohost"}"#,
        #"{"interface": ":99999"}"#,
        #"{"log": "HTTP"}"#,
        #"{"databases": []}"#,
        #"{"databases": {"Bad Name": {}}}"#,
        #"{"databases": {"_x": {}}}"#,
        #"{"databases": {"a": {"revs_limit": 0}}}"#,
        #"{"databases": {"a": {"durability": "sometimes"}}}"#,
        #"{"databases": {"a": {"server": 5}}}"#,
        #"{"databases": {"a": []}}"#,
        #"{"databases": {"a": {"users": []}}}"#,
        #"{"databases": {"a": {"users": {"bob": {}}}}}"#,
        #"{"databases": {"a": {"users": {"bob": {"password": "x", "admin_channels": "a"}}}}}"#,
        #"{"databases": {"a": {"users": {"bob": {"password": "x", "shoe_size": 9}}}}}"#,
        #"{"databases": {"a": {"roles": {"r": {"admin_channels": [1]}}}}}"#,
        #"{"databases": {"a": {"sync": 5}}}"#,
        #"{"databases": {"a": {"mesh": {"secret": "short"}}}}"#,
    ])
    func badConfigsFailWithAReason(text: String) {
        do {
            _ = try ConfigLoader.load(text: text)
            Issue.record("accepted \(text)")
        } catch let error as ConfigLoader.ConfigError {
            #expect(!error.message.isEmpty)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func tlsKeys() throws {
        let config = try ConfigLoader.load(text: """
            {"SSLCert": "/etc/shoal/cert.pem", "SSLKey": "/etc/shoal/key.pem",
             "databases": {"a": {"mesh": {"secret": "12345678"}}, "b": {"mesh": {"secret": "12345678", "tls": false}},
                           "c": {"mesh": {"tls": true}}}}
            """).configuration
        #expect(config.sslCertificatePath == "/etc/shoal/cert.pem")
        #expect(config.sslKeyPath == "/etc/shoal/key.pem")
        let tls = Dictionary(uniqueKeysWithValues: config.databases.map { ($0.name, $0.meshTLS) })
        #expect(tls == ["a": true, "b": false, "c": false], "TLS is on with a secret unless turned off; never without one")
        #expect(throws: ConfigLoader.ConfigError.self) { try ConfigLoader.load(text: #"{"SSLCert": "/a.pem"}"#) }
        #expect(throws: ConfigLoader.ConfigError.self) { try ConfigLoader.load(text: #"{"SSLCert": 3, "SSLKey": "/k"}"#) }
        #expect(throws: ConfigLoader.ConfigError.self) {
            try ConfigLoader.load(text: #"{"databases": {"a": {"mesh": {"tls": "yes"}}}}"#)
        }
    }

    @Test func unusableCertificateStopsTheStart() throws {
        let directory = TemporaryDirectory(prefix: "shoal-badcert")
        defer { directory.remove() }
        let path = directory.path + "/cert.pem"
        _ = FileManager.default.createFile(atPath: path, contents: Data("not a certificate".utf8))
        var configuration = NodeConfiguration()
        configuration.dataDirectory = directory.path
        configuration.databases = [NodeConfiguration.Database(name: "db", inMemory: true)]
        configuration.sslCertificatePath = path
        configuration.sslKeyPath = path
        #expect {
            _ = try ShoalNode(configuration: configuration)
        } throws: { error in
            (error as? ConfigLoader.ConfigError)?.message.contains("cannot load the certificate") == true
        }
    }

    @Test func listenAddresses() {
        #expect(ListenAddress(interface: ":4984") == ListenAddress(host: "0.0.0.0", port: 4984))
        #expect(ListenAddress(interface: "127.0.0.1:4985") == ListenAddress(host: "127.0.0.1", port: 4985))
        #expect(ListenAddress(interface: "[::1]:80") == ListenAddress(host: "::1", port: 80))
        #expect(ListenAddress(interface: "[::1]:80")?.description == "[::1]:80")
        #expect(ListenAddress(interface: "host") == nil)
        #expect(ListenAddress(interface: "h:-1") == nil)
    }

    @Test func databaseNames() {
        #expect(NodeConfiguration.isValidDatabaseName("todo"))
        #expect(NodeConfiguration.isValidDatabaseName("a1_$()+-"))
        #expect(!NodeConfiguration.isValidDatabaseName("Todo"))
        #expect(!NodeConfiguration.isValidDatabaseName("1db"))
        #expect(!NodeConfiguration.isValidDatabaseName(""))
        #expect(!NodeConfiguration.isValidDatabaseName("a/b"))
    }
}
