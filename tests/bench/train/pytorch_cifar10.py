#!/usr/bin/python3
"""The tutorial's Keras cifar10_cnn in PyTorch (same layers, RMSprop rho 0.9 eps 1e-7, batch 32,
dropout on), timed on random CIFAR-sized data with a fixed number of CPU threads. The baseline
for tests/bench/train/train_bench; prints 'RESULT images_per_s=<n>'. Data preparation is not timed
(in PyTorch's favour: train_bench's step includes augmentation).
Usage: pytorch_cifar10.py [--threads 2] [--batch 32] [--steps 60] [--warmup 5]
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn

# The network as the trainer's reference check defines it (tests/train_reference/keras_reference.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "train_reference"))
from keras_reference import keras_cnn as tutorial_cnn  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = tutorial_cnn()
    params = sum(p.numel() for p in model.parameters())
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
    ips = args.steps * args.batch / elapsed
    print(f"pytorch {torch.__version__ if hasattr(torch, '__version__') else ''}: {params} parameters, "
          f"batch {args.batch}, {args.threads} threads, {args.steps} steps: "
          f"{1e3 * elapsed / args.steps:.2f} ms/step")
    print(f"RESULT images_per_s={ips:.1f}")


if __name__ == "__main__":
    main()
