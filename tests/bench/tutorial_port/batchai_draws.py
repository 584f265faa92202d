#!/usr/bin/env python3
"""batchai's random draws recomputed in numpy: the image keys of each step, the augmentation's shifts
and flips, and each Dropout layer's kept features, from the formulas batchai documents
(include/batchai/train/counter_rng.hpp, plan_epoch in src/train/train_data.cpp, src/train/augment.cpp).

This is no part of the port (tutorial_port.py is written from the Keras and Horovod documentation
only): it lets an experiment give the port batchai's own draws, so that two runs differ in their
arithmetic alone (docs/trainer-results.md, "The full schedule, two seeds a side"). Only the order
of the images is not recomputed (std::shuffle over mt19937_64 is the library's); the lockstep's
order.i32 carries it.

  batchai_draws.py --check LOCKSTEP_OUT --data-dir DATA [--seed S] [--ranks R] [--batch B] [--steps-per-epoch S]
compares every draw with what `tutorial_lockstep --augment --dropout` wrote (its kept.u8, and its
inputs.f32 for the images of order.i32; epochs of S steps, from the epoch after its start.json's
when it began from a checkpoint): exit 0 when all are equal, 1 otherwise.

  batchai_draws.py --offsets N [--seed S]
prints how often each whole-pixel offset of rows and of columns and a flip come out of N of
batchai's transforms and of N of the port's own (tutorial_port.shift_flip), read off images whose
pixels hold their own coordinates: the two draw the same distributions in different ways.
"""
import argparse
import json
import lzma
import os
import sys

import numpy as np

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
SIDE, CHANNELS = 32, 3
WIDTH_SHIFT = HEIGHT_SHIFT = 0.1  # AugmentConfig's defaults (double)
# The tutorial network's Dropout layers: batchai's model layer index, rate, features per image.
DROPOUT_SITES = ((3, 0.25, 15 * 15 * 32), (7, 0.25, 6 * 6 * 64), (9, 0.5, 512))
MAX_OFFSET_IMAGES = 1_000_000  # --offsets holds a float32 copy of each: 12 KB an image


def splitmix64(z):
    """counter_rng.hpp's splitmix64 on uint64 values (arithmetic modulo 2^64)."""
    with np.errstate(over="ignore"):
        z = np.asarray(z, dtype=np.uint64) + np.uint64(GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def unit_interval(bits):
    return (np.asarray(bits, dtype=np.uint64) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def image_stream(stream, keys):
    return splitmix64(np.uint64(stream) ^ splitmix64(keys))


def dropout_layer_stream(seed, layer):
    return int(splitmix64(np.uint64(seed) ^ splitmix64(np.uint64((0xD1B54A32D192ED03 + layer) & M64))))


def first_key(seed, pass_, rank, position):
    """plan_epoch's key of the image at `position` of an unsharded rank's pass `pass_` over the data."""
    stream = (seed * GOLDEN + pass_ * 7919 + rank * 104729 + 1) & M64
    return (((pass_ << 32) ^ stream) + position) & M64


def plan_steps(count, batch, steps, epoch):
    """plan_epoch's unsharded steps of epoch `epoch` (from 0) as (pass, position, images, at) each:
    batches epoch * steps .. of one stream over passes, each pass ceil(count / batch) batches of its
    own permutation, the last holding the remainder as Keras' iterator ends it; `position` indexes
    the pass's permutation, `at` the epoch's order (the images the epoch's steps take, in turn)."""
    per_pass, out, at = -(-count // batch), [], 0
    for g in range(epoch * steps, (epoch + 1) * steps):
        pass_, b = divmod(g, per_pass)
        n = min(batch, count - b * batch)
        out.append((pass_, b * batch, n, at))
        at += n
    return out


def read_orders(draws, count, ranks, batch, steps):
    """`tutorial_lockstep --orders` output's orders.i32 as one (ranks, images of the epoch) array per
    epoch, with plan_steps' plan of each; SystemExit when the file is not whole epochs of that plan."""
    if min(count, ranks, batch, steps) < 1:
        raise SystemExit("read_orders: images, ranks, batch and steps must be positive")
    flat = np.fromfile(os.path.join(draws, "orders.i32"), dtype=np.int32)
    orders, plans, at = [], [], 0
    while at < flat.size:
        plan = plan_steps(count, batch, steps, len(plans))
        size = ranks * (plan[-1][3] + plan[-1][2])
        if at + size > flat.size:
            break
        orders.append(flat[at:at + size].reshape(ranks, -1))
        plans.append(plan)
        at += size
    if not orders or at != flat.size:
        raise SystemExit(f"{draws}/orders.i32 is not whole epochs of {ranks} ranks x {steps} steps of up to"
                         f" {batch} images")
    return orders, plans


def shifts_and_flips(seed, keys):
    """prepare_batch's draws per image key: rows dy, columns dx (float32, pixels) and the flip."""
    base = image_stream(seed, keys)
    with np.errstate(over="ignore"):
        dy = ((2 * unit_interval(splitmix64(base + np.uint64(1))) - 1) * HEIGHT_SHIFT * SIDE).astype(np.float32)
        dx = ((2 * unit_interval(splitmix64(base + np.uint64(2))) - 1) * WIDTH_SHIFT * SIDE).astype(np.float32)
        flip = unit_interval(splitmix64(base + np.uint64(3))) < 0.5
    return dy, dx, flip


def transform(images_chw, dy, dx, flip):
    """transform_image for a batch: (B, 3, 32, 32) uint8 → (B, 32, 32, 3) float32 in [0, 1]."""
    i = np.arange(SIDE, dtype=np.float32)
    half = np.float32(0.5)
    rows = np.clip(np.floor(i[None, :] - dy[:, None] + half), 0, SIDE - 1).astype(np.int64)
    cols_from = np.where(flip[:, None], np.float32(SIDE - 1) - i[None, :], i[None, :]).astype(np.float32)
    cols = np.clip(np.floor(cols_from - dx[:, None] + half), 0, SIDE - 1).astype(np.int64)
    b = np.arange(images_chw.shape[0])[:, None, None]
    hwc = images_chw.transpose(0, 2, 3, 1)[b, rows[:, :, None], cols[:, None, :]]
    return hwc.astype(np.float32) * np.float32(1.0 / 255.0)


def kept(seed, layer, rate, keys, features):
    """Which of `features` each image (by key) keeps at Dropout layer `layer` (model layer index)."""
    threshold = np.uint64(int(float(np.float32(rate)) * 2.0 ** 64))
    images = image_stream(dropout_layer_stream(seed, layer), keys)
    with np.errstate(over="ignore"):
        draws = splitmix64(images[:, None] + np.arange(features, dtype=np.uint64)[None, :])
    return draws >= threshold


def rank_batch(seed, pass_, rank, position, sources):
    """One rank's batch of an unsharded epoch as batchai draws it: `sources` (uint8 (B, 3, 32, 32),
    the images at `position`.. of the rank's permutation of pass `pass_`) shifted and flipped (float32 (B, 3, 32, 32) in
    [0, 1]) and each Dropout layer's kept features (bool (B, features), DROPOUT_SITES' order)."""
    keys = np.uint64(first_key(seed, pass_, rank, position)) + np.arange(sources.shape[0], dtype=np.uint64)
    x = transform(sources, *shifts_and_flips(seed, keys)).transpose(0, 3, 1, 2)
    return np.ascontiguousarray(x), [kept(seed, layer, rate, keys, n) for layer, rate, n in DROPOUT_SITES]


def read_train_images(data_dir):
    parts = []
    for i in range(1, 6):
        path = os.path.join(data_dir, f"data_batch_{i}.bin")
        raw = open(path, "rb").read() if os.path.exists(path) else lzma.open(path + ".xz").read()
        parts.append(np.frombuffer(raw, dtype=np.uint8).reshape(-1, 1 + SIDE * SIDE * CHANNELS)[:, 1:])
    return np.concatenate(parts).reshape(-1, CHANNELS, SIDE, SIDE)


def offsets_read(rows, cols):
    """The offsets of rows and columns and the flip that put source pixel (row, col) at the centre
    pixel of each output; rows, cols: (B, 32, 32) source coordinates of every output pixel."""
    c = SIDE // 2
    flipped = cols[:, c, c + 1] < cols[:, c, c]
    return rows[:, c, c] - c, np.where(flipped, cols[:, c, c] - (SIDE - 1 - c), cols[:, c, c] - c), flipped


def compare_offsets(n, seed):
    import torch  # only here: the check needs no PyTorch
    import tutorial_port as tp
    coords = np.zeros((n, CHANNELS, SIDE, SIDE), dtype=np.uint8)
    coords[:, 0] = np.arange(SIDE)[:, None]
    coords[:, 1] = np.arange(SIDE)[None, :]
    keys = np.uint64(first_key(seed, 0, 0, 0)) + np.arange(n, dtype=np.uint64)  # positions 0..n-1
    ours = np.rint(transform(coords, *shifts_and_flips(seed, keys)) * 255.0).transpose(0, 3, 1, 2)
    gen = torch.Generator().manual_seed(seed)
    port = tp.shift_flip(torch.from_numpy(coords).float(), gen).numpy()
    for name, out in (("batchai", ours), ("port", port)):
        rows, cols, flipped = offsets_read(out[:, 0], out[:, 1])
        share = lambda v: " ".join(f"{(v == k).mean():.4f}" for k in range(-3, 4))  # noqa: E731
        print(f"{name:8s} rows -3..+3: {share(rows)} | columns -3..+3: {share(cols)} | flipped {flipped.mean():.4f}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--check", help="a tutorial_lockstep --augment --dropout output folder")
    what.add_argument("--offsets", type=int, metavar="N", help="compare N transforms' offsets with the port's")
    ap.add_argument("--data-dir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps-per-epoch", type=int, default=1, help="of the lockstep run --check reads")
    args = ap.parse_args()
    if args.offsets is not None:
        if not 1 <= args.offsets <= MAX_OFFSET_IMAGES:
            ap.error(f"--offsets takes 1 to {MAX_OFFSET_IMAGES} images")
        return compare_offsets(args.offsets, args.seed)
    if not args.data_dir:
        ap.error("--check needs --data-dir")
    if min(args.steps_per_epoch, args.ranks, args.batch) < 1:
        ap.error("--steps-per-epoch, --ranks and --batch must be positive")
    out, batch, ranks, per = args.check, args.batch, args.ranks, args.steps_per_epoch
    start = os.path.join(out, "start.json")
    first_epoch = json.load(open(start))["epoch"] if os.path.exists(start) else 0
    sites = json.load(open(os.path.join(out, "dropout.json")))
    if [(s["rate"], s["features"]) for s in sites] != [(rate, n) for _, rate, n in DROPOUT_SITES]:
        raise SystemExit(f"batchai_draws: {out}/dropout.json is not the tutorial network's Dropout layers")
    order = np.fromfile(os.path.join(out, "order.i32"), dtype=np.int32).reshape(-1, ranks, batch)
    steps = order.shape[0]
    per_block = batch * sum(s["features"] for s in sites)
    kept_file = np.fromfile(os.path.join(out, "kept.u8"), dtype=np.uint8).reshape(steps, ranks, per_block)
    inputs = np.fromfile(os.path.join(out, "inputs.f32"), dtype=np.float32).reshape(steps, ranks, batch, SIDE, SIDE,
                                                                                      CHANNELS)
    images = read_train_images(args.data_dir)
    image_mismatch = kept_mismatch = 0
    for s in range(steps):
        if s % per == 0:
            plan = plan_steps(images.shape[0], batch, per, first_epoch + s // per)
        pass_, position, _, _ = plan[s % per]
        for r in range(ranks):
            mine, my_kept = rank_batch(args.seed, pass_, r, position, images[order[s, r]])
            image_mismatch += int(np.any(mine != inputs[s, r].transpose(0, 3, 1, 2), axis=(1, 2, 3)).sum())
            at = 0
            for site, k in zip(sites, my_kept):
                n = batch * site["features"]
                theirs = kept_file[s, r, at:at + n].reshape(batch, site["features"]).astype(bool)
                kept_mismatch += int((k != theirs).sum())
                at += n
    total_images = steps * ranks * batch
    print(f"augmented images: {total_images - image_mismatch} of {total_images} equal to batchai's")
    print(f"dropout choices: {kept_file.size - kept_mismatch} of {kept_file.size} equal to batchai's")
    return 0 if image_mismatch == 0 and kept_mismatch == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
