#!/usr/bin/env python3
"""Weighs the validation level difference (port - batchai) of several schedules at once, with the
runs of one seed kept together.

Usage: levels_across_schedules.py --schedule NAME --batchai A.csv [...] --port A.csv [...]
                                  [--schedule NAME --batchai ... --port ...] ...
Each run's level is its mean validation accuracy over the second half of the epochs, as in
compare_runs.py. A run's seed comes from its file name (…-seed2.csv, …/port-seed2/metrics.csv). One
seed of one side is one unit: its initial weights and first draws are the same on every schedule,
so its runs there are not independent samples, and a test that treats them so finds too much. The
statistic is the sum over the schedules of the difference of the sides' mean levels; its two-sided
p-value is the share of all ways to deal the units out to the sides (as many to each as there are)
whose statistic is at least as large, counting only deals that leave every schedule a run on each
side.
"""
import argparse
import itertools
import math
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_runs import MAX_SPLITS, read  # noqa: E402


def seed_of(path):
    m = re.search(r"seed(\d+)", path)
    if not m:
        raise SystemExit(f"levels_across_schedules: no seed in the name of {path}")
    return int(m.group(1))


def level(path):
    run = read(path)
    if not run:
        raise SystemExit(f"levels_across_schedules: no epochs in {path}")
    epochs = sorted(run)
    late = epochs[len(epochs) // 2:]
    return sum(run[e] for e in late) / len(late)


def joint_p(schedules):
    """schedules: {name: {(side, seed): level}} with side 'batchai' or 'port'. Returns the observed
    statistic, its p-value, the smallest p these units can give, and the number of deals counted."""
    units = sorted({u for runs in schedules.values() for u in runs})
    k = sum(side == "port" for side, _ in units)
    if math.comb(len(units), k) > MAX_SPLITS:
        raise SystemExit(f"levels_across_schedules: {len(units)} units are over {MAX_SPLITS:,} deals")

    def statistic(port_units):
        total = 0.0
        for runs in schedules.values():
            p = [v for u, v in runs.items() if u in port_units]
            b = [v for u, v in runs.items() if u not in port_units]
            if not p or not b:
                return None
            total += sum(p) / len(p) - sum(b) / len(b)
        return total
    observed = statistic({u for u in units if u[0] == "port"})
    values = [v for v in (statistic(set(g)) for g in itertools.combinations(units, k)) if v is not None]
    share = lambda at_least: sum(abs(v) >= at_least - 1e-12 for v in values) / len(values)  # noqa: E731
    return observed, share(abs(observed)), share(max(abs(v) for v in values)), len(values)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--schedule", action="append", required=True)
    ap.add_argument("--batchai", action="append", nargs="+", required=True, metavar="CSV")
    ap.add_argument("--port", action="append", nargs="+", required=True, metavar="CSV")
    args = ap.parse_args()
    if not len(args.schedule) == len(args.batchai) == len(args.port):
        raise SystemExit("levels_across_schedules: each --schedule needs its --batchai and --port runs")
    schedules = {}
    for name, ours, theirs in zip(args.schedule, args.batchai, args.port):
        runs = {("batchai", seed_of(p)): level(p) for p in ours}
        runs.update({("port", seed_of(p)): level(p) for p in theirs})
        if len(runs) != len(ours) + len(theirs):
            raise SystemExit(f"levels_across_schedules: a seed twice on one side of {name}")
        schedules[name] = runs
        b = [v for (side, _), v in runs.items() if side == "batchai"]
        p = [v for (side, _), v in runs.items() if side == "port"]
        print(f"{name}: port - batchai, mean level {100 * (sum(p) / len(p) - sum(b) / len(b)):+.2f} points"
              f" ({len(b)} + {len(p)} runs)")
    observed, p, p_min, deals = joint_p(schedules)
    print(f"sum over the schedules: {100 * observed:+.2f} points; seeds dealt out to the sides: p = {p:.3g}"
          f" (two-sided; {p_min:.2g} at best; {deals:,} deals)")


if __name__ == "__main__":
    main()
