#!/usr/bin/python3
"""Scores trained states of either trainer with one evaluator (the port's network in float32), on
the same images: one epoch of batchai's draws of a seed (every rank's images in order, shifted and
flipped, with and without the epoch's dropout choices), the plain training set and the test set. It
tells whether two runs' training losses differ because their weights do or because of how each
trainer measures its loss (docs/trainer-results.md, "A lockstep from a late state").

  score_states.py --data-dir DATA --draws DRAWS --seed S [--epoch E] [--steps-per-epoch 1563]
                  NAME=STATE [NAME=STATE ...]

DRAWS: `tutorial_lockstep --orders EPOCHS --steps-per-epoch 1563` output of seed S (table.json,
orders.i32); --epoch: which epoch's draws (1-based, default the last in orders.i32). STATE: a
`tutorial_lockstep --start` or `late_lockstep.py` state-K.f32 (batchai's weights, Keras layout), or
a checkpoint of the port (`same_draws.py`'s checkpoint.pt, `tutorial_port.py`'s
checkpoint-rank0.pt). About 8 minutes a state and rank on 2 cores.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import batchai_draws as bd  # noqa: E402
import lockstep as ls  # noqa: E402
import same_draws as sd  # noqa: E402
import tutorial_port as tp  # noqa: E402


def load_state(path, args, table, count):
    port = ls.Port(args, table, torch.float32, torch.zeros(count))
    if path.endswith(".pt"):
        port.model.load_state_dict(torch.load(path)["model"])
    else:
        state = ls.read_f32(path)
        if state.numel() != 2 * count:
            raise SystemExit(f"score_states: {path} is not {count} weights and accumulators")
        port.set_state(state[:count])
    return port


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--draws", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--epoch", type=int, help="1-based; default the last of orders.i32")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps-per-epoch", type=int, default=1563, help="as the draws were written")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("states", nargs="+", metavar="NAME=STATE")
    args = ap.parse_args()
    args.mutate = None
    named = [s.split("=", 1) for s in args.states]
    if any(len(n) != 2 or not n[0] for n in named):
        ap.error("states are NAME=PATH")
    if min(args.ranks, args.batch, args.steps_per_epoch) < 1:
        ap.error("--ranks, --batch and --steps-per-epoch must be positive")
    torch.set_num_threads(args.threads)
    table = json.load(open(os.path.join(args.draws, "table.json")))
    count = sum(int(np.prod(e["shape"])) for e in table)
    x_train, y_train, x_test, y_test = tp.load_cifar10(args.data_dir)
    train = x_train.numpy()
    orders, plans = bd.read_orders(args.draws, train.shape[0], args.ranks, args.batch, args.steps_per_epoch)
    epoch = args.epoch or len(orders)
    if not 1 <= epoch <= len(orders):
        raise SystemExit(f"score_states: {args.draws}/orders.i32 holds epochs 1 to {len(orders)}, not {epoch}")
    ports = {name: load_state(path, args, table, count) for name, path in named}
    sums = {name: [0.0, 0, 0.0] for name in ports}  # loss with dropout, correct, loss without
    images = 0
    with torch.no_grad():
        for r in range(args.ranks):
            for pass_, position, n, at in plans[epoch - 1]:
                idx = orders[epoch - 1][r, at:at + n]
                x, kept = bd.rank_batch(args.seed, pass_, r, position, train[idx])
                x = torch.from_numpy(x)
                y = y_train[torch.from_numpy(idx.astype(np.int64))]
                for name, port in ports.items():
                    for g, k in zip(port.given, kept):
                        g.kept = torch.from_numpy(k)
                    logits = port.model(x)
                    sums[name][0] += tp.keras_categorical_crossentropy(logits, y, reduction="sum").item()
                    sums[name][1] += (logits.argmax(1) == y).sum().item()
                    for g in port.given:
                        g.kept = None
                    sums[name][2] += tp.keras_categorical_crossentropy(port.model(x), y, reduction="sum").item()
                images += n
    print(f"epoch {epoch}'s draws of seed {args.seed}: {images} images of {args.ranks} ranks")
    print("state: with the draws' dropout: loss (accuracy) | without dropout | plain training set | test set")
    for name, port in ports.items():
        loss, correct, plain = sums[name]
        train_loss, test_loss = (sd.validate(port.model, port.given, x, y, torch.float32)[0] for x, y in
                                 ((x_train, y_train), (x_test, y_test)))
        print(f"{name}: {loss / images:.5f} ({correct / images:.2%}) | {plain / images:.5f} | "
              f"{train_loss:.5f} | {test_loss:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
