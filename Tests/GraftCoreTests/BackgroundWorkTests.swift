import Dispatch
import GraftCore
import Testing

@Suite struct BackgroundWorkTests {
    private struct Failure: Error, Equatable { let code: Int }

    @Test func givesWhatTheWorkReturnedToEveryWait() throws {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let work = BackgroundWork { () -> [Int] in
            started.signal()
            release.wait()  // still running when the caller goes on
            return Array(1...3)
        }
        started.wait()
        release.signal()
        #expect(try work.wait() == [1, 2, 3])
        #expect(try work.wait() == [1, 2, 3])
    }

    @Test func rethrowsWhatTheWorkThrew() {
        let work = BackgroundWork { () throws -> Int in throw Failure(code: 7) }
        #expect(throws: Failure(code: 7)) { try work.wait() }
        #expect(throws: Failure(code: 7)) { try work.wait() }
    }
}
