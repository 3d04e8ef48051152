"""The compiled array handle (numloom/core/_speedups.c: element access, rows, ``shape``/``dtype``/
``ndim`` in C) and the pure-Python one (``NUMLOOM_PURE_PYTHON=1``) give NumPy's results; the
compiled one is what ``pip install`` builds and what numloom uses."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
import weakref

import numpy
import pytest

import numloom as nl
from numloom.core import array, config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_compiled_handle_is_built_and_used():
    """``pip install -e .`` builds numloom.core._speedups with the system C compiler; numloom's
    arrays are its handles unless NUMLOOM_PURE_PYTHON=1."""
    if config.PURE_PYTHON:
        assert array._speedups is None
        pytest.skip("NUMLOOM_PURE_PYTHON=1: the Python handle is in use")
    assert array._speedups is not None, "numloom.core._speedups was not built: pip install -e ."
    assert isinstance(nl.zeros(3), array._speedups.Handle)


def test_deleting_elements_or_the_shape_raises_numpys_errors():
    for xp in (numpy, nl):
        a = xp.zeros((2, 3))
        with pytest.raises(ValueError, match="cannot delete array elements"):
            del a[0, 1]
        with pytest.raises(AttributeError, match="Cannot delete array shape"):
            del a.shape


def test_shape_dtype_and_ndim_follow_the_view():
    a = nl.arange(12.0)
    b = a.reshape(3, 4)
    assert (b.shape, b.ndim, b.dtype) == ((3, 4), 2, numpy.dtype(float))
    b.shape = (4, 3)
    assert b.shape == (4, 3) and b[3, 2] == 11.0
    with pytest.raises(ValueError, match="cannot reshape array of size 12 into shape"):
        b.shape = (5, 5)
    assert b.shape == (4, 3)


def test_an_element_write_does_not_reach_a_version_someone_holds():
    """A pending result that reads the array, a view and a row keep NumPy's values through
    writes that would otherwise go in place."""
    x = nl.arange(6.0)
    x[0] = 1.0  # (a first write: the next ones go in place)
    held = x * 1
    view = x[2:]
    row = x.reshape(2, 3)[1]
    x[0] = 7.0
    x[3] = 9.0
    assert held.tolist() == [1.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert view.tolist() == [2.0, 9.0, 4.0, 5.0]
    assert row.tolist() == [9.0, 4.0, 5.0]
    assert x.tolist() == [7.0, 1.0, 2.0, 9.0, 4.0, 5.0]


def test_rows_are_handles_on_the_storage():
    g = nl.asarray(numpy.arange(12.0).reshape(3, 4))
    rows = list(g)
    assert [type(r) for r in rows] == [nl.ndarray] * 3
    assert rows[2]._view.offset == 8 and hash(rows[2]._view) == hash(tuple(rows[2]._view))
    rows[1][0] = -1.0
    assert g[1, 0] == -1.0
    dead = weakref.ref(rows.pop())
    assert dead() is None  # (a row is collected like any handle)


def test_the_pure_python_handle_passes_the_element_tests():
    """The pure-Python path, run as NUMLOOM_PURE_PYTHON=1 selects it (in a new process)."""
    env = {**os.environ, "NUMLOOM_PURE_PYTHON": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
         "tests/api/test_elements.py", "tests/core/test_speedups.py::"
         "test_an_element_write_does_not_reach_a_version_someone_holds",
         "tests/core/test_speedups.py::test_the_compiled_handle_is_built_and_used",
         "tests/core/test_speedups.py::test_deleting_elements_or_the_shape_raises_numpys_errors",
         "tests/core/test_evaluation.py", "tests/core/test_fp_errors.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " passed" in run.stdout and "failed" not in run.stdout


# --- the traced operation and the sync in C (numloom/core/_tracing.c) ---------------------------

needs_compiled = pytest.mark.skipif(array._speedups is None, reason="the Python path is in use")


@needs_compiled
def test_operators_and_ufunc_calls_make_the_python_paths_nodes():
    """The compiled path interns into the same tables as Python's: the node of ``x * y`` made
    in C is the one ``dag.map_node`` finds, with the same depth, flags and error state."""
    from numloom.api import ufuncs
    from numloom.core import dag

    x, y = nl.asarray(numpy.arange(5.0)), nl.asarray(numpy.ones(5))
    for made, name, other in [(x * y, "multiply", y), (y + x, "add", x), (x < y, "less", y)]:
        n = made._storage.version
        srcs = (x._storage.version, y._storage.version) if other is y else (
            y._storage.version, x._storage.version)
        assert n is dag.map_node(srcs, name, (5,), n.dtype)
        assert n.depth == 1 and n.fallible is False and made._identity is True
    assert (x * 2.5)._storage.version.call[1][0] == __file__  # the user's line, for errors
    python = ufuncs._plain_call is not array._speedups.plain_call
    assert not python, "ufunc calls do not take the compiled path"


@needs_compiled
@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>", "<",
                                "<=", "==", "!=", ">", ">="])  # fmt: skip
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float32", "float64", "bool"])
@pytest.mark.parametrize("scalar", [3, -1, 200, 2**40, 2.5, True, None])
def test_operators_give_numpys_results_on_every_path(op, dtype, scalar):
    """Each operator on arrays and Python scalars (ints in and out of the dtype's range) gives
    NumPy's values, dtype and errors, reflected operands included."""
    host = (numpy.arange(-3, 5) % 7).astype(dtype)
    other = host[::-1].copy() if scalar is None else scalar
    mine = nl.asarray(host)
    theirs = nl.asarray(other) if scalar is None else other
    for expr in (f"a {op} b", f"b {op} a"):
        try:
            with numpy.errstate(all="ignore"):
                expected = eval(expr, {"a": host, "b": other})
        except Exception as error:  # noqa: BLE001 (numloom raises the same)
            with pytest.raises(type(error)):
                with numpy.errstate(all="ignore"):
                    numpy.asarray(eval(expr, {"a": mine, "b": theirs}))
            continue
        with numpy.errstate(all="ignore"):
            got = numpy.asarray(eval(expr, {"a": mine, "b": theirs}))
        assert got.dtype == expected.dtype, expr
        numpy.testing.assert_array_equal(got, expected, err_msg=expr)


@needs_compiled
def test_unary_operators_and_where():
    host = numpy.array([-2.5, 0.0, 1.5, -0.0])
    a = nl.asarray(host)
    for got, expected in [(-a, -host), (+a, +host), (abs(a), abs(host)),
                          (nl.where(a > 0, a, -a), numpy.where(host > 0, host, -host))]:  # fmt: skip
        numpy.testing.assert_array_equal(numpy.asarray(got), expected)
    i = nl.asarray(numpy.arange(4))
    numpy.testing.assert_array_equal(numpy.asarray(~i), ~numpy.arange(4))


@needs_compiled
def test_the_compiled_walk_and_sweep_match_pythons():
    """``structure`` in C gives toposort's order and the Python key; ``sweep`` keeps the live
    pending storages and drops the dead ones; ``call_states`` gives each run of an error state
    once, so ``fperrors.reported_at`` is ``reported``."""
    from numloom.core import dag, fperrors, realize

    a = nl.asarray(numpy.arange(6.0))
    x = a
    for _ in range(5):
        x = x * 2.0 + a[::-1]
    with numpy.errstate(over="raise"):
        y = x - 1.0
    roots = [x._node(), y._node()]
    order, _, key = dag.structure(roots)
    assert order == dag.toposort(roots)
    assert key == dag.structure_key(order, roots)[1]
    positions = tuple(range(len(order)))
    assert fperrors.reported_at(order, positions) == fperrors.reported(order)
    states = array._speedups.call_states(order, positions)
    assert len(states) == 2 and states[0] is not states[1]
    refs = realize._pending.refs
    live = realize._pending._sweep()
    assert x._storage in live and y._storage in live
    assert all(r() is not None for r in refs.values())
    nl.evaluate(x, y)
    # the interned nodes' table too (dag._sweep): the dead forgotten, the live kept
    dead = nl.asarray(numpy.arange(3.0)) * 7.0
    dead_key = next(k for k, r in dag._interned.items() if r() is dead._storage.version)
    kept = x * 3.0
    del dead
    dag._sweep()
    assert dead_key not in dag._interned
    assert any(r() is kept._storage.version for r in dag._interned.values())
    assert all(r() is not None for r in dag._interned.values())


@needs_compiled
def test_a_loop_of_traced_operations_keeps_memory_bounded():
    """Nodes and storages made in C die with their arrays: a long loop leaves no pending
    entries, interned nodes or handles behind."""
    import gc

    from numloom.core import dag, realize

    x = nl.asarray(numpy.ones(10))
    ref = weakref.ref((x * 3.0)._storage.version)
    gc.collect()
    assert ref() is None
    pending = len(realize._pending._sweep())  # (on a GPU, x's own upload may still wait)
    for _ in range(20000):
        y = x * 1.5 + x
    numpy.testing.assert_array_equal(numpy.asarray(y), numpy.full(10, 2.5))
    gc.collect()
    assert len(realize._pending._sweep()) <= pending
    assert len(dag._interned) < 20000


def _warned_lines(xp) -> list:
    """The (file, line) of each warning of a loop's three steps, two lines of the loop and
    the same line of a function it calls."""
    x = xp.asarray(numpy.array([1.0, 0.0]))

    def divide(a):
        return a / 0.0

    lines = []
    for _ in range(3):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            numpy.asarray(xp.log(x * 0.0))
            numpy.asarray(divide(x))
        lines.append([(w.filename, w.lineno) for w in caught])
    return lines


def test_a_warning_of_a_loop_points_at_each_users_line_it_comes_from():
    """The user's line of a traced operation is kept by code and instruction: each line of
    a loop warns at its own line, at every step, as NumPy's."""
    assert _warned_lines(nl) == _warned_lines(numpy)


def test_traced_operations_of_many_shapes_dtypes_and_constants_give_numpys_values():
    """The traced operation keeps its loops, constants, structure numbers and views by the
    identity of its keys, in small tables whose entries the next keys take over: 900 calls of
    distinct shapes, dtypes and constants, each traced twice, give NumPy's values."""
    rng = numpy.random.default_rng(0)
    dtypes = (numpy.float64, numpy.float32, numpy.int64, numpy.int32, numpy.uint8)
    made = []
    for k in range(900):
        dtype = dtypes[k % len(dtypes)]
        host = rng.integers(0, 50, (k % 7 + 1, k % 11 + 1)).astype(dtype)
        c = float(k % 13) + 0.5 if k % 2 else k % 17  # (a float or an int constant)
        x = nl.asarray(host)
        made.append(((x * c + x) - c, (x * c + x) - c, host * c + host - c))
    for first, again, want in made:
        numpy.testing.assert_array_equal(numpy.asarray(first), want)
        numpy.testing.assert_array_equal(numpy.asarray(again), want)
        assert numpy.asarray(first).dtype == want.dtype


@pytest.mark.parametrize("left, right", [((4, 3), (3,)), ((4, 1), (1, 5)), ((2, 1, 3), (4, 1)),
                                         ((), (3,)), ((5,), ())])  # fmt: skip
def test_broadcasting_operators_give_numpys_results(left, right):
    rng = numpy.random.default_rng(0)
    a, b = rng.random(left), rng.random(right)
    x, y = nl.asarray(a), nl.asarray(b)
    for got, want in [(x - y, a - b), (y * x, b * a), (x < y, a < b), (x + 1.5, a + 1.5)]:
        got = numpy.asarray(got)
        assert got.shape == want.shape and got.dtype == want.dtype
        numpy.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="could not be broadcast"):
        nl.ones((4, 3)) - nl.ones(2)


def test_a_repeated_reduction_asks_numpy_once(monkeypatch):
    """The second reduction of a dtype, shape and axis builds its nodes from what the first
    found (NumPy's probe is not called again), with the same values, dtypes and errors."""
    from numloom.api import reductions

    host = numpy.arange(24.0).reshape(4, 6)
    a, flags = nl.asarray(host), nl.asarray(host > 10)
    calls = [
        (lambda m: m.sum(axis=1), lambda h: h.sum(axis=1)),
        (lambda m: m.max(axis=0, keepdims=True), lambda h: h.max(axis=0, keepdims=True)),
        (lambda m: m.mean(), lambda h: h.mean()),
    ]
    first = [numpy.asarray(f(a)) for f, _ in calls] + [numpy.asarray(flags.sum(axis=0))]
    probe = reductions._probe
    monkeypatch.setattr(reductions, "_probe", lambda *args: pytest.fail("probed again"))
    again = [numpy.asarray(f(a)) for f, _ in calls] + [numpy.asarray(flags.sum(axis=0))]
    monkeypatch.setattr(reductions, "_probe", probe)
    wanted = [g(host) for _, g in calls] + [(host > 10).sum(axis=0)]
    for got, repeat, want in zip(first, again, wanted):
        for g in (got, repeat):
            assert g.dtype == numpy.asarray(want).dtype and g.shape == numpy.shape(want)
            numpy.testing.assert_array_equal(g, want)
    with numpy.errstate(over="raise"):
        big = nl.asarray(numpy.full(3, 1e308))
        for _ in range(2):  # (the second call is the planned one)
            with pytest.raises(FloatingPointError, match="overflow encountered in reduce"):
                numpy.asarray(big.sum())


def test_a_repeated_cast_gives_numpys_values_and_errors():
    host = numpy.array([1.5, -2.5, numpy.nan])
    a = nl.asarray(host)
    for _ in range(2):
        numpy.testing.assert_array_equal(numpy.asarray((a > 0).astype(numpy.int32)),
                                         (host > 0).astype(numpy.int32))  # fmt: skip
        with numpy.errstate(invalid="raise"):
            with pytest.raises(FloatingPointError, match="invalid value encountered in cast"):
                numpy.asarray(a.astype(numpy.int32))
        with pytest.raises(TypeError, match="according to the rule 'safe'"):
            a.astype(numpy.int8, casting="safe")


@pytest.mark.parametrize("case", [
    "a += b", "a -= 1.5", "a *= a[::-1]", "a[::2] += 10", "a //= 2", "a %= 3", "a /= b",
    "i += 1.5", "i += 2**70", "i &= 3", "i <<= 1", "m += b", "a += m", "m += 1",
])  # fmt: skip
def test_augmented_assignment_is_numpys_call_with_out(case):
    """``a op= b`` is ``op(a, b, out=a)``: the same values, the same dtype, the same errors
    (a cast 'same_kind' refuses, an output that does not broadcast, a read-only output), and
    views of ``a`` see the write."""
    def run(xp):
        env = {"a": xp.arange(1.0, 7.0), "b": xp.arange(6.0) + 0.5,
               "i": xp.arange(6, dtype=xp.int32), "m": xp.ones((2, 6))}  # fmt: skip
        whole = env["a"]
        view = whole[1:]
        try:
            exec(case, env)
        except Exception as error:  # noqa: BLE001 (compared below)
            return type(error), str(error), None
        return None, None, [numpy.asarray(v).copy() for v in (whole, view, env["i"], env["m"])]

    (want_type, want_message, want), (got_type, got_message, got) = run(numpy), run(nl)
    assert (got_type, got_message) == (want_type, want_message)
    for g, w in zip(got or (), want or ()):
        assert g.dtype == w.dtype
        numpy.testing.assert_array_equal(g, w)
    for xp in (numpy, nl):
        r = xp.arange(3.0)
        r.flags.writeable = False
        with pytest.raises(ValueError, match="output array is read-only"):
            r += 1


@pytest.mark.parametrize("case", [
    "xp.multiply(a, a, a)", "xp.add(a, b, out=a)", "xp.add(a, b, out=(a,))", "xp.negative(a, a)",
    "xp.add(i, 1.5, i)", "xp.add(i, 1, out=i)", "xp.add(a[::2], 1, a[1::2])", "xp.add(m, a, a)",
    "xp.sqrt(a, out=m)",
])  # fmt: skip
def test_a_ufunc_with_its_output_given_is_numpys(case):
    def run(xp):
        env = {"xp": xp, "a": xp.arange(1.0, 7.0), "b": xp.arange(6.0) + 0.5,
               "i": xp.arange(6, dtype=xp.int32), "m": xp.ones((2, 6))}  # fmt: skip
        try:
            made = eval(case, env)
        except Exception as error:  # noqa: BLE001 (compared below)
            return type(error), str(error), None
        outs = [numpy.asarray(env[k]).copy() for k in ("a", "i", "m")]
        return None, None, [numpy.asarray(made).copy(), *outs]

    (want_type, want_message, want), (got_type, got_message, got) = run(numpy), run(nl)
    assert (got_type, got_message) == (want_type, want_message)
    for g, w in zip(got or (), want or ()):
        assert g.dtype == w.dtype
        numpy.testing.assert_array_equal(g, w)


_SLICE_KEYS = [
    (slice(1, -1), slice(2, None)), (slice(None), -1), (0, slice(None)), (slice(None, None, 2),),
    (slice(1, 3), Ellipsis), (slice(5, None, 3), 1, slice(None)), (-2, slice(1, 2)),
    slice(None, 100), (slice(0, 1), slice(None), slice(None)), (slice(None),) * 3,
    # (integers that leave axes: a loop's rows, g[i] and g[i, j])
    2, -1, (0,), (1, 2), (-1, -2),
    # (the Python path: reversed, empty, out of bounds, None, arrays, too many)
    (slice(None, None, -1),), (slice(2, 2),), (7, slice(None)), (None, slice(1, 2)),
    (slice(0, 2), 9), (slice(None),) * 4, 7,
]  # fmt: skip


@pytest.mark.parametrize("key", _SLICE_KEYS, ids=repr)
@pytest.mark.parametrize("make", [
    lambda: nl.arange(60.0).reshape(5, 4, 3),
    lambda: nl.arange(60.0).reshape(5, 4, 3)[1:, ::2],
    lambda: nl.arange(60.0).reshape(3, 4, 5).transpose(2, 1, 0),
    lambda: nl.arange(12.0).reshape(1, 12, 1)[:, ::-1],
], ids=["whole", "strided", "transposed", "reversed"])  # fmt: skip
def test_slicing_in_c_makes_the_view_numpys_slicing_makes(make, key):
    """The compiled slicing (``_speedups.slice_view``) gives the view, identity, base and flags
    the Python path (NumPy's slicing of a stand-in) gives, or steps aside for it."""
    from numloom.core import array_views

    if array._speedups is None:
        pytest.skip("the Python handle: nothing compiled")
    a = make()
    host = a.get()
    try:
        want = host[key]
    except IndexError as e:
        with pytest.raises(IndexError, match=str(e).replace("(", r"\(").replace(")", r"\)")):
            a[key]
        return
    made = array._speedups.slice_view(a, key)
    python = array_views.numpy_view(a, numpy.ndarray.__getitem__, key if isinstance(key, tuple)
                                    else (key,))  # fmt: skip
    if made is not None:
        assert made._view == python._view and made._identity == python._identity
        assert made.base is python.base and made._readonly == python._readonly
    got = a[key]
    numpy.testing.assert_array_equal(got.get(), want)
    assert got.shape == want.shape
    if got.size:
        got[...] = -1.0  # (a view: the write reaches a)
        host[key] = -1.0
        numpy.testing.assert_array_equal(a.get(), host)


def test_slices_of_a_whole_array_are_the_array_when_they_take_everything():
    a = nl.zeros((3, 4))
    assert a[:, :]._identity and a[0:3]._identity and not a[1:]._identity
    assert not a.reshape(12)[:]._identity  # (another shape than the storage's)


def test_a_view_of_an_array_read_on_the_host_is_read_from_its_host_view():
    """A basic slice of an array whose host view is current gets NumPy's slice of it as its
    own (a loop's eager calls on ``pn[1:-1, 2:]`` read it at once); writes in place and new
    versions of the array keep its values right."""
    a = nl.arange(12.0).reshape(3, 4) * 1
    a.tolist()
    v = a[1:, 2:]
    if array._speedups is not None:
        assert v._host is not None and v._host[0]() is a._storage.version
    assert v.tolist() == [[6.0, 7.0], [10.0, 11.0]]
    a[1, 2] = 100.0
    assert v[0, 0] == 100.0 and v.tolist() == [[100.0, 7.0], [10.0, 11.0]]
    a[...] = a * 2
    assert v.tolist() == [[200.0, 14.0], [20.0, 22.0]]


@needs_compiled
def test_iteration_over_a_vector_runs_in_c():
    """``for v in x`` of a 1-d array: the compiled iterator (NumPy's iteration speed: it was
    1.85x NumPy's in Python), NumPy's scalars, and a write in the loop read after it."""
    x = nl.arange(5.0) * 2
    it = iter(x)
    assert type(it).__name__ == "elements"
    assert [type(v) for v in it] == [numpy.float64] * 5
    seen = []
    for i, v in enumerate(x):
        seen.append(float(v))
        if i == 1:
            x[3] = -1.0
            x[:1] = 7.0  # (a slice write: a new version, read again)
    assert seen == [0.0, 2.0, 4.0, -1.0, 8.0]
    with pytest.raises(TypeError, match="numloom storage"):
        array._speedups.elements(object(), numpy.zeros(2), lambda: None)


@needs_compiled
def test_the_users_line_is_found_in_c_for_every_module():
    """``dag.user_line`` (where a traced operation that can raise points) is the compiled
    one, which the API's modules call: a sum's overflow warning, found at the sync, names the
    user's line."""
    from numloom.core import dag

    assert dag.user_line is array._speedups.user_line
    x = nl.asarray(numpy.full(4, 3e38, numpy.float32))
    with pytest.warns(RuntimeWarning, match="overflow") as caught:
        total = x.sum()  # (this line)
        nl.evaluate(total)
    assert caught[0].filename == __file__
    assert "total = x.sum()" in open(__file__).read().splitlines()[caught[0].lineno - 1]
