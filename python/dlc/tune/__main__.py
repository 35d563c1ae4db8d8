"""``python -m dlc.tune``: tune a model file or a Python function.

    python -m dlc.tune model.onnx --records model.tune.jsonl --trials 200
    python -m dlc.tune model.mlir --records r.jsonl --seconds 600
    python -m dlc.tune mypkg.models:mlp --input 64x784 --records r.jsonl --trials 50
    python -m dlc.tune model.onnx --records r.jsonl --trials 400 --scheduler tcp://A:8786
    python -m dlc.tune --show r.jsonl        # what the records hold, per target
    python -m dlc.tune --resource            # this machine's Dask measuring resource

A model is an ONNX file (its inputs' static shapes, random values), a
``dl`` module (``.mlir``: its function's argument types), or
``module:function`` / ``file.py:function`` with ``--input SHAPE[:DTYPE]``
per argument (``1x3x224x224``, ``8x128:int64``).
"""

import argparse
import importlib
import importlib.util
import sys

import numpy as np


def _input(text):
    shape, _, dtype = text.partition(":")
    try:
        dims = tuple(int(d) for d in shape.lower().split("x") if d)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--input {text!r}: a shape like 1x3x224x224 "
                                         f"with an optional :dtype") from None
    try:
        return dims, np.dtype(dtype or "float32")
    except TypeError:
        raise argparse.ArgumentTypeError(f"--input {text!r}: unknown dtype {dtype!r}") from None


def _example(shape, dtype, rng):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 4, shape).astype(dtype)


def _model(args):
    """(function, example arguments) of the command line's model."""
    rng = np.random.default_rng(0)
    path = args.model
    if path.endswith(".onnx"):
        import onnx

        import dlc
        model = onnx.load(path)
        initializers = {i.name for i in model.graph.initializer}
        examples = []
        for value in model.graph.input:
            if value.name in initializers:
                continue
            tensor = value.type.tensor_type
            dims = [d.dim_value if d.HasField("dim_value") else 0 for d in tensor.shape.dim]
            if any(d <= 0 for d in dims):
                sys.exit(f"dlc.tune: {path}: input {value.name!r} has a dynamic shape; "
                         f"tune an ONNX model with static input shapes")
            dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
            examples.append(_example(dims, dtype, rng))
        return dlc.from_onnx(model), examples
    if path.endswith(".mlir"):
        from ..aot import lower_file
        lowered = lower_file(path, args.function)
        return lowered, []
    module_name, _, function = path.rpartition(":")
    if not module_name or not function:
        sys.exit(f"dlc.tune: {path!r} is not a .onnx or .mlir file nor module:function")
    if module_name.endswith(".py"):
        spec = importlib.util.spec_from_file_location("_dlc_tuned", module_name)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    fn = getattr(module, function)
    if not args.input:
        sys.exit("dlc.tune: give the function's argument shapes with --input SHAPE[:DTYPE]")
    return fn, [_example(shape, dtype, rng) for shape, dtype in args.input]


def _show(path):
    from . import records as R
    lines = R.read_lines(path)
    if not lines:
        print(f"{path}: no records")
        return
    by_target = {}
    for r in lines:
        by_target.setdefault((r.get("target_cpu", "?"), r["target"], r.get("dlc"),
                              r.get("format")), []).append(r)
    for (cpu, key, version, fmt), group in by_target.items():
        usable = "applied" if fmt == R.FORMAT and version == R.__version__ else \
            "NOT applied by this dlc"
        trials = sum(1 for r in group if r.get("kind") == "trial")
        best = {}
        for r in group:
            if r.get("kind") == "best":
                best[r["workload"]] = r
        print(f"target {cpu} ({key}), dlc {version}, format {fmt} ({usable}): "
              f"{trials} trial(s), {len(best)} task(s)")
        for r in best.values():
            mark = "tuned" if r.get("improved") else "heuristic kept"
            print(f"  {r['workload']} {r['heuristic_seconds'] * 1e3:9.3f} -> "
                  f"{r['seconds'] * 1e3:9.3f} ms {mark}: {r['strategy']}  "
                  f"[{r.get('signature', '')[:90]}]")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dlc.tune", description=__doc__.split("\n")[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", nargs="?", help="model.onnx, model.mlir or module:function")
    parser.add_argument("--records", help="the JSON-lines records file (appended to)")
    parser.add_argument("--trials", type=int, help="measurements in all")
    parser.add_argument("--seconds", type=float, help="seconds of search")
    parser.add_argument("--input", type=_input, action="append",
                        help="SHAPE[:DTYPE] of each argument of a Python function")
    parser.add_argument("--function", help="the function of a .mlir module")
    parser.add_argument("--max-tasks", type=int, help="tune only the N most expensive tasks")
    parser.add_argument("--scheduler", help="a Dask scheduler address: measure on its workers")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", metavar="RECORDS", help="print what a records file holds")
    parser.add_argument("--resource", action="store_true",
                        help="print this machine's Dask measuring resource name")
    args = parser.parse_args(argv)
    if args.resource:
        from .distributed import measure_resource
        print(measure_resource())
        return 0
    if args.show:
        _show(args.show)
        return 0
    if not args.model or not args.records or (args.trials is None and args.seconds is None):
        parser.error("give a model, --records and --trials or --seconds")
    from . import tune
    fn, examples = _model(args)
    executor = None
    if args.scheduler:
        from dask.distributed import Client
        executor = Client(args.scheduler)
    summary = tune(fn, *examples, records=args.records, trials=args.trials,
                   seconds=args.seconds, executor=executor, seed=args.seed,
                   max_tasks=args.max_tasks)
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
