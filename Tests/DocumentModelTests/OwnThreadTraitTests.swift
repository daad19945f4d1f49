import Testing
import TestSupport

/// The trait the property and fuzz suites run under (`TestSupport.OwnThreadTrait`)
/// moves their bodies off the cooperative pool that the in-process nodes of other
/// suites need, on a single test and on every test of a suite.
@Suite struct OwnThreadTraitTests {
    @Test(.ownThread) func aTestUnderTheTraitRunsOffThePool() async {
        #expect(OwnThreadTrait.isCurrent)
        await Task.yield()
        #expect(OwnThreadTrait.isCurrent)
    }

    @Test func aTestWithoutItRunsOnThePool() {
        #expect(!OwnThreadTrait.isCurrent)
    }

    @Suite(.ownThread) struct UnderASuite {
        @Test func eachTestOfTheSuiteRunsOffThePool() {
            #expect(OwnThreadTrait.isCurrent)
        }
    }
}
