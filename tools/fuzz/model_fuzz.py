#!/usr/bin/env python3
"""The importer fuzzer: random but valid PyTorch modules through every
frontend, compared with eager.

Each program (``dlc.zoo.random_models``: elementwise math, reductions,
views, slicing, indexing, boolean masks, in-place updates, matmuls,
convolutions, pooling, normalizations, attention) is exported with
``torch.export`` and both of torch's ONNX exporters, imported with
``dlc.from_torch`` / ``dlc.from_onnx``, compiled and run, and its outputs
compared with eager PyTorch (``dlc.zoo.check``: max |dlc - eager| <= 1e-4 x
max |eager|, or within 4x eager float32's own error against float64).

A clear refusal (``UnsupportedOpError``, ``DataDependentShapeError``) is a
pass, and so is a failure of torch itself (its exporter failed, or exported
another computation than eager: onnx's reference evaluator says which). A
wrong answer, any other error, a crash or a hang is a finding: it is shrunk
to the shortest prefix of the program that still shows it, and written to
the reproducer folder as the program's text and the command that reruns it.
Programs run in worker processes (``python -m dlc.zoo``'s), so a crash or a
hang is recorded and the run goes on.

  python tools/fuzz/model_fuzz.py --count 200 --seed 1 --out fuzz-findings
  python tools/fuzz/model_fuzz.py --reproduce random/1/11/2 --frontends onnx-dynamo
  python tools/fuzz/model_fuzz.py --count 200 --frontends torch-dynamic   # dynamic batch

Exit status: 0 if no finding, 1 otherwise.
"""

import argparse
import collections
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PASSING = ("ok", "unsupported", "export-failed", "export-wrong")
FINDINGS = ("mismatch", "error", "crash", "timeout", "model-failed")


def _dlc():
    try:
        import dlc  # noqa: F401
    except ImportError:
        sys.path.insert(0, os.path.join(ROOT, "build", "python_packages"))


def run(keys, frontends, jobs=None, timeout=300.0, progress=True):
    """Records (dicts of dlc.zoo.check.Result) of every key x frontend, from
    the zoo's worker processes."""
    _dlc()
    from dlc.zoo.__main__ import run_all
    started, bad = time.monotonic(), [0]

    def report(done, total, result):
        bad[0] += sum(r["status"] in FINDINGS for r in result)
        if progress and (done % max(1, total // 20) == 0 or done == total):
            print(f"[{done}/{total}] programs, findings {bad[0]}, "
                  f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return run_all(keys, frontends, jobs, timeout, report)


def shrink(record, timeout=300.0):
    """The shortest prefix of the record's program that shows the same
    status through the same frontend: (key, record)."""
    from dlc.zoo import random_models
    seed, index = (int(p) for p in record["model"].split("/")[1:3])
    total = len(random_models.program(seed, index).steps)
    for steps in range(1, total):
        key = f"random/{seed}/{index}/{steps}"
        again = run([key], [record["frontend"]], jobs=1, timeout=timeout, progress=False)[0]
        if again["status"] == record["status"]:
            return key, again
    return record["model"], record


def write_reproducer(out, key, record):
    from dlc.zoo import random_models
    parts = key.split("/")[1:]
    steps = int(parts[2]) if len(parts) > 2 else None
    os.makedirs(out, exist_ok=True)
    name = f"model-{record['status']}-{record['frontend']}-{'-'.join(parts)}.txt"
    path = os.path.join(out, name)
    with open(path, "w") as f:
        f.write(f"# {record['status']} through {record['frontend']}: {record['detail']}\n"
                f"# reproduce: python tools/fuzz/model_fuzz.py --reproduce {key} "
                f"--frontends {record['frontend']}\n")
        f.write(random_models.describe(int(parts[0]), int(parts[1]), steps) + "\n")
    return path


def fuzz(count, seed, frontends, out=None, jobs=None, timeout=300.0, progress=True,
         shrink_findings=True, json_path=None):
    """Runs programs (seed, 0..count-1); returns (counts by status, findings
    as [(key, record)])."""
    keys = [f"random/{seed}/{index}" for index in range(count)]
    records = run(keys, frontends, jobs, timeout, progress)
    if json_path:
        import json
        with open(json_path, "w") as f:
            json.dump(records, f, indent=1)
    counts = collections.Counter(r["status"] for r in records)
    findings = []
    for record in records:
        if record["status"] not in FINDINGS:
            continue
        key, shrunk = (shrink(record, timeout) if shrink_findings and
                       record["status"] != "model-failed"
                       else (record["model"], record))
        findings.append((key, shrunk))
        if out:
            write_reproducer(out, key, shrunk)
    return counts, findings


def main(argv=None):
    _dlc()
    from dlc.zoo.__main__ import parse_frontends
    from dlc.zoo.check import DEFAULT_FRONTENDS, FRONTENDS
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--frontends", default=",".join(DEFAULT_FRONTENDS),
                        help=f"comma-separated, of {', '.join(FRONTENDS)} (torch-dynamic: "
                             f"from_torch with dynamic_batch=True, at two batch sizes)")
    parser.add_argument("--out", default="fuzz-findings")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds per program (all its frontends) before a hang")
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--json", default=None,
                        help="write every run's record (status, detail) to this file")
    parser.add_argument("--reproduce", metavar="KEY",
                        help="run one program (random/<seed>/<index>[/<steps>]) and "
                             "print it with its results")
    options = parser.parse_args(argv)
    frontends = parse_frontends(parser, options.frontends)
    if options.reproduce:
        from dlc.zoo import random_models
        parts = options.reproduce.split("/")[1:]
        print(random_models.describe(int(parts[0]), int(parts[1]),
                                     int(parts[2]) if len(parts) > 2 else None))
        bad = False
        for r in run([options.reproduce], frontends, 1, options.timeout, False):
            print(f"{r['frontend']}: {r['status']} {r['detail']}")
            bad |= r["status"] in FINDINGS
        return 1 if bad else 0
    counts, findings = fuzz(options.count, options.seed, frontends, options.out,
                            options.jobs, options.timeout, shrink_findings=not options.no_shrink,
                            json_path=options.json)
    total = sum(counts.values())
    print(f"programs {options.count} (seed {options.seed}), runs {total}: " +
          ", ".join(f"{status} {counts[status]}" for status in PASSING + FINDINGS
                    if counts[status]))
    for key, record in findings:
        print(f"  {record['status']} through {record['frontend']}: {key}: "
              f"{record['detail'][:300]}")
    if findings:
        print(f"reproducers in {options.out}/")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
