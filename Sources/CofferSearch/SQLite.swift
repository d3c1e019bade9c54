import CSQLite
import Foundation

/// A failure reported by SQLite.
package struct SQLiteError: Error, CustomStringConvertible {
    package var code: Int32
    package var message: String

    /// The file is damaged or is not a database: the index is rebuilt from the disk.
    package var isCorruption: Bool {
        let primary = code & 0xFF
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
    }

    package var description: String { "SQLite error \(code): \(message)" }
}

/// One connection. Not thread-safe by itself: its owner serialises every use.
package final class SQLiteConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]

    package init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(handle)
            throw SQLiteError(code: code, message: message)
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        // Another Coffer process may be writing: wait for it rather than fail.
        sqlite3_busy_timeout(handle, 5_000)
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs statements that return no rows.
    package func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? ""
            sqlite3_free(message)
            throw SQLiteError(code: code, message: text)
        }
    }

    /// Resets every statement, so none holds a read transaction open. Call after each use.
    package func resetStatements() {
        for statement in statements.values { statement.reset() }
    }

    /// A prepared statement, reused across calls, reset and unbound.
    package func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var raw: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard code == SQLITE_OK, let raw else { throw error(code) }
        let statement = SQLiteStatement(raw, connection: self)
        statements[sql] = statement
        return statement
    }

    /// Runs `body` in one write transaction, rolled back if it throws.
    package func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The row ID the last `INSERT` on this connection gave.
    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    package func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// A prepared statement of a ``SQLiteConnection``.
package final class SQLiteStatement {
    private let raw: OpaquePointer
    private unowned let connection: SQLiteConnection

    fileprivate init(_ raw: OpaquePointer, connection: SQLiteConnection) {
        self.raw = raw
        self.connection = connection
    }

    deinit { sqlite3_finalize(raw) }

    package func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
    }

    @discardableResult
    package func bind(_ index: Int32, _ text: String) -> SQLiteStatement {
        sqlite3_bind_text(raw, index, text, -1, coffer_sqlite_transient())
        return self
    }

    @discardableResult
    package func bind(_ index: Int32, _ blob: [UInt8]) -> SQLiteStatement {
        blob.withUnsafeBytes { bytes in
            _ = sqlite3_bind_blob(raw, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count),
                                  coffer_sqlite_transient())
        }
        return self
    }

    @discardableResult
    package func bind(_ index: Int32, _ value: Int) -> SQLiteStatement {
        sqlite3_bind_int64(raw, index, Int64(value))
        return self
    }

    @discardableResult
    package func bind(_ index: Int32, _ value: Int64?) -> SQLiteStatement {
        if let value { sqlite3_bind_int64(raw, index, value) } else { sqlite3_bind_null(raw, index) }
        return self
    }

    @discardableResult
    package func bind(_ index: Int32, _ text: String?) -> SQLiteStatement {
        if let text { return bind(index, text) }
        sqlite3_bind_null(raw, index)
        return self
    }

    @discardableResult
    package func bind(_ index: Int32, _ value: Double?) -> SQLiteStatement {
        if let value { sqlite3_bind_double(raw, index, value) } else { sqlite3_bind_null(raw, index) }
        return self
    }

    /// Advances to the next row; `false` when there are no more.
    package func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(raw)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(code)
        }
    }

    /// Runs a statement that returns no rows.
    package func run() throws(SQLiteError) {
        while try step() {}
    }

    package func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(raw, column) else { return "" }
        return String(cString: pointer)
    }

    /// A text column holding `/`-separated names, as those names: read from SQLite's own
    /// bytes, without making the whole text a string first.
    package func components(_ column: Int32) -> [String] {
        guard let pointer = sqlite3_column_text(raw, column) else { return [] }
        let bytes = UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(raw, column)))
        return bytes.split(separator: UInt8(ascii: "/")).map { String(decoding: UnsafeBufferPointer(rebasing: $0), as: UTF8.self) }
    }

    package func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(raw, column)) }

    package func optionalInt64(_ column: Int32) -> Int64? {
        sqlite3_column_type(raw, column) == SQLITE_NULL ? nil : sqlite3_column_int64(raw, column)
    }

    package func optionalText(_ column: Int32) -> String? {
        sqlite3_column_type(raw, column) == SQLITE_NULL ? nil : text(column)
    }

    package func double(_ column: Int32) -> Double? {
        sqlite3_column_type(raw, column) == SQLITE_NULL ? nil : sqlite3_column_double(raw, column)
    }
}
