"""Peak heap memory of one training step of the digits CNN
(examples/train_digits.py): dlc's compiled step against PyTorch eager's, both
counted by bench/malloc_peak.c (loaded with LD_PRELOAD; this script compiles
it with `cc` and runs itself again with it). dlc's step allocates its
planned arena at each call once `dlc.runtime.release_memory()` has dropped
the cached block, so the count includes it.

    make bench                       # installs scikit-learn, then runs this too
    .venv/bin/python bench/train_memory.py
"""

import ctypes
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _reexec_with_counter():
    workdir = tempfile.mkdtemp(prefix="dlc-malloc-peak-")
    library = os.path.join(workdir, "libmalloc_peak.so")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", library,
                    os.path.join(HERE, "malloc_peak.c"), "-ldl"], check=True)
    env = dict(os.environ, LD_PRELOAD=library, DLC_MALLOC_PEAK="1")
    os.execve(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:], env)


def _peak(counter, fn, before=None, repeats=7):
    seen = []
    for _ in range(repeats):
        if before:
            before()
        base = counter.current_get()
        counter.peak_reset()
        fn()
        seen.append(counter.peak_get() - base)
    return min(seen), max(seen)


def main():
    if os.environ.get("DLC_MALLOC_PEAK") != "1":
        _reexec_with_counter()
    counter = ctypes.CDLL(None)
    counter.peak_get.restype = counter.current_get.restype = ctypes.c_longlong
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import numpy as np
    import dlc
    import dlc.runtime
    import train_digits
    data = train_digits.load()
    x, y = data[0][:train_digits.BATCH], data[1][:train_digits.BATCH]
    step, _ = train_digits.cnn_step(np.random.default_rng(0))
    rows = []
    for _ in range(5):
        step(x, y)
    plan = step.lower(x, y).memory_plan()
    rows.append(("dlc", _peak(counter, lambda: step(x, y), dlc.runtime.release_memory)))
    run = train_digits.torch_step("cnn", step)
    if run is not None:
        import torch
        tx, ty = torch.tensor(x), torch.tensor(y, dtype=torch.long)
        for _ in range(5):
            run(tx, ty)
        rows.append(("torch", _peak(counter, lambda: run(tx, ty))))
    mib = 2 ** 20
    print(f"digits CNN training step, batch {train_digits.BATCH}, {dlc.get_num_threads()} "
          f"threads: peak heap bytes over one warm step (min/max of 7)")
    for name, (low, high) in rows:
        print(f"  {name:<6} {low / mib:7.2f} / {high / mib:.2f} MiB")
    print(f"  dlc's planned arena: {plan['peak_bytes'] / mib:.2f} MiB "
          f"({plan['buffers']} buffers; {plan['unplanned_peak_bytes'] / mib:.2f} MiB unshared)")
    if len(rows) == 2:
        print(f"  dlc / torch: {rows[0][1][1] / rows[1][1][1]:.2f}")


if __name__ == "__main__":
    main()
