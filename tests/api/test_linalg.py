"""``numloom.linalg`` against ``numpy.linalg``: values (to a tolerance suited to each precision),
dtypes, shapes, and NumPy's exceptions with NumPy's words.

Factorizations are compared through what does not depend on LAPACK's sign and phase choices:
products that rebuild the input, orthogonality, singular values and eigenvalues.

Each test runs twice on the CPU: ``native`` (NumPy's LAPACK over numloom's memory) and
``emulated``: the GPU path (``backends/cusolver.py``: column-major layouts, batches, workspaces,
``info`` words) over a host stand-in for cuSOLVER and device memory, so CI checks what the GPU
runs. On a GPU the ``native`` run is the cuSOLVER path itself.
"""

from __future__ import annotations

import ctypes
import types

import numpy
import pytest
from conftest import _Raised, assert_same

import numloom
from numloom import linalg as nl_linalg
from numloom.backends import cusolver

ON_CPU = numloom.get_device() == "cpu"
DTYPES = [numpy.float32, numpy.float64, numpy.complex64, numpy.complex128, numpy.int64]
SQUARE = [(0, 0), (1, 1), (4, 4), (2, 3, 3), (2, 2, 3, 3), (0, 2, 2)]
RECTANGLES = [(1, 1), (5, 3), (3, 5), (4, 4), (2, 4, 3), (2, 1, 3, 4)]


# --- a host stand-in for cuSOLVER and device memory -------------------------------------------


class _HostArray:
    """Host memory standing in for a DeviceArray: ``ptr``, ``shape``, ``dtype``, ``nbytes``."""

    def __init__(self, shape, dtype, device="cpu"):
        self.array = numpy.zeros(shape, dtype)
        self.ptr, self.shape, self.dtype = self.array.ctypes.data, tuple(shape), self.array.dtype
        self.nbytes, self.device = self.array.nbytes, device


def _operand(a, dtype=None):
    host = numpy.ascontiguousarray(numpy.asarray(a.get(), dtype=dtype))
    return host.ctypes.data, host


HOST_MEMORY = types.SimpleNamespace(
    operand=_operand,
    empty=_HostArray,
    adopt=lambda data, device: numloom.asarray(data.array.copy()),
    stream=lambda device: types.SimpleNamespace(handle=0),
    read_back=lambda data: data.array.copy(),
)


def _flat(ptr, count, dtype):
    dtype = numpy.dtype(dtype)
    raw = (ctypes.c_byte * (count * dtype.itemsize)).from_address(ptr)
    return numpy.frombuffer(raw, dtype)


def _column_major(ptr, rows, cols, ld, dtype):
    """A writable view of the column-major ``rows x cols`` matrix at ``ptr``."""
    assert ld >= max(rows, 1)
    return _flat(ptr, ld * cols, dtype).reshape(cols, ld).T[:rows]


def _lu(m):
    """LAPACK's getrf: P L U with one-based row exchanges, and info (first zero pivot)."""
    n = m.shape[0]
    pivots, info = numpy.zeros(n, numpy.int32), 0
    for j in range(n):
        p = j + int(numpy.argmax(numpy.abs(m[j:, j])))
        pivots[j] = p + 1
        m[[j, p]] = m[[p, j]]
        if m[j, j] == 0:
            info = info or j + 1
            continue
        m[j + 1:, j] /= m[j, j]
        m[j + 1:, j + 1:] -= numpy.outer(m[j + 1:, j], m[j, j + 1:])
    return pivots, info


def _rebuild(factors, pivots):
    n = factors.shape[0]
    lower = numpy.tril(factors, -1) + numpy.eye(n)
    product = lower @ numpy.triu(factors)
    for j in reversed(range(n)):
        p = pivots[j] - 1
        product[[j, p]] = product[[p, j]]
    return product


def _orgqr(a, tau, columns):
    m, k = a.shape[0], tau.shape[0]
    q = numpy.eye(m, columns, dtype=a.dtype)
    for i in reversed(range(k)):
        v = numpy.zeros(m, a.dtype)
        v[i], v[i + 1:] = 1, a[i + 1:, i]
        q -= tau[i] * numpy.outer(v, v.conj() @ q)
    return q


try:  # (the bindings' names, where nvmath-python is installed)
    from nvmath.bindings import cusolverDn as CUSOLVER
except Exception:  # noqa: BLE001 (not installed: the names go unchecked)
    CUSOLVER = None


class HostSolver:
    """cuSOLVER's legacy routines (the ones numloom calls) over host memory, in NumPy."""

    TYPES = {"s": numpy.float32, "d": numpy.float64, "c": numpy.complex64, "z": numpy.complex128}

    def create(self):
        return 1

    def set_stream(self, handle, stream):
        pass

    def __getattr__(self, name):
        if CUSOLVER is not None and not hasattr(CUSOLVER, name):  # (cuSOLVER's names only)
            raise AttributeError(f"cuSOLVER has no {name}")
        dtype, routine = self.TYPES[name[0]], name[1:]
        if routine.endswith("_buffer_size"):
            return lambda *args: 3
        routine = {"ungqr": "orgqr", "heevd": "syevd"}.get(routine, routine)
        return lambda handle, *args: getattr(self, "_" + routine)(dtype, *args)

    def _getrf(self, dtype, m, n, a, lda, work, ipiv, info):
        matrix = _column_major(a, m, n, lda, dtype)
        pivots, found = _lu(matrix)
        _flat(ipiv, n, numpy.int32)[:] = pivots
        _flat(info, 1, numpy.int32)[0] = found

    def _getrs(self, dtype, trans, n, nrhs, a, lda, ipiv, b, ldb, info):
        matrix = _rebuild(_column_major(a, n, n, lda, dtype), _flat(ipiv, n, numpy.int32))
        matrix = matrix.T if trans == cusolver.OP_T else matrix
        rhs = _column_major(b, n, nrhs, ldb, dtype)
        if (numpy.diagonal(_column_major(a, n, n, lda, dtype)) == 0).any():
            rhs[...] = numpy.nan  # (a division by a zero pivot)
        else:
            rhs[...] = numpy.linalg.solve(matrix, rhs)
        _flat(info, 1, numpy.int32)[0] = 0

    def _potrf(self, dtype, uplo, n, a, lda, work, lwork, info):
        matrix = _column_major(a, n, n, lda, dtype)
        try:
            if uplo == cusolver.UPPER:
                hermitian = numpy.triu(matrix) + numpy.triu(matrix, 1).conj().T
                matrix[numpy.triu_indices(n)] = numpy.linalg.cholesky(hermitian).conj().T[
                    numpy.triu_indices(n)]  # fmt: skip
            else:
                hermitian = numpy.tril(matrix) + numpy.tril(matrix, -1).conj().T
                matrix[numpy.tril_indices(n)] = numpy.linalg.cholesky(hermitian)[
                    numpy.tril_indices(n)]  # fmt: skip
            _flat(info, 1, numpy.int32)[0] = 0
        except numpy.linalg.LinAlgError:
            _flat(info, 1, numpy.int32)[0] = 1

    def _geqrf(self, dtype, m, n, a, lda, tau, work, lwork, info):
        matrix = _column_major(a, m, n, lda, dtype)
        h, reflectors = numpy.linalg.qr(matrix, mode="raw")
        matrix[...] = h.T
        _flat(tau, min(m, n), dtype)[:] = reflectors

    def _orgqr(self, dtype, m, n, k, a, lda, tau, work, lwork, info):
        assert m >= n >= k
        matrix = _column_major(a, m, n, lda, dtype)
        matrix[...] = _orgqr(matrix.copy(), _flat(tau, k, dtype).copy(), n)

    def _gesvd(self, dtype, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork,
               info):  # fmt: skip
        assert m >= n, "cuSOLVER's gesvd takes m >= n only"
        matrix = _column_major(a, m, n, lda, dtype)
        real = numpy.finfo(dtype).dtype
        if jobu == ord("N"):
            _flat(s, n, real)[:] = numpy.linalg.svd(matrix, compute_uv=False)
        else:
            full = jobu == ord("A")
            left, values, right = numpy.linalg.svd(matrix, full_matrices=full)
            _flat(s, n, real)[:] = values
            _column_major(u, m, m if full else n, ldu, dtype)[...] = left
            _column_major(vt, n, n, ldvt, dtype)[...] = right
        _flat(info, 1, numpy.int32)[0] = 0

    def _syevd(self, dtype, jobz, uplo, n, a, lda, w, work, lwork, info):
        matrix = _column_major(a, n, n, lda, dtype)
        values, vectors = numpy.linalg.eigh(matrix, UPLO="U" if uplo == cusolver.UPPER else "L")
        _flat(w, n, numpy.finfo(dtype).dtype)[:] = values
        if jobz == cusolver.VECTORS:
            matrix[...] = vectors
        _flat(info, 1, numpy.int32)[0] = 0


@pytest.fixture(autouse=True, params=["native", "emulated"])
def path(request, monkeypatch):
    """``native``: numloom's own path on this device; ``emulated``: the GPU path on the host."""
    if request.param == "emulated":
        if not ON_CPU:
            pytest.skip("the GPU path runs natively here")
        monkeypatch.setattr(nl_linalg, "_native", lambda a: True)
        monkeypatch.setattr(cusolver, "_memory", HOST_MEMORY)
        monkeypatch.setattr(cusolver, "_library", HostSolver)
        monkeypatch.setattr(cusolver, "_copy", lambda dst, src, n, device: ctypes.memmove(dst, src, n))
    return request.param


# --- inputs and comparisons --------------------------------------------------------------------


def _tolerance(dtype) -> dict:
    single = numpy.dtype(dtype) in (numpy.float32, numpy.complex64)
    return {"rtol": 2e-4, "atol": 2e-4} if single else {"rtol": 1e-9, "atol": 1e-9}


def _matrix(shape, dtype, kind="general", seed=0):
    """A well-conditioned (``general``), Hermitian positive definite (``spd``) or Hermitian
    (``hermitian``) stack of matrices, or a rectangular one (``any``)."""
    rng = numpy.random.default_rng(seed)
    dtype = numpy.dtype(dtype)
    if dtype.kind == "i":
        return rng.integers(-5, 6, shape).astype(dtype) + (
            6 * numpy.eye(shape[-1], dtype=dtype) if kind != "any" else 0)  # fmt: skip
    a = rng.standard_normal(shape)
    if dtype.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    if kind in ("spd", "hermitian"):
        a = a @ numpy.swapaxes(a, -1, -2).conj() if kind == "spd" else a + numpy.swapaxes(
            a, -1, -2).conj()  # fmt: skip
    if kind in ("general", "spd") and shape[-1]:
        a = a + shape[-1] * numpy.eye(shape[-1])
    return a.astype(dtype)


def _compare(body, *args, rtol=0.0, atol=0.0):
    """Run ``body(xp, *args)`` on NumPy and numloom and compare (errors too)."""

    def run(xp):
        try:
            out = body(xp, *args)
            return _host(out)
        except Exception as e:  # noqa: BLE001 (compared against NumPy's below)
            return _Raised(e)

    assert_same(run(numloom), run(numpy), rtol=rtol, atol=atol)


def _host(out):
    if isinstance(out, numloom.ndarray):
        return out.get()
    if isinstance(out, (tuple, list)):
        return type(out)(_host(o) for o in out) if not hasattr(out, "_fields") else tuple(
            _host(o) for o in out)  # fmt: skip
    return out


def _h(x):
    return numpy.swapaxes(numpy.asarray(x), -1, -2).conj()


# --- linear systems ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
def test_solve_vector_and_matrix(dtype, shape):
    a = _matrix(shape, dtype)
    n = shape[-1]
    vector = _matrix((n,), dtype, "any", seed=1)
    matrix = _matrix(shape[:-1] + (2,), dtype, "any", seed=2)
    _compare(lambda xp: xp.linalg.solve(xp.asarray(a), xp.asarray(vector)), **_tolerance(dtype))
    _compare(lambda xp: xp.linalg.solve(xp.asarray(a), xp.asarray(matrix)), **_tolerance(dtype))


@pytest.mark.parametrize("a_shape, b_shape", [
    ((2, 1, 3, 3), (4, 3, 2)), ((3, 3), (5, 3, 1)), ((2, 3, 3), (3,)), ((2, 3, 3), (2, 3)),
    ((3, 3), (3, 0)), ((3, 3), (4,)), ((3, 3), (2, 4, 1)), ((2, 3, 3), (3, 3, 1)), ((3, 3), ()),
])  # fmt: skip
def test_solve_broadcasting_and_shape_errors(a_shape, b_shape):
    a = _matrix(a_shape, numpy.float64)
    b = _matrix(b_shape, numpy.float64, "any", seed=3) if b_shape else numpy.float64(2)
    _compare(lambda xp: xp.linalg.solve(xp.asarray(a), xp.asarray(b)), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
def test_inv(dtype, shape):
    a = _matrix(shape, dtype)
    _compare(lambda xp: xp.linalg.inv(xp.asarray(a)), **_tolerance(dtype))


SINGULAR = [numpy.array([[1.0, 2.0], [2.0, 4.0]]), numpy.zeros((3, 3)),
            numpy.stack([numpy.eye(2), numpy.array([[0.0, 0.0], [1.0, 1.0]])])]  # fmt: skip


@pytest.mark.parametrize("a", SINGULAR)
@pytest.mark.parametrize("name", ["solve", "inv", "cholesky"])
def test_singular_matrices_raise(a, name):
    def body(xp):
        x = xp.asarray(a)
        if name == "solve":
            return xp.linalg.solve(x, xp.ones(x.shape[:-1]))
        return getattr(xp.linalg, name)(x)

    _compare(body)


@pytest.mark.parametrize("name", ["solve", "inv", "cholesky", "det", "slogdet", "eigh",
                                  "eigvalsh", "qr", "svd", "matrix_power"])  # fmt: skip
@pytest.mark.parametrize("a", [numpy.ones(3), numpy.ones((2, 3)), numpy.ones((2, 4, 3)),
                               numpy.ones((2, 2), numpy.float16), numpy.float64(1)])  # fmt: skip
def test_bad_input_raises_numpys_error(name, a):
    def body(xp):
        x = xp.asarray(a)
        if name == "solve":
            return xp.linalg.solve(x, x)
        if name == "matrix_power":
            return xp.linalg.matrix_power(x, 2)
        made = getattr(xp.linalg, name)(x)
        return made if name not in ("qr", "svd") else made[1]  # (Q or S: sign-free)

    _compare(body, rtol=1e-6, atol=1e-6)


def test_argument_errors():
    a = _matrix((3, 3), numpy.float64, "spd")
    _compare(lambda xp: xp.linalg.qr(xp.asarray(a), mode="bad"))
    _compare(lambda xp: xp.linalg.eigh(xp.asarray(a), UPLO="X"))
    _compare(lambda xp: xp.linalg.eigvalsh(xp.asarray(a), UPLO="X"))
    _compare(lambda xp: xp.linalg.matrix_power(xp.asarray(a), 1.5))
    _compare(lambda xp: xp.linalg.lstsq(xp.asarray(a), xp.ones(4)))
    _compare(lambda xp: xp.linalg.tensorinv(xp.asarray(a), ind=0))
    _compare(lambda xp: xp.linalg.cond(xp.zeros((0, 0))))
    _compare(lambda xp: xp.linalg.pinv(xp.asarray(a), rcond=0.1, rtol=0.1))
    _compare(lambda xp: xp.linalg.matrix_rank(xp.asarray(a), tol=0.1, rtol=0.1))


# --- determinants and factorizations -----------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE + [(3, 5, 5)])
def test_det_and_slogdet(dtype, shape):
    a = _matrix(shape, dtype, seed=4) - (shape[-1] * numpy.eye(shape[-1])).astype(dtype) * 0.9 \
        if shape[-1] else _matrix(shape, dtype)  # fmt: skip
    tolerance = _tolerance(dtype)
    _compare(lambda xp: xp.linalg.det(xp.asarray(a)), **tolerance)
    _compare(lambda xp: tuple(xp.linalg.slogdet(xp.asarray(a))), **tolerance)


@pytest.mark.parametrize("a", SINGULAR)
def test_det_of_singular_matrices(a):
    _compare(lambda xp: xp.linalg.det(xp.asarray(a)), atol=1e-12)
    _compare(lambda xp: tuple(xp.linalg.slogdet(xp.asarray(a))), atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(dtype, shape, upper):
    a = _matrix(shape, dtype, "spd")
    a = a + numpy.triu(numpy.ones(shape, dtype), 1)  # (the triangle NumPy ignores)
    a = a if not upper else numpy.swapaxes(a, -1, -2)
    _compare(lambda xp: xp.linalg.cholesky(xp.asarray(a), upper=upper), **_tolerance(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", RECTANGLES + [(0, 3), (3, 0), (2, 0, 0)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r", "raw"])
def test_qr(dtype, shape, mode):
    a = _matrix(shape, dtype, "any")

    def body(xp):
        made = xp.linalg.qr(xp.asarray(a), mode=mode)
        if mode == "raw":
            h, tau = (numpy.asarray(x) for x in made)
            return h.shape, h.dtype, tau.shape, tau.dtype, numpy.abs(numpy.diagonal(
                h, axis1=-2, axis2=-1))  # fmt: skip
        if mode == "r":
            r = numpy.asarray(made)
            return numpy.abs(r)
        assert type(made).__name__ == "QRResult"
        q, r = (numpy.asarray(x) for x in made)
        return q @ r, _h(q) @ q, numpy.abs(r)

    _compare(body, **_tolerance(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", RECTANGLES + [(0, 3), (3, 0), (2, 0, 3)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd(dtype, shape, full_matrices):
    a = _matrix(shape, dtype, "any")

    def body(xp):
        made = xp.linalg.svd(xp.asarray(a), full_matrices=full_matrices)
        assert type(made).__name__ == "SVDResult"
        u, s, vh = (numpy.asarray(x) for x in made)
        k = s.shape[-1]
        rebuilt = (u[..., :k] * s[..., None, :]) @ vh[..., :k, :]
        return s, rebuilt, _h(u) @ u, vh @ _h(vh), u.dtype, vh.dtype

    tolerance = _tolerance(dtype)
    _compare(body, **tolerance)
    _compare(lambda xp: xp.linalg.svd(xp.asarray(a), compute_uv=False), **tolerance)
    _compare(lambda xp: xp.linalg.svdvals(xp.asarray(a)), **tolerance)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 3)])
def test_svd_hermitian(dtype, shape):
    a = _matrix(shape, dtype, "hermitian")
    a = a + numpy.triu(numpy.ones(shape, dtype), 1)  # (the triangle NumPy ignores)

    def body(xp):
        u, s, vh = (numpy.asarray(x) for x in xp.linalg.svd(xp.asarray(a), hermitian=True))
        return s, (u * s[..., None, :]) @ vh, _h(u) @ u

    _compare(body, **_tolerance(dtype))
    _compare(lambda xp: xp.linalg.svd(xp.asarray(a), compute_uv=False, hermitian=True),
             **_tolerance(dtype))  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
@pytest.mark.parametrize("UPLO", ["L", "u"])
def test_eigh(dtype, shape, UPLO):
    a = _matrix(shape, dtype, "hermitian")
    ignored = numpy.triu(numpy.ones(shape, dtype), 1)
    a = a + (ignored if UPLO == "L" else numpy.swapaxes(ignored, -1, -2))

    def body(xp):
        made = xp.linalg.eigh(xp.asarray(a), UPLO=UPLO)
        assert type(made).__name__ == "EighResult"
        w, v = (numpy.asarray(x) for x in made)
        return w, (v * w[..., None, :]) @ _h(v), _h(v) @ v, v.dtype

    tolerance = _tolerance(dtype)
    _compare(body, **tolerance)
    _compare(lambda xp: xp.linalg.eigvalsh(xp.asarray(a), UPLO=UPLO), **tolerance)


# --- least squares, pseudo-inverse, rank, condition --------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a_shape, b_shape", [((6, 3), (6,)), ((6, 3), (6, 2)), ((3, 5), (3,)),
                                              ((4, 4), (4, 0)), ((0, 3), (0, 2)),
                                              ((5, 2), (5, 1))])  # fmt: skip
def test_lstsq(dtype, a_shape, b_shape):
    a = _matrix(a_shape, dtype, "any")
    b = _matrix(b_shape, dtype, "any", seed=5)
    _compare(lambda xp: xp.linalg.lstsq(xp.asarray(a), xp.asarray(b)), **_tolerance(dtype))


def test_lstsq_rank_deficient():
    a = numpy.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    b = numpy.array([1.0, 2.0, 2.0])
    _compare(lambda xp: xp.linalg.lstsq(xp.asarray(a), xp.asarray(b)), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", RECTANGLES + [(0, 3), (2, 0, 0)])
def test_pinv(dtype, shape):
    a = _matrix(shape, dtype, "any")
    tolerance = _tolerance(dtype)
    _compare(lambda xp: xp.linalg.pinv(xp.asarray(a)), **tolerance)
    _compare(lambda xp: xp.linalg.pinv(xp.asarray(a), rtol=None), **tolerance)


def test_pinv_of_rank_deficient_and_hermitian_matrices():
    a = numpy.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    _compare(lambda xp: xp.linalg.pinv(xp.asarray(a)), rtol=1e-9, atol=1e-9)
    h = _matrix((2, 3, 3), numpy.float64, "hermitian")
    _compare(lambda xp: xp.linalg.pinv(xp.asarray(h), hermitian=True), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("a", [numpy.eye(4), numpy.array([[1.0, 2.0], [2.0, 4.0]]),
                               numpy.zeros((3, 2)), numpy.ones(3), numpy.zeros(2),
                               _matrix((2, 3, 5, 4), numpy.float32, "any")])  # fmt: skip
def test_matrix_rank(a):
    _compare(lambda xp: xp.linalg.matrix_rank(xp.asarray(a)))
    if a.ndim >= 2:
        _compare(lambda xp: xp.linalg.matrix_rank(xp.asarray(a), tol=0.5))
        _compare(lambda xp: xp.linalg.matrix_rank(xp.asarray(a), rtol=0.5))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, numpy.inf, -numpy.inf, "fro", "nuc"])
def test_cond(dtype, p):
    a = _matrix((2, 3, 3), dtype, seed=6)
    _compare(lambda xp: xp.linalg.cond(xp.asarray(a), p), **_tolerance(dtype))
    _compare(lambda xp: xp.linalg.cond(xp.asarray(a[0]), p), **_tolerance(dtype))


@pytest.mark.parametrize("p", [None, 1, numpy.inf, "fro"])
def test_cond_of_singular_matrices_is_infinite(p):
    a = numpy.array([[1.0, 2.0], [2.0, 4.0]])
    with_nan = numpy.array([[1.0, numpy.nan], [0.0, 1.0]])
    _compare(lambda xp: xp.linalg.cond(xp.asarray(numpy.stack([a, numpy.eye(2)])), p),
             rtol=1e-9, atol=1e-9)  # fmt: skip
    if p is not None:  # (NumPy's SVD of NaNs raises; its inverse does not)
        _compare(lambda xp: xp.linalg.cond(xp.asarray(with_nan), p))


# --- norms -------------------------------------------------------------------------------------

VECTOR_ORDS = [None, 2, 1, 0, 3, 0.5, -1, numpy.inf, -numpy.inf, "fro"]
MATRIX_ORDS = [None, "fro", "f", "nuc", 1, -1, 2, -2, numpy.inf, -numpy.inf, 3]


@pytest.mark.parametrize("dtype", DTYPES + [numpy.bool_])
@pytest.mark.parametrize("ord", VECTOR_ORDS)
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (-1, True), (1, False),
                                            ((1,), True)])  # fmt: skip
def test_vector_norms(dtype, ord, axis, keepdims):
    x = _matrix((3, 4), dtype, "any") if dtype is not numpy.bool_ else numpy.eye(3, 4, dtype=bool)
    x1 = x[0]

    def body(xp, data, axis=axis):
        return xp.linalg.norm(xp.asarray(data), ord=ord, axis=axis, keepdims=keepdims)

    tolerance = _tolerance(numpy.float32 if dtype is numpy.bool_ else dtype)
    _compare(body, x1, 0 if axis is not None else None, **tolerance)
    if axis is not None:
        _compare(body, x, **tolerance)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", MATRIX_ORDS)
@pytest.mark.parametrize("axis, keepdims", [(None, False), ((0, 1), True), ((1, 0), False),
                                            ((-1, -3), True), ((0, 0), False),
                                            ((0, 1, 2), False)])  # fmt: skip
def test_matrix_norms(dtype, ord, axis, keepdims):
    x = _matrix((3, 4), dtype, "any")
    x3 = _matrix((2, 3, 4), dtype, "any")
    tolerance = _tolerance(dtype)
    if axis is None or axis == (0, 1) or axis == (1, 0):
        _compare(lambda xp: xp.linalg.norm(xp.asarray(x), ord=ord, axis=axis, keepdims=keepdims),
                 **tolerance)  # fmt: skip
    _compare(lambda xp: xp.linalg.norm(xp.asarray(x3), ord=ord, axis=axis, keepdims=keepdims),
             **tolerance)  # fmt: skip


def test_norm_argument_errors():
    x = numpy.ones((2, 3))
    _compare(lambda xp: xp.linalg.norm(xp.asarray(x), axis="a"))
    _compare(lambda xp: xp.linalg.norm(xp.asarray(x), ord="nuc", axis=0))
    _compare(lambda xp: xp.linalg.norm(xp.asarray(x), ord="bad"))


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (2, 0, 1)])
@pytest.mark.parametrize("ord", [2, 1, numpy.inf, 0, 3])
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_norm(axis, ord, keepdims):
    x = _matrix((2, 3, 4), numpy.float64, "any")
    _compare(lambda xp: xp.linalg.vector_norm(xp.asarray(x), axis=axis, ord=ord,
                                              keepdims=keepdims), rtol=1e-12)  # fmt: skip


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, 2, -2, numpy.inf])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norm(ord, keepdims):
    x = _matrix((2, 3, 4), numpy.complex64, "any")
    _compare(lambda xp: xp.linalg.matrix_norm(xp.asarray(x), ord=ord, keepdims=keepdims),
             **_tolerance(numpy.complex64))  # fmt: skip


# --- products ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7, -1, -3])
def test_matrix_power(dtype, n):
    a = _matrix((2, 3, 3), dtype) / (4 if numpy.dtype(dtype).kind != "i" else 1)
    a = a.astype(dtype)
    _compare(lambda xp: xp.linalg.matrix_power(xp.asarray(a), n), **_tolerance(dtype))


@pytest.mark.parametrize("shapes", [[(2, 3), (3, 4)], [(2, 3), (3, 4), (4, 5)],
                                    [(3,), (3, 4), (4, 5), (5, 2)], [(3,), (3, 4), (4,)],
                                    [(10, 2), (2, 30), (30, 3), (3, 1)], [(2, 3)],
                                    [(2, 3), (4, 5), (5, 1)]])  # fmt: skip
def test_multi_dot(shapes):
    arrays = [_matrix(s, numpy.float64, "any", seed=i) for i, s in enumerate(shapes)]
    _compare(lambda xp: xp.linalg.multi_dot([xp.asarray(a) for a in arrays]), rtol=1e-12)


def test_multi_dot_out():
    arrays = [_matrix(s, numpy.float64, "any", seed=i) for i, s in enumerate([(2, 3), (3, 4),
                                                                               (4, 2)])]

    def body(xp):
        out = xp.zeros((2, 2))
        made = xp.linalg.multi_dot([xp.asarray(a) for a in arrays], out=out)
        return made, out

    _compare(body, rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES + [numpy.int8, numpy.bool_])
def test_vecdot_cross_outer(dtype):
    x = _matrix((2, 4, 3), dtype, "any") if dtype is not numpy.bool_ else numpy.ones((2, 4, 3), bool)
    y = _matrix((4, 3), dtype, "any", seed=1) if dtype is not numpy.bool_ else numpy.ones((4, 3), bool)
    tolerance = _tolerance(dtype) if numpy.dtype(dtype).kind in "fc" else {}
    _compare(lambda xp: xp.linalg.vecdot(xp.asarray(x), xp.asarray(y)), **tolerance)
    _compare(lambda xp: xp.linalg.vecdot(xp.asarray(x), xp.asarray(y), axis=-2), **tolerance)
    if dtype is not numpy.bool_:
        _compare(lambda xp: xp.linalg.cross(xp.asarray(x), xp.asarray(y)), **tolerance)
        _compare(lambda xp: xp.linalg.cross(xp.asarray(x[:, :3]), xp.asarray(y[:3]), axis=-2),
                 **tolerance)  # fmt: skip
    _compare(lambda xp: xp.linalg.outer(xp.asarray(x[0, 0]), xp.asarray(y[0])), **tolerance)


def test_vecdot_cross_outer_errors():
    x, y = numpy.ones((2, 3)), numpy.ones((2, 4))
    _compare(lambda xp: xp.linalg.vecdot(xp.asarray(x), xp.asarray(y)))
    _compare(lambda xp: xp.linalg.vecdot(xp.asarray(x), xp.ones((3, 3))))
    _compare(lambda xp: xp.linalg.cross(xp.asarray(y), xp.asarray(y)))
    _compare(lambda xp: xp.linalg.outer(xp.asarray(x), xp.asarray(y)))


def test_tensorsolve_and_tensorinv():
    a = _matrix((6, 6), numpy.float64).reshape(2, 3, 6)
    b = _matrix((2, 3), numpy.float64, "any", seed=7)
    _compare(lambda xp: xp.linalg.tensorsolve(xp.asarray(a), xp.asarray(b)), rtol=1e-9)
    a4 = _matrix((6, 6), numpy.float64).reshape(6, 2, 3)
    _compare(lambda xp: xp.linalg.tensorsolve(xp.asarray(a4), xp.ones(6), axes=(0,)), rtol=1e-9)
    c = _matrix((12, 12), numpy.float64).reshape(4, 3, 6, 2)
    _compare(lambda xp: xp.linalg.tensorinv(xp.asarray(c)), rtol=1e-9, atol=1e-12)
    _compare(lambda xp: xp.linalg.tensorsolve(xp.asarray(a), xp.ones(5)))


def test_results_are_numloom_arrays_and_numpy_types():
    a = numloom.asarray(_matrix((3, 3), numpy.float64, "spd"))
    assert isinstance(numloom.linalg.inv(a), numloom.ndarray)
    assert isinstance(numloom.linalg.svd(a), numloom.linalg.SVDResult)
    assert isinstance(numloom.linalg.eigh(a), numpy.linalg._linalg.EighResult)
    assert isinstance(numloom.linalg.qr(a), numpy.linalg._linalg.QRResult)
    assert isinstance(numloom.linalg.slogdet(a), numpy.linalg._linalg.SlogdetResult)
    assert numloom.linalg.LinAlgError is numpy.linalg.LinAlgError


@pytest.mark.skipif(ON_CPU, reason="the GPU path is what counts no fallback")
def test_no_fallback_on_the_gpu():
    a = numloom.asarray(_matrix((2, 4, 4), numpy.float64, "spd"))
    b = numloom.asarray(_matrix((2, 4, 2), numpy.float64, "any"))
    rect = numloom.asarray(_matrix((5, 3), numpy.complex64, "any"))
    before = dict(numloom.stats()["fallbacks"])
    made = [
        numloom.linalg.solve(a, b), numloom.linalg.inv(a), numloom.linalg.cholesky(a),
        *numloom.linalg.qr(rect), *numloom.linalg.svd(rect), *numloom.linalg.eigh(a),
        numloom.linalg.eigvalsh(a), numloom.linalg.det(a), *numloom.linalg.slogdet(a),
        numloom.linalg.lstsq(rect, numloom.ones(5, numpy.complex64))[0],
        numloom.linalg.pinv(rect), numloom.linalg.norm(a), numloom.linalg.norm(a, 2, (1, 2)),
        numloom.linalg.norm(rect, "nuc"), numloom.linalg.matrix_power(a, -3),
        numloom.linalg.multi_dot([rect.T, rect, rect.T]), numloom.linalg.matrix_rank(a),
        numloom.linalg.cond(a), numloom.linalg.cond(a, 1), numloom.linalg.svdvals(rect),
        numloom.linalg.svd(a, hermitian=True)[0], numloom.linalg.tensorinv(a[0], ind=1),
        numloom.linalg.vecdot(a, a), numloom.linalg.cross(rect, rect),
    ]  # fmt: skip
    numloom.evaluate(*[m for m in made if isinstance(m, numloom.ndarray)])
    assert dict(numloom.stats()["fallbacks"]) == before
    assert all(m.device != "cpu" for m in made if isinstance(m, numloom.ndarray))
