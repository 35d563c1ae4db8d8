"""Auto-tuning's speed table (issue 35): dlc untuned, dlc tuned by
``dlc.tune`` within a budget, and the peers.

Models (random weights, seeded as in ``bench/zoo_speed.py``): timm ResNet-50,
EfficientNet-B0 and transformers' BERT-base at batch 1 by default. For each,
one process tunes (``--seconds`` of search, the records in
``--records-dir``), then ``bench/zoo_speed.py``'s workers time ``dlc-torch``
without records (``DLC_TUNING_RECORDS=off``), ``dlc-torch`` with them, and
onnxruntime, each alone in its own process. Square f32 matmuls (x @ W, W a
constant: a linear layer) are tuned and timed against numpy (OpenBLAS) the
same way. The table says which CPU it ran on.

    .venv/bin/python bench/tune_speed.py [--models resnet50 efficientnet_b0 bert]
        [--matmuls 256 512 1024 2048] [--seconds 600] [--threads 2]
        [--records-dir DIR] [--json FILE]

``make bench`` runs it with ``TUNE_SECONDS`` (default 120) per model: a
budget that shows the mechanics; the issue's target is 30 minutes.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_speed  # noqa: E402


def _matmul(n):
    rng = np.random.default_rng(n)
    w = rng.standard_normal((n, n)).astype(np.float32)
    x = rng.standard_normal((n, n)).astype(np.float32)
    return w, x


def tune_worker(kind, name, batch, seconds, records):
    """Runs in its own process: tunes model `name` (or the n x n matmul)."""
    import torch

    import dlc
    if kind == "matmul":
        w, x = _matmul(int(name))
        f, args = dlc.jit(lambda a: a @ w, tuning_records="off"), [x]
    else:
        module, inputs = zoo_speed.build(name, batch)
        with torch.no_grad():
            f = dlc.from_torch(module, *[torch.from_numpy(a) for a in inputs],
                               tuning_records="off")
        args = inputs
    summary = dlc.tune(f, *args, records=records, seconds=seconds, progress=False)
    return {"tasks": len(summary.tasks), "trials": summary.trials,
            "failures": summary.failures, "tune_s": summary.seconds,
            "tuned_tasks": sum(r.strategy != r.task.heuristic for r in summary.tasks
                               if r.strategy),
            "estimated_speedup": summary.estimated_speedup}


def matmul_worker(system, n, records, threads):
    """Times the n x n product in its own process: numpy, or dlc with or
    without records."""
    w, x = _matmul(n)
    if system == "numpy":
        call = lambda: x @ w  # noqa: E731
    else:
        import dlc
        dlc.set_num_threads(threads)
        f = dlc.jit(lambda a: a @ w, tuning_records=records if system == "dlc-tuned" else "off")
        f(x)
        call = lambda: f(x)  # noqa: E731
    call()
    times = []
    deadline = time.perf_counter() + 2.0
    while len(times) < 5 or (time.perf_counter() < deadline and len(times) < 200):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return {"ms": statistics.median(times) * 1e3}


def _run(command, env, timeout):
    process = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    if process.returncode != 0:
        raise RuntimeError((process.stderr.strip().splitlines() or ["failed"])[-1][:300])
    return json.loads(process.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="*", default=["resnet50", "efficientnet_b0", "bert"])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--matmuls", nargs="*", type=int, default=[256, 512, 1024, 2048])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--records-dir", default=None)
    parser.add_argument("--json")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        kind = args.worker[0]
        if kind in ("model", "matmul"):
            facts = tune_worker(kind, args.worker[1], args.batch, args.seconds, args.worker[2])
        else:
            facts = matmul_worker(kind, int(args.worker[1]), args.worker[2], args.threads)
        print(json.dumps(facts))
        return 0

    folder = os.path.abspath(args.records_dir or os.path.join("bench", "results", "tuning"))
    os.makedirs(folder, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    me = [sys.executable, os.path.abspath(__file__), "--threads", str(args.threads),
          "--seconds", str(args.seconds), "--batch", str(args.batch)]
    rows = []
    from dlc.target import describe_host
    cpu = describe_host()
    print(f"dlc.tune speed on {cpu}, {args.threads} threads, tuning budget "
          f"{args.seconds:g} s per model; each system alone in its own process",
          file=sys.stderr)
    for n in args.matmuls:
        records = os.path.join(folder, f"matmul{n}.jsonl")
        row = {"model": f"matmul {n}x{n}x{n}", "batch": n}
        try:
            row["tuning"] = _run(me + ["--worker", "matmul", str(n), records], env, None)
            for system in ("numpy", "dlc-untuned", "dlc-tuned"):
                row[system] = _run(me + ["--worker", system, str(n), records], env, 600)["ms"]
        except RuntimeError as error:
            row["error"] = str(error)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    zoo_args = argparse.Namespace(threads=args.threads, repeats=args.repeats, seconds=10.0,
                                  timeout=1800, profile=0, systems=None)
    for name in args.models:
        records = os.path.join(folder, f"{name}-b{args.batch}.jsonl")
        row = {"model": name, "batch": args.batch}
        try:
            row["tuning"] = _run(me + ["--worker", "model", name, records], env, None)
        except RuntimeError as error:
            row["error"] = str(error)
            rows.append(row)
            continue
        for label, value, systems in (("dlc-untuned", "off", ["dlc-torch", "onnxruntime"]),
                                      ("dlc-tuned", records, ["dlc-torch"])):
            os.environ["DLC_TUNING_RECORDS"] = value
            zoo_args.systems = systems
            zoo = zoo_speed.run_row(name, args.batch, zoo_args, lambda text: None)
            for system, facts in zoo["systems"].items():
                key = label if system == "dlc-torch" else system
                row[key] = facts["ms"]
            for system, why in zoo["failed"].items():
                row.setdefault("failed", {})[label if system == "dlc-torch" else system] = why
        os.environ.pop("DLC_TUNING_RECORDS", None)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)

    print(f"\n| model | untuned ms | tuned ms | tuned / untuned | peer ms | peer / tuned | "
          f"tasks | trials | tuned tasks |\n|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        peer = row.get("numpy", row.get("onnxruntime"))
        untuned, tuned = row.get("dlc-untuned"), row.get("dlc-tuned")
        t = row.get("tuning", {})

        def cell(v, f=".2f"):
            return "-" if v is None else f"{v:{f}}"
        print(f"| {row['model']} | {cell(untuned)} | {cell(tuned)} | "
              f"{cell(untuned / tuned if untuned and tuned else None)}x | {cell(peer)} | "
              f"{cell(peer / tuned if peer and tuned else None)}x | {t.get('tasks', '-')} | "
              f"{t.get('trials', '-')} | {t.get('tuned_tasks', '-')} |")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"cpu": cpu, "threads": args.threads, "seconds": args.seconds,
                       "rows": rows}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
