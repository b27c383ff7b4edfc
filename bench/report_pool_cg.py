#!/usr/bin/env python3
"""The write path unchanged by the pool of workers: compares the raw instruction counts of two
runs of bench/callgrind.sh (raw/callgrind.tsv of the build before the pool and of
today's) and prints a markdown table: per case the instructions per row or
transaction in both builds, the flow / no-flow ratio of each, and today's ratio
against the base's (target: within 1 %). Standard library only.

usage: report_pool_cg.py BASE_TSV TODAY_TSV BASE_NAME TODAY_NAME
"""
import sys

# (kind, order) -> label of the case; the columns after the no-flow count
COLS = {"copy": ("1 flow", "5 flows"), "multirow": ("1 flow", "5 flows"),
        "tx": ("1 flow, same window", "1 flow, new window"), "tx5": ("5 flows, same window", "5 flows, new window"),
        "tx_inorder": ("1 flow",), "tx_day": ("1 flow",), "copy_partitioned": ("1 flow",)}
LABEL = {"copy": "COPY", "multirow": "multi-row INSERT", "copy_partitioned": "COPY through a partitioned parent",
         "tx": "single-row transactions", "tx5": "single-row transactions",
         "tx_inorder": "single-row transactions in time order", "tx_day": "single-row transactions within one day"}


def load(path):
    out = {}
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) >= 5:
                out[(p[0], p[1])] = (int(p[2]), [None if x == "-" else int(x) for x in p[3:]])
    return out


def main():
    base, today = load(sys.argv[1]), load(sys.argv[2])
    bname, tname = sys.argv[3], sys.argv[4]
    lines = [f"| case | per | no flow: {bname} / {tname} | flows | instructions {bname} / {tname} | "
             f"ratio to no flow {bname} / {tname} | today's ratio / base's | within 1 % |",
             "|---|---|---|---|---|---|---|---|"]
    worst, n_ok, n_all = 0.0, 0, 0
    for key in sorted(base, key=lambda k: list(COLS).index(k[0]) if k[0] in COLS else 99):
        if key not in today or key[0] not in COLS:
            continue
        (rows, b), (_, t) = base[key], today[key]
        order = "" if key[1] == "-" else (", in time order" if key[1] == "inorder" else ", scattered over a year")
        per = "row" if key[0] in ("copy", "multirow", "copy_partitioned") else "transaction"
        for i, col in enumerate(COLS[key[0]]):
            fb, ft = b[i + 1], t[i + 1]
            if fb is None or ft is None:
                continue
            rb, rt = fb / b[0], ft / t[0]
            d = rt / rb - 1
            worst = max(worst, abs(d))
            n_all += 1
            n_ok += abs(d) <= 0.01
            lines.append(f"| {LABEL[key[0]]}{order} | {per} ({rows:,}) | {b[0] / rows:,.0f} / {t[0] / rows:,.0f} | "
                         f"{col} | {fb / rows:,.0f} / {ft / rows:,.0f} | {rb:.4f}x / {rt:.4f}x | {d * 100:+.2f} % | "
                         f"{'PASS' if abs(d) <= 0.01 else 'FAIL'} |")
    print(f"# The write path before and after the pool\n\n`bench/pool_callgrind.sh`: "
          f"`bench/callgrind.sh` for {bname} (before the pool) and {tname} (today), each built and installed in its "
          f"own copy of PostgreSQL.\n")
    print("\n".join(lines))
    print(f"\n{n_ok} of {n_all} ratios within 1 % of the base's; the largest difference {worst * 100:.2f} % "
          f"({'PASS' if n_ok == n_all else 'FAIL'}, target: every ratio within 1 %).")


main()
