#include "CFloor.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cfloor_db {
    sqlite3 *handle;
};

cfloor_db *cfloor_open(const char *path, const char *create_sql, char *error, size_t error_size) {
    sqlite3 *handle = NULL;
    // NOMUTEX, as GRDB opens Replica's connections: one thread uses the connection, so SQLite's
    // per-call connection mutex (a fifth of the floor's time without it) guards nothing.
    int rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(handle, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(handle, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
    // SQLite's automatic checkpoint stays in the commit, timed: Replica's store runs the same
    // checkpoint right after its commit on a connection of its own, on the same two cores and disk,
    // during the next pass when there is one. A floor that skipped it would not do Replica's work.
    if (rc == SQLITE_OK && create_sql != NULL) rc = sqlite3_exec(handle, create_sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        snprintf(error, error_size, "%s: %s", path, handle ? sqlite3_errmsg(handle) : sqlite3_errstr(rc));
        sqlite3_close(handle);
        return NULL;
    }
    cfloor_db *db = malloc(sizeof *db);
    if (db == NULL) {
        snprintf(error, error_size, "out of memory");
        sqlite3_close(handle);
        return NULL;
    }
    db->handle = handle;
    return db;
}

/* ---- SQL text ---------------------------------------------------------------------------- */

/// A growing SQL string (benchmark tables are small: a fixed buffer is plenty).
typedef struct sql_text {
    char text[4096];
    size_t length;
} sql_text;

static void append(sql_text *sql, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int written = vsnprintf(sql->text + sql->length, sizeof sql->text - sql->length, format, arguments);
    va_end(arguments);
    if (written > 0) sql->length += (size_t)written;
    if (sql->length >= sizeof sql->text) sql->length = sizeof sql->text - 1;
}

/// The column names of a comma-separated list.
typedef struct column_names {
    char storage[1024];
    const char *names[64];
    int count;
} column_names;

static int split_columns(const char *columns, column_names *out) {
    out->count = 0;
    if (strlen(columns) >= sizeof out->storage) return 0;
    strcpy(out->storage, columns);
    char *cursor = out->storage;
    while (cursor && out->count < 64) {
        out->names[out->count++] = cursor;
        char *comma = strchr(cursor, ',');
        if (comma) *comma++ = '\0';
        cursor = comma;
    }
    return out->count;
}

/// `INSERT [OR IGNORE] INTO "t" ("c0", ...) VALUES (?1, ...)`
static void insert_sql(sql_text *sql, const char *table, const column_names *c, const char *verb) {
    append(sql, "%s INTO \"%s\" (", verb, table);
    for (int i = 0; i < c->count; i++) append(sql, "%s\"%s\"", i ? ", " : "", c->names[i]);
    append(sql, ") VALUES (");
    for (int i = 0; i < c->count; i++) append(sql, "%s?%d", i ? ", " : "", i + 1);
    append(sql, ")");
}

/// The cost rank of comparing a value of `type`: numbers, then text, then blobs (and NULL).
static int compare_cost(int32_t type) {
    switch (type) {
    case CFLOOR_INTEGER: case CFLOOR_REAL: return 0;
    case CFLOOR_TEXT: return 1;
    default: return 2;
    }
}

/// `"c1" IS NOT <prefix>"c1" OR ...` (prefix `excluded.`), or `"c1" IS NOT ?2 OR ...` (prefix NULL),
/// the cheapest columns first by the first row's value types, as Replica orders them: SQLite
/// stops at the first difference, so a changed row compares only up to it.
static void differs_sql(sql_text *sql, const column_names *c, const char *prefix, const cfloor_value *first_row) {
    int written = 0;
    for (int rank = 0; rank <= 2; rank++) {
        for (int i = 1; i < c->count; i++) {
            if (compare_cost(first_row ? first_row[i].type : CFLOOR_INTEGER) != rank) continue;
            if (prefix) append(sql, "%s\"%s\" IS NOT %s\"%s\"", written ? " OR " : "", c->names[i], prefix, c->names[i]);
            else append(sql, "%s\"%s\" IS NOT ?%d", written ? " OR " : "", c->names[i], i + 1);
            written++;
        }
    }
}

static void upsert_sql(sql_text *sql, const char *table, const column_names *c, int where_differs,
                       const cfloor_value *first_row) {
    insert_sql(sql, table, c, "INSERT");
    append(sql, " ON CONFLICT(\"%s\") DO UPDATE SET ", c->names[0]);
    for (int i = 1; i < c->count; i++) append(sql, "%s\"%s\" = excluded.\"%s\"", i > 1 ? ", " : "", c->names[i], c->names[i]);
    if (where_differs) {
        append(sql, " WHERE ");
        differs_sql(sql, c, "excluded.", first_row);
    }
}

/// `UPDATE "t" SET "c1" = ?2, ... WHERE "c0" = ?1 [AND (<differs>)]`
static void update_sql(sql_text *sql, const char *table, const column_names *c, int where_differs,
                       const cfloor_value *first_row) {
    append(sql, "UPDATE \"%s\" SET ", table);
    for (int i = 1; i < c->count; i++) append(sql, "%s\"%s\" = ?%d", i > 1 ? ", " : "", c->names[i], i + 1);
    append(sql, " WHERE \"%s\" = ?1", c->names[0]);
    if (where_differs) {
        append(sql, " AND (");
        differs_sql(sql, c, NULL, first_row);
        append(sql, ")");
    }
}

/// `SELECT "c1", ... FROM "t" WHERE "c0" = ?1`
static void select_sql(sql_text *sql, const char *table, const column_names *c) {
    append(sql, "SELECT ");
    for (int i = 1; i < c->count; i++) append(sql, "%s\"%s\"", i > 1 ? ", " : "", c->names[i]);
    append(sql, " FROM \"%s\" WHERE \"%s\" = ?1", table, c->names[0]);
}

/// `SELECT "c0", "c1", ... FROM "t" WHERE "c0" BETWEEN ?1 AND ?2 ORDER BY "c0"`: one range of the
/// key, key included. The ORDER BY costs nothing (a rowid range comes in key order; no sorter is
/// made) and makes the order the merge relies on a guarantee rather than an accident of the plan.
static void range_select_sql(sql_text *sql, const char *table, const column_names *c) {
    append(sql, "SELECT ");
    for (int i = 0; i < c->count; i++) append(sql, "%s\"%s\"", i ? ", " : "", c->names[i]);
    append(sql, " FROM \"%s\" WHERE \"%s\" BETWEEN ?1 AND ?2 ORDER BY \"%s\"", table, c->names[0], c->names[0]);
}

/// The upsert without WHERE for `rows` rows: `INSERT INTO "t" (...) VALUES (?,?,...),(?,?,...),...
/// ON CONFLICT("c0") DO UPDATE SET "c1" = excluded."c1", ...`. Anonymous parameters (numbered in
/// order, row r's column i is ?(r * count + i + 1)) keep the text short: 999 of them take 2 KB.
static void multirow_upsert_sql(sql_text *sql, const char *table, const column_names *c, int rows) {
    append(sql, "INSERT INTO \"%s\" (", table);
    for (int i = 0; i < c->count; i++) append(sql, "%s\"%s\"", i ? ", " : "", c->names[i]);
    append(sql, ") VALUES ");
    for (int r = 0; r < rows; r++) {
        append(sql, r ? ",(" : "(");
        for (int i = 0; i < c->count; i++) append(sql, i ? ",?" : "?");
        append(sql, ")");
    }
    append(sql, " ON CONFLICT(\"%s\") DO UPDATE SET ", c->names[0]);
    for (int i = 1; i < c->count; i++) append(sql, "%s\"%s\" = excluded.\"%s\"", i > 1 ? ", " : "", c->names[i], c->names[i]);
}

/// Whether `sql` may have been cut short by its fixed buffer (`append` stops at its end).
static int sql_full(const sql_text *sql) {
    return sql->length + 1 >= sizeof sql->text;
}

/* ---- Binding and comparing ----------------------------------------------------------------- */

/// Binds `v` to parameter `index` (1-based). Text and blobs are not copied: the rows outlive the
/// statement's use of them.
static inline int bind_value(sqlite3_stmt *stmt, int index, const cfloor_value *v) {
    switch (v->type) {
    case CFLOOR_INTEGER: return sqlite3_bind_int64(stmt, index, v->integer);
    case CFLOOR_REAL: return sqlite3_bind_double(stmt, index, v->real);
    case CFLOOR_TEXT: return sqlite3_bind_text(stmt, index, v->bytes, v->length, SQLITE_STATIC);
    case CFLOOR_BLOB: return sqlite3_bind_blob(stmt, index, v->bytes, v->length, SQLITE_STATIC);
    default: return sqlite3_bind_null(stmt, index);
    }
}

/// Binds `count` values to parameters ?1 ... ?count (the statement may use fewer).
static inline int bind_row(sqlite3_stmt *stmt, const cfloor_value *row, int count, int parameters) {
    int rc = SQLITE_OK;
    for (int i = 0; i < count && i < parameters && rc == SQLITE_OK; i++) rc = bind_value(stmt, i + 1, &row[i]);
    return rc;
}

/// Binds the `count` values of `row` to parameters ?(first + 1) ... ?(first + count): one row of a
/// multi-row statement.
static inline int bind_row_at(sqlite3_stmt *stmt, const cfloor_value *row, int count, int first) {
    int rc = SQLITE_OK;
    for (int i = 0; i < count && rc == SQLITE_OK; i++) rc = bind_value(stmt, first + i + 1, &row[i]);
    return rc;
}

/// Whether column `column` of the current row of `stmt` holds exactly `v` (as `IS` compares them
/// for the types the benchmark binds).
static inline int same_value(sqlite3_stmt *stmt, int column, const cfloor_value *v) {
    int type = sqlite3_column_type(stmt, column);
    switch (v->type) {
    case CFLOOR_INTEGER: return type == SQLITE_INTEGER && sqlite3_column_int64(stmt, column) == v->integer;
    case CFLOOR_REAL: return type == SQLITE_FLOAT && sqlite3_column_double(stmt, column) == v->real;
    case CFLOOR_TEXT:
        if (type != SQLITE_TEXT) return 0;
        {
            const void *text = sqlite3_column_text(stmt, column);
            return sqlite3_column_bytes(stmt, column) == v->length && (v->length == 0 || memcmp(text, v->bytes, (size_t)v->length) == 0);
        }
    case CFLOOR_BLOB:
        if (type != SQLITE_BLOB) return 0;
        {
            const void *blob = sqlite3_column_blob(stmt, column);
            return sqlite3_column_bytes(stmt, column) == v->length && (v->length == 0 || memcmp(blob, v->bytes, (size_t)v->length) == 0);
        }
    default: return type == SQLITE_NULL;
    }
}

/// Steps `stmt` once (a write), adds its changes to `changed` when asked, and resets it.
static inline int step_write(sqlite3 *handle, sqlite3_stmt *stmt, int *row_changes) {
    int rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE) return rc;
    *row_changes = sqlite3_changes(handle);
    return sqlite3_reset(stmt);
}

/* ---- Multi-row upsert ------------------------------------------------------------------------- */

enum {
    /// Rows per statement (K) of the multi-row upsert: the per-execution work (bind calls aside: the
    /// step and reset, starting the program, opening the table's cursor) is paid once per K rows.
    /// 32 was chosen, not tuned: past it the statement's text and program only grow.
    MULTIROW_ROWS = 32,
    /// Bound parameters per statement at most: SQLite's SQLITE_MAX_VARIABLE_NUMBER before 3.32 (the
    /// limit sqlite-utils also keeps), so wide tables get fewer rows per statement on any build.
    MULTIROW_MAX_PARAMETERS = 999,
    /// Input rows per range scan of scan+multirow: one SELECT per 1,024 rows, and the batch's new and
    /// changed rows (pointers to them) fit in a small array on the stack.
    SCAN_BATCH_ROWS = 1024,
};

/// The multi-row upsert: rows are queued and written `rows` to a statement (`chunk`); what is left
/// when the caller finishes goes through the one-row statement of the same shape (`single`).
typedef struct multirow_writer {
    sqlite3 *handle;
    int column_count;
    int rows;                                   /* K: MULTIROW_ROWS, fewer for wide tables */
    sqlite3_stmt *chunk;                        /* K rows */
    sqlite3_stmt *single;                       /* 1 row */
    const cfloor_value *queued[MULTIROW_ROWS];  /* rows waiting for a full chunk */
    int queued_count;
    int64_t changes;                            /* sqlite3_changes of every statement, summed */
} multirow_writer;

static int multirow_open(multirow_writer *w, sqlite3 *handle, const char *table, const column_names *c) {
    memset(w, 0, sizeof *w);
    w->handle = handle;
    w->column_count = c->count;
    w->rows = MULTIROW_MAX_PARAMETERS / c->count < MULTIROW_ROWS ? MULTIROW_MAX_PARAMETERS / c->count : MULTIROW_ROWS;
    if (w->rows < 1) return SQLITE_RANGE;
    sql_text chunk = { .length = 0 }, single = { .length = 0 };
    multirow_upsert_sql(&chunk, table, c, w->rows);
    multirow_upsert_sql(&single, table, c, 1);
    if (sql_full(&chunk)) return SQLITE_TOOBIG;
    int rc = sqlite3_prepare_v3(handle, chunk.text, -1, SQLITE_PREPARE_PERSISTENT, &w->chunk, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v3(handle, single.text, -1, SQLITE_PREPARE_PERSISTENT, &w->single, NULL);
    return rc;
}

/// Writes the queued rows, a full chunk, through the K-row statement.
static int multirow_flush(multirow_writer *w) {
    const int n = w->column_count;
    int rc = SQLITE_OK, row_changes = 0;
    for (int r = 0; r < w->queued_count && rc == SQLITE_OK; r++) rc = bind_row_at(w->chunk, w->queued[r], n, r * n);
    if (rc == SQLITE_OK) rc = step_write(w->handle, w->chunk, &row_changes);
    w->changes += row_changes;
    w->queued_count = 0;
    return rc;
}

/// Queues `row` (which must stay valid until written), writing the chunk when it is full.
static inline int multirow_add(multirow_writer *w, const cfloor_value *row) {
    w->queued[w->queued_count++] = row;
    return w->queued_count == w->rows ? multirow_flush(w) : SQLITE_OK;
}

/// Writes the rows still queued (fewer than K) one by one.
static int multirow_finish(multirow_writer *w) {
    const int n = w->column_count;
    int rc = SQLITE_OK;
    for (int r = 0; r < w->queued_count && rc == SQLITE_OK; r++) {
        int row_changes = 0;
        rc = bind_row(w->single, w->queued[r], n, n);
        if (rc == SQLITE_OK) rc = step_write(w->handle, w->single, &row_changes);
        w->changes += row_changes;
    }
    w->queued_count = 0;
    return rc;
}

static void multirow_close(multirow_writer *w) {
    sqlite3_finalize(w->chunk);
    sqlite3_finalize(w->single);
}

/// CFLOOR_MULTIROW_UPSERT: every row through the multi-row upsert; `changed` as SQLite counts it.
static int store_multirow(multirow_writer *w, const cfloor_value *values, size_t row_count, int64_t *changed) {
    const size_t n = (size_t)w->column_count;
    int rc = SQLITE_OK;
    for (size_t r = 0; rc == SQLITE_OK && r < row_count; r++) rc = multirow_add(w, values + r * n);
    if (rc == SQLITE_OK) rc = multirow_finish(w);
    *changed = w->changes;
    return rc;
}

/// Whether the `count` rows' keys are integers and strictly increasing, as the merge needs.
/// (Unsorted input is refused rather than sorted: the benchmark's rows always come in key order.)
static int keys_increasing(const cfloor_value *rows, size_t count, size_t n) {
    for (size_t r = 0; r < count; r++) {
        if (rows[r * n].type != CFLOOR_INTEGER) return 0;
        if (r > 0 && rows[r * n].integer <= rows[(r - 1) * n].integer) return 0;
    }
    return 1;
}

/// Merges one batch with the stored rows of its key range, read by `scan` (in key order), and
/// collects in `differing`, in input order, the rows that are not stored or differ in a column.
/// Stored rows between the batch's keys that it does not list are passed over, untouched.
/// Writes nothing itself: the scan is reset before the caller writes.
static int scan_batch(sqlite3_stmt *scan, const cfloor_value *rows, size_t count, size_t n,
                      const cfloor_value **differing, size_t *found) {
    size_t next = 0;
    *found = 0;
    int rc = sqlite3_bind_int64(scan, 1, rows[0].integer);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(scan, 2, rows[(count - 1) * n].integer);
    int step = SQLITE_DONE;
    while (rc == SQLITE_OK && (step = sqlite3_step(scan)) == SQLITE_ROW) {
        const int64_t key = sqlite3_column_int64(scan, 0);
        /* Batch rows before this stored key are not stored: new. */
        while (next < count && rows[next * n].integer < key) differing[(*found)++] = rows + next++ * n;
        if (next == count || rows[next * n].integer != key) continue;
        const cfloor_value *row = rows + next++ * n;
        int same = 1;
        for (size_t i = 1; i < n && same; i++) same = same_value(scan, (int)i, &row[i]);
        if (!same) differing[(*found)++] = row;
    }
    if (rc == SQLITE_OK && step != SQLITE_DONE) rc = step;
    int reset = sqlite3_reset(scan);
    if (rc == SQLITE_OK) rc = reset;
    /* Batch rows after the last stored key: new. */
    while (next < count) differing[(*found)++] = rows + next++ * n;
    return rc;
}

/// CFLOOR_SCAN_MULTIROW: batches of SCAN_BATCH_ROWS rows, each compared with one range scan and its
/// new and different rows written by the multi-row upsert (the remainder of each batch one by one,
/// so every write sees what the previous batches wrote). `changed`: the rows found new or different.
static int store_scan_multirow(sqlite3_stmt *scan, multirow_writer *w, const cfloor_value *values, size_t row_count,
                               int64_t *changed) {
    const size_t n = (size_t)w->column_count;
    const cfloor_value *differing[SCAN_BATCH_ROWS];
    int rc = SQLITE_OK;
    for (size_t start = 0; rc == SQLITE_OK && start < row_count; start += SCAN_BATCH_ROWS) {
        const cfloor_value *rows = values + start * n;
        const size_t count = row_count - start < SCAN_BATCH_ROWS ? row_count - start : SCAN_BATCH_ROWS;
        if (!keys_increasing(rows, count, n)) return SQLITE_MISUSE;
        size_t found = 0;
        rc = scan_batch(scan, rows, count, n, differing, &found);
        for (size_t i = 0; rc == SQLITE_OK && i < found; i++) rc = multirow_add(w, differing[i]);
        if (rc == SQLITE_OK) rc = multirow_finish(w);
        *changed += (int64_t)found;
    }
    return rc;
}

/* ---- Strategies ------------------------------------------------------------------------------ */

int cfloor_store(cfloor_db *db, const char *table, const char *columns, int column_count,
                 cfloor_strategy strategy, const cfloor_value *values, size_t row_count, int64_t *changes) {
    sqlite3 *handle = db->handle;
    column_names names;
    *changes = 0;
    if (split_columns(columns, &names) != column_count || column_count < 2) return SQLITE_MISUSE;

    /* Statement texts first: `first` is the main statement, `second` the follow-up. */
    sql_text first = { .length = 0 }, second = { .length = 0 };
    const cfloor_value *first_row = row_count > 0 ? values : NULL;
    switch (strategy) {
    case CFLOOR_INSERT: insert_sql(&first, table, &names, "INSERT"); break;
    case CFLOOR_UPSERT: upsert_sql(&first, table, &names, 0, first_row); break;
    case CFLOOR_UPSERT_DIFFERS: upsert_sql(&first, table, &names, 1, first_row); break;
    case CFLOOR_UPDATE_INSERT:
        update_sql(&first, table, &names, 0, first_row);
        insert_sql(&second, table, &names, "INSERT");
        break;
    case CFLOOR_UPDATE_DIFFERS_INSERT:
        update_sql(&first, table, &names, 1, first_row);
        insert_sql(&second, table, &names, "INSERT OR IGNORE");
        break;
    case CFLOOR_SELECT_COMPARE:
        select_sql(&first, table, &names);
        insert_sql(&second, table, &names, "INSERT");
        break;
    case CFLOOR_MULTIROW_UPSERT: break;     /* only the multi-row writer's statements */
    case CFLOOR_SCAN_MULTIROW: range_select_sql(&first, table, &names); break;
    default: return SQLITE_MISUSE;
    }
    const int multirow = strategy == CFLOOR_MULTIROW_UPSERT || strategy == CFLOOR_SCAN_MULTIROW;
    /* SELECT_COMPARE's update of a differing row. */
    sql_text third = { .length = 0 };
    if (strategy == CFLOOR_SELECT_COMPARE) update_sql(&third, table, &names, 0, first_row);

    int rc = sqlite3_exec(handle, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_stmt *main_stmt = NULL, *second_stmt = NULL, *third_stmt = NULL;
    multirow_writer writer = { .chunk = NULL, .single = NULL };
    if (first.length) rc = sqlite3_prepare_v3(handle, first.text, -1, SQLITE_PREPARE_PERSISTENT, &main_stmt, NULL);
    if (rc == SQLITE_OK && multirow) rc = multirow_open(&writer, handle, table, &names);
    if (rc == SQLITE_OK && second.length) rc = sqlite3_prepare_v3(handle, second.text, -1, SQLITE_PREPARE_PERSISTENT, &second_stmt, NULL);
    if (rc == SQLITE_OK && third.length) rc = sqlite3_prepare_v3(handle, third.text, -1, SQLITE_PREPARE_PERSISTENT, &third_stmt, NULL);

    int64_t changed = 0;
    int row_changes = 0;
    const int n = column_count;
    switch (strategy) {
    case CFLOOR_INSERT:
    case CFLOOR_UPSERT:
    case CFLOOR_UPSERT_DIFFERS:
        for (size_t r = 0; rc == SQLITE_OK && r < row_count; r++) {
            rc = bind_row(main_stmt, values + r * (size_t)n, n, n);
            if (rc == SQLITE_OK) rc = step_write(handle, main_stmt, &row_changes);
            changed += row_changes;
        }
        break;
    case CFLOOR_UPDATE_INSERT:
    case CFLOOR_UPDATE_DIFFERS_INSERT:
        for (size_t r = 0; rc == SQLITE_OK && r < row_count; r++) {
            const cfloor_value *row = values + r * (size_t)n;
            rc = bind_row(main_stmt, row, n, n);
            if (rc == SQLITE_OK) rc = step_write(handle, main_stmt, &row_changes);
            if (rc == SQLITE_OK && row_changes == 0) {
                /* No row updated: missing (insert it) or, for where-differs, unchanged (OR IGNORE keeps it). */
                rc = bind_row(second_stmt, row, n, n);
                if (rc == SQLITE_OK) rc = step_write(handle, second_stmt, &row_changes);
            }
            changed += row_changes;
        }
        break;
    case CFLOOR_SELECT_COMPARE:
        for (size_t r = 0; rc == SQLITE_OK && r < row_count; r++) {
            const cfloor_value *row = values + r * (size_t)n;
            rc = bind_row(main_stmt, row, 1, 1);
            if (rc != SQLITE_OK) break;
            int step = sqlite3_step(main_stmt);
            if (step == SQLITE_ROW) {
                int same = 1;
                for (int i = 1; i < n && same; i++) same = same_value(main_stmt, i - 1, &row[i]);
                rc = sqlite3_reset(main_stmt);
                if (rc == SQLITE_OK && !same) {
                    rc = bind_row(third_stmt, row, n, n);
                    if (rc == SQLITE_OK) rc = step_write(handle, third_stmt, &row_changes);
                    changed += row_changes;
                }
            } else if (step == SQLITE_DONE) {
                rc = sqlite3_reset(main_stmt);
                if (rc == SQLITE_OK) rc = bind_row(second_stmt, row, n, n);
                if (rc == SQLITE_OK) rc = step_write(handle, second_stmt, &row_changes);
                changed += row_changes;
            } else {
                rc = step;
            }
        }
        break;
    case CFLOOR_MULTIROW_UPSERT:
        if (rc == SQLITE_OK) rc = store_multirow(&writer, values, row_count, &changed);
        break;
    case CFLOOR_SCAN_MULTIROW:
        if (rc == SQLITE_OK) rc = store_scan_multirow(main_stmt, &writer, values, row_count, &changed);
        break;
    default:
        rc = SQLITE_MISUSE;
    }
    multirow_close(&writer);
    sqlite3_finalize(main_stmt);
    sqlite3_finalize(second_stmt);
    sqlite3_finalize(third_stmt);
    if (rc == SQLITE_OK) {
        rc = sqlite3_exec(handle, "COMMIT", NULL, NULL, NULL);
    } else {
        sqlite3_exec(handle, "ROLLBACK", NULL, NULL, NULL);
    }
    *changes = changed;
    return rc;
}

const char *cfloor_strategy_name(cfloor_strategy strategy) {
    switch (strategy) {
    case CFLOOR_INSERT: return "insert";
    case CFLOOR_UPSERT: return "upsert";
    case CFLOOR_UPSERT_DIFFERS: return "upsert-differs";
    case CFLOOR_UPDATE_INSERT: return "update+insert";
    case CFLOOR_UPDATE_DIFFERS_INSERT: return "update-differs+insert";
    case CFLOOR_SELECT_COMPARE: return "select-compare";
    case CFLOOR_MULTIROW_UPSERT: return "multirow-upsert";
    case CFLOOR_SCAN_MULTIROW: return "scan+multirow";
    default: return "?";
    }
}

const char *cfloor_errmsg(cfloor_db *db) {
    return sqlite3_errmsg(db->handle);
}

void cfloor_close(cfloor_db *db) {
    if (db == NULL) return;
    sqlite3_close(db->handle);
    free(db);
}

int cfloor_query_text(const char *path, const char *sql, char *out, size_t out_size) {
    sqlite3 *handle = NULL;
    sqlite3_stmt *stmt = NULL;
    if (out_size) out[0] = '\0';
    int rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(handle, sql, -1, &stmt, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(stmt);
        if (rc == SQLITE_ROW) {
            const unsigned char *text = sqlite3_column_text(stmt, 0);
            snprintf(out, out_size, "%s", text ? (const char *)text : "");
            rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
            rc = SQLITE_EMPTY;
        }
    }
    sqlite3_finalize(stmt);
    sqlite3_close(handle);
    return rc;
}

const char *cfloor_sqlite_version(void) {
    return sqlite3_libversion();
}

/* ---- Many-to-many ------------------------------------------------------------------------------ */

/// One table's row writer: its prepared statements for one way of storing a row.
typedef struct row_writer {
    sqlite3 *handle;
    cfloor_links_strategy strategy;
    int column_count;
    sqlite3_stmt *main;     /* INSERT, the where-differs upsert, or SELECT ... WHERE key = ? */
    sqlite3_stmt *insert;   /* select-compare: INSERT of a missing row */
    sqlite3_stmt *update;   /* select-compare: UPDATE of a differing row */
} row_writer;

static int prepare(sqlite3 *handle, const sql_text *sql, sqlite3_stmt **stmt) {
    return sqlite3_prepare_v3(handle, sql->text, -1, SQLITE_PREPARE_PERSISTENT, stmt, NULL);
}

static int row_writer_open(row_writer *w, sqlite3 *handle, cfloor_links_strategy strategy, const cfloor_rows *rows,
                           column_names *names) {
    memset(w, 0, sizeof *w);
    w->handle = handle;
    w->strategy = strategy;
    w->column_count = rows->column_count;
    if (split_columns(rows->columns, names) != rows->column_count || rows->column_count < 2) return SQLITE_MISUSE;
    const cfloor_value *first_row = rows->row_count > 0 ? rows->values : NULL;
    sql_text main = { .length = 0 };
    int rc = SQLITE_OK;
    switch (strategy) {
    case CFLOOR_LINKS_INSERT: insert_sql(&main, rows->table, names, "INSERT"); break;
    case CFLOOR_LINKS_UPSERT_DIFFERS: upsert_sql(&main, rows->table, names, 1, first_row); break;
    case CFLOOR_LINKS_SELECT_COMPARE: {
        select_sql(&main, rows->table, names);
        sql_text insert = { .length = 0 }, update = { .length = 0 };
        insert_sql(&insert, rows->table, names, "INSERT");
        update_sql(&update, rows->table, names, 0, first_row);
        rc = prepare(handle, &insert, &w->insert);
        if (rc == SQLITE_OK) rc = prepare(handle, &update, &w->update);
        break;
    }
    default: return SQLITE_MISUSE;
    }
    if (rc == SQLITE_OK) rc = prepare(handle, &main, &w->main);
    return rc;
}

/// Stores one row; `changed` is 1 when it was inserted or changed.
static inline int row_writer_write(row_writer *w, const cfloor_value *row, int *changed) {
    const int n = w->column_count;
    int rc;
    *changed = 0;
    if (w->strategy != CFLOOR_LINKS_SELECT_COMPARE) {
        rc = bind_row(w->main, row, n, n);
        return rc == SQLITE_OK ? step_write(w->handle, w->main, changed) : rc;
    }
    rc = bind_row(w->main, row, 1, 1);
    if (rc != SQLITE_OK) return rc;
    int step = sqlite3_step(w->main);
    if (step == SQLITE_ROW) {
        int same = 1;
        for (int i = 1; i < n && same; i++) same = same_value(w->main, i - 1, &row[i]);
        rc = sqlite3_reset(w->main);
        if (rc != SQLITE_OK || same) return rc;
        rc = bind_row(w->update, row, n, n);
        return rc == SQLITE_OK ? step_write(w->handle, w->update, changed) : rc;
    }
    if (step != SQLITE_DONE) {
        sqlite3_reset(w->main);
        return step;
    }
    rc = sqlite3_reset(w->main);
    if (rc == SQLITE_OK) rc = bind_row(w->insert, row, n, n);
    return rc == SQLITE_OK ? step_write(w->handle, w->insert, changed) : rc;
}

static void row_writer_close(row_writer *w) {
    sqlite3_finalize(w->main);
    sqlite3_finalize(w->insert);
    sqlite3_finalize(w->update);
}

/// A set of integer keys (open addressing), for the distinct children that changed.
typedef struct key_set {
    int64_t *keys;
    unsigned char *used;
    size_t capacity;   /* a power of two */
    size_t count;
} key_set;

static inline size_t key_hash(int64_t key) {
    uint64_t z = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(z ^ (z >> 29));
}

/// Adds `key`; returns 0, or SQLITE_NOMEM.
static int key_set_add(key_set *set, int64_t key) {
    if ((set->count + 1) * 2 > set->capacity) {
        size_t capacity = set->capacity ? set->capacity * 2 : 1024;
        int64_t *keys = malloc(capacity * sizeof *keys);
        unsigned char *used = calloc(capacity, 1);
        if (keys == NULL || used == NULL) {
            free(keys);
            free(used);
            return SQLITE_NOMEM;
        }
        for (size_t i = 0; i < set->capacity; i++) {
            if (!set->used[i]) continue;
            size_t slot = key_hash(set->keys[i]) & (capacity - 1);
            while (used[slot]) slot = (slot + 1) & (capacity - 1);
            used[slot] = 1;
            keys[slot] = set->keys[i];
        }
        free(set->keys);
        free(set->used);
        set->keys = keys;
        set->used = used;
        set->capacity = capacity;
    }
    size_t slot = key_hash(key) & (set->capacity - 1);
    while (set->used[slot]) {
        if (set->keys[slot] == key) return SQLITE_OK;
        slot = (slot + 1) & (set->capacity - 1);
    }
    set->used[slot] = 1;
    set->keys[slot] = key;
    set->count++;
    return SQLITE_OK;
}

int cfloor_store_links(cfloor_db *db, cfloor_links_strategy strategy, cfloor_rows parents, cfloor_rows children,
                       const char *join_table, const char *parent_column, const char *child_column,
                       const int64_t *links, size_t links_per_parent, cfloor_links_result *result) {
    sqlite3 *handle = db->handle;
    memset(result, 0, sizeof *result);
    if (strategy < 0 || strategy >= CFLOOR_LINKS_STRATEGY_COUNT) return SQLITE_MISUSE;
    const int reindex = strategy == CFLOOR_LINKS_INSERT_REINDEX || strategy == CFLOOR_LINKS_UPSERT_DIFFERS_REINDEX;
    if (strategy == CFLOOR_LINKS_INSERT_REINDEX) strategy = CFLOOR_LINKS_INSERT;
    if (strategy == CFLOOR_LINKS_UPSERT_DIFFERS_REINDEX) strategy = CFLOOR_LINKS_UPSERT_DIFFERS;

    sql_text read_sql = { .length = 0 }, delete_sql = { .length = 0 }, link_sql = { .length = 0 };
    append(&read_sql, "SELECT \"%s\" FROM \"%s\" WHERE \"%s\" = ?1", child_column, join_table, parent_column);
    append(&delete_sql, "DELETE FROM \"%s\" WHERE \"%s\" = ?1 AND \"%s\" = ?2", join_table, parent_column, child_column);
    append(&link_sql, "INSERT INTO \"%s\" (\"%s\", \"%s\") VALUES (?1, ?2)", join_table, parent_column, child_column);

    int rc = sqlite3_exec(handle, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    /* Reindexing: the join table's secondary indexes, dropped now and created again before the commit. */
    enum { max_indexes = 8 };
    char *index_sql[max_indexes] = { NULL };
    int index_count = 0;
    if (reindex) {
        sqlite3_stmt *list = NULL;
        sql_text drop = { .length = 0 };
        rc = sqlite3_prepare_v2(handle, "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?1 "
                                "AND sql IS NOT NULL", -1, &list, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_bind_text(list, 1, join_table, -1, SQLITE_STATIC);
        while (rc == SQLITE_OK && index_count < max_indexes && sqlite3_step(list) == SQLITE_ROW) {
            index_sql[index_count] = strdup((const char *)sqlite3_column_text(list, 1));
            if (index_sql[index_count++] == NULL) rc = SQLITE_NOMEM;
            append(&drop, "DROP INDEX \"%s\";", (const char *)sqlite3_column_text(list, 0));
        }
        sqlite3_finalize(list);
        if (rc == SQLITE_OK && drop.length) rc = sqlite3_exec(handle, drop.text, NULL, NULL, NULL);
    }
    column_names parent_names, child_names;
    row_writer parent_writer = { 0 }, child_writer = { 0 };
    sqlite3_stmt *read = NULL, *unlink = NULL, *link = NULL;
    key_set changed_children = { 0 };
    /* The stored children of one parent (grows if a parent has many). */
    size_t stored_capacity = 64, stored_count = 0;
    int64_t *stored = malloc(stored_capacity * sizeof *stored);
    if (stored == NULL) rc = SQLITE_NOMEM;
    int rc_parent = rc == SQLITE_OK ? row_writer_open(&parent_writer, handle, strategy, &parents, &parent_names) : rc;
    int rc_child = rc == SQLITE_OK ? row_writer_open(&child_writer, handle, strategy, &children, &child_names) : rc;
    if (rc == SQLITE_OK) rc = rc_parent;
    if (rc == SQLITE_OK) rc = rc_child;
    if (rc == SQLITE_OK && strategy != CFLOOR_LINKS_INSERT) rc = prepare(handle, &read_sql, &read);
    if (rc == SQLITE_OK && strategy != CFLOOR_LINKS_INSERT) rc = prepare(handle, &delete_sql, &unlink);
    if (rc == SQLITE_OK) rc = prepare(handle, &link_sql, &link);

    /* The children, each once. */
    const int cn = children.column_count, pn = parents.column_count;
    for (size_t r = 0; rc == SQLITE_OK && r < children.row_count; r++) {
        const cfloor_value *row = children.values + r * (size_t)cn;
        int changed = 0;
        rc = row_writer_write(&child_writer, row, &changed);
        if (rc == SQLITE_OK && changed) rc = key_set_add(&changed_children, row[0].integer);
    }

    /* The parents, each followed by its links. */
    for (size_t p = 0; rc == SQLITE_OK && p < parents.row_count; p++) {
        const cfloor_value *row = parents.values + p * (size_t)pn;
        const int64_t parent = row[0].integer;
        const int64_t *wanted = links + p * links_per_parent;
        int changed = 0;
        rc = row_writer_write(&parent_writer, row, &changed);
        if (rc != SQLITE_OK) break;
        int links_changed = 0;
        stored_count = 0;
        if (read != NULL) {
            rc = sqlite3_bind_int64(read, 1, parent);
            int step = SQLITE_DONE;
            while (rc == SQLITE_OK && (step = sqlite3_step(read)) == SQLITE_ROW) {
                if (stored_count == stored_capacity) {
                    int64_t *grown = realloc(stored, stored_capacity * 2 * sizeof *stored);
                    if (grown == NULL) { rc = SQLITE_NOMEM; break; }
                    stored = grown;
                    stored_capacity *= 2;
                }
                stored[stored_count++] = sqlite3_column_int64(read, 0);
            }
            if (rc == SQLITE_OK && step != SQLITE_DONE) rc = step;
            int reset = sqlite3_reset(read);
            if (rc == SQLITE_OK) rc = reset;
            /* Unlink the stored children it no longer lists. */
            for (size_t s = 0; rc == SQLITE_OK && s < stored_count; s++) {
                int listed = 0;
                for (size_t w = 0; w < links_per_parent && !listed; w++) listed = wanted[w] == stored[s];
                if (listed) continue;
                rc = sqlite3_bind_int64(unlink, 1, parent);
                if (rc == SQLITE_OK) rc = sqlite3_bind_int64(unlink, 2, stored[s]);
                int deleted = 0;
                if (rc == SQLITE_OK) rc = step_write(handle, unlink, &deleted);
                if (rc == SQLITE_OK) rc = key_set_add(&changed_children, stored[s]);
                result->links_deleted += deleted;
                links_changed = 1;
            }
        }
        /* Link the listed children it does not have yet (each once). */
        for (size_t w = 0; rc == SQLITE_OK && w < links_per_parent; w++) {
            int known = 0;
            for (size_t s = 0; s < stored_count && !known; s++) known = stored[s] == wanted[w];
            for (size_t e = 0; e < w && !known; e++) known = wanted[e] == wanted[w];
            if (known) continue;
            rc = sqlite3_bind_int64(link, 1, parent);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int64(link, 2, wanted[w]);
            int inserted = 0;
            if (rc == SQLITE_OK) rc = step_write(handle, link, &inserted);
            if (rc == SQLITE_OK) rc = key_set_add(&changed_children, wanted[w]);
            result->links_inserted += inserted;
            links_changed = 1;
        }
        if (changed || links_changed) result->parents_changed++;
    }

    row_writer_close(&parent_writer);
    row_writer_close(&child_writer);
    sqlite3_finalize(read);
    sqlite3_finalize(unlink);
    sqlite3_finalize(link);
    free(stored);
    result->children_changed = (int64_t)changed_children.count;
    free(changed_children.keys);
    free(changed_children.used);
    for (int i = 0; i < index_count; i++) {
        if (rc == SQLITE_OK) rc = sqlite3_exec(handle, index_sql[i], NULL, NULL, NULL);
        free(index_sql[i]);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_exec(handle, "COMMIT", NULL, NULL, NULL);
    } else {
        sqlite3_exec(handle, "ROLLBACK", NULL, NULL, NULL);
    }
    return rc;
}

const char *cfloor_links_strategy_name(cfloor_links_strategy strategy) {
    switch (strategy) {
    case CFLOOR_LINKS_INSERT: return "insert";
    case CFLOOR_LINKS_UPSERT_DIFFERS: return "upsert-differs";
    case CFLOOR_LINKS_SELECT_COMPARE: return "select-compare";
    case CFLOOR_LINKS_INSERT_REINDEX: return "insert+reindex";
    case CFLOOR_LINKS_UPSERT_DIFFERS_REINDEX: return "upsert-differs+reindex";
    default: return "?";
    }
}
