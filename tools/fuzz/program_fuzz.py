#!/usr/bin/env python3
"""Random-program differential testing: random dlc programs against float64
numpy, with each optimization turned off in turn, shrunk when they disagree.

A program is a list of steps over a pool of values, starting from one to
three random inputs: elementwise math, broadcasting binaries (with other
values or constants), reductions, transposes, reshapes, slices (reversed
too), concatenations, matmuls, softmax and layer norm, and on 4-D values
convolutions (strided, padded, dilated, grouped, depthwise), poolings and
the squeeze-and-excitation pattern. Each step is built twice: once with dlc
ops (traced, compiled, run in float32) and once with numpy in float64. The
compiled result must match the reference within a tolerance scaled by the
magnitude of the values (float32 roundoff through a few dozen ops). Each
program also runs with every optimization of `dlc.jit(disable=...)` turned
off in turn, or with its function cut into parts of a dozen ops
(`max_function_ops`) or into parts before the affine stage wherever it may
be (`early_split_ops=1`), round robin, so a pass that changes the answer is
caught against the same reference. A disagreement is shrunk (steps removed while
it persists) and printed as Python.

  python tools/fuzz/program_fuzz.py --count 500 --seed 1

Exit status: 0 if every program matched, 1 otherwise.
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "python"))

import dlc  # noqa: E402
import references as ref  # noqa: E402

# What each program is also compiled with, round robin: each optimization
# turned off, functions cut into parts (dl-split-function, which only cuts
# large programs by default: into a few ops each before LLVM, and wherever
# it may before the affine stage), and dl-winograd on every convolution it
# can transform (64 channels and 32 tiles by default).
VARIANTS = [None] + [{"disable": [name]} for name in (
    "dl-simplify", "dl-fold-batchnorm", "dl-layout", "dl-linalg-fuse",
    "dl-fuse-epilogue", "dl-plan-memory")] + [{"max_function_ops": 12}] + [
    # cut before the affine stage wherever dl-split-function{early} may
    {"early_split_ops": 1}] + [
    # every 3x3 convolution of stride 1 by Winograd, however small
    {"winograd_min_tiles": 1, "winograd_min_channels": 1}]


def _unary_table():
    return [
        ("tanh", dlc.tanh, np.tanh),
        ("relu", dlc.relu, lambda x: np.maximum(x, 0)),
        ("sigmoid", dlc.sigmoid, ref.sigmoid),
        ("abs", dlc.abs, np.abs),
        ("neg", dlc.negative, np.negative),
        ("exp_clip", lambda x: dlc.exp(dlc.clip(x, -4.0, 4.0)),
         lambda x: np.exp(np.clip(x, -4, 4))),
        ("sqrt_abs", lambda x: dlc.sqrt(dlc.abs(x)), lambda x: np.sqrt(np.abs(x))),
        ("silu", dlc.silu, lambda x: x * ref.sigmoid(x)),
        ("gelu", dlc.gelu, ref.gelu),
        ("sin", dlc.sin, np.sin),
    ]


BINARY = [
    ("add", dlc.add, np.add), ("sub", dlc.subtract, np.subtract),
    ("mul", dlc.multiply, np.multiply), ("max", dlc.maximum, np.maximum),
    ("min", dlc.minimum, np.minimum),
]


class Program:
    """Steps, each (kind, params); values are indices into a pool."""

    def __init__(self, inputs, steps):
        self.inputs = inputs    # list of shapes
        self.steps = steps      # list of (kind, params)

    def build(self, arrays, backend):
        """Runs the steps with `backend` ("dlc" or "numpy"); returns the last
        four values the steps made (so that few steps are dead code)."""
        pool = list(arrays)
        for kind, params in self.steps:
            value = STEPS[kind][1 if backend == "dlc" else 2](pool, **params)
            if value is not None:
                pool.append(value)
        return tuple(pool[len(arrays):][-4:])

    def source(self):
        lines = [f"inputs {self.inputs}"]
        lines += [f"  {kind} {params}" for kind, params in self.steps]
        return "\n".join(lines)


# -- steps: (generator(rng, shapes) -> params or None, dlc build, numpy build) -----------

def _pick(rng, shapes, rank=None):
    choices = [i for i, s in enumerate(shapes) if rank is None or len(s) == rank]
    return int(rng.choice(choices)) if choices else None


def _gen_unary(rng, shapes):
    return {"src": _pick(rng, shapes), "op": int(rng.integers(len(_unary_table())))}


def _unary(pool, src, op, numpy=False):
    entry = _unary_table()[op]
    return (entry[2] if numpy else entry[1])(pool[src])


def _gen_binary(rng, shapes):
    a = _pick(rng, shapes)
    shape = shapes[a]
    partners = [i for i, s in enumerate(shapes)
                if _broadcastable(s, shape) and np.broadcast_shapes(s, shape) == shape]
    if rng.random() < 0.4 or not partners:
        # A constant broadcast along some dimensions.
        cshape = tuple(d if rng.random() < 0.5 else 1 for d in shape)
        cshape = cshape[int(rng.integers(len(cshape) + 1)):] if cshape else cshape
        const = rng.uniform(-2, 2, size=cshape)
        return {"a": a, "b": None, "const": const, "op": int(rng.integers(len(BINARY)))}
    return {"a": a, "b": int(rng.choice(partners)), "const": None,
            "op": int(rng.integers(len(BINARY)))}


def _broadcastable(s, t):
    try:
        np.broadcast_shapes(s, t)
        return True
    except ValueError:
        return False


def _binary(pool, a, b, const, op, numpy=False):
    fn = BINARY[op][2 if numpy else 1]
    other = pool[b] if b is not None else (const if numpy else const.astype(np.float32))
    return fn(pool[a], other)


def _gen_reduce(rng, shapes):
    a = _pick(rng, shapes)
    if not shapes[a]:
        return None
    return {"src": a, "axis": int(rng.integers(len(shapes[a]))),
            "kind": str(rng.choice(["sum", "mean", "max"])),
            "keepdims": bool(rng.random() < 0.5)}


def _reduce(pool, src, axis, kind, keepdims, numpy=False):
    fn = {"sum": (dlc.sum, np.sum), "mean": (dlc.mean, np.mean),
          "max": (dlc.max, np.max)}[kind][1 if numpy else 0]
    return fn(pool[src], axis=axis, keepdims=keepdims)


def _gen_transpose(rng, shapes):
    a = _pick(rng, shapes)
    if len(shapes[a]) < 2:
        return None
    return {"src": a, "perm": [int(p) for p in rng.permutation(len(shapes[a]))]}


def _transpose(pool, src, perm, numpy=False):
    return np.transpose(pool[src], perm) if numpy else dlc.transpose(pool[src], perm)


def _gen_reshape(rng, shapes):
    a = _pick(rng, shapes)
    size = int(np.prod(shapes[a]))
    if size == 0:
        return None
    divisors = [d for d in range(1, size + 1) if size % d == 0]
    first = int(rng.choice(divisors))
    return {"src": a, "shape": (first, size // first)}


def _reshape(pool, src, shape, numpy=False):
    return np.reshape(pool[src], shape) if numpy else dlc.reshape(pool[src], shape)


def _gen_slice(rng, shapes):
    a = _pick(rng, shapes)
    if not shapes[a]:
        return None
    key = []
    for d in shapes[a]:
        start, stop = sorted(int(v) for v in rng.integers(0, d + 1, size=2))
        step = int(rng.choice([1, 1, 2, -1]))
        if step < 0:
            key.append((stop - 1 if stop > 0 else None, start - 1 if start > 0 else None, -1))
        else:
            key.append((start, max(stop, start + 1), step))
    return {"src": a, "key": key}


def _slice(pool, src, key, numpy=False):
    return pool[src][tuple(slice(*k) for k in key)]


def _gen_concat(rng, shapes):
    a = _pick(rng, shapes)
    if not shapes[a]:
        return None
    axis = int(rng.integers(len(shapes[a])))
    same = [i for i, s in enumerate(shapes) if len(s) == len(shapes[a]) and
            all(x == y for j, (x, y) in enumerate(zip(s, shapes[a])) if j != axis)]
    return {"a": a, "b": int(rng.choice(same)), "axis": axis}


def _concat(pool, a, b, axis, numpy=False):
    return (np.concatenate if numpy else dlc.concatenate)([pool[a], pool[b]], axis=axis)


def _gen_matmul(rng, shapes):
    a = _pick(rng, shapes, 2)
    if a is None:
        return None
    k = shapes[a][1]
    # Mostly narrow; sometimes wide enough for dl-pack-weights' panels (two
    # or more of 24 or 64 columns, the last one partial).
    n = int(rng.integers(1, 9)) if rng.random() < 0.8 else int(rng.integers(40, 140))
    return {"src": a, "w": rng.uniform(-1, 1, size=(k, n))}


def _matmul(pool, src, w, numpy=False):
    return pool[src] @ (w if numpy else w.astype(np.float32))


def _gen_softmax(rng, shapes):
    a = _pick(rng, shapes)
    if not shapes[a]:
        return None
    return {"src": a, "axis": int(rng.integers(len(shapes[a]))),
            "log": bool(rng.random() < 0.3)}


def _softmax(pool, src, axis, log, numpy=False):
    if numpy:
        return (ref.log_softmax if log else ref.softmax)(pool[src], axis)
    return (dlc.log_softmax if log else dlc.softmax)(pool[src], axis)


def _gen_layer_norm(rng, shapes):
    a = _pick(rng, shapes)
    if not shapes[a] or shapes[a][-1] < 2:
        return None
    n = shapes[a][-1]
    return {"src": a, "gamma": rng.uniform(0.5, 1.5, n), "beta": rng.uniform(-1, 1, n)}


def _layer_norm(pool, src, gamma, beta, numpy=False):
    if numpy:
        return ref.layer_norm(pool[src], gamma, beta)
    return dlc.layer_norm(pool[src], gamma.astype(np.float32), beta.astype(np.float32))


def _gen_conv(rng, shapes):
    a = _pick(rng, shapes, 4)
    if a is None:
        return None
    n, c, h, w = shapes[a]
    groups = int(rng.choice([g for g in (1, 2, c) if c % g == 0]))
    f = groups * int(rng.integers(1, 4))
    k = int(rng.choice([1, 2, 3]))
    stride = int(rng.choice([1, 1, 2]))
    dilation = int(rng.choice([1, 1, 2]))
    pad = int(rng.integers(0, 2))
    if (h + 2 * pad - dilation * (k - 1) - 1) < 0 or (w + 2 * pad - dilation * (k - 1) - 1) < 0:
        return None
    return {"src": a, "w": rng.uniform(-1, 1, size=(f, c // groups, k, k)),
            "b": rng.uniform(-1, 1, size=f), "stride": stride, "pad": pad,
            "dilation": dilation, "groups": groups}


def _conv(pool, src, w, b, stride, pad, dilation, groups, numpy=False):
    if numpy:
        return ref.conv2d(pool[src], w, b, (stride, stride), (pad, pad, pad, pad),
                          (dilation, dilation), groups)
    return dlc.conv2d(pool[src], w.astype(np.float32), b.astype(np.float32), stride=stride,
                      padding=pad, dilation=dilation, groups=groups)


def _gen_pool(rng, shapes):
    a = _pick(rng, shapes, 4)
    if a is None:
        return None
    k = int(rng.choice([2, 3]))
    if min(shapes[a][2:]) < k:
        return None
    return {"src": a, "k": k, "stride": int(rng.choice([1, 2])),
            "kind": str(rng.choice(["max", "avg"]))}


def _pool(pool, src, k, stride, kind, numpy=False):
    if numpy:
        return ref.pool2d(pool[src], (k, k), (stride, stride), kind=kind)
    fn = dlc.max_pool2d if kind == "max" else dlc.avg_pool2d
    return fn(pool[src], k, stride)


def _gen_se(rng, shapes):
    a = _pick(rng, shapes, 4)
    if a is None:
        return None
    c = shapes[a][1]
    r = max(1, c // 2)
    return {"src": a, "w1": rng.uniform(-1, 1, (r, c, 1, 1)), "w2": rng.uniform(-1, 1, (c, r, 1, 1))}


def _se(pool, src, w1, w2, numpy=False):
    x = pool[src]
    if numpy:
        s = np.mean(x, axis=(2, 3), keepdims=True)
        s = ref.conv2d(s, w1)
        s = s * ref.sigmoid(s)
        return x * ref.sigmoid(ref.conv2d(s, w2))
    s = dlc.mean(x, axis=(2, 3), keepdims=True)
    s = dlc.silu(dlc.conv2d(s, w1.astype(np.float32)))
    return x * dlc.sigmoid(dlc.conv2d(s, w2.astype(np.float32)))


def _gen_batch_norm(rng, shapes):
    a = _pick(rng, shapes, 4)
    if a is None:
        return None
    c = shapes[a][1]
    return {"src": a, "mean": rng.uniform(-1, 1, c), "var": rng.uniform(0.2, 2, c),
            "gamma": rng.uniform(0.5, 1.5, c), "beta": rng.uniform(-1, 1, c)}


def _batch_norm(pool, src, mean, var, gamma, beta, numpy=False):
    if numpy:
        shape = (1, -1, 1, 1)
        return ((pool[src] - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + 1e-5)
                * gamma.reshape(shape) + beta.reshape(shape))
    return dlc.batch_norm(pool[src], *(v.astype(np.float32) for v in (mean, var, gamma, beta)))


ACTIVATIONS = {"relu": (lambda: dlc.nn.ReLU(), lambda x: np.maximum(x, 0)),
               "silu": (lambda: dlc.nn.SiLU(), lambda x: x * ref.sigmoid(x)),
               "tanh": (lambda: dlc.nn.Tanh(), np.tanh),
               "gelu": (lambda: dlc.nn.GELU(), ref.gelu)}


def _gen_nn_conv_block(rng, shapes):
    """dlc.nn's Conv2d -> BatchNorm2d -> activation, as a ResNet/MobileNet
    block has them."""
    a = _pick(rng, shapes, 4)
    if a is None:
        return None
    n, c, h, w = shapes[a]
    groups = int(rng.choice([g for g in (1, c) if c % g == 0]))
    f = groups * int(rng.integers(1, 3))
    k = int(rng.choice([1, 3]))
    pad = k // 2
    stride = int(rng.choice([1, 2]))
    return {"src": a, "w": rng.uniform(-1, 1, (f, c // groups, k, k)),
            "b": rng.uniform(-1, 1, f), "stride": stride, "pad": pad, "groups": groups,
            "bn": [rng.uniform(-1, 1, f), rng.uniform(0.2, 2, f), rng.uniform(0.5, 1.5, f),
                   rng.uniform(-1, 1, f)],
            "act": str(rng.choice(sorted(ACTIVATIONS)))}


def _nn_conv_block(pool, src, w, b, stride, pad, groups, bn, act, numpy=False):
    if numpy:
        y = ref.conv2d(pool[src], w, b, (stride, stride), (pad, pad, pad, pad), (1, 1), groups)
        y = _batch_norm([y], 0, *bn, numpy=True)
        return ACTIVATIONS[act][1](y)
    f, cg, k, _ = w.shape
    conv = dlc.nn.Conv2d(cg * groups, f, k, stride=stride, padding=pad, groups=groups)
    conv.weight, conv.bias = w.astype(np.float32), b.astype(np.float32)
    norm = dlc.nn.BatchNorm2d(f)
    norm.running_mean, norm.running_var, norm.weight, norm.bias = (
        v.astype(np.float32) for v in bn)
    return dlc.nn.Sequential(conv, norm, ACTIVATIONS[act][0]())(pool[src])


def _gen_nn_linear(rng, shapes):
    a = _pick(rng, shapes)
    if not shapes[a]:
        return None
    k = shapes[a][-1]
    n = int(rng.integers(1, 9))
    return {"src": a, "w": rng.uniform(-1, 1, (n, k)), "b": rng.uniform(-1, 1, n),
            "act": str(rng.choice(sorted(ACTIVATIONS)))}


def _nn_linear(pool, src, w, b, act, numpy=False):
    if numpy:
        return ACTIVATIONS[act][1](pool[src] @ w.T + b)
    linear = dlc.nn.Linear(w.shape[1], w.shape[0])
    linear.weight, linear.bias = w.astype(np.float32), b.astype(np.float32)
    return ACTIVATIONS[act][0]()(linear(pool[src]))


def _gen_cast(rng, shapes):
    return {"src": _pick(rng, shapes), "dtype": str(rng.choice(["float16", "float64"]))}


def _cast(pool, src, dtype, numpy=False):
    """A round trip through another float type (float16 rounds: within the
    tolerance, one float16 ulp is 2^-11 relative)."""
    if numpy:
        return pool[src].astype(dtype).astype(np.float64)
    return dlc.astype(dlc.astype(pool[src], np.dtype(dtype)), np.float32)


def _wrap(fn):
    return lambda pool, **p: fn(pool, **p), lambda pool, **p: fn(pool, numpy=True, **p)


def _gen_conv3x3(rng, shapes):
    """A 3x3 convolution of stride 1 (dl-winograd's, in the variant that
    transforms every one), padded unevenly, with or without a bias."""
    a = _pick(rng, shapes, 4)
    if a is None:
        return None
    n, c, h, w = shapes[a]
    pad = tuple(int(p) for p in rng.integers(0, 3, size=4))
    if h + pad[0] + pad[1] < 3 or w + pad[2] + pad[3] < 3:
        return None
    f = int(rng.integers(1, 6))
    return {"src": a, "w": rng.uniform(-1, 1, size=(f, c, 3, 3)),
            "b": rng.uniform(-1, 1, size=f) if rng.random() < 0.5 else None, "pad": pad}


def _conv3x3(pool, src, w, b, pad, numpy=False):
    if numpy:
        return ref.conv2d(pool[src], w, b, (1, 1), pad)
    return dlc.conv2d(pool[src], w.astype(np.float32),
                      None if b is None else b.astype(np.float32), padding=pad)


STEPS = {}
for _name, _gen, _fn in [
        ("unary", _gen_unary, _unary), ("binary", _gen_binary, _binary),
        ("reduce", _gen_reduce, _reduce), ("transpose", _gen_transpose, _transpose),
        ("reshape", _gen_reshape, _reshape), ("slice", _gen_slice, _slice),
        ("concat", _gen_concat, _concat), ("matmul", _gen_matmul, _matmul),
        ("softmax", _gen_softmax, _softmax), ("layer_norm", _gen_layer_norm, _layer_norm),
        ("conv", _gen_conv, _conv), ("conv3x3", _gen_conv3x3, _conv3x3),
        ("pool", _gen_pool, _pool), ("se", _gen_se, _se),
        ("batch_norm", _gen_batch_norm, _batch_norm),
        ("nn_conv_block", _gen_nn_conv_block, _nn_conv_block),
        ("nn_linear", _gen_nn_linear, _nn_linear), ("cast", _gen_cast, _cast)]:
    STEPS[_name] = (_gen,) + _wrap(_fn)


def random_program(rng):
    inputs = []
    for _ in range(int(rng.integers(1, 4))):
        if rng.random() < 0.5:
            inputs.append((int(rng.integers(1, 3)), int(rng.integers(1, 5)),
                           int(rng.integers(3, 9)), int(rng.integers(3, 9))))
        else:
            rank = int(rng.integers(1, 4))
            inputs.append(tuple(int(rng.integers(1, 7)) for _ in range(rank)))
    shapes = list(inputs)
    steps = []
    kinds = list(STEPS)
    for _ in range(int(rng.integers(2, 12))):
        kind = str(rng.choice(kinds))
        params = STEPS[kind][0](rng, shapes)
        if params is None:
            continue
        try:
            arrays = [np.zeros(s) for s in shapes]
            value = STEPS[kind][2](arrays, **params)
        except (ValueError, IndexError):
            continue
        if value.size == 0 or value.ndim == 0 and kind == "reshape":
            continue
        steps.append((kind, params))
        shapes.append(tuple(value.shape))
    return Program(inputs, steps)


def run(program, arrays, variant):
    fn = dlc.jit(lambda *xs: program.build(list(xs), "dlc"), **(variant or {}))
    return fn(*[a.astype(np.float32) for a in arrays])


def mismatch(program, arrays, variant):
    """None if dlc matches numpy in float64, else a description."""
    # The reference reads the very float32 inputs dlc gets.
    wants = program.build([a.astype(np.float32).astype(np.float64) for a in arrays], "numpy")
    try:
        gots = run(program, arrays, variant)
    except Exception as error:  # noqa: BLE001 - every failure is a finding
        return f"{type(error).__name__}: {str(error)[:300]}"
    gots = gots if isinstance(gots, tuple) else (gots,)
    for number, (got, want) in enumerate(zip(gots, wants)):
        want = np.asarray(want)
        if got.shape != want.shape:
            return f"value {number}: shape {got.shape}, expected {want.shape}"
        scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
        bad = np.abs(got.astype(np.float64) - want) > 1e-3 * scale + 1e-3 * np.abs(want)
        bad &= ~(np.isnan(want) & np.isnan(got))
        if np.any(bad):
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            return (f"value {number} at {index}: {got[index]} vs {want[index]} "
                    f"(scale {scale:.3g})")
    return None


def shrink(program, arrays, variant):
    """Removes steps while the disagreement persists (each removal keeps the
    program valid or is skipped)."""
    steps = list(program.steps)
    changed = True
    while changed:
        changed = False
        for i in range(len(steps) - 1, -1, -1):
            trial = Program(program.inputs, steps[:i] + steps[i + 1:])
            try:
                if trial.steps and mismatch(trial, arrays, variant):
                    steps = trial.steps
                    changed = True
            except (ValueError, IndexError, KeyError):
                continue
    return Program(program.inputs, steps)


def fuzz(count, seed, progress=True):
    rng = np.random.default_rng(seed)
    findings = []
    start = time.time()
    for index in range(count):
        program = random_program(rng)
        if not program.steps:
            continue
        arrays = [rng.uniform(-2, 2, size=s) for s in program.inputs]
        variant = VARIANTS[index % len(VARIANTS)]
        for option in ([None, variant] if variant else [None]):
            problem = mismatch(program, arrays, option)
            if problem:
                small = shrink(program, arrays, option)
                findings.append((index, option, problem, small.source()))
                break
        if progress and index % 50 == 0:
            print(f"  {index}/{count} programs, {len(findings)} findings "
                  f"({time.time() - start:.0f} s)", file=sys.stderr)
    return findings


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    findings = fuzz(args.count, args.seed)
    for index, option, problem, source in findings:
        print(f"program {index} (jit options {option}): {problem}\n{source}\n")
    print(f"{args.count} programs, {len(findings)} disagreements")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
