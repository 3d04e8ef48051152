"""The objects kernels use (``cuda.threadIdx``, ``cuda.syncthreads``, ``cuda.atomic.add``...).

They mean something only inside a kernel, where the translator recognizes them; called from
Python they say so.
"""

from __future__ import annotations


class Intrinsic:
    """A name of numba.cuda's kernel API: meaningful inside ``cuda.jit`` functions only."""

    def __init__(self, name: str):
        self.name = name
        self.__name__ = name

    def __repr__(self) -> str:
        return f"<numloom.cuda.{self.name}>"

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"numloom.cuda.{self.name} runs inside kernels only (functions "
                           f"decorated with @cuda.jit), not in Python code")  # fmt: skip


class Dim3(Intrinsic):
    """threadIdx, blockIdx, blockDim, gridDim: ``.x``, ``.y``, ``.z`` inside kernels."""

    def __getattr__(self, axis):
        if axis in ("x", "y", "z"):
            raise RuntimeError(f"numloom.cuda.{self.name}.{axis} has a value inside kernels "
                               f"only")  # fmt: skip
        raise AttributeError(axis)


class Namespace:
    """``cuda.shared``, ``cuda.local``, ``cuda.atomic``: groups of intrinsics."""

    def __init__(self, name: str, members: tuple):
        self.__name__ = name
        for m in members:
            setattr(self, m, Intrinsic(f"{name}.{m}"))

    def __repr__(self) -> str:
        return f"<numloom.cuda.{self.__name__}>"


threadIdx = Dim3("threadIdx")
blockIdx = Dim3("blockIdx")
blockDim = Dim3("blockDim")
gridDim = Dim3("gridDim")
laneid = Intrinsic("laneid")
grid = Intrinsic("grid")
gridsize = Intrinsic("gridsize")
syncthreads = Intrinsic("syncthreads")
syncwarp = Intrinsic("syncwarp")
threadfence = Intrinsic("threadfence")
threadfence_block = Intrinsic("threadfence_block")
shfl_sync = Intrinsic("shfl_sync")
shfl_up_sync = Intrinsic("shfl_up_sync")
shfl_down_sync = Intrinsic("shfl_down_sync")
shfl_xor_sync = Intrinsic("shfl_xor_sync")
shared = Namespace("shared", ("array",))
local = Namespace("local", ("array",))
atomic = Namespace("atomic", ("add", "sub", "max", "min", "exch", "cas", "and_", "or_", "xor",
                              "compare_and_swap", "inc", "dec", "nanmax", "nanmin"))  # fmt: skip
cg = Namespace("cg", ("this_grid",))  # (known, to say that grid-wide sync is unsupported)
warpsize = 32
WARPSIZE = 32
