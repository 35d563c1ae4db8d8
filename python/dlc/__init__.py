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

Code is generated for a target, :class:`Target` (``dlc.Target.host()`` by
default, or a named CPU such as ``dlc.Target("znver3")``), with
:class:`CompileOptions` (:class:`CPUOptions`, :class:`GPUOptions`).
"""

from . import cache, composite, ops, optim
from .compiler import GPU_STAGES, STAGES, STAGE_DESCRIPTIONS
from .dtypes import BFLOAT16 as bfloat16
from dlcrt import load
from .errors import (ArityError, ArtifactError, CompileError, CUDAUnavailableError,
                     DataDependentShapeError, DLCError, DTypeError, DynamicDimensionError, ModelImportError, ShapeError,
                     TraceError,
                     UnsupportedOpError)
from .autodiff import grad, value_and_grad
from .export import export
from .frontends import from_onnx, from_torch
from .jit import JitFunction, clear_cache, jit
from .options import CHIPS, CompileOptions, CPUOptions, GPUOptions
from .runtime import get_num_threads, set_num_threads
from .ops import *  # noqa: F401,F403 - the numpy-named operations
from .composite import *  # noqa: F401,F403 - operations built from them
from .stages import ArgSpec, Compiled, Lowered
from .target import Target
from .timing import profile
from .tracing import Size, Tensor
from .version import __version__
from .quant import quantize
# dlc.tune is a package and a function (dlc.tune(model, x, records=...)).
from . import tune

__all__ = [
    "jit", "clear_cache", "JitFunction", "Lowered", "Compiled", "ArgSpec", "Tensor", "Size",
    "Target",
    "CompileOptions", "CPUOptions", "GPUOptions", "CHIPS", "STAGES",
    "GPU_STAGES", "STAGE_DESCRIPTIONS", "DLCError", "DTypeError", "ShapeError",
    "ArityError", "TraceError", "CompileError", "CUDAUnavailableError", "bfloat16",
    "UnsupportedOpError", "ModelImportError", "DynamicDimensionError",
    "DataDependentShapeError", "from_onnx", "from_torch",
    "export", "load", "ArtifactError", "grad", "value_and_grad", "profile", "quantize",
    "tune",
] + ops.__all__ + composite.__all__
