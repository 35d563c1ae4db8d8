"""dlc as an ONNX backend (``onnx.backend.base.Backend``), so that ONNX's
backend test cases run through dlc::

    from dlc.onnx_backend import DlcBackend
    outputs = DlcBackend.run_model(model, [x])

``prepare`` imports and compiles the model with :func:`dlc.from_onnx`;
``run`` of the returned rep calls it.
"""

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.base import Backend, BackendRep

from .frontends.onnx_importer import from_onnx

__all__ = ["DlcBackend", "DlcBackendRep"]


class DlcBackendRep(BackendRep):
    def __init__(self, function):
        self.function = function

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            outputs = self.function(**{k: _array(v) for k, v in inputs.items()})
        else:
            if isinstance(inputs, np.ndarray):
                inputs = [inputs]
            outputs = self.function(*[_array(v) for v in inputs])
        return list(outputs) if isinstance(outputs, tuple) else [outputs]


def _array(value):
    """numpy array of an input (TensorProtos converted, as onnx's runner does)."""
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    return value


class DlcBackend(Backend):
    @classmethod
    def is_compatible(cls, model, device="CPU", **kwargs):
        return device == "CPU"

    @classmethod
    def supports_device(cls, device):
        return device == "CPU"

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        super().prepare(model, device, **kwargs)
        return DlcBackendRep(from_onnx(model, **kwargs))

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)


prepare = DlcBackend.prepare
run_model = DlcBackend.run_model
supports_device = DlcBackend.supports_device
