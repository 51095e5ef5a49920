#!/bin/sh
# Old and new binaries in one session: runs two replica-bench binaries on this machine with the same
# options, keeps both JSON reports and prints them side by side with the new binary's `compare` (a
# Markdown table: each row's value in both, new ÷ old).
#
#     Benchmarks/Scripts/old_vs_new.sh OLD_BINARY NEW_BINARY [replica-bench options…]
#     Benchmarks/Scripts/old_vs_new.sh /work/old/Benchmarks/.build/release/replica-bench \
#         Benchmarks/.build/release/replica-bench --only import --runs 1
#
# By default the old binary runs everything, then the new one. With EACH set to a list of workloads,
# each workload runs with the old binary and at once with the new one (`--only W`), so that both
# figures of a row come from the same minutes of a noisy machine; each binary's reports are then
# joined with `replica-bench merge`:
#
#     EACH="route-lookup import import-links infer import-live commit-to-diff watch mock-server \
#           sync-pages sync-incremental import-postgres fleet" \
#         Benchmarks/Scripts/old_vs_new.sh OLD NEW
#
# The reports go to $OUT (default: the current folder) as old.json and new.json (with EACH, also
# old-W.json and new-W.json for each workload W); progress goes to standard error, the table to
# standard output. The new report can be written into the READMEs with `replica-bench readme new.json`.
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
if [ -z "${EACH:-}" ]; then
    echo "[old_vs_new] old: $old $*" >&2
    "$old" "$@" --json > "$out/old.json"
    echo "[old_vs_new] new: $new $*" >&2
    "$new" "$@" --json > "$out/new.json"
else
    olds=""
    news=""
    for workload in $EACH; do
        echo "[old_vs_new] $workload, old: $old --only $workload $*" >&2
        "$old" --only "$workload" "$@" --json > "$out/old-$workload.json"
        echo "[old_vs_new] $workload, new: $new --only $workload $*" >&2
        "$new" --only "$workload" "$@" --json > "$out/new-$workload.json"
        olds="$olds $out/old-$workload.json"
        news="$news $out/new-$workload.json"
    done
    # shellcheck disable=SC2086 # the lists are paths without spaces, split on purpose
    "$new" merge $olds > "$out/old.json"
    # shellcheck disable=SC2086
    "$new" merge $news > "$out/new.json"
fi
"$new" compare "$out/old.json" "$out/new.json"
