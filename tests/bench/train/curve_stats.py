#!/usr/bin/env python3
"""Summarises one or more `batchai train` runs (their metrics.csv) against the accuracy targets.

Usage: curve_stats.py RUN/metrics.csv [RUN2/metrics.csv ...] [--window 20]
Per run: the first epoch (and seconds of epochs) at 70% and 75% validation accuracy, the best
epoch, the final accuracy, the lowest-loss epoch, and mean / standard deviation / range of
validation accuracy over consecutive windows of the last epochs, so a final figure can be read
against the run-to-run and epoch-to-epoch spread.
"""
import argparse
import csv
import statistics


def first_at(rows, level):
    seconds = 0.0
    for r in rows:
        seconds += float(r["seconds"])
        if float(r["val_acc"]) >= level:
            return f"epoch {r['epoch']} ({seconds:.0f} s)"
    return "never"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--window", type=int, default=20)
    args = ap.parse_args()
    for path in args.runs:
        with open(path) as f:
            rows = list(csv.DictReader(f))
        if not rows:
            raise SystemExit(f"{path}: no epochs")
        acc = [float(r["val_acc"]) for r in rows]
        loss = [float(r["loss"]) for r in rows]
        best = max(range(len(acc)), key=acc.__getitem__)
        low = min(range(len(loss)), key=loss.__getitem__)
        print(f"{path}: {len(rows)} epochs")
        print(f"  70%: {first_at(rows, 0.70)}; 75%: {first_at(rows, 0.75)}")
        print(f"  best {acc[best]:.4f} (epoch {best + 1}); final {acc[-1]:.4f}; "
              f"lowest training loss {loss[low]:.4f} (epoch {low + 1}), final {loss[-1]:.4f}")
        for end in range(len(acc), 0, -args.window)[:3]:
            window = acc[max(0, end - args.window):end]
            if len(window) < 2:
                break
            print(f"  epochs {end - len(window) + 1}-{end}: mean {statistics.mean(window):.4f} "
                  f"sd {statistics.stdev(window):.4f} min {min(window):.4f} max {max(window):.4f} "
                  f">= 75%: {sum(a >= 0.75 for a in window)}/{len(window)}")


if __name__ == "__main__":
    main()
