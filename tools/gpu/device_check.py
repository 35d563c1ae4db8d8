"""The GPU device check, run where the GPU is (python3 with numpy and a CUDA
build of PyTorch; dlc's compiler is not needed): see run_on_device.sh.

Reads the bundle tools/gpu/prepare.py wrote and, within a time budget:

- ops: calls every op case's library with its inputs, on the host path
  (numpy in and out) and the device path (torch.cuda tensors in, DLPack
  results out), and compares both with numpy's expected results at the CPU
  tests' tolerances;
- matmul, conv: draws inputs on the GPU, checks dlc's result against a
  float64 product (the relative Frobenius error) twice, on fresh inputs
  before and after timing (an element a kernel leaves unwritten keeps the
  last result and fails the second check), and times dlc against PyTorch
  (cuBLAS with TF32 off; cuDNN with TF32 off, benchmark mode) with CUDA
  events: medians of 5 blocks of calls;
- models: builds ResNet-18 and the BERT-base layer in PyTorch
  (python/dlc/torch_models.py), hands the same weights to dlc, checks dlc's
  output against PyTorch's and times both, eager and torch.compile, at
  batch 1 and 8; the MLP whose weights are constants of its library.

Every number is a dlc call as a user makes it: arguments already on the GPU,
the call returning when its kernels are done. Writes results.json and
results.md into --out; prints the table.

``--dry-run`` (no GPU: the stand-in driver of the tests, DLC_LIBCUDA) loads
each library and calls it on host arrays, checking the plumbing only.
"""

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
try:
    import dlcrt
except ImportError:  # the GPU machine: dlcrt from the tree (ctypes and numpy only)
    sys.path.append(os.path.join(ROOT, "python"))
    import dlcrt

torch = None


class Budget:
    """The time left; sections skip what does not fit (and say so)."""

    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()


# -- helpers --------------------------------------------------------------------


def facts():
    """The machine: GPU, driver, PyTorch, CUDA."""
    found = {"python": platform.python_version(), "machine": platform.node(),
             "numpy": np.__version__, "date": time.strftime("%Y-%m-%d %H:%M:%S UTC",
                                                           time.gmtime())}
    try:
        query = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
             "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        found["nvidia_smi"] = query.stdout.strip() or query.stderr.strip()
    except (OSError, subprocess.TimeoutExpired) as error:
        found["nvidia_smi"] = f"unavailable: {error}"
    if torch is not None:
        found["torch"] = torch.__version__
        found["torch_cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            properties = torch.cuda.get_device_properties(0)
            found.update(gpu=properties.name,
                         capability=f"sm_{properties.major}{properties.minor}",
                         multiprocessors=properties.multi_processor_count,
                         memory_gib=round(properties.total_memory / 2 ** 30, 1))
    return found


def dtype_of(name):
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def torch_dtype(name):
    return {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
            "bfloat16": torch.bfloat16, "int8": torch.int8, "int16": torch.int16,
            "int32": torch.int32, "int64": torch.int64, "bool": torch.bool}[name]


def to_torch(array, name):
    """A torch CUDA tensor holding `array` (bfloat16: its 16 bits)."""
    # A C-ordered copy (np.ascontiguousarray would make a 0-d array 1-d).
    copy = np.array(array, copy=True, order="C")
    if name == "bfloat16":
        return torch.from_numpy(copy.view(np.int16)).view(torch.bfloat16).cuda()
    return torch.from_numpy(copy).cuda()


def from_torch(tensor):
    """numpy (float64 for 16-bit floats) of a torch tensor."""
    tensor = tensor.detach().cpu()
    if tensor.dtype in (torch.bfloat16, torch.float16):
        tensor = tensor.double()
    return tensor.numpy()


def wide(array):
    """float64 of any float array (bfloat16 through float32)."""
    array = np.asarray(array)
    if array.dtype.kind == "f" or "bfloat16" in str(array.dtype):
        return array.astype(np.float32).astype(np.float64)
    return array


def compare(actual, expected, spec):
    """None if `actual` matches `expected` within the spec's tolerances
    (numpy.testing.assert_allclose's rule, NaNs equal), else why not."""
    actual = np.asarray(actual)
    if tuple(actual.shape) != tuple(expected.shape):
        return f"shape {tuple(actual.shape)}, expected {tuple(expected.shape)}"
    if spec["exact"]:
        want = expected.astype(actual.dtype) if actual.dtype != np.bool_ else expected != 0
        if not np.array_equal(actual, want):
            bad = int(np.sum(actual != want))
            return f"{bad} of {actual.size} elements differ"
        return None
    a, e = wide(actual), wide(expected)
    close = np.isclose(a, e, rtol=spec["rtol"], atol=spec["atol"], equal_nan=True)
    if not close.all():
        worst = float(np.nanmax(np.abs(a - e))) if a.size else 0.0
        return (f"{int((~close).sum())} of {a.size} elements outside rtol {spec['rtol']:g} "
                f"atol {spec['atol']:g} (largest difference {worst:.3g})")
    return None


def median_ms(fn, budget_seconds, cuda):
    """Median time of one call of `fn` (ms): 5 blocks of calls between CUDA
    events (wall clock without CUDA), after a warm-up, sized to take about
    `budget_seconds` in all."""
    fn()
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    if cuda:
        torch.cuda.synchronize()
    once = max(time.perf_counter() - start, 1e-6)
    calls = int(min(max(budget_seconds / 5 / once, 1), 200))
    blocks = []
    for _ in range(5):
        if cuda:
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            for _ in range(calls):
                fn()
            end.record()
            end.synchronize()
            blocks.append(begin.elapsed_time(end) / calls)
        else:
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            blocks.append((time.perf_counter() - start) * 1e3 / calls)
    return statistics.median(blocks)


def kernel_profile(fn, calls=3):
    """The GPU work of one call of `fn`: its kernels (and copies) by name,
    with their count and milliseconds per call, most costly first, and their
    sum. torch.profiler's CUDA activity (CUPTI) records every kernel of the
    process, dlc's too."""
    from torch.profiler import ProfilerActivity, profile
    try:
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as recorded:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
    except Exception as error:  # a diagnosis, not a result: never fatal
        return {"gpu_ms": float("nan"), "kernels": [], "error": str(error)[:300]}
    kernels = []
    for event in recorded.key_averages():
        total = getattr(event, "device_time_total", None)
        if total is None:
            total = getattr(event, "cuda_time_total", 0)
        if total > 0:
            kernels.append({"name": event.key[:90], "count": event.count / calls,
                            "ms": total / calls / 1e3})
    kernels.sort(key=lambda k: -k["ms"])
    return {"gpu_ms": sum(k["ms"] for k in kernels), "kernels": kernels[:12]}


def relative_error(result, reference):
    """‖result − reference‖ / ‖reference‖ in float64 (torch tensors)."""
    difference = (result.double() - reference.double()).norm().item()
    scale = reference.double().norm().item() or 1.0
    return difference / scale


def device_result(value):
    """A torch tensor of a dlc DeviceArray (DLPack: no copy)."""
    return torch.from_dlpack(value)


# -- sections -------------------------------------------------------------------


def run_op(entry, bundle, data, cuda, dry_run):
    library = dlcrt.load(os.path.join(bundle, entry["library"]))
    inputs = []
    for i, spec in enumerate(entry["inputs"]):
        stored = data[f"{entry['key']}_in{i}"]
        inputs.append(stored.view(dtype_of(spec["dtype"])) if spec["dtype"] == "bfloat16"
                      else stored)
    expected = []
    for i, spec in enumerate(entry["outputs"]):
        stored = data[f"{entry['key']}_out{i}"]
        expected.append(stored.view(dtype_of("bfloat16")) if spec.get("stored") == "bfloat16"
                        else stored)
    row = {}
    results = library(*inputs)
    results = [results] if entry["single_output"] else list(results)
    if dry_run:
        row["host"] = "called (dry run: not checked)"
        return row
    problems = [compare(r, e, spec) for r, e, spec in zip(results, expected, entry["outputs"])]
    row["host"] = "; ".join(p for p in problems if p) or "ok"
    if cuda:
        device_inputs = [to_torch(a, spec["dtype"]) for a, spec in zip(inputs, entry["inputs"])]
        if device_inputs:
            outs = library(*device_inputs)
            outs = [outs] if entry["single_output"] else list(outs)
            host = []
            for out, spec in zip(outs, entry["outputs"]):
                if out.size == 0:  # nothing to hand over (a NULL buffer)
                    host.append(np.zeros(out.shape, dtype_of(spec["dtype"])))
                    continue
                tensor = device_result(out)
                array = tensor.cpu().numpy() if tensor.dtype not in (
                    torch.bfloat16, torch.float16) else from_torch(tensor)
                host.append(array)
            problems = [compare(r, e, spec)
                        for r, e, spec in zip(host, expected, entry["outputs"])]
            row["device"] = "; ".join(p for p in problems if p) or "ok"
        else:
            row["device"] = "no inputs"
    return row


MATMUL_TOLERANCE = {"float32": 1e-4, "float16": 2e-3, "bfloat16": 1e-2}


def run_matmul(entry, bundle, cuda, dry_run, budget):
    library = dlcrt.load(os.path.join(bundle, entry["library"]))
    n, name = entry["n"], entry["dtype"]
    if not cuda:
        a = np.zeros((n, n), dtype_of(name))
        library(a, a)
        return {"check": "called (dry run: not checked)"}
    dtype = torch_dtype(name)

    def draw():
        return (torch.randn(n, n, device="cuda", dtype=dtype),
                torch.randn(n, n, device="cuda", dtype=dtype))

    row = {}
    for label in ("error_before", "error_after"):
        a, b = draw()
        row[label] = relative_error(device_result(library(a, b)), a.double() @ b.double())
        if label == "error_before":
            seconds = min(1.0, max(budget.left() / 60, 0.2))
            row["dlc_ms"] = median_ms(library.f.prepare(a, b), seconds, cuda)
            row["torch_ms"] = median_ms(lambda: torch.matmul(a, b), seconds, cuda)
            if n == 4096:
                row["profile"] = {"dlc": kernel_profile(library.f.prepare(a, b)),
                                  "torch": kernel_profile(lambda: torch.matmul(a, b))}
    row["ok"] = max(row["error_before"], row["error_after"]) <= MATMUL_TOLERANCE[name]
    row["dlc_tflops"] = entry["flops"] / row["dlc_ms"] / 1e9
    row["torch_tflops"] = entry["flops"] / row["torch_ms"] / 1e9
    row["dlc_over_torch"] = row["torch_ms"] / row["dlc_ms"]
    return row


def run_conv(entry, bundle, cuda, dry_run, budget):
    library = dlcrt.load(os.path.join(bundle, entry["library"]))
    shape_x = lambda b: (b, entry["cin"], entry["size"], entry["size"])  # noqa: E731
    shape_w = (entry["cout"], entry["cin"], entry["kernel"], entry["kernel"])
    if not cuda:
        dtype = dtype_of(entry["dtype"])
        library(np.zeros(shape_x(1), dtype), np.zeros(shape_w, dtype))
        return {"check": "called (dry run: not checked)"}
    dtype = torch_dtype(entry["dtype"])
    conv = torch.nn.functional.conv2d
    stride, padding = entry["stride"], entry["padding"]
    out_size = (entry["size"] + 2 * padding - entry["kernel"]) // stride + 1
    row = {}
    for batch in entry["batches"]:
        flops = 2 * batch * entry["cout"] * entry["cin"] * entry["kernel"] ** 2 * out_size ** 2
        cell = {}
        for label in ("error_before", "error_after"):
            x = torch.randn(shape_x(batch), device="cuda", dtype=dtype)
            w = torch.randn(shape_w, device="cuda", dtype=dtype) / (shape_w[1] * shape_w[2] ** 2) ** 0.5
            reference = conv(x.double(), w.double(), stride=stride, padding=padding)
            cell[label] = relative_error(device_result(library(x, w)), reference)
            if label == "error_before":
                seconds = min(1.0, max(budget.left() / 60, 0.2))
                cell["dlc_ms"] = median_ms(library.f.prepare(x, w), seconds, cuda)
                cell["torch_ms"] = median_ms(
                    lambda: conv(x, w, stride=stride, padding=padding), seconds, cuda)
                if batch == entry["batches"][-1]:
                    cell["profile"] = {"dlc": kernel_profile(library.f.prepare(x, w)),
                                       "torch": kernel_profile(lambda: conv(
                                           x, w, stride=stride, padding=padding))}
        cell["ok"] = max(cell["error_before"], cell["error_after"]) <= \
            MATMUL_TOLERANCE[entry["dtype"]]
        cell["dlc_tflops"] = flops / cell["dlc_ms"] / 1e9
        cell["torch_tflops"] = flops / cell["torch_ms"] / 1e9
        cell["dlc_over_torch"] = cell["torch_ms"] / cell["dlc_ms"]
        row[f"b{batch}"] = cell
    return row


#: levels of the models' seeded weights: few enough for the libraries that
#: hold them as constants to compress well (5 bits a weight), enough for a
#: numerical check to mean something
WEIGHT_LEVELS = 32


def seeded_weight(name, shape, seed=0):
    """The weight `name` of `shape` as both sides of the check draw it: one
    of WEIGHT_LEVELS values spread over its range (convolutions and linear
    layers +-1/sqrt(fan in); normalizations' scales 0.5..1.5, shifts and
    means -0.2..0.2, variances 0.5..2), from PCG64's raw bits (the same on
    every machine and numpy version) seeded by the name."""
    import zlib
    shape = tuple(shape)
    if len(shape) >= 2:
        bound = 1.0 / float(np.sqrt(np.prod(shape[1:])))
        low, high = -bound, bound
    elif name.endswith("running_var"):
        low, high = 0.5, 2.0
    elif name.endswith("weight"):
        low, high = 0.5, 1.5
    else:
        low, high = -0.2, 0.2
    count = int(np.prod(shape, dtype=np.int64))
    bits = np.random.PCG64(zlib.crc32(name.encode()) + seed).random_raw(count)
    level = (bits >> np.uint64(64 - 5)).astype(np.float64)
    values = low + (high - low) * (level + 0.5) / WEIGHT_LEVELS
    return values.astype(np.float32).reshape(shape)


def _torch_models():
    """python/dlc/torch_models.py, loaded by path (it needs torch alone)."""
    path = os.path.join(ROOT, "python", "dlc", "torch_models.py")
    spec = importlib.util.spec_from_file_location("dlc_torch_models", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _network(key, device="cuda", seeded=False):
    """The PyTorch network of a bundle model, with random weights and
    non-trivial normalization statistics (`seeded`: those of seeded_weight,
    which the library holding them as constants has too), on `device`, in
    inference mode."""
    models = _torch_models()
    torch.manual_seed(0)
    if key == "resnet18":
        net = models.ResNet18(1000)
    else:
        net = models.BertLayer(768, 12, 3072, 1e-12)
    generator = torch.Generator().manual_seed(1)
    for module in net.modules():
        if isinstance(module, (torch.nn.BatchNorm2d, torch.nn.LayerNorm)):
            n = module.weight.shape[0]
            with torch.no_grad():
                module.weight.uniform_(0.5, 1.5, generator=generator)
                module.bias.uniform_(-0.2, 0.2, generator=generator)
                if isinstance(module, torch.nn.BatchNorm2d):
                    module.running_mean.copy_(torch.empty(n).uniform_(-0.2, 0.2,
                                                                      generator=generator))
                    module.running_var.copy_(torch.empty(n).uniform_(0.5, 2.0,
                                                                     generator=generator))
    if seeded:
        state = {name: torch.from_numpy(seeded_weight(name, tuple(value.shape)))
                 for name, value in net.state_dict().items()
                 if not name.endswith("num_batches_tracked")}
        net.load_state_dict(state, strict=False)
    return net.to(device).eval()


def _load(bundle, entry):
    """The entry's library; one stored compressed (.xz: a model with its
    weights as constants) is unpacked into a temporary folder first."""
    path = os.path.join(bundle, entry["library"])
    if path.endswith(".xz"):
        import lzma
        import tempfile
        folder = tempfile.mkdtemp(prefix="dlc-device-check-")
        unpacked = os.path.join(folder, os.path.basename(path)[:-3])
        with lzma.open(path) as source, open(unpacked, "wb") as target:
            target.write(source.read())
        path = unpacked
    return dlcrt.load(path)


def run_model(entry, bundle, cuda, dry_run, budget):
    library = _load(bundle, entry)
    if entry["key"] == "mlp_constants":
        return _run_constants_model(entry, library, bundle, cuda)
    # per call: the input's shape and the row's key (b<batch>, or the whole
    # shape for a library with dynamic dimensions beyond the batch)
    if "input_shapes" in entry:
        calls = [(tuple(s), "b" + "x".join(map(str, s))) for s in entry["input_shapes"]]
    else:
        calls = [((batch,) + tuple(entry["input_shape"]), f"b{batch}")
                 for batch in entry["batches"]]
    # the weights are in the library (unless they are its inputs)
    constants = "network" in entry and not entry.get("parameters_as_inputs")
    if not cuda:
        parameters = [np.zeros(p["shape"], p["dtype"]) for p in entry.get("parameters", [])]
        library(np.zeros(calls[0][0], np.float32), *parameters)
        return {"check": "called (dry run: not checked)"}
    net = _network(entry.get("network", entry["key"]), seeded=constants)
    state = net.state_dict()
    parameters = []
    for p in entry.get("parameters", []):
        tensor = state[p["name"]].contiguous()
        if list(tensor.shape) != p["shape"]:
            raise ValueError(f"parameter {p['name']}: PyTorch has {list(tensor.shape)}, the "
                             f"library expects {p['shape']}")
        parameters.append(tensor)
    row = {}
    for shape, key in calls:
        x = torch.randn(shape, device="cuda")
        with torch.no_grad():
            expected = net(x)
            if constants and key == calls[0][1]:
                # The first call uploads the weights (and is timed alone).
                start = time.perf_counter()
                library(x)
                row["first_call_ms"] = (time.perf_counter() - start) * 1e3
            result = device_result(library(x, *parameters))
            seconds = min(2.0, max(budget.left() / 30, 0.3))
            row[key] = {
                "error": relative_error(result, expected),
                # As a C caller: the arguments marshalled once (dlcrt's
                # prepare); and as a plain Python call, ~100 DLPack
                # arguments read each time.
                "dlc_ms": median_ms(library.f.prepare(x, *parameters), seconds, cuda),
                "dlc_python_ms": median_ms(lambda: library(x, *parameters), seconds, cuda),
                "eager_ms": median_ms(lambda: net(x), seconds, cuda),
                "profile": {"dlc": kernel_profile(library.f.prepare(x, *parameters)),
                            "torch": kernel_profile(lambda: net(x))}}
        row[key]["ok"] = row[key]["error"] <= 1e-3
    return row


def run_model_compiled(entry, budget):
    """torch.compile of a bundle model (its compile time, then its calls)."""
    net = _network(entry["key"])
    shape = tuple(entry["input_shape"])
    row = {}
    for batch in entry["batches"]:
        if budget.left() < 20:
            row[f"b{batch}"] = {"skipped": "out of time"}
            continue
        x = torch.randn((batch,) + shape, device="cuda")
        compiled = torch.compile(net, dynamic=False)
        with torch.no_grad():
            start = time.perf_counter()
            compiled(x)
            torch.cuda.synchronize()
            compile_seconds = time.perf_counter() - start
            row[f"b{batch}"] = {"compile_seconds": compile_seconds,
                                "compiled_ms": median_ms(lambda: compiled(x), 1.0, True)}
    return row


def _run_constants_model(entry, library, bundle, cuda):
    """The MLP whose weights are constants of the library: the first call
    uploads them, later calls must not (compare their times)."""
    stored = np.load(os.path.join(bundle, entry["weights_file"]))
    w1, b1, w2, b2 = (stored[name].astype(np.float64) for name in entry["weight_names"])

    def reference(x):  # Linear, ReLU, Linear (PyTorch's weight layout)
        return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2

    row = {}
    rng = np.random.default_rng(3)
    for batch in entry["batches"]:
        x = rng.standard_normal((batch,) + tuple(entry["input_shape"])).astype(np.float32)
        start = time.perf_counter()
        result = library(x)
        first_ms = (time.perf_counter() - start) * 1e3
        if not cuda:
            row[f"b{batch}"] = {"check": "called (dry run: not checked)"}
            continue
        expected = reference(x.astype(np.float64))
        error = float(np.linalg.norm(result - expected) / np.linalg.norm(expected))
        device_x = torch.from_numpy(x).cuda()
        row[f"b{batch}"] = {
            "error": error, "ok": error <= 1e-4, "first_call_ms": first_ms,
            "host_call_ms": median_ms(lambda: library(x), 0.5, True),
            "device_call_ms": median_ms(library.f.prepare(device_x), 0.5, True),
            "constant_bytes": entry["constant_bytes"]}
    return row


# -- report ---------------------------------------------------------------------


def cell(text, width=150):
    """One table cell of a message: its last line, no pipes."""
    lines = [line for line in str(text).strip().splitlines() if line.strip()] or ["-"]
    return lines[-1].replace("|", "/")[:width]


def markdown(report):
    lines = [f"# dlc GPU device check, {report['facts'].get('date')}", ""]
    f = report["facts"]
    lines.append(f"GPU: {f.get('gpu', '-')} ({f.get('capability', '-')}, "
                 f"{f.get('multiprocessors', '-')} SMs), nvidia-smi: {f.get('nvidia_smi', '-')}; "
                 f"PyTorch {f.get('torch', '-')} (CUDA {f.get('torch_cuda', '-')}); bundle chip "
                 f"{report['chip']}, dlc {report['dlc']}; {report['seconds']:.0f} s.")
    lines.append("")
    rows = report["rows"]
    ops = [r for r in rows if r["section"] == "ops"]
    if ops and report["dry_run"]:
        bad = [r for r in ops if "error" in r]
        lines += [f"## Op cases: {len(ops) - len(bad)} of {len(ops)} called (dry run: "
                  f"results not checked)", ""]
    elif ops:
        bad = [r for r in ops if r.get("host") != "ok" or r.get("device", "ok") != "ok"]
        lines.append(f"## Op cases: {len(ops) - len(bad)} of {len(ops)} right on the host "
                     f"and the device path")
        lines.append("")
        if bad:
            lines += ["| case | host path | device path |", "|---|---|---|"]
            for r in bad:
                lines.append(f"| {r['name']} | {cell(r.get('host', r.get('error', '-')))} | "
                             f"{cell(r.get('device', '-'))} |")
            lines.append("")
    for section, title in (("matmul", "Matmul (n x n x n)"), ("conv", "ResNet-18 convolutions")):
        section_rows = [r for r in rows if r["section"] == section]
        if not section_rows:
            continue
        lines += [f"## {title}", "", "| case | batch | rel. error | dlc ms | torch ms | "
                  "dlc TFLOP/s | torch TFLOP/s | dlc / torch speed |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in section_rows:
            cells = ({"": r} if section == "matmul" else
                     {k: v for k, v in r.items() if k.startswith("b") and isinstance(v, dict)})
            if "error" in r or "skipped" in r or not cells:
                lines.append(f"| {r['name']} | | "
                             f"{cell(r.get('error', r.get('skipped', r.get('check', '-'))))} "
                             f"| | | | | |")
                continue
            for batch, c in cells.items():
                if "dlc_ms" not in c:
                    lines.append(f"| {r['name']} | {batch} | {c.get('check', '-')} | | | | | |")
                    continue
                error = max(c["error_before"], c["error_after"])
                lines.append(f"| {r['name']} | {batch[1:] or '-'} | {error:.1e}"
                             f"{'' if c['ok'] else ' WRONG'} | {c['dlc_ms']:.3f} | "
                             f"{c['torch_ms']:.3f} | {c['dlc_tflops']:.1f} | "
                             f"{c['torch_tflops']:.1f} | {c['dlc_over_torch']:.2f} |")
        lines.append("")
    models = [r for r in rows if r["section"] == "models"]
    if models:
        lines += ["## Models", "", "dlc ms: the library's entry point with its arguments "
                  "marshalled once (dlcrt prepare, as a C caller); in brackets, a plain "
                  "Python call reading every argument through DLPack.", "",
                  "| model | batch | rel. error | dlc ms | eager ms | "
                  "compiled ms | compile s | eager / dlc |", "|---|---|---|---|---|---|---|---|"]
        for r in models:
            cells = {k: v for k, v in r.items() if k.startswith("b") and isinstance(v, dict)}
            if "error" in r and not cells:
                lines.append(f"| {r['name']} | | {cell(r['error'])} | | | | | |")
            for batch, c in cells.items():
                if "dlc_ms" in c:
                    compiled = r.get("compiled", {}).get(batch, {})
                    lines.append(
                        f"| {r['name']} | {batch[1:]} | {c['error']:.1e}"
                        f"{'' if c['ok'] else ' WRONG'} | {c['dlc_ms']:.3f} "
                        f"({c['dlc_python_ms']:.3f}) | "
                        f"{c['eager_ms']:.3f} | {compiled.get('compiled_ms', float('nan')):.3f} | "
                        f"{compiled.get('compile_seconds', float('nan')):.0f} | "
                        f"{c['eager_ms'] / c['dlc_ms']:.2f} |")
                elif "host_call_ms" in c:
                    lines.append(f"| {r['name']} | {batch[1:]} | {c['error']:.1e}"
                                 f"{'' if c['ok'] else ' WRONG'} | first call "
                                 f"{c['first_call_ms']:.2f}, then {c['host_call_ms']:.3f} "
                                 f"(host) / {c['device_call_ms']:.3f} (device) | | | | |")
                else:
                    lines.append(f"| {r['name']} | {batch[1:]} | {c.get('check', '-')} "
                                 f"| | | | | |")
        lines.append("")
    profiled = []
    for r in rows:
        cells = {"": r} if "profile" in r else {
            k: v for k, v in r.items() if k.startswith("b") and isinstance(v, dict)
            and "profile" in v}
        for batch, c in cells.items():
            profiled.append((f"{r['name']}{' b' + batch[1:] if batch else ''}", c))
    if profiled:
        lines += ["## Where the time goes", "",
                  "GPU time of one call (kernels and copies, torch.profiler/CUPTI) against "
                  "the call's time; dlc's costliest kernels.", "",
                  "| case | dlc call ms | dlc GPU ms | kernels | torch GPU ms | "
                  "dlc's costliest kernels (ms per call) |", "|---|---|---|---|---|---|"]
        for name, c in profiled:
            dlc_profile, torch_profile = c["profile"]["dlc"], c["profile"]["torch"]
            count = sum(k["count"] for k in dlc_profile["kernels"])
            top = ", ".join(f"{cell(k['name'], 40)} {k['ms']:.3f}"
                            for k in dlc_profile["kernels"][:4])
            lines.append(f"| {name} | {c.get('dlc_ms', float('nan')):.3f} | "
                         f"{dlc_profile['gpu_ms']:.3f} | {count:.0f} | "
                         f"{torch_profile['gpu_ms']:.3f} | {top} |")
        lines.append("")
    errors = [r for r in rows if "error" in r and isinstance(r["error"], str)]
    if errors:
        lines += ["## Failures", ""]
        for r in errors:
            lines.append(f"- {r['section']}: {r['name']}: {cell(r['error'], 300)}")
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    global torch
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", required=True, help="the folder prepare.py wrote")
    parser.add_argument("--out", required=True, help="where results.json/.md go")
    parser.add_argument("--budget-seconds", type=float, default=330)
    parser.add_argument("--sections", nargs="*", default=["ops", "matmul", "conv", "models"])
    parser.add_argument("--dry-run", action="store_true",
                        help="no GPU: call each library on host arrays (the stand-in "
                             "driver), check nothing")
    options = parser.parse_args(argv)
    budget = Budget(options.budget_seconds)
    started = time.monotonic()
    os.makedirs(options.out, exist_ok=True)
    try:
        import torch as _torch
        torch = _torch
    except ImportError:
        torch = None
    cuda = not options.dry_run and torch is not None and torch.cuda.is_available()
    if not options.dry_run and not cuda:
        sys.exit("no CUDA device through PyTorch: run with --dry-run, or on a GPU machine")
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
    with open(os.path.join(options.bundle, "manifest.json")) as stream:
        manifest = json.load(stream)
    data_path = os.path.join(options.bundle, "ops.npz")
    data = np.load(data_path) if os.path.exists(data_path) else {}
    report = {"facts": facts(), "chip": manifest["chip"], "dlc": manifest["dlc"],
              "dry_run": options.dry_run, "rows": []}
    json_path = os.path.join(options.out, "results.json")

    entries = [e for e in manifest["entries"] if e["section"] in options.sections]
    # The models' torch.compile runs last, in whatever time is left.
    for index, entry in enumerate(entries):
        row = {"section": entry["section"], "name": entry["name"]}
        if "export_error" in entry:
            row["error"] = f"not exported: {entry['export_error']}"
        elif budget.left() < 5:
            row["skipped"] = "out of time"
        else:
            start = time.perf_counter()
            try:
                if entry["section"] == "ops":
                    row.update(run_op(entry, options.bundle, data, cuda, options.dry_run))
                else:
                    runner = {"matmul": run_matmul, "conv": run_conv,
                              "models": run_model}[entry["section"]]
                    row.update(runner(entry, options.bundle, cuda, options.dry_run, budget))
            except Exception as error:  # every case reports; the rest goes on
                row["error"] = "".join(traceback.format_exception_only(type(error), error))
                row["traceback"] = traceback.format_exc()[-3000:]
            row["seconds"] = round(time.perf_counter() - start, 2)
        report["rows"].append(row)
        status = row.get("error", row.get("skipped", row.get("host", "")))
        print(f"[{index + 1}/{len(entries)}] {entry['section']}: {entry['name']}: "
              f"{str(status).strip().splitlines()[-1][:160] if status else 'done'} "
              f"({row.get('seconds', 0)} s)", flush=True)
        report["seconds"] = time.monotonic() - started
        with open(json_path, "w") as stream:
            json.dump(report, stream, indent=1)
    if cuda:
        for entry, row in zip(entries, report["rows"]):
            if entry["section"] == "models" and "input_shape" in entry and \
                    entry.get("key") != "mlp_constants" and "network" not in entry and \
                    "error" not in row:
                try:
                    row["compiled"] = run_model_compiled(entry, budget)
                except Exception as error:
                    row["compiled"] = {"error": str(error)[:500]}
                print(f"torch.compile {entry['name']}: {row['compiled']}", flush=True)
    report["seconds"] = time.monotonic() - started
    with open(json_path, "w") as stream:
        json.dump(report, stream, indent=1)
    text = markdown(report)
    with open(os.path.join(options.out, "results.md"), "w") as stream:
        stream.write(text + "\n")
    print(text)
    return report


if __name__ == "__main__":
    main()
