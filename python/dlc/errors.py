"""Exceptions raised by dlc.

Every error a user can cause is a subclass of :class:`DLCError` and also of the
builtin exception a Python user would expect (``TypeError`` for wrong dtypes or
arity, ``ValueError`` for wrong shapes), so ``except ValueError`` keeps working.
"""


# The classes a loaded library raises too live in dlcrt (which imports
# nothing of dlc): one class per error for both.
from dlcrt.errors import (ArityError, ArtifactError, CUDAUnavailableError,  # noqa: F401
                          DLCError, DTypeError, ShapeError)


class TraceError(DLCError, TypeError):
    """The traced function did something that cannot be compiled (for example,
    it converted a traced tensor to a Python bool or a numpy array)."""


class CompileError(DLCError, RuntimeError):
    """A pass of the compilation pipeline failed. The message holds the stage
    and MLIR's diagnostics, whose locations point at the user's source lines."""


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


class DataDependentShapeError(ModelImportError):
    """An imported model makes a tensor whose shape depends on the values of
    the data (``x[mask]``, ``nonzero``, ``masked_select``): dlc compiles
    static (or symbolic) shapes and refuses it, naming the op and line."""
