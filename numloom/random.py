"""``numloom.random``: NumPy's random generators, with array results as numloom arrays.

Random numbers are drawn by NumPy on the host (counted and warned about as fallbacks), so a
seeded program draws exactly the numbers it draws under NumPy; what a draw writes (``shuffle``,
``out=``) is written into numloom's arrays.
"""

from __future__ import annotations

import numpy as _np

from .api import writes
from .api.fallback import PASS_THROUGH, WRITES, _warn_once, module_getattr, to_numpy


class _Drawing:
    """A NumPy ``Generator`` or ``RandomState`` whose array results are numloom arrays."""

    def __init__(self, generator):
        self._generator = generator

    def __getattr__(self, name: str):
        attr = getattr(self._generator, name)
        if not callable(attr) or name.startswith("_") or name in PASS_THROUGH:
            return attr

        def draw(*args, **kwargs):
            _warn_once(f"random.{name}")
            # (a draw that wrote where numloom did not expect it runs again from the same state)
            keeper = self._state_keeper() if writes.arrays_in((args, kwargs)) else None
            return writes.run(attr, args, kwargs, WRITES.get(f"random.{name}", ()), None, keeper)

        draw.__name__ = name
        draw.__doc__ = attr.__doc__
        return draw

    def _state_keeper(self):
        """A function that puts the generator back in the state it has now."""
        generator = self._generator
        if isinstance(generator, _np.random.RandomState):
            state = generator.get_state()
            return lambda: generator.set_state(state)
        bit_generator = generator.bit_generator
        state = bit_generator.state
        return lambda: setattr(bit_generator, "state", state)

    def __repr__(self) -> str:
        return f"numloom {self._generator!r}"


def default_rng(seed=None):
    return _Drawing(_np.random.default_rng(to_numpy(seed)))


def RandomState(seed=None):  # noqa: N802 (NumPy's name)
    return _Drawing(_np.random.RandomState(to_numpy(seed)))


def Generator(bit_generator):  # noqa: N802 (NumPy's name)
    return _Drawing(_np.random.Generator(bit_generator))


def seed(seed=None):
    _np.random.seed(seed)


_global = _Drawing(_np.random.mtrand._rand)


def __getattr__(name: str):
    if hasattr(_np.random.mtrand._rand, name) and not name.startswith("_"):
        return getattr(_global, name)
    return module_getattr("random", _np.random, name)
