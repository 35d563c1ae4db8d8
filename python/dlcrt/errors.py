"""The exceptions of dlc and of dlcrt (one set of classes: ``dlc.errors``
re-exports these, so ``except dlc.ShapeError`` catches dlcrt's too).

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


class CUDAUnavailableError(DLCError, RuntimeError):
    """A function compiled with ``target="cuda"`` was run where there is no
    CUDA driver (``libcuda.so.1``) or no CUDA device. ``emulate=True`` runs
    the same kernels on the CPU."""


class ArtifactError(DLCError, ValueError):
    """A library given to :func:`dlcrt.load` cannot be used: not written by
    ``dlc.export``, damaged, of another format version, or compiled for a
    CPU this machine is not (another architecture, or missing ISA
    features). The message says which."""
