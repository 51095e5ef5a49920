#!/bin/sh
# Old and new binaries in one session: runs two replica-bench binaries one after the other on this
# machine with the same options, keeps both JSON reports and prints them side by side with the new
# binary's `compare` (a Markdown table: each row's value in both, new ÷ old).
#
#     Benchmarks/Scripts/old_vs_new.sh OLD_BINARY NEW_BINARY [replica-bench options…]
#     Benchmarks/Scripts/old_vs_new.sh /work/old/Benchmarks/.build/release/replica-bench \
#         Benchmarks/.build/release/replica-bench --only import --runs 1
#
# The reports go to $OUT (default: the current folder) as old.json and new.json; progress goes to
# standard error, the table to standard output.
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 OLD_BINARY NEW_BINARY [replica-bench options…]" >&2
    exit 64
fi
old=$1
new=$2
shift 2
out=${OUT:-.}
mkdir -p "$out"
echo "[old_vs_new] old: $old $*" >&2
"$old" "$@" --json > "$out/old.json"
echo "[old_vs_new] new: $new $*" >&2
"$new" "$@" --json > "$out/new.json"
"$new" compare "$out/old.json" "$out/new.json"
