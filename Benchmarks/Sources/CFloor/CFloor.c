#include "CFloor.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cfloor_db {
    sqlite3 *handle;
};

/* The table Replica creates for the benchmark schema. */
static const char *create_sql =
    "CREATE TABLE IF NOT EXISTS \"items\" (\"id\" INTEGER NOT NULL PRIMARY KEY, \"name\" TEXT, "
    "\"email\" TEXT, \"city\" TEXT, \"age\" INTEGER, \"score\" REAL, \"active\" INTEGER, \"createdAt\" REAL)";

static const char *upsert_sql =
    "INSERT INTO \"items\" (\"id\", \"name\", \"email\", \"city\", \"age\", \"score\", \"active\", \"createdAt\") "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT(\"id\") DO UPDATE SET \"name\" = excluded.\"name\", \"email\" = excluded.\"email\", "
    "\"city\" = excluded.\"city\", \"age\" = excluded.\"age\", \"score\" = excluded.\"score\", "
    "\"active\" = excluded.\"active\", \"createdAt\" = excluded.\"createdAt\" "
    "WHERE \"name\" IS NOT excluded.\"name\" OR \"email\" IS NOT excluded.\"email\" "
    "OR \"city\" IS NOT excluded.\"city\" OR \"age\" IS NOT excluded.\"age\" "
    "OR \"score\" IS NOT excluded.\"score\" OR \"active\" IS NOT excluded.\"active\" "
    "OR \"createdAt\" IS NOT excluded.\"createdAt\"";

cfloor_db *cfloor_open(const char *path, char *error, size_t error_size) {
    sqlite3 *handle = NULL;
    int rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(handle, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(handle, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(handle, create_sql, NULL, NULL, NULL);
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

int cfloor_upsert(cfloor_db *db, const cfloor_item *items, size_t count, int64_t *changes) {
    sqlite3 *handle = db->handle;
    sqlite3_stmt *stmt = NULL;
    int64_t changed = 0;
    int rc = sqlite3_exec(handle, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_prepare_v3(handle, upsert_sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < count; i++) {
        const cfloor_item *item = &items[i];
        sqlite3_bind_int64(stmt, 1, item->id);
        sqlite3_bind_text(stmt, 2, item->name, item->name_len, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 3, item->email, item->email_len, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 4, item->city, item->city_len, SQLITE_STATIC);
        sqlite3_bind_int64(stmt, 5, item->age);
        sqlite3_bind_double(stmt, 6, item->score);
        sqlite3_bind_int(stmt, 7, item->active);
        sqlite3_bind_double(stmt, 8, item->created_at);
        rc = sqlite3_step(stmt);
        if (rc == SQLITE_DONE) {
            changed += sqlite3_changes(handle);
            rc = sqlite3_reset(stmt);
        }
    }
    sqlite3_finalize(stmt);
    if (rc == SQLITE_OK) {
        rc = sqlite3_exec(handle, "COMMIT", NULL, NULL, NULL);
    } else {
        sqlite3_exec(handle, "ROLLBACK", NULL, NULL, NULL);
    }
    *changes = changed;
    return rc;
}

const char *cfloor_errmsg(cfloor_db *db) {
    return sqlite3_errmsg(db->handle);
}

void cfloor_close(cfloor_db *db) {
    if (db == NULL) return;
    sqlite3_close(db->handle);
    free(db);
}

int cfloor_checksum_file(const char *path, cfloor_checksum *out) {
    sqlite3 *handle = NULL;
    sqlite3_stmt *stmt = NULL;
    memset(out, 0, sizeof *out);
    int rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_prepare_v2(handle,
            "SELECT count(*), sum(\"id\"), sum(\"age\"), sum(\"active\"), total(\"score\"), total(\"createdAt\"), "
            "sum(length(\"name\")), sum(length(\"email\")), sum(length(\"city\")) FROM \"items\"",
            -1, &stmt, NULL);
    }
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(stmt);
        if (rc == SQLITE_ROW) {
            out->count = sqlite3_column_int64(stmt, 0);
            out->sum_id = sqlite3_column_int64(stmt, 1);
            out->sum_age = sqlite3_column_int64(stmt, 2);
            out->sum_active = sqlite3_column_int64(stmt, 3);
            out->total_score = sqlite3_column_double(stmt, 4);
            out->total_created_at = sqlite3_column_double(stmt, 5);
            out->length_name = sqlite3_column_int64(stmt, 6);
            out->length_email = sqlite3_column_int64(stmt, 7);
            out->length_city = sqlite3_column_int64(stmt, 8);
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(stmt);
    sqlite3_close(handle);
    return rc;
}

const char *cfloor_sqlite_version(void) {
    return sqlite3_libversion();
}
