"""dlc benchmarks: median run times next to numpy (and PyTorch when installed),
measured in the same process on the same inputs, reported as ratios.

The machine is shared and noisy: quote medians and ratios, never one time.
Run with `make bench` (or `python bench/run.py --repeats 200 --json out.json`).
"""

import argparse
import json
import os
import sys

import numpy as np

import dlc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import mlp as mlp_example  # noqa: E402 - the demo's model, numpy reference and timer

median_seconds = mlp_example.median_seconds

try:
    import torch
except ImportError:  # PyTorch is optional
    torch = None


def mlp_case(batch, rng):
    params = mlp_example.init_params(rng)
    x = rng.random((batch, 784), dtype=np.float32)

    def torch_fn(x, w1, b1, w2, b2, w3, b3):
        h = torch.relu(x @ w1 + b1)
        h = torch.relu(h @ w2 + b2)
        return torch.softmax(h @ w3 + b3, dim=-1)

    return (f"mlp 784-128-32-10 b{batch}", mlp_example.mlp.__wrapped__,
            mlp_example.numpy_mlp, torch_fn, (x, *params))


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
