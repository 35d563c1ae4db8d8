"""Exports a small MLP (seeded weights) with dlc.export, for main.c.

    .venv/bin/python examples/deploy/export_mlp.py OUT_DIR
    cc examples/deploy/main.c -I OUT_DIR OUT_DIR/mlp.so -Wl,-rpath,OUT_DIR -o mlp
    ./mlp 3        # runs the MLP on a batch of 3 and prints the outputs

The library needs nothing of dlc at run time (ldd OUT_DIR/mlp.so).
"""

import os
import sys

import numpy as np

import dlc

rng = np.random.default_rng(0)
W1 = (rng.standard_normal((16, 32)) / 4).astype(np.float32)
B1 = rng.standard_normal(32).astype(np.float32)
W2 = (rng.standard_normal((32, 4)) / 4).astype(np.float32)


def mlp(x):
    return dlc.softmax(dlc.relu(x @ W1 + B1) @ W2, axis=-1)


def example_input(batch):
    """The input main.c builds: x[i][j] = sin(i * 16 + j)."""
    return np.sin(np.arange(batch * 16, dtype=np.float64)).astype(np.float32).reshape(batch, 16)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    path = dlc.export(mlp, example_input(2), path=os.path.join(out, "mlp.so"),
                      dynamic_batch=True)
    print(f"wrote {path} and {os.path.splitext(path)[0]}.h")
