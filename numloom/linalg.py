"""``numloom.linalg``: NumPy's ``numpy.linalg``, with NumPy's results, dtypes and errors.

On a GPU the factorizations (solve, inv, cholesky, qr, svd, eigh, det, ...) run in cuSOLVER on
the device (``backends/cusolver.py``); on the CPU they run in NumPy's LAPACK over numloom's own
memory. What is arithmetic on their results (norms, ``pinv``, ``matrix_rank``, ``cond``,
``matrix_power``, ``multi_dot``, ``lstsq`` on a GPU) is built from numloom's array operations
and matrix products, so it fuses and runs on either device. What numloom does not define here
(``eig``, ``eigvals``) runs through NumPy.
"""

from __future__ import annotations

import operator

import numpy as _np
from numpy.linalg import _linalg as _reference

from .api import numpy_api as _nx
from .api.fallback import call_numpy, module_getattr
from .api.products import matmul, tensordot, vdot  # noqa: F401
from .api.products import outer as _outer
from .api.shapes import matrix_transpose  # noqa: F401
from .core.array import ndarray

LinAlgError = _np.linalg.LinAlgError
SVDResult = _reference.SVDResult
EighResult = _reference.EighResult
QRResult = _reference.QRResult
SlogdetResult = _reference.SlogdetResult
_umath = _reference._umath_linalg


def _cusolver():
    from .backends import cusolver

    return cusolver


def _native(a) -> bool:
    """Whether ``a``'s factorizations run in cuSOLVER on its GPU (on the CPU, NumPy's LAPACK
    runs over numloom's memory)."""
    return a.device != "cpu" and _cusolver().available()


def _asarray(a, like=None) -> ndarray:
    if isinstance(a, ndarray):
        return a
    return _nx.asarray(a, device=like.device if like is not None else None)


def _working_type(*arrays):
    """The dtype NumPy's result has (float32 stays float32, integers become float64)."""
    return _np.dtype(_reference._commonType(*arrays)[1])


def _real(dtype) -> _np.dtype:
    return _np.dtype(_np.dtype(dtype).char.lower())


def _stacked(a, dtype) -> ndarray:
    """``a`` (..., m, n) as one batch axis, (batch, m, n), of ``dtype``."""
    batch = int(_np.prod(a.shape[:-2], dtype=_np.int64))
    return _nx.reshape(a.astype(dtype, copy=False), (batch,) + a.shape[-2:])


def _dummy(a):
    """A NumPy array of ``a``'s shape and dtype that holds no memory (for NumPy's checks)."""
    return _np.broadcast_to(_np.zeros((), a.dtype), a.shape)


def _shape_error(fn, *arrays, **kwargs) -> None:
    """Raise what NumPy's ``fn`` raises for arguments of these shapes (its words exactly)."""
    with _np.errstate(all="ignore"):
        fn(*(_dummy(a) for a in arrays), **kwargs)


def _from_zeros(fn, a, dtype, **kwargs):
    """NumPy's results for an empty ``a`` (they depend on its shape only), on ``a``'s device."""
    made = fn(_np.zeros(a.shape, dtype), **kwargs)
    if isinstance(made, tuple):
        arrays = (_nx.asarray(x, device=a.device) for x in made)
        return type(made)(*arrays) if hasattr(made, "_fields") else tuple(arrays)
    return _nx.asarray(made, device=a.device)


# --- linear systems and inverses ---------------------------------------------------------------


def solve(a, b):
    """The solution ``x`` of ``a @ x = b`` (NumPy's broadcasting: ``b`` is a stack of vectors
    only when it is 1-D). Raises ``LinAlgError("Singular matrix")``."""
    a = _asarray(a)
    b = _asarray(b, like=a)
    if not _native(a):
        return call_numpy("linalg.solve", _np.linalg.solve, a, b)
    _reference._assert_stacked_square(a)
    dtype = _working_type(a, b)
    n = a.shape[-1]
    if b.ndim == 1:
        if b.shape[0] != n:
            _shape_error(_np.linalg.solve, a, b)
        batch, k = a.shape[:-2], 1
        shape = batch + (n,)
        rhs = _nx.broadcast_to(b, batch + (1, n))
    else:
        if b.ndim == 0 or b.shape[-2] != n:
            _shape_error(_np.linalg.solve, a, b)
        try:
            batch = _np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            _shape_error(_np.linalg.solve, a, b)
            raise
        k = b.shape[-1]
        shape = batch + (n, k)
        rhs = _nx.swapaxes(_nx.broadcast_to(b, batch + (n, k)), -1, -2)
    a = _nx.broadcast_to(a, batch + (n, n))
    if not (n and k and _np.prod(batch, dtype=_np.int64)):
        return _nx.zeros(shape, dtype, device=a.device)
    x = _cusolver().solve(_stacked(a, dtype), _stacked(rhs, dtype), dtype)
    x = _nx.reshape(x, batch + (k, n))
    return _nx.reshape(x, shape) if b.ndim == 1 else _nx.swapaxes(x, -1, -2)


def inv(a):
    """The inverses of the matrices of ``a``. Raises ``LinAlgError("Singular matrix")``."""
    a = _asarray(a)
    if not _native(a):
        return call_numpy("linalg.inv", _np.linalg.inv, a)
    _reference._assert_stacked_square(a)
    return _inverse(a, _working_type(a), check=True)


def _inverse(a, dtype, check: bool):
    if a.size == 0:
        return _nx.zeros(a.shape, dtype, device=a.device)
    return _nx.reshape(_cusolver().inv(_stacked(a, dtype), dtype, check), a.shape)


def _inv_ignoring_errors(x):
    """NumPy's inverse with no error for singular matrices (infinities and NaNs instead)."""
    signature = "D->D" if x.dtype.kind == "c" else "d->d"
    with _np.errstate(all="ignore"):
        return _umath.inv(x, signature=signature)


def tensorsolve(a, b, axes=None):
    """The ``x`` of ``tensordot(a, x, axes=x.ndim) = b`` (NumPy's ``tensorsolve``)."""
    a = _asarray(a)
    b = _asarray(b, like=a)
    an = a.ndim
    if axes is not None:
        order = list(range(an))
        for k in axes:
            order.remove(k)
            order.insert(an, k)
        a = _nx.transpose(a, order)
    old_shape = a.shape[-(an - b.ndim):]
    size = 1
    for k in old_shape:
        size *= k
    if a.size != size**2:
        raise LinAlgError(
            "Input arrays must satisfy the requirement \
            prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])"
        )
    x = solve(_nx.reshape(a, (size, size)), _nx.ravel(b))
    return _nx.reshape(x, old_shape)


def tensorinv(a, ind=2):
    """The inverse of ``a`` with respect to ``tensordot(., ., ind)`` (NumPy's
    ``tensorinv``)."""
    a = _asarray(a)
    old_shape = a.shape
    size = 1
    if ind > 0:
        inverse_shape = old_shape[ind:] + old_shape[:ind]
        for k in old_shape[ind:]:
            size *= k
    else:
        raise ValueError("Invalid ind argument.")
    return _nx.reshape(inv(_nx.reshape(a, (size, -1))), inverse_shape)


# --- factorizations ------------------------------------------------------------------------------


def cholesky(a, /, *, upper=False):
    """The lower Cholesky factor ``L`` of each matrix of ``a`` (``a = L @ L^H``), or the upper
    one (``upper=True``). Raises ``LinAlgError("Matrix is not positive definite")``."""
    a = _asarray(a)
    if not _native(a):
        return call_numpy("linalg.cholesky", _np.linalg.cholesky, a, upper=upper)
    _reference._assert_stacked_square(a)
    dtype = _working_type(a)
    if a.size == 0:
        return _nx.zeros(a.shape, dtype, device=a.device)
    return _nx.reshape(_cusolver().cholesky(_stacked(a, dtype), dtype, bool(upper)), a.shape)


def _qr_mode(mode: str) -> str:
    """NumPy's ``qr`` modes, with its warnings for the old names."""
    import warnings

    if mode in ("reduced", "complete", "r", "raw"):
        return mode
    if mode in ("f", "full"):
        msg = (
            "The 'full' option is deprecated in favor of 'reduced'.\n"
            "For backward compatibility let mode default."
        )
        warnings.warn(msg, DeprecationWarning, stacklevel=3)
        return "reduced"
    if mode in ("e", "economic"):
        warnings.warn("The 'economic' option is deprecated.", DeprecationWarning, stacklevel=3)
        return "economic"
    raise ValueError(f"Unrecognized mode '{mode}'")


def qr(a, mode="reduced"):
    """The QR factorization of the matrices of ``a``: ``QRResult(Q, R)`` for ``reduced`` and
    ``complete``, ``R`` for ``r``, ``(h, tau)`` (the Householder reflectors) for ``raw``."""
    a = _asarray(a)
    if not _native(a):
        return call_numpy("linalg.qr", _np.linalg.qr, a, mode=mode)
    mode = _qr_mode(mode)
    _reference._assert_stacked_2d(a)
    dtype = _working_type(a)
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    if a.size == 0:
        with _np.errstate(all="ignore"):
            return _from_zeros(_np.linalg.qr, a, dtype, mode=mode)
    k = min(m, n)
    how = "raw" if mode == "economic" else mode
    first, second = _cusolver().qr(_stacked(a, dtype), dtype, how)
    if mode == "raw":
        return _nx.reshape(first, batch + (n, m)), _nx.reshape(second, batch + (k,))
    if mode == "economic":
        return _nx.swapaxes(_nx.reshape(first, batch + (n, m)), -1, -2)
    r = _nx.reshape(second, batch + second.shape[1:])
    if mode == "r":
        return r
    return QRResult(_nx.reshape(first, batch + first.shape[1:]), r)


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """The singular value decomposition ``SVDResult(U, S, Vh)`` of the matrices of ``a`` (or
    ``S`` alone). With ``hermitian`` only the lower triangle of each (square) matrix is read;
    on a GPU the general SVD of that Hermitian matrix runs: the same singular values, singular
    vectors up to the signs NumPy's eigenvalue-based ones carry."""
    a = _asarray(a)
    if not _native(a):
        return call_numpy("linalg.svd", _np.linalg.svd, a, full_matrices=full_matrices,
                          compute_uv=compute_uv, hermitian=hermitian)  # fmt: skip
    if hermitian:
        _reference._assert_stacked_square(a)
        a = _nx.tril(a) + _nx.conj(_nx.swapaxes(_nx.tril(a, -1), -1, -2))
    _reference._assert_stacked_2d(a)
    dtype = _working_type(a)
    batch = a.shape[:-2]
    if a.size == 0:
        return _from_zeros(_np.linalg.svd, a, dtype, full_matrices=full_matrices,
                           compute_uv=compute_uv)  # fmt: skip
    made = _cusolver().svd(_stacked(a, dtype), dtype, bool(full_matrices), bool(compute_uv))
    if not compute_uv:
        return _nx.reshape(made, batch + made.shape[1:])
    return SVDResult(*(_nx.reshape(x, batch + x.shape[1:]) for x in made))


def svdvals(x, /):
    """The singular values of the matrices of ``x``, largest first."""
    return svd(x, compute_uv=False, hermitian=False)


def _uplo(UPLO: str) -> bool:
    UPLO = UPLO.upper()
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return UPLO == "L"


def eigh(a, UPLO="L"):
    """``EighResult(eigenvalues, eigenvectors)`` of the Hermitian matrices of ``a``, from their
    lower (``UPLO="L"``) or upper triangle; eigenvalues ascending."""
    lower = _uplo(UPLO)
    a = _asarray(a)
    if not _native(a):
        return call_numpy("linalg.eigh", _np.linalg.eigh, a, UPLO=UPLO)
    return EighResult(*_eigh(a, lower, vectors=True))


def eigvalsh(a, UPLO="L"):
    """The eigenvalues of the Hermitian matrices of ``a``, ascending."""
    lower = _uplo(UPLO)
    a = _asarray(a)
    if not _native(a):
        return call_numpy("linalg.eigvalsh", _np.linalg.eigvalsh, a, UPLO=UPLO)
    return _eigh(a, lower, vectors=False)


def _eigh(a, lower: bool, vectors: bool):
    _reference._assert_stacked_square(a)
    dtype = _working_type(a)
    batch, n = a.shape[:-2], a.shape[-1]
    if a.size == 0:
        w = _nx.zeros(batch + (n,), _real(dtype), device=a.device)
        return (w, _nx.zeros(a.shape, dtype, device=a.device)) if vectors else w
    made = _cusolver().eigh(_stacked(a, dtype), dtype, lower, vectors)
    if not vectors:
        return _nx.reshape(made, batch + (n,))
    return _nx.reshape(made[0], batch + (n,)), _nx.reshape(made[1], a.shape)


# --- determinants --------------------------------------------------------------------------------


def _lu_diagonal(a, dtype):
    """The diagonal of ``U`` of the LU factorization of each matrix of ``a`` and whether its
    row exchanges are odd in number (the determinant's sign flips)."""
    batch, n = a.shape[:-2], a.shape[-1]
    factors, pivots = _cusolver().lu_factors(_stacked(a, dtype), dtype)
    lu = _nx.reshape(factors, batch + (n, n))
    rows = _nx.reshape(pivots, batch + (n,))
    moved = rows != _nx.arange(1, n + 1, dtype=_np.int32, device=a.device)
    odd = _nx.count_nonzero(moved, axis=-1) % 2 == 1
    return _nx.diagonal(lu, axis1=-2, axis2=-1), odd


def det(a):
    """The determinants of the matrices of ``a``."""
    a = _asarray(a)
    if not _native(a):
        return call_numpy("linalg.det", _np.linalg.det, a)
    _reference._assert_stacked_square(a)
    dtype = _working_type(a)
    if a.size == 0:
        return _nx.ones(a.shape[:-2], dtype, device=a.device)
    diagonal_, odd = _lu_diagonal(a, dtype)
    with _np.errstate(all="ignore"):
        d = _nx.prod(diagonal_, axis=-1)
        return _nx.where(odd, -d, d)


def slogdet(a):
    """``SlogdetResult(sign, logabsdet)`` of the matrices of ``a`` (sign 0 and logabsdet
    ``-inf`` for a singular one)."""
    a = _asarray(a)
    if not _native(a):
        return call_numpy("linalg.slogdet", _np.linalg.slogdet, a)
    _reference._assert_stacked_square(a)
    dtype = _working_type(a)
    batch = a.shape[:-2]
    if a.size == 0:
        return SlogdetResult(_nx.ones(batch, dtype, device=a.device),
                             _nx.zeros(batch, _real(dtype), device=a.device))  # fmt: skip
    diagonal_, odd = _lu_diagonal(a, dtype)
    with _np.errstate(all="ignore"):
        sign = _nx.prod(_nx.sign(diagonal_), axis=-1)
        logdet = _nx.sum(_nx.log(_nx.abs(diagonal_)), axis=-1)
        return SlogdetResult(_nx.where(odd, -sign, sign), logdet)


# --- least squares, pseudo-inverse, rank, condition ----------------------------------------------


def lstsq(a, b, rcond=None):
    """The least-squares solution of ``a @ x = b``: ``(x, residuals, rank, s)`` as NumPy
    returns them (``residuals`` empty unless ``a`` has full column rank and more rows than
    columns). On a GPU it is computed from the SVD of ``a``; its rank is read back, as the
    shape of ``residuals`` depends on it."""
    a = _asarray(a)
    b = _asarray(b, like=a)
    if not _native(a):
        return call_numpy("linalg.lstsq", _np.linalg.lstsq, a, b, rcond=rcond)
    column = b.ndim == 1
    b2 = _nx.reshape(b, b.shape + (1,)) if column else b
    _reference._assert_2d(a, b2)
    m, n = a.shape
    if m != b2.shape[0]:
        raise LinAlgError("Incompatible dimensions")
    t, dtype = _reference._commonType(a, b2)
    real = _real(dtype)
    if rcond is None:
        rcond = _np.finfo(t).eps * max(n, m)
    if a.size == 0:
        made = _np.linalg.lstsq(_np.zeros(a.shape, dtype), _np.zeros(b.shape, dtype), rcond)
        x, resids, rank, s = made
        return (_nx.asarray(x, device=a.device), _nx.asarray(resids, device=a.device), rank,
                _nx.asarray(s, device=a.device))  # fmt: skip
    u, s, vh = svd(a.astype(dtype, copy=False), full_matrices=False)
    large = s > rcond * s[..., :1]
    with _np.errstate(all="ignore"):
        s_inv = _nx.where(large, 1 / _nx.where(large, s, 1), 0).astype(dtype)
        y = s_inv[:, None] * matmul(_nx.conj(_nx.swapaxes(u, -1, -2)), b2.astype(dtype))
        x = matmul(_nx.conj(_nx.swapaxes(vh, -1, -2)), y)
    rank = _np.int32(int(_nx.count_nonzero(large)))
    if rank != n or m <= n:
        resids = _nx.zeros((0,), real, device=a.device)
    else:
        resids = _nx.sum(_nx.abs(b2 - matmul(a.astype(dtype), x)) ** 2, axis=0).astype(real)
    return (_nx.reshape(x, (n,)) if column else x), resids, rank, s


def pinv(a, rcond=None, hermitian=False, *, rtol=_np._NoValue):
    """The Moore-Penrose pseudo-inverses of the matrices of ``a``, from their SVD (singular
    values at most ``rcond`` times the largest count as zero)."""
    a = _asarray(a)
    if rcond is None:
        if rtol is _np._NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(a.shape[-2:]) * _np.finfo(a.dtype).eps
        else:
            rcond = rtol
    elif rtol is not _np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    rcond = _nx.asarray(rcond, device=a.device)
    if _reference._is_empty_2d(a):
        m, n = a.shape[-2:]
        return _nx.zeros(a.shape[:-2] + (n, m), a.dtype, device=a.device)
    u, s, vt = svd(_nx.conj(a), full_matrices=False, hermitian=hermitian)
    cutoff = rcond[..., None] * _nx.max(s, axis=-1, keepdims=True)
    large = s > cutoff
    with _np.errstate(all="ignore"):
        s = _nx.where(large, 1 / _nx.where(large, s, 1), 0).astype(s.dtype)
    return matmul(_nx.swapaxes(vt, -1, -2), s[..., None] * _nx.swapaxes(u, -1, -2))


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """The number of singular values of each matrix of ``A`` above ``tol`` (by default
    ``max(M, N) * eps`` times the largest)."""
    if rtol is not None and tol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    A = _asarray(A)
    if A.ndim < 2:
        return int(not bool(_nx.all(A == 0)))
    S = svd(A, compute_uv=False, hermitian=hermitian)
    if tol is None:
        if rtol is None:
            rtol = max(A.shape[-2:]) * _np.finfo(S.dtype).eps
        else:
            rtol = _nx.asarray(rtol, device=A.device)[..., None]
        tol = _nx.max(S, axis=-1, keepdims=True, initial=0) * rtol
    else:
        tol = _nx.asarray(tol, device=A.device)[..., None]
    return _nx.count_nonzero(S > tol, axis=-1)


def cond(x, p=None):
    """The condition numbers of the matrices of ``x`` in the norm ``p`` (infinite for a
    singular matrix, NaN where ``x`` holds NaNs)."""
    x = _asarray(x)
    if _reference._is_empty_2d(x):
        raise LinAlgError("cond is not defined on empty arrays")
    if p is None or p in {2, -2}:
        s = svd(x, compute_uv=False)
        with _np.errstate(all="ignore"):
            r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    else:
        _reference._assert_stacked_square(x)
        dtype = _working_type(x)
        if _native(x):
            inverse = _inverse(x, dtype, check=False)
        else:
            inverse = call_numpy("linalg.inv", _inv_ignoring_errors, x)
        with _np.errstate(all="ignore"):
            r = norm(x, p, axis=(-2, -1)) * norm(inverse, p, axis=(-2, -1))
        r = r.astype(_real(dtype), copy=False)
    with _np.errstate(all="ignore"):
        from_x = _nx.any(_nx.isnan(x), axis=(-2, -1))
        return _nx.where(_nx.isnan(r) & ~from_x, _np.inf, r).astype(r.dtype)


# --- norms ---------------------------------------------------------------------------------------


def norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's matrix or vector norm of ``x`` (every ``ord``, over ``axis``, ``keepdims``)."""
    x = _asarray(x)
    if x.dtype.kind not in "fc":
        x = x.astype(float)
    if axis is None:
        ndim = x.ndim
        if ord is None or (ord in ("f", "fro") and ndim == 2) or (ord == 2 and ndim == 1):
            return _frobenius(x, keepdims)
    nd = x.ndim
    if axis is None:
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = int(axis)
        except Exception as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
        axis = (axis,)
    if len(axis) == 1:
        return _vector_norm(x, ord, axis, keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def _frobenius(x, keepdims: bool):
    """The 2-norm of all of ``x``, as NumPy's fast path computes it (dot products)."""
    ndim = x.ndim
    x = _nx.ravel(x)
    if x.dtype.kind == "c":
        re, im = _nx.real(x), _nx.imag(x)
        squares = _nx.dot(re, re) + _nx.dot(im, im)
    else:
        squares = _nx.dot(x, x)
    ret = _nx.sqrt(squares)
    return _nx.reshape(ret, (1,) * ndim) if keepdims else ret


def _vector_norm(x, ord, axis: tuple, keepdims: bool):
    if ord == _np.inf:
        return _nx.max(_nx.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -_np.inf:
        return _nx.min(_nx.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return _nx.sum((x != 0).astype(_real(x.dtype)), axis=axis, keepdims=keepdims)
    if ord == 1:
        return _nx.sum(_nx.abs(x), axis=axis, keepdims=keepdims)
    if ord is None or ord == 2:
        return _nx.sqrt(_nx.sum(_nx.real(_nx.conj(x) * x), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    ret = _nx.sum(_nx.abs(x) ** ord, axis=axis, keepdims=keepdims)
    return ret ** _np.reciprocal(ord, dtype=ret.dtype)


def _matrix_norm(x, ord, axis: tuple, keepdims: bool):
    from numpy.lib.array_utils import normalize_axis_index

    nd = x.ndim
    row_axis = normalize_axis_index(axis[0], nd)
    col_axis = normalize_axis_index(axis[1], nd)
    if row_axis == col_axis:
        raise ValueError("Duplicate axes given.")
    if ord in (2, -2, "nuc"):
        s = svd(_nx.moveaxis(x, (row_axis, col_axis), (-2, -1)), compute_uv=False)
        if ord == 2:
            ret = _nx.max(s, axis=-1, initial=0)
        elif ord == -2:
            ret = _nx.min(s, axis=-1)
        else:
            ret = _nx.sum(s, axis=-1)
    elif ord in (1, -1):
        sums = _nx.sum(_nx.abs(x), axis=row_axis)
        col = col_axis - 1 if col_axis > row_axis else col_axis
        ret = _nx.max(sums, axis=col, initial=0) if ord == 1 else _nx.min(sums, axis=col)
    elif ord in (_np.inf, -_np.inf):
        sums = _nx.sum(_nx.abs(x), axis=col_axis)
        row = row_axis - 1 if row_axis > col_axis else row_axis
        ret = _nx.max(sums, axis=row, initial=0) if ord > 0 else _nx.min(sums, axis=row)
    elif ord in (None, "fro", "f"):
        ret = _nx.sqrt(_nx.sum(_nx.real(_nx.conj(x) * x), axis=axis))
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        shape = list(x.shape)
        shape[axis[0]] = 1
        shape[axis[1]] = 1
        ret = _nx.reshape(ret, tuple(shape))
    return ret


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The norm ``ord`` of each matrix over the last two axes of ``x``."""
    return norm(_asarray(x), axis=(-2, -1), keepdims=keepdims, ord=ord)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector norm ``ord`` over ``axis`` (all of ``x``, one axis or several)."""
    from numpy.lib.array_utils import normalize_axis_tuple

    x = _asarray(x)
    shape = list(x.shape)
    if axis is None:
        x = _nx.ravel(x)
        inner = 0
    elif isinstance(axis, tuple):
        normalized = normalize_axis_tuple(axis, x.ndim)
        rest = tuple(i for i in range(x.ndim) if i not in normalized)
        size = int(_np.prod([x.shape[i] for i in axis], dtype=int))
        x = _nx.reshape(_nx.transpose(x, axis + rest), (size, *[x.shape[i] for i in rest]))
        inner = 0
    else:
        inner = axis
    res = norm(x, axis=inner, ord=ord)
    if keepdims:
        for i in normalize_axis_tuple(range(len(shape)) if axis is None else axis, len(shape)):
            shape[i] = 1
        res = _nx.reshape(res, tuple(shape))
    return res


# --- products ------------------------------------------------------------------------------------


def matrix_power(a, n):
    """``a`` (a stack of square matrices) to the integer power ``n`` by repeated squaring
    (a negative ``n`` inverts first)."""
    a = _asarray(a)
    _reference._assert_stacked_square(a)
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n == 0:
        identity = _nx.eye(a.shape[-2], dtype=a.dtype, device=a.device)
        return _nx.broadcast_to(identity, a.shape).copy()
    if n < 0:
        a = inv(a)
        n = abs(n)
    if n == 1:
        return a
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    z = result = None
    while n > 0:
        z = a if z is None else matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def multi_dot(arrays, *, out=None):
    """The product of two or more matrices (the first and last may be vectors), in the order
    that costs the fewest multiplications."""
    n = len(arrays)
    if n < 2:
        raise ValueError("Expecting at least two arrays.")
    if n == 2:
        return _nx.dot(arrays[0], arrays[1], out=out)
    arrays = [_asarray(a) for a in arrays]
    ndim_first, ndim_last = arrays[0].ndim, arrays[-1].ndim
    if ndim_first == 1:
        arrays[0] = _nx.reshape(arrays[0], (1, -1))
    if ndim_last == 1:
        arrays[-1] = _nx.reshape(arrays[-1], (-1, 1))
    _reference._assert_2d(*arrays)
    if n == 3:
        result = _dot_three(*arrays, out=out)
    else:
        order = _reference._multi_dot_matrix_chain_order(arrays)
        result = _chain(arrays, order, 0, n - 1, out=out)
    if ndim_first == 1 and ndim_last == 1:
        return result[0, 0]
    if ndim_first == 1 or ndim_last == 1:
        return _nx.ravel(result)
    return result


def _dot_three(A, B, C, out=None):
    a0, a1b0 = A.shape
    b1c0, c1 = C.shape
    if a0 * b1c0 * (a1b0 + c1) < a1b0 * c1 * (a0 + b1c0):
        return _nx.dot(_nx.dot(A, B), C, out=out)
    return _nx.dot(A, _nx.dot(B, C), out=out)


def _chain(arrays, order, i, j, out=None):
    if i == j:
        return arrays[i]
    return _nx.dot(_chain(arrays, order, i, order[i, j]),
                   _chain(arrays, order, order[i, j] + 1, j), out=out)  # fmt: skip


def outer(x1, x2, /):
    """The outer product of two vectors."""
    x1 = _asarray(x1)
    x2 = _asarray(x2, like=x1)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(
            f"Input arrays must be one-dimensional, but they are {x1.ndim=} and {x2.ndim=}."
        )
    return _outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """The cross products of the 3-vectors along ``axis`` of ``x1`` and ``x2``
    (broadcast)."""
    x1 = _asarray(x1)
    x2 = _asarray(x2, like=x1)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, "
            f"but they are {x1.shape[axis]} and {x2.shape[axis]} "
            "dimensional instead."
        )
    a = _nx.moveaxis(x1, axis, -1)
    b = _nx.moveaxis(x2, axis, -1)
    dtype = _np.promote_types(a.dtype, b.dtype)
    a0, a1, a2 = (a[..., i].astype(dtype, copy=False) for i in range(3))
    b0, b1, b2 = (b[..., i].astype(dtype, copy=False) for i in range(3))
    product = _nx.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return _nx.moveaxis(product, -1, axis if axis >= 0 else product.ndim + axis)


def vecdot(x1, x2, /, *, axis=-1):
    """The dot products of the vectors along ``axis`` of ``x1`` and ``x2`` (the first
    conjugated), broadcast over the other axes."""
    x1 = _asarray(x1)
    x2 = _asarray(x2, like=x1)
    if not (_has_axis(x1, axis) and _has_axis(x2, axis)) or x1.shape[axis] != x2.shape[axis]:
        _shape_error(_np.vecdot, x1, x2, axis=axis)
    a = _nx.moveaxis(x1, axis, -1)
    b = _nx.moveaxis(x2, axis, -1)
    try:
        _np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    except ValueError:
        _shape_error(_np.vecdot, x1, x2, axis=axis)
        raise
    dtype = _np.result_type(x1.dtype, x2.dtype)
    if a.dtype.kind == "c":
        a = _nx.conj(a)
    return _nx.sum(a.astype(dtype, copy=False) * b.astype(dtype, copy=False), axis=-1,
                   dtype=dtype)  # fmt: skip


def _has_axis(x, axis: int) -> bool:
    return -x.ndim <= axis < x.ndim


def diagonal(x, /, *, offset=0):
    """The diagonals of the matrices over the last two axes (NumPy's ``linalg.diagonal``)."""
    from .api.shapes import diagonal as _diagonal

    return _diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    """The sums along the diagonals of the matrices over the last two axes."""
    from .api.products import trace as _trace

    return _trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def __getattr__(name: str):
    return module_getattr("linalg", _np.linalg, name)


from .api.other_dtypes import guard_namespace as _guard_namespace  # noqa: E402

_guard_namespace(globals(), _np.linalg)  # (NumPy's data and ndarray subclasses: NumPy's functions)
