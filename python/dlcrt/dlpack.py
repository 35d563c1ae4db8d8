"""Device arrays in and out of dlc's CUDA code, without host copies.

Tensors already in GPU memory (``torch.cuda`` tensors, CuPy arrays, JAX
arrays, anything with ``__dlpack__`` or ``__cuda_array_interface__``) are
read through DLPack (https://dmlc.github.io/dlpack/latest/) or the CUDA
array interface: :func:`device_view` gives their address, shape and dtype,
and keeps them alive while the call uses them. Results stay on the GPU as
:class:`DeviceArray`, which other libraries take without a copy
(``torch.from_dlpack(result)``, ``cupy.from_dlpack(result)``,
``cupy.asarray(result)``); ``result.numpy()`` copies one to the host.

Only ctypes and numpy: dlcrt imports nothing of dlc or of the frameworks.
"""

import ctypes

import numpy as np

#: DLPack device types (dlpack.h: DLDeviceType)
KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
#: DLPack dtype codes (DLDataTypeCode)
_KDL_INT, _KDL_UINT, _KDL_FLOAT, _KDL_BFLOAT, _KDL_BOOL = 0, 1, 2, 4, 6

#: dtype name -> (DLPack code, bits)
DLPACK_DTYPES = {"float32": (_KDL_FLOAT, 32), "float64": (_KDL_FLOAT, 64),
                 "float16": (_KDL_FLOAT, 16), "bfloat16": (_KDL_BFLOAT, 16),
                 "int8": (_KDL_INT, 8), "int16": (_KDL_INT, 16), "int32": (_KDL_INT, 32),
                 "int64": (_KDL_INT, 64), "bool": (_KDL_BOOL, 8),
                 "uint8": (_KDL_UINT, 8), "uint16": (_KDL_UINT, 16),
                 "uint32": (_KDL_UINT, 32), "uint64": (_KDL_UINT, 64)}
_FROM_DLPACK = {value: name for name, value in DLPACK_DTYPES.items()}
#: dtype name -> the CUDA array interface's typestr
_TYPESTR = {"float32": "<f4", "float64": "<f8", "float16": "<f2", "int8": "|i1",
            "int16": "<i2", "int32": "<i4", "int64": "<i8", "bool": "|b1",
            "uint8": "|u1", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8"}
_FROM_TYPESTR = {value: name for name, value in _TYPESTR.items()}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _DELETER)]


def _c_api(name, restype, *argtypes):
    """A function of Python's C API with argument types of our own: each from
    a handle of its own (ctypes.pythonapi's functions are shared with every
    other user of ctypes in the process, and a capsule's destructor gets a
    raw pointer where other callers pass objects)."""
    function = getattr(ctypes.PyDLL(None), name)
    function.restype, function.argtypes = restype, list(argtypes)
    return function


_capsule_get_pointer = _c_api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object,
                              ctypes.c_char_p)
_capsule_is_valid = _c_api("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object,
                           ctypes.c_char_p)
_capsule_new = _c_api("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                      ctypes.c_void_p)
_CAPSULE_NAME = b"dltensor"


class DeviceView:
    """A dense tensor in GPU memory that a caller handed in: its address,
    shape, dtype name and the object that keeps the memory alive."""

    def __init__(self, pointer, shape, dtype, owner):
        self.pointer, self.shape, self.dtype, self.owner = pointer, tuple(shape), dtype, owner

    @property
    def ndim(self):
        return len(self.shape)


def is_device_array(value):
    """Whether `value` lives in GPU memory (DLPack's CUDA device, or the CUDA
    array interface)."""
    if isinstance(value, np.ndarray):
        return False
    if isinstance(value, DeviceArray):
        return True
    device = getattr(value, "__dlpack_device__", None)
    if device is not None:
        try:
            return int(device()[0]) in (KDL_CUDA, KDL_CUDA_MANAGED)
        except Exception:  # a producer that cannot say: not a device array
            return False
    return hasattr(value, "__cuda_array_interface__")


def _dense(shape, strides):
    """Whether element strides `strides` (None: dense) describe a
    C-contiguous tensor of `shape` (dimensions of size 1 may have any)."""
    if strides is None:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def device_view(value, what):
    """A :class:`DeviceView` of `value` (a GPU tensor); ValueError naming
    `what` where it is not dense, TypeError where its dtype has no dlc
    name."""
    if isinstance(value, DeviceArray):
        return DeviceView(value.pointer, value.shape, value.dtype, value)
    interface = None
    if getattr(value, "__dlpack__", None) is not None:
        capsule = value.__dlpack__()
        if not _capsule_is_valid(capsule, _CAPSULE_NAME):
            raise TypeError(f"{what}: its __dlpack__ gave no DLPack tensor capsule")
        managed = DLManagedTensor.from_address(_capsule_get_pointer(capsule, _CAPSULE_NAME))
        tensor = managed.dl_tensor
        if tensor.device.device_type not in (KDL_CUDA, KDL_CUDA_MANAGED):
            raise ValueError(f"{what}: a DLPack tensor on device type "
                             f"{tensor.device.device_type}, not a CUDA GPU")
        key = (tensor.dtype.code, tensor.dtype.bits)
        if tensor.dtype.lanes != 1 or key not in _FROM_DLPACK:
            raise TypeError(f"{what}: DLPack dtype (code {key[0]}, {key[1]} bits, "
                            f"{tensor.dtype.lanes} lanes) has no dlc dtype")
        shape = [tensor.shape[d] for d in range(tensor.ndim)]
        strides = ([tensor.strides[d] for d in range(tensor.ndim)]
                   if tensor.strides else None)
        pointer = (tensor.data or 0) + tensor.byte_offset
        dtype = _FROM_DLPACK[key]
        # The capsule is never consumed (renamed): the producer's own
        # destructor releases the tensor once the capsule is gone.
        owner = (value, capsule)
    else:
        interface = value.__cuda_array_interface__
        shape = list(interface["shape"])
        typestr = interface["typestr"]
        if typestr not in _FROM_TYPESTR:
            raise TypeError(f"{what}: CUDA array interface typestr {typestr!r} has no "
                            f"dlc dtype")
        dtype = _FROM_TYPESTR[typestr]
        itemsize = np.dtype(typestr).itemsize
        strides = interface.get("strides")
        if strides is not None:
            if any(s % itemsize for s in strides):
                raise ValueError(f"{what}: strides {tuple(strides)} are not whole elements")
            strides = [s // itemsize for s in strides]
        pointer = interface["data"][0] or 0
        owner = value
    if not _dense(shape, strides):
        raise ValueError(f"{what}: a GPU tensor of strides {tuple(strides)} for shape "
                         f"{tuple(shape)} is not C-contiguous; make it contiguous first "
                         f"(.contiguous() in PyTorch, cupy.ascontiguousarray)")
    return DeviceView(pointer, shape, dtype, owner)


class DeviceArray:
    """A dense result in GPU memory, owned by the library that made it
    (freed when the last reference, or the last DLPack consumer, is gone).
    ``numpy()`` copies it to the host; ``__dlpack__`` and
    ``__cuda_array_interface__`` hand it to PyTorch, CuPy or JAX without a
    copy."""

    def __init__(self, pointer, shape, dtype, device_id, owner, to_host):
        self.pointer, self.shape, self.dtype = pointer, tuple(shape), dtype
        self.device_id = device_id
        self._owner = owner        # frees the memory when collected
        self._to_host = to_host    # (host address, device address, bytes) -> None
        self._exported = {}        # DLManagedTensor address -> what it keeps alive

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def numpy(self):
        """A host copy (numpy array)."""
        from . import _numpy_dtype
        dtype = _numpy_dtype(self.dtype)
        out = np.empty(self.shape, dtype)
        if out.nbytes:
            self._to_host(out.ctypes.data, self.pointer, out.nbytes)
        return out

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a DeviceArray lives in GPU memory: numpy needs a copy")
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    @property
    def __cuda_array_interface__(self):
        if self.dtype not in _TYPESTR:
            raise AttributeError(f"the CUDA array interface has no {self.dtype}; "
                                 f"use DLPack (__dlpack__)")
        return {"shape": self.shape, "typestr": _TYPESTR[self.dtype],
                "data": (self.pointer or 0, False), "strides": None, "version": 3,
                # The library's stream was waited for before the call returned.
                "stream": None}

    def __dlpack_device__(self):
        return (KDL_CUDA, self.device_id)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule viewing this array (DLPack 0.8, unversioned: every
        consumer reads it). The data is ready: `stream` needs no wait."""
        if copy:
            raise BufferError("dlc's DeviceArray is exported without copies (copy=True)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"dlc's DeviceArray lives on {self.__dlpack_device__()}, "
                              f"not {tuple(dl_device)}")
        shape = (ctypes.c_int64 * max(self.ndim, 1))(*self.shape)
        managed = DLManagedTensor()
        managed.dl_tensor.data = self.pointer
        managed.dl_tensor.device = DLDevice(KDL_CUDA, self.device_id)
        managed.dl_tensor.ndim = self.ndim
        code, bits = DLPACK_DTYPES[self.dtype]
        managed.dl_tensor.dtype = DLDataType(code, bits, 1)
        managed.dl_tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        managed.dl_tensor.strides = None  # dense
        managed.dl_tensor.byte_offset = 0
        address = ctypes.addressof(managed)
        managed.deleter = _deleter
        # Alive until the consumer calls the deleter (or the capsule dies
        # unconsumed): the struct, its shape, and this array.
        self._exported[address] = (managed, shape)
        _live[address] = self
        return _capsule_new(address, _CAPSULE_NAME, _capsule_destructor_address)

    def __repr__(self):
        dims = ", ".join(map(str, self.shape))
        return f"<dlcrt DeviceArray {self.dtype}[{dims}] on cuda:{self.device_id}>"


# DLManagedTensor address -> the DeviceArray it views (see __dlpack__).
_live = {}


def _release(address):
    array = _live.pop(address, None)
    if array is not None:
        array._exported.pop(address, None)


@_DELETER
def _deleter(managed):
    _release(ctypes.addressof(managed.contents))


_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# The same functions on a raw PyObject * (what a capsule destructor gets).
_capsule_is_valid_raw = _c_api("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p,
                               ctypes.c_char_p)
_capsule_get_pointer_raw = _c_api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p,
                                  ctypes.c_char_p)


@_DESTRUCTOR
def _capsule_destructor(capsule):
    # A consumer renames the capsule ("used_dltensor") and calls the deleter
    # itself; a capsule that dies still named "dltensor" was never consumed.
    if _capsule_is_valid_raw(capsule, _CAPSULE_NAME):
        _release(_capsule_get_pointer_raw(capsule, _CAPSULE_NAME))


_capsule_destructor_address = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value
