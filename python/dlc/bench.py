"""dlc's benchmark: GFLOP/s, % of the machine's peak, and ratios to numpy
(OpenBLAS) and PyTorch, all measured in one process on the same inputs.

Run with ``make bench`` or ``python -m dlc.bench``. Cases: the peak f32 FMA
throughput of this machine (an MLIR micro-kernel of independent FMA chains,
compiled by dlc's own pipeline and run on its threads), f32 matmul
128-2048, the ResNet-18 convolution layers at batch 1 and 8, and the
784-128-32-10 MLP at batch 1 and 64. Every dlc result is first checked
against numpy. Then the graph optimizations: for the MLP, a ResNet basic
block and a transformer encoder layer, the kernels compiled, the peak
temporary memory and the time with every optimization on and with each off.

With a CUDA device (``--gpu`` or ``--gpu-only``): f32 and bf16 matmul
2048-8192 and the ResNet-18 convolution layers at batch 1 compiled with
``target="cuda"``, in TFLOP/s and as ratios to PyTorch on the GPU (cuBLAS,
cuDNN) where PyTorch has CUDA; without one the section says why it was
skipped.

The machine is shared and noisy: each case runs in interleaved rounds
(dlc, numpy, PyTorch, dlc, ...) and reports the median time per call of
each; quote the ratios, not one time. Writes ``<out>/bench-<date>.json``,
``<out>/latest.json`` and ``<out>/bench.png``.
"""

import argparse
import datetime
import json
import os
import platform
import sys
import time

import numpy as np

from . import bench_models, runtime
from .timing import measure
from .jit import jit
from .target import Target
from .mlir import ir
from .mlir.passmanager import PassManager

try:
    import torch
except ImportError:  # PyTorch is a benchmark-only dependency
    torch = None


# -- progress -----------------------------------------------------------------


class Progress:
    """A one-line progress bar on stderr."""

    def __init__(self, total, width=30):
        self.total, self.done, self.width = total, 0, width
        self.interactive = sys.stderr.isatty()

    def step(self, label):
        self.done += 1
        filled = int(self.width * self.done / self.total)
        bar = "#" * filled + "." * (self.width - filled)
        text = f"[{bar}] {self.done}/{self.total} {label}"
        if self.interactive:
            sys.stderr.write("\r" + text.ljust(80)[:100])
            if self.done == self.total:
                sys.stderr.write("\n")
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()


# -- peak ---------------------------------------------------------------------

def peak_kernel_text(lanes, chains):
    """An FMA micro-kernel: `chains` independent chains of `lanes`-wide f32
    FMAs per thread, folded into one vector at the end."""
    vector = f"vector<{lanes}xf32>"
    starts = [f"%v{i % 4}" for i in range(chains)]
    iter_args = ", ".join(f"%x{i} = {start}" for i, start in enumerate(starts))
    types = ", ".join([vector] * chains)
    fmas = "\n".join(f"      %y{i} = vector.fma %x{i}, %scale, %shift : {vector}"
                     for i in range(chains))
    yields = ", ".join(f"%y{i}" for i in range(chains))
    sums, names = [], [f"%r#{i}" for i in range(chains)]
    while len(names) > 1:
        merged = []
        for a, b in zip(names[0::2], names[1::2]):
            sums.append(f"    %s{len(sums)} = arith.addf {a}, {b} : {vector}")
            merged.append(f"%s{len(sums) - 1}")
        names = merged + ([names[-1]] if len(names) % 2 else [])
    return f"""
func.func @dlc_peak(%out: memref<?x{lanes}xf32>, %iterations: memref<1xi64>)
    attributes {{llvm.emit_c_interface}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %threads = memref.dim %out, %c0 : memref<?x{lanes}xf32>
  %n64 = memref.load %iterations[%c0] : memref<1xi64>
  %n = arith.index_cast %n64 : i64 to index
  %one = arith.constant dense<1.0> : {vector}
  %scale = arith.constant dense<0.9999999> : {vector}
  %shift = arith.constant dense<1.0e-7> : {vector}
  scf.parallel (%t) = (%c0) to (%threads) step (%c1) {{
    // Start values from memory: constants would let LLVM fold the chains.
    %v0 = vector.load %out[%t, %c0] : memref<?x{lanes}xf32>, {vector}
    %v1 = arith.addf %v0, %one : {vector}
    %v2 = arith.addf %v1, %one : {vector}
    %v3 = arith.addf %v2, %one : {vector}
    %r:{chains} = scf.for %i = %c0 to %n step %c1 iter_args({iter_args}) -> ({types}) {{
{fmas}
      scf.yield {yields} : {types}
    }}
{chr(10).join(sums)}
    vector.store {names[0]}, %out[%t, %c0] : memref<?x{lanes}xf32>, {vector}
    scf.reduce
  }}
  return
}}
"""


def peak_shape(target):
    """(lanes, chains) of the peak kernel on `target`: full vector registers,
    and as many independent FMA chains as its registers hold beside the two
    constants (at least enough to cover FMA latency x pipes where known,
    at most 16)."""
    lanes = target.lanes(np.float32)
    chains = min(16, target.vector_registers - 4)
    return lanes, max(chains, target.fma_units * target.fma_latency, 1)


def compile_peak_kernel(target, chains=None):
    """The FMA micro-kernel for `target` through dlc's pipeline (llvm stage:
    its scf.parallel runs on dlc's threads); `chains` overrides its chains."""
    from .tracing import context
    lanes, default_chains = peak_shape(target)
    chains = chains or default_chains
    with context():
        module = ir.Module.parse(peak_kernel_text(lanes, chains))
        module.operation.attributes["dl.target"] = ir.Attribute.parse(str(target))
        PassManager.parse("builtin.module(dl-cpu-pipeline{from=vector to=llvm})").run(
            module.operation)
        return runtime.CompiledFunction(module, "dlc_peak", []), lanes, chains


def cpuinfo_ghz():
    """The clock /proc/cpuinfo reports (nominal under a hypervisor), or None."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("cpu MHz"):
                    return round(float(line.split(":", 1)[1]) / 1000, 2)
    except (OSError, ValueError):
        pass
    return None


def measure_peak_facts(threads, target=None):
    """The peak on `threads` threads and what it should be: the clock
    measured by one dependent FMA chain (each FMA waits for the last, so a
    thread runs one per `fma_latency` cycles, the target's table value),
    and the theoretical rate at that clock (FMA pipes x lanes x 2 flops per
    cycle per core)."""
    target = target or Target.host()
    lanes, _ = peak_shape(target)
    chain_gflops = measure_peak(1, target=target, chains=1)
    clock_ghz = chain_gflops / (2 * lanes) * target.fma_latency
    theoretical = clock_ghz * target.fma_units * lanes * 2
    return {"gflops": measure_peak(threads, target=target), "threads": threads,
            "clock_ghz": clock_ghz, "cpuinfo_ghz": cpuinfo_ghz(),
            "theoretical_gflops": theoretical, "lanes": lanes,
            "fma_units": target.fma_units, "fma_latency": target.fma_latency}


def measure_peak(threads, seconds=0.3, target=None, chains=None):
    """Peak f32 GFLOP/s of `threads` cores: independent full-width FMA
    chains per thread, shaped for `target` (default: this machine); with
    `chains`, that many chains instead."""
    kernel, lanes, chains = compile_peak_kernel(target or Target.host(), chains)
    saved = runtime.get_num_threads()
    runtime.set_num_threads(threads)
    try:
        out = np.full((threads, lanes), 0.5, np.float32)
        iterations = np.array([1000], np.int64)
        kernel([out, iterations])
        # Scale to about `seconds` per run, then take the best of 5 (the
        # peak is what the hardware can do; noise only lowers it).
        start = time.perf_counter()
        kernel([out, iterations])
        elapsed = max(time.perf_counter() - start, 1e-6)
        iterations[0] = max(1000, int(1000 * seconds / elapsed))
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            kernel([out, iterations])
            best = min(best, time.perf_counter() - start)
        flops = threads * int(iterations[0]) * chains * lanes * 2
        if not np.isfinite(out).all():
            raise RuntimeError("peak kernel produced non-finite values")
        return flops / best / 1e9
    finally:
        runtime.set_num_threads(saved)


# -- cases --------------------------------------------------------------------


def numpy_conv2d(x, w, stride, padding):
    """numpy's best: im2col by strided views, then one BLAS tensordot."""
    if padding:
        x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    f, c, kh, kw = w.shape
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    windows = windows[:, :, ::stride, ::stride]  # n, c, oh, ow, kh, kw
    out = np.tensordot(windows, w, axes=([1, 4, 5], [1, 2, 3]))  # n, oh, ow, f
    return np.ascontiguousarray(out.transpose(0, 3, 1, 2))


def matmul_case(n, rng):
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    case = {"name": f"matmul {n}", "kind": "matmul", "size": n, "flops": 2 * n ** 3,
            "args": (a, b), "dlc": lambda a, b: a @ b, "numpy": lambda a, b: a @ b}
    if torch is not None:
        case["torch_args"] = (torch.from_numpy(a), torch.from_numpy(b))
        case["torch"] = lambda a, b: a @ b
    return case


RESNET18_LAYERS = [  # name, channels in, channels out, size, kernel, stride
    ("conv1 7x7/2", 3, 64, 224, 7, 2),
    ("conv2 64x56", 64, 64, 56, 3, 1),
    ("conv3 128x28", 128, 128, 28, 3, 1),
    ("conv4 256x14", 256, 256, 14, 3, 1),
    ("conv5 512x7", 512, 512, 7, 3, 1),
]


def conv_case(layer, batch, rng):
    from . import ops
    name, cin, cout, size, k, s = layer
    p = k // 2
    x = rng.standard_normal((batch, cin, size, size), dtype=np.float32)
    w = (rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)).astype(np.float32)
    out = (size + 2 * p - k) // s + 1
    case = {"name": f"{name} b{batch}", "kind": "conv", "size": name, "batch": batch,
            "flops": 2 * batch * cout * cin * k * k * out * out, "args": (x, w),
            "dlc": lambda x, w: ops.conv2d(x, w, stride=s, padding=p),
            "numpy": lambda x, w: numpy_conv2d(x, w, s, p)}
    if torch is not None:
        case["torch_args"] = (torch.from_numpy(x), torch.from_numpy(w))
        case["torch"] = lambda x, w: torch.nn.functional.conv2d(x, w, stride=s, padding=p)
    return case


def mlp_case(batch, rng):
    from . import ops
    sizes = (784, 128, 32, 10)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append((rng.standard_normal((fan_in, fan_out)) * np.sqrt(2 / fan_in))
                      .astype(np.float32))
        params.append((rng.standard_normal(fan_out) * 0.1).astype(np.float32))
    x = rng.random((batch, 784), dtype=np.float32)

    def dlc_mlp(x, w1, b1, w2, b2, w3, b3):
        h = ops.relu(x @ w1 + b1)
        h = ops.relu(h @ w2 + b2)
        return ops.softmax(h @ w3 + b3, axis=-1)

    def numpy_mlp(x, w1, b1, w2, b2, w3, b3):
        h = np.maximum(x @ w1 + b1, 0)
        h = np.maximum(h @ w2 + b2, 0)
        logits = h @ w3 + b3
        e = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    flops = 2 * batch * sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))
    case = {"name": f"mlp b{batch}", "kind": "mlp", "size": batch, "flops": flops,
            "args": (x, *params), "dlc": dlc_mlp, "numpy": numpy_mlp}
    if torch is not None:
        def torch_mlp(x, w1, b1, w2, b2, w3, b3):
            h = torch.relu(x @ w1 + b1)
            h = torch.relu(h @ w2 + b2)
            return torch.softmax(h @ w3 + b3, dim=-1)
        case["torch_args"] = tuple(torch.from_numpy(a) for a in case["args"])
        case["torch"] = torch_mlp
    return case


def build_cases(options, rng):
    cases = [matmul_case(n, rng) for n in options.matmul_sizes]
    for batch in options.conv_batches:
        cases += [conv_case(layer, batch, rng) for layer in options.conv_layers]
    cases += [mlp_case(batch, rng) for batch in (1, 64)]
    return cases


# -- graph optimizations ------------------------------------------------------

#: The optimizations measured one at a time (each turned off in its variant).
GRAPH_OPTIMIZATIONS = ("dl-linalg-fuse", "dl-fuse-epilogue", "dl-fold-batchnorm", "dl-layout",
                       "dl-plan-memory", "dl-simplify")


def graph_models(rng):
    """The MLP at batch 64, a ResNet basic block (64 channels, 28x28, batch 1,
    parameters as constants) and a transformer encoder layer (batch 4, 64
    tokens, d_model 128, 4 heads, d_ff 512): (name, function, args)."""
    # The networks of dlc.models, at the sizes of this section.
    from . import models

    mlp = mlp_case(64, rng)
    block = models.randomize_batch_norms(models.BasicBlock(64, 64, 1, rng), rng)
    image = rng.standard_normal((1, 64, 28, 28)).astype(np.float32)
    encoder = models.BertLayer(128, 4, 512, eps=1e-5, rng=rng)
    tokens = rng.standard_normal((4, 64, 128)).astype(np.float32)
    return [("mlp b64", mlp["dlc"], mlp["args"], {}),
            ("resnet basic block", block, (image,), {"constants": True}),
            ("transformer encoder", encoder, (tokens,), {"constants": True})]


def run_graph_case(name, fn, args, jit_options, options):
    """Kernels, peak temporary bytes and time with every optimization on, and
    with each one off, measured in interleaved rounds."""
    variants = {"all on": ()}
    variants.update({f"no {opt}": (opt,) for opt in GRAPH_OPTIMIZATIONS})
    variants["all off"] = GRAPH_OPTIMIZATIONS
    compiled, facts = {}, {}
    reference = None
    for label, disabled in variants.items():
        lowered = jit(fn, disable=disabled, **jit_options).lower(*args)
        plan = lowered.memory_plan()
        function = lowered.compile()
        result = function(*args)
        if reference is None:
            reference = result
        error = float(np.abs(result - reference).max() / (np.abs(reference).max() or 1))
        if error > 1e-4:
            raise RuntimeError(f"{name}, {label}: differs from 'all on' by {error:.2e}")
        compiled[label] = function
        report = lowered.as_text("fused").splitlines() if "dl-linalg-fuse" not in disabled else []
        facts[label] = {
            "kernels": lowered.kernel_count(),
            "dl_ops": int(report[0].split(": ")[1].split()[0]) if report else None,
            "peak_bytes": plan["peak_bytes"],
            "unplanned_peak_bytes": plan["unplanned_peak_bytes"],
        }
    seconds = measure({label: (lambda f=f: f(*args)) for label, f in compiled.items()},
                      options.rounds, options.block_seconds, options_pause=0.05)
    for label in facts:
        facts[label]["ms"] = seconds[label] * 1e3
        facts[label]["speedup_of_all_on"] = seconds[label] / seconds["all on"]
    return {"name": name, "variants": facts}


def print_graph_table(rows):
    print(f"\n{'model':<22}{'variant':<22}{'kernels':>8}{'peak KiB':>10}{'ms':>9}"
          f"{'x all on':>10}")
    for row in rows:
        for label, facts in row["variants"].items():
            peak_text = f"{facts['peak_bytes'] / 1024:>10.0f}"
            print(f"{row['name']:<22}{label:<22}{facts['kernels']:>8}{peak_text}"
                  f"{facts['ms']:>9.3f}{facts['speedup_of_all_on']:>9.2f}x")
    print("kernels: linalg ops compiled (one loop nest each); peak KiB: statically "
          "shaped temporaries\nlive at once (as planned, or unplanned where "
          "dl-plan-memory is off); x all on = variant time /\ntime with every "
          "optimization on")


# -- cases, measured ------------------------------------------------------------


def run_case(case, options):
    args = case["args"]
    start = time.perf_counter()
    compiled = jit(case["dlc"]).lower(*args).compile()
    compile_seconds = time.perf_counter() - start
    result = compiled(*args)
    reference = case["numpy"](*[a.astype(np.float64) for a in args])
    scale = float(np.abs(reference).max()) or 1.0
    error = float(np.abs(result - reference).max()) / scale
    if error > 1e-4:
        raise RuntimeError(f"{case['name']}: dlc differs from numpy by {error:.2e}")
    peers = {"dlc": lambda: compiled(*args), "numpy": lambda: case["numpy"](*args)}
    if "torch" in case:
        torch_args = case["torch_args"]
        peers["torch"] = lambda: case["torch"](*torch_args)
    seconds = measure(peers, options.rounds, options.block_seconds)
    row = {key: case[key] for key in ("name", "kind", "size", "flops") if key in case}
    row.update(batch=case.get("batch"), compile_seconds=compile_seconds,
               max_rel_error=error,
               ms={name: value * 1e3 for name, value in seconds.items()},
               gflops={name: case["flops"] / value / 1e9 for name, value in seconds.items()})
    row["ratio"] = {name: seconds[name] / seconds["dlc"] for name in seconds if name != "dlc"}
    return row


# -- GPU ----------------------------------------------------------------------


def run_gpu_section(options, rng, progress=None):
    """The GPU cases, or {"skipped": reason} where no CUDA device exists."""
    reason = runtime.cuda_status()
    if reason is not None:
        return {"skipped": f"no CUDA device: {reason}"}
    import ml_dtypes
    from . import ops
    torch_cuda = torch is not None and torch.cuda.is_available()
    cases = []
    for n in options.gpu_matmul_sizes:
        for dtype in (np.float32, ml_dtypes.bfloat16):
            a = rng.standard_normal((n, n)).astype(dtype)
            b = rng.standard_normal((n, n)).astype(dtype)
            cases.append((f"matmul {n} {np.dtype(dtype).name}", 2 * n ** 3, (a, b),
                          lambda a, b: a @ b, lambda a, b: a @ b))
    for name, cin, cout, size, k, stride in RESNET18_LAYERS:
        x = rng.standard_normal((1, cin, size, size), dtype=np.float32)
        w = (rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)).astype(np.float32)
        out = (size + 2 * (k // 2) - k) // stride + 1
        cases.append((f"{name} b1", 2 * cout * cin * k * k * out * out, (x, w),
                      lambda x, w, s=stride, p=k // 2: ops.conv2d(x, w, stride=s, padding=p),
                      lambda x, w, s=stride, p=k // 2: torch.nn.functional.conv2d(
                          x, w, stride=s, padding=p)))
    rows = []
    for name, flops, args, dlc_fn, torch_fn in cases:
        compiled = jit(dlc_fn, target="cuda").lower(*args).compile()
        result = np.asarray(compiled(*args), dtype=np.float64)
        peers = {"dlc": lambda: compiled(*args)}
        if torch_cuda:
            device_args = [torch.from_numpy(np.asarray(a, np.float32)).cuda() for a in args]
            if "bfloat16" in name:
                device_args = [a.bfloat16() for a in device_args]
            expected = torch_fn(*device_args).float().cpu().numpy().astype(np.float64)
            scale = float(np.abs(expected).max()) or 1.0
            error = float(np.abs(result - expected).max()) / scale
            limit = 5e-2 if "bfloat16" in name else 1e-3
            if error > limit:
                raise RuntimeError(f"{name}: dlc on the GPU differs from PyTorch by {error:.2e}")

            def torch_call(fn=torch_fn, device_args=device_args):
                fn(*device_args)
                torch.cuda.synchronize()
            peers["torch"] = torch_call
        seconds = measure(peers, options.rounds, options.block_seconds, options_pause=0.0)
        row = {"name": name, "flops": flops,
               "tflops": {peer: flops / t / 1e12 for peer, t in seconds.items()},
               "ms": {peer: t * 1e3 for peer, t in seconds.items()}}
        if "torch" in seconds:
            row["ratio_to_torch"] = seconds["torch"] / seconds["dlc"]
        rows.append(row)
        if progress is not None:
            progress.step(name)
    return {"device": "cuda", "torch_cuda": torch_cuda, "results": rows}


def print_gpu_table(section):
    if "skipped" in section:
        print(f"\nGPU section skipped: {section['skipped']}")
        return
    print("\nGPU (dlc target='cuda'; arguments and results are copied to and from device memory at each call)")
    print(f"{'case':<24}{'dlc TFLOP/s':>12}{'torch TFLOP/s':>15}{'torch/dlc':>11}")
    for row in section["results"]:
        torch_tflops = row["tflops"].get("torch")
        ratio = row.get("ratio_to_torch")
        print(f"{row['name']:<24}{row['tflops']['dlc']:>12.3f}"
              f"{(f'{torch_tflops:.3f}' if torch_tflops else '-'):>15}"
              f"{(f'{ratio:.2f}' if ratio else '-'):>11}")


# -- report -------------------------------------------------------------------


def machine_facts():
    facts = {"platform": platform.platform(), "python": platform.python_version(),
             "numpy": np.__version__, "torch": getattr(torch, "__version__", None)}
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    facts["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    facts["cores"] = len(os.sched_getaffinity(0))
    facts["target"] = str(Target.host())
    return facts


def print_table(rows, peak):
    peers = [p for p in ("numpy", "torch") if any(p in r["ms"] for r in rows)]
    header = f"{'case':<22}{'dlc ms':>10}{'GFLOP/s':>9}{'% peak':>8}"
    for peer in peers:
        header += f"{peer + ' ms':>10}{'x ' + peer:>9}"
    print(header)
    for row in rows:
        line = (f"{row['name']:<22}{row['ms']['dlc']:>10.3f}{row['gflops']['dlc']:>9.1f}"
                f"{100 * row['gflops']['dlc'] / peak:>7.1f}%")
        for peer in peers:
            if peer in row["ms"]:
                line += f"{row['ms'][peer]:>10.3f}{row['ratio'][peer]:>8.2f}x"
            else:
                line += f"{'-':>10}{'-':>9}"
        print(line)
    print("x peer = peer time / dlc time (above 1: dlc is faster)")


def plot(rows, peak, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (make bench installs it)")
        return None
    colors = {"dlc": "tab:blue", "numpy": "tab:orange", "torch": "tab:green"}
    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    matmuls = [r for r in rows if r["kind"] == "matmul"]
    for peer in colors:
        points = [(r["size"], r["gflops"][peer]) for r in matmuls if peer in r["gflops"]]
        if points:
            left.plot(*zip(*points), marker="o", label=peer, color=colors[peer])
    left.axhline(peak, linestyle="--", color="gray", label=f"peak {peak:.0f}")
    left.set_xscale("log", base=2)
    left.set_xlabel("matmul size n (n x n x n, f32)")
    left.set_ylabel("GFLOP/s")
    left.set_title("matmul")
    left.legend()
    convs = [r for r in rows if r["kind"] == "conv"]
    names = [r["name"] for r in convs]
    width = 0.27
    for index, peer in enumerate(colors):
        values = [r["gflops"].get(peer, 0) for r in convs]
        right.bar([i + (index - 1) * width for i in range(len(convs))], values, width,
                  label=peer, color=colors[peer])
    right.axhline(peak, linestyle="--", color="gray", label="peak")
    right.set_xticks(range(len(convs)))
    right.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
    right.set_ylabel("GFLOP/s")
    right.set_title("ResNet-18 convolution layers")
    right.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dlc.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="threads of every side (default: all cores)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds per case")
    parser.add_argument("--block-seconds", type=float, default=0.05,
                        help="length of one timed block of calls")
    parser.add_argument("--matmul-sizes", type=int, nargs="*",
                        default=[128, 256, 512, 1024, 2048])
    parser.add_argument("--conv-batches", type=int, nargs="*", default=[1, 8])
    parser.add_argument("--out", default=os.path.join("bench", "results"),
                        help="folder for the JSON results and the plot")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and few rounds (a smoke test)")
    parser.add_argument("--smoke", action="store_true",
                        help="the smallest run that still writes every output (one "
                             "matmul, one convolution layer, the MLP of the graph "
                             "section, one round): what make test runs")
    parser.add_argument("--graph-only", action="store_true",
                        help="only the graph-optimization section")
    parser.add_argument("--gpu", action="store_true",
                        help="add the GPU section (skipped, saying why, without a CUDA device)")
    parser.add_argument("--gpu-only", action="store_true", help="only the GPU section")
    parser.add_argument("--gpu-matmul-sizes", type=int, nargs="*", default=[2048, 4096, 8192])
    parser.add_argument("--models", action="store_true",
                        help="add the model section: ResNet-18, MobileNetV2 and a BERT-base "
                             "layer against onnxruntime and PyTorch (see dlc.bench_models)")
    parser.add_argument("--models-only", action="store_true", help="only the model section")
    parser.add_argument("--models-list", nargs="*", default=list(bench_models.MODELS),
                        choices=list(bench_models.MODELS), help="which models")
    parser.add_argument("--model-batches", type=int, nargs="*", default=[1, 8])
    parser.add_argument("--model-rounds", type=int, default=5,
                        help="rounds per model and runtime")
    parser.add_argument("--model-block-seconds", type=float, default=0.5,
                        help="length of one timed block of model calls (the "
                             "median is over blocks: several calls each)")
    parser.add_argument("--interleaved", action="store_true",
                        help="models: all runtimes in one process, interleaved "
                             "(default: each in its own process)")
    # Set by --smoke only (no flags of their own).
    parser.set_defaults(conv_layers=RESNET18_LAYERS, graph_models=None)
    options = parser.parse_args(argv)
    if options.quick:
        options.rounds, options.block_seconds = 2, 0.01
        options.matmul_sizes, options.conv_batches = [128, 256], [1]
        options.model_rounds, options.model_batches = 2, [1]
        options.model_block_seconds = 0.01
    if options.smoke:
        options.rounds, options.block_seconds = 1, 0.005
        options.matmul_sizes, options.conv_batches = [64], [1]
        options.conv_layers, options.graph_models = RESNET18_LAYERS[:1], 1
    if options.threads < 1:
        parser.error("--threads must be positive")
    # Made first: every result below is written into it (a fresh clone has
    # no bench/results).
    os.makedirs(options.out, exist_ok=True)

    runtime.set_num_threads(options.threads)
    if torch is not None:
        torch.set_num_threads(options.threads)
    else:
        print("PyTorch is not installed: numpy is the only peer (make bench installs it)")
    rng = np.random.default_rng(0)
    if options.gpu_only:
        section = run_gpu_section(options, rng, Progress(
            2 * len(options.gpu_matmul_sizes) + len(RESNET18_LAYERS)))
        print_gpu_table(section)
        with open(os.path.join(options.out, "gpu-latest.json"), "w") as out:
            json.dump({"machine": machine_facts(), **section}, out, indent=1)
        return section
    if options.models_only:
        progress = Progress(len(options.models_list) * len(options.model_batches))
        model_rows = bench_models.run_models(options, progress)
        print_target_and_peak(options, measure_peak_facts(1))
        bench_models.print_models_table(model_rows)
        write_report(options, {"models": model_rows}, name="models")
        return model_rows
    cases = [] if options.graph_only else build_cases(options, rng)
    models = graph_models(rng)[:options.graph_models]
    model_count = len(options.models_list) * len(options.model_batches) if options.models else 0
    progress = Progress(len(cases) + len(models) + model_count + 2)
    peak_facts = measure_peak_facts(1)
    peak_one = peak_facts["gflops"]
    progress.step("peak, 1 thread")
    peak = measure_peak(options.threads)
    peak_facts["gflops_all_threads"] = peak
    progress.step(f"peak, {options.threads} threads")
    rows = []
    for case in cases:
        rows.append(run_case(case, options))
        progress.step(case["name"])
    graph_rows = []
    for name, fn, args, jit_options in models:
        graph_rows.append(run_graph_case(name, fn, args, jit_options, options))
        progress.step(name)
    model_rows = bench_models.run_models(options, progress) if options.models else None

    print_target_and_peak(options, peak_facts)
    print(f"threads: dlc {options.threads}, numpy (OpenBLAS) its default, "
          f"torch {options.threads if torch is not None else '-'}\n")
    if rows:
        print_table(rows, peak)
    print_graph_table(graph_rows)
    if model_rows is not None:
        bench_models.print_models_table(model_rows)
    gpu = run_gpu_section(options, rng) if options.gpu else None
    if gpu is not None:
        print_gpu_table(gpu)

    report = {"peak": peak_facts,
              "peak_gflops": {"1": peak_one, str(options.threads): peak},
              "rounds": options.rounds, "results": rows, "graph": graph_rows}
    if model_rows is not None:
        report["models"] = model_rows
    if gpu is not None:
        report["gpu"] = gpu
    image = plot(rows, peak, os.path.join(options.out, "bench.png")) if rows else None
    write_report(options, report, name="bench", image=image)
    return report


def print_target_and_peak(options, peak):
    host = Target.host()
    print(f"\ntarget: {host.cpu} ({host.vector_registers} x {host.vector_bits}-bit "
          f"vector registers, {host.fma_units} FMA pipe(s) of latency {host.fma_latency}, "
          f"L2 {host.l2 // 1024} KiB; micro-kernel "
          f"{host.register_tile[0]} x {host.register_tile[1]} vectors)\n  {host}")
    print(f"peak f32 FMA throughput: {peak['gflops']:.1f} GFLOP/s on 1 thread"
          + (f", {peak['gflops_all_threads']:.1f} on {options.threads}"
             if "gflops_all_threads" in peak else ""))
    print(f"  clock {peak['clock_ghz']:.2f} GHz (one dependent FMA chain at the "
          f"target's latency; /proc/cpuinfo says {peak['cpuinfo_ghz'] or '-'} GHz): "
          f"theoretical {peak['theoretical_gflops']:.1f} GFLOP/s per core, measured "
          f"{100 * peak['gflops'] / peak['theoretical_gflops']:.0f}% of it")


def write_report(options, report, name, image=None):
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    report = {"date": stamp, "machine": machine_facts(), "threads": options.threads,
              **report}
    latest = "latest.json" if name == "bench" else f"{name}-latest.json"
    for file_name in (f"{name}-{stamp}.json", latest):
        with open(os.path.join(options.out, file_name), "w") as out:
            json.dump(report, out, indent=1)
    print(f"\nresults: {os.path.join(options.out, latest)}"
          + (f", plot: {image}" if image else ""))


if __name__ == "__main__":
    main()
