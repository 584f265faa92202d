#!/usr/bin/env python3
"""The port's training step on batchai's own draws, for a whole schedule: batchai's initial weights
and image orders (`tutorial_lockstep --orders`), its shifts, flips and dropout choices
(batchai_draws.py). Two runs then differ in their arithmetic alone (PyTorch's against batchai's),
which tells a difference that comes from how the random numbers are drawn from one that comes
from float32 rounding over tens of thousands of steps (docs/trainer-results.md, "The full
schedule, two seeds a side").

The step is the port's (tutorial_port.py: network, Keras loss, KerasRMSprop, Horovod's averaging;
lockstep.py: batchai's weight layout and GivenDropout); the ranks run one after another in this
one process and their gradients are averaged, as lockstep.py does.

  mpirun -np 4 tutorial_lockstep --data-dir DATA --out DRAWS --seed S --orders 25 --steps-per-epoch 1563
  (as many MPI ranks as --ranks: the orders are written for each of them)
  same_draws.py --data-dir DATA --draws DRAWS --out OUT --seed S [--epochs 25] [--steps-per-epoch 1563]
                [--ranks 4] [--batch 32] [--validation-images N] [--threads 2] [--float64] [--resume]

Writes OUT/metrics.csv (epoch,loss,acc,val_loss,val_acc,lr,seconds, as tutorial_port.py) and a
checkpoint after every epoch (the draws are pure functions of seed and key: weights and optimizer
state are all a resume needs).
"""
import argparse
import csv
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import batchai_draws as bd  # noqa: E402
import lockstep as ls  # noqa: E402
import tutorial_port as tp  # noqa: E402


@torch.no_grad()
def validate(model, given, x_test, y_test, dtype, batch=500):
    for g in given:
        g.kept = None
    loss = correct = 0.0
    for i in range(0, x_test.shape[0], batch):
        logits = model(x_test[i:i + batch].to(dtype).div_(255.0))
        loss += tp.keras_categorical_crossentropy(logits, y_test[i:i + batch], reduction="sum").item()
        correct += (logits.argmax(1) == y_test[i:i + batch]).sum().item()
    return loss / x_test.shape[0], correct / x_test.shape[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--draws", required=True, help="tutorial_lockstep --orders output (table.json, initial.f32, orders.i32)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, required=True, help="the seed the draws were written with")
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--steps-per-epoch", type=int, default=1563)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--validation-images", type=int, default=0, help="default all 10,000")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--float64", action="store_true",
                    help="the port's arithmetic in float64 (weights and accumulators too): the rounding-free reference")
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ranks, batch, steps = args.ranks, args.batch, args.steps_per_epoch
    table = json.load(open(os.path.join(args.draws, "table.json")))
    initial = ls.read_f32(os.path.join(args.draws, "initial.f32"))
    x_train, y_train, x_test, y_test = tp.load_cifar10(args.data_dir)
    train = x_train.numpy()
    orders, plans = bd.read_orders(args.draws, train.shape[0], ranks, batch, steps)
    if len(orders) != args.epochs:
        raise SystemExit(f"same_draws: {args.draws}/orders.i32 holds {len(orders)} epochs, not {args.epochs}")
    if args.validation_images:
        x_test, y_test = x_test[:args.validation_images], y_test[:args.validation_images]
    args.mutate = None  # lockstep.Port's network and optimizer, unbroken
    dtype = torch.float64 if args.float64 else torch.float32
    port = ls.Port(args, table, dtype, initial)
    model, given, params, opt = port.model, port.given, port.params, port.opt
    os.makedirs(args.out, exist_ok=True)
    checkpoint, rows, first = os.path.join(args.out, "checkpoint.pt"), [], 0
    if args.resume and os.path.exists(checkpoint):
        state = torch.load(checkpoint)
        written = "float64" if state.get("float64", False) else "float32"
        if written != ("float64" if args.float64 else "float32"):  # one run, one arithmetic
            raise SystemExit(f"same_draws: {checkpoint} was written in {written}; resume it as it was started")
        model.load_state_dict(state["model"])
        for a, saved in zip(opt.accumulators, state["accumulators"]):
            a.copy_(saved)
        opt.iterations, rows, first = state["iterations"], state["rows"], state["epoch"] + 1
        print(f"Resuming after epoch {first}.", flush=True)
    model.train()
    for epoch in range(first, args.epochs):  # batchai's epochs count from 0 in its keys
        start = time.perf_counter()
        sums = [0.0, 0.0, 0]
        for s, (pass_, position, n, at) in enumerate(plans[epoch]):
            total = [torch.zeros_like(p) for p in params]
            for r in range(ranks):
                idx = orders[epoch][r, at:at + n]
                x, kept = bd.rank_batch(args.seed, pass_, r, position, train[idx])
                x = torch.from_numpy(x).to(dtype)
                for g, k in zip(given, kept):
                    g.kept = torch.from_numpy(k)
                y = y_train[torch.from_numpy(idx.astype(np.int64))]
                model.zero_grad()
                logits = model(x)
                loss = tp.keras_categorical_crossentropy(logits, y)
                loss.backward()
                for t, p in zip(total, params):
                    t.add_(p.grad)
                sums[0] += loss.item() * n
                sums[1] += (logits.detach().argmax(1) == y).sum().item()
                sums[2] += n
            for t, p in zip(total, params):  # hvd.DistributedOptimizer: allreduce sum / size
                p.grad.copy_(t / ranks)
            opt.step()
            if (s + 1) % 100 == 0:
                print(f"epoch {epoch + 1} step {s + 1}/{steps} loss {sums[0] / sums[2]:.4f}", flush=True)
        val_loss, val_acc = validate(model, given, x_test, y_test, dtype)
        model.train()
        rows.append(dict(epoch=epoch + 1, loss=f"{sums[0] / sums[2]:.6f}", acc=f"{sums[1] / sums[2]:.6f}",
                         val_loss=f"{val_loss:.6f}", val_acc=f"{val_acc:.4f}", lr=f"{opt.current_lr():.9g}",
                         seconds=f"{time.perf_counter() - start:.2f}"))
        print("Epoch " + " - ".join(f"{k}: {v}" for k, v in rows[-1].items()), flush=True)
        with open(os.path.join(args.out, "metrics.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[-1]))
            w.writeheader()
            w.writerows(rows)
        torch.save(dict(epoch=epoch, rows=rows, model=model.state_dict(), accumulators=opt.accumulators,
                        iterations=opt.iterations, float64=args.float64), checkpoint + ".tmp")
        os.replace(checkpoint + ".tmp", checkpoint)
    return 0


if __name__ == "__main__":
    sys.exit(main())
