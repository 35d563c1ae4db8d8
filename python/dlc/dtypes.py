"""The dtypes dlc compiles, and their MLIR element types.

bfloat16 is numpy's extension dtype from the `ml_dtypes` package (the one JAX
and TensorFlow use); every other dtype is a plain numpy dtype.
"""

import ml_dtypes
import numpy as np

from .mlir import ir

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)

#: numpy dtypes dlc accepts, in the order they are listed in error messages.
SUPPORTED_DTYPES = tuple(
    np.dtype(name)
    for name in ("float16", "float32", "float64", "int8", "int16", "int32",
                 "int64", "uint8", "uint16", "uint32", "uint64", "bool")
) + (BFLOAT16,)

_FLOATS = {np.dtype("float16"), np.dtype("float32"), np.dtype("float64"), BFLOAT16}

_MLIR_NAMES = {"float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16",
               "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32",
               "int64": "i64", "uint8": "ui8", "uint16": "ui16", "uint32": "ui32",
               "uint64": "ui64"}
_FROM_MLIR = {mlir: np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
              for name, mlir in _MLIR_NAMES.items()}


def numpy_dtype(dtype):
    """np.dtype of `dtype`, accepting "bfloat16" and "bf16" too."""
    if isinstance(dtype, str) and dtype in ("bfloat16", "bf16"):
        return BFLOAT16
    return np.dtype(dtype)


def supported_names():
    return ", ".join(str(dtype) for dtype in SUPPORTED_DTYPES)


def is_supported(dtype):
    return np.dtype(dtype) in SUPPORTED_DTYPES


def is_float(dtype):
    return np.dtype(dtype) in _FLOATS


def to_mlir(dtype):
    """The MLIR element type of a numpy dtype (inside an active Context)."""
    dtype = np.dtype(dtype)
    name = _MLIR_NAMES.get(str(dtype)) if dtype in SUPPORTED_DTYPES else None
    if name is None:
        raise TypeError(f"dtype {dtype} is not supported; supported: {supported_names()}")
    return ir.Type.parse(name)


def from_mlir(element_type):
    """The numpy dtype of an MLIR element type."""
    text = str(element_type)
    if text not in _FROM_MLIR:
        raise TypeError(f"MLIR element type {text} has no dlc dtype")
    return _FROM_MLIR[text]


def tensor_type(shape, dtype):
    """RankedTensorType for a dlc shape (None marks the dynamic dimension)."""
    dims = [ir.ShapedType.get_dynamic_size() if d is None else d for d in shape]
    return ir.RankedTensorType.get(dims, to_mlir(dtype))


def shape_of(tensor_type_):
    """The dlc shape (None for dynamic) of a RankedTensorType."""
    t = ir.RankedTensorType(tensor_type_)
    return tuple(None if t.is_dynamic_dim(i) else t.get_dim_size(i)
                 for i in range(t.rank))


def format_type(shape, dtype):
    """`float32[?, 784]`-style description used in error messages."""
    dims = ", ".join("?" if d is None else str(d) for d in shape)
    return f"{np.dtype(dtype)}[{dims}]"
