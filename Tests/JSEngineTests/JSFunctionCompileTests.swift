import DocumentModel
import JSEngine
import XCTest

/// Compilation: accepted source shapes, syntax errors with Duktape's message and line.
final class JSFunctionCompileTests: XCTestCase {
    private func compileError(_ source: String, file: StaticString = #filePath, line: UInt = #line) -> (message: String, line: Int?)? {
        do {
            _ = try JSFunction(source: source)
            XCTFail("expected a compile error", file: file, line: line)
        } catch .compile(let message, let errorLine) {
            return (message, errorLine)
        } catch {
            XCTFail("expected .compile, got \(error)", file: file, line: line)
        }
        return nil
    }

    func testCompilesAFunctionExpression() throws {
        let f = try JSFunction(source: "function(doc, oldDoc) { return doc; }")
        XCTAssertEqual(try f.call([["a": 1]]), ["a": 1])
        XCTAssertFalse(f.isWedged)
    }

    func testAcceptsCommentsNamedFunctionsAndParentheses() throws {
        let sources = [
            "// sync function\nfunction(doc) {\n  return 1;\n}",
            "function sync(doc) { return 1; } // trailing comment",
            "(function(doc) { return 1; })",
            "\n\n  function(doc) { return 1; }\n\n",
            "(function() { var k = 1; return function(doc) { return k; }; })()",
        ]
        for source in sources {
            let f = try JSFunction(source: source)
            XCTAssertEqual(try f.call([.null]), 1, source)
        }
    }

    func testSyntaxErrorReportsLineAndMessage() {
        let source = """
        function(doc, oldDoc) {
          var x = 1;
          if (x { channel("a"); }
        }
        """
        guard let error = compileError(source) else { return }
        XCTAssertEqual(error.line, 3)
        XCTAssertTrue(error.message.hasPrefix("SyntaxError"), error.message)
        XCTAssertTrue(error.message.contains("line 3"), error.message)
    }

    func testUnterminatedSourceReportsALineInsideTheSource() {
        guard let error = compileError("function(doc) {\n  var x = 1;\n") else { return }
        XCTAssertEqual(error.line, 3)
        XCTAssertTrue(error.message.hasPrefix("SyntaxError"), error.message)
    }

    func testES6SyntaxIsRejected() {
        XCTAssertEqual(compileError("function(doc) {\n  let x = 1;\n}")?.line, 2)
        XCTAssertEqual(compileError("\n\nfunction(doc) { return `x`; }")?.line, 3)
        XCTAssertNotNil(compileError("(doc) => doc"))
    }

    func testNonFunctionIsRejected() {
        let error = compileError("42")
        XCTAssertEqual(error?.message, "the source does not evaluate to a function")
        XCTAssertNil(error?.line)
        XCTAssertNotNil(compileError(""))
    }

    func testErrorWhileEvaluatingTheSourceIsACompileError() {
        let error = compileError("function(doc) { return 1; }); undefinedThing(")
        XCTAssertTrue(error?.message.contains("ReferenceError") ?? false, "\(String(describing: error))")
        XCTAssertEqual(error?.line, 1)
        let thrown = compileError("(function() { throw {forbidden: 'nope'}; })()")
        XCTAssertEqual(thrown?.message, #"{"forbidden":"nope"}"#)
    }

    func testCompileErrorMessageMentionsLine() {
        let error = JSError.compile(message: "boom", line: 7)
        XCTAssertEqual(error.message, "boom (line 7)")
        XCTAssertEqual(JSError.compile(message: "SyntaxError: x (line 7)", line: 7).message, "SyntaxError: x (line 7)")
    }

    func testFilenameOptionIsAccepted() throws {
        let f = try JSFunction(source: "function() { return 'ok'; }", options: .init(filename: "sync-db1.js"))
        XCTAssertEqual(try f.call([]), "ok")
        XCTAssertEqual(f.options.filename, "sync-db1.js")
    }
}
