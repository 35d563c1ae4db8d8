"""dlc: an MLIR-based deep-learning compiler.

``@dlc.jit`` traces a Python function written with the numpy-named operations
below into the `dl` dialect, lowers it through linalg, bufferization, affine,
vector and the llvm dialect (`dl-cpu-pipeline`), and runs it with MLIR's
ExecutionEngine::

    import dlc, numpy as np

    @dlc.jit
    def mlp(x, w1, b1, w2, b2):
        h = dlc.relu(x @ w1 + b1)
        return dlc.softmax(h @ w2 + b2, axis=-1)

    y = mlp(x, w1, b1, w2, b2)                                  # numpy in, numpy out
    print(mlp.lower(x, w1, b1, w2, b2).as_text("linalg"))      # IR at a stage
"""

from .compiler import STAGES, STAGE_DESCRIPTIONS
from .errors import (ArityError, CompileError, DLCError, DTypeError, ShapeError,
                     TraceError)
from .jit import ArgSpec, Compiled, JitFunction, Lowered, jit
from .ops import (add, asarray, divide, exp, matmul, max, multiply, negative, relu,
                  reshape, softmax, subtract, sum, transpose)
from .tracing import Tensor

__all__ = [
    "jit", "JitFunction", "Lowered", "Compiled", "ArgSpec", "Tensor", "STAGES",
    "STAGE_DESCRIPTIONS", "DLCError", "DTypeError", "ShapeError", "ArityError",
    "TraceError", "CompileError", "add", "subtract", "multiply", "divide",
    "negative", "matmul", "relu", "exp", "softmax", "sum", "max", "transpose",
    "reshape", "asarray",
]
