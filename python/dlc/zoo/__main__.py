"""Runs the zoo: every model through every frontend, each model in its own
process (a crash or a hang is a finding, not the end of the run), and writes
the results as JSON and as the page docs/zoo.md.

    python -m dlc.zoo [--jobs N] [--only SUBSTRING ...] [--frontends torch,...]
                      [--text-only | --image-only] [--json FILE] [--markdown FILE]
                      [--timeout SECONDS]

`make zoo-dynamic` runs the text models with a dynamic batch and sequence
(the torch-dynamic-seq frontend) and writes docs/zoo_dynamic.md;
`make zoo-dynamic-image` the timm models with a dynamic batch and image size
(torch-dynamic-image, onnx-dynamic-image): docs/zoo_dynamic_image.md.

The compile cache is off in the workers (a cached library cannot hide a
compile failure).
"""

import argparse
import concurrent.futures
import json
import os
import queue
import re
import subprocess
import sys
import time

from . import catalog
from ..target import describe_host
from .check import DEFAULT_FRONTENDS, FRONTENDS, RTOL

STATUSES = ("ok", "mismatch", "unsupported", "error", "crash", "timeout", "export-wrong",
            "export-failed", "model-failed")


def _serve(frontends):
    """In a worker process: checks the models named on stdin, one per line,
    printing one JSON line per frontend and then "done" (torch, transformers
    and timm are imported once per worker, not once per model)."""
    import dataclasses
    import warnings
    warnings.simplefilter("ignore")
    from .check import check
    for line in sys.stdin:
        key = line.strip()
        if not key:
            continue
        model = catalog.find(key)
        for frontend in frontends:
            print(json.dumps(dataclasses.asdict(check(model, frontend))), flush=True)
        print("done", flush=True)


class Worker:
    """A worker process that checks models one at a time; one that crashes or
    runs past the time limit is killed and replaced, and the model is
    recorded as a crash or a timeout."""

    def __init__(self, frontends):
        self.frontends = frontends
        self.process = None

    def _start(self):
        import queue
        import threading
        env = dict(os.environ, DLC_CACHE_DIR="off", TOKENIZERS_PARALLELISM="false",
                   HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dlc.zoo", "--serve", "--frontends",
             ",".join(self.frontends)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env, bufsize=1)
        self.lines = queue.Queue()
        self.errors = []

        def pump(stream, sink, end):
            for line in stream:
                sink(line)
            if end:
                sink(None)     # the worker's stdout closed: it has exited

        threading.Thread(target=pump, args=(self.process.stdout, self.lines.put, True),
                         daemon=True).start()
        threading.Thread(target=pump, args=(self.process.stderr, self._stderr, False),
                         daemon=True).start()

    def _stderr(self, line):
        self.errors.append(line)
        del self.errors[:-20]

    def stop(self):
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def run(self, key, timeout):
        import queue
        if self.process is None or self.process.poll() is not None:
            self._start()
        start = time.perf_counter()
        self.process.stdin.write(key + "\n")
        self.process.stdin.flush()
        results, status = {}, None
        while True:
            left = timeout - (time.perf_counter() - start)
            try:
                line = self.lines.get(timeout=max(left, 0.01))
            except queue.Empty:
                status = "timeout"
                break
            if line is None:
                status = "crash"
                break
            if line.strip() == "done":
                break
            if line.startswith("{"):
                record = json.loads(line)
                results[record["frontend"]] = record
        seconds = round(time.perf_counter() - start, 1)
        if status is not None:
            code = self.process.poll()
            self.stop()
            if status == "timeout":
                detail = f"no result after {timeout:g} s"
            else:
                detail = f"the worker exited with {code}: " + " | ".join(
                    line.strip() for line in self.errors[-3:])
            for frontend in self.frontends:
                if frontend not in results:
                    results[frontend] = dict(model=key, frontend=frontend, status=status,
                                             detail=detail, max_rel_error=None,
                                             seconds=seconds)
                    detail = "not run: an earlier frontend of this model " + status + "ed"
        return [results[f] for f in self.frontends]


def parse_frontends(parser, text):
    """The frontends of a comma-separated list, or the parser's error."""
    frontends = [f for f in text.split(",") if f]
    for f in frontends:
        if f not in FRONTENDS:
            parser.error(f"unknown frontend {f!r}; known: {', '.join(FRONTENDS)}")
    return frontends


def run_all(keys, frontends, jobs, timeout, report=None):
    """Records of every key through every frontend, on `jobs` workers (each
    key in one worker: a crash or a hang is its record); `report(done,
    total, records_of_one_key)` as each key finishes."""
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(keys)))
    workers = queue.Queue()
    for _ in range(jobs):
        workers.put(Worker(list(frontends)))

    def run(key):
        worker = workers.get()
        try:
            return worker.run(key, timeout)
        finally:
            workers.put(worker)

    records = []
    try:
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            futures = [pool.submit(run, k) for k in keys]
            for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
                result = future.result()
                records.extend(result)
                if report:
                    report(done, len(keys), result)
    finally:
        while not workers.empty():
            workers.get().stop()
    return records


def _versions():
    import importlib.metadata as md
    out = {}
    for name in ("torch", "transformers", "timm", "onnx", "onnxscript"):
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = None
    return out


def markdown(records, meta):
    lines = ["# The model zoo", "",
             "Generated by `python -m dlc.zoo` (do not edit). Every architecture is built "
             "from a small configuration with random weights (`python/dlc/zoo/catalog.py`), "
             "run through each frontend and compared with PyTorch eager: "
             f"**ok** means max |dlc − eager| ≤ {RTOL:g} × max |eager|.", "",
             f"Run on {meta['date']}, CPU: {meta['cpu']}; "
             + ", ".join(f"{k} {v}" for k, v in meta["versions"].items() if v) + ".", ""]
    frontends = meta["frontends"]
    counted = [r for r in records
               if r["status"] not in ("export-failed", "export-wrong", "model-failed")]
    ok = sum(r["status"] == "ok" for r in counted)
    lines.append(f"**{ok} of {len(counted)}** (model, frontend) pairs match eager "
                 f"({100.0 * ok / max(len(counted), 1):.1f}%); pairs where torch's own "
                 f"exporter fails or exports another computation are listed but not counted.")
    lines.append("")
    lines.append("| frontend | " + " | ".join(STATUSES) + " |")
    lines.append("|---|" + "---|" * len(STATUSES))
    for frontend in frontends:
        row = [sum(r["status"] == s and r["frontend"] == frontend for r in records)
               for s in STATUSES]
        lines.append(f"| {frontend} | " + " | ".join(map(str, row)) + " |")
    for library in ("transformers", "timm"):
        mine = [r for r in records if r["model"].startswith(library + "/")]
        if not mine:
            continue
        lines += ["", f"## {library}", "",
                  f"{sum(r['status'] == 'ok' for r in mine)} of {len(mine)} pairs ok; "
                  f"– marks a pair this record did not run.", "",
                  "| model | " + " | ".join(frontends) + " |",
                  "|---|" + "---|" * len(frontends)]
        by_model = {}
        for r in records:
            if r["model"].startswith(library + "/"):
                by_model.setdefault(r["model"], {})[r["frontend"]] = r
        for key in sorted(by_model):
            cells = []
            for frontend in frontends:
                r = by_model[key].get(frontend)
                if r is None:
                    cells.append("–")
                elif r["status"] == "ok":
                    cells.append(f"ok ({r['max_rel_error']:.0e})")
                else:
                    cells.append(f"**{r['status']}**")
            lines.append(f"| {key.split('/', 1)[1]} | " + " | ".join(cells) + " |")
    failures = [r for r in records if r["status"] != "ok"]
    if failures:
        lines += ["", "## Why the others fail", ""]
        for r in sorted(failures, key=lambda r: (r["model"], r["frontend"])):
            detail = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", r["detail"]).split())
            if len(detail) > 400:
                detail = detail[:400] + " ..."
            lines.append(f"- `{r['model']}` / {r['frontend']} — {r['status']}: {detail}")
    return "\n".join(lines) + "\n"


def _merge(args):
    by_pair, meta = {}, None
    for path in args.merge:
        with open(path) as f:
            data = json.load(f)
        meta = data                 # the newest run describes the machine
        for r in data["results"]:
            by_pair[r["model"], r["frontend"]] = r
    frontends = [f for f in FRONTENDS if any(p[1] == f for p in by_pair)]
    meta = dict(date=meta["date"], cpu=meta["cpu"], versions=meta["versions"],
                frontends=frontends)
    records = sorted(by_pair.values(),
                     key=lambda r: (r["model"], frontends.index(r["frontend"])))
    _write(args, records, meta)
    return 0


def _write(args, records, meta):
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(meta, results=records), f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(records, meta))


def _is_text_model(model):
    from .check import is_text
    if model.library != "transformers":
        return False
    try:
        return is_text(model.build()[1])
    except Exception:  # noqa: BLE001 - a model the library cannot build is not text
        return False


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dlc.zoo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", nargs="*", default=None,
                        help="run the models whose key contains one of these")
    parser.add_argument("--frontends", default=",".join(DEFAULT_FRONTENDS),
                        help=f"comma-separated, of {', '.join(FRONTENDS)}")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds per model (all its frontends)")
    parser.add_argument("--text-only", action="store_true",
                        help="only the text models (token ids and masks of one "
                             "[batch, seq] shape: what torch-dynamic-seq takes)")
    parser.add_argument("--image-only", action="store_true",
                        help="only the timm models (one float [N, C, H, W] image: what "
                             "torch-dynamic-image takes)")
    parser.add_argument("--json", default=None)
    parser.add_argument("--markdown", default=None)
    parser.add_argument("--merge", nargs="+", default=None, metavar="JSON",
                        help="run nothing: write --markdown/--json from the records of "
                             "earlier runs (a later file's record of a pair wins)")
    args = parser.parse_args(argv)
    frontends = parse_frontends(parser, args.frontends)
    if args.serve:
        _serve(frontends)
        return 0
    if args.merge:
        return _merge(args)
    keys = [m.key for m in catalog.all_models()
            if not args.only or any(s.lower() in m.key.lower() for s in args.only)]
    if args.text_only:
        keys = [k for k in keys if _is_text_model(catalog.find(k))]
    if args.image_only:
        keys = [k for k in keys if catalog.find(k).library == "timm"]
    if not keys:
        parser.error("no zoo model matches --only")
    def report(done, total, result):
        for r in result:
            mark = "ok" if r["status"] == "ok" else r["status"].upper()
            print(f"[{done}/{total}] {r['model']:48s} {r['frontend']:17s} "
                  f"{mark:13s} {r['seconds']:6.1f}s  {r['detail'][:100]}", flush=True)

    records = run_all(keys, frontends, args.jobs, args.timeout, report)
    records.sort(key=lambda r: (r["model"], frontends.index(r["frontend"])))
    meta = dict(date=time.strftime("%Y-%m-%d"), cpu=describe_host(), versions=_versions(),
                frontends=frontends)
    _write(args, records, meta)
    ok = sum(r["status"] == "ok" for r in records)
    print(f"{ok} of {len(records)} pairs match eager")
    return 0


if __name__ == "__main__":
    sys.exit(main())
