#!/usr/bin/env python3
"""The tutorial's CIFAR-10 CNN in PyTorch on the GPU: training images/s at the same batch sizes
as tests/bench/cuda/cuda_bench (whole steps: host->device copy of the batch, forward, cross entropy,
backward, RMSprop with rho 0.9 / eps 1e-7). Synthetic data; figures only, no accuracy.

usage: pytorch_gpu.py [--batches 32 256] [--steps 200] [--warmup 20] [--tf32 0|1] [--channels-last]
                      [--profile-steps N]
--profile-steps N: N more steps per batch size between cudaProfilerStart and Stop (for ncu).
"""
import argparse
import os
import sys
import time


def network():
    # The same network as the CPU benchmark's (imported after torch was found).
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "train"))
    from pytorch_cifar10 import tutorial_cnn
    return tutorial_cnn()


def run(torch, batch, args):
    device = torch.device("cuda")
    model = network().to(device)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    params = sum(p.numel() for p in model.parameters())
    assert params == 1250858, params
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-4, alpha=0.9, eps=1e-7)
    loss_fn = torch.nn.CrossEntropyLoss()
    # Host batch in pinned memory, copied every step as the batchai trainer uploads every step.
    x_host = torch.rand(batch, 3, 32, 32).pin_memory()
    y_host = (torch.arange(batch) % 10).pin_memory()

    def step():
        x = x_host.to(device, non_blocking=True)
        if args.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        y = y_host.to(device, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    model.train()
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        step()
    torch.cuda.synchronize()
    rate = batch * args.steps / (time.perf_counter() - t0)
    if args.profile_steps > 0:
        torch.cuda.profiler.start()
        for _ in range(args.profile_steps):
            step()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    return rate


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--tf32", type=int, default=1)
    parser.add_argument("--channels-last", action="store_true")
    parser.add_argument("--profile-steps", type=int, default=0)
    parser.add_argument("--layout", default=None, help="ignored here (cuda_bench's option)")
    parser.add_argument("--deterministic", type=int, default=None,
                        help="1: torch.backends.cudnn.deterministic; unset: PyTorch's default (fastest)")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("pytorch_gpu.py: PyTorch is not installed; no figures", file=sys.stderr)
        return 0
    if not torch.cuda.is_available():
        print("pytorch_gpu.py: no CUDA device; no figures")
        return 0
    torch.backends.cudnn.benchmark = True  # per-shape algorithm search, as our cudnnFind*
    torch.backends.cudnn.allow_tf32 = bool(args.tf32)
    if args.deterministic is not None:
        torch.backends.cudnn.deterministic = bool(args.deterministic)
    torch.backends.cuda.matmul.allow_tf32 = bool(args.tf32)
    print("pytorch %s on %s, cuDNN %s, TF32 %s, %s, %s algorithms, %d steps after %d warm-up steps" % (
        torch.__version__, torch.cuda.get_device_name(0), torch.backends.cudnn.version(),
        "on" if args.tf32 else "off", "channels_last" if args.channels_last else "NCHW",
        "deterministic" if torch.backends.cudnn.deterministic else "fastest",
        args.steps, args.warmup))
    for batch in args.batches:
        rate = run(torch, batch, args)
        print("pytorch  batch %4d: %10.0f images/s  (%.3f ms/step)" % (batch, rate, 1e3 * batch / rate))
    return 0


if __name__ == "__main__":
    sys.exit(main())
