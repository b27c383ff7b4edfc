#!/usr/bin/env bash
# Instruction counts of the write path under valgrind's callgrind: deterministic,
# unlike wall-clock time on a shared machine. `make -C bench callgrind` (a few
# minutes; `make bench` runs it last). Run as root on Debian 12.
#
# A throwaway cluster gets three tables (no flow, one flow, five flows: the flows
# of the ingest sections, eval_interval 1 day). Then, with the server stopped, a single-user
# backend runs under callgrind: COPY of N rows (in time order, then scattered over
# a year) into each table, and a loop of single-row transactions (a new window each
# commit, then the same window; and, no flow against one flow, in time order and at
# random times within one day, the targets of the benchmark). Only the statement is counted
# (--toggle-collect: parse, analysis, planning, execution and commit). Writes
# results/callgrind.md: instructions per row (COPY, multi-row) or
# per transaction, the flow's extra over the baseline, and the functions that make
# up the extra (inclusive counts, flow minus baseline).
#
# Partitioned sources: two tables partitioned by range on ts with a daily partition
# for every day of 2024 and a default partition (no flow, and the first flow), get
# the same COPYs through the parent (target: at most 1.05x).
#
# Key marks (docs/internals.md §3, *Key marks*): a daily flow per host over three more
# tables: no flow (cg_kb), the flow created with flownode.key_marks_per_window = 0
# (cg_k0: no key triggers) and with 64 (cg_k1: its key triggers); the writer runs with
# 64. COPY of N rows and single-row transactions, into the open window (today: the
# common case, streaming ingest; marked whole, as without keys) and late, into one
# closed day of 2024 over 10 hosts (key marks recorded). The flows of the other tables
# are created with the setting at 0: they measure flows without key marks.
# CALLGRIND_ONLY=partitioned or CALLGRIND_ONLY=keys runs only that case, and prints
# its table without writing results/callgrind.md.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../test/common.sh
. "$BENCH/../test/common.sh"
[[ $(id -u) -eq 0 ]] || fn_die "run as root"

N=${CALLGRIND_ROWS:-50000}      # COPY
ONLY=${CALLGRIND_ONLY:-}         # "partitioned" or "keys": that case alone
M=${CALLGRIND_MULTI_ROWS:-10000} # multi-row INSERT
TX=${CALLGRIND_TX:-2000}
# CALLGRIND_RESULTS: where callgrind.md and raw/callgrind.tsv go (bench/pool_callgrind.sh
# measures two builds side by side without writing over the committed results)
RESULTS=${CALLGRIND_RESULTS:-$BENCH/results}
# FN_BENCH_NO_BUILD=1 (set by run.sh): measure what run.sh built and installed
if [[ -z ${FN_BENCH_NO_BUILD:-} ]]; then
  fn_install_deps
  fn_build_install
  make -s -C "$BENCH" bins >/dev/null
fi
# shellcheck source=callgrind_lib.sh
. "$BENCH/callgrind_lib.sh"
cg_require

DIR="$(fn_workdir)"
PORT="$(fn_free_port)"
OUT="$DIR/callgrind" # profiles (MBs): kept only while this runs
mkdir -p "$OUT" "$RESULTS/raw"
chown postgres: "$OUT"
trap 'fn_stop_cluster_quiet "$DIR"; rm -rf "$DIR"' EXIT
fn_start_cluster "$DIR" "$PORT"
sql() { fn_psql "$DIR" "$PORT" -qtA "$@"; }
CONN="host=$DIR port=$PORT dbname=postgres user=postgres"

q1="SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, count(*) AS n, sum(v) AS sum_v, max(v) AS max_v FROM %s GROUP BY 1, 2"
q2="SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, count(*) AS n, avg(v) AS avg_v FROM %s GROUP BY 1"
q3="SELECT date_bin('5 minutes', ts, timestamptz '2000-01-01') AS w, host, min(v) AS min_v, max(v) AS max_v FROM %s GROUP BY 1, 2"
q4="SELECT date_trunc('hour', ts) AS hour, host, count(*) AS n, sum(v) AS sum_v FROM %s GROUP BY 1, 2"
q5="SELECT date_trunc('day', ts) AS day, count(*) AS n, max(v) AS max_v FROM %s GROUP BY 1"
qk="SELECT date_trunc('day', ts) AS day, host, count(*) AS n, sum(v) AS sum_v, max(v) AS max_v FROM %s GROUP BY 1, 2"
{
  echo "CREATE EXTENSION flownode;"
  for t in cg_base cg_f1 cg_f5; do
    echo "CREATE TABLE $t (ts timestamptz NOT NULL, host text NOT NULL, v float8 NOT NULL) WITH (autovacuum_enabled = off);"
    echo "CREATE INDEX ON $t (ts);"
  done
  # partitioned: a partition per day of 2024 (the data's span) and a default one
  for t in cg_pbase cg_pf1; do
    echo "CREATE TABLE $t (ts timestamptz NOT NULL, host text NOT NULL, v float8 NOT NULL) PARTITION BY RANGE (ts);"
    echo "CREATE INDEX ON $t (ts);"
    echo "SELECT format('CREATE TABLE %I PARTITION OF $t FOR VALUES FROM (%L) TO (%L) WITH (autovacuum_enabled = off)',
                 '${t}_' || to_char(d, 'MMDD'), d, d + interval '1 day')
            FROM generate_series(timestamptz '2024-01-01 00:00+00', '2024-12-31 00:00+00', interval '1 day') d \\gexec"
    echo "CREATE TABLE ${t}_default PARTITION OF $t DEFAULT WITH (autovacuum_enabled = off);"
  done
  for t in cg_kb cg_k0 cg_k1; do
    echo "CREATE TABLE $t (ts timestamptz NOT NULL, host text NOT NULL, v float8 NOT NULL) WITH (autovacuum_enabled = off);"
    echo "CREATE INDEX ON $t (ts);"
    cat <<EOF
CREATE PROCEDURE loop_$t(n int, mode text) LANGUAGE plpgsql AS \$\$
BEGIN
  FOR i IN 1..n LOOP
    -- open: today, 0.6 s apart (the open window); late: one day of 2024, over 10 hosts
    INSERT INTO $t (ts, host, v) VALUES (CASE mode
      WHEN 'open' THEN date_trunc('day', now()) + i * interval '600 milliseconds'
      ELSE timestamptz '2024-06-01 00:00:00+00' + i * interval '600 milliseconds' END, 'host-' || i % 10, 1.5);
    COMMIT;
  END LOOP;
END \$\$;
EOF
  done
  # the same daily flow without key triggers (cg_k0) and with them (cg_k1)
  # shellcheck disable=SC2059
  printf "SET flownode.key_marks_per_window = 0;\nSELECT flownode.create_flow('cg_k0', 'cg_k0_s', \$q\$%s\$q\$, eval_interval => '1 day');\n" "$(printf "$qk" cg_k0)"
  # shellcheck disable=SC2059
  printf "SET flownode.key_marks_per_window = 64;\nSELECT flownode.create_flow('cg_k1', 'cg_k1_s', \$q\$%s\$q\$, eval_interval => '1 day');\n" "$(printf "$qk" cg_k1)"
  # the other tables' flows without key triggers (key marks are on by default): their
  # cases measure the write path of flows that do not use key marks, against older
  # builds too (pool_callgrind.sh); what key marks cost is the cg_k* cases' table
  echo "SET flownode.key_marks_per_window = 0;"
  k=0
  for q in "$q1" "$q2" "$q3" "$q4" "$q5"; do
    k=$((k + 1))
    # shellcheck disable=SC2059
    printf "SELECT flownode.create_flow('cg_f5_%d', 'cg_f5_s%d', \$q\$%s\$q\$, eval_interval => '1 day');\n" "$k" "$k" "$(printf "$q" cg_f5)"
  done
  # shellcheck disable=SC2059
  printf "SELECT flownode.create_flow('cg_f1_1', 'cg_f1_s1', \$q\$%s\$q\$, eval_interval => '1 day');\n" "$(printf "$q1" cg_f1)"
  # shellcheck disable=SC2059
  printf "SELECT flownode.create_flow('cg_pf1_1', 'cg_pf1_s1', \$q\$%s\$q\$, eval_interval => '1 day');\n" "$(printf "$q1" cg_pf1)"
  for t in cg_base cg_f1 cg_f5; do
    cat <<EOF
CREATE PROCEDURE loop_$t(n int, mode text) LANGUAGE plpgsql AS \$\$
BEGIN
  PERFORM setseed(0.42);
  FOR i IN 1..n LOOP
    -- newwin: a random minute over 190 years (a new window, a record, every commit);
    -- samewin: always the same minute; inorder: 0.6 s apart (100 per window);
    -- day: random times within one day (1,440 windows)
    INSERT INTO $t (ts, host, v) VALUES (CASE mode
      WHEN 'samewin' THEN timestamptz '2000-01-01 00:00:00+00' + 12345678 * interval '1 minute'
      WHEN 'newwin' THEN timestamptz '2000-01-01 00:00:00+00' + (random() * 100000000)::bigint * interval '1 minute'
      WHEN 'inorder' THEN timestamptz '2024-06-01 00:00:00+00' + i * interval '600 milliseconds'
      ELSE timestamptz '2024-06-01 00:00:00+00' + (random() * 86400000)::bigint * interval '1 millisecond' END,
      'host-1', 1.5);
    COMMIT;
  END LOOP;
END \$\$;
EOF
  done
} | sql >/dev/null
# the input files, written by the server itself: COPY data, and multi-row
# statements (1,000 rows each, a placeholder for the table) of the first M rows
for order in inorder scattered; do
  [[ $ONLY == keys ]] && break
  "$BENCH/bin/fnbench" copy "$CONN" cg_base "$N" "$order" 1 >/dev/null
  sql -c "COPY cg_base TO '$DIR/$order.csv'"
  sql -c "SELECT 'INSERT INTO TBL (ts, host, v) VALUES ' || string_agg(format('(%L,%L,%s)', ts, host, v), ',') || ';'
            FROM (SELECT *, (row_number() OVER () - 1) / 1000 AS g FROM (SELECT * FROM cg_base LIMIT $M) l) x
           GROUP BY g ORDER BY g" >"$DIR/$order.multirow"
  sql -c "TRUNCATE cg_base"
done
# key marks: today's open window, and one closed day of 2024; 10 hosts
sql -c "COPY (SELECT date_trunc('day', now()) + i * interval '1 millisecond', 'host-' || i % 10, 1.5
                FROM generate_series(1, $N) i) TO '$DIR/kopen.csv'"
sql -c "COPY (SELECT timestamptz '2024-06-01 00:00:00+00' + i * interval '1 millisecond', 'host-' || i % 10, 1.5
                FROM generate_series(1, $N) i) TO '$DIR/klate.csv'"
chown postgres: "$DIR"/*.csv "$DIR"/*.multirow 2>/dev/null || true
# a build before key marks (pool_callgrind.sh's base) has no key cases
KEYS=$(sql -c "SELECT to_regproc('flownode.mark_keys') IS NOT NULL")
[[ $KEYS == t || $ONLY != keys ]] || fn_die "this build has no key marks (flownode.mark_keys)"
fn_stop_cluster "$DIR"

single() ( cd / && runuser -u postgres -- "$(fn_pg_bindir)/postgres" --single -D "$DIR/data" -c synchronous_commit=off postgres >/dev/null 2>&1 )
# run_cg NAME TOGGLE...: the statements on stdin in a single-user backend under
# callgrind, counting only inside the given functions.
# CG_SET: more -c settings of the backend
CG_SET=()
run_cg() {
  local name=$1
  shift
  cg_cmd "$OUT/$name.out" "$@"
  runuser -u postgres -- "${CG_CMD[@]}" "$(fn_pg_bindir)/postgres" --single -D "$DIR/data" -c synchronous_commit=off "${CG_SET[@]}" postgres >/dev/null 2>"$OUT/$name.log"
}
# a statement: parse, analysis, planning, execution and commit (its PRE_COMMIT work)
STMT=(pg_parse_query pg_analyze_and_rewrite_fixedparams pg_plan_queries PortalRun CommitTransactionCommand)
for order in inorder scattered; do
  [[ $ONLY == keys ]] && break
  for t in cg_pbase cg_pf1; do
    fn_log "callgrind: COPY $N rows ($order) into the partitioned $t"
    printf '%s\n' "TRUNCATE $t;" "CHECKPOINT;" | single
    echo "COPY $t FROM '$DIR/$order.csv';" | run_cg "copy_${order}_$t" "${STMT[@]}"
  done
done
for order in inorder scattered; do
  [[ -n $ONLY ]] && break
  for t in cg_base cg_f1 cg_f5; do
    fn_log "callgrind: COPY $N rows ($order) into $t"
    printf '%s\n' "TRUNCATE $t;" "CHECKPOINT;" | single
    echo "COPY $t FROM '$DIR/$order.csv';" | run_cg "copy_${order}_$t" "${STMT[@]}"
    fn_log "callgrind: multi-row INSERT of $M rows ($order) into $t"
    printf '%s\n' "TRUNCATE $t;" "CHECKPOINT;" | single
    sed "s/TBL/$t/" "$DIR/$order.multirow" | run_cg "multirow_${order}_$t" "${STMT[@]}"
  done
done
for t in cg_base cg_f1 cg_f5; do
  [[ -n $ONLY ]] && break
  for mode in newwin samewin inorder day; do
    [[ $t == cg_base && $mode == samewin ]] && continue
    [[ $t == cg_f5 && ($mode == inorder || $mode == day) ]] && continue
    fn_log "callgrind: $TX single-row transactions into $t ($mode)"
    printf '%s\n' "TRUNCATE $t;" "CHECKPOINT;" | single
    # a warm-up transaction, rolled back and not counted (only ExecuteCallStmt is):
    # the backend's one-time loads (the table's flows, its relcache entry, the WHEN
    # clause: about 4.9M instructions for the flow's side) are not per transaction,
    # and over 1,000 transactions they would add 4,900 to each
    printf '%s\n' "BEGIN;" "INSERT INTO $t (ts, host, v) VALUES ('2024-06-01 00:00:00+00', 'host-1', 1.5);" \
      "ROLLBACK;" "CALL loop_$t($TX, '$mode');" | run_cg "tx_${mode}_$t" ExecuteCallStmt
  done
done

CG_SET=(-c flownode.key_marks_per_window=64)
for t in cg_kb cg_k0 cg_k1; do
  [[ $ONLY == partitioned || $KEYS != t ]] && break
  for mode in open late; do
    fn_log "callgrind: COPY $N rows ($mode) into $t"
    printf '%s\n' "TRUNCATE $t;" "CHECKPOINT;" | single
    echo "COPY $t FROM '$DIR/k$mode.csv';" | run_cg "kcopy_${mode}_$t" "${STMT[@]}"
    fn_log "callgrind: $TX single-row transactions into $t ($mode)"
    printf '%s\n' "TRUNCATE $t;" "CHECKPOINT;" | single
    printf '%s\n' "BEGIN;" "INSERT INTO $t (ts, host, v) VALUES ('2024-06-01 00:00:00+00', 'host-1', 1.5);" \
      "ROLLBACK;" "CALL loop_$t($TX, '$mode');" | run_cg "ktx_${mode}_$t" ExecuteCallStmt
  done
done
CG_SET=()
# cg_k0 must not have gained key triggers from the writer's setting, nor cg_k1 lost them
if [[ $ONLY != partitioned && $KEYS == t ]]; then
  keyed=$(echo "SELECT string_agg(tgrelid::regclass::text, ',' ORDER BY tgrelid::regclass::text) FROM pg_trigger WHERE tgname LIKE 'flownode_mark_keys%';" | (cd / && runuser -u postgres -- "$(fn_pg_bindir)/postgres" --single -D "$DIR/data" postgres 2>/dev/null) | grep -o '"cg_k[^"]*"' | head -1)
  [[ $keyed == '"cg_k1,cg_k1,cg_k1"' ]] || fn_die "key triggers on $keyed, not on cg_k1 alone: the key-mark cases measure the wrong thing"
fi

python3 - "$OUT" "$N" "$TX" "$M" "$RESULTS" "$ONLY" "$KEYS" <<'EOF'
import os, re, subprocess, sys
out, n, tx, m, results, only = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
keys = sys.argv[7] == "t"  # the build has key marks: their cases ran
raw = []
# callers every statement goes through: not informative in a difference
SKIP = re.compile(r"^(0x[0-9a-f]+('\d+)?|.* .*|main|\(below main\)|__libc_start.*|PROGRAM TOTALS|events annotated|Postgres\w*Main|"
                  r"PortalRun\w*|\w*ProcessUtility|flownode_process_utility|DoCopy|ExecuteCallStmt|plpgsql_\w+|"
                  r"exec_stmt\w*|SPI_\w+|_SPI_\w+|standard_ExecutorRun|ExecutorRun|ExecModifyTable|ProcessQuery)$")


def annotate(name, inclusive):
    """{function: instructions} from callgrind_annotate, names without file or call counts"""
    txt = subprocess.run(["callgrind_annotate", f"--inclusive={'yes' if inclusive else 'no'}", "--threshold=99.99",
                          os.path.join(out, name + ".out")], capture_output=True, text=True).stdout
    total, funcs = None, {}
    for line in txt.splitlines():
        mt = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(\S.*)$", line)
        if not mt:
            continue
        v = int(mt.group(1).replace(",", ""))
        f = mt.group(2).split(" [")[0]
        if f.startswith("PROGRAM TOTALS"):
            total = v
            continue
        if not inclusive and re.search(r" \([\d,]+x\)$", f):
            continue                             # a call-count line, not the function's own cost
        f = re.sub(r" \([\d,]+x\)$", "", f)   # "fn (1,000x)": the same function with its call count
        f = f.rsplit(":", 1)[-1] if ":" in f and "::" not in f.split(":", 1)[0] else f
        if "lambda" in f:
            f = "(C++ lambda: pg_call / invoke_cpp)"
        elif "(" in f and "::" in f:             # C++: keep the qualified name only
            f = f.split("(")[0]
        elif re.match(r"^\w+\(", f):            # C++ member without its class: drop the signature
            f = f.split("(")[0] + "()"
        if inclusive:
            funcs[f] = max(funcs.get(f, 0), v)
        elif re.match(r"^[A-Za-z_][\w:~]*(\(\))?$", f):  # self cost: whole functions, not source lines
            funcs[f] = funcs.get(f, 0) + v
    return total, funcs


def top_diff(flow, base, rows, k, inclusive):
    f, b = annotate(flow, inclusive)[1], annotate(base, inclusive)[1]
    diff = sorted(((f.get(x, 0) - b.get(x, 0)), x) for x in set(f) | set(b) if not SKIP.match(x))
    return [(d / rows, x) for d, x in reversed(diff) if d > 0][:k]


lines = ["# Instruction counts of the write path (callgrind)", "",
         "Generated by `make -C bench callgrind` (`bench/callgrind.sh`): a single-user backend under "
         "valgrind's callgrind, counting only the measured statement (parse, analysis, planning, execution "
         "and commit, including flownode's PRE_COMMIT work). Instructions are deterministic, so these ratios "
         "are free of the machine noise of the timed figures in `report.md`; they do not see I/O, cache "
         "misses or lock waits. The flows are those of the ingest sections (eval_interval 1 day: no refresh runs). "
         "The single-row loops run after a warm-up transaction, rolled back and not counted: a backend "
         "loads a table's flows once, not per transaction.", "",
         "| case | no flow (instr/row) | 1 flow | 5 flows | 1 flow ratio | 5 flows ratio |", "|---|---|---|---|---|---|"]
detail = []


def detail_tables(title, flow, base, rows, unit):
    detail.append(f"\n### {title}\n")
    inc = top_diff(flow, base, rows, 14, True)
    slf = top_diff(flow, base, rows, 14, False)
    detail.append(f"| function (inclusive) | extra {unit} | function (self) | extra {unit} |")
    detail.append("|---|---|---|---|")
    for i in range(max(len(inc), len(slf))):
        a = inc[i] if i < len(inc) else (None, "")
        b = slf[i] if i < len(slf) else (None, "")
        detail.append(f"| {('`' + a[1] + '`') if a[1] else ''} | {'' if a[0] is None else f'{a[0]:,.0f}'} | "
                      f"{('`' + b[1] + '`') if b[1] else ''} | {'' if b[0] is None else f'{b[0]:,.0f}'} |")


def partitioned_table():
    """COPY through a partitioned parent (daily partitions of 2024 and a default one)"""
    rows = ["", "| COPY through a partitioned parent (366 daily partitions + default) | no flow (instr/row) | 1 flow | "
            "1 flow ratio |", "|---|---|---|---|"]
    for order in ("inorder", "scattered"):
        b = annotate(f"copy_{order}_cg_pbase", False)[0]
        f1 = annotate(f"copy_{order}_cg_pf1", False)[0]
        olabel = "in time order" if order == "inorder" else "scattered over a year"
        raw.append(f"copy_partitioned\t{order}\t{n}\t{b}\t{f1}\t-")
        rows.append(f"| COPY {n:,} rows, {olabel} | {b / n:,.0f} | {f1 / n:,.0f} (+{(f1 - b) / n:,.0f}) | {f1 / b:.3f}x |")
    return rows


def keys_table():
    """key marks: no flow (a), the flow without key triggers (b), with them (c: open window, d: late)"""
    rows = ["", "| key marks: a daily flow per host | no flow (a) | flow, key marks off (b) | flow with key marks "
            "(c, d) | with / off | with / no flow |", "|---|---|---|---|---|---|"]
    for kind, cnt, unit, label in (("kcopy", n, "instr/row", f"COPY {n:,} rows"),
                                   ("ktx", tx, "instr/tx", f"{tx:,} single-row transactions")):
        for mode, mlabel in (("open", "into the open window (c)"), ("late", "late, one closed day, 10 hosts (d)")):
            a, b0, k = (annotate(f"{kind}_{mode}_{t}", False)[0] for t in ("cg_kb", "cg_k0", "cg_k1"))
            raw.append(f"{kind}_{mode}\t-\t{cnt}\t{a}\t{b0}\t{k}")
            rows.append(f"| {label} {mlabel} ({unit}) | {a / cnt:,.0f} | {b0 / cnt:,.0f} (+{(b0 - a) / cnt:,.0f}) | "
                        f"{k / cnt:,.0f} (+{(k - a) / cnt:,.0f}) | {k / b0:.3f}x | {k / a:.3f}x |")
    return rows


def keys_details():
    for kind, cnt, unit, label in (("kcopy", n, "instr/row", "COPY"), ("ktx", tx, "instr/tx", "single-row transactions")):
        for mode in ("open", "late"):
            detail_tables(f"{label} {'into the open window' if mode == 'open' else 'late'}, key marks − key marks off "
                          f"({unit})", f"{kind}_{mode}_cg_k1", f"{kind}_{mode}_cg_k0", cnt, unit)


if only == "keys":
    print("\n".join(keys_table()))
    keys_details()
    print("\n".join(detail))
    sys.exit(0)

if only == "partitioned":
    print("\n".join(partitioned_table()))
    for order in ("inorder", "scattered"):
        olabel = "in time order" if order == "inorder" else "scattered over a year"
        detail_tables(f"COPY through a partitioned parent, {olabel}, f1 − no flow (instructions per row)",
                      f"copy_{order}_cg_pf1", f"copy_{order}_cg_pbase", n, "instr/row")
    print("\n".join(detail))
    sys.exit(0)

for kind, rows, label in (("copy", n, "COPY"), ("multirow", m, "multi-row INSERT (1,000/statement)")):
    for order in ("inorder", "scattered"):
        tot = {t: annotate(f"{kind}_{order}_{t}", False)[0] for t in ("cg_base", "cg_f1", "cg_f5")}
        b, f1, f5 = tot["cg_base"], tot["cg_f1"], tot["cg_f5"]
        olabel = "in time order" if order == "inorder" else "scattered over a year"
        raw.append(f"{kind}\t{order}\t{rows}\t{b}\t{f1}\t{f5}")
        lines.append(f"| {label} {rows:,} rows, {olabel} | {b / rows:,.0f} | {f1 / rows:,.0f} (+{(f1 - b) / rows:,.0f}) | "
                     f"{f5 / rows:,.0f} (+{(f5 - b) / rows:,.0f}) | {f1 / b:.3f}x | {f5 / b:.3f}x |")
        for t in ("cg_f1", "cg_f5"):
            detail_tables(f"{label}, {olabel}, {t[3:]} − no flow (instructions per row)",
                          f"{kind}_{order}_{t}", f"{kind}_{order}_cg_base", rows, "instr/row")
tot = {k: annotate(k, False)[0] for k in ("tx_newwin_cg_base", "tx_newwin_cg_f1", "tx_samewin_cg_f1",
                                         "tx_newwin_cg_f5", "tx_samewin_cg_f5", "tx_inorder_cg_base",
                                         "tx_inorder_cg_f1", "tx_day_cg_base", "tx_day_cg_f1")}
b, nw, sw = tot["tx_newwin_cg_base"], tot["tx_newwin_cg_f1"], tot["tx_samewin_cg_f1"]
nw5, sw5 = tot["tx_newwin_cg_f5"], tot["tx_samewin_cg_f5"]
raw.append(f"tx\t-\t{tx}\t{b}\t{sw}\t{nw}")
raw.append(f"tx5\t-\t{tx}\t{b}\t{sw5}\t{nw5}")
for mode in ("inorder", "day"):
    raw.append(f"tx_{mode}\t-\t{tx}\t{tot['tx_' + mode + '_cg_base']}\t{tot['tx_' + mode + '_cg_f1']}\t-")
lines += ["", f"| {tx:,} single-row transactions (PL/pgSQL loop with COMMIT) | instructions per transaction |",
          "|---|---|", f"| no flow | {b / tx:,.0f} |",
          f"| 1 flow, same window (record skipped) | {sw / tx:,.0f} (+{(sw - b) / tx:,.0f}) |",
          f"| 1 flow, new window each commit (record written) | {nw / tx:,.0f} (+{(nw - b) / tx:,.0f}; "
          f"+{(nw - sw) / tx:,.0f} over the same window) |",
          f"| 5 flows, same window (records skipped) | {sw5 / tx:,.0f} (+{(sw5 - b) / tx:,.0f}) |",
          f"| 5 flows, new window each commit (one record per flow) | {nw5 / tx:,.0f} (+{(nw5 - b) / tx:,.0f}; "
          f"+{(nw5 - sw5) / tx:,.0f} over the same window) |", "",
          "| single-row transactions, no flow vs 1 flow | no flow (instr/tx) | 1 flow | ratio |",
          "|---|---|---|---|"]
for mode, label in (("inorder", "in time order (0.6 s apart)"), ("day", "random times within one day")):
    b_, f_ = tot["tx_" + mode + "_cg_base"], tot["tx_" + mode + "_cg_f1"]
    lines.append(f"| {tx:,} transactions, {label} | {b_ / tx:,.0f} | {f_ / tx:,.0f} (+{(f_ - b_) / tx:,.0f}) | {f_ / b_:.3f}x |")
lines.append("")
lines += partitioned_table() + (keys_table() if keys else []) + [""]
for order in ("inorder", "scattered"):
    olabel = "in time order" if order == "inorder" else "scattered over a year"
    detail_tables(f"COPY through a partitioned parent, {olabel}, f1 − no flow (instructions per row)",
                  f"copy_{order}_cg_pf1", f"copy_{order}_cg_pbase", n, "instr/row")
detail_tables("single-row transactions, 1 flow, same window − no flow (instructions per transaction)",
              "tx_samewin_cg_f1", "tx_newwin_cg_base", tx, "instr/tx")
detail_tables("single-row transactions, 1 flow, new window each commit − same window (instructions per transaction)",
              "tx_newwin_cg_f1", "tx_samewin_cg_f1", tx, "instr/tx")
detail_tables("single-row transactions, 5 flows − 1 flow, same window (instructions per transaction)",
              "tx_samewin_cg_f5", "tx_samewin_cg_f1", tx, "instr/tx")
detail_tables("single-row transactions at random times within one day, 1 flow − no flow (instructions per transaction)",
              "tx_day_cg_f1", "tx_day_cg_base", tx, "instr/tx")
detail_tables("single-row transactions in time order, 1 flow − no flow (instructions per transaction)",
              "tx_inorder_cg_f1", "tx_inorder_cg_base", tx, "instr/tx")
if keys:
    keys_details()
with open(os.path.join(results, "callgrind.md"), "w") as f:
    f.write("\n".join(lines + detail) + "\n")
with open(os.path.join(results, "raw", "callgrind.tsv"), "w") as f:
    f.write("\n".join(raw) + "\n")
print("\n".join(lines))
EOF
[[ $ONLY == partitioned ]] || fn_log "wrote $RESULTS/callgrind.md"
