#!/usr/bin/env python3
"""Python baseline of replica-bench's import workload.

    python3 import_baseline.py SHAPE FIRST.json SECOND.json DIRECTORY CHECKSUM_SQL

SHAPE is `items` (8 fields) or `people` (Schemas/people.json's Person). Three passes,
each timed whole (json.load of the file, rows built, one executemany of the
where-differs upsert, commit): FIRST into an empty database, SECOND (every row
updated), SECOND again (nothing changes). Prints one JSON line:
{"seconds": {...}, "counts": {...}, "checksum": "..."} where the checksum is
CHECKSUM_SQL's one text value (the query every implementation runs), and
deletes DIRECTORY.
"""
import base64
import json
import os
import shutil
import sqlite3
import sys
import time
from datetime import datetime


def upsert(table, columns):
    """INSERT ... ON CONFLICT(id) DO UPDATE SET ... WHERE <values differ>, as the C floor's."""
    quoted = ['"%s"' % c for c in columns]
    rest = quoted[1:]
    return ('INSERT INTO "%s" (%s) VALUES (%s) ON CONFLICT(%s) DO UPDATE SET %s WHERE %s'
            % (table, ", ".join(quoted), ", ".join("?" * len(columns)), quoted[0],
               ", ".join("%s = excluded.%s" % (c, c) for c in rest),
               " OR ".join("%s IS NOT excluded.%s" % (c, c) for c in rest)))


def item_rows(objects):
    return [(o["id"], o["name"], o["email"], o["city"], o["age"], o["score"], o["active"],
             datetime.fromisoformat(o["created_at"]).timestamp()) for o in objects]


def person_rows(objects):
    return [(o["id"], o["name"], o["numberOfKids"], o["kilometersWalked"],
             None if o["avatar"] is None else base64.b64decode(o["avatar"])) for o in objects]


SHAPES = {
    "items": (
        'CREATE TABLE IF NOT EXISTS "items" ("id" INTEGER NOT NULL PRIMARY KEY, "name" TEXT, "email" TEXT, '
        '"city" TEXT, "age" INTEGER, "score" REAL, "active" INTEGER, "createdAt" REAL)',
        upsert("items", ["id", "name", "email", "city", "age", "score", "active", "createdAt"]),
        item_rows,
    ),
    "people": (
        'CREATE TABLE IF NOT EXISTS "people" ("id" INTEGER NOT NULL PRIMARY KEY, "name" TEXT, '
        '"numberOfKids" INTEGER, "kilometersWalked" REAL, "avatar" BLOB)',
        upsert("people", ["id", "name", "numberOfKids", "kilometersWalked", "avatar"]),
        person_rows,
    ),
}


def import_file(connection, path, statement, rows_of):
    with open(path, "rb") as file:
        objects = json.load(file)
    cursor = connection.executemany(statement, rows_of(objects))
    changes = cursor.rowcount
    connection.commit()
    return changes


def main():
    shape, first, second, directory, checksum_sql = sys.argv[1:6]
    create, statement, rows_of = SHAPES[shape]
    os.makedirs(directory, exist_ok=True)
    try:
        connection = sqlite3.connect(os.path.join(directory, "bench.sqlite"))
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute(create)
        connection.commit()
        seconds, counts = {}, {}
        for key, path in (("pass1", first), ("pass2", second), ("pass3", second)):
            start = time.perf_counter()
            counts[key + ".changes"] = import_file(connection, path, statement, rows_of)
            seconds[key] = time.perf_counter() - start
        checksum = connection.execute(checksum_sql).fetchone()[0]
        connection.close()
        print(json.dumps({"seconds": seconds, "counts": counts, "checksum": checksum}))
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
