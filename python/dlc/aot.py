"""Ahead-of-time compilation of a ``dl`` module from a file: the command-line
face of :func:`dlc.export` for IR written by hand, by ``dl-opt`` or saved with
``Lowered.as_text("dl")``.

    python -m dlc.aot model.mlir -o model.so [--function NAME] [--name C_NAME]
                      [--target-cpu CPU] [--target-features +f,-g]

Every argument of the function must be a ranked tensor of a dtype dlc
supports; a dynamic leading dimension (``tensor<?x784xf32>``) stays dynamic
in the library. Writes the library and its C header (see :mod:`dlc.export`).
"""

import argparse
import sys

from . import dtypes
from .errors import DLCError
from .export import export_lowered
from .mlir import ir
from .options import CompileOptions
from .stages import ArgSpec, Lowered
from .target import Target
from .tracing import context


def lower_file(path, function=None, target="cpu"):
    """A :class:`dlc.Lowered` of function `function` (default: the only
    public one) of the ``dl`` module in `path`."""
    with open(path) as source:
        text = source.read()
    return lower_text(text, function, target, where=path)


def lower_text(text, function=None, target="cpu", where="<string>"):
    """A :class:`dlc.Lowered` of function `function` (default: the only
    public one) of the ``dl`` module `text`; `where` names it in errors.
    `target` "cpu" keeps a ``dl.target`` the module carries."""
    path = where
    ctx = context()
    with ctx:
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as error:
            messages = "; ".join(d.message for d in error.error_diagnostics) or str(error)
            raise ValueError(f"{path}: not valid MLIR: {messages}") from None
        functions = [op for op in module.body.operations
                     if op.operation.name == "func.func" and "sym_visibility" not in op.attributes]
        names = [ir.StringAttr(op.attributes["sym_name"]).value for op in functions]
        if function is None:
            if len(functions) != 1:
                raise ValueError(f"{path}: {len(functions)} public functions "
                                 f"({', '.join(names) or 'none'}); choose one with --function")
            chosen = functions[0]
        elif function in names:
            chosen = functions[names.index(function)]
        else:
            raise ValueError(f"{path}: no public function {function!r}; there are: "
                             f"{', '.join(names) or 'none'}")
        symbol = ir.StringAttr(chosen.attributes["sym_name"]).value
        kind = ir.FunctionType(ir.TypeAttr(chosen.attributes["function_type"]).value)
        specs = []
        for index, value in enumerate(kind.inputs):
            specs.append(ArgSpec(f"arg{index}", *_shape_and_dtype(value, f"argument {index}",
                                                                  path, symbol)))
        results = []
        for index, value in enumerate(kind.results):
            shape, dtype = _shape_and_dtype(value, f"result {index}", path, symbol)
            results.append((len(shape), dtype))
        if target != "cpu":
            module.operation.attributes["dl.target"] = ir.Attribute.parse(str(target))
        # The function's entry points are named as the jit names its own.
        chosen.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
    options = CompileOptions(target=target)
    structure = None if len(results) == 1 else tuple
    return Lowered(module, symbol, tuple(specs), structure, results, options)


def _shape_and_dtype(value_type, what, path, symbol):
    if not isinstance(value_type, ir.RankedTensorType):
        raise ValueError(f"{path}: @{symbol}: {what} is {value_type}; dlc.aot compiles "
                         f"functions of ranked tensors")
    tensor = ir.RankedTensorType(value_type)
    shape = tuple(None if tensor.is_dynamic_dim(d) else tensor.shape[d]
                  for d in range(tensor.rank))
    if any(d is None for d in shape[1:]):
        raise ValueError(f"{path}: @{symbol}: {what} ({value_type}) is dynamic in a "
                         f"dimension other than the first")
    return shape, dtypes.from_mlir(tensor.element_type)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dlc.aot",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("input", help="a .mlir file of dl ops")
    parser.add_argument("-o", "--output", required=True, help="the library to write (.so)")
    parser.add_argument("--function", help="the function to compile (default: the only one)")
    parser.add_argument("--name", help="its C name: dlc_<name> (default: the function's)")
    parser.add_argument("--target-cpu", default=None, help="an LLVM CPU name (default: host)")
    parser.add_argument("--target-features", default="", help="e.g. -avx512f")
    args = parser.parse_args(argv)
    try:
        target = "cpu"
        if args.target_cpu or args.target_features:
            target = Target(args.target_cpu or "host", features=args.target_features)
        lowered = lower_file(args.input, args.function, target)
        path = export_lowered(lowered, args.output, args.name)
    except (OSError, ValueError, TypeError, DLCError, RuntimeError) as error:
        print(f"dlc.aot: error: {error}", file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
