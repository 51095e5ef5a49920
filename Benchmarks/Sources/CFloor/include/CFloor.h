#ifndef CFLOOR_H
#define CFLOOR_H

/// The C floor of the import benchmark: the fastest straightforward way to
/// upsert the benchmark's rows with SQLite's C API. One prepared statement,
/// one transaction, WAL, synchronous=NORMAL, values already in memory.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One benchmark row. Strings are UTF-8, not NUL-terminated (pointer + length).
typedef struct cfloor_item {
    int64_t id;
    const char *name;
    int32_t name_len;
    const char *email;
    int32_t email_len;
    const char *city;
    int32_t city_len;
    int64_t age;
    double score;
    int32_t active;      /* 0 or 1 */
    double created_at;   /* Unix seconds */
} cfloor_item;

/// Sums over the `items` table, to check that every implementation stored the same rows.
typedef struct cfloor_checksum {
    int64_t count;
    int64_t sum_id;
    int64_t sum_age;
    int64_t sum_active;
    double total_score;
    double total_created_at;
    int64_t length_name;
    int64_t length_email;
    int64_t length_city;
} cfloor_checksum;

typedef struct cfloor_db cfloor_db;

/// Opens (creating) the database at `path` in WAL mode with synchronous=NORMAL and
/// creates the `items` table if needed. Returns NULL on failure and writes a message to `error`.
cfloor_db *cfloor_open(const char *path, char *error, size_t error_size);

/// Upserts `count` items in one transaction with one prepared statement
/// (`INSERT ... ON CONFLICT(id) DO UPDATE SET ... WHERE <values differ>`).
/// Writes the number of rows inserted or changed to `changes`. Returns 0 or an SQLite error code.
int cfloor_upsert(cfloor_db *db, const cfloor_item *items, size_t count, int64_t *changes);

/// The last error message of `db`.
const char *cfloor_errmsg(cfloor_db *db);

/// Closes `db`.
void cfloor_close(cfloor_db *db);

/// The version of the SQLite library linked, e.g. `3.40.1`.
const char *cfloor_sqlite_version(void);

/// Computes the checksum of the `items` table of the database at `path`. Returns 0 or an SQLite error code.
int cfloor_checksum_file(const char *path, cfloor_checksum *out);

#ifdef __cplusplus
}
#endif

#endif
