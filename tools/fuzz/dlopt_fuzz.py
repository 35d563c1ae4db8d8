#!/usr/bin/env python3
"""A mutation fuzzer for dl-opt: dlc's passes must never abort or hang.

Seeds are the lit tests (each `// -----` chunk of test/**/*.mlir), run with
the dl-opt invocations of their RUN lines (the part before the first pipe,
without -verify-diagnostics) and with the whole CPU pipeline. Each input is
a seed with a few mutations, as an outside tester would make them: a line
deleted, duplicated or swapped with another, an integer (a shape, an
attribute) changed to an edge value, one type swapped for another, one op
name swapped for another of the same dialect, a static dimension of a tensor
type made dynamic wherever that type is written. Inputs are deterministic in
(seed, index).

A run is a finding when dl-opt dies of a signal (an assertion's abort, a
segfault) or hangs past the time limit. Exit code 1 with a diagnostic is
the right answer to a bad input, and so is success. A finding whose stack
shows no pass running and MLIR's parser at work is upstream's (the parser
of the pinned MLIR asserts on some types it accepts, e.g. a dense literal
whose element count overflows); it is counted apart and not a failure of
dlc. Each finding's input is written to the reproducer folder with the
command line and the first lines of the crash.

  python tools/fuzz/dlopt_fuzz.py --count 2000 --seed 1 --out fuzz-findings
  make fuzz FUZZ_COUNT=20000

Every pass of dlc is fuzzed alone as well: the pass list is read from
`dl-opt --help` (every registered pass whose name has `dl-` in it, so a new
pass is fuzzed without anyone adding it here), and a third of the inputs
(`--alone`) run one of them, chosen in turn, after dl-resolve-target (for
a CPU drawn from CPUS).

Exit status: 0 if dlc's code had no finding, 1 otherwise.
"""

import argparse
import hashlib
import os
import random
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DL_OPT = os.path.join(ROOT, "build", "bin", "dl-opt")

EDGE_INTEGERS = ["0", "1", "-1", "2", "3", "7", "64", "65536", "2147483647",
                 "4294967296", "9223372036854775807", "-9223372036854775808"]
TYPES = ["f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "index"]
INT_RE = re.compile(r"(?<![\w#%.])-?\d+(?![\w.])")
TYPE_RE = re.compile(r"\b(f16|bf16|f32|f64|i1|i8|i16|i32|i64|index)\b")
TENSOR_RE = re.compile(r"tensor<(?:[0-9?]+x)+[a-z0-9]+>")
OP_RE = re.compile(r"\b(dl|linalg|affine|memref|tensor|arith|vector|scf)\.([a-z_0-9]+)\b")
FULL_PIPELINE = ["--pass-pipeline=builtin.module(dl-cpu-pipeline)"]
# Targets a pass run alone is given (AVX-512, AVX2, NEON): the target-driven
# decisions differ between them.
CPUS = ["znver4", "znver3", "haswell", "neoverse-v1"]


def registered_passes(dl_opt=None):
    """Names of dlc's passes (not pipelines) that `dl-opt --help` lists."""
    text = subprocess.run([dl_opt or DL_OPT, "--help"], capture_output=True,
                          text=True, check=True).stdout
    names, section = set(), None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped == "Passes:":
            section = "passes"
        elif stripped == "Pass Pipelines:":
            section = "pipelines"
        elif section == "passes":
            match = re.match(r"\s{4,7}--((?:convert-)?dl-[a-z0-9-]+)\s+- ", line)
            if match:
                names.add(match.group(1))
    return sorted(names)


def alone(pass_name, cpu):
    """dl-opt arguments running one pass alone (after the target, which the
    pass may read), nested where the pass anchors (implicit nesting)."""
    if pass_name == "dl-resolve-target":
        return [f"--dl-resolve-target=cpu={cpu}"]
    return [f"--dl-resolve-target=cpu={cpu}", f"--{pass_name}"]


def seeds(root=ROOT):
    """(name, text, [dl-opt argument lists]) for every chunk of every lit test."""
    found = []
    for folder, _, files in sorted(os.walk(os.path.join(root, "test"))):
        for name in sorted(files):
            if not name.endswith(".mlir") or "Inputs" in folder:
                continue
            path = os.path.join(folder, name)
            text = open(path).read()
            commands = []
            for line in text.splitlines():
                match = re.match(r"\s*//\s*RUN:\s*dl-opt\s+%s\s+(.*)", line)
                if not match:
                    continue
                command = match.group(1).split("|")[0].replace("\\", " ")
                try:
                    args = shlex.split(command)
                except ValueError:
                    continue
                args = [a for a in args if a not in ("-verify-diagnostics",
                                                     "--verify-diagnostics",
                                                     "-split-input-file",
                                                     "--split-input-file")
                        and not a.startswith(">") and a not in ("-o", "/dev/null")]
                if args and args not in commands:
                    commands.append(args)
            if FULL_PIPELINE not in commands:
                commands.append(FULL_PIPELINE)
            relative = os.path.relpath(path, root)
            for index, chunk in enumerate(text.split("// -----")):
                body = "\n".join(l for l in chunk.splitlines()
                                 if not l.lstrip().startswith("//"))
                if "func.func" in body or "gpu.module" in body:
                    found.append((f"{relative}#{index}", body, commands))
    return found


def mutate(text, rng, count):
    lines = text.splitlines()
    for _ in range(count):
        if not lines:
            break
        kind = rng.randrange(8)
        i = rng.randrange(len(lines))
        if kind == 7:
            # a static dimension made dynamic, in every use of that type
            found = list(TENSOR_RE.finditer(lines[i]))
            if found:
                old = rng.choice(found).group(0)
                dims = old[len("tensor<"):-1].split("x")
                static = [k for k, d in enumerate(dims[:-1]) if d.isdigit()]
                if static:
                    dims[rng.choice(static)] = "?"
                    new = "tensor<" + "x".join(dims) + ">"
                    lines = [line.replace(old, new) for line in lines]
            continue
        if kind == 0 and len(lines) > 1:
            del lines[i]
        elif kind == 1:
            lines.insert(i, lines[i])
        elif kind == 2 and len(lines) > 1:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind in (3, 4):
            numbers = list(INT_RE.finditer(lines[i]))
            if numbers:
                m = rng.choice(numbers)
                lines[i] = lines[i][:m.start()] + rng.choice(EDGE_INTEGERS) + lines[i][m.end():]
        elif kind == 5:
            found = list(TYPE_RE.finditer(lines[i]))
            if found:
                m = rng.choice(found)
                lines[i] = lines[i][:m.start()] + rng.choice(TYPES) + lines[i][m.end():]
        else:
            found = list(OP_RE.finditer(lines[i]))
            others = OP_RE.findall(text)
            if found and others:
                m = rng.choice(found)
                dialect, op = rng.choice(others)
                lines[i] = lines[i][:m.start()] + f"{dialect}.{op}" + lines[i][m.end():]
    return "\n".join(lines) + "\n"


def classify(returncode, stderr, timed_out):
    """None (a proper answer), or (kind, signature) for a finding."""
    if timed_out:
        return "hang", "timeout"
    if returncode >= 0:
        return None
    lines = stderr.splitlines()
    head = next((l for l in lines if "Assertion" in l or "LLVM ERROR" in l
                 or "UNREACHABLE" in l), None)
    if head is None:
        frames = [l for l in lines if re.match(r"\s*#\d+ ", l)]
        head = next((re.sub(r"^\s*#\d+\s+0x[0-9a-f]+\s*", "", f) for f in frames
                     if "Signals" not in f and "libc.so" not in f
                     and "SignalHandler" not in f), f"signal {-returncode}")
    head = re.sub(r"0x[0-9a-f]+", "0x?", head)[:300]
    in_passes = "PassManager::run" in stderr or "runOnOperation" in stderr
    parsing = "parseSourceFile" in stderr or "Parser" in stderr or "parseOp" in stderr
    # dlc's own code on the stack (a dl op's verifier or type inference runs
    # under the parser too) makes it dlc's.
    ours = "mlir::dl::" in stderr
    kind = "upstream-parser" if parsing and not in_passes and not ours else "dlc"
    return kind, head


def _use_dl_opt(path):
    global DL_OPT
    DL_OPT = os.path.abspath(path)


def run_one(task):
    name, text, args, timeout = task
    start = time.monotonic()
    try:
        result = subprocess.run([DL_OPT, "-", *args], input=text, capture_output=True,
                                text=True, timeout=timeout)
        verdict = classify(result.returncode, result.stderr, False)
        stderr = result.stderr
    except subprocess.TimeoutExpired:
        verdict, stderr = classify(0, "", True), ""
    return name, text, args, verdict, stderr, time.monotonic() - start


def fuzz(count, seed, out=None, jobs=None, timeout=60.0, mutations=(1, 3),
         progress=True, root=ROOT, alone_fraction=1 / 3, passes=None):
    """Runs `count` mutated inputs; returns a dict of counts and findings.
    A fraction `alone_fraction` of them runs one pass of `passes` (default:
    every registered dl pass) alone, the passes taken in turn."""
    pool = seeds(root)
    if passes is None:
        passes = registered_passes() if alone_fraction else []
    rng = random.Random(seed)
    tasks, turn = [], 0
    for index in range(count):
        name, text, commands = pool[rng.randrange(len(pool))]
        local = random.Random(f"{seed}:{index}")
        mutated = mutate(text, local, local.randint(*mutations))
        if passes and local.random() < alone_fraction:
            args = alone(passes[(seed + turn) % len(passes)], local.choice(CPUS))
            turn += 1
        else:
            args = commands[local.randrange(len(commands))]
        tasks.append((f"{name}@{seed}:{index}", mutated, args, timeout))
    findings = {}
    stats = {"inputs": 0, "ok": 0, "diagnosed": 0, "dlc": 0, "upstream-parser": 0,
             "hang": 0}
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as executor:
        for done, (name, text, args, verdict, stderr, _) in enumerate(
                executor.map(run_one, tasks), 1):
            stats["inputs"] += 1
            if verdict is None:
                stats["ok"] += 1
            else:
                kind, signature = verdict
                stats[kind] += 1
                key = (kind, signature)
                if key not in findings:
                    findings[key] = (name, text, args, stderr)
                    if out:
                        write_reproducer(out, kind, signature, name, text, args, stderr)
            tty = sys.stderr.isatty()
            step = 100 if tty else max(100, count // 10)
            if progress and (done % step == 0 or done == count):
                elapsed = time.monotonic() - started
                width = 30
                bar = "#" * (width * done // count)
                print(f"{chr(13) if tty else ''}[{bar:<{width}}] {done}/{count} inputs, "
                      f"dlc findings {stats['dlc'] + stats['hang']}, upstream parser "
                      f"{stats['upstream-parser']}, {elapsed:.0f} s",
                      end="" if tty else "\n", file=sys.stderr, flush=True)
    if progress and sys.stderr.isatty():
        print(file=sys.stderr)
    stats["seconds"] = round(time.monotonic() - started, 1)
    return stats, findings


def write_reproducer(out, kind, signature, name, text, args, stderr):
    os.makedirs(out, exist_ok=True)
    digest = hashlib.sha1(f"{kind}{signature}".encode()).hexdigest()[:10]
    base = os.path.join(out, f"{kind}-{digest}")
    with open(base + ".mlir", "w") as f:
        f.write(f"// {kind}: {signature}\n// from {name}\n"
                f"// reproduce: dl-opt {base}.mlir {shlex.join(args)}\n{text}")
    with open(base + ".log", "w") as f:
        f.write(stderr[-20000:])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="fuzz-findings",
                        help="folder for reproducers (one per distinct finding)")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--alone", type=float, default=1 / 3,
                        help="fraction of the inputs run through one registered "
                             "dl pass alone (the rest: their lit RUN lines or "
                             "the whole CPU pipeline)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds before a run counts as a hang")
    parser.add_argument("--dl-opt", default=DL_OPT,
                        help="the dl-opt to fuzz (a copy keeps a long run "
                             "on one build while the tree is rebuilt)")
    options = parser.parse_args(argv)
    _use_dl_opt(options.dl_opt)
    if not os.path.exists(DL_OPT):
        sys.exit(f"{DL_OPT} is missing: run `make build` first")
    stats, findings = fuzz(options.count, options.seed, options.out, options.jobs,
                           options.timeout, alone_fraction=options.alone)
    print(f"inputs {stats['inputs']} (seed {options.seed}): diagnosed or succeeded "
          f"{stats['ok']}, dlc aborts {stats['dlc']}, hangs {stats['hang']}, upstream "
          f"parser aborts {stats['upstream-parser']} ({stats['seconds']} s)")
    for (kind, signature), (name, _, args, _) in sorted(findings.items()):
        print(f"  {kind}: {signature}\n    first from {name}: dl-opt - {shlex.join(args)}")
    if findings:
        print(f"reproducers in {options.out}/")
    return 1 if stats["dlc"] or stats["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
