"""Property tests against NumPy: random shapes and random basic-index keys (slices with any
bounds and steps, integers, None, Ellipsis) for reading, for views of views, and for writing
through views (the base and every view must then agree with NumPy's); reductions over random
axes with and without keepdims.

They run on the reference executor (exact and compile-free; NUMLOOM_TEST_BACKEND=compiled runs
them on the generated C); ``test_compiled_*`` always run the generated C.
"""

from __future__ import annotations

import os

import hypothesis.extra.numpy as hnp
import numpy
import pytest
from conftest import numpy_compare
from hypothesis import assume, given, settings
from hypothesis import strategies as st


@pytest.fixture(autouse=True, scope="module")
def backend():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NUMLOOM_BACKEND", os.environ.get("NUMLOOM_TEST_BACKEND", "numpy"))
        yield


def shapes(min_side=0):
    return hnp.array_shapes(min_dims=0, max_dims=4, min_side=min_side, max_side=5)


def _entry(size: int):
    """A key entry for an axis of ``size``: a slice with bounds past both ends and steps of
    either sign, or (when the axis is not empty) an integer, negative ones too."""
    bound = st.one_of(st.none(), st.integers(-2 * size - 2, 2 * size + 2))
    step = st.one_of(st.none(), st.integers(1, size + 2), st.integers(-size - 2, -1))
    slices = st.builds(slice, bound, bound, step)
    return st.one_of(slices, st.integers(-size, size - 1)) if size else slices


@st.composite
def basic_keys(draw, shape: tuple):
    """A basic key for ``shape``: entries for leading axes, maybe an Ellipsis and entries for
    trailing ones, and a few None anywhere."""
    lead = draw(st.integers(0, len(shape)))
    entries = [draw(_entry(n)) for n in shape[:lead]]
    if draw(st.booleans()):
        tail = draw(st.integers(0, len(shape) - lead))
        entries += [Ellipsis] + [draw(_entry(n)) for n in shape[len(shape) - tail :]]
    for _ in range(draw(st.integers(0, 2))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    return tuple(entries) if draw(st.booleans()) or len(entries) != 1 else entries[0]


def view_keys(data, shape: tuple) -> tuple:
    """A basic key whose NumPy result is a view (an integer for every axis gives a scalar)."""
    key = data.draw(basic_keys(shape))
    assume(isinstance(numpy.empty(shape)[key], numpy.ndarray))
    return key


def arange(xp, shape, dtype="int64"):
    return xp.asarray(numpy.arange(numpy.prod(shape), dtype=dtype).reshape(shape))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), shape=shapes())
def test_basic_index_reads(data, shape):
    key = data.draw(basic_keys(shape))
    numpy_compare()(lambda xp: arange(xp, shape)[key])()


@settings(max_examples=200, deadline=None)
@given(data=st.data(), shape=shapes())
def test_views_of_views(data, shape):
    first = data.draw(basic_keys(shape))
    second = data.draw(basic_keys(numpy.empty(shape)[first].shape))
    axes = data.draw(st.permutations(range(numpy.empty(shape)[first][second].ndim)))
    numpy_compare()(lambda xp: arange(xp, shape)[first][second].transpose(axes))()


@settings(max_examples=200, deadline=None)
@given(data=st.data(), shape=shapes(), scalar=st.booleans())
def test_writes_through_a_view(data, shape, scalar):
    """The view, the base and another overlapping view all see the write."""
    key, other = view_keys(data, shape), view_keys(data, shape)

    @numpy_compare()
    def run(xp):
        a = arange(xp, shape)
        v, w = a[key], a[other]
        v[...] = 7 if scalar else -v * 10 - 1
        return a, v, w

    run()


@settings(max_examples=200, deadline=None)
@given(data=st.data(), shape=shapes(), transpose=st.booleans())
def test_writes_through_views_of_views(data, shape, transpose):
    first = view_keys(data, shape[::-1] if transpose else shape)
    second = view_keys(data, numpy.empty(shape[::-1] if transpose else shape)[first].shape)

    @numpy_compare()
    def run(xp):
        a = arange(xp, shape)
        v = a.T[first] if transpose else a[first]
        w = v[second]
        w += 1000
        v[...] = v * 2
        return a, v, w

    run()


@settings(max_examples=200, deadline=None)
@given(data=st.data(), shape=shapes(), value_lead=st.integers(0, 2))
def test_setitem_with_basic_keys(data, shape, value_lead):
    """Values of the result's shape, with leading 1s, or of its trailing axes only."""
    key = data.draw(basic_keys(shape))
    result = numpy.empty(shape)[key].shape
    trailing = data.draw(st.integers(0, len(result)))
    value_shape = (1,) * value_lead + result[len(result) - trailing :]
    value = -numpy.arange(numpy.prod(value_shape)).reshape(value_shape) - 1

    @numpy_compare()
    def run(xp):
        a = arange(xp, shape)
        a[key] = xp.asarray(value)
        return a

    run()


@settings(max_examples=150, deadline=None)
@given(data=st.data(), shape=shapes(min_side=1))
def test_overlapping_shifted_writes(data, shape):
    """``a[s1] += a[s2]`` for two slices of one axis of equal length: NumPy reads first."""
    axis = data.draw(st.integers(0, len(shape) - 1)) if shape else None
    n = shape[axis] if shape else 1
    length = data.draw(st.integers(0, n))
    start1, start2 = (data.draw(st.integers(0, n - length)) for _ in range(2))
    step = data.draw(st.sampled_from([1, -1]))

    def pick(start):
        s = slice(start, start + length)
        if step < 0:
            s = slice(start + length - 1, start - 1 if start else None, -1)
        return (slice(None),) * axis + (s,) if shape else ()

    @numpy_compare()
    def run(xp):
        a = arange(xp, shape)
        a[pick(start1)] += a[pick(start2)]
        return a

    run()


@settings(max_examples=100, deadline=None)
@given(data=st.data(), shape=shapes(min_side=1))
def test_integer_array_index_with_basic_entries(data, shape):
    """One index array (negative entries too) among random basic entries: read and write."""
    if not shape:
        return
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    idx = data.draw(st.lists(st.integers(-n, n - 1), min_size=0, max_size=4))
    rest = [data.draw(_entry(m)) for m in shape]
    key = tuple(rest[:axis]) + (numpy.array(idx, numpy.intp),) + tuple(rest[axis + 1 :])

    @numpy_compare()
    def run(xp):
        a = arange(xp, shape)
        got = a[key]
        a[key] = -1
        return got, a

    run()


REDUCTIONS = ("sum", "prod", "mean", "var", "std", "max", "min", "any", "all", "count_nonzero")


@st.composite
def axes(draw, ndim: int):
    """None, one axis or a tuple of distinct axes, negative ones too."""
    if draw(st.booleans()) or ndim == 0:
        return None
    picked = draw(st.lists(st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim))
    picked = [k - ndim if draw(st.booleans()) else k for k in picked]
    return picked[0] if len(picked) == 1 and draw(st.booleans()) else tuple(picked)


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    shape=shapes(min_side=1),
    name=st.sampled_from(REDUCTIONS),
    dtype=st.sampled_from(["int8", "int64", "uint8", "float32", "float64", "bool"]),
    keepdims=st.booleans(),
    view=st.booleans(),
)
def test_reductions_over_random_axes(data, shape, name, dtype, keepdims, view):
    axis = data.draw(axes(len(shape)))
    values = numpy.random.default_rng(len(shape)).integers(-3, 4, shape).astype(dtype)

    @numpy_compare(rtol=1e-6, atol=1e-6)
    def run(xp):
        a = xp.asarray(values)
        if view:
            a = a.T[::-1]
        return getattr(xp, name)(a, axis=axis, keepdims=keepdims)

    run()


@settings(max_examples=100, deadline=None)
@given(data=st.data(), shape=shapes(min_side=1), name=st.sampled_from(["argmax", "argmin"]))
def test_arg_reductions_over_random_axes(data, shape, name):
    axis = (
        data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1))) if shape else None
    )
    values = numpy.random.default_rng(7).integers(-3, 4, shape).astype("float64")
    keepdims = data.draw(st.booleans())
    numpy_compare()(lambda xp: getattr(xp, name)(xp.asarray(values), axis, keepdims=keepdims))()


@settings(max_examples=40, deadline=None)
@given(data=st.data(), shape=shapes())
def test_compiled_writes_through_views(data, shape):
    """The generated C for scatters through strided, reversed and broadcast-free views."""
    key, other = view_keys(data, shape), view_keys(data, shape)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NUMLOOM_BACKEND", "compiled")

        @numpy_compare()
        def run(xp):
            a = arange(xp, shape, "float64")
            v, w = a[key], a[other]
            v[...] = -v * 10 - 1
            return a, v, w, w.sum()

        run()
