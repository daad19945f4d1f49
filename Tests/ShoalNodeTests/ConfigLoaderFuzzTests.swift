import DocumentModel
import Foundation
@testable import ShoalNode
import Testing
import TestSupport

/// Seeded mutation fuzzing of `ConfigLoader.load(text:)`: valid configs, corrupted at
/// the byte level and at the JSON level, must load or fail with a readable reason;
/// never crash or hang.
@Suite(.ownThread) struct ConfigLoaderFuzzTests {
    /// Valid configs that together use (almost) every key the loader reads.
    static let seeds: [String] = [
        #"""
        {
          "interface": "0.0.0.0:4984", "adminInterface": ":4985", "data": "/tmp/shoal-fuzz", "log": ["HTTP", "Auth"],
          "maxRequestBytes": 1048576, "heartbeat": 2.5, "httpIdleTimeout": 30, "discovery": false,
          "peers": ["ws://10.0.0.2:4984/todo", "https://peer.example/todo"],
          "CORS": {"origin": ["https://app.example", "*"], "loginorigin": ["https://app.example"],
                   "headers": ["Content-Type", "Authorization"], "maxAge": 600, "admin": true},
          "databases": {
            "todo": {
              "server": "walrus:", "revs_limit": 50, "max_document_size": 999999, "durability": "normal",
              "mesh": {"group": "lab", "max_peers": 4, "secret": "a long shared secret", "tls": false, "enabled": true},
              "users": {
                "GUEST": {"disabled": false, "admin_channels": ["!"]},
                "user1": {"password": "pass", "admin_channels": ["user1"], "admin_roles": ["moderator"], "email": "u1@example.com"},
                "mod": {"password": "pass", "admin_roles": ["moderator"], "disabled": false}
              },
              "roles": {"moderator": {"admin_channels": ["moderators"]}},
              "sync": `function(doc, oldDoc) {
                if (!doc.type) throw({forbidden: "type is not provided."});
                channel("list." + doc._id);
              }`,
              "conflicts": {"default": "winner", "types": {"task": "merge", "note": "lww:updated_at", "counter": "js", "x": "deletes-win"},
                            "type_field": "type", "resolver": "function(conflicts, base) { return conflicts[0]; }"},
              "replications": {
                "to-b": {"remote": "ws://10.0.0.2:4984/todo", "direction": "pushAndPull", "continuous": true,
                         "filter": "sync_gateway/bychannel", "query_params": {"channels": ["a", "b"]},
                         "remote_username": "u", "remote_password": "p", "heartbeat": 5, "batch_size": 100,
                         "purge_on_removal": true},
                "ids": {"remote": "http://host:4984/todo", "direction": "pull", "doc_ids": ["a", "b"]}
              }
            },
            "b": {}
          }
        }
        """#,
        #"""
        {
          "SSLCert": "/etc/shoal/cert.pem", "SSLKey": "/etc/shoal/key.pem", "interface": "[::1]:4984",
          "databases": {
            "todo": {
              "server": "couchbase://localhost", "bucket": "ignored",
              "encryption": {"key_file": "/etc/shoal/todo.key"},
              "users": {"alice": {"password": "pass", "admin_channels": ["public"],
                        "collection_access": {"_default": {"lists": {"admin_channels": ["list.alice"]}},
                                              "app": {"tasks": {"admin_channels": ["tasks"]}}}}},
              "scopes": {
                "_default": {"collections": {
                  "_default": {"sync": "function(doc) { channel(doc.channels); }", "conflicts": {"default": "merge"}},
                  "lists": {"sync": `function(doc) { if (!doc.owner) throw({forbidden: "lists need an owner"}); channel("list." + doc.owner); }`}
                }},
                "app": {"collections": {
                  "tasks": {"sync": `function(doc) { channel("tasks"); }`, "conflicts": {"default": "none"}, "extra": 1}
                }, "note": "ignored"}
              },
              "replications": {"r": {"remote": "wss://peer:4984/todo", "collections": ["lists", "app.tasks"],
                                     "pinned_cert": "/etc/shoal/peer.pem", "collections_enabled": false}}
            },
            "env": {"encryption": {"passphrase_env": "SHOAL_ENCRYPTION_PASSPHRASE"}, "mesh": {"secret": "12345678"}},
            "file": {"encryption": {"passphrase_file": "/etc/shoal/pass"}, "server": "walrus:."}
          }
        }
        """#,
        SeedConfigs.todo,
        SeedConfigs.janeJoe,
    ]

    /// Keys the loader reads, to move values under (and insert them as).
    static let knownKeys: [String] = ConfigLoader.topLevelKeys.sorted() + ConfigLoader.databaseKeys.sorted() + [
        "group", "max_peers", "secret", "tls", "enabled", "default", "types", "type_field", "resolver", "remote",
        "direction", "continuous", "filter", "query_params", "channels", "doc_ids", "batch_size", "pinned_cert",
        "collections", "collections_enabled", "password", "admin_channels", "admin_roles", "disabled", "email",
        "collection_access", "key_file", "passphrase_file", "passphrase_env", "key", "origin", "maxAge", "_default",
    ]

    /// Loads `text`; returns a short outcome key. A failure must be a readable message.
    static func loadNeverCrashes(_ text: String) -> String {
        if let path = ProcessInfo.processInfo.environment["SHOAL_CONFIG_FUZZ_TRACE"] {
            // To find the input of a crash: the last one tried is in this file.
            try? text.write(toFile: path, atomically: false, encoding: .utf8)
        }
        do {
            _ = try ConfigLoader.load(text: text)
            return "loaded"
        } catch let error as ConfigLoader.ConfigError {
            #expect(!error.message.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "empty message for \(text)")
            #expect(error.description == error.message)
            return String(error.message.prefix(40))
        } catch {
            let description = String(describing: error)
            #expect(!description.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(type(of: error)) for \(text)")
            return "\(type(of: error)): \(description.prefix(30))"
        }
    }

    @Test func seedConfigsLoad() throws {
        for (index, seed) in Self.seeds.enumerated() {
            let loaded = try ConfigLoader.load(text: seed)
            #expect(!loaded.configuration.databases.isEmpty, "seed \(index)")
        }
        let first = try ConfigLoader.load(text: Self.seeds[0]).configuration
        #expect(first.heartbeat == .milliseconds(2500))
        #expect(first.databases.first { $0.name == "todo" }?.replications.count == 2)
        let second = try ConfigLoader.load(text: Self.seeds[1]).configuration
        #expect(second.databases.first { $0.name == "todo" }?.collections.count == 2)
    }

    // MARK: Regressions found by the fuzzing

    /// A number of seconds too large for `Int` milliseconds trapped in `Int(seconds * 1000)`
    /// (top-level `heartbeat`, `httpIdleTimeout`, a replication's `heartbeat`): now a `ConfigError`.
    @Test(arguments: [
        #"{"heartbeat": 1e300}"#,
        #"{"heartbeat": 9.3e15}"#,
        #"{"httpIdleTimeout": 1e300}"#,
        #"{"httpIdleTimeout": 9223372036854775807}"#,
        #"{"databases": {"db": {"replications": {"r": {"remote": "ws://h:4984/db", "heartbeat": 1e300}}}}}"#,
        #"{"databases": {"db": {"replications": {"r": {"remote": "ws://h:4984/db", "heartbeat": 9.3e15}}}}}"#,
    ])
    func hugeSecondsFailWithAReason(text: String) {
        #expect(throws: ConfigLoader.ConfigError.self, "\(text)") { try ConfigLoader.load(text: text) }
        #expect(Self.loadNeverCrashes(text) != "loaded")
    }

    @Test func largeButRepresentableSecondsStillLoad() throws {
        let loaded = try ConfigLoader.load(text: #"{"heartbeat": 9e15, "httpIdleTimeout": 86400}"#).configuration
        #expect(loaded.heartbeat == .milliseconds(9_000_000_000_000_000_000))
        #expect(loaded.httpIdleTimeout == .seconds(86400))
    }

    // MARK: Byte-level mutations

    @Test func byteMutationsNeverCrash() {
        var rng = SplitMix64(seed: 0xC0F1)
        let structural = Array("{}[]\":,`\\-0123456789.eE truefalsnul".utf8) + [0x00, 0x0A, 0x80, 0xC3, 0xFF]
        var outcomes: [String: Int] = [:]
        let rounds = 2500
        for _ in 0..<rounds {
            var bytes = Array(Self.seeds[rng.int(0...(Self.seeds.count - 1))].utf8)
            for _ in 0..<rng.int(1...4) {
                guard !bytes.isEmpty else { break }
                let i = rng.int(0...(bytes.count - 1))
                switch rng.int(0...6) {
                case 0: bytes[i] ^= 1 << UInt8(rng.int(0...7))  // flip one bit
                case 1: bytes[i] = UInt8.random(in: 0...255, using: &rng)  // randomize one byte
                case 2: bytes.removeSubrange(i..<min(bytes.count, i + rng.int(1...40)))  // delete a slice
                case 3:  // duplicate a slice in place
                    let slice = bytes[i..<min(bytes.count, i + rng.int(1...80))]
                    bytes.insert(contentsOf: Array(slice), at: rng.int(0...bytes.count))
                case 4: bytes.insert(structural.randomElement(using: &rng)!, at: i)  // insert a structural byte
                case 5: bytes.removeLast(rng.int(0...min(bytes.count, 20)))  // truncate
                default:  // swap two bytes
                    let j = rng.int(0...(bytes.count - 1))
                    bytes.swapAt(i, j)
                }
            }
            outcomes[Self.loadNeverCrashes(String(decoding: bytes, as: UTF8.self)), default: 0] += 1
        }
        #expect(outcomes.values.reduce(0, +) == rounds)
        #expect(outcomes.count > 20, "too few distinct outcomes: \(outcomes)")
    }

    // MARK: JSON-level mutations

    enum Step: Hashable { case key(String), index(Int) }

    /// Every value's path, objects' keys in sorted order (reproducible across runs).
    static func paths(_ value: JSON, _ prefix: [Step] = []) -> [[Step]] {
        var result = [prefix]
        switch value {
        case .object(let members):
            for key in members.keys.sorted() { result += paths(members[key]!, prefix + [.key(key)]) }
        case .array(let items):
            for (index, item) in items.enumerated() { result += paths(item, prefix + [.index(index)]) }
        default: break
        }
        return result
    }

    /// `value` with the value at `path` changed by `change` (nil: removed from its container).
    static func modify(_ value: JSON, at path: ArraySlice<Step>, _ change: (JSON) -> JSON?) -> JSON? {
        guard let step = path.first else { return change(value) }
        switch (value, step) {
        case (.object(var members), .key(let key)):
            guard let child = members[key] else { return value }
            members[key] = modify(child, at: path.dropFirst(), change)
            return .object(members)
        case (.array(var items), .index(let index)) where items.indices.contains(index):
            if let new = modify(items[index], at: path.dropFirst(), change) { items[index] = new } else { items.remove(at: index) }
            return .array(items)
        default:
            return value
        }
    }

    static func kind(_ value: JSON) -> Int {
        switch value {
        case .null: return 0
        case .bool: return 1
        case .int, .double: return 2
        case .string: return 3
        case .array: return 4
        case .object: return 5
        }
    }

    /// A hostile or merely wrong value, of another kind than `old` when possible.
    static func replacement(for old: JSON, _ rng: inout SplitMix64) -> JSON {
        for _ in 0..<8 {
            let candidate = randomValue(&rng)
            if kind(candidate) != kind(old) { return candidate }
        }
        return randomValue(&rng)
    }

    static func randomValue(_ rng: inout SplitMix64) -> JSON {
        switch rng.int(0...13) {
        case 0: return .null
        case 1: return .bool(rng.chance(0.5))
        case 2: return .int([0, -1, 1, 7, 65535, 65536, Int64.max, Int64.min, Int64(Int32.max) + 1].randomElement(using: &rng)!)
        case 3: return .double([1e300, -1e300, 1e-300, 0.5, -0.5, 9.3e15, 9.2e18, 1.8e19, Double.leastNonzeroMagnitude].randomElement(using: &rng)!)
        case 4: return .string("")
        case 5: return .string(String(repeating: ["a", "é", "`", "\"", "\\", "😀", " "].randomElement(using: &rng)!, count: rng.int(1000...20000)))
        case 6: return .string(["walrus:", "ws://h:1/db", "js", "lww:", "lww", ":", ":99999", "[::1]", "[", "]:1", "*", "_default", "a.b.c", "\u{0}"]
            .randomElement(using: &rng)!)
        case 7: return .object([:])
        case 8: return .array([])
        case 9:  // deep nesting, around the parser's limit (512)
            var value: JSON = .int(1)
            let object = rng.chance(0.5)
            for _ in 0..<rng.int(100...520) { value = object ? .object(["k": value]) : .array([value]) }
            return value
        case 10: return .array((0..<rng.int(1...2000)).map { .int(Int64($0)) })
        case 11: return .object(Dictionary(uniqueKeysWithValues: (0..<rng.int(1...300)).map { ("k\($0)", JSON.string("v")) }))
        case 12: return .array([.string("x"), .int(1), .null, .object([:])])
        default: return .object([knownKeys.randomElement(using: &rng)!: .string("x")])
        }
    }

    static func jsonMutation(_ root: JSON, _ rng: inout SplitMix64) -> JSON {
        let all = paths(root)
        let path = all[rng.int(0...(all.count - 1))]
        switch rng.int(0...5) {
        case 0, 1, 2:  // swap the value for another kind of value
            return modify(root, at: path[...]) { replacement(for: $0, &rng) } ?? root
        case 3:  // remove it
            return path.isEmpty ? root : (modify(root, at: path[...]) { _ in nil } ?? root)
        case 4:  // add a known key with a random value to an object
            let key = knownKeys.randomElement(using: &rng)!
            let value = rng.chance(0.5) ? randomValue(&rng) : .string("x")
            return modify(root, at: path[...]) { old in
                guard case .object(var members) = old else { return old }
                members[key] = value
                return .object(members)
            } ?? root
        default:  // move the value under a known key of its object
            guard case .key(let oldKey)? = path.last else { return root }
            let newKey = knownKeys.randomElement(using: &rng)!
            return modify(root, at: path.dropLast()) { parent in
                guard case .object(var members) = parent, let moved = members[oldKey] else { return parent }
                members[oldKey] = nil
                members[newKey] = moved
                return .object(members)
            } ?? root
        }
    }

    @Test func jsonMutationsNeverCrash() throws {
        let parsed = try Self.seeds.map { try JSON.parse(try ConfigLoader.convertBackquotes($0)) }
        var rng = SplitMix64(seed: 0x5EED)
        var outcomes: [String: Int] = [:]
        let rounds = 2500
        for _ in 0..<rounds {
            var root = parsed[rng.int(0...(parsed.count - 1))]
            for _ in 0..<rng.int(1...3) { root = Self.jsonMutation(root, &rng) }
            outcomes[Self.loadNeverCrashes(root.canonicalString), default: 0] += 1
        }
        #expect(outcomes.values.reduce(0, +) == rounds)
        #expect((outcomes["loaded"] ?? 0) > 0, "no mutation loaded: \(outcomes)")
        #expect(outcomes.count > 40, "too few distinct outcomes: \(outcomes)")
    }
}
