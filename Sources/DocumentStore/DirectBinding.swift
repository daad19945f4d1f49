import GRDB
import GRDBSQLite

/// Runs a cached GRDB statement with values bound straight through SQLite's C API,
/// for the hottest statement of the write path (the INSERT of each new document):
/// GRDB's argument machinery (an array of existential values, `Data` copies of every
/// blob) costs about a third of what SQLite's own insert does.
///
/// Text and blobs are bound without copying (`SQLITE_STATIC`): the statement is
/// stepped, reset and its bindings cleared while the caller's buffers are alive.
/// Use it only for statements that GRDB itself never runs with other arguments.
enum DirectBinding {
    /// One value to bind.
    enum Value {
        case integer(Int64)
        case text(String)
        case blob([UInt8])
        case null
    }

    /// Binds `values` to parameters 1…n of `statement`, runs it to completion, and
    /// resets it. Throws GRDB's `DatabaseError` when SQLite fails.
    static func execute(_ statement: Statement, _ values: [Value], db: Database) throws {
        let handle = statement.sqliteStatement
        var code = sqlite3_reset(handle)
        if code == SQLITE_OK {
            code = bindAndStep(handle, values[...], index: 1)
        }
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            let message = db.sqliteConnection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
        }
    }

    /// Binds the values from `index` on (each kept alive by the recursion), then steps.
    private static func bindAndStep(_ handle: OpaquePointer, _ values: ArraySlice<Value>, index: Int32) -> Int32 {
        guard let value = values.first else {
            var code = sqlite3_step(handle)
            while code == SQLITE_ROW { code = sqlite3_step(handle) }
            return code
        }
        let rest = values.dropFirst()
        let code: Int32
        switch value {
        case .integer(let number):
            code = sqlite3_bind_int64(handle, index, number)
        case .null:
            code = sqlite3_bind_null(handle, index)
        case .text(var text):
            return text.withUTF8 { bytes in
                // An empty string has no storage: bind an empty text of another origin.
                let code = bytes.isEmpty
                    ? sqlite3_bind_text(handle, index, "", 0, staticDestructor)
                    : sqlite3_bind_text(
                        handle, index, UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self),
                        Int32(bytes.count), staticDestructor)
                return code == SQLITE_OK ? bindAndStep(handle, rest, index: index + 1) : code
            }
        case .blob(let bytes):
            return bytes.withUnsafeBytes { raw in
                let code = raw.count == 0
                    ? sqlite3_bind_zeroblob(handle, index, 0)
                    : sqlite3_bind_blob(handle, index, raw.baseAddress, Int32(raw.count), staticDestructor)
                return code == SQLITE_OK ? bindAndStep(handle, rest, index: index + 1) : code
            }
        }
        return code == SQLITE_OK ? bindAndStep(handle, rest, index: index + 1) : code
    }

    /// `SQLITE_STATIC`: SQLite does not copy the value and does not free it.
    private static let staticDestructor = unsafeBitCast(0, to: sqlite3_destructor_type.self)
}
