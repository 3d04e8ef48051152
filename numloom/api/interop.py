"""Zero-copy exchange with other array libraries: ``__cuda_array_interface__`` (v3) and DLPack.

Exporting evaluates the array and hands out a pointer into its buffer (numloom keeps the
buffer alive while the other library holds it); importing wraps the other library's memory as
a numloom buffer that keeps its owner alive. Stream order is kept both ways: an export makes
the consumer's stream wait for numloom's, an import makes numloom's stream wait for the
producer's. numloom never writes into a buffer it has (a write makes a new version), so an
imported array is read in place and never modified by numloom.

DLPack capsules are built and read with ctypes (the structs of ``dlpack.h``, unversioned and
1.0 versioned), so any consumer that speaks DLPack (NumPy, CuPy, PyTorch, JAX) can take them.
"""

from __future__ import annotations

import ctypes

import numpy as _np

from ..core import realize
from ..core.dag import Op, View, node

KDL_CPU, KDL_CUDA = 1, 2
_DL_CODES = {
    "b": 6,
    "i": 0,
    "u": 1,
    "f": 2,
    "c": 5,
}  # kDLBool, kDLInt, kDLUInt, kDLFloat, kDLComplex
_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _DELETER),
]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", _DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

# Capsule names must outlive the capsules: module constants.
_NAME = ctypes.create_string_buffer(b"dltensor")
_NAME_VERSIONED = ctypes.create_string_buffer(b"dltensor_versioned")
_USED = ctypes.create_string_buffer(b"used_dltensor")
_USED_VERSIONED = ctypes.create_string_buffer(b"used_dltensor_versioned")

# address of a managed tensor -> (struct, shape/strides arrays, the exported array's buffer)
_exported: dict = {}


@_DELETER
def _delete(address):
    """DLPack's deleter: the consumer is done with the memory."""
    _exported.pop(address, None)


# The capsule API as plain C functions, for the capsule's destructor: it may run while an
# exception is being raised (a consumer refused the capsule), and ctypes.pythonapi's functions
# report any pending exception as their own failure. These two neither raise nor allocate.
_c_api = ctypes.CDLL(None, handle=ctypes.pythonapi._handle)
_c_is_valid = _c_api.PyCapsule_IsValid
_c_is_valid.restype, _c_is_valid.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]
_c_pointer = _c_api.PyCapsule_GetPointer
_c_pointer.restype, _c_pointer.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    """A capsule that nobody consumed frees its tensor (a consumed one was renamed)."""
    for name in (_NAME, _NAME_VERSIONED):
        if _c_is_valid(capsule, name):
            _delete(_c_pointer(capsule, name))


# --- export ------------------------------------------------------------------------------------


def _computed(a):
    """(the buffer under ``a``, its backend) after evaluating it; errors re-raised."""
    storage = a._storage
    realize.ensure(storage)
    if storage.error is not None:
        raise storage.error
    return storage.version.arg, realize._backend(storage.device)


def _pointer(a) -> int:
    buffer, backend = _computed(a)
    return backend.data_pointer(buffer.data) + a._view.offset * a.dtype.itemsize


def cuda_array_interface(a) -> dict:
    """``__cuda_array_interface__`` v3 of a numloom array on a CUDA device."""
    if a.device == "cpu":
        raise AttributeError("a numloom array on the CPU has no __cuda_array_interface__; "
                             "use __array_interface__ or numpy.asarray")  # fmt: skip
    ptr = _pointer(a)
    itemsize = a.dtype.itemsize
    strides = None if a._view.is_contiguous() else tuple(s * itemsize for s in a._view.strides)
    stream = realize._backend(a.device).stream_handle(a.device)
    return {"shape": a.shape, "typestr": a.dtype.str, "data": (ptr, False), "version": 3,
            "strides": strides, "descr": [("", a.dtype.str)], "stream": stream}  # fmt: skip


def dlpack_device(a) -> tuple:
    if a.device == "cpu":
        return KDL_CPU, 0
    return KDL_CUDA, int(a.device.partition(":")[2] or 0)


def dlpack(a, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule viewing ``a``'s memory (``copy=True``: a copy's memory)."""
    if dl_device is not None and tuple(dl_device) != dlpack_device(a):
        raise BufferError(f"numloom cannot export an array on {a.device} to DLPack device "
                          f"{tuple(dl_device)}")  # fmt: skip
    if copy:
        a = a.copy()
    if a.dtype.kind not in _DL_CODES:
        raise BufferError(f"DLPack cannot hold {a.dtype} data")
    ptr = _pointer(a)
    if a.device != "cpu" and stream != -1:
        realize._backend(a.device).make_wait(a.device, 1 if stream is None else stream)
    versioned = max_version is not None and tuple(max_version) >= (1, 0)
    managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    sizes = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
    strides = (ctypes.c_int64 * max(a.ndim, 1))(*a._view.strides)
    tensor = managed.dl_tensor
    tensor.data = ptr
    tensor.device = DLDevice(*dlpack_device(a))
    tensor.ndim = a.ndim
    tensor.dtype = DLDataType(_DL_CODES[a.dtype.kind], a.dtype.itemsize * 8, 1)
    tensor.shape, tensor.strides, tensor.byte_offset = sizes, strides, 0
    managed.deleter = _delete
    address = ctypes.addressof(managed)
    if versioned:
        managed.version = DLPackVersion(1, 0)
        managed.flags = _READ_ONLY if a.device == "cpu" else 0  # CPU buffers are read-only
    _exported[address] = (managed, sizes, strides, a._storage.version)
    name = _NAME_VERSIONED if versioned else _NAME
    return _api.PyCapsule_New(address, name, ctypes.cast(_capsule_destructor, ctypes.c_void_p))


# --- import ------------------------------------------------------------------------------------


class _Owner:
    """Keeps imported memory alive: the producer's object, or a DLPack tensor to delete."""

    def __init__(self, obj=None, managed=None, deleter=None):
        self.obj, self.managed, self.deleter = obj, managed, deleter

    def __del__(self):
        if self.deleter:
            self.deleter(self.managed)


def _dtype(code: int, bits: int, lanes: int) -> _np.dtype:
    kinds = {v: k for k, v in _DL_CODES.items()}
    if lanes != 1 or code not in kinds:
        raise BufferError(f"numloom cannot import DLPack data of type code {code}, {bits} bits, "
                          f"{lanes} lanes")  # fmt: skip
    return _np.dtype("bool") if kinds[code] == "b" else _np.dtype(f"{kinds[code]}{bits // 8}")


def _wrap(ptr: int, shape: tuple, strides: tuple, dtype, device: str, owner):
    """A numloom array over foreign memory: a buffer spanning what the view reads."""
    from ..core.array import _adopt, ndarray
    from ..core.realize import Buffer, Storage

    if any(s % 1 for s in strides):
        raise BufferError("numloom cannot import strides that are not a multiple of the itemsize")
    low = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0 and n)
    high = sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0 and n)
    span = (high - low + 1) if all(shape) else 0
    backend = realize._backend(device)
    data = backend.wrap_pointer(ptr + low * dtype.itemsize, (span,), dtype, device, owner)
    base = node(Op.BUFFER, (), Buffer(data, device), (span,), dtype)
    view = View(tuple(shape), tuple(strides), -low)
    return _adopt(ndarray.__new__(ndarray), Storage(base, device), view)


def from_cuda_array_interface(obj, device: str):
    """A numloom array viewing the memory of an object with ``__cuda_array_interface__``."""
    cai = obj.__cuda_array_interface__
    dtype = _np.dtype(cai["typestr"])
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        from ..core.dag import contiguous_strides

        strides = contiguous_strides(shape)
    else:
        strides = tuple(s // dtype.itemsize for s in strides)
    stream = cai.get("stream")
    if stream is not None and cai.get("version", 0) >= 3:
        realize._backend(device).wait_for(device, stream)
    return _wrap(cai["data"][0], shape, strides, dtype, device, _Owner(obj))


def from_dlpack(x, *, device=None, copy=None):
    """NumPy's ``from_dlpack``: a numloom array viewing ``x``'s memory (DLPack)."""
    from ..core.array import from_host

    kind, index = x.__dlpack_device__()
    if kind == KDL_CPU:
        host = _np.from_dlpack(x, copy=copy)
        if copy is False and (device is None or str(device) == "cpu"):
            return share_host(host)
        return from_host(host, device)  # numloom's host buffers are its own: a copy
    if kind != KDL_CUDA:
        raise BufferError(f"numloom imports DLPack data from the CPU or CUDA, not device type "
                          f"{kind}")  # fmt: skip
    target = f"cuda:{index}"
    if device is not None and str(device) not in (target, "cuda" if index == 0 else target):
        raise BufferError(f"the data is on {target}, not {device}")
    stream = realize._backend(target).stream_handle(target)
    capsule = x.__dlpack__(stream=stream)
    array = _read_capsule(capsule, target)
    return array.copy() if copy else array


def _ALWAYS():  # an export that never dies (``Buffer.exports`` holds weak references)
    return True


def share_host(host: _np.ndarray):
    """A CPU numloom array over ``host``'s memory, without a copy (``from_dlpack(x,
    copy=False)``): numloom reads the producer's memory, so a write by the producer shows in
    the array, as with NumPy. numloom's own writes to it make a new version (its buffers are
    never written while another holder may read them) and leave the producer's data as it
    was. Memory numloom cannot view as one C-ordered block raises BufferError."""
    from ..core.array import _adopt, ndarray
    from ..core.dag import View
    from ..core.realize import Buffer, Storage

    if not host.flags.c_contiguous:
        raise BufferError("numloom shares host memory without a copy only when it is "
                          "C-contiguous; pass copy=None to copy it")  # fmt: skip
    buffer = Buffer(host.view(), "cpu")
    buffer.exports = [_ALWAYS]  # the producer's memory: numloom never writes it in place
    n = node(Op.BUFFER, (), buffer, host.shape, host.dtype)
    return _adopt(ndarray.__new__(ndarray), Storage(n, "cpu"), View.contiguous(host.shape))


def _read_capsule(capsule, device: str):
    address = _api.PyCapsule_GetPointer(capsule, _NAME)
    managed = DLManagedTensor.from_address(address)
    tensor = managed.dl_tensor
    dtype = _dtype(tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes)
    shape = tuple(tensor.shape[k] for k in range(tensor.ndim))
    if tensor.strides:
        strides = tuple(tensor.strides[k] for k in range(tensor.ndim))
    else:
        from ..core.dag import contiguous_strides

        strides = contiguous_strides(shape)
    deleter = managed.deleter if managed.deleter else None
    owner = _Owner(capsule, address, (lambda a: deleter(a)) if deleter else None)
    _api.PyCapsule_SetName(capsule, _USED)
    return _wrap(tensor.data + tensor.byte_offset, shape, strides, dtype, device, owner)
