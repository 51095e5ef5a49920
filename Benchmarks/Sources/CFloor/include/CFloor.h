#ifndef CFLOOR_H
#define CFLOOR_H

/// The C floor of the import benchmark: the benchmark's rows, already in memory, stored with
/// SQLite's C API in one transaction (WAL, synchronous=NORMAL), by one of several strategies.
/// The benchmark runs every strategy from the same database state and keeps the fastest one
/// that leaves the right table and reports the right number of changes for that pass.
///
/// Tables are described by name and columns; the first column is the INTEGER PRIMARY KEY.
/// Rows are `column_count` consecutive `cfloor_value`s each.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The type of a `cfloor_value`.
enum {
    CFLOOR_NULL = 0,
    CFLOOR_INTEGER = 1,
    CFLOOR_REAL = 2,
    CFLOOR_TEXT = 3,    /* UTF-8, `length` bytes, not NUL-terminated */
    CFLOOR_BLOB = 4,    /* `length` bytes (at least 1) */
};

/// One value to bind.
typedef struct cfloor_value {
    union {
        int64_t integer;
        double real;
        const void *bytes;
    };
    int32_t length;
    int32_t type;
} cfloor_value;

/// How rows are stored. Each runs in one transaction with prepared statements bound to the values.
typedef enum cfloor_strategy {
    /// `INSERT INTO t (...) VALUES (...)`: only possible into a table without those keys.
    CFLOOR_INSERT = 0,
    /// `INSERT ... ON CONFLICT(id) DO UPDATE SET c = excluded.c, ...`: counts unchanged rows as changed.
    CFLOOR_UPSERT = 1,
    /// The upsert with `WHERE c IS NOT excluded.c OR ...`: writes and counts only rows that differ.
    CFLOOR_UPSERT_DIFFERS = 2,
    /// `UPDATE t SET ... WHERE id = ?`, then `INSERT` when no row had that key: counts unchanged rows as changed.
    CFLOOR_UPDATE_INSERT = 3,
    /// `UPDATE t SET ... WHERE id = ? AND (c IS NOT ? OR ...)`, then `INSERT OR IGNORE` when it changed nothing.
    CFLOOR_UPDATE_DIFFERS_INSERT = 4,
    /// `SELECT ... WHERE id = ?`, values compared in C, then `INSERT` when missing or `UPDATE` when different.
    CFLOOR_SELECT_COMPARE = 5,
    /// `INSERT ... VALUES (...), (...), ... ON CONFLICT(id) DO UPDATE SET c = excluded.c, ...`, 32 rows a
    /// statement (at most 999 parameters), the remainder one row a statement: counts unchanged rows as changed.
    CFLOOR_MULTIROW_UPSERT = 6,
    /// Per 1,024 rows, one `SELECT ... WHERE id BETWEEN ?1 AND ?2` merged with them, values compared in C, then
    /// the multi-row upsert of the new and different rows. Keys must increase within a batch (else SQLITE_MISUSE).
    CFLOOR_SCAN_MULTIROW = 7,
    CFLOOR_STRATEGY_COUNT = 8
} cfloor_strategy;

typedef struct cfloor_db cfloor_db;

/// Opens (creating) the database at `path` in WAL mode with synchronous=NORMAL and runs
/// `create_sql` (may be NULL). Returns NULL on failure and writes a message to `error`.
cfloor_db *cfloor_open(const char *path, const char *create_sql, char *error, size_t error_size);

/// Stores `row_count` rows of `column_count` values into `table` (`columns`: comma-separated
/// names, the first the primary key) with `strategy`, in one transaction.
/// Writes the number of rows inserted or changed, as the strategy counts them, to `changes`.
/// Returns 0 or an SQLite error code (the transaction is then rolled back).
int cfloor_store(cfloor_db *db, const char *table, const char *columns, int column_count,
                 cfloor_strategy strategy, const cfloor_value *values, size_t row_count, int64_t *changes);

/// The name of `strategy`, e.g. `upsert-differs`.
const char *cfloor_strategy_name(cfloor_strategy strategy);

/// The last error message of `db`.
const char *cfloor_errmsg(cfloor_db *db);

/// Closes `db` (the last connection: SQLite checkpoints the WAL into the file and removes it).
void cfloor_close(cfloor_db *db);

/// The version of the SQLite library linked, e.g. `3.40.1`.
const char *cfloor_sqlite_version(void);

/// Runs `sql` (one row, one column) on the database at `path`, read-only, and copies the
/// column as text to `out`. Returns 0 or an SQLite error code.
int cfloor_query_text(const char *path, const char *sql, char *out, size_t out_size);

/* ---- Many-to-many: parents, shared children and the join table's links ---------------------- */

/// How `cfloor_store_links` writes the parent and child rows (the links are always replaced the
/// same way: see `cfloor_store_links`).
typedef enum cfloor_links_strategy {
    /// Plain `INSERT`s of parents, children and links: only possible into empty tables.
    CFLOOR_LINKS_INSERT = 0,
    /// Rows by the where-differs upsert; links read, compared, deleted and inserted per parent.
    CFLOOR_LINKS_UPSERT_DIFFERS = 1,
    /// Rows by `SELECT` and a comparison in C, then `INSERT` or `UPDATE`; links as above.
    CFLOOR_LINKS_SELECT_COMPARE = 2,
    /// `CFLOOR_LINKS_INSERT`, the join table's secondary indexes dropped first and created again
    /// before the commit (one sort instead of a B-tree insert per link).
    CFLOOR_LINKS_INSERT_REINDEX = 3,
    /// `CFLOOR_LINKS_UPSERT_DIFFERS`, the join table's secondary indexes dropped and created again.
    CFLOOR_LINKS_UPSERT_DIFFERS_REINDEX = 4,
    CFLOOR_LINKS_STRATEGY_COUNT = 5
} cfloor_links_strategy;

/// Rows of one table: `row_count` rows of `column_count` values, the first an INTEGER key.
typedef struct cfloor_rows {
    const char *table;
    /// Comma-separated column names, the primary key first.
    const char *columns;
    int column_count;
    const cfloor_value *values;
    size_t row_count;
} cfloor_rows;

/// What `cfloor_store_links` changed, counted as Replica reports it: a parent changed when its
/// row was inserted or updated or its links changed; a child when its row was inserted or
/// updated or it was linked to or unlinked from any parent (distinct keys).
typedef struct cfloor_links_result {
    int64_t parents_changed;
    int64_t children_changed;
    int64_t links_inserted;
    int64_t links_deleted;
} cfloor_links_result;

/// In one transaction: stores every child row once (`children`: distinct keys), then, parent by
/// parent, stores the parent's row and makes its links in `join_table` (`parent_column`,
/// `child_column`) exactly `links[p * links_per_parent ...]` (child keys): reads the stored
/// ones (`SELECT child WHERE parent = ?`, one range of the primary key), deletes those not
/// listed and inserts the missing ones (`CFLOOR_LINKS_INSERT` only inserts). Prepared
/// statements, bound per row. Returns 0 or an SQLite error code (rolled back).
int cfloor_store_links(cfloor_db *db, cfloor_links_strategy strategy, cfloor_rows parents, cfloor_rows children,
                       const char *join_table, const char *parent_column, const char *child_column,
                       const int64_t *links, size_t links_per_parent, cfloor_links_result *result);

/// The name of `strategy`, e.g. `upsert-differs`.
const char *cfloor_links_strategy_name(cfloor_links_strategy strategy);

#ifdef __cplusplus
}
#endif

#endif
