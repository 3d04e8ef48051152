"""numba.types' names for kernel types: ``types.int32`` as a dtype (``cuda.shared.array(shape,
types.int32)``), a conversion inside kernels (``types.float32(x)``), an array type
(``types.float32[:, ::1]``) and a signature (``types.void(types.float32[:], types.int64)``).

``import numloom as numba`` makes ``numba.types.int32`` and ``numba.cuda`` numloom's.
"""

from __future__ import annotations

import numpy as _np

from . import ktypes as _k


class Signature:
    """``return_type(arg, ...)``, as Numba's signatures."""

    def __init__(self, return_type, args: tuple):
        self.return_type, self.args = return_type, tuple(args)

    def __repr__(self) -> str:
        return f"{self.return_type}({', '.join(map(str, self.args))})"


class NumberType:
    """A scalar type: ``int32``, ``float64``..."""

    def __init__(self, dtype):
        self._numloom_dtype = _np.dtype(dtype)
        self._numloom_type = _k.Scalar(self._numloom_dtype)
        self.__name__ = str(self._numloom_dtype)

    def __repr__(self) -> str:
        return self.__name__

    def __call__(self, *args):
        """``float32(float32, float32)`` builds a signature; ``float32(x)`` converts."""
        if args and all(isinstance(a, (NumberType, ArrayType)) for a in args):
            return Signature(self, args)
        if len(args) == 1:
            return self._numloom_dtype.type(args[0])
        raise TypeError(f"{self.__name__}() takes one value or argument types")

    def __getitem__(self, dims) -> ArrayType:
        dims = dims if isinstance(dims, tuple) else (dims,)
        contiguous = isinstance(dims[-1], slice) and dims[-1].step == 1
        return ArrayType(self._numloom_dtype, len(dims), "C" if contiguous else "A")

    def __eq__(self, other) -> bool:
        return isinstance(other, NumberType) and other._numloom_dtype == self._numloom_dtype

    def __hash__(self) -> int:
        return hash(self._numloom_dtype)


class ArrayType:
    def __init__(self, dtype, ndim: int, layout: str):
        self._numloom_type = _k.Array(_np.dtype(dtype), ndim, layout)

    def __repr__(self) -> str:
        return str(self._numloom_type)


class VoidType:
    _numloom_type = _k.NONE

    def __call__(self, *args) -> Signature:
        return Signature(self, args)

    def __repr__(self) -> str:
        return "void"


void = none = VoidType()
boolean = b1 = bool_ = NumberType(_np.bool_)
int8 = i1 = NumberType(_np.int8)
int16 = i2 = NumberType(_np.int16)
int32 = i4 = intc = NumberType(_np.int32)
int64 = i8 = intp = NumberType(_np.int64)
uint8 = u1 = NumberType(_np.uint8)
uint16 = u2 = NumberType(_np.uint16)
uint32 = u4 = uintc = NumberType(_np.uint32)
uint64 = u8 = uintp = NumberType(_np.uint64)
float16 = f2 = NumberType(_np.float16)
float32 = f4 = NumberType(_np.float32)
float64 = f8 = double = NumberType(_np.float64)
complex64 = c8 = NumberType(_np.complex64)
complex128 = c16 = NumberType(_np.complex128)
