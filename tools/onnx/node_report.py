"""Runs every ONNX backend node test case through dlc and writes
  test/python/onnx_node_expected.txt  the cases that pass (make test keeps them passing)
  docs/onnx_node_tests.md             the count, and every other case with its reason

Usage: .venv/bin/python tools/onnx/node_report.py [--check]
(--check only prints the differences from the recorded expectations).
"""

import argparse
import collections
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import node_cases  # noqa: E402

EXPECTED = os.path.join(ROOT, "test", "python", "onnx_node_expected.txt")
REPORT = os.path.join(ROOT, "docs", "onnx_node_tests.md")


def category(status, reason):
    m = re.search(r"\(\d+ use\(s\)\):\s+(.+?) x\d+", reason)
    if m:
        return f"operator {m.group(1)} not supported"
    m = re.search(r"ONNX type (\w+)", reason) or re.search(r"target type (\w+)", reason)
    if m:
        return f"dtype {m.group(1)} not supported"
    if status == "wrong":
        return "numerics outside the case's tolerance"
    return re.sub(r"test_\w+\.onnx:\d+: ", "", reason)[:90]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    cases = node_cases.cases()
    start = time.time()
    results = {}
    for index, name in enumerate(sorted(cases)):
        results[name] = node_cases.run_case(cases[name])
        if index % 100 == 0:
            print(f"  {index}/{len(cases)} ({time.time() - start:.0f} s)", file=sys.stderr)
    passing = sorted(n for n, (s, _) in results.items() if s == "pass")
    total = len(results)
    print(f"{len(passing)} of {total} node cases pass ({100.0 * len(passing) / total:.1f}%)")
    old = set()
    if os.path.exists(EXPECTED):
        old = {line.strip() for line in open(EXPECTED) if line.strip() and
               not line.startswith("#")}
    new = sorted(set(passing) - old)
    print(f"newly passing: {len(new)}: {new[:20]}")
    print(f"no longer passing: {sorted(old - set(passing))}")
    if args.check:
        return
    import onnx
    with open(EXPECTED, "w") as f:
        f.write(f"# ONNX backend node cases (onnx {onnx.__version__}) that pass through "
                f"dlc; written by tools/onnx/node_report.py.\n")
        f.write("\n".join(passing) + "\n")
    groups = collections.defaultdict(list)
    for name, (status, reason) in sorted(results.items()):
        if status != "pass":
            groups[category(status, reason)].append((name, status, reason))
    with open(REPORT, "w") as f:
        f.write(f"# ONNX backend node tests through dlc\n\n"
                f"The node cases defined in the `onnx` package "
                f"(`onnx.backend.test.case.node.collect_testcases()`, onnx "
                f"{onnx.__version__}) run through `dlc.onnx_backend` in `make test` "
                f"(test/python/test_onnx_node.py). **{len(passing)} of {total} pass "
                f"({100.0 * len(passing) / total:.1f}%).** Written by "
                f"`tools/onnx/node_report.py`; the passing ones are listed in "
                f"`test/python/onnx_node_expected.txt`.\n\n"
                f"## The {total - len(passing)} others, by reason\n\n")
        for reason, entries in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            f.write(f"### {reason} ({len(entries)})\n\n")
            for name, status, detail in entries:
                f.write(f"- `{name}`: {status}: {detail.replace('|', '/')[:240]}\n")
            f.write("\n")
    print(f"wrote {EXPECTED} and {REPORT}")


if __name__ == "__main__":
    main()
