#!/usr/bin/env python3
"""Compares the per-epoch validation accuracy of two `batchai train` runs and two tutorial_port.py runs
(two seeds each; their metrics.csv) on the same schedule.

Usage: compare_runs.py --batchai A.csv B.csv --port A.csv B.csv [--tolerance 0.01] [--markdown]
Per epoch: the four accuracies, the seed spread of each side (|seed A - seed B|), and the difference of
the means (port - batchai). The verdict says whether every epoch's difference is within ±tolerance and
whether it is within the seed spread (the larger of the two sides' spreads at that epoch).
"""
import argparse
import csv


def read(path):
    with open(path) as f:
        return {int(r["epoch"]): float(r["val_acc"]) for r in csv.DictReader(f)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batchai", nargs=2, required=True, metavar="CSV")
    ap.add_argument("--port", nargs=2, required=True, metavar="CSV")
    ap.add_argument("--tolerance", type=float, default=0.01)
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args()
    runs = [read(p) for p in args.batchai + args.port]
    epochs = sorted(set.intersection(*(set(r) for r in runs)))
    if not epochs:
        raise SystemExit("compare_runs: no epoch common to the four runs")

    head = ["epoch", "batchai A", "batchai B", "port A", "port B",
            "batchai spread", "port spread", "port - batchai", "within ±tol", "within spread"]
    head[-2] = f"within ±{100 * args.tolerance:g}%"
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(f"{'epoch':>5} {'batchai A':>9} {'batchai B':>9} {'port A':>7} {'port B':>7} "
              f"{'b spread':>8} {'p spread':>8} {'p - b':>7}")
    outside_tol = outside_spread = 0
    diffs, spreads = [], []
    for e in epochs:
        ba, bb, pa, pb = (r[e] for r in runs)
        bs, ps = abs(ba - bb), abs(pa - pb)
        d = (pa + pb) / 2 - (ba + bb) / 2
        tol_ok = abs(d) <= args.tolerance + 1e-9
        spread_ok = abs(d) <= max(bs, ps) + 1e-9
        outside_tol += not tol_ok
        outside_spread += not spread_ok
        diffs.append(d)
        spreads.append(max(bs, ps))
        if args.markdown:
            cells = [str(e)] + [f"{100 * v:.2f}%" for v in (ba, bb, pa, pb)] + \
                [f"{100 * bs:.2f}", f"{100 * ps:.2f}", f"{100 * d:+.2f}",
                 "yes" if tol_ok else "**no**", "yes" if spread_ok else "**no**"]
            print("| " + " | ".join(cells) + " |")
        else:
            flags = ("" if tol_ok else "  outside ±tol") + ("" if spread_ok else "  outside spread")
            print(f"{e:>5} {ba:>9.4f} {bb:>9.4f} {pa:>7.4f} {pb:>7.4f} {bs:>8.4f} {ps:>8.4f} {d:>+7.4f}{flags}")
    n = len(epochs)
    print(f"\n{n} epochs: mean difference of means {100 * sum(diffs) / n:+.2f}%, "
          f"max |difference| {100 * max(abs(d) for d in diffs):.2f}%, "
          f"mean seed spread {100 * sum(spreads) / n:.2f}%")
    print(f"within ±{100 * args.tolerance:g}%: {n - outside_tol}/{n} epochs"
          f"{' (every epoch)' if outside_tol == 0 else ''}; "
          f"within the seed spread: {n - outside_spread}/{n} epochs"
          f"{' (every epoch)' if outside_spread == 0 else ''}")
    return 0 if outside_tol == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
