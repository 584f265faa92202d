#!/usr/bin/python3
"""Checks of tutorial_port.py that need no data (a few seconds): RMSprop against two steps worked out
by hand from the Keras 2 formula, the augmentation's shift (whole pixels up to 10%, nearest-edge fill)
and flip, the loss clip, the Glorot limits and parameter count, and the gradient averaging over two
gloo workers. Prints 'ok' or fails with an AssertionError.
Usage: check_tutorial_port.py
"""
import math
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tutorial_port as tp  # noqa: E402


def check_rmsprop():
    # lr 0.01, decay 0.1, rho 0.9, epsilon 1e-7; p0 = 1, gradients 0.5 then -0.2.
    # step 1: lr_1 = 0.01 / (1 + 0.1 * 0) = 0.01;   a_1 = 0.1 * 0.25 = 0.025
    #         p_1 = 1 - 0.01 * 0.5 / (sqrt(0.025) + 1e-7) = 1 - 0.005 / 0.1581139830 = 0.9683772434
    # step 2: lr_2 = 0.01 / (1 + 0.1 * 1) = 0.0090909091;   a_2 = 0.9 * 0.025 + 0.1 * 0.04 = 0.0265
    #         p_2 = p_1 + 0.0090909091 * 0.2 / (sqrt(0.0265) + 1e-7) = p_1 + 0.0018181818 / 0.1627883060
    #             = 0.9683772434 + 0.0111689953 = 0.9795462387
    p = torch.nn.Parameter(torch.tensor([1.0], dtype=torch.float64))
    opt = tp.KerasRMSprop([p], lr=0.01, rho=0.9, epsilon=1e-7, decay=0.1)
    p.grad = torch.tensor([0.5], dtype=torch.float64)
    opt.step()
    assert abs(p.item() - 0.9683772434) < 1e-9, p.item()
    p.grad = torch.tensor([-0.2], dtype=torch.float64)
    opt.step()
    assert abs(p.item() - 0.9795462387) < 1e-9, p.item()
    assert abs(opt.current_lr() - 0.01 / 1.2) < 1e-15  # the lr of the third update
    # Epsilon outside the square root: a gradient of 1e-8 gives a_1 = 1e-17, sqrt 3.162e-9, so
    # the step is lr * 1e-8 / (3.162e-9 + 1e-7) = 0.0969 lr (inside the root it would be 0.0316 lr).
    q = torch.nn.Parameter(torch.tensor([0.0], dtype=torch.float64))
    opt = tp.KerasRMSprop([q], lr=1.0, rho=0.9, epsilon=1e-7)
    q.grad = torch.tensor([1e-8], dtype=torch.float64)
    opt.step()
    assert abs(-q.item() - 1e-8 / (math.sqrt(1e-17) + 1e-7)) < 1e-12, q.item()


def check_shift_flip():
    gen = torch.Generator().manual_seed(3)
    n, h, w = 400, 32, 32
    # Distinct values per pixel (row * 100 + column), the same in every channel.
    base = (torch.arange(h)[:, None] * 100 + torch.arange(w)[None, :]).double()
    x = base.expand(n, 3, h, w).clone()
    out = tp.shift_flip(x, gen)
    seen_rows, seen_cols, flips = set(), set(), 0
    for img in out:
        assert torch.equal(img[0], img[1]) and torch.equal(img[0], img[2])
        rows = (img[0] // 100).long()  # which input row each output pixel came from
        cols = (img[0] % 100).long()
        # Every output row reads one input row; it is i + dr clamped to the image (nearest fill).
        dr = None
        for i in range(h):
            assert torch.all(rows[i] == rows[i, 0])
        r = rows[:, 0]
        interior = [int(r[i]) - i for i in range(h) if 0 < r[i] < h - 1]
        dr = interior[0]
        assert all(d == dr for d in interior) and abs(dr) <= 3, (dr, r)
        assert torch.equal(r, (torch.arange(h) + dr).clamp(0, h - 1))
        c = cols[0]
        flipped = bool(c[0] > c[-1])
        if flipped:
            c = c.flip(0)
        dc = [int(c[j]) - j for j in range(w) if 0 < c[j] < w - 1][0]
        assert abs(dc) <= 3 and torch.equal(c, (torch.arange(w) + dc).clamp(0, w - 1)), (dc, c)
        seen_rows.add(dr)
        seen_cols.add(dc)
        flips += flipped
    # A uniform shift in ±3.2 pixels rounds to every whole shift from -3 to 3.
    assert seen_rows == set(range(-3, 4)) and seen_cols == set(range(-3, 4)), (seen_rows, seen_cols)
    assert 150 < flips < 250, flips


def check_loss_clip():
    logits = torch.tensor([[40.0, 0.0, 0.0], [40.0, 0.0, 0.0]], requires_grad=True)
    labels = torch.tensor([1, 0])
    nll = tp.keras_categorical_crossentropy(logits, labels, reduction="none")
    # The label's probability (e^-40 or 1 - 2e^-40) is clipped to [1e-7, 1 - 1e-7].
    assert abs(nll[0].item() + math.log(1e-7)) < 1e-4, nll
    assert abs(nll[1].item() + math.log(1 - 1e-7)) < 1e-6, nll
    nll.sum().backward()
    assert torch.all(logits.grad == 0), logits.grad  # no gradient where the clip bites
    # Unclipped, it is the ordinary cross entropy.
    z = torch.tensor([[1.0, 2.0, 0.5]])
    ref = torch.nn.functional.cross_entropy(z, torch.tensor([2]))
    assert abs(tp.keras_categorical_crossentropy(z, torch.tensor([2])).item() - ref.item()) < 1e-6


def check_model():
    model = tp.keras_cnn()
    assert sum(p.numel() for p in model.parameters()) == 1250858
    tp.keras_init(model, torch.Generator().manual_seed(1))
    conv1, dense1 = model[0], model[13]
    assert abs(tp.glorot_limit(conv1.weight) - math.sqrt(6 / (3 * 9 + 32 * 9))) < 1e-12
    assert abs(tp.glorot_limit(dense1.weight) - math.sqrt(6 / (2304 + 512))) < 1e-12
    assert conv1.weight.abs().max() <= tp.glorot_limit(conv1.weight)
    assert conv1.weight.abs().max() > 0.9 * tp.glorot_limit(conv1.weight)
    assert all(torch.all(m.bias == 0) for m in (conv1, dense1))
    assert model(torch.zeros(2, 3, 32, 32)).shape == (2, 10)


def averaging_worker(rank, init_file):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    p = torch.nn.Parameter(torch.zeros(3))
    p.grad = torch.tensor([1.0, 2.0, 3.0]) * (rank + 1)  # rank 0: 1 2 3, rank 1: 2 4 6
    tp.average_gradients([p], 2)
    assert torch.allclose(p.grad, torch.tensor([1.5, 3.0, 4.5])), p.grad
    dist.destroy_process_group()


def main():
    torch.set_num_threads(1)
    check_rmsprop()
    check_shift_flip()
    check_loss_clip()
    check_model()
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(averaging_worker, args=(os.path.join(tmp, "rendezvous"),), nprocs=2, join=True)
    print("ok")


if __name__ == "__main__":
    main()
