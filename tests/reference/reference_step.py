#!/usr/bin/python3
"""Independent float64 NumPy reference for one forward/backward and two RMSprop steps of the
tutorial cifar10_cnn (NHWC, Keras layouts, no dropout) on a fixed batch. Writes
reference_step.json, which tests/train/reference_step_test.cpp compares against without Python.
Run once: /usr/bin/python3 tests/reference/reference_step.py > tests/reference/reference_step.json
"""
import json
import numpy as np

N, LABELS = 4, [3, 7, 0, 9]
LR, RHO, EPS, DECAY = 1e-3, 0.9, 1e-7, 1e-6
LAYERS = [("conv2d_1", 3, 32, True), ("conv2d_2", 32, 32, False), "pool",
          ("conv2d_3", 32, 64, True), ("conv2d_4", 64, 64, False), "pool",
          ("dense_1", 2304, 512, True), ("dense_2", 512, 10, False)]


def hash_unit(idx):
    """(idx * 2654435761 mod 2^32) / 2^32 in [0, 1): the same integer formula as the C++ test."""
    return ((idx.astype(np.uint64) * np.uint64(2654435761)) % np.uint64(2**32)).astype(np.float64) / 2**32


def make_params():
    params, offset = [], 0
    for layer in LAYERS:
        if layer == "pool":
            continue
        name, fin, fout, _ = layer
        shape = (3, 3, fin, fout) if name.startswith("conv") else (fin, fout)
        rf = 9 if name.startswith("conv") else 1
        limit = np.sqrt(6.0 / (rf * fin + rf * fout))
        size = int(np.prod(shape))
        k = (hash_unit(np.arange(offset, offset + size)) * 2 - 1) * limit
        offset += size
        b = 0.01 * ((np.arange(offset, offset + fout) % 7) - 3)
        offset += fout
        params.append([name, k.astype(np.float32).astype(np.float64).reshape(shape),
                       b.astype(np.float32).astype(np.float64)])
    return params


def conv_fwd(x, k, b, same):
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))) if same else x
    oh, ow = xp.shape[1] - 2, xp.shape[2] - 2
    y = np.zeros((x.shape[0], oh, ow, k.shape[3])) + b
    for ky in range(3):
        for kx in range(3):
            y += np.einsum("nhwc,co->nhwo", xp[:, ky:ky + oh, kx:kx + ow, :], k[ky, kx])
    return y


def conv_bwd(x, k, dy, same):
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))) if same else x
    oh, ow = dy.shape[1], dy.shape[2]
    dk, dxp = np.zeros_like(k), np.zeros_like(xp)
    for ky in range(3):
        for kx in range(3):
            dk[ky, kx] = np.einsum("nhwc,nhwo->co", xp[:, ky:ky + oh, kx:kx + ow, :], dy)
            dxp[:, ky:ky + oh, kx:kx + ow, :] += np.einsum("nhwo,co->nhwc", dy, k[ky, kx])
    dx = dxp[:, 1:-1, 1:-1, :] if same else dxp
    return dx, dk, dy.sum(axis=(0, 1, 2))


def pool_fwd(x):
    n, h, w, c = x.shape
    win = x[:, :h // 2 * 2, :w // 2 * 2, :].reshape(n, h // 2, 2, w // 2, 2, c)
    return win.max(axis=(2, 4))


def pool_bwd(x, dy):
    n, h, w, c = x.shape
    dx = np.zeros_like(x)
    taken = np.zeros(dy.shape, dtype=bool)
    y = pool_fwd(x)
    for dyy, dxx in [(0, 0), (0, 1), (1, 0), (1, 1)]:  # first maximum wins, row-major
        sl = x[:, dyy:h // 2 * 2:2, dxx:w // 2 * 2:2, :]
        hit = (sl == y) & ~taken
        dx[:, dyy:h // 2 * 2:2, dxx:w // 2 * 2:2, :] += np.where(hit, dy, 0.0)
        taken |= hit
    return dx


def forward_backward(params, x, labels):
    acts, a = [], x
    it = iter(params)
    for layer in LAYERS:
        if layer == "pool":
            acts.append(("pool", a))
            a = pool_fwd(a)
            continue
        name, k, b = next(it)
        relu = name not in ("dense_2",)
        if name.startswith("conv"):
            z = conv_fwd(a, k, b, layer[3])
        else:
            a = a.reshape(a.shape[0], -1)  # Flatten in NHWC == Keras channels_last order
            z = a @ k + b
        acts.append((name, a, z, relu, layer[3]))
        a = np.maximum(z, 0) if relu else z
    logits = a
    m = logits.max(axis=1, keepdims=True)
    p = np.exp(logits - m) / np.exp(logits - m).sum(axis=1, keepdims=True)
    onehot = np.eye(10)[labels]
    loss = -np.mean(np.log((p * onehot).sum(axis=1)))
    g = (p - onehot) / len(labels)
    grads = {}
    pk = {name: (k, b) for name, k, b in params}
    for entry in reversed(acts):
        if entry[0] == "pool":
            g = pool_bwd(entry[1], g.reshape(pool_fwd(entry[1]).shape))
            continue
        name, a_in, z, relu, same = entry
        if relu:
            g = g * (z > 0)
        k, b = pk[name]
        if name.startswith("conv"):
            g, dk, db = conv_bwd(a_in, k, g, same)
        else:
            dk, db = a_in.T @ g, g.sum(axis=0)
            g = g @ k.T
            if name == "dense_1":
                g = g.reshape(N, 6, 6, 64)
        grads[name] = (dk, db)
    return loss, logits, grads


def main():
    x = hash_unit(np.arange(N * 32 * 32 * 3)).astype(np.float32).astype(np.float64).reshape(N, 32, 32, 3)
    params = make_params()
    ms = {name: (np.zeros_like(k), np.zeros_like(b)) for name, k, b in params}
    out = {"batch": N, "labels": LABELS, "lr": LR, "rho": RHO, "epsilon": EPS, "decay": DECAY, "steps": []}
    for t in range(2):
        loss, logits, grads = forward_backward(params, x, np.array(LABELS))
        step = {"loss": loss, "logits_row0": logits[0].tolist(), "grads": {}, "params_after": {}}
        lr_t = LR / (1 + DECAY * t)
        for entry in params:
            name = entry[0]
            for slot, weight in ((1, "kernel:0"), (2, "bias:0")):
                g = grads[name][slot - 1].ravel()
                big = np.flatnonzero(np.abs(g) > 1e-3 * np.abs(g).max())[:4].tolist()
                m = ms[name][slot - 1]
                m[...] = RHO * m + (1 - RHO) * grads[name][slot - 1] ** 2
                entry[slot] = entry[slot] - lr_t * grads[name][slot - 1] / (np.sqrt(m) + EPS)
                key = name + "/" + weight
                step["grads"][key] = {"norm": float(np.linalg.norm(g)), "index": big,
                                      "value": [float(g[i]) for i in big]}
                step["params_after"][key] = {"index": big, "value": [float(entry[slot].ravel()[i]) for i in big]}
        out["steps"].append(step)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
