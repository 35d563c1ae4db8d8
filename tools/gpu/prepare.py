"""Prepares the GPU device check: everything a CUDA machine needs to check and
time dlc's kernels, exported here, where dlc's compiler is.

    .venv/bin/python tools/gpu/prepare.py            # writes gpu-check/ (ignored by git)
    tools/gpu/run_on_device.sh gpu-check OUT          # there, with python3 + torch

The GPU machine gets only a working tree (no LLVM, no compiler), so every
function is exported with ``dlc.export(..., target="cuda")``: a library with
the kernels as a fatbin (a cubin for the chip plus PTX) that :mod:`dlcrt`
loads with ctypes and numpy alone. The bundle (a manifest and the libraries,
under 60 MiB) holds four sections:

- ``ops``: every op case of the GPU test registry (test_gpu.gpu_cases: each op
  of the operator table at its first and last shapes) with its inputs and
  numpy's expected results and the CPU tests' tolerances (ops.npz);
- ``matmul``: a sweep of n x n x n products, n = 512 ... 8192, float32,
  float16 and bfloat16, tensor cores on and off (16-bit types);
- ``conv``: the ResNet-18 convolution layers, float32 and float16, with a
  dynamic batch (run at 1 and 8);
- ``models``: ResNet-18 and a BERT-base layer (dlc.models) with their
  parameters as inputs and a dynamic batch, so that the device builds the
  same networks in PyTorch (dlc.torch_models), hands their weights to both,
  and checks one against the other; the same with the image size or the
  sequence length dynamic too (one library, run at three shapes); and a small MLP with its weights as
  constants, which must cross the bus once, not at every call.

Inputs of the sweeps and models are drawn on the device: only the op cases
carry theirs. ``--sample`` builds one entry of each section (what make test
checks); ``--sections`` chooses sections.
"""

import argparse
import json
import os
import shutil
import sys
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))

SECTIONS = ("ops", "matmul", "conv", "models")
MATMUL_SIZES = (512, 1024, 2048, 4096, 8192)
#: the bundle must travel to the device machine with the working tree
LIMIT_BYTES = 60 << 20


def _dtype_name(dtype):
    return "bfloat16" if "bfloat16" in str(np.dtype(dtype)) else str(np.dtype(dtype))


def _storable(array):
    """(array numpy can save without ml_dtypes, dtype name): bfloat16 as its
    16 bits."""
    array = np.asarray(array)
    name = _dtype_name(array.dtype)
    return (array.view(np.uint16) if name == "bfloat16" else array), name


def _export(out, entry, fn, args, options):
    """Exports `fn` for `args` into out/<entry library>; records the failure
    instead where dlc cannot compile it (the device check reports it)."""
    from dlc.export import export
    path = os.path.join(out, entry["library"])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            export(fn, *args, path=path, name="f", target="cuda", **options)
        entry["warnings"] = [str(w.message) for w in caught]
        os.remove(os.path.splitext(path)[0] + ".h")  # the device needs the library alone
        if entry.get("compress"):
            import lzma
            with open(path, "rb") as source, lzma.open(path + ".xz", "wb", preset=6) as target:
                target.write(source.read())
            os.remove(path)
            entry["library"] += ".xz"
            path += ".xz"
        entry["bytes"] = os.path.getsize(path)
    except Exception as error:  # reported, not fatal: the rest still runs
        entry["export_error"] = f"{type(error).__name__}: {str(error)[:2000]}"
        entry.pop("library")
    entry["export_seconds"] = round(time.perf_counter() - start, 2)


# -- sections -------------------------------------------------------------------


# Each section yields (entry, function, example arguments, export options).


def op_entries(sample, data):
    """Every case of the GPU test registry, its inputs and expected results
    (float64 references, the CPU tests' tolerances) into `data`."""
    from conftest import TOLERANCES
    from test_gpu import gpu_cases, gpu_inputs
    from test_ops_table import reference_of
    rng = np.random.default_rng(2026)
    cases = list(gpu_cases())
    for index, (case, shapes, name) in enumerate(cases[:1] if sample else cases):
        dtype = case.dtypes[0]
        inputs = gpu_inputs(case, shapes, dtype, rng)
        expected = reference_of(case, inputs)
        several = isinstance(expected, (list, tuple))
        expected = list(expected) if several else [expected]
        key = f"op{index}"
        entry = {"section": "ops", "name": name, "key": key, "library": f"ops/{key}.so",
                 "inputs": [], "outputs": [], "single_output": not several}
        for i, array in enumerate(inputs):
            stored, dtype_name = _storable(array)
            data[f"{key}_in{i}"] = stored
            entry["inputs"].append({"dtype": dtype_name, "shape": list(array.shape)})
        result_dtype = np.dtype(case.result_dtype or dtype)
        for i, value in enumerate(expected):
            value = np.asarray(value)
            data[f"{key}_out{i}"], stored = _storable(value)
            rtol, atol = TOLERANCES.get(result_dtype, (0.0, 0.0))
            extra = case.magnitude_tolerance * float(np.max(np.abs(value))) if value.size else 0.0
            entry["outputs"].append({"dtype": _dtype_name(result_dtype), "stored": stored,
                                     "shape": list(value.shape),
                                     "rtol": rtol, "atol": atol + extra,
                                     "exact": result_dtype not in TOLERANCES})
        yield entry, case.fn, inputs, {}


def matmul_entries(sample):
    import ml_dtypes
    dtypes = (np.float32, np.float16, ml_dtypes.bfloat16)
    sizes = MATMUL_SIZES[:1] if sample else MATMUL_SIZES
    for n in sizes:
        for dtype in dtypes[:1] if sample else dtypes:
            name = _dtype_name(dtype)
            # float32 has no tensor-core path yet (TF32 is not implemented).
            for tensor_cores in ((False,) if name == "float32" else (True, False)):
                tag = f"{name}_{n}_{'tc' if tensor_cores else 'simt'}"
                entry = {"section": "matmul", "name": f"matmul {n} {name}"
                         f"{' tensor cores' if tensor_cores else ''}",
                         "library": f"matmul/{tag}.so", "n": n, "dtype": name,
                         "tensor_cores": tensor_cores, "flops": 2 * n ** 3}
                example = np.zeros((n, n), dtype)
                yield (entry, lambda a, b: a @ b, (example, example),
                       {"tensor_cores": tensor_cores})


def conv_entries(sample):
    from dlc import ops
    from dlc.bench import RESNET18_LAYERS
    layers = RESNET18_LAYERS[:1] if sample else RESNET18_LAYERS
    for name, cin, cout, size, k, stride in layers:
        for dtype in (np.float32,) if sample else (np.float32, np.float16):
            dtype_name = _dtype_name(dtype)
            padding = k // 2
            tag = f"{name.split()[0]}_{dtype_name}"
            entry = {"section": "conv", "name": f"{name} {dtype_name}",
                     "library": f"conv/{tag}.so", "dtype": dtype_name,
                     "cin": cin, "cout": cout, "size": size, "kernel": k,
                     "stride": stride, "padding": padding, "batches": [1, 8]}
            x = np.zeros((1, cin, size, size), dtype)
            w = np.zeros((cout, cin, k, k), dtype)

            def conv(x, w, stride=stride, padding=padding):
                return ops.conv2d(x, w, stride=stride, padding=padding)
            yield entry, conv, (x, w), {"dynamic_batch": (0,)}


def _parameters_as_inputs(model):
    """(function of x and every parameter and buffer, their names): the
    network with its weights as arguments, so that one library serves any
    weights (those the device draws for both dlc and PyTorch)."""
    from dlc import nn
    parameters, buffers = list(model.named_parameters()), list(model.named_buffers())

    def forward(x, *values):
        output, _ = nn.functional_call(model, dict(zip(parameters, values)), x,
                                       buffers=dict(zip(buffers, values[len(parameters):])))
        return output
    return forward, parameters + buffers


def model_entries(out, sample):
    from dlc import models, nn
    networks = [("resnet18", "ResNet-18 224x224", lambda: models.resnet18(rng=0),
                 (3, 224, 224)),
                ("bert_layer", "BERT-base layer seq 128", lambda: models.BertLayer(rng=0),
                 (128, 768))]
    for key, title, build, shape in networks[1:] if sample else networks:
        model = build().eval()
        forward, names = _parameters_as_inputs(model)
        by_name = dict(model.state_dict())
        values = [np.asarray(by_name[n]) for n in names]
        entry = {"section": "models", "name": title, "key": key,
                 "library": f"models/{key}.so", "input_shape": list(shape),
                 "parameters": [{"name": n, "shape": list(v.shape), "dtype": str(v.dtype)}
                                for n, v in zip(names, values)],
                 "batches": [1, 8]}
        x = np.zeros((1,) + shape, np.float32)
        yield entry, forward, (x, *values), {"dynamic_batch": (0,)}

    # One library for every image size / sequence length (dynamic dimensions
    # beyond the batch): run at several shapes against the same PyTorch net.
    dynamic_shapes = {"resnet18": ([[1, 3, 224, 224], [2, 3, 160, 256], [1, 3, 97, 131]],
                                   (0, 2, 3), "any image size"),
                      "bert_layer": ([[1, 128, 768], [2, 77, 768], [1, 384, 768]],
                                     (0, 1), "any sequence length")}
    for key, title, build, shape in [] if sample else networks:
        shapes, axes, what = dynamic_shapes[key]
        model = build().eval()
        forward, names = _parameters_as_inputs(model)
        by_name = dict(model.state_dict())
        values = [np.asarray(by_name[n]) for n in names]
        entry = {"section": "models", "name": f"{title.split(' seq')[0].split(' 224')[0]}, "
                                              f"{what}",
                 "key": f"{key}_dynamic", "network": key, "parameters_as_inputs": True,
                 "library": f"models/{key}_dynamic.so", "input_shapes": shapes,
                 "parameters": [{"name": n, "shape": list(v.shape), "dtype": str(v.dtype)}
                                for n, v in zip(names, values)]}
        x = np.zeros(shapes[0], np.float32)
        yield entry, forward, (x, *values), {"dynamic": {0: axes}}

    # The same networks as a deployment has them: weights as constants of
    # the library (batch norms folded into the convolutions), uploaded by
    # the first call only. Their weights are device_check.seeded_weight's
    # (few distinct values), which the device draws again for PyTorch; the
    # library is stored compressed (xz), a fifth of its size.
    from device_check import seeded_weight
    for key, title, build, shape in [] if sample else networks:
        model = build().eval()
        model.load_state_dict({name: seeded_weight(name, value.shape)
                               for name, value in model.state_dict().items()})
        entry = {"section": "models", "name": f"{title}, weights as constants",
                 "key": f"{key}_constants", "network": key,
                 "library": f"models/{key}_constants.so", "input_shape": list(shape),
                 "batches": [1, 8], "compress": True}
        yield entry, model, (np.zeros((1,) + shape, np.float32),), {"dynamic_batch": (0,)}

    # Weights as constants of the library: uploaded at the first call only.
    rng = np.random.default_rng(7)
    mlp = nn.Sequential(nn.Linear(256, 1024, rng=rng), nn.ReLU(), nn.Linear(1024, 256, rng=rng))
    weights = {name: np.asarray(v) for name, v in mlp.state_dict().items()}
    entry = {"section": "models", "name": "MLP 256-1024-256, weights as constants",
             "key": "mlp_constants", "library": "models/mlp_constants.so",
             "input_shape": [256], "batches": [1, 64], "weights_file": "mlp_constants.npz",
             "weight_names": list(weights),
             "constant_bytes": sum(v.nbytes for v in weights.values())}
    np.savez(os.path.join(out, "mlp_constants.npz"), **weights)
    yield entry, mlp, (np.zeros((1, 256), np.float32),), {"dynamic_batch": (0,)}


# -- main -----------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tools/gpu/prepare.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(ROOT, "gpu-check"),
                        help="the bundle's folder (replaced; default: gpu-check/)")
    parser.add_argument("--chip", default="sm_90", help="the GPU to compile for")
    parser.add_argument("--sections", nargs="*", default=list(SECTIONS), choices=SECTIONS)
    parser.add_argument("--sample", action="store_true",
                        help="one entry per section (a check of the machinery)")
    options = parser.parse_args(argv)

    import dlc
    from dlc.bench import Progress
    out = os.path.abspath(options.out)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    data = {}
    makers = {"ops": lambda: op_entries(options.sample, data),
              "matmul": lambda: matmul_entries(options.sample),
              "conv": lambda: conv_entries(options.sample),
              "models": lambda: model_entries(out, options.sample)}
    start = time.perf_counter()
    jobs = [job for section in options.sections for job in makers[section]()]
    progress = Progress(len(jobs))
    entries = []
    for entry, fn, args, export_options in jobs:
        _export(out, entry, fn, args, dict(export_options, chip=options.chip))
        entries.append(entry)
        progress.step(f"{entry['section']}: {entry['name']}"
                      + (" (not exported)" if "export_error" in entry else ""))
    if data:
        np.savez_compressed(os.path.join(out, "ops.npz"), **data)
    total = sum(os.path.getsize(os.path.join(folder, f))
                for folder, _, files in os.walk(out) for f in files)
    manifest = {"dlc": dlc.__version__, "chip": options.chip,
                "created": time.strftime("%Y-%m-%d %H:%M:%S"),
                "prepare_seconds": round(time.perf_counter() - start, 1),
                "bytes": total, "entries": entries}
    with open(os.path.join(out, "manifest.json"), "w") as stream:
        json.dump(manifest, stream, indent=1)
    failed = [e for e in entries if "export_error" in e]
    print(f"{len(entries)} entries, {len(failed)} not exported, {total / 2**20:.1f} MiB in {out}")
    for entry in failed:
        print(f"  not exported: {entry['section']}: {entry['name']}: "
              f"{entry['export_error'].splitlines()[0]}")
    if total > LIMIT_BYTES:
        sys.exit(f"the bundle is {total / 2**20:.1f} MiB: over the "
                 f"{LIMIT_BYTES >> 20} MiB a device machine takes")
    return manifest


if __name__ == "__main__":
    main()
