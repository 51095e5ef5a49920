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

/* ---- Binding and comparing ----------------------------------------------------------------- */

/// Binds `count` values to parameters ?1 ... ?count (the statement may use fewer).
static inline int bind_row(sqlite3_stmt *stmt, const cfloor_value *row, int count, int parameters) {
    int rc = SQLITE_OK;
    for (int i = 0; i < count && i < parameters && rc == SQLITE_OK; i++) {
        const cfloor_value *v = &row[i];
        switch (v->type) {
        case CFLOOR_INTEGER: rc = sqlite3_bind_int64(stmt, i + 1, v->integer); break;
        case CFLOOR_REAL: rc = sqlite3_bind_double(stmt, i + 1, v->real); break;
        case CFLOOR_TEXT: rc = sqlite3_bind_text(stmt, i + 1, v->bytes, v->length, SQLITE_STATIC); break;
        case CFLOOR_BLOB: rc = sqlite3_bind_blob(stmt, i + 1, v->bytes, v->length, SQLITE_STATIC); break;
        default: rc = sqlite3_bind_null(stmt, i + 1); break;
        }
    }
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
    default: return SQLITE_MISUSE;
    }
    /* SELECT_COMPARE's update of a differing row. */
    sql_text third = { .length = 0 };
    if (strategy == CFLOOR_SELECT_COMPARE) update_sql(&third, table, &names, 0, first_row);

    int rc = sqlite3_exec(handle, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_stmt *main_stmt = NULL, *second_stmt = NULL, *third_stmt = NULL;
    rc = sqlite3_prepare_v3(handle, first.text, -1, SQLITE_PREPARE_PERSISTENT, &main_stmt, NULL);
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
    default:
        rc = SQLITE_MISUSE;
    }
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
