"""The dtypes dlc compiles, and their MLIR element types."""

import numpy as np

from .mlir import ir

#: numpy dtypes dlc accepts, in the order they are listed in error messages.
SUPPORTED_DTYPES = tuple(
    np.dtype(name)
    for name in ("float16", "float32", "float64", "int8", "int16", "int32",
                 "int64", "bool")
)

_FLOATS = {np.dtype("float16"), np.dtype("float32"), np.dtype("float64")}


def supported_names():
    return ", ".join(str(dtype) for dtype in SUPPORTED_DTYPES)


def is_supported(dtype):
    return np.dtype(dtype) in SUPPORTED_DTYPES


def is_float(dtype):
    return np.dtype(dtype) in _FLOATS


def to_mlir(dtype):
    """The MLIR element type of a numpy dtype (inside an active Context)."""
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return ir.F16Type.get()
    if dtype == np.float32:
        return ir.F32Type.get()
    if dtype == np.float64:
        return ir.F64Type.get()
    if dtype == np.bool_:
        return ir.IntegerType.get_signless(1)
    if dtype.kind == "i":
        return ir.IntegerType.get_signless(8 * dtype.itemsize)
    raise TypeError(f"dtype {dtype} is not supported; supported: {supported_names()}")


def from_mlir(element_type):
    """The numpy dtype of an MLIR element type."""
    text = str(element_type)
    names = {"f16": "float16", "f32": "float32", "f64": "float64", "i1": "bool",
             "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64"}
    if text not in names:
        raise TypeError(f"MLIR element type {text} has no dlc dtype")
    return np.dtype(names[text])


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
