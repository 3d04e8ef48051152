"""``numloom.random``: NumPy's random generators, with array results as numloom arrays.

A seeded program draws exactly the numbers it draws under NumPy, on either device:

- On the CPU, NumPy draws them into memory that becomes numloom's (no copy).
- On a GPU, a ``Generator`` over PCG64 (what ``default_rng`` makes) draws ``random``,
  ``uniform``, ``standard_normal``, ``normal``, ``standard_exponential``, ``exponential`` and
  ``integers`` (``int64``, ``int32``) on the device, NumPy's stream bit for bit
  (``backends/cuda_random.py``), and moves its state on as NumPy would. One exception:
  ziggurat tail samples (about 1 in 3,600 normals) take a logarithm. numloom's is correctly
  rounded; the C library's, which NumPy calls, is not quite (glibc's differs in about 1 of
  1,200 of them), so about one sample in a few million may differ from NumPy's in its last
  bit (as NumPy's own tails differ between C libraries).
- ``lognormal``, ``standard_cauchy``, ``gumbel``, ``laplace``, ``logistic``, ``rayleigh``,
  ``weibull``, ``pareto``, ``power``, ``triangular`` and ``geometric`` take one of those draws
  a sample, as NumPy's do: NumPy's formulas (``distributions.c``) over the device's draws, as
  numloom operations that fuse with the sample's use. The stream is NumPy's; the device's
  ``exp``, ``log`` and ``pow`` may round a last bit apart from the C library's. (NumPy draws
  again where a double is exactly 0.0, in ``gumbel``, ``laplace`` and ``logistic``: one draw
  in 2**53; numloom does not.)
- ``choice``, ``permutation``, ``shuffle`` and ``permuted`` follow NumPy's order exactly:
  Fisher-Yates is sequential, so NumPy's generator draws the order on the host (an index,
  one entry per row) and the data is gathered on the device, never copied. A large
  ``permutation(n)`` costs the host's time for it (about 0.5 s for 10**7).
  ``choice`` with replacement draws on the device.
- The legacy ``RandomState`` and ``np.random.*`` functions draw on a GPU from a Philox
  stream of the same seed (``api/philox.py``): their NumPy stream (MT19937) cannot jump
  ahead cheaply, so these numbers are not NumPy's. ``rand``, ``randn``, ``random_sample``,
  ``uniform``, ``standard_normal``, ``normal``, ``lognormal``, ``standard_exponential``,
  ``exponential``, ``standard_cauchy``, ``gumbel``, ``laplace``, ``logistic``, ``rayleigh``,
  ``weibull``, ``pareto``, ``power``, ``geometric``, ``triangular``, ``wald``, ``randint``,
  ``random_integers``, ``choice``, ``permutation`` and ``shuffle`` do;
  ``NUMLOOM_RANDOM=philox`` draws them from Philox on the CPU too (the same numbers as on a
  GPU).
- Everything else (other methods and bit generators, ``out=``, array-valued parameters,
  scalar draws) is drawn by NumPy on the host and copied to the GPU (counted and warned about
  as a fallback). ``NUMLOOM_RANDOM=numpy`` draws everything with NumPy on the host.

What a draw writes (``shuffle``, ``out=``) is written into numloom's arrays.
"""

from __future__ import annotations

import math as _math
import operator as _operator

import numpy as _np

from .api import writes
from .api.fallback import PASS_THROUGH, WRITES, _warn_once, module_getattr, to_numpy
from .api.ufuncs import _HOST_SCALARS
from .core import config as _config
from .core.array import _Scalar
from .core.device import get_device

# Parameters a scalar draw (no ``size``) takes straight to NumPy's generator: a loop's
# ``np.random.normal(0, 1)`` costs what NumPy's does (a numloom array among them takes the
# whole way, its values read as NumPy reads them)
_PLAIN = frozenset([int, float, type(None), _np.float64, _np.int64])


class _Drawing:
    """A NumPy ``Generator`` or ``RandomState`` whose array results are numloom arrays."""

    def __init__(self, generator):
        self._generator = generator
        self._draws = {}  # name -> NumPy's method as numloom calls it

    def __getattr__(self, name: str):
        draw = self.__dict__.get("_draws", {}).get(name)
        if draw is not None:
            return draw
        attr = getattr(self._generator, name)
        if not callable(attr) or name.startswith("_") or name in PASS_THROUGH:
            return attr

        def draw(*args, **kwargs):
            if not args and not kwargs:  # (``np.random.normal()``: NumPy's scalar)
                made = attr()
                if type(made) is not _np.ndarray:
                    return made
                return writes.as_numloom(made)
            if _Scalar in map(type, args):  # (``randint(np.sum(empty))``: its NumPy scalar)
                args = tuple(a._host_view()[()] if type(a) is _Scalar else a for a in args)
            if _host_values(args, kwargs) or not writes.arrays_in((args, kwargs)):
                # (``np.random.random()`` in a loop, a list shuffled in place: NumPy's, now)
                made = attr(*args, **kwargs)
                if type(made) is not _np.ndarray:
                    return made  # NumPy's scalar
                if get_device() != "cpu" and made.size:
                    _warn_once(f"random.{name}")
                return writes.as_numloom(made)
            # (a draw that wrote where numloom did not expect it runs again from the same state)
            given = writes.arrays_in((args, kwargs))
            keeper = self._state_keeper() if given else None
            made = writes.run(attr, args, kwargs, WRITES.get(f"random.{name}", ()), None, keeper)
            if get_device() != "cpu" and (given or any(a.size for a in writes.arrays_in(made))):
                _warn_once(f"random.{name}")  # (arrays went between host and device; an empty
                # draw, as Dask makes for a collection's meta, moves nothing)
            return made

        draw.__name__ = name
        draw.__doc__ = attr.__doc__
        self._draws[name] = draw
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


class Generator(_Drawing, _np.random.Generator):
    """A NumPy ``Generator`` (``Generator(PCG64(seed))``, or what ``default_rng`` makes); over
    PCG64, on a GPU, its common samplers draw on the device. It is an instance of NumPy's
    class, over the same bit generator (SciPy's and pandas' ``random_state`` take it)."""

    def __init__(self, bit_generator):
        if not isinstance(bit_generator, _np.random.Generator):
            bit_generator = _np.random.Generator(bit_generator)  # (NumPy's errors)
        _np.random.Generator.__init__(self, bit_generator.bit_generator)
        _Drawing.__init__(self, bit_generator)

    def __reduce__(self):
        return (Generator, (self._generator,))

    def random(self, size=None, dtype=_np.float64, out=None):
        if size is None and out is None and dtype is _np.float64:  # (a loop's ``rng.random()``)
            return self._generator.random()
        shape = self._device_shape(size, out)
        if shape is not None and _np.dtype(dtype) in (_np.float32, _np.float64):
            return self._fill(shape, dtype)
        return self.__getattr__("random")(size, dtype=dtype, out=out)

    def uniform(self, low=0.0, high=1.0, size=None):
        if size is None and type(low) in _PLAIN and type(high) in _PLAIN:
            return self._generator.uniform(low, high)  # (a loop's scalar draw: NumPy's)
        shape = self._device_shape(size)
        if shape is not None and _scalars(low, high):
            self._generator.uniform(low, high, size=0)  # (NumPy's checks: OverflowError, ...)
            return self._fill(shape, _np.float64, float(low), float(high) - float(low))
        return self.__getattr__("uniform")(low, high, size)

    def standard_normal(self, size=None, dtype=_np.float64, out=None):
        if size is None and out is None and dtype is _np.float64:
            return self._generator.standard_normal()
        shape = self._device_shape(size, out)
        if shape is not None and _np.dtype(dtype) in (_np.float32, _np.float64):
            return self._ziggurat("normal", shape, dtype)
        return self.__getattr__("standard_normal")(size, dtype=dtype, out=out)

    def normal(self, loc=0.0, scale=1.0, size=None):
        if size is None and type(loc) in _PLAIN and type(scale) in _PLAIN:
            return self._generator.normal(loc, scale)
        shape = self._device_shape(size)
        if shape is not None and _scalars(loc, scale):
            self._generator.normal(loc, scale, size=0)  # (NumPy's checks: "scale < 0")
            return self._ziggurat("normal", shape, _np.float64, 1, float(loc), float(scale))
        return self.__getattr__("normal")(loc, scale, size)

    def standard_exponential(self, size=None, dtype=_np.float64, method="zig", out=None):
        shape = self._device_shape(size, out)
        if shape is not None and method == "zig" and _np.dtype(dtype) in (_np.float32,
                                                                          _np.float64):
            return self._ziggurat("exponential", shape, dtype)
        return self.__getattr__("standard_exponential")(size, dtype=dtype, method=method,
                                                         out=out)

    def exponential(self, scale=1.0, size=None):
        if size is None and type(scale) in _PLAIN:
            return self._generator.exponential(scale)
        shape = self._device_shape(size)
        if shape is not None and _scalars(scale):
            self._generator.exponential(scale, size=0)  # (NumPy's checks: "scale < 0")
            return self._ziggurat("exponential", shape, _np.float64, 2, 0.0, float(scale))
        return self.__getattr__("exponential")(scale, size)

    def integers(self, low, high=None, size=None, dtype=_np.int64, endpoint=False):
        if size is None and type(low) in _PLAIN and type(high) in _PLAIN:
            return self._generator.integers(low, high, None, dtype, endpoint)
        shape = self._device_shape(size)
        if shape is not None and _integers(low, high) and _np.dtype(dtype) in (_np.int64,
                                                                                _np.int32):
            self._generator.integers(low, high, size=0, dtype=dtype, endpoint=endpoint)  # checks
            first, last = (0, int(low)) if high is None else (int(low), int(high))
            span = last - first - (0 if endpoint else 1)  # (the values: first .. first + span)
            if span not in (0, 0xFFFFFFFF, (1 << 64) - 1):  # (NumPy draws these unbounded)
                from .backends import cuda_random

                made = self._draw(lambda state: cuda_random.integers(
                    state, shape, dtype, get_device(), first, span), span <= 0xFFFFFFFF)
                if made is not None:
                    return made
        return self.__getattr__("integers")(low, high, size, dtype=dtype, endpoint=endpoint)

    # -- samplers that take one draw of the stream per sample, as NumPy's do: NumPy's
    # formulas (distributions.c) over the device's doubles, normals and exponentials, as
    # numloom operations (they fuse with the draw's use) --

    def lognormal(self, mean=0.0, sigma=1.0, size=None):
        return self._transform("lognormal", (mean, sigma), size, "normal",
                               lambda nl, z, mean, sigma: nl.exp(mean + sigma * z))

    def standard_cauchy(self, size=None):
        shape = self._device_shape(size)
        if shape is None:
            return self.__getattr__("standard_cauchy")(size)
        z = self.standard_normal(2 * _math.prod(shape))  # (numerator, then denominator)
        return (z[0::2] / z[1::2]).reshape(shape)

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        return self._transform("gumbel", (loc, scale), size, "double",
                               lambda nl, u, loc, scale: loc - scale * nl.log(-nl.log(1.0 - u)))

    def laplace(self, loc=0.0, scale=1.0, size=None):
        return self._transform("laplace", (loc, scale), size, "double",
                               lambda nl, u, loc, scale: nl.where(
                                   u >= 0.5, loc - scale * nl.log(2.0 - u - u),
                                   loc + scale * nl.log(u + u)))  # fmt: skip

    def logistic(self, loc=0.0, scale=1.0, size=None):
        return self._transform("logistic", (loc, scale), size, "double",
                               lambda nl, u, loc, scale: loc + scale * nl.log(u / (1.0 - u)))

    def rayleigh(self, scale=1.0, size=None):
        return self._transform("rayleigh", (scale,), size, "exponential",
                               lambda nl, e, scale: scale * nl.sqrt(2.0 * e))

    def weibull(self, a, size=None):
        shape = self._device_shape(size)
        if shape is not None and _scalars(a) and float(a) == 0.0:
            self._generator.weibull(a, size=0)  # (NumPy's checks; a == 0 draws nothing)
            return _nl().zeros(shape)
        return self._transform("weibull", (a,), size, "exponential",
                               lambda nl, e, a: nl.power(e, 1.0 / a))

    def pareto(self, a, size=None):
        return self._transform("pareto", (a,), size, "exponential",
                               lambda nl, e, a: nl.expm1(e / a))

    def power(self, a, size=None):
        return self._transform("power", (a,), size, "exponential",
                               lambda nl, e, a: nl.power(-nl.expm1(-e), 1.0 / a))

    def triangular(self, left, mode, right, size=None):
        def draw(nl, u, left, mode, right):
            base = right - left
            leftbase = mode - left
            ratio = leftbase / base
            leftprod, rightprod = leftbase * base, (right - mode) * base
            return nl.where(u <= ratio, left + nl.sqrt(u * leftprod),
                            right - nl.sqrt((1.0 - u) * rightprod))

        return self._transform("triangular", (left, mode, right), size, "double", draw)

    def geometric(self, p, size=None):
        if _scalars(p) and float(p) >= 0.333333333333333333333333:
            return self._transform("geometric", (p,), size, "double", _geometric_search)
        return self._transform("geometric", (p,), size, "exponential", _geometric_inversion)

    def _transform(self, name, params, size, base, draw):
        """``draw(numloom, x, *params)`` over ``x``, the device's draws of ``base`` (one a
        sample), where the device draws; else NumPy's ``name``. NumPy checks the parameters
        either way."""
        shape = self._device_shape(size)
        if shape is None or not _scalars(*params):
            return self.__getattr__(name)(*params, size)
        getattr(self._generator, name)(*params, size=0)  # (NumPy's checks: no draw)
        x = {"double": self.random, "normal": self.standard_normal,
             "exponential": self.standard_exponential}[base](shape)  # fmt: skip
        return draw(_nl(), x, *(float(v) for v in params))

    # -- orders: Fisher-Yates is sequential, so the order (an index, one per row) is drawn on
    # the host by NumPy's own generator; the data moves on the device --

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        nl = _nl()
        shape = self._device_shape(size)
        population = _population(a, axis)
        if shape is None or population is None or isinstance(p, nl.ndarray) and p.ndim != 1:
            return self.__getattr__("choice")(a, size, replace, p, axis, shuffle)
        host_p = None if p is None else to_numpy(p)
        # NumPy's checks of ``p`` (no samples: no draws)
        self._generator.choice(population, 0, replace, host_p, shuffle=shuffle)
        if not replace:
            index = nl.asarray(self._generator.choice(population, shape, False, host_p,
                                                      shuffle=shuffle))  # fmt: skip
        elif host_p is None:
            index = self.integers(0, population, size=shape, dtype=_np.int64)
        else:
            index = _by_probability(host_p, self.random(shape))
        return index if not isinstance(a, nl.ndarray) else a.take(index, axis=axis)

    def permutation(self, x, axis=0):
        nl = _nl()
        if isinstance(x, (int, _np.integer)) and not isinstance(x, bool):
            if self._device_shape(max(int(x), 0)) is None:
                return self.__getattr__("permutation")(x)
            return nl.asarray(self._generator.permutation(x))
        if not isinstance(x, nl.ndarray) or x.ndim == 0 or self._device_shape(x.size) is None:
            return self.__getattr__("permutation")(x, axis)
        axis = _np.lib.array_utils.normalize_axis_index(axis, x.ndim)
        return x.take(nl.asarray(self._generator.permutation(x.shape[axis])), axis=axis)

    def shuffle(self, x, axis=0):
        nl = _nl()
        if not isinstance(x, nl.ndarray) or x.ndim == 0 or self._device_shape(x.size) is None:
            return self.__getattr__("shuffle")(x, axis)
        if x._readonly:
            raise ValueError("array is read-only")
        axis = _np.lib.array_utils.normalize_axis_index(axis, x.ndim)
        order = nl.asarray(self._generator.permutation(x.shape[axis]))
        x[...] = x.take(order, axis=axis)

    def permuted(self, x, *, axis=None, out=None):
        nl = _nl()
        if (not isinstance(x, nl.ndarray) or x.ndim == 0 or self._device_shape(x.size) is None
                or (out is not None and not isinstance(out, nl.ndarray))
                or (axis is None and x.ndim > 1 and not x.flags.c_contiguous)):  # fmt: skip
            return self.__getattr__("permuted")(x, axis=axis, out=out)
        if out is not None:
            if out._readonly:
                raise ValueError("out is read-only")
            if out.shape != x.shape:
                raise ValueError("out must have the same shape as x")
            nl.copyto(out, x, casting="safe")  # (NumPy's error for an unsafe cast)
        if axis is None:  # the flat order of the elements, as NumPy shuffles a C-ordered x
            order = self._generator.permutation(x.size).reshape(x.shape)
            made = x.reshape(-1).take(nl.asarray(order))
        else:
            axis = _np.lib.array_utils.normalize_axis_index(axis, x.ndim)
            rows = _np.broadcast_to(_np.arange(x.shape[axis]).reshape(
                (-1,) + (1,) * (x.ndim - 1 - axis)), x.shape).copy()  # fmt: skip
            order = self._generator.permuted(rows, axis=axis, out=rows)
            made = nl.take_along_axis(x, nl.asarray(order), axis=axis)
        if out is None:
            return made
        out[...] = made
        return out

    # -- on the device --

    def _device_shape(self, size, out=None):
        """The shape of a draw the device makes, or None where NumPy draws it on the host."""
        if size is None or out is not None or get_device() == "cpu":
            return None
        if not isinstance(self._generator.bit_generator, _np.random.PCG64):
            return None
        if _config.env("NUMLOOM_RANDOM", "") == "numpy":
            return None
        shape = _shape_of(size)
        from .backends import cuda_random

        return shape if shape is not None and cuda_random.available() else None

    def _fill(self, shape, dtype, low=0.0, span=None):
        from .backends import cuda_random

        return self._draw(lambda state: cuda_random.fill(state, shape, dtype, get_device(), low,
                                                         span),
                          _np.dtype(dtype) == _np.float32)  # fmt: skip

    def _ziggurat(self, family, shape, dtype, mode=0, loc=0.0, scale=1.0):
        from .backends import cuda_random

        single = _np.dtype(dtype) == _np.float32
        kind = f"{family}{32 if single else 64}"
        made = self._draw(lambda state: cuda_random.ziggurat(kind, state, shape, get_device(),
                                                             mode, loc, scale), single)  # fmt: skip
        if made is not None:
            return made
        if family == "normal":  # (the device could not finish: NumPy draws, from the same state)
            return (self.__getattr__("normal")(loc, scale, shape) if mode else
                    self.__getattr__("standard_normal")(shape, dtype))  # fmt: skip
        return (self.__getattr__("exponential")(scale, shape) if mode else
                self.__getattr__("standard_exponential")(shape, dtype))  # fmt: skip

    def _draw(self, device_draw, unit32: bool):
        """Run ``device_draw(state)`` under the bit generator's lock and move the generator on
        by the draws it took: the new array, or None where the device could not draw it."""
        from .api import random_streams
        from .backends.cuda_library import adopt

        bit_generator = self._generator.bit_generator
        with bit_generator.lock:
            state = bit_generator.state
            made = device_draw(state)
            if made is None:
                return None
            data, taken = made
            bit_generator.state = random_streams.advanced(state, taken, unit32)
        return adopt(data, get_device())


def _geometric_search(nl, u, p):
    """NumPy's ``random_geometric_search`` (p >= 1/3): the first count whose cumulative
    probability, summed as NumPy sums it, reaches ``u``: a table search."""
    sums, total, prod, q = [], p, p, 1.0 - p
    while True:
        sums.append(total)
        if total >= 1.0 - 2.0**-53 or prod == 0.0:  # (no double draw lies beyond)
            break
        prod *= q
        total += prod
    return nl.asarray(_np.array(sums)).searchsorted(u, side="left") + 1


def _geometric_inversion(nl, e, p):
    """NumPy's ``random_geometric_inversion`` (p < 1/3) of a standard exponential."""
    z = nl.ceil(-e / _math.log1p(-p))
    return nl.where(z >= 9.223372036854776e18, _np.iinfo(_np.int64).max, z.astype(_np.int64))


def _by_probability(p, u):
    """``choice``'s picks of uniform doubles ``u`` (numloom's) by probabilities ``p`` (host):
    NumPy's cumulative sum, normalized, searched on the device."""
    cdf = _np.asarray(p, dtype=_np.float64).cumsum()
    cdf /= cdf[-1]
    return _nl().asarray(cdf).searchsorted(u, side="right")


def _population(a, axis):
    """The population size ``choice`` samples from (an int, or the length of a numloom array
    along ``axis``), or None where NumPy takes the call (other inputs, NumPy's errors)."""
    nl = _nl()
    if isinstance(a, (int, _np.integer)) and not isinstance(a, bool):
        return int(a) if a > 0 else None
    if isinstance(a, nl.ndarray) and a.ndim and isinstance(axis, (int, _np.integer)) and (
            -a.ndim <= axis < a.ndim) and a.shape[axis] > 0:  # fmt: skip
        return a.shape[axis]
    return None


def _shape_of(size):
    """``size`` as a shape with elements, or None (NumPy's error for a bad size, or an empty
    result: NumPy's path gives both)."""
    try:
        shape = (_operator.index(size),) if not isinstance(size, tuple) else tuple(
            _operator.index(n) for n in size)  # fmt: skip
    except TypeError:
        return None
    return None if any(n < 0 for n in shape) or _math.prod(shape) == 0 else shape


def _integers(low, high) -> bool:
    """Whether ``integers``' bounds are plain integers (arrays broadcast: NumPy draws those)."""
    return all(v is None or isinstance(v, (int, _np.integer)) and not isinstance(v, bool)
               for v in (low, high))  # fmt: skip


def _scalars(*values) -> bool:
    """Whether distribution parameters are plain numbers (arrays broadcast: NumPy draws those)."""
    return all(isinstance(v, (int, float, _np.integer, _np.floating)) and not isinstance(v, bool)
               for v in values)  # fmt: skip


def default_rng(seed=None):
    if isinstance(seed, _Drawing):
        return seed
    return Generator(_np.random.default_rng(to_numpy(seed)))


class RandomState(_Drawing, _np.random.RandomState):
    """A NumPy ``RandomState`` (also behind the ``numpy.random.*`` functions). On a GPU its
    common draws come from a Philox stream of the same seed, as numloom operations (a fused
    kernel, no host round trip): MT19937 cannot jump ahead cheaply, so these are not NumPy's
    numbers (``NUMLOOM_RANDOM=numpy`` draws NumPy's on the host; ``NUMLOOM_RANDOM=philox``
    draws Philox's on the CPU too, the same numbers as on a GPU). It is an instance of NumPy's
    class, over the same bit generator (scikit-learn's ``random_state`` takes it)."""

    def __init__(self, seed=None):
        if isinstance(seed, _np.random.RandomState):  # (NumPy's, whose draws this makes)
            generator, seed = seed, None
        else:
            seed = to_numpy(seed)
            generator = _np.random.RandomState(seed)
        _np.random.RandomState.__init__(self, generator._bit_generator)
        _Drawing.__init__(self, generator)
        from .api.philox import Stream

        self._philox = Stream(seed)

    def __reduce__(self):
        philox = self._philox
        return (_random_state, (self._generator, philox.key, philox.used))

    def seed(self, seed=None):
        self._generator.seed(seed)
        self._philox.seed(seed)

    # -- draws from Philox where they run on the device --

    def random_sample(self, size=None):
        if size is None:  # (a loop's ``np.random.random() < p``: NumPy's float, at its cost)
            return self._generator.random_sample()
        shape = self._philox_shape(size)
        return self._u(shape) if shape is not None else self.__getattr__("random_sample")(size)

    def random(self, size=None):
        if size is None:
            return self._generator.random_sample()
        return self.random_sample(size)

    def ranf(self, size=None):
        return self.random_sample(size)

    def sample(self, size=None):
        return self.random_sample(size)

    def rand(self, *shape):
        if not shape:
            return self._generator.random_sample()
        if self._philox_shape(shape) is None:
            return self.__getattr__("rand")(*shape)
        return self._u(self._philox_shape(shape))

    def randn(self, *shape):
        if not shape:
            return self._generator.randn()
        if self._philox_shape(shape) is None:
            return self.__getattr__("randn")(*shape)
        return self._normal(self._philox_shape(shape))

    def uniform(self, low=0.0, high=1.0, size=None):
        if size is None and type(low) in _PLAIN and type(high) in _PLAIN:
            return self._generator.uniform(low, high)  # (a loop's scalar draw: NumPy's)
        shape = self._philox_shape(size)
        if shape is None or not _scalars(low, high):
            return self.__getattr__("uniform")(low, high, size)
        _np.random.RandomState(0).uniform(low, high, size=0)  # (NumPy's checks)
        return float(low) + (float(high) - float(low)) * self._u(shape)

    def standard_normal(self, size=None):
        shape = self._philox_shape(size)
        return self._normal(shape) if shape is not None else self.__getattr__(
            "standard_normal")(size)  # fmt: skip

    def normal(self, loc=0.0, scale=1.0, size=None):
        if size is None and type(loc) in _PLAIN and type(scale) in _PLAIN:
            return self._generator.normal(loc, scale)
        shape = self._philox_shape(size)
        if shape is None or not _scalars(loc, scale):
            return self.__getattr__("normal")(loc, scale, size)
        _np.random.RandomState(0).normal(loc, scale, size=0)
        return float(loc) + float(scale) * self._normal(shape)

    def lognormal(self, mean=0.0, sigma=1.0, size=None):
        shape = self._philox_shape(size)
        if shape is None or not _scalars(mean, sigma):
            return self.__getattr__("lognormal")(mean, sigma, size)
        _np.random.RandomState(0).lognormal(mean, sigma, size=0)
        return _nl().exp(float(mean) + float(sigma) * self._normal(shape))

    def standard_exponential(self, size=None):
        shape = self._philox_shape(size)
        return self._exponential(shape) if shape is not None else self.__getattr__(
            "standard_exponential")(size)  # fmt: skip

    def exponential(self, scale=1.0, size=None):
        if size is None and type(scale) in _PLAIN:
            return self._generator.exponential(scale)
        shape = self._philox_shape(size)
        if shape is None or not _scalars(scale):
            return self.__getattr__("exponential")(scale, size)
        _np.random.RandomState(0).exponential(scale, size=0)
        return float(scale) * self._exponential(shape)

    def standard_cauchy(self, size=None):
        shape = self._philox_shape(size)
        if shape is None:
            return self.__getattr__("standard_cauchy")(size)
        return self._normal(shape) / self._normal(shape)

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        return self._transform("gumbel", (loc, scale), size,
                               lambda nl, u, loc, scale: loc - scale * nl.log(-nl.log(1.0 - u)))

    def laplace(self, loc=0.0, scale=1.0, size=None):
        return self._transform("laplace", (loc, scale), size, lambda nl, u, loc, scale: nl.where(
            u >= 0.5, loc - scale * nl.log(2.0 - u - u), loc + scale * nl.log(u + u)))

    def logistic(self, loc=0.0, scale=1.0, size=None):
        return self._transform("logistic", (loc, scale), size,
                               lambda nl, u, loc, scale: loc + scale * nl.log(u / (1.0 - u)))

    def rayleigh(self, scale=1.0, size=None):
        return self._transform("rayleigh", (scale,), size,
                               lambda nl, u, scale: scale * nl.sqrt(-2.0 * nl.log(1.0 - u)))

    def weibull(self, a, size=None):
        return self._transform("weibull", (a,), size, lambda nl, u, a: nl.where(
            a == 0.0, 0.0, (-nl.log(1.0 - u)) ** (1.0 / a if a else 1.0)))

    def pareto(self, a, size=None):
        return self._transform("pareto", (a,), size,
                               lambda nl, u, a: nl.exp(-nl.log(1.0 - u) / a) - 1.0)

    def power(self, a, size=None):
        return self._transform("power", (a,), size,
                               lambda nl, u, a: (1.0 - (1.0 - u)) ** (1.0 / a))

    def geometric(self, p, size=None):
        def draw(nl, u, p):
            if p == 1.0:  # (every first trial succeeds)
                return nl.ones(u.shape, dtype=_np.int64)
            return nl.ceil(nl.log(1.0 - u) / _math.log1p(-p)).astype(_np.int64)

        return self._transform("geometric", (p,), size, draw)

    def triangular(self, left, mode, right, size=None):
        def draw(nl, u, left, mode, right):
            base = right - left
            ratio = (mode - left) / base
            return nl.where(u <= ratio, left + nl.sqrt(u * ((mode - left) * base)),
                            right - nl.sqrt((1.0 - u) * ((right - mode) * base)))

        return self._transform("triangular", (left, mode, right), size, draw)

    def _transform(self, name, params, size, draw):
        """``draw(numloom, u, *params)`` of uniform doubles ``u`` where Philox draws, else
        NumPy's ``name`` (NumPy checks the parameters either way)."""
        shape = self._philox_shape(size)
        if shape is None or not _scalars(*params):
            return self.__getattr__(name)(*params, size)
        getattr(_np.random.RandomState(0), name)(*params, size=1)  # (NumPy's checks)
        return draw(_nl(), self._u(shape), *(float(v) for v in params))

    def randint(self, low, high=None, size=None, dtype=int):
        if size is None and type(low) in _PLAIN and type(high) in _PLAIN:
            return self._generator.randint(low, high, None, dtype)
        shape = self._philox_shape(size)
        if shape is None or not _integers(low, high):
            return self.__getattr__("randint")(low, high, size, dtype)
        _np.random.RandomState(0).randint(low, high, size=1, dtype=dtype)  # (NumPy's checks)
        first, last = (0, int(low)) if high is None else (int(low), int(high))
        if last - first > 2**53:  # (53 random bits a value)
            return self.__getattr__("randint")(low, high, size, dtype)
        nl = _nl()
        picked = nl.floor(self._u(shape) * float(last - first)).astype(_np.int64) + first
        return picked.astype(dtype)

    def random_integers(self, low, high=None, size=None):
        shape = self._philox_shape(size)
        if shape is None or not _integers(low, high):
            return self.__getattr__("random_integers")(low, high, size)
        # NumPy's checks and its DeprecationWarning, without drawing
        _np.random.RandomState(0).random_integers(low, high, size=0)
        first, last = (1, int(low)) if high is None else (int(low), int(high))
        return self.randint(first, last + 1, size, dtype="l")

    def wald(self, mean, scale, size=None):
        shape = self._philox_shape(size)
        if shape is None or not _scalars(mean, scale):
            return self.__getattr__("wald")(mean, scale, size)
        _np.random.RandomState(0).wald(mean, scale, size=1)  # (NumPy's checks)
        nl, mean, scale = _nl(), float(mean), float(scale)
        mu_2l = mean / (2 * scale)
        y = self._normal(shape)
        y = mean * y * y
        x = mean + mu_2l * (y - nl.sqrt(4 * scale * y + y * y))
        return nl.where(self._u(shape) <= mean / (mean + x), x, mean * mean / x)

    def choice(self, a, size=None, replace=True, p=None):
        shape = self._philox_shape(size)
        if shape is None:  # (NumPy's draw: on the CPU, or a scalar)
            return self.__getattr__("choice")(a, size, replace, p)
        nl = _nl()
        population = _population(a, 0)
        if (population is None or (isinstance(a, nl.ndarray) and a.ndim != 1)
                or (p is not None and not replace)):  # fmt: skip
            return self.__getattr__("choice")(a, size, replace, p)
        host_p = None if p is None else to_numpy(p)
        _np.random.RandomState(0).choice(population, 0, replace, host_p)  # (NumPy's checks)
        if not replace:
            if _math.prod(shape) > population:
                raise ValueError("Cannot take a larger sample than population when "
                                 "'replace=False'")  # fmt: skip
            index = self.permutation(population)[:_math.prod(shape)].reshape(shape)
        elif host_p is None:
            index = self.randint(0, population, shape, dtype=_np.int64)
        else:
            index = _by_probability(host_p, self._u(shape))
        return index if not isinstance(a, nl.ndarray) else a[index]

    def permutation(self, x):
        nl = _nl()
        if isinstance(x, (int, _np.integer)) and not isinstance(x, bool):
            if self._philox_shape((int(x),)) is None:
                return self.__getattr__("permutation")(x)
            return nl.argsort(self._u((int(x),)), kind="stable")
        if not isinstance(x, nl.ndarray) or x.ndim == 0 or self._philox_shape(
                (x.shape[0],)) is None:  # fmt: skip
            return self.__getattr__("permutation")(x)
        return x[nl.argsort(self._u((x.shape[0],)), kind="stable")]

    def shuffle(self, x):
        nl = _nl()
        if not isinstance(x, nl.ndarray) or x.ndim == 0 or self._philox_shape(
                (x.shape[0],)) is None:  # fmt: skip
            return self.__getattr__("shuffle")(x)
        x[...] = x[nl.argsort(self._u((x.shape[0],)), kind="stable")]

    # -- Philox --

    def _philox_shape(self, size):
        """The shape of a draw Philox makes, or None where NumPy draws it (on the CPU, unless
        ``NUMLOOM_RANDOM=philox``; scalars; bad sizes, which NumPy reports)."""
        if size is None:
            return None
        how = _config.env("NUMLOOM_RANDOM", "")
        if how == "numpy" or (how != "philox" and get_device() == "cpu"):
            return None
        return _shape_of(size)

    def _u(self, shape):
        """Doubles in [0, 1) of ``shape``: the stream's next blocks."""
        from .api import philox

        n = _math.prod(shape)
        first, key = self._philox.take(n)
        return philox.doubles(_nl(), first, n, key).reshape(shape)

    def _normal(self, shape):
        """Standard normals (Box-Muller on two doubles each; 1 - u keeps the log finite)."""
        nl = _nl()
        u1, u2 = self._u(shape), self._u(shape)
        return nl.sqrt(-2.0 * nl.log(1.0 - u1)) * nl.cos(2.0 * _math.pi * u2)

    def _exponential(self, shape):
        return -_nl().log(1.0 - self._u(shape))


_HOST_VALUES = _HOST_SCALARS | {type(None), str}


def _random_state(generator, key, used) -> RandomState:
    """A pickled ``RandomState``: NumPy's generator and the Philox stream's place."""
    made = RandomState(generator)
    made._philox.key, made._philox.used = key, used
    return made


def _delegate(name: str):
    def method(self, *args, **kwargs):
        return _Drawing.__getattr__(self, name)(*args, **kwargs)

    method.__name__ = name
    return method


# NumPy's methods numloom's classes do not define draw as ``_Drawing`` draws (NumPy's draw,
# numloom's arrays): the NumPy classes' own would draw into NumPy arrays from their state
for _cls, _numpy_cls in ((Generator, _np.random.Generator),
                         (RandomState, _np.random.RandomState)):  # fmt: skip
    for _name in dir(_numpy_cls):
        if _name.startswith("_") or any(_name in c.__dict__ for c in (_cls, _Drawing)):
            continue
        if callable(getattr(_numpy_cls, _name)):
            setattr(_cls, _name, _delegate(_name))
del _cls, _numpy_cls, _name


def _host_values(args: tuple, kwargs: dict) -> bool:
    """Whether a draw's arguments are all scalars, strings, dtypes, None or tuples of
    scalars (a ``size``): nothing of numloom's to read or write."""
    for v in (*args, *kwargs.values()):
        t = type(v)
        if t in _HOST_VALUES or isinstance(v, (type, _np.dtype)):
            continue
        if t is tuple and all(type(e) in _HOST_VALUES for e in v):
            continue
        return False
    return True


def _nl():
    import sys

    return sys.modules[__name__.rsplit(".", 1)[0]]


def seed(seed=None):
    _np.random.seed(seed)
    _global._philox.seed(seed)


_global = RandomState(_np.random.mtrand._rand)


def __getattr__(name: str):
    if hasattr(_np.random.mtrand._rand, name) and not name.startswith("_"):
        value = getattr(_global, name)
        if callable(value):
            globals()[name] = value  # (found here on later calls: one lookup, as NumPy's)
        return value
    return module_getattr("random", _np.random, name)
