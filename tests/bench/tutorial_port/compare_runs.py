#!/usr/bin/env python3
"""Compares the per-epoch validation accuracy of `batchai train` runs and tutorial_port.py runs (two or
more seeds each; their metrics.csv) on the same schedule.

Usage: compare_runs.py --batchai A.csv B.csv [...] --port A.csv B.csv [...] [--tolerance 0.01] [--markdown]
Per epoch: every run's accuracy, the seed spread of each side (largest minus smallest; with two seeds
|A - B|), and the difference of the means (port - batchai). The verdict says whether every epoch's
difference is within ±tolerance and whether it is within the seed spread (the larger of the two
sides' spreads at that epoch).
"""
import argparse
import csv


def read(path, column="val_acc"):
    with open(path) as f:
        return {int(r["epoch"]): float(r[column]) for r in csv.DictReader(f)}


def loss_table(args, epochs, markdown):
    """The epoch's training loss (mean over its batches, dropout and augmentation on): a steadier
    signal than one validation pass, so it shows whether both sides take the same path."""
    ours = [read(p, "loss") for p in args.batchai]
    theirs = [read(p, "loss") for p in args.port]
    head = ["epoch", "batchai loss (seeds)", "port loss (seeds)", "port - batchai (means)", "port inside batchai's range"]
    print()
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print("  ".join(head))
    inside = 0
    for e in epochs:
        b, p = [r[e] for r in ours], [r[e] for r in theirs]
        d = sum(p) / len(p) - sum(b) / len(b)
        ok = all(min(b) <= v <= max(b) for v in p)
        inside += ok
        cells = [str(e), " / ".join(f"{v:.3f}" for v in b), " / ".join(f"{v:.3f}" for v in p), f"{d:+.3f}",
                 "yes" if ok else "no"]
        print("| " + " | ".join(cells) + " |" if markdown else "  ".join(cells))
    print(f"training loss: every port run inside batchai's seed range at {inside}/{len(epochs)} epochs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batchai", nargs="+", required=True, metavar="CSV")
    ap.add_argument("--port", nargs="+", required=True, metavar="CSV")
    ap.add_argument("--tolerance", type=float, default=0.01)
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args()
    if len(args.batchai) < 2 or len(args.port) < 2:
        raise SystemExit("compare_runs: two or more runs (seeds) of each side are needed for a spread")
    ours, theirs = [read(p) for p in args.batchai], [read(p) for p in args.port]
    runs = ours + theirs
    epochs = sorted(set.intersection(*(set(r) for r in runs)))
    if not epochs:
        raise SystemExit("compare_runs: no epoch common to all runs")

    names = [f"batchai {chr(65 + i)}" for i in range(len(ours))] + \
        [f"port {chr(65 + i)}" for i in range(len(theirs))]
    head = ["epoch"] + names + ["batchai spread", "port spread", "port - batchai",
                                f"within ±{100 * args.tolerance:g}%", "within spread"]
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(" ".join(f"{h:>9}" for h in ["epoch"] + names + ["b spread", "p spread", "p - b"]))
    outside_tol = outside_spread = 0
    diffs, spreads = [], []
    for e in epochs:
        b, p = [r[e] for r in ours], [r[e] for r in theirs]
        bs, ps = max(b) - min(b), max(p) - min(p)
        d = sum(p) / len(p) - sum(b) / len(b)
        tol_ok = abs(d) <= args.tolerance + 1e-9
        spread_ok = abs(d) <= max(bs, ps) + 1e-9
        outside_tol += not tol_ok
        outside_spread += not spread_ok
        diffs.append(d)
        spreads.append(max(bs, ps))
        if args.markdown:
            cells = [str(e)] + [f"{100 * v:.2f}%" for v in b + p] + \
                [f"{100 * bs:.2f}", f"{100 * ps:.2f}", f"{100 * d:+.2f}",
                 "yes" if tol_ok else "**no**", "yes" if spread_ok else "**no**"]
            print("| " + " | ".join(cells) + " |")
        else:
            flags = ("" if tol_ok else "  outside ±tol") + ("" if spread_ok else "  outside spread")
            print(" ".join([f"{e:>9}"] + [f"{v:>9.4f}" for v in b + p + [bs, ps]] + [f"{d:>+9.4f}"]) + flags)
    n = len(epochs)
    print(f"\n{n} epochs: mean difference of means {100 * sum(diffs) / n:+.2f}%, "
          f"max |difference| {100 * max(abs(d) for d in diffs):.2f}%, "
          f"mean seed spread {100 * sum(spreads) / n:.2f}%")
    print(f"within ±{100 * args.tolerance:g}%: {n - outside_tol}/{n} epochs"
          f"{' (every epoch)' if outside_tol == 0 else ''}; "
          f"within the seed spread: {n - outside_spread}/{n} epochs"
          f"{' (every epoch)' if outside_spread == 0 else ''}")
    loss_table(args, epochs, args.markdown)
    return 0 if outside_tol == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
