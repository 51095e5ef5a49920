#!/usr/bin/env python3
"""Python baseline of replica-bench's import workload.

    python3 import_baseline.py FIRST.json SECOND.json DIRECTORY

Three passes, each timed whole (json.load of the file, rows built, one
executemany upsert, commit): FIRST into an empty database, SECOND (every row
updated), SECOND again (nothing changes). Prints one JSON line:
{"seconds": {...}, "counts": {...}, "checksum": "..."} and deletes DIRECTORY.
"""
import json
import os
import shutil
import sqlite3
import sys
import time
from datetime import datetime

CREATE = ('CREATE TABLE IF NOT EXISTS "items" ("id" INTEGER NOT NULL PRIMARY KEY, "name" TEXT, "email" TEXT, '
          '"city" TEXT, "age" INTEGER, "score" REAL, "active" INTEGER, "createdAt" REAL)')
UPSERT = ('INSERT INTO "items" ("id", "name", "email", "city", "age", "score", "active", "createdAt") '
          'VALUES (?, ?, ?, ?, ?, ?, ?, ?) '
          'ON CONFLICT("id") DO UPDATE SET "name" = excluded."name", "email" = excluded."email", '
          '"city" = excluded."city", "age" = excluded."age", "score" = excluded."score", '
          '"active" = excluded."active", "createdAt" = excluded."createdAt" '
          'WHERE "name" IS NOT excluded."name" OR "email" IS NOT excluded."email" '
          'OR "city" IS NOT excluded."city" OR "age" IS NOT excluded."age" '
          'OR "score" IS NOT excluded."score" OR "active" IS NOT excluded."active" '
          'OR "createdAt" IS NOT excluded."createdAt"')
CHECKSUM = ('SELECT count(*), sum("id"), sum("age"), sum("active"), total("score"), total("createdAt"), '
            'sum(length("name")), sum(length("email")), sum(length("city")) FROM "items"')


def import_file(connection, path):
    with open(path, "rb") as file:
        objects = json.load(file)
    rows = [(o["id"], o["name"], o["email"], o["city"], o["age"], o["score"], o["active"],
             datetime.fromisoformat(o["created_at"]).timestamp()) for o in objects]
    cursor = connection.executemany(UPSERT, rows)
    changes = cursor.rowcount
    connection.commit()
    return changes


def main():
    first, second, directory = sys.argv[1:4]
    os.makedirs(directory, exist_ok=True)
    try:
        connection = sqlite3.connect(os.path.join(directory, "bench.sqlite"))
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute(CREATE)
        connection.commit()
        seconds, counts = {}, {}
        for key, path in (("pass1", first), ("pass2", second), ("pass3", second)):
            start = time.perf_counter()
            counts[key + ".changes"] = import_file(connection, path)
            seconds[key] = time.perf_counter() - start
        n, ids, age, active, score, created, name, email, city = connection.execute(CHECKSUM).fetchone()
        checksum = ("n=%d id=%d age=%d active=%d score=%.3f created=%.1f name=%d email=%d city=%d"
                    % (n, ids, age, active, score, created, name, email, city))
        connection.close()
        print(json.dumps({"seconds": seconds, "counts": counts, "checksum": checksum}))
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
