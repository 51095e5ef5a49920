import GRDB
import ReplicaCore

extension Database {
    /// Whether a table named `name` exists, with the name bound, never spliced into SQL.
    func replicaTableExists(_ name: String) throws -> Bool {
        try Bool.fetchOne(self, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE)",
                          arguments: [name]) ?? false
    }

    /// The column names of table `name`, with the name bound.
    func replicaColumns(in name: String) throws -> [String] {
        try String.fetchAll(self, sql: "SELECT name FROM pragma_table_info(?)", arguments: [name])
    }
}
