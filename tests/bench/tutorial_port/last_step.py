#!/usr/bin/python3
"""Does the validation pass see a worse network right after a half-size step? The tutorial's epochs
end on the pass's remainder (Keras cuts 50,000 images into 1,562 batches of 32 and one of 16), and
each epoch's validation pass follows that 16-image step. This takes many single steps from one late
state of `batchai train` (a checkpoint: weights, RMSprop accumulators, update count), each trial once
with 32 images a rank and once with the first 16 of the same images (the same augmentation, dropout
on), and scores the 10,000 test images after each: the paired difference is what the last step's
size alone does to one validation pass. The step is the port's (`tutorial_port.py`: Keras' loss and
RMSprop, Horovod's average over the ranks), in float32, one thread.

Usage: last_step.py --data-dir DIR --out DIR --start CHECKPOINT [--trials 20] [--seed 1]
                    [--exe ...tutorial_lockstep]
CHECKPOINT: RUN/checkpoints/checkpoint.bin of a `batchai train` run of seed S (4 ranks, batch 32);
S also seeds the trials' draws.
"""
import os
import statistics
import sys
import types

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import late_lockstep as ll  # noqa: E402
import lockstep as ls  # noqa: E402
import same_draws as sd  # noqa: E402
import tutorial_port as tp  # noqa: E402

RANKS, BATCH = 4, 32


@torch.no_grad()
def score(model, x_test, y_test):
    """Keras' loss and the accuracy over the test images, dropout off (same_draws.py's evaluator)."""
    model.eval()
    result = sd.validate(model, [], x_test, y_test, torch.float32)
    model.train()
    return result


def one_step(model, opt, images, labels, seed):
    """Every rank's Keras loss on its images (dropout drawn from seed), the gradients averaged over
    the ranks (hvd.DistributedOptimizer), one RMSprop update."""
    params = list(model.parameters())
    total = [torch.zeros_like(p) for p in params]
    torch.manual_seed(seed)
    for r in range(images.shape[0]):
        model.zero_grad()
        tp.keras_categorical_crossentropy(model(images[r]), labels[r]).backward()
        for t, p in zip(total, params):
            t.add_(p.grad)
    for t, p in zip(total, params):
        p.grad.copy_(t / images.shape[0])
    opt.step()


def main():
    ap = ll.start_arguments(__doc__)
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if not 2 <= args.trials <= 1000:
        ap.error("--trials must be 2 to 1000")
    os.makedirs(args.out, exist_ok=True)
    args.data_dir = ls.plain_data_dir(args.data_dir, args.out)
    # batchai's own reading of the checkpoint: its weights and accumulators in the Keras layout (read
    # again every run, a few seconds: an OUT kept from another checkpoint must not stand in for it)
    ll.run_batchai(types.SimpleNamespace(reuse=False, out=args.out, steps=2, steps_per_epoch=1, ranks=RANKS,
                                         batch=BATCH, exe=args.exe, data_dir=args.data_dir, seed=args.seed,
                                         start=args.start))
    table, start, count = ll.read_start(args.out)
    weights, accumulators = ll.read_state(args, 0, count)

    torch.set_num_threads(1)
    x_train, y_train, x_test, y_test = tp.load_cifar10(args.data_dir)
    model = tp.keras_cnn()
    assert any(isinstance(m, nn.Dropout) for m in model)
    opt = tp.KerasRMSprop(model.parameters(), lr=1e-4 * RANKS, rho=0.9, epsilon=tp.KERAS_EPSILON, decay=1e-6)

    def reset():
        with torch.no_grad():
            for p, t in zip(opt.params, ls.keras_to_torch(weights, table)):
                p.copy_(t)
            for a, t in zip(opt.accumulators, ls.keras_to_torch(accumulators, table)):
                a.copy_(t)
        opt.iterations = start["global_step"]

    reset()
    before = score(model, x_test, y_test)
    print(f"last_step: from the checkpoint after epoch {start['epoch']} ({start['global_step']} updates); "
          f"before any step: val_loss {before[0]:.4f}, val_acc {100 * before[1]:.2f}%")
    gen = torch.Generator().manual_seed(args.seed)
    rows = []
    for t in range(args.trials):
        order = torch.stack([torch.randperm(x_train.shape[0], generator=gen)[:BATCH] for _ in range(RANKS)])
        images = tp.shift_flip(x_train[order.view(-1)].float().div_(255.0), gen).view(RANKS, BATCH, *x_train.shape[1:])
        labels = y_train[order]
        scores = []
        for size in (BATCH, BATCH // 2):
            reset()
            one_step(model, opt, images[:, :size], labels[:, :size], args.seed * 100003 + t)
            scores.append(score(model, x_test, y_test))
        (l32, a32), (l16, a16) = scores
        rows.append((l32, a32, l16, a16))
        print(f"trial {t + 1:3d}: 32 images a rank: val_loss {l32:.4f} val_acc {100 * a32:.2f}%   "
              f"16: val_loss {l16:.4f} val_acc {100 * a16:.2f}%", flush=True)
    with open(os.path.join(args.out, "last_step.csv"), "w") as f:
        f.write("trial,val_loss_32,val_acc_32,val_loss_16,val_acc_16\n")
        for t, r in enumerate(rows):
            f.write(f"{t + 1},{r[0]:.6f},{r[1]:.4f},{r[2]:.6f},{r[3]:.4f}\n")
    for name, i in (("val_loss", 0), ("val_acc", 1)):
        s32 = [r[i] for r in rows]
        s16 = [r[i + 2] for r in rows]
        d, se = ll.mean_se([b - a for a, b in zip(s32, s16)])
        scale = 100 if i else 1
        print(f"{name}: after 32 {scale * statistics.fmean(s32):.4f} (sd {scale * statistics.stdev(s32):.4f}), "
              f"after 16 {scale * statistics.fmean(s16):.4f} (sd {scale * statistics.stdev(s16):.4f}); "
              f"16 - 32, paired: {scale * d:+.4f} ({scale * se:.4f}), "
              f"{sum(b > a for a, b in zip(s32, s16))} of {len(rows)} higher")
    return 0


if __name__ == "__main__":
    sys.exit(main())
