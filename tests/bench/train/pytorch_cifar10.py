#!/usr/bin/python3
"""The tutorial's Keras cifar10_cnn in PyTorch (same layers, RMSprop rho 0.9 eps 1e-7, batch 32,
dropout on), with a fixed number of CPU threads. The baseline for tests/bench/train/train_bench.

Two modes:
- step rate (default): random CIFAR-sized data, prints 'RESULT images_per_s=<n>'. Data
  preparation is not timed (in PyTorch's favour: train_bench's step includes augmentation).
- time to an accuracy (--data-dir): trains on CIFAR-10 as the tutorial does (Keras' shift and flip
  augmentation, lr 1e-4 with decay 1e-6, Keras' clipped cross-entropy; tests/train_reference/
  keras_reference.py), evaluates the test set after each epoch and stops at --target, printing
  'RESULT minutes_to_target=<n>' (training time, evaluation excluded) or 'RESULT not_reached'.
Usage: pytorch_cifar10.py [--threads 2] [--batch 32] [--steps 60] [--warmup 5]
       pytorch_cifar10.py --data-dir DIR [--threads 2] [--epochs 30] [--target 0.70] [--seed 1]
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn

# The network as the trainer's reference check defines it (tests/train_reference/keras_reference.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "train_reference"))
from keras_reference import KerasRMSprop, keras_categorical_crossentropy, load_cifar10, shift_flip_by  # noqa: E402
from keras_reference import keras_cnn as tutorial_cnn  # noqa: E402

SHIFT_RANGE = 0.1  # ImageDataGenerator(width_shift_range=0.1, height_shift_range=0.1)


def step_rate(args, model):
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-4, alpha=0.9, eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.rand(args.warmup + args.steps, args.batch, 3, 32, 32)
    y = torch.randint(0, 10, (args.warmup + args.steps, args.batch))
    model.train()
    for i in range(args.warmup + args.steps):
        if i == args.warmup:
            start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x[i]), y[i])
        loss.backward()
        opt.step()
    elapsed = time.perf_counter() - start
    print(f"pytorch {torch.__version__}: {sum(p.numel() for p in model.parameters())} parameters, "
          f"batch {args.batch}, {args.threads} threads, {args.steps} steps: "
          f"{1e3 * elapsed / args.steps:.2f} ms/step")
    print(f"RESULT images_per_s={args.steps * args.batch / elapsed:.1f}")


def augment(images, generator):
    """Keras 2.1's random_transform for the tutorial's generator: a shift of up to 10% each way in
    fractional pixels, nearest fill, then a left-right flip half the time."""
    b, _, h, w = images.shape
    tx = (torch.rand(b, generator=generator, dtype=torch.float64) * 2 - 1) * SHIFT_RANGE * h
    ty = (torch.rand(b, generator=generator, dtype=torch.float64) * 2 - 1) * SHIFT_RANGE * w
    flipped = torch.rand(b, generator=generator) < 0.5
    return shift_flip_by(images, tx, ty, flipped)


@torch.no_grad()
def accuracy(model, x_test, y_test, batch=500):
    model.eval()
    hits = 0
    for i in range(0, len(x_test), batch):
        logits = model(x_test[i:i + batch].float() / 255.0)
        hits += (logits.argmax(1) == y_test[i:i + batch]).sum().item()
    model.train()
    return hits / len(x_test)


def keras_init(model):
    """Keras' initialisers, as batchai's: Glorot-uniform kernels, zero biases."""
    for layer in model.modules():
        if isinstance(layer, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)


def time_to_target(args, model):
    keras_init(model)
    x_train, y_train, x_test, y_test = load_cifar10(args.data_dir)
    opt = KerasRMSprop(model.parameters(), lr=1e-4, decay=1e-6)
    generator = torch.Generator().manual_seed(args.seed)
    trained_s = 0.0
    model.train()
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(len(x_train), generator=generator)
        start = time.perf_counter()
        for i in range(0, len(order), args.batch):
            idx = order[i:i + args.batch]
            x = augment(x_train[idx], generator).float() / 255.0
            for p in model.parameters():
                p.grad = None
            keras_categorical_crossentropy(model(x), y_train[idx]).backward()
            opt.step()
        trained_s += time.perf_counter() - start
        eval_start = time.perf_counter()
        acc = accuracy(model, x_test, y_test)
        print(f"epoch {epoch}: val_acc {acc:.4f}, {trained_s:.0f} s of training "
              f"(evaluation {time.perf_counter() - eval_start:.1f} s)", flush=True)
        if acc >= args.target:
            print(f"RESULT minutes_to_target={trained_s / 60:.2f} epochs={epoch} val_acc={acc:.4f}")
            return
    print(f"RESULT not_reached epochs={args.epochs}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--data-dir", help="CIFAR-10 binary files (.bin or .bin.xz): train to --target")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--target", type=float, default=0.70)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed if args.data_dir else 0)
    model = tutorial_cnn()
    if args.data_dir:
        time_to_target(args, model)
    else:
        step_rate(args, model)


if __name__ == "__main__":
    main()
