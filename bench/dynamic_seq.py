"""One compiled BERT-base for every sequence length (issue 30).

transformers' BertModel in its default configuration (BERT-base: 12 layers,
768 wide, 12 heads; random weights), batch 1, imported once with
`dlc.from_torch(..., dynamic_shapes=...)` (the sequence dynamic, 1 to 512) and
run at several lengths; each length also compiled for its static shape, and
PyTorch eager. Each system runs alone in its own process with the same
number of threads; medians of `--repeats` calls after one warm-up. The
dynamic function must compile once and match eager at every length
(max |dlc - eager| <= 1e-4 x max |eager|).

    .venv/bin/python bench/dynamic_seq.py [--threads 2] [--lengths 1 8 32 128 512]
                                          [--layers 12] [--json FILE]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def _model(layers):
    import torch
    import transformers
    torch.manual_seed(0)
    return transformers.BertModel(transformers.BertConfig(num_hidden_layers=layers)).eval()


def _inputs(length):
    import numpy as np
    rng = np.random.default_rng(length)
    ids = rng.integers(0, 30522, (1, length)).astype(np.int64)
    return ids, np.ones((1, length), np.int64)


def _time(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def compiled(model, example, **kwargs):
    """(dlc.from_torch of `model` at the torch tensors `example`, seconds to
    import, compile and make the first call)."""
    import torch

    import dlc
    start = time.perf_counter()
    with torch.no_grad():
        f = dlc.from_torch(model, *example, **kwargs)
    f(*[t.numpy() for t in example])
    return f, time.perf_counter() - start


def _worker(system, args):
    import numpy as np
    import torch
    torch.set_num_threads(args.threads)
    model = _model(args.layers)
    rows = []
    if system == "torch":
        with torch.no_grad():
            for n in args.lengths:
                ids, mask = (torch.from_numpy(a) for a in _inputs(n))
                rows.append({"length": n, "ms": _time(lambda: model(ids, attention_mask=mask),
                                                      args.repeats)})
        return rows
    import dlc
    dlc.set_num_threads(args.threads)
    example = [torch.from_numpy(a) for a in _inputs(8)]
    if system == "dlc-dynamic":
        seq = torch.export.Dim("seq", min=1, max=512)
        f, compile_s = compiled(model, example, dynamic_shapes={
            "input_ids": {1: seq}, "attention_mask": {1: seq}})
    for n in args.lengths:
        ids, mask = _inputs(n)
        with torch.no_grad():
            want = model(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
        want = want.last_hidden_state.numpy()
        if system == "dlc-static":
            f, compile_s = compiled(model, [torch.from_numpy(ids), torch.from_numpy(mask)])
        got = f(ids, mask)[0]
        error = float(np.abs(got - want).max() / np.abs(want).max())
        rows.append({"length": n, "ms": _time(lambda: f(ids, mask), args.repeats),
                     "rel_error": error, "compile_s": round(compile_s, 1)})
    if system == "dlc-dynamic":
        rows.append({"compilations": f._jit.cache_size()})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--lengths", type=int, nargs="+", default=[1, 8, 32, 128, 512])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--systems", nargs="+",
                        default=["torch", "dlc-dynamic", "dlc-static"])
    parser.add_argument("--json", default=None)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_worker(args.worker, args)))
        return 0
    extra = ["--layers", str(args.layers), "--lengths", *map(str, args.lengths)]
    return run_systems(__file__, args, extra, "length", args.lengths,
                       f"BERT-base (transformers, {args.layers} layers), batch 1, "
                       f"{args.threads} threads, ms per call (medians)")


def run_systems(script, args, extra, column, sizes, title):
    """Runs each of args.systems alone in its own process (`script --worker
    SYSTEM`), then prints one row per size: its median ms (and error
    against eager), the dynamic function's compilations and compile times."""
    results = {}
    for system in args.systems:
        command = [sys.executable, script, "--worker", system, "--threads",
                   str(args.threads), "--repeats", str(args.repeats), *extra]
        env = dict(os.environ, DLC_CACHE_DIR="off", OMP_NUM_THREADS=str(args.threads))
        out = subprocess.run(command, capture_output=True, text=True, env=env)
        if out.returncode:
            print(out.stderr[-3000:], file=sys.stderr)
            return 1
        results[system] = json.loads(out.stdout.strip().splitlines()[-1])
    print(title)
    header = [column] + args.systems
    print(" | ".join(f"{h:>12s}" for h in header))
    for i, n in enumerate(sizes):
        cells = [f"{n:>12}"]
        for system in args.systems:
            row = results[system][i]
            text = f"{row['ms']:.2f}"
            if "rel_error" in row:
                text += f" ({row['rel_error']:.0e})"
            cells.append(f"{text:>12s}")
        print(" | ".join(cells))
    if "dlc-dynamic" in results:
        dynamic = results["dlc-dynamic"]
        print(f"dlc-dynamic: {dynamic[-1]['compilations']} compilation(s), "
              f"{dynamic[0]['compile_s']} s")
    if "dlc-static" in results:
        print("dlc-static compile s: " + ", ".join(
            f"{r[column]}: {r['compile_s']}" for r in results["dlc-static"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
