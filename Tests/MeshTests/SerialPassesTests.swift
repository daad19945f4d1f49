@testable import Mesh
import Testing

/// Requests during a pass make exactly one more pass; none runs twice at once.
@Suite struct SerialPassesTests {
    @Test func requestsDuringAPassCoalesceIntoOneMore() {
        var passes = SerialPasses()
        var answers: [Bool] = []
        answers.append(passes.request())    // runs
        answers.append(passes.request())    // during the pass: remembered
        answers.append(passes.request())    // coalesced with the one before
        answers.append(passes.passEnded())  // one more pass
        #expect(passes.running)
        answers.append(passes.passEnded())  // done
        #expect(!passes.running)
        answers.append(passes.request())    // a new run
        answers.append(passes.passEnded())
        #expect(answers == [true, false, false, true, false, true, false])
        #expect(passes == SerialPasses())
    }
}
