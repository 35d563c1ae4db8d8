"""dlc benchmarks: median run times next to numpy (and PyTorch when installed),
measured in the same process on the same inputs, reported as ratios.

The machine is shared and noisy: quote medians and ratios, never one time.
Run with `make bench` (or `python bench/run.py --repeats 200 --json out.json`).
"""

import argparse
import json
import statistics
import time

import numpy as np

import dlc

try:
    import torch
except ImportError:  # PyTorch is optional
    torch = None


def median_seconds(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def mlp_case(batch, rng):
    sizes = (784, 128, 32, 10)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append((rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32))
        params.append((rng.standard_normal(fan_out) * 0.1).astype(np.float32))
    x = rng.random((batch, 784), dtype=np.float32)

    def dlc_fn(x, w1, b1, w2, b2, w3, b3):
        h = dlc.relu(x @ w1 + b1)
        h = dlc.relu(h @ w2 + b2)
        return dlc.softmax(h @ w3 + b3, axis=-1)

    def numpy_fn(x, w1, b1, w2, b2, w3, b3):
        h = np.maximum(x @ w1 + b1, 0)
        h = np.maximum(h @ w2 + b2, 0)
        z = h @ w3 + b3
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def torch_fn(x, w1, b1, w2, b2, w3, b3):
        h = torch.relu(x @ w1 + b1)
        h = torch.relu(h @ w2 + b2)
        return torch.softmax(h @ w3 + b3, dim=-1)

    return f"mlp 784-128-32-10 b{batch}", dlc_fn, numpy_fn, torch_fn, (x, *params)


def matmul_case(n, rng):
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    return (f"matmul {n}x{n}x{n}", lambda a, b: a @ b, lambda a, b: a @ b,
            lambda a, b: a @ b, (a, b))


def softmax_case(rows, cols, rng):
    x = rng.standard_normal((rows, cols)).astype(np.float32)

    def numpy_fn(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    return (f"softmax {rows}x{cols}", lambda x: dlc.softmax(x, axis=-1), numpy_fn,
            lambda x: torch.softmax(x, dim=-1), (x,))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--json", help="also write the results to this file")
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    cases = [mlp_case(1, rng), mlp_case(64, rng), matmul_case(256, rng),
             softmax_case(256, 1000, rng)]

    rows = []
    header = f"{'case':<26}{'dlc ms':>10}{'numpy ms':>10}{'dlc/numpy':>11}"
    if torch is not None:
        header += f"{'torch ms':>10}{'dlc/torch':>11}"
    print(header)
    for name, dlc_fn, numpy_fn, torch_fn, args in cases:
        compiled = dlc.jit(dlc_fn).lower(*args).compile()
        np.testing.assert_allclose(compiled(*args), numpy_fn(*args), rtol=1e-4, atol=1e-5)
        row = {"case": name, "compile_ms": compiled.compile_seconds * 1e3,
               "dlc_ms": median_seconds(lambda: compiled(*args), options.repeats) * 1e3,
               "numpy_ms": median_seconds(lambda: numpy_fn(*args), options.repeats) * 1e3}
        line = (f"{name:<26}{row['dlc_ms']:>10.3f}{row['numpy_ms']:>10.3f}"
                f"{row['dlc_ms'] / row['numpy_ms']:>10.1f}x")
        if torch is not None:
            torch_args = [torch.from_numpy(a) for a in args]
            with torch.no_grad():
                row["torch_ms"] = median_seconds(lambda: torch_fn(*torch_args),
                                                 options.repeats) * 1e3
            line += f"{row['torch_ms']:>10.3f}{row['dlc_ms'] / row['torch_ms']:>10.1f}x"
        print(line)
        rows.append(row)
    if options.json:
        with open(options.json, "w") as out:
            json.dump(rows, out, indent=2)


if __name__ == "__main__":
    main()
