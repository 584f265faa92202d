#!/usr/bin/python3
"""An independent PyTorch port of the Batch AI Horovod tutorial's job (Keras `cifar10_cnn` + Horovod),
trained data-parallel over N processes on the CPU with torch.distributed (gloo), to check that
`batchai train` has the tutorial's semantics. Written from the Keras 2 and Horovod documentation and
sources, not from batchai's code. Each choice and where it comes from:

- Network: Keras examples/cifar10_cnn.py (Keras 2.x): Conv2D(32, 3x3, padding='same')-ReLU,
  Conv2D(32, 3x3)-ReLU, MaxPooling2D(2), Dropout(0.25), the same with 64 filters, Flatten,
  Dense(512)-ReLU, Dropout(0.5), Dense(10)-softmax. Inputs `astype('float32') / 255`, nothing else.
  PyTorch's layout is channels-first, so Flatten orders the 2304 features (C, H, W) where Keras has
  (H, W, C): a fixed permutation of the Dense layer's inputs, the same under i.i.d. initialisation.
- Initialisation: Keras layer defaults, kernel_initializer='glorot_uniform' (uniform in
  ±sqrt(6 / (fan_in + fan_out)), for a conv kernel fan_in = kh*kw*in, fan_out = kh*kw*out) and
  bias_initializer='zeros' (keras.io/initializers; keras/initializers.py `_compute_fans`).
- Loss: Keras `categorical_crossentropy` on the softmax output, as the TensorFlow backend computes it:
  probabilities renormalised to sum 1, clipped to [epsilon, 1 - epsilon] with K.epsilon() = 1e-7,
  then -sum(y * log p), averaged over the batch. The clip stops the gradient where it bites.
- Optimizer: keras.optimizers.RMSprop(lr=1e-4, decay=1e-6) as Keras 2.1/2.2 define it (optimizers.py
  `RMSprop.get_updates`): rho 0.9, epsilon = K.epsilon() = 1e-7 added *outside* the square root,
  accumulators start at zero, and the time decay lr_t = lr / (1 + decay * iterations) with
  `iterations` counting the updates already applied (0 on the first):
      a <- rho * a + (1 - rho) * g^2 ;   p <- p - lr_t * g / (sqrt(a) + epsilon)
  (torch.optim.RMSprop has no time decay, hence the small class below.)
- Learning rate scaled by the number of workers: Horovod's Keras guide (docs/keras.rst, "Scale the
  learning rate by the number of workers") and examples/keras_mnist.py (`lr * hvd.size()`), so 1e-4
  * ranks. Batch 32 per worker (cifar10_cnn.py's batch_size).
- Augmentation: ImageDataGenerator(width_shift_range=0.1, height_shift_range=0.1,
  horizontal_flip=True, fill_mode='nearest') of cifar10_cnn.py, as Keras 2.1's
  `random_transform` applies it: a shift drawn uniform in ±0.1 of the height (rows) and of the width
  (columns) in fractional pixels, resampled with order-0 (nearest-pixel) interpolation, points
  outside the image taking the nearest edge pixel (fill_mode='nearest'), then a left-right flip with
  probability 1/2. A fresh draw per image per step.
- Data order: `datagen.flow(x, y, batch_size=32)` shuffles the whole training set every pass and cuts
  it into ceil(50000 / 32) = 1563 batches (the last of 16 images); the stream carries on across
  epochs, so a shortened epoch (--steps-per-epoch) picks up where the last one stopped. Every worker
  draws its own order and augmentation (the tutorial gives each Horovod rank the whole data set).
- Horovod: `hvd.DistributedOptimizer` averages the gradients over the workers by allreduce before the
  update (sum, then divide by size; docs/keras.rst, "averages gradients using allreduce");
  `hvd.callbacks.BroadcastGlobalVariablesCallback(0)` broadcasts rank 0's initial variables, so every
  worker starts from the same weights; only rank 0 writes (docs/keras.rst: checkpoints on worker 0).
- Epochs: ceil(100 / workers), 1563 steps each unless --epochs / --steps-per-epoch say otherwise.
  Horovod's Keras examples divide the epochs by the workers (keras_mnist.py:
  `epochs = int(math.ceil(12.0 / hvd.size()))`); the tutorial's 100 become 25 on its 4 nodes.
- Validation after every epoch on the 10,000 test images (fit_generator's validation_data): the same
  model is on every worker, so each worker scores a quarter of them and the sums are added with one
  allreduce: the same figures as one worker scoring them all, in a quarter of the time. Training
  loss and accuracy are the epoch's batch means averaged over the workers (Horovod's
  MetricAverageCallback).

Usage: tutorial_port.py --data-dir DIR --out-dir DIR [--ranks 4] [--epochs N] [--steps-per-epoch N]
                        [--validation-images N] [--seed S] [--resume]
Reads data_batch_1..5.bin and test_batch.bin (or the same with .xz); writes OUT/metrics.csv with
columns epoch,loss,acc,val_loss,val_acc,lr,seconds, and after every epoch a checkpoint per worker
(OUT/checkpoint-rankR.pt) that --resume goes on from exactly, for the schedules that take hours.
"""
import argparse
import csv
import lzma
import math
import os
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

RECORD = 1 + 3 * 32 * 32  # CIFAR-10 binary: label byte, then the R, G and B planes, 32x32 each
KERAS_EPSILON = 1e-7      # K.epsilon()


# ---------------------------------------------------------------- data

def read_batch(path):
    """Images (N, 3, 32, 32) uint8 and labels (N,) int64 of one CIFAR-10 binary file (.bin or .bin.xz)."""
    if os.path.exists(path):
        with open(path, "rb") as f:
            raw = f.read()
    elif os.path.exists(path + ".xz"):
        with lzma.open(path + ".xz", "rb") as f:
            raw = f.read()
    else:
        raise SystemExit(f"tutorial_port: {path} (or {path}.xz) is missing")
    if len(raw) % RECORD:
        raise SystemExit(f"tutorial_port: {path} is not a CIFAR-10 binary file ({len(raw)} bytes)")
    t = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(-1, RECORD)
    return t[:, 1:].reshape(-1, 3, 32, 32).clone(), t[:, 0].long()


def load_cifar10(data_dir):
    parts = [read_batch(os.path.join(data_dir, f"data_batch_{i}.bin")) for i in range(1, 6)]
    x_train = torch.cat([p[0] for p in parts])
    y_train = torch.cat([p[1] for p in parts])
    x_test, y_test = read_batch(os.path.join(data_dir, "test_batch.bin"))
    return x_train, y_train, x_test, y_test


def shift_flip(x, gen, shift=0.1, flip=True):
    """Keras ImageDataGenerator(width/height_shift_range=shift, horizontal_flip, fill_mode='nearest')
    on a batch x (B, C, H, W): per image a uniform fractional shift of up to shift*H rows and shift*W
    columns, sampled at the nearest pixel (order 0), coordinates beyond the edge clamped to it
    (nearest fill), then a left-right flip with probability 1/2."""
    b, _, h, w = x.shape
    tx = (torch.rand(b, generator=gen, dtype=torch.float64) * 2 - 1) * shift * h
    ty = (torch.rand(b, generator=gen, dtype=torch.float64) * 2 - 1) * shift * w
    flipped = torch.rand(b, generator=gen) < 0.5 if flip else torch.zeros(b, dtype=torch.bool)
    return shift_flip_by(x, tx, ty, flipped)


def shift_flip_by(x, tx, ty, flipped, fill="nearest"):
    """The transform of shift_flip with its draws given: per image tx rows, ty columns (float64), and
    a flip where flipped is true. fill='constant' (zeros past the edge) is Keras' other fill mode."""
    b, _, h, w = x.shape
    # Output pixel i reads input coordinate i + t (the affine offset), rounded, then clamped.
    rows = (torch.arange(h, dtype=torch.float64)[None, :] + tx[:, None]).round()
    cols = (torch.arange(w, dtype=torch.float64)[None, :] + ty[:, None]).round()
    inside = ((rows >= 0) & (rows <= h - 1))[:, :, None] & ((cols >= 0) & (cols <= w - 1))[:, None, :]
    rows, cols = rows.clamp(0, h - 1).long(), cols.clamp(0, w - 1).long()
    cols = torch.where(flipped[:, None], cols.flip(1), cols)
    inside = torch.where(flipped[:, None, None], inside.flip(2), inside)
    nhwc = x.permute(0, 2, 3, 1)
    out = nhwc[torch.arange(b)[:, None, None], rows[:, :, None], cols[:, None, :]]  # (B, H, W, C)
    if fill == "constant":
        out = out * inside[..., None]
    return out.permute(0, 3, 1, 2).contiguous()


class BatchStream:
    """datagen.flow(x, y, batch_size, shuffle=True): a new permutation each pass over the data, batches
    cut from it in order (the pass's last batch holds the remainder); the stream runs on across epochs."""

    def __init__(self, n, batch, gen):
        self.n, self.batch, self.gen = n, batch, gen
        self.order, self.pos = None, n

    def next(self):
        if self.pos >= self.n:
            self.order, self.pos = torch.randperm(self.n, generator=self.gen), 0
        idx = self.order[self.pos:self.pos + self.batch]
        self.pos += self.batch
        return idx


# ---------------------------------------------------------------- model, loss, optimizer

def keras_cnn():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.25),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
        nn.Conv2d(64, 64, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.25),
        nn.Flatten(), nn.Linear(64 * 6 * 6, 512), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(512, 10))  # the softmax is in keras_categorical_crossentropy / predictions


def glorot_limit(weight):
    """Keras glorot_uniform's limit sqrt(6 / (fan_in + fan_out)); a conv kernel's fans are
    receptive field * input channels and receptive field * filters."""
    receptive = weight[0][0].numel() if weight.dim() > 2 else 1
    fan_out, fan_in = weight.shape[0] * receptive, weight.shape[1] * receptive
    return math.sqrt(6.0 / (fan_in + fan_out))


def keras_init(model, gen):
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            with torch.no_grad():
                limit = glorot_limit(m.weight)
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) * 2 * limit - limit)
                m.bias.zero_()


def keras_categorical_crossentropy(logits, labels, reduction="mean"):
    """Keras' categorical_crossentropy on a softmax output (TensorFlow backend): renormalise, clip to
    [eps, 1 - eps], -log of the label's probability."""
    p = torch.softmax(logits, dim=1)
    p = p / p.sum(dim=1, keepdim=True)
    p = p.clamp(KERAS_EPSILON, 1.0 - KERAS_EPSILON)
    nll = -torch.log(p.gather(1, labels[:, None]))[:, 0]
    return {"mean": nll.mean, "sum": nll.sum, "none": lambda: nll}[reduction]()


class KerasRMSprop:
    """keras.optimizers.RMSprop (Keras 2.1/2.2): rho, epsilon outside the square root, time decay
    lr / (1 + decay * iterations) with iterations = updates already applied."""

    def __init__(self, params, lr, rho=0.9, epsilon=KERAS_EPSILON, decay=0.0):
        self.params = list(params)
        self.lr, self.rho, self.epsilon, self.decay = lr, rho, epsilon, decay
        self.iterations = 0
        self.accumulators = [torch.zeros_like(p) for p in self.params]

    def current_lr(self):
        return self.lr / (1.0 + self.decay * self.iterations) if self.decay > 0 else self.lr

    @torch.no_grad()
    def step(self):
        lr = self.current_lr()
        for p, a in zip(self.params, self.accumulators):
            g = p.grad
            a.mul_(self.rho).addcmul_(g, g, value=1.0 - self.rho)
            p.sub_(lr * g / (a.sqrt() + self.epsilon))
        self.iterations += 1


# ---------------------------------------------------------------- one worker

def average_gradients(params, size):
    """hvd.DistributedOptimizer: allreduce (sum) of every gradient, divided by the number of workers;
    one flat buffer, one call."""
    flat = torch.cat([p.grad.reshape(-1) for p in params])
    dist.all_reduce(flat, op=dist.ReduceOp.SUM)
    flat.div_(size)
    offset = 0
    for p in params:
        n = p.grad.numel()
        p.grad.copy_(flat[offset:offset + n].view_as(p.grad))
        offset += n


@torch.no_grad()
def validate(model, x_test, y_test, rank, size, batch=500):
    """Loss and accuracy on the test images, this worker scoring every size-th slice; summed over all."""
    model.eval()
    n = x_test.shape[0]
    per = (n + size - 1) // size
    lo, hi = min(rank * per, n), min((rank + 1) * per, n)
    sums = torch.zeros(3, dtype=torch.float64)  # loss sum, correct, count
    for i in range(lo, hi, batch):
        x = x_test[i:min(i + batch, hi)].float().div_(255.0)
        y = y_test[i:min(i + batch, hi)]
        logits = model(x)
        sums[0] += keras_categorical_crossentropy(logits, y, reduction="sum").item()
        sums[1] += (logits.argmax(1) == y).sum().item()
        sums[2] += y.numel()
    dist.all_reduce(sums, op=dist.ReduceOp.SUM)
    model.train()
    return sums[0].item() / sums[2].item(), sums[1].item() / sums[2].item()


def worker(rank, args, init_file):
    torch.set_num_threads(1)  # one thread per worker, as `batchai train --threads 1` per rank
    torch.set_num_interop_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=args.ranks)
    size = args.ranks
    x_train, y_train, x_test, y_test = load_cifar10(args.data_dir)
    if args.validation_images:
        x_test, y_test = x_test[:args.validation_images], y_test[:args.validation_images]

    # Every worker draws its own weights, data order, augmentation and dropout; the weights are then
    # replaced by rank 0's (BroadcastGlobalVariablesCallback(0)).
    torch.manual_seed(args.seed * 1000 + rank)  # dropout masks
    gen = torch.Generator().manual_seed(args.seed * 1000 + 500 + rank)
    model = keras_cnn()
    keras_init(model, gen)
    params = list(model.parameters())
    for p in params:
        dist.broadcast(p.data, src=0)
    lr = args.lr if args.lr is not None else 1e-4 * size
    opt = KerasRMSprop(params, lr=lr, rho=0.9, epsilon=KERAS_EPSILON, decay=1e-6)

    n = x_train.shape[0]
    steps = args.steps_per_epoch or math.ceil(n / args.batch_size)
    epochs = args.epochs if args.epochs is not None else math.ceil(100 / size)
    stream = BatchStream(n, args.batch_size, gen)
    rows = []
    checkpoint = os.path.join(args.out_dir, f"checkpoint-rank{rank}.pt")
    first_epoch = 1
    if args.resume and os.path.exists(checkpoint):
        first_epoch, rows = restore_checkpoint(checkpoint, model, opt, gen, stream)
        if rank == 0:
            print(f"Resuming from {checkpoint} after epoch {first_epoch - 1}.", flush=True)
    if rank == 0:
        print(f"{size} workers, {epochs} epochs of {steps} steps, batch {args.batch_size} per worker, "
              f"lr {lr:g}, {sum(p.numel() for p in params)} parameters, {x_test.shape[0]} validation images",
              flush=True)
    model.train()
    for epoch in range(first_epoch, epochs + 1):
        start = time.perf_counter()
        sums = torch.zeros(3, dtype=torch.float64)  # loss * images, correct, images (this worker)
        for step in range(steps):
            idx = stream.next()
            x = x_train[idx].float().div_(255.0)
            if not args.no_augmentation:
                x = shift_flip(x, gen)
            y = y_train[idx]
            for p in params:
                p.grad = None
            logits = model(x)
            loss = keras_categorical_crossentropy(logits, y)
            loss.backward()
            average_gradients(params, size)
            opt.step()
            sums[0] += loss.item() * y.numel()
            sums[1] += (logits.detach().argmax(1) == y).sum().item()
            sums[2] += y.numel()
            if rank == 0 and (step + 1) % 50 == 0:
                print(f"epoch {epoch} step {step + 1}/{steps} loss {sums[0] / sums[2]:.4f} "
                      f"acc {sums[1] / sums[2]:.4f}", flush=True)
        # MetricAverageCallback: the workers' epoch means, averaged.
        means = torch.tensor([sums[0] / sums[2], sums[1] / sums[2]], dtype=torch.float64)
        dist.all_reduce(means, op=dist.ReduceOp.SUM)
        means /= size
        val_loss, val_acc = validate(model, x_test, y_test, rank, size)
        seconds = time.perf_counter() - start
        row = dict(epoch=epoch, loss=f"{means[0].item():.6f}", acc=f"{means[1].item():.6f}",
                   val_loss=f"{val_loss:.6f}", val_acc=f"{val_acc:.4f}", lr=f"{opt.current_lr():.9g}",
                   seconds=f"{seconds:.2f}")
        rows.append(row)
        if rank == 0:
            print(f"Epoch {epoch}/{epochs} - {seconds:.0f}s - loss: {row['loss']} - acc: {row['acc']} - "
                  f"val_loss: {row['val_loss']} - val_acc: {row['val_acc']}", flush=True)
            os.makedirs(args.out_dir, exist_ok=True)
            with open(os.path.join(args.out_dir, "metrics.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(row))
                w.writeheader()
                w.writerows(rows)
        os.makedirs(args.out_dir, exist_ok=True)
        save_checkpoint(checkpoint, epoch, rows, model, opt, gen, stream)
        dist.barrier()  # every rank's checkpoint is of the same epoch before any goes on
    dist.destroy_process_group()


def save_checkpoint(path, epoch, rows, model, opt, gen, stream):
    """Everything a worker needs to go on exactly as if never stopped: weights, the optimizer's
    accumulators and step count, both random streams (data/augmentation and dropout), the position in
    the shuffled pass. Written to a temporary name and renamed, so a kill leaves the last whole one."""
    state = dict(epoch=epoch, rows=rows, model=model.state_dict(), accumulators=opt.accumulators,
                 iterations=opt.iterations, gen=gen.get_state(), torch_rng=torch.get_rng_state(),
                 order=stream.order, pos=stream.pos)
    torch.save(state, path + ".tmp")
    os.replace(path + ".tmp", path)


def restore_checkpoint(path, model, opt, gen, stream):
    """Loads save_checkpoint's state; returns the next epoch and the rows written so far."""
    state = torch.load(path)
    model.load_state_dict(state["model"])
    for a, saved in zip(opt.accumulators, state["accumulators"]):
        a.copy_(saved)
    opt.iterations = state["iterations"]
    gen.set_state(state["gen"])
    torch.set_rng_state(state["torch_rng"])
    stream.order, stream.pos = state["order"], state["pos"]
    return state["epoch"] + 1, state["rows"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--epochs", type=int, help="default ceil(100 / ranks)")
    ap.add_argument("--steps-per-epoch", type=int, default=0, help="default ceil(50000 / batch)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, help="default 1e-4 * ranks")
    ap.add_argument("--validation-images", type=int, default=0, help="default all 10,000")
    ap.add_argument("--no-augmentation", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true",
                    help="go on from OUT/checkpoint-rank*.pt (written after every epoch) when present")
    args = ap.parse_args()
    for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
        path = os.path.join(args.data_dir, name)
        if not (os.path.exists(path) or os.path.exists(path + ".xz")):
            raise SystemExit(f"tutorial_port: {path} (or .xz) is missing")
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(worker, args=(args, os.path.join(tmp, "rendezvous")), nprocs=args.ranks, join=True)
    print(f"metrics: {os.path.join(args.out_dir, 'metrics.csv')}")


if __name__ == "__main__":
    sys.exit(main())
