#!/usr/bin/env python3
"""dlt row of replica-bench's sync-offset workload: dlt's rest_api source into DuckDB.

    python sync_dlt.py BASE_URL DIRECTORY [LIMIT]

Runs with the benchmark's own virtual environment (Benchmarks/.venv, `dlt` and `duckdb` from
Scripts/competitors-requirements.txt). Syncs GET BASE_URL/items, offset pages with a total
(`{"items": [...], "total": T, "offset": N, "limit": M}`, the mock server's `offset` style), as
a dlt user declares it: a rest_api source whose client has dlt's offset paginator
(`offset`/`limit` parameters, LIMIT objects a page, default 100, `total_path` "total") and one
resource, `items` (data selector `items`, primary key `id`, write disposition `replace`: the
table holds the collection as it stands, as Replica's stale deletion keeps it), run by a
pipeline into a DuckDB file in DIRECTORY. dlt asks for the pages one after the other.

The runner times this process from its start to its exit (Python's start-up and dlt's import
included, as its user waits for them). The script's own clock splits that into dlt's import,
the pipeline's extract (the HTTP pages), normalize and load steps.

Prints one JSON line: {"seconds": {...}, "counts": {"rows": N}, "checksum": "n=… id=…"}, the
counts and checksum read back from the DuckDB file. dlt's telemetry is off and its pipeline
folder is inside DIRECTORY, which is deleted at the end.
"""
import json
import os
import shutil
import sys
import time

STARTED = time.perf_counter()


def main():
    base_url, directory = sys.argv[1:3]
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    os.makedirs(directory, exist_ok=True)
    # No telemetry (no network but the mock server's), and nothing written outside DIRECTORY.
    os.environ["RUNTIME__DLTHUB_TELEMETRY"] = "false"
    os.environ["DLT_DATA_DIR"] = os.path.join(directory, "dlt-data")
    os.environ["DLT_PROJECT_DIR"] = directory
    try:
        seconds = {}
        start = time.perf_counter()
        import dlt
        from dlt.sources.rest_api import rest_api_source
        seconds["import"] = time.perf_counter() - start

        source = rest_api_source({
            "client": {
                "base_url": base_url,
                "paginator": {
                    "type": "offset",
                    "limit": limit,
                    "offset_param": "offset",
                    "limit_param": "limit",
                    "total_path": "total",
                },
            },
            "resources": [{
                "name": "items",
                "primary_key": "id",
                "write_disposition": "replace",
                "endpoint": {"path": "items", "data_selector": "items"},
            }],
        })
        database = os.path.join(directory, "sync.duckdb")
        pipeline = dlt.pipeline(
            pipeline_name="replica_bench_sync_offset",
            destination=dlt.destinations.duckdb(database),
            dataset_name="bench",
            pipelines_dir=os.path.join(directory, "pipelines"),
        )
        start = time.perf_counter()
        pipeline.extract(source)
        seconds["extract"] = time.perf_counter() - start
        start = time.perf_counter()
        pipeline.normalize()
        seconds["normalize"] = time.perf_counter() - start
        start = time.perf_counter()
        pipeline.load()
        seconds["load"] = time.perf_counter() - start

        import duckdb
        connection = duckdb.connect(database, read_only=True)
        rows, ids = connection.execute("SELECT count(*), sum(id) FROM bench.items").fetchone()
        connection.close()
        seconds["script"] = time.perf_counter() - STARTED
        print(json.dumps({"seconds": seconds, "counts": {"rows": rows},
                          "checksum": "n=%d id=%d" % (rows, ids or 0)}))
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
