#!/usr/bin/python3
"""The tutorial's job as Keras 2 and Horovod define it, in PyTorch, for the lockstep check
(lockstep.py): written from the Keras 2 and Horovod documentation and sources, not from batchai's
code. Each choice and where it comes from:

- Network: Keras examples/cifar10_cnn.py (Keras 2.x): Conv2D(32, 3x3, padding='same')-ReLU,
  Conv2D(32, 3x3)-ReLU, MaxPooling2D(2), Dropout(0.25), the same with 64 filters, Flatten,
  Dense(512)-ReLU, Dropout(0.5), Dense(10)-softmax. Inputs `astype('float32') / 255`, nothing else.
  PyTorch's layout is channels-first, so Flatten orders the 2304 features (C, H, W) where Keras has
  (H, W, C): lockstep.py permutes the first Dense layer's rows when it loads batchai's weights.
- Loss: Keras `categorical_crossentropy` on the softmax output, as the TensorFlow backend computes it:
  probabilities renormalised to sum 1, clipped to [epsilon, 1 - epsilon] with K.epsilon() = 1e-7,
  then -sum(y * log p), averaged over the batch. The clip stops the gradient where it bites.
- Optimizer: keras.optimizers.RMSprop(lr=1e-4, decay=1e-6) as Keras 2.1/2.2 define it (optimizers.py
  `RMSprop.get_updates`): rho 0.9, epsilon = K.epsilon() = 1e-7 added *outside* the square root,
  accumulators start at zero, and the time decay lr_t = lr / (1 + decay * iterations) with
  `iterations` counting the updates already applied (0 on the first):
      a <- rho * a + (1 - rho) * g^2 ;   p <- p - lr_t * g / (sqrt(a) + epsilon)
- Learning rate scaled by the number of workers (Horovod's Keras guide, docs/keras.rst: `lr *
  hvd.size()`); gradients averaged over the workers (hvd.DistributedOptimizer: allreduce sum / size).
- Augmentation: ImageDataGenerator(width_shift_range=0.1, height_shift_range=0.1,
  horizontal_flip=True, fill_mode='nearest') as Keras 2.1's `random_transform` applies it: a shift
  in fractional pixels resampled at the nearest pixel (order 0), points outside the image taking the
  nearest edge pixel, then a left-right flip.
"""
import lzma
import os

import torch
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
        raise SystemExit(f"keras_reference: {path} (or {path}.xz) is missing")
    if len(raw) % RECORD:
        raise SystemExit(f"keras_reference: {path} is not a CIFAR-10 binary file ({len(raw)} bytes)")
    t = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(-1, RECORD)
    return t[:, 1:].reshape(-1, 3, 32, 32).clone(), t[:, 0].long()


def load_cifar10(data_dir):
    parts = [read_batch(os.path.join(data_dir, f"data_batch_{i}.bin")) for i in range(1, 6)]
    x_train = torch.cat([p[0] for p in parts])
    y_train = torch.cat([p[1] for p in parts])
    x_test, y_test = read_batch(os.path.join(data_dir, "test_batch.bin"))
    return x_train, y_train, x_test, y_test


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


# ---------------------------------------------------------------- model, loss, optimizer

def keras_cnn():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.25),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
        nn.Conv2d(64, 64, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.25),
        nn.Flatten(), nn.Linear(64 * 6 * 6, 512), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(512, 10))  # the softmax is in keras_categorical_crossentropy / predictions


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
