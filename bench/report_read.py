# Exact real-time reads: the report of run.sh's "read" section
# (bench/read_flow.sh). Called by report.py with its helpers; adds summary rows and
# one detail section.


def read_flow_report(sel, median, add, sections, meta):
    data = {c: sel("read", c) for c in ("sink", "srf", "query", "read0", "read1", "read100", "read1000", "sinkhour",
                                        "hour0", "hour1")}
    if not all(data.values()):
        return
    ms = {c: median([v[0] for v in d.values()]) for c, d in data.items()}
    dirty = {k: median([v[0] for v in sel("read", f"dirty{k}").values()]) for k in (0, 1, 100, 1000)}
    diffs = [v[0] for v in sel("read", "diff").values()]
    extra = {k: ms[f"read{k}"] - ms["read0"] for k in (1, 100, 1000)}
    rows = int(meta.get("READ_ROWS", "0") or 0)
    exact = bool(diffs) and all(d == 0 for d in diffs)

    add("read", "read_flow, clean flow: time over reading the sink directly / through a set-returning function",
        f"{ms['read0'] / ms['sink']:.2f}x / {ms['read0'] / ms['srf']:.2f}x", "—", None)
    add("read", "read_flow over one hour (600 of the sink's rows), clean / 1 dirty window; the sink's hour",
        f"{ms['hour0']:,.1f} / {ms['hour1']:,.1f} ms; {ms['sinkhour']:,.1f} ms", "—", None)
    add("read", "read_flow with 1 / 100 / 1,000 dirty windows: time over the clean read",
        f"+{extra[1]:,.1f} / +{extra[100]:,.1f} / +{extra[1000]:,.1f} ms", "—", None)
    add("read", "read_flow with 100 dirty windows against running the query",
        f"{ms['read100'] / ms['query']:.2f}x", "< 1x", ms["read100"] < ms["query"])
    add("read", "read_flow equal to the query (after 1,000 dirty windows, every round)",
        "equal" if exact else f"differs: {diffs}", "equal", exact)

    lines = [
        "## Exact real-time reads with read_flow (section `read`)",
        "",
        f"One flow (1-minute windows by host: count, sum, max) over {rows:,} rows ({rows // 100:,} windows, "
        f"{rows // 10:,} sink rows), `eval_interval => '1 day'` so that only `flush_flow` refreshes. Each of "
        f"{len(data['read0'])} rounds starts from a clean flow and times (rotated order) a read of the sink "
        f"(directly, and through a PL/pgSQL set-returning function, which materializes its rows as `read_flow` does), "
        f"the query, and `read_flow` whole and over one hour; then commits late rows into 1, then 100, then "
        f"1,000 windows spread over the whole table (never refreshed before the read) and times `read_flow` "
        f"after each, and over the hour holding the first of them after the first. Every statement is "
        f"`SELECT count(*) FROM ...` (no rows to the client). Medians in ms:",
        "",
        "| read | dirty windows | ms |",
        "|---|---|---|",
        f"| the sink (`SELECT count(*) FROM sink`) | — | {ms['sink']:,.1f} |",
        f"| the sink through a `SETOF sink` PL/pgSQL function (`RETURN QUERY`) | — | {ms['srf']:,.1f} |",
        f"| the query | — | {ms['query']:,.1f} |",
        f"| the sink, one hour (`WHERE minute >= h AND minute < h + 1 hour`) | — | {ms['sinkhour']:,.1f} |",
        f"| `read_flow(NULL::sink, h, h + 1 hour)` | 0 | {ms['hour0']:,.1f} |",
        f"| `read_flow(NULL::sink, h, h + 1 hour)` | 1 (in that hour) | {ms['hour1']:,.1f} |",
    ]
    for k in (0, 1, 100, 1000):
        lines.append(f"| `read_flow(NULL::sink)` | {dirty[k]:,.0f} | {ms[f'read{k}']:,.1f} |")
    lines += [
        "",
        "A clean read is a read of the sink through a set-returning function (its rows go through a "
        "tuplestore); each dirty window adds the query over that window's rows only (read through the "
        "source's time index), so the cost follows the dirty windows, not the sink or the source. After the "
        "1,000-window read, `read_flow` and the query were compared in each round: "
        + ("identical." if exact else f"**they differ** ({diffs})."),
        "",
    ]
    sections.append("\n".join(lines))
