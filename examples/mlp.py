"""The README's MLP, compiled by dlc and checked against numpy.

Run with `make demo`. Prints the prediction of the first rows, the max
relative error against a float64 numpy reference, the compile time, and the
median run time of dlc next to numpy's (same process, same inputs).
"""

import statistics
import time

import numpy as np

import dlc


@dlc.jit(dynamic_batch=("x",))
def mlp(x, w1, b1, w2, b2, w3, b3):
    h1 = dlc.relu(x @ w1 + b1)
    h2 = dlc.relu(h1 @ w2 + b2)
    return dlc.softmax(h2 @ w3 + b3, axis=-1)


def numpy_mlp(x, w1, b1, w2, b2, w3, b3):
    h1 = np.maximum(x @ w1 + b1, 0)
    h2 = np.maximum(h1 @ w2 + b2, 0)
    logits = h2 @ w3 + b3
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def init_params(rng, sizes=(784, 128, 32, 10)):
    """He-initialized float32 weights and small biases: [w1, b1, w2, b2, ...]."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append((rng.standard_normal((fan_in, fan_out)) * np.sqrt(2 / fan_in)).astype(np.float32))
        params.append((rng.standard_normal(fan_out) * 0.1).astype(np.float32))
    return params


def median_seconds(fn, repeats=50):
    fn()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    rng = np.random.default_rng(0)
    params = init_params(rng)
    x = rng.random((64, 784), dtype=np.float32)

    start = time.perf_counter()
    compiled = mlp.lower(x, *params).compile()
    compile_seconds = time.perf_counter() - start

    y = compiled(x, *params)
    reference = numpy_mlp(x.astype(np.float64), *(p.astype(np.float64) for p in params))
    max_rel = float(np.max(np.abs(y - reference) / np.abs(reference)))

    print("dlc MLP 784-128-32-10, batch 64, float32")
    print("stages:", " -> ".join(dlc.STAGES))
    np.set_printoptions(precision=4, suppress=True)
    print("predicted classes of the first 8 rows:", y[:8].argmax(axis=1))
    print("probabilities of row 0:", y[0])
    print(f"max relative error vs numpy (float64): {max_rel:.2e}")
    print(f"compile time: {compile_seconds * 1e3:.0f} ms (trace + dl-cpu-pipeline + LLVM JIT)")
    dlc_run = median_seconds(lambda: compiled(x, *params))
    numpy_run = median_seconds(lambda: numpy_mlp(x, *params))
    print(f"run time (median of 50): dlc {dlc_run * 1e3:.3f} ms, numpy {numpy_run * 1e3:.3f} ms, "
          f"ratio dlc/numpy {dlc_run / numpy_run:.1f}x")
    if max_rel > 1e-5:
        raise SystemExit(f"FAILED: max relative error {max_rel:.2e} exceeds 1e-5")


if __name__ == "__main__":
    main()
