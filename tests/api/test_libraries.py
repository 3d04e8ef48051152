"""Libraries handed numloom arrays answer as they answer NumPy's: pandas, matplotlib, SciPy,
NumPy's own ndarray subclasses (masked arrays, ``np.matrix``) and NumPy's random classes."""

from __future__ import annotations

import json
import pickle
import statistics

import numpy
import pytest

import numloom as nl

try:
    import pandas as pd
except ImportError:  # (the pandas tests skip; NumPy's subclasses and random classes do not)
    pd = None
needs_pandas = pytest.mark.skipif(pd is None, reason="pandas is not installed")
pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")


def _frame(xp):
    return pd.DataFrame({"a": xp.arange(5.0), "b": xp.arange(5.0) ** 2})


def _same(f):
    """f(numloom) equals f(NumPy): pandas objects compared as pandas compares them."""
    want, got = f(numpy), f(nl)
    kind = nl.ndarray if type(want) is numpy.ndarray else type(want)
    assert type(got) is kind, (type(got), type(want))
    if isinstance(want, (pd.DataFrame, pd.Series)):
        assert want.equals(got), (want, got)
    else:
        numpy.testing.assert_array_equal(numpy.asarray(got), numpy.asarray(want))


PANDAS = {} if pd is None else {
    "df[mask]": lambda xp: _frame(xp)[xp.arange(5.0) > 2],
    "df.loc[mask]": lambda xp: _frame(xp).loc[xp.arange(5.0) > 2],
    "df.loc[mask, col]": lambda xp: _frame(xp).loc[xp.arange(5.0) > 2, "a"],
    "df.iloc[mask]": lambda xp: _frame(xp).iloc[xp.arange(5.0) > 2],  # (not rows 0 and 1)
    "df.iloc[positions]": lambda xp: _frame(xp).iloc[xp.arange(2)],
    "s[mask]": lambda xp: pd.Series(xp.arange(5.0))[xp.arange(5.0) > 2],
    "s.loc[mask]": lambda xp: pd.Series(xp.arange(5.0)).loc[xp.arange(5.0) > 2],
    "strings[mask]": lambda xp: pd.Series(["a", "b", "c"])[xp.array([True, False, True])],
    "groupby(array)": lambda xp: _frame(xp).groupby(xp.arange(5) % 2).sum(),
    "groupby([array, array])": lambda xp: _frame(xp).groupby([xp.arange(5) % 2,
                                                              xp.arange(5) % 3]).sum(),
    "groupby(['a', array])": lambda xp: _frame(xp).groupby(["a", xp.arange(5) % 2]).sum(),
    "series.groupby(array)": lambda xp: pd.Series(xp.arange(5.0)).groupby(xp.arange(5) // 2).mean(),
    "set_index(array)": lambda xp: _frame(xp).set_index(xp.arange(5) * 10),
    "np.sum(df, axis=0)": lambda xp: xp.sum(_frame(xp), axis=0),
    "np.round(df)": lambda xp: xp.round(_frame(xp) / 3, 1),
    "np.cumsum(series)": lambda xp: xp.cumsum(pd.Series(xp.arange(5.0))),
    "np.clip(series)": lambda xp: xp.clip(pd.Series(xp.arange(5.0)), 1, 3),
    "np.maximum(series, array)": lambda xp: xp.maximum(pd.Series(xp.arange(5.0)), 4 - xp.arange(5.0)),
    "array @ df": lambda xp: xp.ones(5) @ _frame(xp),
    "np.array(df)": lambda xp: xp.array(_frame(xp)),
    # (a group's function gets Series: NumPy's function of them gives a float, not a 0-d
    # array, which made the result a column of objects)
    "groupby.apply(np.average)": lambda xp: pd.DataFrame(
        {"k": list("aabbb"), "d": numpy.arange(5.0), "w": numpy.linspace(0.1, 1, 5)}
    ).groupby("k")[["d", "w"]].apply(lambda g: xp.average(g["d"], weights=g["w"])),
    "groupby.agg(np.median)": lambda xp: _frame(xp).groupby(xp.arange(5) % 2)["a"].agg(
        lambda s: xp.median(s)),
    # (reductions' results collected in lists and dicts: NumPy's are float64 scalars, so the
    # columns are of floats, not of objects)
    "Series of reductions": lambda xp: pd.Series([xp.mean(xp.arange(5.0) * 2),
                                                  xp.max(xp.arange(5.0) * 2)]),
    "DataFrame of row dicts": lambda xp: pd.DataFrame(
        [{"k": k, "mean": (xp.arange(4.0) * k).mean(), "sum": xp.sum(xp.arange(4) * k)}
         for k in range(3)]),
    "DataFrame of a dict of lists": lambda xp: pd.DataFrame(
        {"m": [xp.std(xp.arange(6.0) * k) for k in range(3)]}),
    "df.sample(Generator)": lambda xp: _frame(xp).sample(2, random_state=xp.random.default_rng(0)),
    # (the legacy RandomState draws from Philox on a GPU: numloom.random's documentation)
    "df.sample(RandomState)": lambda xp: _frame(xp).sample(2, random_state=xp.random.RandomState(0))
    if nl.get_device() == "cpu" or xp is nl else _frame(nl).sample(
        2, random_state=nl.random.RandomState(0)),
}  # fmt: skip


@needs_pandas
@pytest.mark.parametrize("case", PANDAS)
def test_pandas_takes_numloom_arrays_as_it_takes_numpys(case):
    _same(PANDAS[case])


@needs_pandas
@pytest.mark.parametrize("how", ["s[mask] = v", "df.loc[mask, c] = v", "df.iloc[i] = v"])
def test_pandas_writes_selected_by_numloom_arrays(how):
    def run(xp):
        mask, d, s = xp.arange(5.0) > 2, _frame(xp), pd.Series(xp.arange(5.0))
        if how == "s[mask] = v":
            s[mask] = 0.0
            return s
        if how == "df.loc[mask, c] = v":
            d.loc[mask, "a"] = -1.0
        else:
            d.iloc[xp.arange(2)] = 7.0
        return d

    _same(run)


MASKED_AND_MATRIX = {
    "sum": lambda xp: xp.sum(xp.ma.array([1.0, 2, 3, 4], mask=[0, 1, 0, 0])),
    "mean": lambda xp: xp.mean(xp.ma.array([1.0, 2, 3, 4], mask=[0, 1, 0, 0])),
    "std": lambda xp: xp.std(xp.ma.array([1.0, 2, 3, 4], mask=[0, 1, 0, 0])),
    "cumsum": lambda xp: xp.cumsum(xp.ma.array([1.0, 2, 3, 4], mask=[0, 1, 0, 0])),
    "sqrt": lambda xp: xp.sqrt(xp.ma.array([1.0, 2, 3, 4], mask=[0, 1, 0, 0])),
    "array + masked": lambda xp: xp.arange(4.0) + xp.ma.array([1.0, 2, 3, 4], mask=[0, 1, 0, 0]),
    "where": lambda xp: xp.where(xp.ma.array([1.0, 2, 3], mask=[0, 1, 0]) > 1, 1, 0),
    "fft": lambda xp: xp.fft.fft(xp.ma.array([1.0, 2, 3, 4], mask=[0, 1, 0, 0])),
    "matrix sum": lambda xp: xp.sum(xp.matrix([[1, 2], [3, 4]]), axis=0),
    "array * matrix": lambda xp: xp.ones((2, 2)) * xp.matrix([[1, 2], [3, 4]]),
    "array @ matrix": lambda xp: xp.ones((2, 2)) @ xp.matrix([[1, 2], [3, 4]]),
    "matrix ** 2": lambda xp: xp.matrix([[1, 2], [3, 4]]) ** 2,
    "inv(matrix)": lambda xp: xp.linalg.inv(xp.matrix([[1.0, 2], [3, 4]])),
    "transpose(matrix)": lambda xp: xp.transpose(xp.matrix([[1, 2], [3, 4]])),
    "asanyarray(masked)": lambda xp: xp.asanyarray(xp.ma.array([1.0, 2], mask=[0, 1])),
}


@pytest.mark.parametrize("case", MASKED_AND_MATRIX)
def test_numpys_ndarray_subclasses_keep_their_meaning(case):
    """A masked array's mask and np.matrix's product are NumPy's: numloom functions handed one
    run NumPy's (before, numloom summed masked elements and multiplied matrices elementwise)."""
    want, got = MASKED_AND_MATRIX[case](numpy), MASKED_AND_MATRIX[case](nl)
    assert type(got) is type(want)
    if isinstance(want, numpy.ma.MaskedArray):
        assert got.mask.tolist() == want.mask.tolist()
        want, got = want.filled(0), got.filled(0)
    numpy.testing.assert_allclose(numpy.asarray(got), numpy.asarray(want))


def test_a_matrix_of_a_fortran_ordered_array_is_laid_out_as_numpys():
    """``np.matrix(X)`` of a Fortran-ordered array (a pandas frame's values): NumPy's matrix
    of its own array is a C-ordered copy; of numloom's it was Fortran-ordered (NumPy's
    ``array`` of the export keeps its order), and BLAS's product of the two layouts differs in
    the last bit (Andrew Ng's logistic regression exercise, in NumPy: its cost printed 1 ulp
    off). numloom's array becomes NumPy's matrix as NumPy's own array does."""
    host = numpy.asfortranarray(numpy.random.default_rng(4).random((100, 3)) * 90)
    theta = numpy.matrix([-25.16131866, 0.20623159, 0.20147149])
    want = numpy.matrix(host)
    got = numpy.matrix(nl.array(host))
    assert type(got) is numpy.matrix
    assert got.strides == want.strides and got.flags.c_contiguous
    assert numpy.array_equal(numpy.asarray(got * theta.T), numpy.asarray(want * theta.T))
    assert numpy.matrix(nl.array(host), copy=False).tolist() == want.tolist()


def test_numpy_asarray_of_a_subclass_is_its_data():
    m = numpy.matrix([[1.0, 2], [3, 4]])
    a = nl.asarray(m)
    assert a.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert nl.asarray(numpy.ma.array([1.0, 2], mask=[0, 1])).tolist() == [1.0, 2.0]


def test_random_generators_are_numpys_classes_for_other_libraries():
    g, r = nl.random.default_rng(5), nl.random.RandomState(5)
    assert isinstance(g, numpy.random.Generator) and isinstance(r, numpy.random.RandomState)
    assert g.bit_generator is g._generator.bit_generator
    want = numpy.random.default_rng(5)
    assert g.random(3).tolist() == want.random(3).tolist()  # (numloom's draws: one stream)
    assert type(g.choice(5, 3)) is nl.ndarray and type(r.permutation(4)) is nl.ndarray
    copy = pickle.loads(pickle.dumps(g))
    assert copy.random(2).tolist() == g.random(2).tolist()
    assert pickle.loads(pickle.dumps(r)).rand(2).tolist() == r.rand(2).tolist()


def test_scipy_takes_numloom_generators_writes_into_output_and_solves():
    stats = pytest.importorskip("scipy.stats")
    from scipy import ndimage, sparse
    from scipy.sparse import linalg as spl
    from scipy.spatial.transform import Rotation

    want = stats.norm.rvs(size=4, random_state=numpy.random.default_rng(2))
    got = stats.norm.rvs(size=4, random_state=nl.random.default_rng(2))
    numpy.testing.assert_allclose(numpy.asarray(got), want)
    img = nl.random.default_rng(0).random((8, 8))
    out = nl.zeros_like(img)
    row = out[3]
    expected = ndimage.uniform_filter(numpy.asarray(img), 3)
    if out.device == "cpu":
        ndimage.uniform_filter(img, 3, output=out)  # (writes numloom's memory, views see it)
        numpy.testing.assert_allclose(out.get(), expected)
        numpy.testing.assert_allclose(row.get(), expected[3])
    else:  # (a GPU array's numpy.asarray is a read-only host copy: the write would be lost)
        with pytest.raises(ValueError, match="read-only"):
            ndimage.uniform_filter(img, 3, output=out)
    # a Cython memoryview of a numloom array (read-only memory made it raise before)
    turned = Rotation.from_rotvec(nl.array([0, 0, numpy.pi / 2])).apply(nl.array([1.0, 0, 0]))
    numpy.testing.assert_allclose(turned, [0.0, 1.0, 0.0], atol=1e-12)
    a = numpy.array([[4.0, 1, 0], [1, 3, 0], [0, 0, 2]])
    b = nl.array([1.0, 2, 3])
    for solve in (spl.splu(sparse.csc_matrix(a)).solve, spl.factorized(sparse.csc_matrix(a))):
        numpy.testing.assert_allclose(solve(b), numpy.linalg.solve(a, numpy.asarray(b)))


def test_matplotlib_light_source_shades_numloom_elevations():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib import cm
    from matplotlib.colors import LightSource

    z = numpy.random.default_rng(1).random((6, 7))
    ls = LightSource(azdeg=315, altdeg=45)
    numpy.testing.assert_allclose(ls.hillshade(nl.asarray(z)), ls.hillshade(z))
    numpy.testing.assert_allclose(ls.shade(nl.asarray(z), cmap=cm.viridis),
                                  ls.shade(z, cmap=cm.viridis))  # fmt: skip


def test_opencv_takes_numloom_images_and_draws_into_them():
    cv2 = pytest.importorskip("cv2")
    host = (numpy.random.default_rng(0).random((16, 16)) * 255).astype(numpy.uint8)
    img = nl.asarray(host)
    numpy.testing.assert_array_equal(cv2.GaussianBlur(img, (5, 5), 1.0),
                                     cv2.GaussianBlur(host, (5, 5), 1.0))  # fmt: skip
    assert cv2.threshold(img, 127, 255, cv2.THRESH_BINARY)[1].tolist() == cv2.threshold(
        host, 127, 255, cv2.THRESH_BINARY)[1].tolist()  # fmt: skip
    canvas, want = nl.zeros((8, 8, 3), nl.uint8), numpy.zeros((8, 8, 3), numpy.uint8)
    cv2.rectangle(want, (1, 1), (4, 4), (255, 0, 0), -1)
    if canvas.device == "cpu":
        cv2.rectangle(canvas, (1, 1), (4, 4), (255, 0, 0), -1)
        assert canvas.tolist() == want.tolist()
    else:  # (a GPU array's host copy is read-only: the drawing would be lost, cv2 raises)
        with pytest.raises(cv2.error):
            cv2.rectangle(canvas, (1, 1), (4, 4), (255, 0, 0), -1)


def test_scikit_learn_functions_take_numloom_arrays_where_they_check_for_numpys():
    """scientific-python-lectures' spectral clustering: ``img_to_graph(img, mask=mask)``
    checks that ``mask`` is a ``numpy.ndarray`` before it runs."""
    image = pytest.importorskip("sklearn.feature_extraction.image")
    pairwise = pytest.importorskip("sklearn.metrics.pairwise")
    host = numpy.random.default_rng(1).random((12, 10))
    img, mask = nl.asarray(host), nl.asarray(host) > 0.3
    got = image.img_to_graph(img, mask=mask)
    want = image.img_to_graph(host, mask=host > 0.3)
    assert (got != want).nnz == 0
    numpy.testing.assert_allclose(pairwise.euclidean_distances(img[:4], img[4:9]),
                                  pairwise.euclidean_distances(host[:4], host[4:9]))  # fmt: skip


@pytest.mark.parametrize("compiled", [True, False])
def test_a_wrapped_librarys_warnings_point_at_the_users_line(compiled, monkeypatch):
    """A library function numloom wraps (pandas' ``set_index``) warns at its caller's line, as
    unwrapped: pandas' deprecation of ``inplace=`` was attributed to numloom's wrapper, and
    Python's filters then hid it."""
    import warnings

    from numloom.api import libraries

    if not compiled:  # (the Python wrapper, as without the compiled module)
        monkeypatch.setattr(libraries, "_ArgsWrapper", None)
    elif libraries._ArgsWrapper is None:
        pytest.skip("the compiled module is not in use")

    def set_index(x, inplace=False):
        if inplace:
            warnings.warn("inplace is deprecated", DeprecationWarning, stacklevel=2)
        return x

    wrapped = libraries.numpy_arguments(set_index)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = wrapped(nl.arange(3), inplace=True)
    assert [w.filename for w in caught] == [__file__]
    assert isinstance(got, numpy.ndarray) and got.tolist() == [0, 1, 2]

    def minimize(fun, x0, options=None):  # (a solver: its functions' results are NumPy's)
        if options:
            warnings.warn(f"Unknown solver options: {', '.join(options)}", UserWarning,
                          stacklevel=2)  # fmt: skip
        return fun(x0)

    solver = libraries._solver(minimize)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = solver(lambda x: nl.asarray(x) * 2, nl.arange(3.0), options={"ftol": 1e-3})
    assert [w.filename for w in caught] == [__file__]
    assert type(got) is numpy.ndarray and got.tolist() == [0.0, 2.0, 4.0]
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"state": ["a", "b"], "v": [1, 2]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame.set_index("state", inplace=True)  # (deprecated in pandas 3.1: a warning here)
    assert all(w.filename == __file__ for w in caught)
    # (the wrapped methods print and pickle as pandas' own)
    method = pandas.DataFrame.__getitem__
    assert repr(method).startswith("<function DataFrame.__getitem__")
    assert pickle.loads(pickle.dumps(method)) is method


def test_numba_compiled_functions_take_numloom_arrays_and_write_into_them():
    """A NumPy program's ``@njit`` functions, handed numloom arrays: Numba typed them as plain
    buffers (``Unknown attribute 'shape'``). On the CPU they get the arrays' memory, so what
    they write is in the numloom array."""
    numba = pytest.importorskip("numba")

    @numba.njit
    def doubled_sum(a):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i] * 2
        return s

    @numba.njit
    def squares(out):
        for i in range(out.shape[0]):
            out[i] = i * i

    assert doubled_sum(nl.arange(10.0)) == 90.0
    assert doubled_sum(nl.arange(10.0) * 1) == 90.0  # (pending: evaluated first)
    assert doubled_sum(2.0 * numpy.ones(3)) == 12.0  # (NumPy's arrays as before)
    out = nl.zeros(5)
    if out.device == "cpu":
        squares(out)
        assert out.tolist() == [0.0, 1.0, 4.0, 9.0, 16.0]
        assert (out + 1).tolist() == [1.0, 2.0, 5.0, 10.0, 17.0]


NUMBA_PROGRAM = """
import numpy as np
from numpy import zeros, sqrt
from numba import njit, prange, vectorize, guvectorize, float64

@njit(parallel=True)
def rowsum(a):
    out = np.empty(a.shape[0])
    for i in prange(a.shape[0]):
        out[i] = a[i].sum()
    return out

@njit
def norms(a):
    out = zeros(a.shape[0], dtype=np.float64)
    for i in range(a.shape[0]):
        out[i] = sqrt(a[i]) + np.linalg.norm(a) + np.pi
    return out, np.dot(a, a), np.argsort(-a)[:2]

@vectorize([float64(float64, float64)])
def hyp(x, y):
    return (x * x + y * y) ** 0.5

@guvectorize([(float64[:], float64[:])], "(n)->(n)")
def running(x, res):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i]
        res[i] = acc

a = np.arange(12.0).reshape(3, 4)
print(rowsum(a), rowsum(a * 2))
print(norms(np.arange(1.0, 6.0)))
print(hyp(np.arange(3.0), np.ones(3)), running(a))
"""


def test_a_numpy_and_numba_script_runs_on_numloom_as_on_numpy(tmp_path):
    """In a script run on numloom, ``np`` inside ``@njit`` functions is numloom: Numba typed
    ``np.empty`` as an unknown attribute of the module numloom. It now types numloom's module
    and functions (``from numpy import zeros``) as NumPy's; ``prange``, ``@vectorize`` and
    ``@guvectorize`` as well."""
    pytest.importorskip("numba")
    import subprocess
    import sys

    script = tmp_path / "numba_script.py"
    script.write_text(NUMBA_PROGRAM)
    runs = [subprocess.run([sys.executable, *how, str(script)], capture_output=True, text=True,
                           timeout=300) for how in ([], ["-m", "numloom"])]  # fmt: skip
    assert runs[0].returncode == 0, runs[0].stderr[-2000:]
    assert runs[1].returncode == 0, runs[1].stderr[-2000:]
    assert runs[1].stdout == runs[0].stdout


def test_scikit_learn_grid_search_takes_a_numloom_parameter_grid():
    """Python Data Science Handbook 5.03: ``GridSearchCV(model, {"...__degree":
    np.arange(21)})``; scikit-learn's grid checks each value is a list or a NumPy array."""
    search = pytest.importorskip("sklearn.model_selection")
    grid = search.ParameterGrid({"degree": nl.arange(4), "fit": [True, False]})
    assert [p["degree"] for p in grid] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert len(search.ParameterGrid([{"a": nl.arange(3)}, {"b": nl.ones(2)}])) == 5
    linear = pytest.importorskip("sklearn.linear_model")
    x = numpy.linspace(0, 1, 40)[:, None]
    y = 3 * x[:, 0] + 1
    found = search.GridSearchCV(linear.Ridge(), {"alpha": nl.asarray([1e-6, 1.0, 10.0])},
                                cv=4).fit(nl.asarray(x), nl.asarray(y))  # fmt: skip
    assert found.best_params_["alpha"] == 1e-6


def test_scipys_lobpcg_multiplies_into_numloom_blocks_in_place():
    """scientific-python-lectures' LOBPCG (the Mikota pair): SciPy's ``np.matmul(x, y,
    out=x)`` on numloom blocks reaches numloom with ``out`` as NumPy's protocol hands it (a
    tuple), and writes ``x``."""
    linalg = pytest.importorskip("scipy.sparse.linalg")
    sparse = pytest.importorskip("scipy.sparse")
    x, y = nl.ones((3, 2)), nl.asarray(numpy.array([[2.0, 1.0], [0.0, 3.0]]))
    assert numpy.matmul(x, y, out=x) is x
    assert x.tolist() == [[2.0, 4.0]] * 3
    n = 60
    A = sparse.diags(numpy.arange(1.0, n + 1))
    X = nl.asarray(numpy.random.default_rng(2).random((n, 3)))
    values, _ = linalg.lobpcg(A, X, largest=False, tol=1e-8, maxiter=500)
    numpy.testing.assert_allclose(numpy.sort(numpy.asarray(values)), [1.0, 2.0, 3.0], rtol=1e-6)


PYTHON_USES = {
    # (json writes NumPy's float64, a float; its float32 and int64 it refuses)
    "json of a mean": lambda xp: json.dumps({"m": xp.mean(xp.arange(5.0) * 1.5)}),
    "json of an int64 sum": lambda xp: json.dumps(xp.sum(xp.arange(5) * 2)),
    "str * a sum": lambda xp: "ab" * xp.sum(xp.arange(3)),
    "emath.sqrt of negatives": lambda xp: xp.emath.sqrt(-(xp.arange(3.0) * 1)).tolist(),
    "lib.scimath.log": lambda xp: xp.lib.scimath.log(-(xp.arange(1.0, 3.0) * 1)).tolist(),
    "random.shuffle of a list": lambda xp: (lambda v: (xp.random.seed(0), xp.random.shuffle(v),
                                                       v)[2])(list(range(6))),
    "statistics of reductions": lambda xp: statistics.mean([xp.mean(xp.arange(5.0) * 1.5),
                                                            xp.max(xp.arange(5.0) * 1.5)]),
    "Generator.shuffle of a list": lambda xp: (lambda v: (xp.random.default_rng(1).shuffle(v),
                                                          v)[1])(list(range(6))),
}  # fmt: skip


@pytest.mark.parametrize("case", PYTHON_USES)
def test_python_and_numpys_namesakes_take_numloom_values_as_numpys(case):
    """What the standard library does with NumPy's values (json, a string's repetition), what
    NumPy's namesake functions mean (``emath.sqrt`` is complex for negatives, not NaN), and a
    list shuffled in place (its shuffle was run on a copy)."""
    def outcome(xp):
        try:
            return PYTHON_USES[case](xp)
        except TypeError as error:
            return type(error)

    assert outcome(nl) == outcome(numpy)


def _rosen(np):
    def f(x):
        return 0.5 * (1 - x[0]) ** 2 + (x[1] - x[0] ** 2) ** 2

    def jac(x):
        return np.array((-2 * 0.5 * (1 - x[0]) - 4 * x[0] * (x[1] - x[0] ** 2),
                         2 * (x[1] - x[0] ** 2)))  # fmt: skip

    def hess(x):
        return np.array(((1 - 4 * x[1] + 12 * x[0] ** 2, -4 * x[0]), (-4 * x[0], 2)))

    return f, jac, hess


SOLVES = {  # SciPy's solvers of functions written with numloom (scientific-python-lectures)
    "L-BFGS-B": lambda sp, np, f, jac, hess: sp.optimize.minimize(
        f, [2, 2], method="L-BFGS-B", jac=jac).x,
    "Newton-CG": lambda sp, np, f, jac, hess: sp.optimize.minimize(
        f, [2, -1], method="Newton-CG", jac=jac, hess=hess).x,
    "trust-constr": lambda sp, np, f, jac, hess: sp.optimize.minimize(
        f, [2, -1], method="trust-constr", jac=jac, hess=hess,
        constraints=[sp.optimize.NonlinearConstraint(lambda x: np.sum(x**2), 0, 4,
                                                     jac=lambda x: 2 * x)]).x,
    "SLSQP, a dict constraint": lambda sp, np, f, jac, hess: sp.optimize.minimize(
        f, [2, -1], method="SLSQP", jac=jac,
        constraints={"type": "ineq", "fun": lambda x: np.array([4.0]) - np.sum(x**2),
                     "jac": lambda x: -2 * x[None, :]}).x,
    "fmin_l_bfgs_b": lambda sp, np, f, jac, hess: sp.optimize.fmin_l_bfgs_b(
        f, np.array([2.0, 2.0]), fprime=jac)[0],
    "least_squares": lambda sp, np, f, jac, hess: sp.optimize.least_squares(
        lambda x: np.array([1 - x[0], 10 * (x[1] - x[0] ** 2)]), [2.0, 2.0],
        jac=lambda x: np.array([[-1.0, 0.0], [-20 * x[0], 10.0]])).x,
    "root": lambda sp, np, f, jac, hess: sp.optimize.root(
        lambda x: np.array([x[0] + 0.5 * (x[0] - x[1]) ** 3 - 1, 0.5 * (x[1] - x[0]) ** 3 + x[1]]),
        [0.0, 0.0], jac=lambda x: np.array([[1 + 1.5 * (x[0] - x[1]) ** 2,
                                             -1.5 * (x[0] - x[1]) ** 2],
                                            [-1.5 * (x[1] - x[0]) ** 2,
                                             1 + 1.5 * (x[1] - x[0]) ** 2]])).x,
    "solve_ivp": lambda sp, np, f, jac, hess: sp.integrate.solve_ivp(
        lambda t, y: -0.5 * y, [0, 10], np.array([2.0, 4.0]), method="LSODA",
        jac=lambda t, y: np.diag(np.array([-0.5, -0.5]))).y[:, -1],
}  # fmt: skip


@pytest.mark.parametrize("name", list(SOLVES))
def test_scipys_solvers_take_functions_that_return_numloom_arrays(name):
    """A SciPy solver calls the user's objective, gradient, Hessian and constraints, written
    with numloom, and hands what they return to compiled code that takes NumPy's arrays only
    (L-BFGS-B: "argument 7 must be numpy.ndarray, not ndarray"): it gets NumPy's arrays, and
    the solution is NumPy's."""
    sp = pytest.importorskip("scipy")
    import scipy.integrate  # noqa: F401
    import scipy.optimize  # noqa: F401

    want = SOLVES[name](sp, numpy, *_rosen(numpy))
    got = SOLVES[name](sp, nl, *_rosen(nl))
    numpy.testing.assert_allclose(numpy.asarray(got), want, rtol=1e-9, atol=1e-12)


def test_pandas_still_warns_of_a_chained_assignment():
    """pandas warns where an assignment goes into a temporary copy (``df.loc[mask]["c"] = v``,
    Python for Data Analysis' chapter 5), judging by the reference count of the frame its
    ``__setitem__`` gets: numloom's wrapper of ``__setitem__`` hands it on with no reference
    of its own (the warning was lost)."""
    import warnings

    from numloom.api import libraries

    pandas = pytest.importorskip("pandas")
    from pandas.errors import ChainedAssignmentError

    if libraries._ArgsWrapper is None:
        pytest.skip("the Python wrapper holds references of its own (the compiled module is off)")

    data = pandas.DataFrame(numpy.arange(16).reshape((4, 4)), columns=["a", "b", "c", "d"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data.loc[data.c == 6]["c"] = 7
    assert [w.category for w in caught] == [ChainedAssignmentError]
    assert caught[0].filename == __file__
    assert data.c.tolist() == [2, 6, 10, 14]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data["c"] = nl.arange(4)  # (a plain assignment: nothing to warn about)
    assert data.c.tolist() == [0, 1, 2, 3]
