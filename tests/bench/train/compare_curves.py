#!/usr/bin/env python3
"""Compares the per-epoch validation accuracy of two `batchai train` runs (their metrics.csv).

Usage: compare_curves.py REFERENCE/metrics.csv OTHER/metrics.csv [--tolerance 0.01]
Prints one row per epoch both runs reached, the difference, and how many epochs differ by more
than the tolerance (issue: two ranks with --shard track the one-rank curve within 1% per epoch).
"""
import argparse
import csv


def read(path):
    with open(path) as f:
        return {int(r["epoch"]): r for r in csv.DictReader(f)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reference")
    ap.add_argument("other")
    ap.add_argument("--tolerance", type=float, default=0.01)
    args = ap.parse_args()
    ref, other = read(args.reference), read(args.other)
    epochs = sorted(set(ref) & set(other))
    if not epochs:
        raise SystemExit("no epoch in common")
    # Training loss (averaged over a whole epoch) shows whether the runs still take the same
    # steps; validation accuracy is what the tolerance applies to.
    print(f"{'epoch':>5} {'val_acc ref':>11} {'val_acc other':>13} {'diff':>7} {'loss ref':>9} {'loss other':>10}")
    outside, worst = 0, 0.0
    for e in epochs:
        a, b = float(ref[e]["val_acc"]), float(other[e]["val_acc"])
        d = b - a
        worst = max(worst, abs(d))
        flag = ""
        if abs(d) > args.tolerance:
            outside += 1
            flag = "  *"
        la, lb = float(ref[e]["loss"]), float(other[e]["loss"])
        print(f"{e:>5} {a:>11.4f} {b:>13.4f} {d:>+7.4f} {la:>9.4f} {lb:>10.4f}{flag}")
    mean = sum(float(other[e]["val_acc"]) - float(ref[e]["val_acc"]) for e in epochs) / len(epochs)
    print(f"{len(epochs)} epochs compared: mean diff {mean:+.4f}, max |diff| {worst:.4f}, "
          f"{outside} outside ±{args.tolerance:g}")


if __name__ == "__main__":
    main()
