# Chains of flows and epoch time columns: the report of
# run.sh's "chain" section (bench/chain.sh). Called by report.py with its helpers;
# adds summary rows and one detail section.


def chain_report(sel, median, paired, add, sections, meta):
    cascade, byhand = sel("chain", "cascade"), sel("chain", "byhand")
    if not cascade or not byhand:
        return
    conv = [v[0] for v in sel("chain", "converge").values()]
    ok = [v[0] for v in sel("chain", "converged").values()]
    exact = [v[0] for v in sel("chain", "exact").values()]
    ratios = paired(cascade, byhand, lambda a, b: a[0] / b[0])
    ms, tz = sel("chain", "epms"), sel("chain", "eptz")
    ep = paired(ms, tz, lambda a, b: a[0] / b[0])

    def spread(xs):
        return f"{median(xs):.2f}x ({min(xs):.2f}–{max(xs):.2f}, {len(xs)})" if xs else "n/a"

    if conv:
        add("chain", "1m -> 1h -> 1d chain, default settings: from a raw write's commit to an exact daily level, "
            "no flush (s)", ", ".join(f"{c / 1000:.0f}" for c in conv), "≤ 2 min",
            all(o == 1 for o in ok) and max(conv) <= 120000)
    add("chain", "flush_flow(top, cascade => true) / the three levels flushed by hand", spread(ratios), "—", None)
    add("chain", "daily level equal to its query after the flushes", "equal" if exact == [0] else f"{exact}",
        "equal", exact == [0])
    add("chain", "one-window refresh, bigint epoch-ms column / timestamptz column", spread(ep), "≤ 1.2x",
        bool(ep) and median(ep) <= 1.2)
    converge = ", ".join(f"{c / 1000:.1f} s" for c in conv) or "not run (quick mode)"
    sections.append(f"""## Chains of flows and epoch time columns (section `chain`)

`bench_chain` (bench/chain.sh): a raw table of 50 hosts, flows `ch_1m` (per minute and host),
`ch_1h` over its sink and `ch_1d` over that one, all with default settings (no
`eval_interval`). From the commit of {meta.get('CHAIN_BATCH', '?')} rows to a daily level
equal to its query, with no flush: {converge}. The cascading flush and the three flushes by
hand (alternated, each after a write of the same size): medians
{median([v[0] for v in cascade.values()]):,.1f} and {median([v[0] for v in byhand.values()]):,.1f} ms.

Epoch time: {meta.get('CHAIN_ROWS', '?')} rows with a bigint column of epoch milliseconds and
the same rows with a timestamptz column; one late row then `flush_flow` on each, alternated:
medians {median([v[0] for v in ms.values()]):,.1f} and {median([v[0] for v in tz.values()]):,.1f} ms.
""")
