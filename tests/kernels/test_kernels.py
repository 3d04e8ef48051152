"""Kernels written in Python (``numloom.cuda``) against NumPy: the Numba tutorial's programs run
unchanged but for the import, CudaPy's examples, and the kernel API one feature at a time.
Everything runs on the default device (the CPU here; the GPU under NUMLOOM_DEVICE=cuda)."""

from __future__ import annotations

import cmath
import math
import pathlib
import runpy

import numpy
import pytest

import numloom as nl
from numloom import cuda
from numloom.compile import compiler
from numloom.kernels import ktypes

RNG = numpy.random.default_rng(5)
TUTORIAL = pathlib.Path(__file__).parent / "programs" / "numba_tutorial.py"


def host(a):
    return a.get() if isinstance(a, nl.ndarray) else numpy.asarray(a)


# --- the Numba tutorial, run as written -----------------------------------------------------------


@pytest.fixture(scope="module")
def tutorial():
    return runpy.run_path(str(TUTORIAL))


def test_tutorial_hypot(tutorial):
    assert tutorial["hypot"](3.0, 4.0) == 5.0
    assert tutorial["hypot_jit"](3.0, 4.0) == 5.0
    assert tutorial["hypot_jit"].py_func(-5.0, 12.0) == 13.0


def test_tutorial_add_ufunc_on_scalars(tutorial):
    vf = nl.vectorize(["int64(int64, int64)"], target="cuda")(lambda x, y: x + y)
    assert int(vf(12, 17)) == 29 and int(vf(11, 1)) == 12


def test_tutorial_gaussian_pdf(tutorial):
    x = host(tutorial["x"])  # the last x: arange(n) as float32
    pdf = host(tutorial["gaussian_pdf"](x, numpy.float32(0.5), numpy.float32(2.0)))
    want = numpy.exp(-0.5 * ((x - 0.5) / 2.0) ** 2) / (2.0 * numpy.float32((2 * math.pi) ** 0.5))
    assert pdf.dtype == numpy.float32
    numpy.testing.assert_allclose(pdf, want, rtol=1e-6, atol=1e-30)


def test_tutorial_polar_distance(tutorial):
    r1, t1, r2, t2 = (host(tutorial[k]).astype(numpy.float64)
                      for k in ("rho1", "theta1", "rho2", "theta2"))  # fmt: skip
    want = numpy.hypot(
        r1 * numpy.cos(t1) - r2 * numpy.cos(t2), r1 * numpy.sin(t1) - r2 * numpy.sin(t2)
    )
    got = host(tutorial["distance"])
    assert got.dtype == numpy.float32
    numpy.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_tutorial_add_kernels(tutorial):
    x, y = tutorial["x"], tutorial["y"]
    numpy.testing.assert_array_equal(tutorial["out_threads"], x + y)
    numpy.testing.assert_array_equal(tutorial["out_grid"], x + y)
    numpy.testing.assert_array_equal(tutorial["out_host"], x + y)


def test_tutorial_thread_counters(tutorial):
    assert tutorial["safe_count"].tolist() == [64 * 64]
    assert 1 <= tutorial["race_count"][0] <= 64 * 64  # racy by design: some increments win


def test_tutorial_transposes(tutorial):
    a = numpy.arange(1024 * 1024, dtype=numpy.int32).reshape(1024, 1024)
    numpy.testing.assert_array_equal(tutorial["naive_out"], a.T)
    numpy.testing.assert_array_equal(tutorial["tiled_out"], a.T)


# --- CudaPy's examples -----------------------------------------------------------------------------


@cuda.jit
def saxpy(alpha, X, Y):
    idx = cuda.grid(1)
    if idx < len(X):
        Y[idx] = alpha * X[idx] + Y[idx]


@cuda.jit(device=True)
def add(a, b):
    return a + b


@cuda.jit
def saxpy_with_helper(alpha, X, Y):
    idx = cuda.grid(1)
    if idx < len(X):
        Y[idx] = add(alpha * X[idx], Y[idx])


def test_cudapy_saxpy_with_a_thread_count():
    X = RNG.random(10_000, numpy.float32)
    Y = nl.asarray(RNG.random(10_000, numpy.float32))
    want = numpy.float32(2.5) * X + Y.get()
    saxpy.forall(len(X))(2.5, X, Y)  # X copied in; Y stays on the device
    numpy.testing.assert_allclose(Y.get(), want, rtol=1e-6)


def test_cudapy_kernel_calling_a_helper():
    X, Y = RNG.random(1000), RNG.random(1000)
    want = 3.0 * X + Y
    saxpy_with_helper.forall(1000)(3.0, X, Y)  # a NumPy Y is written back, as Numba does
    numpy.testing.assert_allclose(Y, want, rtol=1e-15)


@cuda.jit(device=True)
def mandel(x, y, max_iters):
    c = complex(x, y)
    z = 0j
    for i in range(max_iters):
        z = z * z + c
        if (z.real * z.real + z.imag * z.imag) >= 4:
            return i
    return max_iters


@cuda.jit
def mandel_kernel(min_x, max_x, min_y, max_y, image, iters):
    height, width = image.shape
    pixel_size_x = (max_x - min_x) / width
    pixel_size_y = (max_y - min_y) / height
    x, y = cuda.grid(2)
    if x < width and y < height:
        image[y, x] = mandel(min_x + x * pixel_size_x, min_y + y * pixel_size_y, iters)


def _mandel_numpy(min_x, max_x, min_y, max_y, shape, iters):
    height, width = shape
    xs = min_x + numpy.arange(width) * ((max_x - min_x) / width)
    ys = min_y + numpy.arange(height) * ((max_y - min_y) / height)
    c = xs[None, :] + 1j * ys[:, None]
    z, out = numpy.zeros_like(c), numpy.full(shape, iters, numpy.uint8)
    alive = numpy.ones(shape, bool)
    for i in range(iters):
        z[alive] = z[alive] * z[alive] + c[alive]
        escaped = alive & (z.real * z.real + z.imag * z.imag >= 4)
        out[escaped] = i
        alive &= ~escaped
    return out


def test_cudapy_mandelbrot_kernel():
    image = nl.zeros((96, 128), numpy.uint8)
    mandel_kernel[(8, 6), (16, 16)](-2.0, 1.0, -1.0, 1.0, image, 20)
    want = _mandel_numpy(-2.0, 1.0, -1.0, 1.0, (96, 128), 20)
    mismatched = (image.get() != want).mean()
    assert mismatched <= (0 if image.device == "cpu" else 1e-3)  # a GPU contracts to FMA


# --- lazy launches in the DAG ---------------------------------------------------------------------


@cuda.jit
def scale_into(x, out, factor):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] * factor


def test_launch_is_ordered_against_array_work():
    """On the CPU a launch is recorded and runs at the next sync; on a GPU it starts at once
    (with the pending work it reads), as Numba's launches do. Either way it runs after the
    work that makes its input and before the work that reads its output."""
    a = nl.arange(1000.0)
    pending = a * 2 + 1  # not computed yet: the kernel's input
    out = nl.zeros(1000)
    before = nl.stats()["kernels_launched"]
    scale_into.forall(1000)(pending, out, 3.0)
    started = nl.stats()["kernels_launched"] - before
    assert started == 0 if nl.get_device() == "cpu" else started >= 2
    after = out + 1  # reads the kernel's output
    numpy.testing.assert_array_equal(after.get(), (numpy.arange(1000.0) * 2 + 1) * 3 + 1)


@cuda.jit
def increment(x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        x[i] += 1


def test_writes_keep_copies_and_earlier_reads_intact():
    x = nl.asarray(numpy.arange(10))
    copy = x.copy()  # shares x's buffer until one of them changes
    earlier = x * 10  # pending work reading x's old version
    increment.forall(10)(x)
    later = x * 10
    numpy.testing.assert_array_equal(copy.get(), numpy.arange(10))
    numpy.testing.assert_array_equal(earlier.get(), numpy.arange(10) * 10)
    numpy.testing.assert_array_equal(later.get(), (numpy.arange(10) + 1) * 10)
    numpy.testing.assert_array_equal(x.get(), numpy.arange(10) + 1)


def test_a_loop_of_launches_reuses_its_plan_and_compiles_once():
    x = nl.zeros(256, numpy.int64)
    for _ in range(2):  # from zeros, then from the first result: two plans
        increment.forall(256)(x)
        x.get()
    before = nl.stats()
    for _ in range(5):
        increment.forall(256)(x)
        x.get()
    after = nl.stats()
    assert after["kernels_compiled"] == before["kernels_compiled"]
    assert after["plan_cache_hits"] - before["plan_cache_hits"] >= 5
    numpy.testing.assert_array_equal(x.get(), numpy.full(256, 7))


@cuda.jit
def fill_view(v, value):
    i, j = cuda.grid(2)
    if i < v.shape[0] and j < v.shape[1]:
        v[i, j] = value + i * 100 + j


def test_kernels_write_through_strided_views():
    a = nl.zeros((6, 8), numpy.int32)
    view = a[::2, 1:]  # a strided view: the kernel writes into a's storage
    fill_view[(1, 1), (4, 8)](view, 7)
    want = numpy.zeros((6, 8), numpy.int32)
    i, j = numpy.meshgrid(numpy.arange(3), numpy.arange(7), indexing="ij")
    want[::2, 1:] = 7 + i * 100 + j
    numpy.testing.assert_array_equal(a.get(), want)


@cuda.jit
def shift_left(src, dst):
    i = cuda.grid(1)
    if i < dst.shape[0]:
        dst[i] = src[i + 1]


def test_one_array_as_two_arguments():
    a = nl.asarray(numpy.arange(8.0))
    shift_left[1, 8](a[:], a[:7])  # both view one storage, as on a GPU
    assert a.get()[7] == 7.0
    assert set(a.get()[:7]) <= set(numpy.arange(8.0))


# --- shared memory, barriers, atomics, shuffles ---------------------------------------------------

NBINS = 16


@cuda.jit
def histogram(data, bins):
    local_bins = cuda.shared.array(NBINS, numpy.int32)
    t = cuda.threadIdx.x
    for b in range(t, NBINS, cuda.blockDim.x):
        local_bins[b] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), data.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(local_bins, data[i], 1)
    cuda.syncthreads()
    for b in range(t, NBINS, cuda.blockDim.x):
        cuda.atomic.add(bins, b, local_bins[b])


def test_histogram_with_shared_memory_atomics():
    data = RNG.integers(0, NBINS, 50_000).astype(numpy.int32)
    bins = nl.zeros(NBINS, numpy.int32)
    histogram[8, 64](nl.asarray(data), bins)
    numpy.testing.assert_array_equal(bins.get(), numpy.bincount(data, minlength=NBINS))


@cuda.jit
def block_sums(x, out):
    sm = cuda.shared.array(128, numpy.int64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sm[t] = x[i] if i < x.shape[0] else 0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            sm[t] += sm[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sm[0]


def test_tree_reduction_with_barriers_in_a_loop():
    x = RNG.integers(-1000, 1000, 1000)
    out = nl.zeros(8, numpy.int64)
    block_sums[8, 128](x, out)
    padded = numpy.zeros(1024, numpy.int64)
    padded[:1000] = x
    numpy.testing.assert_array_equal(out.get(), padded.reshape(8, 128).sum(axis=1))


@cuda.jit
def reverse_blocks(x, out):
    sm = cuda.shared.array(0, numpy.float32)  # dynamic: sized by the launch
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i >= x.shape[0]:
        return
    sm[t] = x[i]
    cuda.syncthreads()
    out[i] = sm[cuda.blockDim.x - 1 - t]


def test_dynamic_shared_memory_and_early_return():
    x = numpy.arange(256, dtype=numpy.float32)
    out = nl.zeros(256, numpy.float32)
    reverse_blocks[4, 64, 0, 64 * 4](x, out)
    numpy.testing.assert_array_equal(out.get(), x.reshape(4, 64)[:, ::-1].reshape(-1))


@cuda.jit
def warp_sums(x, out):
    i = cuda.grid(1)
    v = x[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    cuda.syncwarp()
    if cuda.laneid == 0:
        out[i // cuda.warpsize] = v
    w = cuda.shfl_xor_sync(0xFFFFFFFF, x[i], 1)
    x[i] = w


def test_warp_shuffles():
    x = RNG.integers(0, 100, 128).astype(numpy.int32)
    dx = nl.asarray(x)
    out = nl.zeros(4, numpy.int32)
    warp_sums[2, 64](dx, out)
    numpy.testing.assert_array_equal(out.get(), x.reshape(4, 32).sum(axis=1))
    numpy.testing.assert_array_equal(dx.get(), x.reshape(-1, 2)[:, ::-1].reshape(-1))


@cuda.jit
def atomics(ints, floats, old):
    i = cuda.grid(1)
    if i < 64:
        cuda.atomic.max(ints, 0, i)
        cuda.atomic.min(ints, 1, -i)
        cuda.atomic.sub(ints, 2, 2)
        cuda.atomic.or_(ints, 3, 1 << (i % 30))
        cuda.atomic.xor(ints, 4, 1)
        cuda.atomic.and_(ints, 5, ~(1 << (i % 30)))
        cuda.atomic.max(floats, 0, i * 0.5)
        cuda.atomic.add(floats, 1, 0.25)
        if i == 3:
            old[0] = cuda.atomic.exch(ints, 6, 42)
            old[1] = cuda.atomic.cas(ints, 7, 5, 9)
            old[2] = cuda.atomic.cas(ints, 8, 1, 9)


def test_atomic_operations():
    ints = nl.asarray(numpy.array([0, 0, 1000, 0, 0, -1, 7, 5, 0], numpy.int32))
    floats = nl.zeros(2, numpy.float64)
    old = nl.zeros(3, numpy.int32)
    atomics[2, 32](ints, floats, old)
    assert ints.get().tolist() == [63, -63, 1000 - 128, (1 << 30) - 1, 0, -(1 << 30), 42, 9, 0]
    assert floats.get().tolist() == [31.5, 16.0]
    assert old.get().tolist() == [7, 5, 0]


@cuda.jit
def local_scratch(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        tmp = cuda.local.array(4, numpy.float64)
        for k in range(4):
            tmp[k] = x[i] * (k + 1)
        out[i] = tmp[0] + tmp[3] - tmp[1]


def test_local_arrays():
    x = RNG.random(100)
    out = nl.zeros(100)
    local_scratch.forall(100)(x, out)
    numpy.testing.assert_allclose(out.get(), x + 4 * x - 2 * x, rtol=1e-15)


# --- arithmetic as NumPy's --------------------------------------------------------------------


@cuda.jit
def int_ops(a, b, q, r, w):
    i = cuda.grid(1)
    if i < a.shape[0]:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        w[i] = a[i] * 100000 + b[i]


def test_integer_semantics_are_numpys():
    a = RNG.integers(-50, 50, 200).astype(numpy.int32)
    b = RNG.integers(-5, 5, 200).astype(numpy.int32)  # zeros included: x // 0 == 0
    q, r, w = (nl.zeros(200, numpy.int32) for _ in range(3))
    int_ops.forall(200)(a, b, q, r, w)
    with numpy.errstate(all="ignore"):
        numpy.testing.assert_array_equal(q.get(), a // b)
        numpy.testing.assert_array_equal(r.get(), a % b)
        numpy.testing.assert_array_equal(w.get(), a * numpy.int32(100000) + b)  # wraps


@cuda.jit
def complex_ops(z, w, out):
    i = cuda.grid(1)
    if i < z.shape[0]:
        out[i] = z[i] * w[i] / (z[i] + 1) + cmath.exp(z[i]) - cmath.sqrt(w[i]).conjugate()


def test_complex_arithmetic_and_cmath():
    z = RNG.random(50) + 1j * RNG.random(50)
    w = RNG.random(50) - 1j * RNG.random(50)
    out = nl.zeros(50, numpy.complex128)
    complex_ops.forall(50)(z, w, out)
    want = z * w / (z + 1) + numpy.exp(z) - numpy.conj(numpy.sqrt(w))
    numpy.testing.assert_allclose(out.get(), want, rtol=1e-13)


@cuda.jit
def mixed_types(x, flag, scale, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i] * scale  # float32 times a Python float stays float32 (NEP 50)
        out[i] = v if flag else -v


def test_scalar_arguments_and_python_scalar_promotion():
    x = RNG.random(10, numpy.float32)
    out = nl.zeros(10, numpy.float32)
    mixed_types.forall(10)(x, False, 0.1, out)
    numpy.testing.assert_array_equal(out.get(), -(x * 0.1))
    assert mixed_types.specializations  # one per argument types
    (spec,) = mixed_types.specializations.values()
    assert spec.types["v"] == ktypes.Scalar(numpy.dtype(numpy.float32))


@cuda.jit("void(float32[:], float32)")
def declared(x, value):
    i = cuda.grid(1)
    if i < x.shape[0]:
        x[i] = value


def test_signature_strings():
    x = nl.zeros(5, numpy.float32)
    declared[1, 8](x, 2)  # the int converts to the declared float32
    numpy.testing.assert_array_equal(x.get(), numpy.full(5, 2, numpy.float32))


# --- cuda.reduce and inspection ------------------------------------------------------------------


def test_cuda_reduce():
    sum_reduce = cuda.reduce(lambda a, b: a + b)
    x = RNG.integers(0, 100, 100_000)
    assert sum_reduce(x) == x.sum()
    assert sum_reduce(x, init=5) == x.sum() + 5

    @cuda.reduce
    def max_reduce(a, b):
        return max(a, b)

    y = RNG.standard_normal(1000).astype(numpy.float32)
    assert max_reduce(nl.asarray(y), init=-100.0) == y.max()
    assert sum_reduce(numpy.zeros(0), init=3) == 3


def test_inspect_source_and_types(capsys):
    Y = nl.zeros(4)
    saxpy.forall(4)(2.5, numpy.ones(4), Y)  # a specialization to inspect, whatever ran before
    numpy.testing.assert_array_equal(Y.get(), numpy.full(4, 2.5))
    sources = saxpy.inspect_source()
    text = next(iter(sources.values()))
    assert (
        "Y[idx] = alpha * X[idx] + Y[idx]" in text and "#pragma omp" in text or "__global__" in text
    )
    cuda_text = saxpy.inspect_source(next(iter(saxpy.specializations)), device="cuda")
    assert "__global__" in cuda_text and "// " in cuda_text
    saxpy.inspect_types()
    printed = capsys.readouterr().out
    assert "idx: int (Python)" in printed and "alpha" in printed


# --- the GPU (run by the GPU tier; everything above runs there too under NUMLOOM_DEVICE=cuda) ---

needs_gpu = pytest.mark.skipif(not cuda.gpu_available(), reason="no usable CUDA GPU here")


@needs_gpu
def test_a_launch_joins_the_cuda_graph_of_its_plan():
    """On a GPU the launch starts at once, in one CUDA graph with the pending work it reads
    (the input's kernels, then the launch: one graph launch)."""
    with nl.device("cuda"):
        a = nl.arange(1000.0)
        out = nl.zeros(1000)
        nl.sync()  # a and out exist: the plan below is the input's work and the launch
        pending = a * 2 + 1
        before = nl.stats()
        scale_into.forall(1000)(pending, out, 3.0)
        after = nl.stats()
        assert after["graphs_launched"] - before["graphs_launched"] == 1
        assert after["kernels_launched"] - before["kernels_launched"] == 2
        plan = nl.explain(out + 0, target="cuda")  # nothing pending: out is computed
        assert "own launch" not in str(plan)
        numpy.testing.assert_array_equal(out.get(), (numpy.arange(1000.0) * 2 + 1) * 3)


@needs_gpu
def test_a_loop_of_array_code_and_a_kernel_launches_one_graph_an_iteration():
    """100 iterations of ``y = y * 0.5 + x`` then a Python kernel on y: each iteration is one
    CUDA graph (the launch with the pending work it reads), replayed, compiling nothing."""
    rng = numpy.random.default_rng(4)
    xh = rng.random(5000).astype(numpy.float32)
    with nl.device("cuda"):
        x, y = nl.asarray(xh), nl.zeros(5000, numpy.float32)
        yh = numpy.zeros(5000, numpy.float32)

        def step(y):
            y = y * numpy.float32(0.5) + x
            saxpy.forall(5000)(numpy.float32(2.0), x, y)
            return y

        y = step(step(y))  # (the first step reads a fill: a plan of its own)
        nl.sync()
        before = nl.stats()
        for _ in range(100):
            y = step(y)
        nl.sync()
        after = nl.stats()
        assert after["graphs_launched"] - before["graphs_launched"] == 100
        assert after["kernels_compiled"] == before["kernels_compiled"]
        for _ in range(102):
            yh = numpy.float32(2.0) * xh + (yh * numpy.float32(0.5) + xh)
        numpy.testing.assert_allclose(y.get(), yh, rtol=1e-5)


def _on(device: str, tiled):
    """The tutorial's histogram, transpose and warp sums, and the Mandelbrot kernel, on one
    device: their results as NumPy arrays."""
    with nl.device(device):  # the same data on both devices
        data = nl.asarray(numpy.random.default_rng(5).integers(0, NBINS, 100_000).astype("int32"))
        bins = nl.zeros(NBINS, numpy.int32)
        histogram[16, 128](data, bins)
        a = nl.asarray(numpy.arange(256 * 256, dtype=numpy.int32).reshape(256, 256))
        t = nl.zeros((256, 256), numpy.int32)
        tiled[(8, 8), (32, 8)](a, t)
        x = nl.asarray(numpy.arange(256, dtype=numpy.int32))
        sums = nl.zeros(8, numpy.int32)
        warp_sums[4, 64](x, sums)
        image = nl.zeros((64, 64), numpy.uint8)
        mandel_kernel[(4, 4), (16, 16)](-2.0, 1.0, -1.0, 1.0, image, 30)
        return [bins.get(), t.get(), sums.get(), x.get(), image.get(), bins.device]


@pytest.mark.gpu
@needs_gpu
def test_cpu_and_gpu_give_the_same_results(tutorial):
    tiled = tutorial["tile_transpose"]
    cpu, gpu = _on("cpu", tiled), _on("cuda", tiled)
    assert cpu[-1] == "cpu" and gpu[-1].startswith("cuda")
    for c, g in zip(cpu[:4], gpu[:4]):
        numpy.testing.assert_array_equal(c, g)
    assert (cpu[4] != gpu[4]).mean() <= 1e-3  # float Mandelbrot: a GPU contracts to FMA


@pytest.mark.gpu
@needs_gpu
def test_device_arrays_stay_on_the_gpu():
    with nl.device("cuda"):
        x = nl.arange(100_000, dtype=numpy.float32)
        out = nl.zeros(100_000, numpy.float32)
    before = nl.stats()
    for _ in range(3):
        scale_into.forall(100_000)(x, out, 2.0)
        out.get()
    moved = nl.stats()["device_to_host_bytes"] - before["device_to_host_bytes"]
    assert moved == 3 * out.nbytes and out.device.startswith("cuda")
    assert nl.stats()["host_to_device_bytes"] == before["host_to_device_bytes"]
    numpy.testing.assert_array_equal(out.get(), numpy.arange(100_000, dtype=numpy.float32) * 2)


# --- barriers inside branches (the shared-memory matmul: test_numba_examples.py) ---------------


@cuda.jit
def staged(x, out):
    scratch = cuda.local.array(2, numpy.int64)
    sm = cuda.shared.array(64, numpy.int64)
    t = cuda.threadIdx.x
    scratch[0] = x[t]
    scratch[1] = x[t] * 10
    if cuda.blockIdx.x == 0:  # the same for every thread of a block
        sm[t] = scratch[0]
        cuda.syncthreads()
        out[t] = sm[63 - t] + scratch[1]
    else:
        sm[t] = scratch[1]
        cuda.syncthreads()
        out[64 + t] = sm[63 - t] + scratch[0]


def test_barriers_in_branches_and_local_arrays_across_them():
    x = numpy.arange(64)
    out = nl.zeros(128, numpy.int64)
    staged[2, 64](x, out)
    numpy.testing.assert_array_equal(
        out.get(), numpy.concatenate([x[::-1] + 10 * x, 10 * x[::-1] + x])
    )


@cuda.jit
def add_scalar(x, k):
    i = cuda.grid(1)
    if i < x.shape[0]:
        x[i] += k


def test_launches_inside_numloom_jit_replay_on_new_inputs():
    @nl.jit
    def step(a):
        b = a * 2
        add_scalar.forall(a.shape[0])(b, 1)
        add_scalar.forall(a.shape[0])(a, 5)
        return b

    for start in range(3):  # traced once, replayed twice
        a = nl.asarray(numpy.arange(4.0) + start)
        kept = a.copy()  # shares a's buffer: the replay must not write it in place
        b = step(a)
        numpy.testing.assert_array_equal(b.get(), (numpy.arange(4.0) + start) * 2 + 1)
        numpy.testing.assert_array_equal(a.get(), numpy.arange(4.0) + start + 5)
        numpy.testing.assert_array_equal(kept.get(), numpy.arange(4.0) + start)
    assert len(step.traces) == 1


@cuda.jit
def leaves_early(x, out):
    sm = cuda.shared.array(32, numpy.int64)
    t = cuda.threadIdx.x
    n = 0
    while n < 4:
        sm[t] = x[t] + n
        cuda.syncthreads()
        if t >= 16 and n == 1:
            out[t] = -1
            return  # leaves the loop and the kernel; the others go on
        n += 1
        if n == 3:  # every thread still running breaks (a GPU needs them all at a barrier)
            break
        cuda.syncthreads()
    out[t] = sm[t] * 10 + n


def test_return_and_break_inside_a_loop_with_barriers():
    out = nl.zeros(32, numpy.int64)
    leaves_early[1, 32](numpy.arange(32), out)
    want = numpy.where(numpy.arange(32) >= 16, -1, (numpy.arange(32) + 2) * 10 + 3)
    numpy.testing.assert_array_equal(out.get(), want)


WEIGHTS = numpy.array([[1, 2, 3], [4, 5, 6]], numpy.int16)


@cuda.jit
def weighted(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] * WEIGHTS[i % 2, i % 3] + WEIGHTS.shape[1]


def test_global_arrays_are_compiled_in():
    x = numpy.arange(12)
    out = nl.zeros(12, numpy.int64)
    weighted.forall(12)(x, out)
    i = numpy.arange(12)
    numpy.testing.assert_array_equal(out.get(), x * WEIGHTS[i % 2, i % 3] + 3)


# --- more of numba.cuda's atomics: wrapping counters, NaN-ignoring max and min -------------------


def assert_compiles_for_cuda(kernel):
    """Every specialization of ``kernel`` compiles as CUDA C++ with NVRTC (no GPU needed)."""
    if not compiler.nvrtc_available():
        return
    sources = [spec.source("cuda")[1] for spec in kernel.specializations.values()]
    assert sources
    for arch, ptx in (("sm_80", True), ("sm_90", False)):
        logs = compiler.check_cuda_sources(sources, arch, ptx=ptx)
        assert logs == [None] * len(sources), "\n".join(log for log in logs if log)


def numba_inc(old, val):
    return 0 if old >= val else old + 1


def numba_dec(old, val):
    return val if old == 0 or old > val else old - 1


def numba_nanmax(old, val):
    return old if val != val or (old >= val) else val


def numba_nanmin(old, val):
    return old if val != val or (old <= val) else val


@cuda.jit
def one_thread_atomics(counts, floats, values, limits, olds):
    if cuda.grid(1) == 0:
        for k in range(values.shape[0]):
            olds[k, 0] = cuda.atomic.inc(counts, 0, limits[k])
            olds[k, 1] = cuda.atomic.dec(counts, 1, limits[k])
            olds[k, 2] = cuda.atomic.nanmax(floats, 0, values[k])
            olds[k, 3] = cuda.atomic.nanmin(floats, 1, values[k])


@pytest.mark.parametrize("udtype", [numpy.uint32, numpy.uint64])
def test_atomic_inc_dec_nanmax_nanmin_return_numbas_old_values(udtype):
    values = numpy.array([numpy.nan, 2.5, -1.0, numpy.nan, 7.0, 3.0, -4.0, numpy.nan, 9.0, 0.0])
    limits = numpy.array([3, 3, 1, 0, 5, 2, 2, 7, 4, 1], udtype)
    start_counts, start_floats = [2, 0], [numpy.nan, numpy.nan]
    counts = nl.asarray(numpy.array(start_counts, udtype))
    floats = nl.asarray(numpy.array(start_floats))
    olds = nl.zeros((10, 4), numpy.float64)
    one_thread_atomics[1, 1](counts, floats, values, limits, olds)
    c, f, want = list(start_counts), list(start_floats), []
    for v, lim in zip(values, limits.tolist()):
        row = [c[0], c[1], f[0], f[1]]
        c = [numba_inc(c[0], lim), numba_dec(c[1], lim)]
        f = [numba_nanmax(f[0], v), numba_nanmin(f[1], v)]
        want.append(row)
    numpy.testing.assert_array_equal(olds.get(), numpy.array(want))
    assert counts.get().tolist() == c and counts.dtype == udtype
    assert floats.get().tolist() == f == [9.0, -4.0]
    assert_compiles_for_cuda(one_thread_atomics)


@cuda.jit
def many_thread_atomics(counts, shared_out, olds, x, extremes):
    counter = cuda.shared.array(2, numpy.uint32)
    best = cuda.shared.array(2, numpy.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if t == 0:
        counter[0] = 0
        counter[1] = 0
        best[0] = numpy.float32(numpy.nan)
        best[1] = numpy.float32(numpy.nan)
    cuda.syncthreads()
    olds[i] = cuda.atomic.inc(counts, 0, 9)
    cuda.atomic.dec(counts, 1, 9)
    cuda.atomic.inc(counter, 0, 1000)
    cuda.atomic.dec(counter, 1, 4)
    cuda.atomic.nanmax(extremes, 0, x[i])
    cuda.atomic.nanmin(extremes, 1, x[i])
    cuda.atomic.nanmax(best, 0, x[i])
    cuda.atomic.nanmin(best, 1, x[i])
    cuda.syncthreads()
    if t == 0:
        b = cuda.blockIdx.x
        shared_out[b, 0] = counter[0]
        shared_out[b, 1] = counter[1]
        shared_out[b, 2] = best[0]
        shared_out[b, 3] = best[1]


def test_atomic_counters_and_nan_extremes_on_global_and_shared_arrays():
    blocks, threads = 4, 64
    n = blocks * threads
    x = RNG.standard_normal(n).astype(numpy.float32)
    x[::7] = numpy.nan
    counts = nl.zeros(2, numpy.uint32)
    extremes = nl.asarray(numpy.array([numpy.nan, numpy.nan], numpy.float32))
    shared_out = nl.zeros((blocks, 4), numpy.float64)
    olds = nl.zeros(n, numpy.uint32)
    many_thread_atomics[blocks, threads](counts, shared_out, olds, x, extremes)
    # Whatever the order, the old values are the counter's sequence: 0..9, 0..9, ...
    assert sorted(olds.get().tolist()) == sorted(k % 10 for k in range(n))
    c = [0, 0]
    for _ in range(n):
        c = [numba_inc(c[0], 9), numba_dec(c[1], 9)]
    assert counts.get().tolist() == c
    assert extremes.get().tolist() == [numpy.nanmax(x), numpy.nanmin(x)]
    blocks_x = x.reshape(blocks, threads)
    dec = 0
    for _ in range(threads):
        dec = numba_dec(dec, 4)
    want = numpy.stack([numpy.full(blocks, threads), numpy.full(blocks, dec),
                        numpy.nanmax(blocks_x, axis=1), numpy.nanmin(blocks_x, axis=1)], axis=1)  # fmt: skip
    numpy.testing.assert_array_equal(shared_out.get(), want)
    assert_compiles_for_cuda(many_thread_atomics)


# --- print() in kernels and device functions, formatted as numba.cuda formats it ------------------


def numba_print(*items) -> str:
    """What numba.cuda's print() writes: integers in full, floats as C's %f, bools as
    True/False, strings as they are, separated by spaces, one line."""
    parts = []
    for v in items:
        if isinstance(v, str):
            parts.append(v)
        elif isinstance(v, (bool, numpy.bool_)):
            parts.append(str(bool(v)))
        elif isinstance(v, (float, numpy.floating)):
            parts.append(f"{float(v):f}")  # C's %f
        else:
            parts.append(str(int(v)))
    return " ".join(parts) + "\n"


@cuda.jit(device=True)
def report(value):
    print("twice", value)
    return value * 2


@cuda.jit
def printing(ints, big, floats, halves, out):
    i = cuda.grid(1)
    if i < ints.shape[0]:
        print("thread", i, "of", cuda.blockDim.x, ints[i], big[i], floats[i], halves[i])
        print(ints[i] > 0, 'quote " percent %d backslash \\ trigraph ??=', 1.5, -(2**63))
        out[i] = report(floats[i])
    print()


def test_print_in_kernels_and_device_functions(capfd):
    ints = numpy.array([-3, 0, 7, 2**40], numpy.int64)
    big = numpy.array([2**64 - 1, 0, 1, 2**63], numpy.uint64)
    floats = numpy.array([0.1, -2.5, 1e10, numpy.nan], numpy.float64)
    halves = numpy.array([1 / 3, -0.0, 65504, numpy.inf], numpy.float32)
    out = nl.zeros(4, numpy.float64)
    capfd.readouterr()
    printing[1, 4](ints, big, floats, halves, out)
    cuda.synchronize()
    lines = []
    for i in range(4):  # one block of threads without barriers: each prints its lines in turn
        lines.append(numba_print("thread", i, "of", 4, ints[i], big[i], floats[i], halves[i]))
        lines.append(
            numba_print(ints[i] > 0, 'quote " percent %d backslash \\ trigraph ??=', 1.5, -(2**63))
        )
        lines.append(numba_print("twice", floats[i]))
        lines.append(numba_print())
    got = capfd.readouterr().out
    assert sorted(got.splitlines()) == sorted("".join(lines).splitlines())
    if out.device == "cpu":
        assert got == "".join(lines)
    numpy.testing.assert_array_equal(out.get(), floats * 2)
    assert_compiles_for_cuda(printing)


@cuda.jit
def only_prints(n):
    t = cuda.threadIdx.x
    if t < n:
        print(cuda.threadIdx, cuda.blockIdx.x)


def test_a_kernel_that_only_prints_runs_at_the_next_sync(capfd):
    capfd.readouterr()
    only_prints[3, 2](1)
    nl.sync()
    lines = sorted(capfd.readouterr().out.splitlines())  # blocks print in any order
    assert lines == [f"(0, 0, 0) {b}" for b in range(3)]
    assert_compiles_for_cuda(only_prints)


# --- barriers and shuffles inside device functions (compiled into the calling kernel) -----------


@cuda.jit(device=True)
def block_sum(sm, value):
    t = cuda.threadIdx.x
    sm[t] = value
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            sm[t] += sm[t + s]
        cuda.syncthreads()
        s //= 2
    total = sm[0]
    cuda.syncthreads()  # everyone has read sm[0] before the next call writes sm
    return total


@cuda.jit
def two_block_sums(x, out):
    sm = cuda.shared.array(64, numpy.float64)
    i = cuda.grid(1)
    a = block_sum(sm, x[i])
    b = block_sum(sm, x[i] * 2)
    out[i] = a + b


def test_a_device_function_with_barriers_called_twice():
    x = RNG.integers(-100, 100, 256).astype(numpy.float64)
    out = nl.zeros(256)
    two_block_sums[4, 64](x, out)
    want = numpy.repeat(x.reshape(4, 64).sum(axis=1) * 3, 64)
    numpy.testing.assert_array_equal(out.get(), want)
    assert_compiles_for_cuda(two_block_sums)


@cuda.jit(device=True)
def warp_total(v):
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    cuda.syncwarp()
    return cuda.shfl_sync(0xFFFFFFFF, v, 0)


@cuda.jit(device=True)
def stage_and_reverse(x, base):
    tile = cuda.shared.array(32, numpy.int32)  # the function's own shared array
    t = cuda.threadIdx.x
    tile[t] = x[base + t]
    cuda.syncthreads()
    mirrored = tile[31 - t]
    total = warp_total(mirrored)  # a synchronizing function calling another
    cuda.syncthreads()
    return mirrored, total


@cuda.jit
def rounds_of_reversal(x, mirrored, totals, rounds):
    t = cuda.threadIdx.x
    for r in range(rounds):  # the calls inside a loop and a branch of the kernel
        if r % 2 == 0:
            m, s = stage_and_reverse(x, 32 * r)
            mirrored[r, t] = m
            totals[r, t] = s
        else:
            mirrored[r, t] = -1


def test_shuffles_shared_arrays_and_tuples_in_synchronizing_device_functions():
    x = numpy.arange(4 * 32, dtype=numpy.int32) ** 2 % 97
    mirrored = nl.zeros((4, 32), numpy.int32)
    totals = nl.zeros((4, 32), numpy.int32)
    rounds_of_reversal[1, 32](x, mirrored, totals, 4)
    rows = x.reshape(4, 32)
    want_m = rows[:, ::-1].copy()
    want_m[1::2] = -1
    want_t = numpy.repeat(rows.sum(axis=1, keepdims=True), 32, axis=1).astype(numpy.int32)
    want_t[1::2] = 0
    numpy.testing.assert_array_equal(mirrored.get(), want_m)
    numpy.testing.assert_array_equal(totals.get(), want_t)
    assert_compiles_for_cuda(rounds_of_reversal)


# --- what numba-cuda's documented examples need (test_numba_examples.py runs them) -------------


def test_numba_cuda_exports_the_type_names():
    """``from numba.cuda import float32`` (fast_matmul's import): numba.cuda's type names."""
    from numloom.cuda import float32, int32, types, void

    assert float32 is nl.types.float32 and int32 is nl.types.int32 and types is nl.types
    assert str(void(float32[:], int32)) == "void(float32[:], int32)"


@cuda.jit
def ufuncs_on_arrays(x, y, r, q, m):
    numpy.add(x, y, out=r)  # y broadcast over x's rows, float32 + float64 into float64
    numpy.sqrt(x[1], r[2])  # views; the float32 loop, stored as float64
    numpy.divmod(x, 3, q, m)  # two outputs


def test_ufuncs_on_arrays_write_their_outputs():
    """A ufunc called on arrays in a kernel (numba-cuda's ``np.sin(x, r)``): the thread loops
    over the output, inputs broadcast as in NumPy, NumPy's loop and casts."""
    x = numpy.arange(12, dtype=numpy.float32).reshape(3, 4) - 5
    y = numpy.linspace(0.5, 2.0, 4)
    r, q, m = nl.zeros((3, 4)), nl.zeros((3, 4), numpy.int32), nl.zeros((3, 4), numpy.float32)
    ufuncs_on_arrays[1, 1](x, y, r, q, m)
    want = numpy.add(x, y)
    with numpy.errstate(invalid="ignore"):
        want[2] = numpy.sqrt(x[1])  # (NaN where x < 0, as NumPy)
    numpy.testing.assert_array_equal(r.get(), want)
    wq, wm = numpy.divmod(x, 3)
    numpy.testing.assert_array_equal(q.get(), wq.astype(numpy.int32))
    numpy.testing.assert_array_equal(m.get(), wm)
    assert_compiles_for_cuda(ufuncs_on_arrays)


def test_a_ufunc_on_arrays_needs_its_output():
    @cuda.jit
    def no_out(x):
        numpy.sin(x)

    with pytest.raises(Exception, match=r"pass the output array: np.sin\(x, out\)"):
        no_out[1, 1](numpy.zeros(3))


@cuda.jit
def bool_operators(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        big = a[i] > 5
        odd = a[i] % 2 == 1
        either = big or odd  # of bools: a bool, as in Numba
        both = big and odd and a[i] != 7
        out[i, 0] = either
        out[i, 1] = both


def test_and_or_of_bools_are_values():
    a = numpy.arange(10)
    out = nl.zeros((10, 2), numpy.bool_)
    bool_operators.forall(10)(a, out)
    want = numpy.stack([(a > 5) | (a % 2 == 1), (a > 5) & (a % 2 == 1) & (a != 7)], axis=1)
    numpy.testing.assert_array_equal(out.get(), want)

    @cuda.jit
    def int_or(a, out):
        out[0] = a[0] or a[1]  # Python's operand, not a bool: refused

    with pytest.raises(Exception, match="'or' as a value"):
        int_or[1, 1](numpy.arange(2), numpy.zeros(1, numpy.int64))


@nl.jit
def jit_helper(x, k):
    return x * k + 1


def test_a_numloom_jit_function_is_callable_in_kernels():
    """``@numba.jit`` functions may be reused in kernels (numba's CPU/GPU compatibility)."""

    @cuda.jit
    def use(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = jit_helper(a[i], 3.0)

    a = numpy.arange(5.0)
    out = nl.zeros(5)
    use.forall(5)(a, out)
    numpy.testing.assert_array_equal(out.get(), a * 3 + 1)
    assert jit_helper(2.0, 3.0) == 7.0


@cuda.jit(device=True)
def set_row(m, i, value):
    row = m[i]
    for j in range(row.shape[0]):
        row[j] = value


@cuda.jit
def writes_through_names(m, c, a, b, steps):
    i = cuda.grid(1)
    if i < m.shape[0]:
        row = m[i]  # a view named: writes to it are writes to m
        row[0] = i
    if i == 0:
        set_row(c, 1, 5.0)  # (a device function writing through its own view)
    for step in range(steps):
        if step % 2 == 0:  # one name for either argument (numba-cuda's heat equation)
            src = a
            dst = b
        else:
            src = b
            dst = a
        if i < src.shape[0]:
            dst[i] = src[i] + 1


@pytest.mark.parametrize("make", [nl.asarray, numpy.array])
def test_writes_through_a_named_view_reach_the_argument(make):
    """A kernel that writes an argument only through a local name (a view, or a name bound to
    one argument or another) still has that argument as an output."""
    m, c = make(numpy.zeros((3, 4))), make(numpy.zeros((2, 3)))
    a, b = make(numpy.arange(4.0)), make(numpy.zeros(4))
    writes_through_names[1, 4](m, c, a, b, 3)
    want = numpy.zeros((3, 4))
    want[:, 0] = [0, 1, 2]
    numpy.testing.assert_array_equal(host(m), want)
    numpy.testing.assert_array_equal(host(c), [[0, 0, 0], [5, 5, 5]])
    numpy.testing.assert_array_equal(host(a), numpy.arange(4.0) + 2)
    numpy.testing.assert_array_equal(host(b), numpy.arange(4.0) + 3)


def test_grid_sync_is_refused_with_a_way_out():
    from numloom.kernels.kerrors import UnsupportedError

    @cuda.jit
    def grid_wide(x):
        g = cuda.cg.this_grid()
        x[cuda.grid(1)] = 1
        g.sync()

    with pytest.raises(UnsupportedError, match="grid-wide synchronization") as e:
        grid_wide.forall(4)(nl.zeros(4))
    assert "second kernel" in str(e.value)
