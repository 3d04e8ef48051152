"""numloom arrays as Dask's chunks: the ``"numloom"`` array backend, Dask's dispatch for them,
and their serialization between workers.

    import dask, dask.array as da
    with dask.config.set({"array.backend": "numloom"}):
        x = da.random.default_rng(0).standard_normal((10**8,), chunks=10**7)  # numloom chunks
    y = (x * 2 + 1).sum().compute()                                           # a numloom array

``da.from_array(numloom_array, chunks=...)`` makes the same collection from an array the user
holds. Every chunk operation Dask runs is numloom's own (NumPy's dispatch protocols send Dask's
``np.*`` calls on numloom chunks to numloom), and numloom is lazy: a task returns a pending
array and the next task goes on tracing it, so a chain of blockwise tasks over one chunk becomes
one numloom kernel, evaluated where Dask needs a value (a ``compute``, a transfer between worker
processes). numloom is thread-safe, so Dask's threaded scheduler runs chunks concurrently.

Dask finds this module through the ``dask.array.backends`` entry point numloom installs, or on
``import numloom.dask``; importing it registers the lookups Dask dispatches on chunk types
(concatenate, tensordot, einsum, take, empty, percentile, element counts) and serializers that send a
chunk's buffer between workers as a frame, without pickling the data.
"""

from __future__ import annotations

import numpy as _np
from dask.array.backends import ArrayBackendEntrypoint, _nannumel, _numel_arraylike
from dask.array.dispatch import (
    concatenate_lookup,
    einsum_lookup,
    empty_lookup,
    nannumel_lookup,
    numel_lookup,
    percentile_lookup,
    take_lookup,
    tensordot_lookup,
    to_numpy_dispatch,
)
from dask.array.percentile import _percentile
from dask.utils import Dispatch

import numloom as _nl

to_numloom_dispatch = Dispatch("to_numloom_dispatch")


@to_numloom_dispatch.register(_np.ndarray)
def _from_numpy(data, **kwargs):
    return _nl.asarray(data, **kwargs)


@to_numloom_dispatch.register(_nl.ndarray)
def _from_numloom(data, **kwargs):
    return data if not kwargs else _nl.asarray(data, **kwargs)


@to_numpy_dispatch.register(_nl.ndarray)
def _to_numpy(data, **kwargs):
    return data.get()


class PCG64(_np.random.PCG64):
    """NumPy's PCG64, named for numloom: Dask draws a chunk with the generator of the library
    its bit generator's type comes from, so chunks of this one are numloom's (on a GPU, drawn
    on the device: NumPy's stream, bit for bit)."""

    __module__ = "numloom.dask"


class NumloomBackendEntrypoint(ArrayBackendEntrypoint):
    """Dask's ``"numloom"`` array backend: creation functions and random draws make numloom
    chunks."""

    @classmethod
    def to_backend_dispatch(cls):
        return to_numloom_dispatch

    @classmethod
    def to_backend(cls, data, **kwargs):
        if isinstance(data._meta, _nl.ndarray):
            return data
        return data.map_blocks(cls.to_backend_dispatch(), **kwargs)

    @property
    def RandomState(self):  # noqa: N802 (Dask's name)
        return _nl.random.RandomState

    @property
    def default_bit_generator(self):
        return PCG64

    @staticmethod
    def ones(*args, **kwargs):
        return _with_numloom_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args, **kwargs):
        return _with_numloom_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args, **kwargs):
        return _with_numloom_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args, **kwargs):
        return _with_numloom_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args, **kwargs):
        return _with_numloom_meta("arange", *args, **kwargs)


def _with_numloom_meta(name: str, *args, meta=None, **kwargs):
    """Dask's own creation function ``name`` with a numloom ``meta``: its chunks come from
    numloom (``np.ones_like(meta, ...)`` and the like dispatch to numloom)."""
    import dask
    import dask.array as da

    meta = _nl.empty((0,)) if meta is None else meta  # (0-d: indexing it gives a scalar)
    with dask.config.set({"array.backend": "numpy"}):
        if name == "arange":
            return da.arange(*args, like=meta, **kwargs)
        return getattr(da, name)(*args, meta=meta, **kwargs)


concatenate_lookup.register(_nl.ndarray, _nl.concatenate)
tensordot_lookup.register(_nl.ndarray, _nl.tensordot)
einsum_lookup.register(_nl.ndarray, _nl.einsum)
take_lookup.register(_nl.ndarray, _nl.take)
empty_lookup.register(_nl.ndarray, _nl.empty)
percentile_lookup.register(_nl.ndarray, _percentile)  # (Dask's: np.percentile, numloom's here)
numel_lookup.register(_nl.ndarray, _numel_arraylike)
nannumel_lookup.register(_nl.ndarray, _nannumel)


# --- serialization between worker processes --------------------------------------------------


def _register_serializers() -> None:
    """A chunk goes between workers as a header and its host buffer (a frame Dask sends as it
    is, not pickled); it arrives as a numloom array on the receiving worker's device."""
    try:
        from distributed.protocol import dask_deserialize, dask_serialize
        from distributed.protocol.numpy import deserialize_numpy_ndarray, serialize_numpy_ndarray
    except ImportError:  # (Dask without distributed: nothing goes between processes)
        return

    @dask_serialize.register(_nl.ndarray)
    def _serialize(x):
        header, frames = serialize_numpy_ndarray(_np.ascontiguousarray(_np.asarray(x)))
        header["numloom-device"] = x.device
        return header, frames

    @dask_deserialize.register(_nl.ndarray)
    def _deserialize(header, frames):
        device = header.pop("numloom-device", "cpu")
        host = deserialize_numpy_ndarray(header, frames)
        return _nl.asarray(host, device=device if device == "cpu" else None)


_register_serializers()

__all__ = ["NumloomBackendEntrypoint", "PCG64", "to_numloom_dispatch"]
