"""``numpy.linalg``'s factorizations on the GPU through cuSOLVER (nvmath-python's bindings), on
numloom's stream, one handle per device.

cuSOLVER is column-major and numloom row-major: a C-contiguous ``(r, c)`` matrix *is* the
column-major ``c x r`` matrix, its transpose. The functions here take that into account
instead of transposing where they can: the LU factors of a row-major ``A`` are those of ``A^T``
(``getrs`` then solves with ``A^T``'s transpose, ``A``), a lower Cholesky factor of ``A`` is an
upper one of ``A^T`` in place, a wide matrix's SVD is its transpose's with the factors swapped.

Each function takes numloom arrays of stacked matrices, ``(batch, rows, cols)``, and returns
numloom arrays in new device memory: a routine that overwrites its input (all of them) works on
a copy made here. Matrices of a batch go one by one, in stream order, through one workspace. The
``info`` words of a batch are read back once per call, and a failure raises NumPy's
``LinAlgError`` with NumPy's words.
"""

from __future__ import annotations

import numpy as np

from . import cuda_library as _memory

OP_N, OP_T = 0, 1  # cublasOperation_t
LOWER, UPPER = 0, 1  # cublasFillMode_t
NO_VECTORS, VECTORS = 0, 1  # cusolverEigMode_t
_PREFIX = {"f": "s", "d": "d", "F": "c", "D": "z"}
_COMPLEX_NAMES = {"orgqr": "ungqr", "syevd": "heevd"}

_handles: dict = {}  # device -> cusolverDn handle


def _library():
    from nvmath.bindings import cusolverDn

    return cusolverDn


def available() -> bool:
    """Whether cuSOLVER can be called here (nvmath-python and the library itself)."""
    try:
        _library()
    except Exception:  # noqa: BLE001 (not installed, or no cuSOLVER library beside it)
        return False
    return True


def supports(dtype) -> bool:
    return np.dtype(dtype).char in _PREFIX


class _Solver:
    """cuSOLVER's routines for one element type, with the device's handle set on numloom's
    stream."""

    def __init__(self, device: str, dtype):
        library = _library()
        handle = _handles.get(device)
        if handle is None:
            handle = _handles[device] = library.create()
        library.set_stream(handle, int(_memory.stream(device).handle))
        self.library, self.handle, self.device = library, handle, device
        self.dtype = np.dtype(dtype)
        self.real = np.dtype(self.dtype.char.lower())
        self.complex = self.dtype.kind == "c"

    def __call__(self, routine: str, *args):
        """Call ``routine`` ("getrf", "orgqr_buffer_size", ...) of this element type."""
        base, _, suffix = routine.partition("_")
        if self.complex:
            base = _COMPLEX_NAMES.get(base, base)
        name = _PREFIX[self.dtype.char] + base + (f"_{suffix}" if suffix else "")
        return getattr(self.library, name)(self.handle, *args)

    def workspace(self, routine: str, *args):
        """A workspace of the size ``<routine>_buffer_size(*args)`` asks for (in elements)."""
        size = self(routine + "_buffer_size", *args)
        return _memory.empty((max(int(size), 1),), self.dtype, self.device), int(size)


def _copy(dst: int, src: int, nbytes: int, device: str) -> None:
    """Copy ``nbytes`` from device address ``src`` to ``dst``, in numloom's stream."""
    from cuda.bindings import driver

    from .cuda_device import _check

    _check(driver.cuMemcpyDtoDAsync(dst, src, nbytes, _memory.stream(device).handle),
           "cuMemcpyDtoDAsync")  # fmt: skip


def fresh(x, dtype):
    """A contiguous copy of numloom array ``x`` (as ``dtype``) in new device memory, which the
    routines here may overwrite."""
    dtype = np.dtype(dtype)
    out = _memory.empty(x.shape, dtype, x.device)
    if x.size:
        pointer, holder = _memory.operand(x, dtype)
        _copy(out.ptr, pointer, x.size * dtype.itemsize, x.device)
        del holder  # (the copy is enqueued: stream order keeps the memory until it has run)
    return out


def _clone(data):
    """A copy of device array ``data`` in new device memory."""
    out = _memory.empty(data.shape, data.dtype, data.device)
    _copy(out.ptr, data.ptr, data.nbytes, data.device)
    return out


def _check_info(info, routine: str, message: str) -> None:
    """Raise ``LinAlgError(message)`` where a matrix's ``info`` word is positive."""
    words = _memory.read_back(info)
    if (words < 0).any():  # an argument cuSOLVER refused: numloom's own mistake
        raise RuntimeError(f"cuSOLVER {routine} refused argument {-int(words.min())}")
    if (words > 0).any():
        raise np.linalg.LinAlgError(message)


def _matrices(data, step: int):
    """The device addresses of the matrices of a batch ``data`` of ``step`` bytes each."""
    return [data.ptr + i * step for i in range(data.shape[0])]


def lu(a, dtype):
    """``getrf`` of each ``(n, n)`` matrix of ``a`` (batch, n, n) read column-major, that is of
    ``a^T``: ``(lu, pivots, info)`` device arrays, ``lu`` holding the factors column-major,
    ``pivots`` (batch, n) int32, one-based, ``info`` (batch,) int32 (positive: singular)."""
    solver = _Solver(a.device, dtype)
    batch, n = a.shape[0], a.shape[-1]
    factors = fresh(a, dtype)
    pivots = _memory.empty((batch, n), np.int32, a.device)
    info = _memory.empty((batch,), np.int32, a.device)
    work, _ = solver.workspace("getrf", n, n, factors.ptr, n)
    step = n * n * solver.dtype.itemsize
    for i, matrix in enumerate(_matrices(factors, step)):
        solver("getrf", n, n, matrix, n, work.ptr, pivots.ptr + 4 * i * n, info.ptr + 4 * i)
    return factors, pivots, info


def lu_factors(a, dtype):
    """``(lu, pivots)`` of ``lu`` as numloom arrays: the factors of ``a^T`` column-major, that
    is those of ``a`` up to a transpose (the same diagonal), and the one-based row exchanges."""
    factors, pivots, _ = lu(a, dtype)
    return _memory.adopt(factors, a.device), _memory.adopt(pivots, a.device)


def solve(a, rhs, dtype, check: bool = True, transposed: bool = True):
    """The solutions ``x`` of ``a @ x = b`` for ``a`` (batch, n, n) and ``rhs`` (batch, k, n)
    holding the ``k`` right-hand sides of each matrix as rows (``b^T``): a numloom array
    (batch, k, n), the solutions as rows. ``transposed=False`` solves ``a^T @ x = b`` instead.
    Raises ``LinAlgError("Singular matrix")`` where ``a`` is singular unless ``check`` is
    false (the results there are then infinities and NaNs)."""
    device = a.device
    factors, pivots, info = lu(a, dtype)
    solver = _Solver(device, dtype)
    batch, n = a.shape[0], a.shape[-1]
    k = rhs.shape[1]
    out = fresh(rhs, dtype)
    ignored = _memory.empty((batch,), np.int32, device)
    size = solver.dtype.itemsize
    op = OP_T if transposed else OP_N  # (the factors are a^T's)
    for i in range(batch):
        solver("getrs", op, n, k, factors.ptr + i * n * n * size, n, pivots.ptr + 4 * i * n,
               out.ptr + i * k * n * size, n, ignored.ptr + 4 * i)  # fmt: skip
    if check:
        _check_info(info, "getrf", "Singular matrix")
    return _memory.adopt(out, device)


def inv(a, dtype, check: bool = True):
    """The inverses of the matrices of ``a`` (batch, n, n), as a numloom array: the LU factors
    of ``a^T`` solve ``a^T @ y = I``, and ``y = inv(a)^T`` column-major is ``inv(a)``
    row-major."""
    from ..api import numpy_api as nx

    batch, n = a.shape[0], a.shape[-1]
    identity = nx.broadcast_to(nx.eye(n, dtype=dtype, device=a.device), (batch, n, n))
    return solve(a, identity, dtype, check, transposed=False)


def cholesky(a, dtype, upper: bool):
    """The Cholesky factors of the matrices of ``a`` (batch, n, n), as a numloom array:
    ``potrf`` of ``a^T`` with the fill mode flipped leaves ``a``'s lower factor (``upper``:
    its upper one) in the row-major triangle NumPy reads, from that same triangle."""
    from ..api import numpy_api as nx

    solver = _Solver(a.device, dtype)
    batch, n = a.shape[0], a.shape[-1]
    factors = fresh(a, dtype)
    info = _memory.empty((batch,), np.int32, a.device)
    fill = LOWER if upper else UPPER
    work, lwork = solver.workspace("potrf", fill, n, factors.ptr, n)
    step = n * n * solver.dtype.itemsize
    for i, matrix in enumerate(_matrices(factors, step)):
        solver("potrf", fill, n, matrix, n, work.ptr, lwork, info.ptr + 4 * i)
    _check_info(info, "potrf", "Matrix is not positive definite")
    result = _memory.adopt(factors, a.device)
    return nx.triu(result) if upper else nx.tril(result)


def qr(a, dtype, mode: str):
    """NumPy's ``qr(a, mode)`` of ``a`` (batch, m, n) as numloom arrays (batch axes kept
    flat): ``geqrf`` of the column-major ``a`` (``a^T`` row-major; for ``complete`` Q of a tall
    ``a``, padded to m x m), ``orgqr``/``ungqr`` on a copy for Q."""
    from ..api import numpy_api as nx

    solver = _Solver(a.device, dtype)
    batch, m, n = a.shape
    k = min(m, n)
    columns = m if mode == "complete" and m > n else k
    stored = nx.swapaxes(a, -1, -2)  # (batch, n, m): a column-major
    if columns > n:
        stored = nx.concatenate([stored, nx.zeros((batch, m - n, m), dtype=dtype,
                                                  device=a.device)], axis=-2)  # fmt: skip
    h = fresh(stored, dtype)
    tau = _memory.empty((batch, k), dtype, a.device)
    info = _memory.empty((batch,), np.int32, a.device)
    work, lwork = solver.workspace("geqrf", m, n, h.ptr, m)
    size = solver.dtype.itemsize
    step = h.shape[1] * m * size
    for i, matrix in enumerate(_matrices(h, step)):
        solver("geqrf", m, n, matrix, m, tau.ptr + i * k * size, work.ptr, lwork,
               info.ptr + 4 * i)  # fmt: skip
    if mode == "raw":
        return _memory.adopt(h, a.device), _memory.adopt(tau, a.device)
    q = None
    if mode != "r":
        q_data = _clone(h)
        work, lwork = solver.workspace("orgqr", m, columns, k, q_data.ptr, m, tau.ptr)
        for i, matrix in enumerate(_matrices(q_data, step)):
            solver("orgqr", m, columns, k, matrix, m, tau.ptr + i * k * size, work.ptr, lwork,
                   info.ptr + 4 * i)  # fmt: skip
        q = nx.swapaxes(_memory.adopt(q_data, a.device)[:, :columns, :], -1, -2)
    rows = k if mode == "r" else columns
    r = nx.triu(nx.swapaxes(_memory.adopt(h, a.device), -1, -2)[:, :rows, :n])
    return q, r


def svd(a, dtype, full_matrices: bool, compute_uv: bool):
    """``(u, s, vh)`` (or ``s``) of the matrices of ``a`` (batch, m, n) as numloom arrays.

    ``gesvd`` wants at least as many rows as columns. A wide or square row-major ``a`` is a
    tall column-major ``a^T = U S V^H``, so ``a = conj(V) S U^T``: the row-major readings of
    cuSOLVER's ``V^H`` and ``U`` are ``a``'s ``u`` and ``vh`` as they lie. A tall ``a`` goes in
    transposed (a copy it needs anyway) and its factors come out transposed views.
    """
    from ..api import numpy_api as nx

    solver = _Solver(a.device, dtype)
    batch, m, n = a.shape
    wide = n >= m
    rows, cols = (n, m) if wide else (m, n)
    stored = fresh(a if wide else nx.swapaxes(a, -1, -2), dtype)
    s = _memory.empty((batch, cols), solver.real, a.device)
    u_cols = rows if full_matrices else cols
    job = ord("N") if not compute_uv else ord("A") if full_matrices else ord("S")
    size = solver.dtype.itemsize
    u = vt = None
    if compute_uv:
        u = _memory.empty((batch, u_cols, rows), dtype, a.device)
        vt = _memory.empty((batch, cols, cols), dtype, a.device)
    info = _memory.empty((batch,), np.int32, a.device)
    work, lwork = solver.workspace("gesvd", rows, cols)
    for i in range(batch):
        solver("gesvd", job, job, rows, cols, stored.ptr + i * rows * cols * size, rows,
               s.ptr + i * cols * solver.real.itemsize,
               u.ptr + i * u_cols * rows * size if compute_uv else 0, rows,
               vt.ptr + i * cols * cols * size if compute_uv else 0, cols,
               work.ptr, lwork, 0, info.ptr + 4 * i)  # fmt: skip
    _check_info(info, "gesvd", "SVD did not converge")
    s = _memory.adopt(s, a.device)
    if not compute_uv:
        return s
    p, q = _memory.adopt(u, a.device), _memory.adopt(vt, a.device)
    if wide:
        return q, s, p
    return nx.swapaxes(p, -1, -2), s, nx.swapaxes(q, -1, -2)


def eigh(a, dtype, lower: bool, vectors: bool):
    """``(w, v)`` (or ``w``) of the Hermitian matrices of ``a`` (batch, n, n) as numloom
    arrays, from the triangle NumPy's ``UPLO`` names: ``syevd``/``heevd`` of ``a^T``
    (``conj(a)``), whose eigenvectors, read row-major, are ``a``'s conjugated and
    transposed."""
    from ..api import numpy_api as nx

    solver = _Solver(a.device, dtype)
    batch, n = a.shape[0], a.shape[-1]
    stored = fresh(a, dtype)
    w = _memory.empty((batch, n), solver.real, a.device)
    info = _memory.empty((batch,), np.int32, a.device)
    job = VECTORS if vectors else NO_VECTORS
    fill = UPPER if lower else LOWER
    work, lwork = solver.workspace("syevd", job, fill, n, stored.ptr, n, w.ptr)
    size = solver.dtype.itemsize
    for i in range(batch):
        solver("syevd", job, fill, n, stored.ptr + i * n * n * size, n,
               w.ptr + i * n * solver.real.itemsize, work.ptr, lwork,
               info.ptr + 4 * i)  # fmt: skip
    _check_info(info, "syevd", "Eigenvalues did not converge")
    w = _memory.adopt(w, a.device)
    if not vectors:
        return w
    v = _memory.adopt(stored, a.device)
    if solver.complex:
        v = nx.conj(v)
    return w, nx.swapaxes(v, -1, -2)
