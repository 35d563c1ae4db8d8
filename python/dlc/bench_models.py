"""The model section of dlc's benchmark: real networks end to end.

ResNet-18 and MobileNetV2 (224x224 images) and one BERT-base encoder layer
(sequence 128, hidden 768, 12 heads, GELU MLP 3072), from
:mod:`dlc.models` with random weights and randomized batch-norm
statistics, at batch 1 and 8, run by

- dlc (``dlc.jit(model, constants=True)``),
- onnxruntime (the same network, as defined in :mod:`dlc.torch_models` with
  the same weights, exported from PyTorch to ONNX; every graph optimization
  on; ``intra_op_num_threads`` = dlc's threads),
- PyTorch eager (``torch.no_grad()``, ``torch.set_num_threads``).

Each runtime runs in its own process by default ("solo"): on a machine with
few cores, onnxruntime's and PyTorch's spinning thread pools slow down
whatever runs right after them in the same process. ``--interleaved``
instead runs the three in one process in interleaved rounds, as the rest
of the benchmark does. Both report the median time per call. Every
output is checked against PyTorch's (largest difference over the largest
magnitude) and the compile (or export and session set-up) time is
reported.

Run with ``python -m dlc.bench --models`` (``make bench`` does).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from .timing import measure

#: name -> (constructor, input shape at batch b, description)
MODELS = {
    "resnet18": ("resnet18", lambda b: (b, 3, 224, 224), "ResNet-18 224x224"),
    "mobilenet_v2": ("mobilenet_v2", lambda b: (b, 3, 224, 224), "MobileNetV2 224x224"),
    "bert_layer": ("BertLayer", lambda b: (b, 128, 768), "BERT-base layer seq 128"),
}
RUNTIMES = ("dlc", "onnxruntime", "torch")


def build(name, batch):
    """(dlc model, input) of `name` at `batch`, the same in every process."""
    from . import models
    constructor, shape, _ = MODELS[name]
    model = getattr(models, constructor)(rng=0)
    x = np.random.default_rng(1).standard_normal(shape(batch), dtype=np.float32)
    return model, x


def prepare(runtime_name, model, x, threads, workdir):
    """(call, seconds, output, extra facts): a callable running `model` on
    `x` with `runtime_name`, the seconds its preparation took (dlc: compile;
    onnxruntime: export and session), its output, and for dlc the seconds
    of the same compile from the disk cache."""
    start = time.perf_counter()
    if runtime_name == "dlc":
        from . import runtime
        from .jit import jit
        runtime.set_num_threads(threads)
        compiled = jit(model, constants=True).lower(x).compile()
        cold = time.perf_counter() - start
        # Again, as a second process would: trace, and load from the disk
        # cache (the worker's own, empty before the first compile).
        again = time.perf_counter()
        jit(model, constants=True).lower(x).compile()
        cached = time.perf_counter() - again
        call = lambda: compiled(x)  # noqa: E731
        # Exported (dlc.export) for the fresh-process load measured by
        # run_model.
        from .export import export
        library = os.path.join(workdir, "model.so")
        export(jit(model, constants=True), x, path=library, name="model")
        np.save(os.path.join(workdir, "x.npy"), x)
        return call, cold, np.asarray(call()), {
            "cached_seconds": cached, "export_mb": os.path.getsize(library) / 2 ** 20}
    else:
        import torch
        from . import torch_models
        torch.set_num_threads(threads)
        reference = torch_models.reference(model)
        tensor = torch.from_numpy(x)
        if runtime_name == "torch":
            def call():
                with torch.no_grad():
                    return reference(tensor).numpy()
        elif runtime_name == "onnxruntime":
            import onnxruntime
            path = os.path.join(workdir, "model.onnx")
            with torch.no_grad():
                torch.onnx.export(reference, (tensor,), path, dynamo=False,
                                  input_names=["x"], output_names=["y"])
            session_options = onnxruntime.SessionOptions()
            session_options.intra_op_num_threads = threads
            session_options.inter_op_num_threads = 1
            session_options.graph_optimization_level = \
                onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
            session = onnxruntime.InferenceSession(
                path, session_options, providers=["CPUExecutionProvider"])
            call = lambda: session.run(None, {"x": x})[0]  # noqa: E731
        else:
            raise ValueError(f"unknown runtime {runtime_name!r}")
    result = np.asarray(call())
    return call, time.perf_counter() - start, result, {}


def worker(name, batch, runtimes, threads, rounds, block_seconds, workdir):
    """Runs in its own process: prepares `runtimes`, measures them
    (interleaved when several) and returns their facts; outputs are saved
    in `workdir` as <runtime>.npy."""
    model, x = build(name, batch)
    calls, facts = {}, {}
    for runtime_name in runtimes:
        call, seconds, result, extra = prepare(runtime_name, model, x, threads, workdir)
        np.save(os.path.join(workdir, f"{runtime_name}.npy"), result)
        calls[runtime_name] = call
        facts[runtime_name] = {"prepare_seconds": seconds, **extra}
    for call in calls.values():  # warm caches and thread pools
        call()
    medians = measure(calls, rounds, block_seconds)
    for runtime_name, seconds in medians.items():
        facts[runtime_name]["ms"] = seconds * 1e3
    return facts


def run_model(name, batch, options, runtimes=RUNTIMES):
    """One model at one batch size: each runtime solo in its own process (or
    all in one with options.interleaved); the row of the table."""
    groups = [list(runtimes)] if options.interleaved else [[r] for r in runtimes]
    row = {"model": name, "batch": batch, "mode": "interleaved" if options.interleaved
           else "solo", "ms": {}, "prepare_seconds": {}, "max_rel_error": {}}
    with tempfile.TemporaryDirectory(prefix="dlc-bench-") as workdir:
        for group in groups:
            command = [sys.executable, "-m", "dlc.bench_models", "--worker", name,
                       str(batch), ",".join(group), str(options.threads),
                       str(options.model_rounds), str(options.model_block_seconds),
                       workdir]
            # Cold compiles: a disk cache of the worker's own.
            env = {**os.environ, "DLC_CACHE_DIR": os.path.join(workdir, "cache")}
            process = subprocess.run(command, capture_output=True, text=True, env=env)
            if process.returncode != 0:
                # A missing peer is reported, not fatal.
                row.setdefault("failed", {})[",".join(group)] = \
                    process.stderr.strip().splitlines()[-1:] or [f"exit {process.returncode}"]
                continue
            facts = json.loads(process.stdout.strip().splitlines()[-1])
            for runtime_name, values in facts.items():
                row["ms"][runtime_name] = values["ms"]
                row["prepare_seconds"][runtime_name] = values["prepare_seconds"]
                if "cached_seconds" in values:
                    row["cached_seconds"] = values["cached_seconds"]
                    row["export_mb"] = values["export_mb"]
        if "dlc" in row["ms"]:
            row["load_call_seconds"] = _load_and_call(workdir)
        outputs = {r: np.load(os.path.join(workdir, f"{r}.npy"))
                   for r in runtimes if os.path.exists(os.path.join(workdir, f"{r}.npy"))}
    reference = outputs.get("torch")
    if reference is not None:
        scale = float(np.abs(reference).max()) or 1.0
        for runtime_name, output in outputs.items():
            if runtime_name != "torch":
                error = float(np.abs(output - reference).max()) / scale
                row["max_rel_error"][runtime_name] = error
                if error > 1e-4:
                    raise RuntimeError(f"{name} b{batch}: {runtime_name} differs from "
                                       f"PyTorch by {error:.2e}")
    if "dlc" in row["ms"]:
        row["ratio"] = {r: row["ms"][r] / row["ms"]["dlc"] for r in row["ms"] if r != "dlc"}
    return row


_LOAD_AND_CALL = """
import sys, time
import numpy as np
start = time.perf_counter()
import dlcrt
library = dlcrt.load(sys.argv[1] + "/model.so")
y = library(np.load(sys.argv[1] + "/x.npy"))
seconds = time.perf_counter() - start
want = np.load(sys.argv[1] + "/dlc.npy")
if not np.array_equal(y, want):
    sys.exit("the exported library's output differs from the JIT's")
print(seconds)
"""


def _load_and_call(workdir):
    """Seconds to import dlcrt, load the exported model and run it once, in
    a fresh process (numpy already imported), or None where that failed."""
    process = subprocess.run([sys.executable, "-c", _LOAD_AND_CALL, workdir],
                             capture_output=True, text=True)
    if process.returncode != 0:
        return None
    return float(process.stdout.strip().splitlines()[-1])


def run_models(options, progress=None):
    rows = []
    for name in options.models_list:
        for batch in options.model_batches:
            rows.append(run_model(name, batch, options))
            if progress is not None:
                progress.step(f"{name} b{batch}")
    return rows


def print_models_table(rows):
    mode = rows[0]["mode"] if rows else "solo"
    print(f"\nmodels ({mode}: " + ("each runtime in its own process" if mode == "solo"
                                  else "all runtimes in one process, interleaved")
          + "; medians)")
    print(f"{'model':<26}{'b':>3}{'dlc ms':>10}{'ort ms':>10}{'torch ms':>10}"
          f"{'x ort':>8}{'x torch':>9}{'compile s':>11}{'cached s':>10}{'err':>10}"
          f"{'.so MB':>8}{'load s':>8}")
    for row in rows:
        ms, ratio = row["ms"], row.get("ratio", {})

        def cell(value, width, fmt):
            return f"{value:{fmt}}".rjust(width) if value is not None else "-".rjust(width)
        print(f"{MODELS[row['model']][2]:<26}{row['batch']:>3}"
              f"{cell(ms.get('dlc'), 10, '.2f')}{cell(ms.get('onnxruntime'), 10, '.2f')}"
              f"{cell(ms.get('torch'), 10, '.2f')}"
              f"{cell(ratio.get('onnxruntime'), 8, '.2f')}{cell(ratio.get('torch'), 9, '.2f')}"
              f"{cell(row['prepare_seconds'].get('dlc'), 11, '.1f')}"
              f"{cell(row.get('cached_seconds'), 10, '.2f')}"
              f"{cell(row['max_rel_error'].get('dlc'), 10, '.1e')}"
              f"{cell(row.get('export_mb'), 8, '.1f')}"
              f"{cell(row.get('load_call_seconds'), 8, '.3f')}")
        for group, why in row.get("failed", {}).items():
            print(f"  {group} failed: {' '.join(why)}")
    print("x peer = peer time / dlc time (above 1: dlc is faster); compile s: dlc's "
          "cold compile;\ncached s: the same compile again from dlc's disk cache "
          "(trace + load); err: dlc's\nlargest difference from PyTorch over the "
          "largest magnitude; .so MB: the model exported by dlc.export\n(weights "
          "included); load s: in a fresh process, import dlcrt, load it and run it "
          "once")


def _main(argv):
    if len(argv) != 8 or argv[0] != "--worker":
        sys.exit("usage: python -m dlc.bench_models --worker NAME BATCH RUNTIMES "
                 "THREADS ROUNDS BLOCK_SECONDS WORKDIR (see python -m dlc.bench --models)")
    _, name, batch, runtimes, threads, rounds, block_seconds, workdir = argv
    facts = worker(name, int(batch), runtimes.split(","), int(threads), int(rounds),
                   float(block_seconds), workdir)
    print(json.dumps(facts))


if __name__ == "__main__":
    _main(sys.argv[1:])
