import DocumentModel
@testable import ShoalNode
import Testing
import TestSupport

@Suite struct ConflictConfigTests {
    @Test func conflictsSectionParsesPoliciesTypesAndResolver() throws {
        let loaded = try ConfigLoader.load(text: """
            {"databases": {"todo": {"server": "walrus:", "conflicts": {
              "default": "winner", "types": {"task": "merge", "task-list": "winner", "note": "lww:updated_at", "x": "js"},
              "type_field": "kind", "resolver": `function(conflicts, base) { return conflicts[0]; }`}}}}
            """)
        let database = loaded.configuration.databases[0]
        #expect(database.conflicts.defaultPolicy == .winner)
        #expect(database.conflicts.byType == ["task": .merge, "task-list": .winner, "note": .lww(field: "updated_at"), "x": .js])
        #expect(database.conflicts.typeField == "kind")
        #expect(database.conflictResolver?.hasPrefix("function(conflicts, base)") == true)
        // Without a "conflicts" section: winner for everything.
        #expect(try ConfigLoader.load(text: #"{"databases": {"db": {}}}"#).configuration.databases[0].conflicts == ConflictPolicies())
    }

    @Test func badConflictSettingsAreConfigErrors() throws {
        for (text, needle) in [
            (#"{"databases": {"db": {"conflicts": {"default": "newest"}}}}"#, "newest"),
            (#"{"databases": {"db": {"conflicts": {"default": "js"}}}}"#, "resolver"),
            (#"{"databases": {"db": {"conflicts": {"types": {"task": 3}}}}}"#, "task"),
            (#"{"databases": {"db": {"conflicts": {"policy": "merge"}}}}"#, "policy"),
            (#"{"databases": {"db": {"conflicts": {"default": "lww:"}}}}"#, "lww"),
        ] {
            #expect(throws: ConfigLoader.ConfigError.self, "\(text)") { try ConfigLoader.load(text: text) }
            do {
                _ = try ConfigLoader.load(text: text)
            } catch {
                #expect("\(error)".contains(needle), "\(error)")
            }
        }
    }

    @Test func badJavaScriptFailsTheStartWithTheLine() throws {
        var configuration = NodeConfiguration()
        configuration.dataDirectory = TemporaryDirectory(prefix: "shoal-conflict-config").path
        configuration.discovery = false
        var database = NodeConfiguration.Database(name: "db", inMemory: true)
        database.conflicts = ConflictPolicies(default: .js)
        database.conflictResolver = "function(conflicts, base) {\n  return conflicts[0]\n  }}"
        configuration.databases = [database]
        do {
            _ = try ShoalNode(configuration: configuration)
            Issue.record("a node started with bad JavaScript")
        } catch {
            #expect("\(error)".contains("resolver"), "\(error)")
            #expect("\(error)".contains("line 3"), "\(error)")
        }
    }
}
