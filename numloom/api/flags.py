"""``ndarray.flags``: NumPy's flags object for numloom arrays (attribute and item access, and
the writeable flag that makes an array refuse writes)."""

from __future__ import annotations

import warnings

import numpy as _np

from ..core.dag import prod, warn_at_user
from ..core.views import _warns_on_write, forget_first_write

# NumPy's keys and abbreviations -> the attribute each names
_KEYS = {
    "C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "CONTIGUOUS": "c_contiguous",
    "F_CONTIGUOUS": "f_contiguous", "F": "f_contiguous", "FORTRAN": "f_contiguous",
    "OWNDATA": "owndata", "O": "owndata", "WRITEABLE": "writeable", "W": "writeable",
    "ALIGNED": "aligned", "A": "aligned", "WRITEBACKIFCOPY": "writebackifcopy",
    "X": "writebackifcopy", "BEHAVED": "behaved", "B": "behaved", "CARRAY": "carray",
    "CA": "carray", "FARRAY": "farray", "FA": "farray", "FNC": "fnc", "FORC": "forc",
}  # fmt: skip
_SETTABLE = {"WRITEABLE", "W", "ALIGNED", "A", "WRITEBACKIFCOPY", "X"}


def _contiguous(view, reverse: bool) -> bool:
    if prod(view.shape) <= 1:
        return True
    expected = 1
    pairs = list(zip(view.shape, view.strides))
    for n, s in pairs if reverse else reversed(pairs):
        if n == 1:
            continue
        if s != expected:
            return False
        expected *= n
    return True


class flagsobj:
    """The flags of one numloom array, as ``numpy.ndarray.flags`` gives them."""

    __slots__ = ("_array",)

    def __init__(self, array):
        self._array = array

    @property
    def c_contiguous(self) -> bool:
        return _contiguous(self._array._view, reverse=False)

    @property
    def f_contiguous(self) -> bool:
        return _contiguous(self._array._view, reverse=True)

    contiguous = c_contiguous  # (NumPy's attribute names: ``flags.contiguous``, ``flags.fortran``)
    fortran = f_contiguous

    @property
    def owndata(self) -> bool:
        return self._array.base is None

    @property
    def writeable(self) -> bool:
        if _warns_on_write(self._array):
            warn_at_user("future versions will not create a writeable array from "
                         "broadcast_array. Set the writable flag explicitly to avoid this "
                         "warning.", FutureWarning)  # fmt: skip
        return not self._array._readonly

    @writeable.setter
    def writeable(self, value) -> None:
        self._array._readonly = not value
        if value:  # (set explicitly: a broadcast_arrays result's warnings end, as NumPy's)
            forget_first_write(self._array)

    @property
    def aligned(self) -> bool:
        return True

    @aligned.setter
    def aligned(self, value) -> None:
        if not value:
            raise ValueError("cannot set ALIGNED flag of a numloom array to False")

    @property
    def writebackifcopy(self) -> bool:
        return False

    @writebackifcopy.setter
    def writebackifcopy(self, value) -> None:
        if value:
            raise ValueError("cannot set WRITEBACKIFCOPY flag to True of this array")

    @property
    def behaved(self) -> bool:
        return self.aligned and self.writeable

    @property
    def carray(self) -> bool:
        return self.behaved and self.c_contiguous

    @property
    def farray(self) -> bool:
        return self.behaved and self.f_contiguous and not self.c_contiguous

    @property
    def fnc(self) -> bool:
        return self.f_contiguous and not self.c_contiguous

    @property
    def forc(self) -> bool:
        return self.f_contiguous or self.c_contiguous

    @property
    def num(self) -> int:
        bits = (self.c_contiguous, self.f_contiguous, self.owndata, False, False, False,
                False, False, self.aligned, False, self.writeable, False, False,
                self.writebackifcopy)  # fmt: skip
        return sum(1 << k for k, on in enumerate(bits) if on)

    def __getitem__(self, key):
        name = _KEYS.get(key) if isinstance(key, str) else None
        if name is None:
            raise KeyError("Unknown flag")
        return getattr(self, name)

    def __setitem__(self, key, value) -> None:
        if not isinstance(key, str) or key not in _SETTABLE:
            raise KeyError("Unknown flag")
        setattr(self, _KEYS[key], value)

    def __eq__(self, other):
        if not isinstance(other, flagsobj):
            return NotImplemented
        return all(self[k] == other[k] for k in ("C", "F", "O", "W", "A", "X"))

    def __repr__(self) -> str:
        return "".join(f"  {k} : {self[k]}\n" for k in (
            "C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED",
            "WRITEBACKIFCOPY"))  # fmt: skip


class flatiter:
    """``ndarray.flat``: the array's elements in C order, read, written and iterated as
    NumPy's flat iterator (a write lands in the array's storage, so its views see it)."""

    __slots__ = ("base",)

    def __init__(self, array):
        self.base = array

    def __len__(self) -> int:
        return self.base.size

    def __iter__(self):
        return iter(self.base._host_view().flat)

    def __getitem__(self, key):
        """An element (NumPy's scalar) or a new array, never a view, as NumPy's: the positions
        NumPy's flat iterator picks (its errors and warnings), gathered from ``base``."""
        from ..core.array import asarray
        from .joins import take
        from .shapes import ravel

        flat = ravel(self.base)
        if type(key) is int:  # (an element: the common read)
            return flat[key]
        if type(key) is slice:
            return flat[key].copy()
        positions = _numpys_flat(lambda: _np.arange(flat.size).reshape(self.base.shape).flat[
            _numpy_key(key)])  # fmt: skip
        if isinstance(positions, _np.integer):
            return flat[int(positions)]
        return take(flat, asarray(positions))

    def __setitem__(self, key, value) -> None:
        from ..core.array import ndarray
        from .indexing import setitem

        a = self.base
        if a._readonly:
            raise ValueError("assignment destination is read-only")
        host = a.get()  # NumPy's flat assignment (values repeat), then the whole array back
        value = _np.asarray(value) if isinstance(value, ndarray) else value
        _numpys_flat(lambda: host.flat.__setitem__(_numpy_key(key), value))
        setitem(a, Ellipsis, host)

    def __array__(self, dtype=None, copy=None):
        import numpy

        return numpy.asarray(self.base.get().reshape(-1), dtype=dtype)

    def copy(self):
        from .shapes import ravel

        return ravel(self.base).copy()


def _numpy_key(key):
    """A flat index as NumPy's flat iterator takes it: numloom's arrays (and their ``flat``) as
    NumPy's, so that a boolean array is a mask, not a list of bools."""
    from ..core.array import ndarray

    if isinstance(key, ndarray):
        return _np.asarray(key)
    if isinstance(key, flatiter):
        return key.base.get().flat
    if isinstance(key, tuple):
        return tuple(_numpy_key(k) for k in key)
    return key


def _numpys_flat(call):
    """``call()``, NumPy's flat iterator at work, its warnings given again at the user's line."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        made = call()
    for w in caught:
        warn_at_user(w.message, w.category)
    return made
