#!/usr/bin/python3
"""Lockstep from a late state: lockstep.py's check (batchai's steps against the port's, float64 the
reference) begun from a checkpoint of `batchai train` instead of the initial weights, so that a
difference that only matters once training is under way (accumulators that have seen tens of
thousands of gradients, a decayed learning rate, confident predictions and the loss clip) shows too.

tutorial_lockstep --start CHECKPOINT --augment --dropout resumes the checkpoint for STEPS steps in
epochs of S steps (--steps-per-epoch; the steps of an epoch go through the trainer's own batch
prefetching and keys, as in a full run; augmentation and dropout on, as the tutorial trains) and
keeps its state (weights and RMSprop accumulators) after every epoch. Two comparisons follow:

- retaken epochs: each of batchai's epochs is taken again by the port from batchai's own state
  before it (weights, accumulators, update count), on the same images and dropout choices, once in
  float64 (the reference; its weights and accumulators rounded to float32 after every update, as
  both trainers store them) and once in float32. Per layer: how far batchai's update and the port's
  float32 update are from the reference's (the norm of the difference over the norm of the
  reference's update; the median over the epochs), whether either is systematically longer or
  shorter (the difference projected on the reference's update: the mean and its standard error over
  the epochs), the same for the accumulators, and the loss each computes from the same state.
  Rounding has no time to part the trainers within one or two steps, so a difference in the step
  itself shows here, epoch after epoch. (From four steps on it has: at this stage float32 runs leave
  the float64 one by about ten times a step.)
- free run: the port's own trajectory from the checkpoint, in float64 and float32; batchai's epoch
  losses against the float64 ones, as lockstep.py shows them from the start.

It passes when batchai's loss from each state is off the reference's by at most 1e-5 or four times
the port's float32 loss, each layer's median update difference is at most four times the port's
float32 one (or 1e-5 of the update), and its systematic part is within 1e-4 of the update or three
standard errors. --mutate breaks one piece of the port as in lockstep.py; here `decay` (the
learning rate not decayed: 3.9% too large after the tutorial's 39,075 updates) is caught as well.

Usage: late_lockstep.py --data-dir DIR --out DIR --start CHECKPOINT [--exe ...tutorial_lockstep]
                        [--ranks 4] [--batch 32] [--steps 20] [--steps-per-epoch 1] [--seed 1]
                        [--threads 2] [--reuse] [--mutate WHAT]
CHECKPOINT: RUN/checkpoints/checkpoint.bin of a `batchai train` run of the same seed, ranks and
batch (the tutorial's: 4 ranks, batch 32). DIR holds the CIFAR-10 binary files (plain or .xz).
Exits 0 when it passes, 1 when not.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lockstep as ls  # noqa: E402
import tutorial_port as tp  # noqa: E402


def layers(table):
    """Keras layer name -> the arena's slices of its weights (kernel and bias)."""
    out = {}
    for e in table:
        n = int(torch.tensor(e["shape"]).prod())
        out.setdefault(e["layer"], []).append(slice(e["offset"], e["offset"] + n))
    return out


def gather(flat, slices):
    return torch.cat([flat[s] for s in slices]).double()


def layer_distance(a, b, update, slices):
    """|a - b| over |update| on one layer's slices."""
    norm = gather(update, slices).norm().item()
    return (gather(a, slices) - gather(b, slices)).norm().item() / norm if norm > 0 else 0.0


def compare(ref, other, slices):
    """(|other - ref| / |ref|, <other - ref, ref> / |ref|^2) over one layer's slices."""
    r, o = gather(ref, slices), gather(other, slices)
    norm2 = r.dot(r).item()
    return (layer_distance(other, ref, ref, slices), (o - r).dot(r).item() / norm2) if norm2 > 0 else (0.0, 0.0)


def mean_se(values):
    m = statistics.fmean(values)
    return m, (statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0)


def run_batchai(args):
    if args.reuse and os.path.exists(os.path.join(args.out, f"state-{args.steps // args.steps_per_epoch}.f32")):
        return
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")  # containers, CI
    subprocess.run(["mpirun", "-np", str(args.ranks), "--oversubscribe", "--bind-to", "none", ls.checked_exe(args.exe),
                    "--data-dir", args.data_dir, "--out", args.out, "--batch", str(args.batch),
                    "--steps", str(args.steps), "--steps-per-epoch", str(args.steps_per_epoch),
                    "--seed", str(args.seed), "--threads", "1",
                    "--augment", "--dropout", "--start", args.start],
                   check=True, stdout=subprocess.DEVNULL, env=env, timeout=600 + 30 * args.steps)


def start_arguments(doc):
    """The options of a tool that begins from a batchai checkpoint read by tutorial_lockstep --start."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--start", required=True, help="a batchai train checkpoint (checkpoints/checkpoint.bin)")
    ap.add_argument("--exe", default="build/tests/bench/tutorial_port/tutorial_lockstep")
    return ap


def read_start(out):
    """tutorial_lockstep --start's parameter table, the checkpoint's epoch and update count, and the
    number of weights."""
    with open(os.path.join(out, "table.json")) as f:
        table = json.load(f)
    with open(os.path.join(out, "start.json")) as f:
        start = json.load(f)
    return table, start, sum(int(torch.tensor(e["shape"]).prod()) for e in table)


def read_state(args, k, count):
    state = ls.read_f32(os.path.join(args.out, f"state-{k}.f32"))
    if state.numel() != 2 * count:
        raise SystemExit(f"late_lockstep: {args.out}/state-{k}.f32 is not {count} weights and accumulators (drop --reuse)")
    return state[:count], state[count:]


def main():
    ap = start_arguments(__doc__)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--steps-per-epoch", type=int, default=1, help="batchai's epochs: its state is kept after each")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reuse", action="store_true", help="keep batchai's half from an earlier run in OUT")
    ap.add_argument("--mutate", choices=ls.MUTATIONS, help="break one piece of the port, as lockstep.py's")
    args = ap.parse_args()
    if args.ranks < 1 or args.batch < 1 or not 2 <= args.steps <= 1000:
        ap.error("--ranks and --batch must be positive, --steps 2 to 1000")
    if args.steps_per_epoch < 1 or args.steps % args.steps_per_epoch:
        ap.error("--steps must be a multiple of --steps-per-epoch")
    epochs, per = args.steps // args.steps_per_epoch, args.steps_per_epoch
    args.data_dir = ls.plain_data_dir(args.data_dir, args.out)
    run_batchai(args)

    table, start, count = read_start(args.out)
    with open(os.path.join(args.out, "order.i32"), "rb") as f:
        order = torch.frombuffer(bytearray(f.read()), dtype=torch.int32).long()
    if order.numel() != args.steps * args.ranks * args.batch:
        raise SystemExit(f"late_lockstep: {args.out}/order.i32 is not {args.steps} x {args.ranks} x {args.batch} (drop --reuse)")
    with open(os.path.join(args.out, "steps.csv")) as f:
        ours = [float(row["loss"]) for row in csv.DictReader(f)]
    if len(ours) != epochs:
        raise SystemExit(f"late_lockstep: {args.out}/steps.csv has {len(ours)} epochs, not {epochs} (drop --reuse)")

    torch.set_num_threads(args.threads)
    x_train, y_train, _, _ = tp.load_cifar10(args.data_dir)
    images, augment_ok = ls.check_augmentation(args, x_train[order])
    if images is None:
        print("late_lockstep: DIFFER (augmentation)")
        return 1
    images = images.view(args.steps, args.ranks, args.batch, *images.shape[1:])
    labels = y_train[order].view(args.steps, args.ranks, args.batch)
    kept, _, dropout_ok = ls.read_kept(args)
    states = [read_state(args, k, count) for k in range(epochs + 1)]
    it0 = start["global_step"]
    print(f"late_lockstep: from the checkpoint after epoch {start['epoch']} ({it0} updates, lr "
          f"{1e-4 * args.ranks / (1 + 1e-6 * it0):.6g}), {epochs} epochs of {per} steps of {args.ranks} x {args.batch} images,"
          f" seed {args.seed}; augmented, dropout")

    # Retaken epochs: the port from batchai's own state before each of batchai's epochs.
    by_layer = layers(table)
    p64 = ls.Port(args, table, torch.float64, *states[0], it0, store=torch.float32)
    p32 = ls.Port(args, table, torch.float32, *states[0], it0)
    loss_b, loss_32 = [], []
    stats = {name: {"b": [], "32": [], "pb": [], "p32": [], "ab": [], "a32": []} for name in by_layer}
    for k in range(epochs):
        w0, a0 = states[k]
        results = []
        for port in (p64, p32):
            port.set_state(w0, a0, it0 + k * per)
            loss = statistics.fmean(port.step(images, labels, kept, s) for s in range(k * per, (k + 1) * per))
            results.append((loss, port.weights().double() - w0.double(), port.accumulators().double()))
        (l64, d64, a64), (l32, d32, acc32) = results
        wb, ab = states[k + 1]
        db = wb.double() - w0.double()
        loss_b.append(ours[k] - l64)
        loss_32.append(l32 - l64)
        for name, slices in by_layer.items():
            st = stats[name]
            for key, delta, acc in (("b", db, ab.double()), ("32", d32, acc32)):
                rel, proj = compare(d64, delta, slices)
                st[key].append(rel)
                st["p" + key].append(proj)
                st["a" + key].append(compare(a64, acc, slices)[0])
    print("retaken epochs: the port takes each of batchai's epochs again from batchai's state before it")
    print(f"loss from the same state, minus float64's: batchai max {max(map(abs, loss_b)):.2e} (mean {mean_se(loss_b)[0]:+.2e}),"
          f" port float32 max {max(map(abs, loss_32)):.2e} (mean {mean_se(loss_32)[0]:+.2e})")
    print("layer          update off float64 (median over epochs)  systematic: mean projection (se)          accumulators off (median)")
    print("               batchai       port float32                batchai              port float32          batchai     port float32")
    ok = augment_ok and dropout_ok and max(map(abs, loss_b)) <= max(1e-5, 4 * max(map(abs, loss_32)))
    for name, st in stats.items():
        mb, m32 = statistics.median(st["b"]), statistics.median(st["32"])
        (pb, pb_se), (p32m, p32_se) = mean_se(st["pb"]), mean_se(st["p32"])
        print(f"{name:14s} {mb:10.2e}   {m32:10.2e}               {pb:+9.2e} ({pb_se:7.1e})   {p32m:+9.2e} ({p32_se:7.1e})"
              f"   {statistics.median(st['ab']):9.2e}   {statistics.median(st['a32']):9.2e}")
        ok = ok and (mb <= 4 * m32 or mb <= 1e-5) and abs(pb) <= max(1e-4, 3 * pb_se)

    # Free run: the port's own trajectories from the same state, beside batchai's.
    f64 = ls.Port(args, table, torch.float64, *states[0], it0, store=torch.float32)
    f32 = ls.Port(args, table, torch.float32, *states[0], it0)
    w0 = states[0][0].double()
    print("free run from the same state (weights: the largest layer's distance over the float64 run's update so far)")
    print("epoch  loss: |batchai - float64|  |port float32 - float64|   weights: batchai-float64  port float32-float64"
          "  batchai-port float32")
    shown = {1, 2, 3, 4, 5, 10, 20, 50, 100, epochs}
    for k in range(epochs):
        steps = range(k * per, (k + 1) * per)
        l64 = statistics.fmean(f64.step(images, labels, kept, s) for s in steps)
        l32 = statistics.fmean(f32.step(images, labels, kept, s) for s in steps)
        if k + 1 not in shown:
            continue
        w64, w32, wb = f64.weights().double(), f32.weights().double(), states[k + 1][0].double()
        apart = lambda a, b: max(layer_distance(a, b, w64 - w0, sl) for sl in by_layer.values())  # noqa: E731
        print(f"{k + 1:5d}  {abs(ours[k] - l64):22.2e}  {abs(l32 - l64):24.2e}   {apart(wb, w64):24.2e}"
              f"  {apart(w32, w64):19.2e}  {apart(wb, w32):20.2e}")
    print("late_lockstep: " + ("agree" if ok else "DIFFER"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
