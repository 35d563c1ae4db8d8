"""Trains a CNN and an MLP on scikit-learn's bundled `digits` dataset (8x8
images, 1,797 samples, no download) with dlc: forward, backward
(dlc.value_and_grad) and the optimizer's update in one compiled call per
step (dlc.optim.TrainStep). Prints a progress bar with loss and accuracy,
writes a PNG of the loss curves, and times the same models' steps in PyTorch
eager on this machine.

    make bench          # once: installs scikit-learn and matplotlib
    .venv/bin/python examples/train_digits.py [--epochs 12] [--out digits.png]
"""

import argparse
import os
import sys
import time

import numpy as np

import dlc

BATCH = 64


def load(seed=0):
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        sys.exit("this example needs scikit-learn (its bundled digits dataset): run "
                 "`make bench`, or `.venv/bin/pip install scikit-learn`")
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]  # [N, 1, 8, 8] in [0, 1]
    y = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(y))
    split = int(0.8 * len(y))
    return x[order[:split]], y[order[:split]], x[order[split:]], y[order[split:]]


# -- models: parameters as {name: array}, the forward as dlc ops --------------------

def he(rng, shape, fan_in):
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def cnn_init(rng):
    return {"c1": he(rng, (16, 1, 3, 3), 9), "g1": np.ones(16, np.float32),
            "b1": np.zeros(16, np.float32),
            "c2": he(rng, (32, 16, 3, 3), 144), "g2": np.ones(32, np.float32),
            "b2": np.zeros(32, np.float32),
            "w": he(rng, (32 * 4 * 4, 10), 512), "bias": np.zeros(10, np.float32)}


def batch_norm_train(x, gamma, beta):
    mean = dlc.mean(x, axis=(0, 2, 3))
    centered = x - dlc.reshape(mean, (1, -1, 1, 1))
    return dlc.batch_norm(x, mean, dlc.mean(centered * centered, axis=(0, 2, 3)), gamma, beta)


def cnn_logits(p, x):
    """Batch norm with the batch's statistics, in training and in evaluation
    (on the whole test set at once), which keeps the example free of running
    averages."""
    h = dlc.relu(batch_norm_train(dlc.conv2d(x, p["c1"], padding=1), p["g1"], p["b1"]))
    h = dlc.relu(batch_norm_train(dlc.conv2d(h, p["c2"], padding=1), p["g2"], p["b2"]))
    h = dlc.max_pool2d(h, 2)
    return dlc.reshape(h, (x.shape[0], -1)) @ p["w"] + p["bias"]


def mlp_init(rng):
    return {"w1": he(rng, (64, 128), 64), "b1": np.zeros(128, np.float32),
            "w2": he(rng, (128, 64), 128), "b2": np.zeros(64, np.float32),
            "w3": he(rng, (64, 10), 64), "b3": np.zeros(10, np.float32)}


def mlp_logits(p, x):
    h = dlc.reshape(x, (x.shape[0], 64))
    h = dlc.relu(h @ p["w1"] + p["b1"])
    h = dlc.relu(h @ p["w2"] + p["b2"])
    return h @ p["w3"] + p["b3"]


MODELS = {"cnn": (cnn_init, cnn_logits, lambda: dlc.optim.Adam(3e-3)),
          "mlp": (mlp_init, mlp_logits, lambda: dlc.optim.SGD(0.1, momentum=0.9))}


def progress(model, epoch, epochs, done, total, loss, accuracy):
    width = 24
    filled = int(width * done / total)
    bar = "#" * filled + "-" * (width - filled)
    text = f"\r{model} epoch {epoch + 1}/{epochs} [{bar}] loss {loss:.4f}"
    if accuracy is not None:
        text += f"  test accuracy {accuracy:.2%}"
    print(text, end="", flush=True)


def train(name, epochs, data, seed=0):
    init, logits, make_optimizer = MODELS[name]
    x_train, y_train, x_test, y_test = data
    rng = np.random.default_rng(seed)

    def loss_fn(p, x, y):
        return dlc.optim.cross_entropy(logits(p, x), y)

    step = dlc.optim.TrainStep(loss_fn, init(rng), make_optimizer())
    evaluate = step.function(lambda p, x: dlc.argmax(logits(p, x), axis=-1))
    batches = len(y_train) // BATCH
    losses, step_seconds, accuracy = [], [], None
    start = time.perf_counter()
    for epoch in range(epochs):
        order = rng.permutation(len(y_train))
        for b in range(batches):
            index = order[b * BATCH:(b + 1) * BATCH]
            t = time.perf_counter()
            loss = float(step(x_train[index], y_train[index]))
            step_seconds.append(time.perf_counter() - t)
            losses.append(loss)
            if b % 4 == 0 or b == batches - 1:
                progress(name, epoch, epochs, b + 1, batches, np.mean(losses[-batches:]),
                         accuracy)
        predicted = evaluate(x_test)
        accuracy = float(np.mean(predicted == y_test))
        progress(name, epoch, epochs, batches, batches, np.mean(losses[-batches:]), accuracy)
    print()
    train_seconds = time.perf_counter() - start
    return {"losses": losses, "accuracy": accuracy, "seconds": train_seconds,
            "step_ms": 1e3 * float(np.median(step_seconds[5:]))}


def torch_step_ms(name, data, steps=60):
    """Median step time of the same model, loss and optimizer in PyTorch
    eager (same threads)."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    torch.set_num_threads(dlc.get_num_threads())
    init = MODELS[name][0]
    p = {k: torch.tensor(v, requires_grad=True) for k, v in init(np.random.default_rng(0)).items()}
    if name == "cnn":
        def logits(x):
            h = F.relu(F.batch_norm(F.conv2d(x, p["c1"], padding=1), None, None, p["g1"],
                                    p["b1"], training=True))
            h = F.relu(F.batch_norm(F.conv2d(h, p["c2"], padding=1), None, None, p["g2"],
                                    p["b2"], training=True))
            return F.max_pool2d(h, 2).reshape(x.shape[0], -1) @ p["w"] + p["bias"]
        optimizer = torch.optim.Adam(p.values(), 3e-3)
    else:
        def logits(x):
            h = F.relu(x.reshape(x.shape[0], 64) @ p["w1"] + p["b1"])
            return F.relu(h @ p["w2"] + p["b2"]) @ p["w3"] + p["b3"]
        optimizer = torch.optim.SGD(p.values(), 0.1, momentum=0.9)
    x, y = torch.tensor(data[0][:BATCH]), torch.tensor(data[1][:BATCH], dtype=torch.long)
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        optimizer.zero_grad()
        F.cross_entropy(logits(x), y).backward()
        optimizer.step()
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times[5:]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--models", nargs="*", default=["cnn", "mlp"], choices=list(MODELS))
    parser.add_argument("--out", default="digits_loss.png", help="the loss-curve plot")
    args = parser.parse_args(argv)
    data = load()
    print(f"digits: {len(data[1])} training and {len(data[3])} test images, batch {BATCH}, "
          f"{dlc.get_num_threads()} threads")
    results = {}
    for name in args.models:
        results[name] = train(name, args.epochs, data)
        results[name]["torch_step_ms"] = torch_step_ms(name, data)
    print(f"\n{'model':<6}{'test acc':>10}{'train s':>9}{'dlc step ms':>13}"
          f"{'torch step ms':>15}{'x torch':>9}")
    for name, r in results.items():
        ratio = r["torch_step_ms"] / r["step_ms"] if r["torch_step_ms"] else float("nan")
        torch_ms = f"{r['torch_step_ms']:.3f}" if r["torch_step_ms"] else "-"
        print(f"{name:<6}{r['accuracy']:>10.2%}{r['seconds']:>9.1f}{r['step_ms']:>13.3f}"
              f"{torch_ms:>15}{ratio:>9.2f}")
    print("(train s includes the first step's compile; x torch above 1: dlc's step is faster)")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (`make bench` installs it)")
        return 0
    figure, axis = plt.subplots(figsize=(7, 4))
    for name, r in results.items():
        axis.plot(r["losses"], label=f"{name} ({r['accuracy']:.1%} test accuracy)")
    axis.set_xlabel("step (batch of 64)")
    axis.set_ylabel("cross-entropy")
    axis.set_yscale("log")
    axis.set_title("dlc training on digits")
    axis.legend()
    figure.tight_layout()
    figure.savefig(args.out, dpi=120)
    print(f"loss curves: {os.path.abspath(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
