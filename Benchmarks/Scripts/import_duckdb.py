#!/usr/bin/env python3
"""DuckDB row of replica-bench's import workload: read_json_auto into DuckDB's own table.

    python import_duckdb.py SHAPE FIRST.json SECOND.json DIRECTORY COUNTS_SQL

SHAPE is `items` or `people` (the table's name). Runs with the benchmark's own virtual
environment (Benchmarks/.venv, `duckdb` from Scripts/competitors-requirements.txt). The
database is a DuckDB file in DIRECTORY, opened before timing starts. Three passes, each one
statement in DuckDB's autocommit, timed from the call to its return:

1. FIRST into an empty database, as a DuckDB user loads a file:
   CREATE TABLE t AS SELECT * FROM read_json_auto(FIRST), then
   ALTER TABLE t ADD PRIMARY KEY (id) (both timed: the key is what passes 2 and 3 need);
2. SECOND: INSERT INTO t SELECT * FROM read_json_auto(SECOND)
   ON CONFLICT (id) DO UPDATE SET c = excluded.c, ... WHERE c IS DISTINCT FROM excluded.c OR ...
   (every row changes);
3. SECOND again, the same statement (nothing changes, so nothing is written).

Prints one JSON line: {"seconds": {...}, "counts": {...}, "checksum": "..."}; counts hold each
pass's affected rows as DuckDB reports them; the checksum is COUNTS_SQL's one text value
(row count and sums of integer columns, comparable with Replica's). Deletes DIRECTORY.
"""
import json
import os
import shutil
import sys
import time

import duckdb


def quote(name):
    return '"%s"' % name.replace('"', '""')


def literal(text):
    return "'%s'" % text.replace("'", "''")


def main():
    shape, first, second, directory, counts_sql = sys.argv[1:6]
    table = quote(shape)
    os.makedirs(directory, exist_ok=True)
    try:
        connection = duckdb.connect(os.path.join(directory, "bench.duckdb"))
        seconds, counts = {}, {}

        start = time.perf_counter()
        created = connection.execute(
            "CREATE TABLE %s AS SELECT * FROM read_json_auto(%s)" % (table, literal(first))).fetchone()
        connection.execute("ALTER TABLE %s ADD PRIMARY KEY (\"id\")" % table)
        seconds["pass1"] = time.perf_counter() - start
        counts["pass1.changes"] = created[0] if created else -1

        columns = [row[0] for row in connection.execute("DESCRIBE %s" % table).fetchall()]
        rest = [quote(c) for c in columns if c != "id"]
        upsert = ("INSERT INTO %s SELECT * FROM read_json_auto(%s) ON CONFLICT (\"id\") DO UPDATE SET %s WHERE %s"
                  % (table, literal(second), ", ".join("%s = excluded.%s" % (c, c) for c in rest),
                     " OR ".join("%s IS DISTINCT FROM excluded.%s" % (c, c) for c in rest)))
        for key in ("pass2", "pass3"):
            start = time.perf_counter()
            changed = connection.execute(upsert).fetchone()
            seconds[key] = time.perf_counter() - start
            counts[key + ".changes"] = changed[0] if changed else -1

        checksum = connection.execute(counts_sql).fetchone()[0]
        connection.close()
        print(json.dumps({"seconds": seconds, "counts": counts, "checksum": checksum}))
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
