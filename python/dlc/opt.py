"""``python -m dlc.opt``: dl-opt for pipelines that include dlc's Python passes.

    python -m dlc.opt input.mlir -p dl-simplify -p canonicalize
    python -m dlc.opt input.mlir -p dl-fusion-report --fusion-report

Each ``-p`` is a Python pass (``dl-simplify``, ``dl-fusion-report``) or a
textual pass-pipeline element of dl-opt (``canonicalize``,
``func.func(cse)``, ``dl-cpu-pipeline{to=graph}``); they run in one
PassManager, in order. The result is printed to stdout; ``--fusion-report``
prints the fusion groups instead. Errors (bad IR, unknown pass) go to stderr
with exit status 1.
"""

import argparse
import sys

from . import passes, tracing
from .errors import DLCError
from .mlir import ir
from .mlir.passmanager import PassManager


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dlc.opt", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", help="MLIR file ('-' for stdin)")
    parser.add_argument("-p", "--pass", dest="passes", action="append", default=[],
                        metavar="PASS", help="a Python pass or a pipeline element")
    parser.add_argument("--fusion-report", action="store_true",
                        help="print the fusion groups of the result")
    args = parser.parse_args(argv)

    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    context = tracing.context()
    try:
        module = ir.Module.parse(text, context=context)
    except ir.MLIRError as error:
        print(f"error: {args.input}: {error}", file=sys.stderr)
        return 1
    with context:
        pm = PassManager("builtin.module")
        for name in args.passes:
            try:
                if name in passes.PYTHON_PASSES:
                    passes.add_pass(pm, name)
                else:
                    pm.add(name)
            except ValueError as error:
                print(f"error: unknown pass or bad pipeline element '{name}': {error}",
                      file=sys.stderr)
                return 1
        try:
            pm.run(module.operation)
        except (ir.MLIRError, DLCError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
    print(passes.fusion_report(module) if args.fusion_report else module)
    return 0


if __name__ == "__main__":
    sys.exit(main())
