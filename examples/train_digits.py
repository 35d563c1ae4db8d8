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
from dlc import nn

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


# -- models ----------------------------------------------------------------------
# The CNN is a dlc.nn model: in training mode its batch norms normalize with the
# batch's statistics and update their running statistics (buffers, carried by
# the step like its parameters); the test set is evaluated in evaluation mode,
# with the running statistics. The MLP is plain functions of a parameter dict.

def cnn_model(rng):
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1, rng=rng), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1, rng=rng), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 4 * 4, 10, rng=rng))


def he(rng, shape, fan_in):
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def mlp_init(rng):
    return {"w1": he(rng, (64, 128), 64), "b1": np.zeros(128, np.float32),
            "w2": he(rng, (128, 64), 128), "b2": np.zeros(64, np.float32),
            "w3": he(rng, (64, 10), 64), "b3": np.zeros(10, np.float32)}


def mlp_logits(p, x):
    h = dlc.reshape(x, (x.shape[0], 64))
    h = dlc.relu(h @ p["w1"] + p["b1"])
    h = dlc.relu(h @ p["w2"] + p["b2"])
    return h @ p["w3"] + p["b3"]


def cnn_step(rng):
    """The CNN's training step (Adam) and its test-set predictor."""
    model = cnn_model(rng).train()

    def loss_fn(params, buffers, x, y):
        logits, buffers = nn.functional_call(model, params, x, buffers=buffers)
        return dlc.optim.cross_entropy(logits, y), buffers

    def predict(params, buffers, x):
        model.eval()  # traced once, at the first evaluation
        try:
            logits, _ = nn.functional_call(model, params, x, buffers=buffers)
        finally:
            model.train()
        return dlc.argmax(logits, axis=-1)

    step = dlc.optim.TrainStep(loss_fn, model.named_parameters(), dlc.optim.Adam(3e-3),
                               buffers=model.named_buffers())
    return step, step.function(predict)


def mlp_step(rng):
    """The MLP's training step (SGD with momentum) and its predictor."""
    def loss_fn(p, x, y):
        return dlc.optim.cross_entropy(mlp_logits(p, x), y)
    step = dlc.optim.TrainStep(loss_fn, mlp_init(rng), dlc.optim.SGD(0.1, momentum=0.9))
    return step, step.function(lambda p, x: dlc.argmax(mlp_logits(p, x), axis=-1))


MODELS = {"cnn": cnn_step, "mlp": mlp_step}


def progress(model, epoch, epochs, done, total, loss, accuracy):
    width = 24
    filled = int(width * done / total)
    bar = "#" * filled + "-" * (width - filled)
    text = f"\r{model} epoch {epoch + 1}/{epochs} [{bar}] loss {loss:.4f}"
    if accuracy is not None:
        text += f"  test accuracy {accuracy:.2%}"
    print(text, end="", flush=True)


def train(name, epochs, data, seed=0):
    x_train, y_train, x_test, y_test = data
    rng = np.random.default_rng(seed)
    step, evaluate = MODELS[name](rng)
    batches = len(y_train) // BATCH
    losses, accuracy = [], None
    start = time.perf_counter()
    for epoch in range(epochs):
        order = rng.permutation(len(y_train))
        for b in range(batches):
            index = order[b * BATCH:(b + 1) * BATCH]
            losses.append(float(step(x_train[index], y_train[index])))
            if b % 4 == 0 or b == batches - 1:
                progress(name, epoch, epochs, b + 1, batches, np.mean(losses[-batches:]),
                         accuracy)
        predicted = evaluate(x_test)
        accuracy = float(np.mean(predicted == y_test))
        progress(name, epoch, epochs, batches, batches, np.mean(losses[-batches:]), accuracy)
    print()
    return {"losses": losses, "accuracy": accuracy,
            "seconds": time.perf_counter() - start, "step": step}


def torch_step(name, step):
    """The same model, loss and optimizer in PyTorch eager (same threads,
    same initial parameters as dlc's step had), as a function running one
    step on a batch; None without PyTorch."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    torch.set_num_threads(dlc.get_num_threads())
    if name == "cnn":
        model = torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(512, 10)).train()
        ours = {**step.params, **step.buffers}
        missing, unexpected = model.load_state_dict(
            {k.replace("layers.", ""): torch.tensor(v) for k, v in ours.items()}, strict=False)
        if unexpected or any(not k.endswith("num_batches_tracked") for k in missing):
            raise RuntimeError(f"the PyTorch CNN does not match dlc's: {missing} {unexpected}")
        forward, parameters = model, list(model.parameters())
        optimizer = torch.optim.Adam(parameters, 3e-3)
    else:
        p = {k: torch.tensor(v, requires_grad=True) for k, v in step.params.items()}

        def forward(x):
            h = F.relu(x.reshape(x.shape[0], 64) @ p["w1"] + p["b1"])
            return F.relu(h @ p["w2"] + p["b2"]) @ p["w3"] + p["b3"]
        optimizer = torch.optim.SGD(p.values(), 0.1, momentum=0.9)

    def run(x, y):
        optimizer.zero_grad()
        F.cross_entropy(forward(x), y).backward()
        optimizer.step()
    return run


def step_times(name, step, data):
    """Median milliseconds per step of dlc's step and PyTorch's on one batch,
    timed in interleaved blocks in this process (timing.measure), and each
    alone afterwards (the other's threads idle)."""
    from dlc import timing
    x, y = data[0][:BATCH], data[1][:BATCH]
    peers = {"dlc": lambda: step(x, y)}
    run = torch_step(name, step)
    if run is not None:
        import torch
        tx, ty = torch.tensor(x), torch.tensor(y, dtype=torch.long)
        peers["torch"] = lambda: run(tx, ty)
    for fn in peers.values():
        for _ in range(10):
            fn()
    together = timing.measure(peers, rounds=7, block_seconds=0.25)
    alone = {n: timing.measure({n: fn}, rounds=5, block_seconds=0.25)[n]
             for n, fn in peers.items()}
    return {n: 1e3 * v for n, v in together.items()}, {n: 1e3 * v for n, v in alone.items()}


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
        results[name]["times"] = step_times(name, results[name]["step"], data)
    print(f"\n{'model':<6}{'test acc':>10}{'train s':>9}{'dlc step ms':>13}"
          f"{'torch step ms':>15}{'x torch':>9}{'(alone)':>9}")
    for name, r in results.items():
        together, alone = r["times"]
        cells = []
        for times in (together, alone):
            ratio = times["torch"] / times["dlc"] if "torch" in times else float("nan")
            cells.append(ratio)
        torch_ms = f"{together['torch']:.3f}" if "torch" in together else "-"
        print(f"{name:<6}{r['accuracy']:>10.2%}{r['seconds']:>9.1f}{together['dlc']:>13.3f}"
              f"{torch_ms:>15}{cells[0]:>9.2f}{cells[1]:>9.2f}")
    print("(batch 64; train s includes the first step's compile; step times are medians of "
          "interleaved blocks, 'alone' the ratio of each timed by itself; x torch above 1: "
          "dlc's step is faster)")
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
