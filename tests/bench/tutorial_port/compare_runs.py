#!/usr/bin/env python3
"""Compares the per-epoch validation accuracy of `batchai train` runs and tutorial_port.py runs (two or
more seeds each; their metrics.csv) on the same schedule.

Usage: compare_runs.py --batchai A.csv B.csv [...] --port A.csv B.csv [...] [--tolerance 0.01] [--markdown] [--paired]
                       [--epochs N] [--svg OUT.svg [--title TEXT]]
Per epoch: every run's accuracy, the seed spread of each side (largest minus smallest; with two seeds
|A - B|), and the difference of the means (port - batchai). The verdict says whether every epoch's
difference is within ±tolerance and whether it is within the seed spread (the larger of the two
sides' spreads at that epoch), and what the ±tolerance test gives two runs of one program: each
side's seeds against each other, and a normal model of identical sides with these many seeds. Then
each run's level over the second half of the epochs (the mean of its validation passes there) and the
difference of the sides' mean levels, with a permutation p-value over the runs and, where the runs
are enough (4 + 4 and more), the 95% interval of the difference that test does not reject; with
--paired (run i of each side on the same draws) also the pairs' differences and their sign-flip
p-value. --epochs N weighs only epochs 1..N (a shorter run against the start of a longer schedule).
--svg also draws every run's validation accuracy and training loss against the epoch
(batchai's seeds solid, the port's dashed), a plain SVG; it is drawn even with one run a side, where
the comparison itself needs two and the exit status is 1.
"""
import argparse
import csv
import itertools
import math
import re
import statistics
from xml.sax.saxutils import escape


def read(path, column="val_acc"):
    with open(path) as f:
        return {int(r["epoch"]): float(r[column]) for r in csv.DictReader(f)}


MAX_SPLITS = 1_000_000  # exchange_p enumerates every split: 10 + 10 runs are 184,756


def exchange_p(ours, theirs):
    """Two-sided permutation p-value of the difference of the sides' means: the share of all ways
    to split the runs into groups of the sides' sizes whose difference is at least as large as the
    observed one, and the smallest value it could take with these many runs (2 + 2 runs: 1/3, 3 + 3:
    1/10): whether the runs could be exchanged between the sides, and how little a few runs can show.
    (None, None) past MAX_SPLITS splits."""
    runs, k, m = ours + theirs, len(theirs), len(ours)
    if math.comb(len(runs), k) > MAX_SPLITS:
        return None, None
    total = sum(runs)
    diffs = [abs(g / k - (total - g) / m) for g in map(sum, itertools.combinations(runs, k))]
    observed = abs(sum(theirs) / k - sum(ours) / m)
    share = lambda at_least: sum(d >= at_least - 1e-12 for d in diffs) / len(diffs)  # noqa: E731
    return share(observed), share(max(diffs))


def sign_flip_p(diffs):
    """Two-sided sign-flip p-value of paired differences (run i of one side against run i of the
    other, on the same draws): the share of all 2^n ways to flip the pairs' signs whose mean is at
    least as far from 0 as the observed one, and the smallest value it could take (2 / 2^n, where no
    difference is 0). (None, None) past MAX_SPLITS sign patterns."""
    n = len(diffs)
    if n == 0 or 2 ** n > MAX_SPLITS:
        return None, None
    means = [abs(sum(s * d for s, d in zip(signs, diffs))) / n for signs in itertools.product((1, -1), repeat=n)]
    observed = abs(sum(diffs)) / n
    share = lambda at_least: sum(m >= at_least - 1e-12 for m in means) / len(means)  # noqa: E731
    return share(observed), share(max(means))


def p_shown(p, p_min, nb, np_):
    return (f"p = {p:.3g} (two-sided; {p_min:.2g} at best with {nb} + {np_} runs)" if p is not None
            else f"not weighed ({nb} + {np_} runs are over {MAX_SPLITS:,} splits)")


def shift_interval(ours, theirs, level=0.95):
    """The differences of the sides (theirs - ours) that the permutation test does not reject at
    1 - level: the port's runs moved by -delta must be exchangeable with batchai's. Found by bisection
    on each side of the observed difference; None where the runs are too few for the level (the best
    p of 2 + 2 or 3 + 3 runs is above 0.05) or too many to weigh."""
    _, p_min = exchange_p(ours, theirs)
    if p_min is None or p_min > 1 - level:
        return None
    observed = sum(theirs) / len(theirs) - sum(ours) / len(ours)
    width = max(theirs + ours) - min(theirs + ours)
    rejected = lambda delta: exchange_p(ours, [v - delta for v in theirs])[0] < 1 - level  # noqa: E731

    def edge(outward):
        inside, outside = observed, observed + outward * width
        while abs(outside - inside) > 1e-4 * width:
            middle = (inside + outside) / 2
            inside, outside = (inside, middle) if rejected(middle) else (middle, outside)
        return inside
    return edge(-1), edge(+1)


def common_epochs(runs, last=0):
    """The epochs every run has, up to `last` when given (0: all of them)."""
    return sorted(e for e in set.intersection(*(set(r) for r in runs)) if not last or e <= last)


def late_levels(runs, epochs):
    """The second half of the epochs, and each run's level there (the mean of its values)."""
    late = epochs[len(epochs) // 2:]
    return late, [sum(run[e] for e in late) / len(late) for run in runs]


def plateau_levels(ours, theirs, epochs, what="validation accuracy", percent=True):
    """Each run's level over the second half of the epochs (the mean of its per-epoch values there):
    one validation pass scatters by about a point from epoch to epoch, a run's level much less, so
    the levels show a difference of a point or less that single epochs cannot. Prints each run's
    level, each side's spread of levels and the difference of the sides' mean levels, with the
    interval that the epoch-to-epoch scatter of the per-epoch difference gives (2 standard errors,
    the epochs taken as independent; it leaves out the run-to-run scatter of levels, which the
    spread of levels shows and the permutation p-value over the runs' levels weighs)."""
    late, lb = late_levels(ours, epochs)
    if len(late) < 2:
        return
    shown = (lambda v: f"{100 * v:.2f}%") if percent else (lambda v: f"{v:.4f}")  # noqa: E731
    delta = (lambda v: f"{100 * v:+.2f} points") if percent else (lambda v: f"{v:+.4f}")  # noqa: E731
    lp = late_levels(theirs, epochs)[1]
    d = [sum(r[e] for r in theirs) / len(theirs) - sum(r[e] for r in ours) / len(ours) for e in late]
    mean = sum(d) / len(d)
    sd = (sum((x - mean) ** 2 for x in d) / (len(d) - 1)) ** 0.5
    p, p_min = exchange_p(lb, lp)
    weighed = p_shown(p, p_min, len(lb), len(lp))
    interval = shift_interval(lb, lp)
    if interval:
        weighed += f"; 95% interval of the difference {delta(interval[0])} to {delta(interval[1])}"
    print(f"\n{what}, levels over epochs {late[0]}-{late[-1]} (each run's mean):"
          f" batchai {' / '.join(shown(v) for v in lb)} (spread {delta(max(lb) - min(lb)).lstrip('+')}),"
          f" port {' / '.join(shown(v) for v in lp)} (spread {delta(max(lp) - min(lp)).lstrip('+')})")
    print(f"port - batchai, mean level: {delta(mean)} (+-{delta(2 * sd / len(d) ** 0.5).lstrip('+')} from the"
          f" epochs' scatter); runs exchanged between the sides: {weighed}")


def paired_levels(ours, theirs, epochs, what="validation accuracy", percent=True):
    """With --paired (run i of each side trained on the same draws): each pair's level difference
    over the second half of the epochs, their mean and the sign-flip p-value, which takes out what
    the draws give both runs of a pair."""
    late, lb = late_levels(ours, epochs)
    shown = (lambda v: f"{100 * v:+.2f}") if percent else (lambda v: f"{v:+.4f}")  # noqa: E731
    diffs = [p - b for b, p in zip(lb, late_levels(theirs, epochs)[1])]
    p, p_min = sign_flip_p(diffs)
    weighed = (f"p = {p:.3g} (two-sided, signs flipped; {p_min:.2g} at best with {len(diffs)} pairs)"
               if p is not None else f"not weighed ({len(diffs)} pairs are over {MAX_SPLITS:,} sign patterns)")
    print(f"paired {what} (run i of each side on the same draws), port - batchai level over epochs"
          f" {late[0]}-{late[-1]}: {' / '.join(shown(d) for d in diffs)}{' points' if percent else ''},"
          f" mean {shown(sum(diffs) / len(diffs))}; {weighed}")


def same_program_yardstick(ours, theirs, epochs, tolerance):
    """What agreement within ±tolerance at every epoch asks of two runs of one program: each side's
    own seeds against each other, pair by pair, and for the means of these many seeds a side, the
    count of epochs within ±tolerance that identical sides would give and the chance that all would
    be (a normal model with each epoch's seed variance pooled over both sides)."""
    def pairs(runs):
        return [sum(abs(a[e] - b[e]) <= tolerance + 1e-9 for e in epochs) for a, b in itertools.combinations(runs, 2)]
    shown = f"±{100 * tolerance:g}%"
    for side, runs in (("batchai", ours), ("port", theirs)):
        counts = sorted(pairs(runs))
        listed = (", ".join(str(k) for k in pairs(runs)) if len(counts) <= 3 else
                  f"{counts[0]}-{counts[-1]} (median {statistics.median(counts):g} of the {len(counts)} pairs)")
        print(f"{side}'s own seeds against each other, within {shown}: {listed} of {len(epochs)} epochs")
    nb, np_ = len(ours), len(theirs)
    expected, every = 0.0, 1.0
    for e in epochs:
        squares = sum((x - sum(side) / len(side)) ** 2 for side in ([r[e] for r in ours], [r[e] for r in theirs])
                      for x in side)
        sd = math.sqrt(squares / (nb + np_ - 2) * (1 / nb + 1 / np_))
        inside = math.erf(tolerance / (sd * math.sqrt(2))) if sd > 0 else 1.0
        expected += inside
        every *= inside
    print(f"if both sides were one program ({nb} + {np_} seeds): {expected:.1f}/{len(epochs)} epochs expected"
          f" within {shown}, every epoch with probability {every:.3f}")


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


def run_label(path, i):
    """'seed N' when the file's name says so (…-seed2.csv, batchai-seed2/metrics.csv), else A, B, …"""
    m = re.search(r"seed(\d+)", path)
    return f"seed {m.group(1)}" if m else chr(65 + i)


def svg_plot(path, title, ours, theirs, labels):
    """Two panels, validation accuracy and training loss per epoch, every run a polyline."""
    runs = [("batchai", i, r) for i, r in enumerate(ours)] + [("port", i, r) for i, r in enumerate(theirs)]
    ends = {"batchai": ((0x1f, 0x5f, 0xa8), (0x9c, 0xc3, 0xe6)), "port": ((0xc0, 0x50, 0x1f), (0xf4, 0xb1, 0x83))}
    counts = {"batchai": len(ours), "port": len(theirs)}

    def colour(side, i):  # each side's runs from its dark shade to its light one
        (dark, light), t = ends[side], i / max(1, counts[side] - 1)
        return "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(dark, light))
    panel_w, panel_h, left, top, gap = 420, 260, 56, 44, 70
    width = left + 2 * panel_w + gap + 20
    per_row = (width - left) // 130
    height = top + panel_h + 52 + 18 * math.ceil(len(runs) / per_row)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="12"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>']
    for k, (column, label) in enumerate((("val_acc", "validation accuracy"), ("loss", "training loss"))):
        x0 = left + k * (panel_w + gap)
        series = [(side, i, sorted(r[column].items())) for side, i, r in runs]
        xs = [e for _, _, pts in series for e, _ in pts]
        ys = [v for _, _, pts in series for _, v in pts]
        e_lo, e_hi = min(xs), max(max(xs), min(xs) + 1)
        y_lo, y_hi = min(ys), max(ys)
        pad = (y_hi - y_lo) * 0.05 or 0.01
        y_lo, y_hi = y_lo - pad, y_hi + pad

        def px(e):
            return x0 + (e - e_lo) / (e_hi - e_lo) * panel_w

        def py(v):
            return top + (y_hi - v) / (y_hi - y_lo) * panel_h

        out.append(f'<rect x="{x0}" y="{top}" width="{panel_w}" height="{panel_h}" fill="none" stroke="#888"/>')
        out.append(f'<text x="{x0 + panel_w / 2}" y="{top - 8}" text-anchor="middle">{label}</text>')
        for t in range(5):
            v = y_lo + (y_hi - y_lo) * t / 4
            shown = f"{100 * v:.1f}%" if column == "val_acc" else f"{v:.3f}"
            out.append(f'<line x1="{x0}" x2="{x0 + panel_w}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#eee"/>')
            out.append(f'<text x="{x0 - 4}" y="{py(v) + 4:.1f}" text-anchor="end">{shown}</text>')
        step = max(1, round((e_hi - e_lo) / 10))
        for e in range(e_lo, e_hi + 1, step):
            out.append(f'<text x="{px(e):.1f}" y="{top + panel_h + 16}" text-anchor="middle">{e}</text>')
        out.append(f'<text x="{x0 + panel_w / 2}" y="{top + panel_h + 32}" text-anchor="middle">epoch</text>')
        for side, i, pts in series:
            dash = ' stroke-dasharray="6 3"' if side == "port" else ""
            line = " ".join(f"{px(e):.1f},{py(v):.1f}" for e, v in pts)
            out.append(f'<polyline points="{line}" fill="none" stroke="{colour(side, i)}" stroke-width="1.6"{dash}/>')
    for n, (side, i, _) in enumerate(runs):
        x = left + n % per_row * 130
        y = top + panel_h + 66 + 18 * (n // per_row)
        dash = ' stroke-dasharray="6 3"' if side == "port" else ""
        out.append(f'<line x1="{x}" x2="{x + 24}" y1="{y - 4}" y2="{y - 4}" stroke="{colour(side, i)}" '
                   f'stroke-width="2"{dash}/><text x="{x + 30}" y="{y}">{side} {escape(labels[n])}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batchai", nargs="+", required=True, metavar="CSV")
    ap.add_argument("--port", nargs="+", required=True, metavar="CSV")
    ap.add_argument("--tolerance", type=float, default=0.01)
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--svg", metavar="OUT", help="also draw every run's curves into this SVG file")
    ap.add_argument("--paired", action="store_true",
                    help="run i of --batchai and run i of --port share their draws: also weigh the pairs")
    ap.add_argument("--title", default="batchai (solid) and the PyTorch port (dashed), per seed")
    ap.add_argument("--epochs", type=int, default=0,
                    help="weigh only epochs 1..N (runs of a longer schedule against the start of it)")
    args = ap.parse_args()
    if args.epochs < 0:
        ap.error("--epochs counts epochs from 1 (0: all of them)")
    if args.paired and len(args.batchai) != len(args.port):
        raise SystemExit("compare_runs: --paired needs as many runs of each side (run i against run i)")
    if args.svg:
        columns = ("val_acc", "loss")
        svg_plot(args.svg, args.title, [{c: read(p, c) for c in columns} for p in args.batchai],
                 [{c: read(p, c) for c in columns} for p in args.port],
                 [run_label(p, i) for i, p in enumerate(args.batchai)] + [run_label(p, i) for i, p in enumerate(args.port)])
    if len(args.batchai) < 2 or len(args.port) < 2:
        raise SystemExit("compare_runs: two or more runs (seeds) of each side are needed for a spread"
                         + (f" (the curves are drawn in {args.svg})" if args.svg else ""))
    ours, theirs = [read(p) for p in args.batchai], [read(p) for p in args.port]
    runs = ours + theirs
    epochs = common_epochs(runs, args.epochs)
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
    same_program_yardstick(ours, theirs, epochs, args.tolerance)
    losses = [read(p, "loss") for p in args.batchai], [read(p, "loss") for p in args.port]
    plateau_levels(ours, theirs, epochs)
    plateau_levels(*losses, epochs, "training loss", percent=False)
    if args.paired:
        print()
        paired_levels(ours, theirs, epochs)
        paired_levels(*losses, epochs, "training loss", percent=False)
    loss_table(args, epochs, args.markdown)
    return 0 if outside_tol == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
