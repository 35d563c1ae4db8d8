"""Exceptions raised by dlc.

Every error a user can cause is a subclass of :class:`DLCError` and also of the
builtin exception a Python user would expect (``TypeError`` for wrong dtypes or
arity, ``ValueError`` for wrong shapes), so ``except ValueError`` keeps working.
"""


class DLCError(Exception):
    """Base class of every dlc error."""


class DTypeError(DLCError, TypeError):
    """An argument or operand has a dtype the operation does not accept."""


class ShapeError(DLCError, ValueError):
    """An argument or operand has a shape the operation does not accept."""


class ArityError(DLCError, TypeError):
    """A compiled function was called with the wrong number of arguments."""


class TraceError(DLCError, TypeError):
    """The traced function did something that cannot be compiled (for example,
    it converted a traced tensor to a Python bool or a numpy array)."""


class CompileError(DLCError, RuntimeError):
    """A pass of the compilation pipeline failed. The message holds the stage
    and MLIR's diagnostics, whose locations point at the user's source lines."""


class CUDAUnavailableError(DLCError, RuntimeError):
    """A function compiled with ``target="cuda"`` was run where there is no
    CUDA driver (``libcuda.so.1``) or no CUDA device. ``emulate=True`` runs
    the same kernels on the CPU."""


class UnsupportedOpError(DLCError, NotImplementedError):
    """A model given to an importer (:func:`dlc.from_torch`,
    :func:`dlc.from_onnx`) uses operators dlc does not support. The message
    lists every one of them at once, with its count and where it is used;
    ``ops`` maps each operator to the list of those places."""

    def __init__(self, message, ops=None):
        super().__init__(message)
        self.ops = dict(ops or {})


class ModelImportError(DLCError, ValueError):
    """A model could not be imported: a node with attributes or inputs dlc
    does not support, or a model that is not valid. The message names the
    node and what was wrong."""


class DynamicDimensionError(ModelImportError):
    """An imported model computes with the size of a dynamic (batch)
    dimension, which is only known at run time. An imported function made
    with ``dynamic_batch=True`` then compiles one version per batch size
    instead (with a warning)."""
