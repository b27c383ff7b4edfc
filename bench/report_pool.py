# Many flows on a bounded pool of workers: the report of run.sh's "pool"
# section (bench/pool.sh). Called by report.py with its helpers; adds summary rows
# (each figure beside its target) and one detail section. The write path's
# instruction counts against the build before the pool are bench/pool_callgrind.sh's
# (results/pool_callgrind.md), added here when that file exists.
import os


def _one(sel, case, order=None, variant=None):
    v = sel("pool", case, order, variant)
    return v.get("0") if v else None


def _round1(sel, add, meta, tag, workers):
    """one burst-and-flush round of part 1 with the pool at `workers` (cases named with tag)"""
    flush, lr, exact = (_one(sel, c + tag) for c in ("flush", "lr", "exact"))
    par = sel("pool", "parallel" + tag)
    if not flush:
        return ""
    nflows = int(meta.get("POOL_FLOWS", 0))
    add("pool", f"{nflows:,} flows, max_workers = {workers}, max_worker_processes = 8: every sink against its query "
        "after a burst of writes to every source and flush_flow of each (rows that differ)",
        f"{exact[0]:.0f}" if exact else "n/a", "0", bool(exact) and exact[0] == 0 and flush[1] == 0)
    launched = [(v[0], v[1]) for _, v in sorted(par.items())]
    add("pool", f"max_workers = {workers}: a parallel GROUP BY over {int(meta.get('POOL_BIG', 0)):,} rows while those "
        "flows flush: workers launched / planned, per run", ", ".join(f"{b:.0f}/{a:.0f}" for a, b in launched) or "n/a",
        "all planned launched", bool(launched) and all(a >= 1 and b == a for a, b in launched))
    if lr:
        add("pool", f"max_workers = {workers}: logical replication from another database of the same server meanwhile: "
            f"rows arrived (of {lr[0]:,.0f})", f"{lr[1]:,.0f} in {lr[2]:.1f} s", "all", lr[1] >= lr[0])
    return f"""{meta.get('POOL_BURST')} rows into every source (with an UPDATE and a DELETE of some), and `flush_flow`
of every flow in one statement: {flush[0] / 1000:.1f} s ({'succeeded' if flush[1] == 0 else 'FAILED'}). While it
ran, `EXPLAIN ANALYZE` of a `GROUP BY` over {int(meta.get('POOL_BIG', 0)):,} rows (default planner settings;
workers launched/planned): {', '.join(f'{b:.0f}/{a:.0f}' for a, b in launched)} (the flush was
{'still running during all of them' if all(v[3] == 1 for v in par.values()) else 'over before some of them'}),
and a subscription in this database to a publication of another database of the same cluster got
{lr[1]:,.0f} of {lr[0]:,.0f} rows (written in 10 transactions 0.2 s apart), all of them {lr[2]:.1f} s after the
writes and the flush had ended ({lr[3]:.0f} apply worker running). PostgreSQL's background workers during the
flush, besides the parallel query's: {meta.get('pool_bgworkers' + tag, '?')}. Sinks against their queries, in one
statement (`EXCEPT ALL` both ways, as TAP 028): {exact[0]:.0f} rows differ."""


def _part1(sel, add, meta):
    create, lower = _one(sel, "create"), _one(sel, "lower")
    if not create:
        return ""
    nflows = int(meta.get("POOL_FLOWS", 0))
    text = f"""**Part 1** (cluster A: `max_worker_processes = 8`, `flownode.max_workers = 4`, `wal_level = logical`):
{nflows:,} flows (adaptive cadence, one-minute windows) over {meta.get('POOL_SOURCES')} sources, created in
{create[0]:.1f} s, every one served by a pool worker {create[1]:.1f} s later; {create[2]:.0f} workers serve them
({create[3]:.0f} `flownode flow` processes). The server's log has {'the' if create[4] else 'no'} WARNING that the
settings leave PostgreSQL too few worker processes (flownode's rule: `max_workers` + 2 + min(2,
`max_parallel_workers`) + 2 for logical replication must fit in `max_worker_processes`, so 2 with the default 8).
Then """ + _round1(sel, add, meta, "", 4) + "\n"
    if lower:
        text += f"""
The same after `ALTER SYSTEM SET flownode.max_workers = 2` and a reload (the workers beyond it handed their
flows to the other two in {lower[0]:.1f} s; {lower[1]:.0f} `flownode flow` processes then): """ + \
            _round1(sel, add, meta, "_w2", 2) + "\n"
    return text


def _part3(sel, add, meta):
    return "\n".join(x for x in (_idle(sel, add, meta, "", "4"), _idle(sel, add, meta, "_w2", "2")) if x)


def _idle(sel, add, meta, tag, workers):
    idle = _one(sel, "idle" + tag)
    if not idle:
        return ""
    cpu, secs, npids, pss0, pss1, priv, runs, other, same, dirty = idle[:10]
    anon, shm = (idle[10], idle[11]) if len(idle) >= 12 else (None, None)
    pct = cpu / secs * 100
    add("pool", f"{int(meta.get('POOL_FLOWS', 0)):,} idle adaptive flows, max_workers = {workers}: CPU of the pool's "
        f"{npids:.0f} workers over "
        f"{secs:.0f} s", f"{pct:.2f} % of a core", "< 1 %", pct < 1)
    # The pool's own memory is what its processes allocate (anonymous pages);
    # shared_buffers and flownode's shared memory are the server's, allocated at start
    # whatever the pool does, and a share of them appears in every process's PSS
    # once it reads a page: shown beside, not counted.
    own = anon if anon is not None else priv
    add("pool", f"the same, max_workers = {workers}: the pool's own memory (anonymous pages, sum over its workers; "
        "PSS with the shared memory it touched beside)",
        f"{own / 1024:.1f} MiB (PSS {pss1 / 1024:.1f} MiB)", "< 64 MiB", own / 1024 < 64)
    return f"""**Part 3, `max_workers` = {workers}** (the same cluster, after part 1's flush at this pool size;
{dirty:.0f} flows dirty at the end): the
{npids:.0f} pool workers used {cpu:.3f} s of CPU in {secs:.0f} s ({pct:.2f} % of one core; `utime + stime` from
`/proc/PID/stat`); the launcher and database starter {other:.3f} s besides. {runs:.0f} refreshes ran meanwhile. PSS
(`/proc/PID/smaps_rollup`, shared pages divided among the processes that map them) {pss0 / 1024:.1f} MiB at
the start, {pss1 / 1024:.1f} MiB at the end, of which {priv / 1024:.1f} MiB private{
    '' if anon is None else f"; by kind: anonymous {anon / 1024:.1f} MiB, shared memory {shm / 1024:.1f} MiB (the share "
    "of `shared_buffers` and flownode's segments the workers touched, split with the other processes that did)"}.
The workers were
{'the same processes throughout' if same == 1 else 'NOT the same processes at the end (a worker left or came)'}.
One worker's memory contexts, serving {meta.get('pool_memctx_flows' + tag, '?')} flows
(`pg_log_backend_memory_contexts`, summed by name, the largest first; GRAND is its grand total; PostgreSQL
summarizes the children of a context beyond its first 100): {meta.get('pool_memctx' + tag, '?')}.
"""


def _part2(sel, add, meta):
    fresh, samp = _one(sel, "fresh"), _one(sel, "fresh_sampling")
    if not fresh:
        return ""
    n, p50, p99, mx, cens, rate = fresh[:6]
    add("pool", f"{meta.get('FRESH_FLOWS')} flows, eval_interval 1 s, on 2 workers, each source written at "
        f"{meta.get('FRESH_RATE')} rows/s ({rate:.0f} achieved): freshness p50 / p99 / max",
        f"{p50:,.0f} / {p99:,.0f} / {mx:,.0f} ms", "p99 ≤ 1,500 ms", p99 <= 1500 and cens == 0)
    return f"""**Part 2** (cluster B: `max_worker_processes = 8`, `flownode.max_workers = 2`, served by
{samp[3]:.0f} workers): {meta.get('FRESH_FLOWS')} sources with a flow each (`date_bin('1 minute')`, `count(*)`,
`max(ts) AS last_ts`, `eval_interval => '1 second'`). pgbench writes every source ten times a second, an
autocommit `INSERT` of {int(meta.get('FRESH_RATE', 0)) // 10} rows each, stamped `clock_timestamp()` just
before its commit (asynchronous commit: the writer's WAL flush is not the flow's lag), for
{meta.get('FRESH_SECONDS')} s ({samp[1]:,.0f} scripts/s of {meta.get('FRESH_FLOWS')} statements, latency
{samp[2]} ms; {rate:.1f} rows/s per source achieved). A sampler reads every sink's `max(last_ts)` every 100 ms
(median gap between two samples of a sink {samp[0]:.0f} ms). **Freshness** of a row: the time of the first
sample whose sink includes a stamp at least the row's, minus the row's stamp, i.e. from the row's commit to the
moment its window's sink row reflects it, overstated by up to one sampling gap and by the few microseconds
between the stamp and the commit. Rows of the first 3 s are left out. Over {n:,.0f} rows: p50 {p50:,.0f} ms,
p99 {p99:,.0f} ms, max {mx:,.0f} ms; {cens:.0f} rows never reflected by the end of sampling (4 s after the load).
"""


def _part4(sel, add, meta):
    slow, flow = {}, _one(sel, "slow_flow")
    for phase in ("before", "locked"):
        for same in ("same", "other"):
            v = _one(sel, "slow", phase, same)
            if v:
                slow[phase, same] = v
    if not flow or not slow:
        return ""
    budget = int(meta.get("POOL_BUDGET_MS", 1000))

    def f(phase, same):
        v = slow.get((phase, same))
        return "none" if not v else f"p99 {v[1]:,.0f} / max {v[2]:,.0f} ms ({v[0]:.0f} evaluations)"

    # What the slow refresh costs the others: the lateness of the flows its worker
    # served beyond that of the flows on the other worker in the same seconds (the
    # control: the load of the run itself makes every evaluation a little late)
    mine, ctrl = slow.get(("locked", "same")), slow.get(("locked", "other"))
    added = None if not mine else mine[2] - (ctrl[2] if ctrl else 0)
    add("pool", f"one flow's {meta.get('SLOW_LOCK_S')}-second refresh: how much later the other flows' evaluations "
        "started because of it (max on its worker minus max on the other worker; both beside)",
        "none" if added is None else f"{added:,.0f} ms (" + " / ".join(
            f"{slow[('locked', s)][2]:,.0f} ms" if ("locked", s) in slow else "none" for s in ("same", "other")) + ")",
        f"≤ one refresh budget ({budget:,} ms)", added is not None and added <= budget)
    return f"""**Part 4** (cluster B, the same flows and load; `flownode.statement_timeout` =
{2 * int(meta.get('SLOW_LOCK_S', 0))} s): another session holds `fr_sink_1` in ACCESS EXCLUSIVE mode for
{meta.get('SLOW_LOCK_S')} s, so `fr_f1`'s refresh waits that long (its longest run: {flow[0]:.1f} s). Its worker
served {flow[2]:.0f} other flows. A sampler reads `flow_status()` every 100 ms; for each other flow and each two
consecutive runs (`runs` one apart), the second evaluation's lateness is its start (`last_run_at −
last_run_duration`) minus its schedule (the previous start + 1 s, not before the previous end). The target's
"one refresh budget" is taken as {budget:,} ms: the adaptive row budget is halved after any refresh over 1 s, so
that is what one budgeted refresh lasts. Evaluations due while the sink was locked: flows on `fr_f1`'s worker
{f('locked', 'same')}; on the other worker {f('locked', 'other')}. Due in the 3 s before the lock, for comparison: same worker
{f('before', 'same')}; other {f('before', 'other')}.
"""


def pool_report(sel, median, add, sections, meta, out_dir):
    parts = [p(sel, add, meta) for p in (_part1, _part3, _part2, _part4)]
    cg = os.path.join(out_dir, "pool_callgrind.md")
    cgnote = ""
    if os.path.exists(cg):
        with open(cg) as f:
            last = [line for line in f.read().splitlines() if "ratios within 1 %" in line]
        if last:
            add("pool", "the write path: callgrind instruction ratios against the build before the pool "
                "(bench/pool_callgrind.sh)", last[0].split(" (")[0], "every ratio within 1 %", "(PASS" in last[0])
            cgnote = "The write path against the build before the pool: `results/pool_callgrind.md`.\n"
    if not any(parts):
        return
    sections.append(f"""## Many flows on a bounded pool of workers (section `pool`)

`bench_pool` (bench/pool.sh) runs its own two throwaway clusters with PostgreSQL's default
`max_worker_processes = 8`; {meta.get('seconds_pool', '?')} s in all. Wall-clock figures on this shared
2-core machine vary by 15–20 % from run to run (other sessions' tests run beside it).

""" + "\n".join(p for p in parts if p) + cgnote)
