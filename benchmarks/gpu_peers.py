"""GPU peers for ``python -m numloom bench`` on a CUDA device: CuPy, jax.jit and torch.compile.

Each peer runs the workload the way its users would:

- CuPy runs the unchanged NumPy code with ``xp = cupy`` (eager, one kernel per operation).
- JAX jit-compiles the same code with ``xp = jax.numpy``, float32 matrix products at full
  precision. Jacobi needs a functional rewrite, since JAX arrays cannot be written through views.
- torch.compile compiles the same code with ``xp = torch`` where torch spells things as NumPy
  does, and a torch version otherwise: ``max`` returns (values, indices), there is no
  ``astype``, ``dot`` takes only vectors, ``maximum`` takes no Python scalar.

Inputs are moved to the device before timing; a timed call ends when the device is idle.
A peer has ``name``, ``setup(case, inputs) -> call or None`` and ``to_numpy(x)``.
A library that is missing or sees no GPU is listed in ``UNAVAILABLE`` and left out.
"""

import importlib
import os

import numpy as np

# JAX takes 75% of the GPU's memory at its first array unless told not to: the peers share the
# device with numloom and each other (and, under pytest, with other test processes)
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

UNAVAILABLE = []


def _try_import(name):
    try:
        return importlib.import_module(name)
    except Exception as error:  # a broken CUDA install raises more than ImportError
        UNAVAILABLE.append(f"{name} ({type(error).__name__}: {error})")
        return None


# --- CuPy ---------------------------------------------------------------------------------


class CupyPeer:
    name = "cupy"

    def __init__(self, cp):
        self.cp = cp

    def setup(self, case, inputs):
        cp = self.cp
        args = tuple(cp.asarray(a) for a in inputs)

        def call():
            out = case.run(cp, *args)
            cp.cuda.get_current_stream().synchronize()
            return out

        return call

    def to_numpy(self, x):
        return self.cp.asnumpy(x)


# --- JAX ----------------------------------------------------------------------------------


def jacobi_functional(jax, grid, iterations):
    """workloads.jacobi without writes through views: the whole interior is replaced."""

    def sweep(_, g):
        interior = 0.2 * (g[1:-1, 1:-1] + g[0:-2, 1:-1] + g[1:-1, 2:] + g[1:-1, 0:-2] + g[2:, 1:-1])
        return g.at[1:-1, 1:-1].set(interior)

    return jax.lax.fori_loop(0, iterations, sweep, grid)


class JaxPeer:
    name = "jax.jit"

    def __init__(self, jax):
        self.jax = jax
        # JAX multiplies float32 matrices in TF32 on GPUs by default, which NumPy, CuPy and
        # torch do not: results would differ in the third digit and the timing would not compare.
        jax.config.update("jax_default_matmul_precision", "highest")

    def setup(self, case, inputs):
        jax = self.jax
        if case.name == "jacobi":
            body = lambda grid: jacobi_functional(jax, grid, case.params["iterations"])
        else:
            body = lambda *args: case.run(jax.numpy, *args)
        compiled = jax.jit(body)
        args = tuple(jax.device_put(a) for a in inputs)

        def call():
            return jax.block_until_ready(compiled(*args))

        return call

    def to_numpy(self, x):
        return np.array(x, copy=True)


# --- torch.compile ------------------------------------------------------------------------


def softmax_torch(torch, x):
    e = torch.exp(x - x.amax(dim=1, keepdim=True))
    return e / e.sum(dim=1, keepdim=True)


def kmeans_torch(torch, pts, centers, iterations):
    ids = torch.arange(centers.shape[0], device=pts.device)
    for _ in range(iterations):
        d = ((pts[:, None, :] - centers[None, :, :]) ** 2).sum(dim=2)
        labels = d.argmin(dim=1)
        onehot = (labels[:, None] == ids[None, :]).to(pts.dtype)
        counts = onehot.sum(dim=0)
        centers = (onehot.T @ pts) / torch.clamp(counts, min=1)[:, None]
    return centers, labels


def dense_torch(torch, W, a, b):
    x = W.T @ torch.clamp(a, min=0) + b
    return 1.0 / (1.0 + torch.exp(-x))


def mandelbrot_torch(torch, cr, ci, iterations):
    zr = torch.zeros_like(cr)
    zi = torch.zeros_like(ci)
    count = torch.zeros(cr.shape, dtype=torch.int32, device=cr.device)
    for _ in range(iterations):
        inside = (zr * zr + zi * zi) <= 4.0
        zr, zi = (
            torch.where(inside, zr * zr - zi * zi + cr, zr),
            torch.where(inside, 2 * zr * zi + ci, zi),
        )
        count = count + inside.to(torch.int32)
    return count


# workloads whose NumPy spelling torch does not accept; the rest run unchanged with xp=torch
TORCH_VERSIONS = {
    "softmax": softmax_torch,
    "kmeans": kmeans_torch,
    "dense": dense_torch,
    "mandelbrot": mandelbrot_torch,
}


class TorchPeer:
    name = "torch.compile"

    def __init__(self, torch):
        self.torch = torch

    def setup(self, case, inputs):
        torch = self.torch
        version = TORCH_VERSIONS.get(case.name)
        if version is not None:
            body = lambda *args: version(torch, *args, **case.params)
        else:
            body = lambda *args: case.run(torch, *args)
        compiled = torch.compile(body)
        args = tuple(torch.from_numpy(np.array(a, copy=True)).cuda() for a in inputs)

        def call():
            out = compiled(*args)
            torch.cuda.synchronize()
            return out

        return call

    def to_numpy(self, x):
        return x.detach().cpu().numpy()


# --- which of them can run here -----------------------------------------------------------


def _cupy_peer():
    cp = _try_import("cupy")
    if cp is not None and cp.cuda.runtime.getDeviceCount() > 0:
        return CupyPeer(cp)
    return None


def _jax_peer():
    jax = _try_import("jax")
    if jax is None:
        return None
    if jax.default_backend() != "gpu":
        UNAVAILABLE.append(f"jax (backend is {jax.default_backend()}; install jax[cuda12])")
        return None
    return JaxPeer(jax)


def _torch_peer():
    torch = _try_import("torch")
    if torch is None:
        return None
    if not torch.cuda.is_available():
        UNAVAILABLE.append("torch (torch.cuda.is_available() is False)")
        return None
    return TorchPeer(torch)


def available_peers() -> list:
    peers = []
    for make in (_cupy_peer, _jax_peer, _torch_peer):
        try:
            peer = make()
        except Exception as error:  # a driver or runtime mismatch: leave that peer out
            UNAVAILABLE.append(f"{make.__name__[1:-5]} ({type(error).__name__}: {error})")
            continue
        if peer is not None:
            peers.append(peer)
    return peers
