#!/usr/bin/env bash
# The pool's last target: the write path unchanged by the pool of workers. Runs
# bench/callgrind.sh (instruction counts, deterministic) for two builds, each
# installed in a private copy of PostgreSQL so that neither replaces the other's
# flownode.so: the commit before the pool was merged (the first parent of the merge
# "Merge branch 'pool'", or BASE given) and this tree. Writes both callgrind.md
# files and bench/results/pool_callgrind.md: every case's instructions in both
# builds, the flow / no-flow ratio of each, and how far today's ratio is from the
# base's (target: within 1 %).
#
#   bash bench/pool_callgrind.sh [BASE_COMMIT]     (as root; about 15 minutes on 2 cores)
#   POOL_BASE_PG=/opt/pg-poolbase POOL_TODAY_PG=/opt/pg-poolbench   (the copies; these defaults)
#   CALLGRIND_ROWS / CALLGRIND_MULTI_ROWS / CALLGRIND_TX: sizes (default: make bench's)
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../test/common.sh
. "$BENCH/../test/common.sh"
[[ $(id -u) -eq 0 ]] || fn_die "run as root"

base=${1:-}
if [[ -z $base ]]; then
  merge=$(git -C "$FN_ROOT" log --merges --format='%H %s' | awk '$2 == "Merge" && $3 == "branch" && $4 == "'"'pool'"'" && !found {print $1; found = 1}')
  [[ -n $merge ]] || fn_die "no merge \"Merge branch 'pool'\" in the history; give the base commit"
  base=$(git -C "$FN_ROOT" rev-parse "$merge^1")
fi
base=$(git -C "$FN_ROOT" rev-parse --short "$base")
today=$(git -C "$FN_ROOT" rev-parse --short HEAD)
if [[ -n $(git -C "$FN_ROOT" status --porcelain -- src include sql) ]]; then today="$today+changes"; fi
export CALLGRIND_ROWS=${CALLGRIND_ROWS:-20000} CALLGRIND_MULTI_ROWS=${CALLGRIND_MULTI_ROWS:-5000} CALLGRIND_TX=${CALLGRIND_TX:-1000}
OUT="$BENCH/results/pool_callgrind"
mkdir -p "$OUT"

fn_install_deps
src="$(mktemp -d /tmp/flownode-poolbase.XXXXXX)"
trap 'rm -rf "$src"' EXIT
git -C "$FN_ROOT" archive "$base" | tar -x -C "$src"

# measure NAME TREE PG_COPY: build TREE into the copy, then callgrind.sh against it
measure() {
  local name=$1 tree=$2 pgc
  pgc=$(bash "$FN_ROOT/test/private_pg.sh" "$3")
  fn_log "$name: building $tree into $3"
  (cd "$tree" && make -s -j2 PG_CONFIG="$pgc" >/dev/null && make -s install PG_CONFIG="$pgc" >/dev/null) \
    || fn_die "build of $name failed"
  make -s -C "$BENCH" PG_CONFIG="$pgc" bins >/dev/null
  fn_log "$name: callgrind.sh ($CALLGRIND_ROWS COPY rows, $CALLGRIND_MULTI_ROWS multi-row rows, $CALLGRIND_TX transactions)"
  PG_CONFIG="$pgc" FN_BENCH_NO_BUILD=1 CALLGRIND_RESULTS="$OUT/$name" bash "$BENCH/callgrind.sh" >"$OUT/$name.log" 2>&1 \
    || { tail -20 "$OUT/$name.log" >&2; fn_die "callgrind.sh failed for $name"; }
}
measure base "$src" "${POOL_BASE_PG:-/opt/pg-poolbase}"
measure today "$FN_ROOT" "${POOL_TODAY_PG:-/opt/pg-poolbench}"
python3 "$BENCH/report_pool_cg.py" "$OUT/base/raw/callgrind.tsv" "$OUT/today/raw/callgrind.tsv" "$base" "$today" \
  | tee "$BENCH/results/pool_callgrind.md"
