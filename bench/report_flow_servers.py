# Flow servers fed by logical replication: the report of run.sh's "servers" section
# (bench/flow_servers.sh). Called by report.py with its helpers; adds summary rows
# and one detail section.


def flow_servers_report(sel, median, add, sections, meta):
    cost = {v: {m: sel("servers", "cost", v, m) for m in ("wall", "cpu")} for v in ("none", "local", "remote")}
    if not all(cost[v]["cpu"] for v in cost):
        return
    rows = int(meta.get("FS_COST_ROWS", "0") or 0)
    flows = meta.get("FS_FLOWS", "?")

    def per_row(v, m):  # median microseconds per written row
        return median([x[0] for x in cost[v][m].values()]) * 1e6 / rows

    def ratios(v, m):  # per-round ratio against the round's table without a flow
        rs = [cost[v][m][r][0] / cost["none"][m][r][0] for r in cost[v][m] if r in cost["none"][m]]
        return f"{median(rs):.2f}x [{min(rs):.2f}-{max(rs):.2f}, {len(rs)}]"

    def one(case, order, variant="-"):
        d = sel("servers", case, order, variant)
        return median([x[0] for x in d.values()]) if d else None

    p50, p99, pmax, drain = one("fresh", "p50"), one("fresh", "p99"), one("fresh", "max"), one("fresh", "drain")
    wrote = {s: one("fresh", "rows", s) for s in ("PA", "PB")}
    span = {s: one("fresh", "span", s) for s in ("PA", "PB")}
    rate = sum(wrote[s] / span[s] for s in wrote if wrote[s] and span[s])
    cu_s, cu_rows, cu_diff = one("catchup", "seconds"), one("catchup", "rows"), one("catchup", "diff")

    add("servers", f"primary CPU per written row: no flow / {flows} flows on it / {flows} flows on a flow server",
        f"{per_row('none', 'cpu'):.2f} / {per_row('local', 'cpu'):.2f} / {per_row('remote', 'cpu'):.2f} µs", "—", None)
    if p50 is not None:
        add("servers", f"freshness over two primaries at {rate:,.0f} rows/s (asked {int(meta.get('FS_RATE', 0)):,}): p50 / p99",
            f"{p50:.2f} / {p99:.2f} s", "—", None)
    if cu_s:
        add("servers", f"a new flow server catching up on {cu_rows:,.0f} rows (copy_data), sinks exact",
            f"{cu_s:,.1f} s ({cu_rows / cu_s:,.0f} rows/s)", "exact", cu_diff == 0)

    lines = [
        "## Flow servers fed by logical replication (section `servers`)",
        "",
        f"Clusters of their own on this machine (all share its cores): primaries without the flows, a flow "
        f"server subscribing to them ([docs/operations.md](../../docs/operations.md#flow-servers)). The "
        f"primary's cost of {rows:,} rows in multi-row INSERTs of 1,000 (autocommit) into a table with no flow, "
        f"one with {flows} flows on the primary, and a published one whose {flows} flows run on a flow server, "
        f"alternated: the writes' wall time, and the CPU time of all the primary's processes (backends, "
        f"walsenders, flownode's workers) until the work the writes cause is done (flush_flow of the local "
        f"flows; wait_for_publishers on the flow server, so the walsender has decoded every row). Medians, "
        f"per written row, and the per-round ratios against the table without a flow [min-max, rounds]:",
        "",
        "| the flows | wall µs/row | ratio | primary CPU µs/row | ratio |",
        "|---|---|---|---|---|",
    ]
    for v, label in (("none", "none"), ("local", "on the primary"), ("remote", "on a flow server")):
        lines.append(f"| {label} | {per_row(v, 'wall'):.2f} | {ratios(v, 'wall') if v != 'none' else '1'} | "
                     f"{per_row(v, 'cpu'):.2f} | {ratios(v, 'cpu') if v != 'none' else '1'} |")
    lines += [
        "",
        "No callgrind counts here: with the flows on a flow server the primary's backend runs the same code as "
        "with none; the difference is the walsender's decoding, which the CPU time includes.",
        "",
    ]
    if p50 is not None:
        lines += [
            f"Freshness: pgbench wrote {int(meta.get('FS_RATE', 0)):,} rows/s asked ({int(meta.get('FS_BATCH', 0))} "
            f"rows a transaction, half on each primary) for {meta.get('FS_SECONDS')} s; it reached "
            f"{rate:,.0f} rows/s ({', '.join(f'{wrote[s]:,.0f} rows in {span[s]:.1f} s' for s in wrote)}). One flow on "
            f"the flow server (eval_interval 1 s) keeps each shard's newest stamp, sampled every 100 ms. From the "
            f"commit on a primary to the row in the sink: p50 {p50:.2f} s, p99 {p99:.2f} s, max {pmax:.2f} s "
            f"(stamps every ms after a 3 s warm-up). After the writes stopped, wait_for_publishers returned in "
            f"{drain:.2f} s (the backlog left).",
            "",
        ]
    if cu_s:
        lines += [
            f"Catch-up: a new flow server with {flows} flows subscribed to both primaries ({cu_rows:,.0f} rows, "
            f"copy_data = true): {cu_s:,.1f} s from CREATE SUBSCRIPTION until wait_for_publishers returned for "
            f"its flows ({cu_rows / cu_s:,.0f} rows/s); its sinks against their queries: "
            + ("identical." if cu_diff == 0 else f"**{cu_diff:.0f} rows differ**."),
            "",
        ]
    sections.append("\n".join(lines))
