import Foundation
import Testing
import TestSupport

/// `scripts/api-fuzz`: schemathesis against a running node with the OpenAPI document it
/// serves (docs/openapi.yaml: every endpoint, less the streaming and node-changing
/// operations the script lists with their reasons), bounded to a few examples per
/// operation for CI (about a minute): no 5xx and no answer outside the document.
/// Skipped (exit 77) where schemathesis is not installed.
@Suite(.timeLimit(.minutes(5)))
struct APIFuzzScriptTests {
    @Test func schemathesisFindsNoServerErrors() async throws {
        let outcome = try await offThePool { try ScriptRunner.run("api-fuzz", ["--examples", "10", "--seed", "1"], timeout: 240) }
        if let failure = outcome?.failure("api-fuzz") { Issue.record(Comment(rawValue: failure)) }
    }
}
