#!/usr/bin/env python3
"""Checks compare_runs.py's statistics on numbers worked by hand (no data, no PyTorch; under a
second): the permutation p-value and its floor, and the interval of differences the permutation
test does not reject (it moves with a shift of one side and agrees with the t interval on normal
samples), and levels_across_schedules.py's test, which deals out a seed's runs on every schedule
together. Prints `ok`; fails with a message."""
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_runs import common_epochs, exchange_p, shift_interval, sign_flip_p  # noqa: E402
from levels_across_schedules import joint_p  # noqa: E402


def close(a, b, tol):
    return abs(a - b) <= tol


def main():
    # 2 + 2 runs split 6 ways; {2, 3} against {0, 1} and its mirror are the two largest: 2/6.
    p, p_min = exchange_p([0.0, 1.0], [2.0, 3.0])
    assert close(p, 1 / 3, 1e-12) and close(p_min, 1 / 3, 1e-12), (p, p_min)
    # 3 + 3: 20 splits, the floor 2/20.
    p, p_min = exchange_p([0.0, 1.0, 2.0], [10.0, 11.0, 12.0])
    assert close(p, 0.1, 1e-12) and close(p_min, 0.1, 1e-12), (p, p_min)
    assert exchange_p([5.0, 5.0], [5.0, 5.0])[0] == 1.0
    # {0, 3} against {1, 2}: both means 1.5, every split at least as far: p = 1.
    assert exchange_p([0.0, 3.0], [1.0, 2.0])[0] == 1.0

    # A 5-epoch run against a 10-epoch schedule: the first five; --epochs 3 the first three.
    ten, five = {e: 0.5 for e in range(1, 11)}, {e: 0.5 for e in range(1, 6)}
    assert common_epochs([ten, five]) == [1, 2, 3, 4, 5] and common_epochs([ten, five], 3) == [1, 2, 3]
    assert common_epochs([ten, ten], 12) == list(range(1, 11))

    # Too few runs for a 95% interval (3 + 3 can give 0.1 at best).
    assert shift_interval([0.0, 1.0, 2.0], [1.0, 2.0, 3.0]) is None

    rng = random.Random(7)
    ours = [rng.gauss(50.0, 1.0) for _ in range(8)]
    theirs = [rng.gauss(49.0, 1.0) for _ in range(8)]
    low, high = shift_interval(ours, theirs)
    observed = statistics.mean(theirs) - statistics.mean(ours)
    assert low < observed < high, (low, observed, high)
    # Moving one side by c moves the interval by c.
    low2, high2 = shift_interval(ours, [v + 0.7 for v in theirs])
    assert close(low2, low + 0.7, 1e-3) and close(high2, high + 0.7, 1e-3), (low, high, low2, high2)
    # The pooled t interval (t 0.975 with 14 degrees of freedom: 2.145) on the same samples.
    pooled = ((statistics.variance(ours) + statistics.variance(theirs)) / 2 * (2 / 8)) ** 0.5
    half = 2.145 * pooled
    assert close(high - low, 2 * half, 0.2 * half), (high - low, 2 * half)
    # At the interval's edges the test is at 0.05: just inside not rejected, just outside rejected.
    width = max(ours + theirs) - min(ours + theirs)
    for edge, outward in ((low, -1), (high, +1)):
        assert exchange_p(ours, [v - (edge - outward * 1e-3 * width) for v in theirs])[0] >= 0.05
        assert exchange_p(ours, [v - (edge + outward * 1e-3 * width) for v in theirs])[0] < 0.05

    # Paired: four pairs all below by 1, 2, 3, 4: of 16 sign patterns only all-minus and all-plus
    # are as far from 0, p = 2/16. With the smallest flipped the sum is -8 of 10: the patterns that
    # reach |sum| >= 8 are the two of all one sign and the two with only the 1 flipped, p = 4/16.
    p, p_min = sign_flip_p([-1.0, -2.0, -3.0, -4.0])
    assert close(p, 2 / 16, 1e-12) and close(p_min, 2 / 16, 1e-12), (p, p_min)
    p, _ = sign_flip_p([1.0, -2.0, -3.0, -4.0])
    assert close(p, 4 / 16, 1e-12), p
    assert sign_flip_p([0.0, 0.0])[0] == 1.0
    # A shift the pairs share is not a difference: the paired test sees 1 per pair, the unpaired
    # one only 1 against a spread of 30.
    base = [0.0, 10.0, 20.0, 30.0, 40.0, 50.0]
    assert close(sign_flip_p([1.0] * 6)[0], 2 / 64, 1e-12)
    assert exchange_p(base, [v + 1.0 for v in base])[0] > 0.5

    # Two schedules, seeds 1-3 a side, the port below on both: 20 deals of the six seeds (not 20 x 20:
    # a seed's runs go together), and the observed split is one of the two most extreme.
    schedules = {name: {**{("batchai", k): base + 0.01 * k for k in (1, 2, 3)},
                        **{("port", k): base - 0.05 + 0.01 * k for k in (1, 2, 3)}}
                 for name, base in (("short", 0.5), ("long", 0.8))}
    observed, p, p_min, deals = joint_p(schedules)
    assert deals == 20 and close(observed, -0.10, 1e-12) and close(p, 0.1, 1e-12) and close(p_min, 0.1, 1e-12), \
        (observed, p, p_min, deals)
    # The port below on one schedule and above by as much on the other: the sum is 0, p = 1.
    schedules["long"] = {u: v + (0.10 if u[0] == "port" else 0.0) for u, v in schedules["long"].items()}
    observed, p, _, _ = joint_p(schedules)
    assert close(observed, 0.0, 1e-12) and p == 1.0, (observed, p)
    # A seed run on one schedule only: deals that leave a schedule without a run on a side do not count.
    observed, p, _, deals = joint_p({"a": {("batchai", 1): 0.5, ("port", 1): 0.4},
                                     "b": {("batchai", 2): 0.5, ("port", 2): 0.4}})
    assert deals == 4 and close(p, 0.5, 1e-12), (deals, p)
    print("ok")


if __name__ == "__main__":
    main()
