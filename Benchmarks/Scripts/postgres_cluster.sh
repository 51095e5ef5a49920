#!/bin/sh
# A throwaway PostgreSQL cluster for the import-postgres and fleet benchmarks.
#
#   postgres_cluster.sh start DIR    initdb in DIR (as the postgres user when run as root),
#                                    pg_ctl on a free loopback port, trust auth; prints the
#                                    server's URL, postgres://postgres@127.0.0.1:PORT
#   postgres_cluster.sh stop DIR     stops it and removes DIR
#
# The server keeps PostgreSQL's default durability settings (fsync on): Replica and the psql
# floor run against the same server, one after the other.
set -eu
command=${1:?usage: postgres_cluster.sh start|stop DIR}
dir=${2:?usage: postgres_cluster.sh start|stop DIR}

bin=""
for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
    if [ -x "$candidate/initdb" ]; then bin=$candidate; break; fi
done
if [ -z "$bin" ]; then
    bin=$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")
fi
[ -x "$bin/initdb" ] || { echo "postgres_cluster.sh: initdb not found (apt-get install postgresql)" >&2; exit 1; }

as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case $command in
start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown -R postgres "$dir"
    as_postgres "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.out" 2>&1 \
        || { cat "$dir/initdb.out" >&2; exit 1; }
    for attempt in 1 2 3 4 5; do
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
        if as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200" start >"$dir/pg_ctl.out" 2>&1; then
            echo "postgres://postgres@127.0.0.1:$port"
            exit 0
        fi
    done
    cat "$dir/pg_ctl.out" "$dir/server.log" >&2
    exit 1
    ;;
stop)
    as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
*)
    echo "usage: postgres_cluster.sh start|stop DIR" >&2
    exit 2
    ;;
esac
