"""Fusion claims as tests: how many kernels each workload evaluates as, what is never written to
memory, and what compiles only once."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import numloom as nl

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import workloads as W  # noqa: E402

RNG = numpy.random.default_rng(0)


def kernels_for(fn, *args):
    """Evaluate ``fn(*args)`` once; the number of kernels launched, and the results."""
    nl.sync()
    before = nl.stats()
    out = fn(*args)
    nl.sync()
    after = nl.stats()
    return after["kernels_launched"] - before["kernels_launched"], out


def _bs_inputs(n=1000):
    return [nl.asarray(a) for a in W.blackscholes_inputs(n, RNG)]


def test_blackscholes_call_and_put_are_one_kernel():
    S, X, T = _bs_inputs()
    n, (call, put) = kernels_for(W.blackscholes, nl, S, X, T)
    assert n == 1
    want = W.blackscholes(numpy, S.get(), X.get(), T.get())
    numpy.testing.assert_allclose(call.get(), want[0], rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(put.get(), want[1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "name, make",
    [
        ("gaussian_pdf", lambda: (W.gaussian_pdf, nl.asarray(RNG.random(1000, numpy.float32)))),
        ("saxpy", lambda: (W.saxpy, numpy.float32(2.0), nl.asarray(RNG.random(1000)),
                           nl.asarray(RNG.random(1000)))),
        ("sobel", lambda: (W.sobel, nl.asarray(RNG.random((3, 20, 17), numpy.float32)))),
        ("softmax", lambda: (W.softmax, nl.asarray(RNG.random((12, 40), numpy.float32)))),
        ("dense_activation", lambda: (lambda xp, x, b: 1.0 / (1.0 + xp.exp(-(x + b))),
                                      nl.asarray(RNG.random(64)), nl.asarray(RNG.random(64)))),
    ],
)  # fmt: skip
def test_one_kernel_workloads(name, make):
    fn, *args = make()
    n, out = kernels_for(fn, nl, *args)
    assert n == 1, nl.explain()
    host = [a.get() if isinstance(a, nl.ndarray) else a for a in args]
    numpy.testing.assert_allclose(out.get(), fn(numpy, *host), rtol=2e-6, atol=1e-7)


def test_mandelbrot_30_iterations_is_one_kernel():
    x = numpy.linspace(-2, 1, 40)
    y = numpy.linspace(-1.5, 1.5, 30)
    cr, ci = numpy.meshgrid(x, y)
    n, count = kernels_for(W.mandelbrot, nl, nl.asarray(cr), nl.asarray(ci), 30)
    assert n == 1
    numpy.testing.assert_array_equal(count.get(), W.mandelbrot(numpy, cr, ci, 30))


def test_jacobi_is_one_kernel_per_sweep_and_compiles_once():
    host = RNG.random((34, 34))
    grid = nl.asarray(host)
    W.jacobi(nl, grid, 1)
    nl.sync()
    before = nl.stats()
    for _ in range(5):
        W.jacobi(nl, grid, 1)
        nl.sync()
    after = nl.stats()
    assert after["kernels_launched"] - before["kernels_launched"] == 5
    assert after["kernels_compiled"] == before["kernels_compiled"]
    numpy.testing.assert_allclose(grid.get(), W.jacobi(numpy, host, 6), rtol=1e-12)


def test_lazy_jacobi_sweeps_share_one_compiled_kernel():
    host = RNG.random((20, 24))
    grid = nl.asarray(host)
    n, out = kernels_for(W.jacobi, nl, grid, 7)
    assert n == 7
    numpy.testing.assert_allclose(out.get(), W.jacobi(numpy, host, 7), rtol=1e-12)
    compiled = nl.stats()["kernels_compiled"]
    kernels_for(W.jacobi, nl, nl.asarray(host), 7)
    assert nl.stats()["kernels_compiled"] == compiled


def test_kmeans_never_stores_the_n_by_k_by_d_temporary():
    pts = nl.asarray(RNG.random((500, 4)))
    centers = nl.asarray(RNG.random((8, 4)))
    d = ((pts[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    labels = d.argmin(axis=1)
    plan = nl.explain(labels)
    for kernel in plan.kernels:
        for out in kernel.outputs:
            assert out.shape != (500, 8, 4)
    c, lab = W.kmeans(nl, pts, centers, 3)
    wc, wl = W.kmeans(numpy, pts.get(), centers.get(), 3)
    numpy.testing.assert_allclose(c.get(), wc, rtol=1e-10)
    numpy.testing.assert_array_equal(lab.get(), wl)


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_a_skinny_product_is_a_reduction_fused_with_its_operands(monkeypatch, dtype):
    """k-means' ``onehot.T @ pts`` (8x4 results over a long inner axis) runs as a reduction
    that computes the one-hot matrix as it goes (on a GPU; here the CPU stands in): no BLAS
    call, the n-by-k matrix never stored; NumPy's results and dtype, with ``out`` too."""
    from numloom.api import products

    monkeypatch.setattr(products, "REDUCED_ON", ("cpu", "cuda"))
    n = products.SKINNY_INNER + 5
    host = RNG.random((n, 4)).astype(dtype)
    labels = (host[:, 0] * 8).astype(numpy.int64)
    pts, lab = nl.asarray(host), nl.asarray(labels)

    def sums(xp, pts, labels):
        onehot = (labels[:, None] == xp.arange(8)[None, :]).astype(pts.dtype)
        return onehot.T @ pts

    got = sums(nl, pts, lab)
    plan = nl.explain(got)
    assert [k.kind for k in plan.kernels] == ["reduce"]
    assert all(o.shape != (n, 8) for k in plan.kernels for o in k.outputs)
    want = sums(numpy, host, labels)
    assert got.dtype == want.dtype
    numpy.testing.assert_allclose(got.get(), want, rtol=1e-5 if dtype == numpy.float32 else 1e-12)
    out = nl.zeros((2, 8, 4), dtype)  # NumPy's out rules: broadcast into its leading axis
    oh = (lab[:, None] == nl.arange(8)[None, :]).astype(dtype)
    nl.matmul(oh.T, pts, out=out)
    numpy.testing.assert_allclose(out.get(), numpy.broadcast_to(want, (2, 8, 4)),
                                  rtol=1e-5 if dtype == numpy.float32 else 1e-12)  # fmt: skip
    short = nl.asarray(host[: products.SKINNY_INNER - 1])  # too short: BLAS
    oh = (lab[: products.SKINNY_INNER - 1, None] == nl.arange(8)[None, :]).astype(dtype)
    assert "library" in [k.kind for k in nl.explain(oh.T @ short).kernels]
    wide = nl.asarray(RNG.random((n, 17)).astype(dtype))  # too many results (8 x 17): BLAS
    oh = (lab[:, None] == nl.arange(8)[None, :]).astype(dtype)
    assert "library" in [k.kind for k in nl.explain(oh.T @ wide).kernels]


def test_second_run_compiles_nothing_in_this_process():
    S, X, T = _bs_inputs(500)
    kernels_for(W.blackscholes, nl, S, X, T)
    compiled = nl.stats()["kernels_compiled"]
    S, X, T = _bs_inputs(700)  # a new size: the same kernel source
    kernels_for(W.blackscholes, nl, S, X, T)
    assert nl.stats()["kernels_compiled"] == compiled


SCRIPT = """
import sys, numpy, numloom as nl
sys.path.insert(0, {bench!r})
import workloads as W
S, X, T = [nl.asarray(a) for a in W.blackscholes_inputs(300, numpy.random.default_rng(1))]
call, put = W.blackscholes(nl, S, X, T)
nl.sync()
print(nl.stats()["kernels_compiled"], nl.stats()["compile_cache_hits"])
"""


def test_second_run_compiles_nothing_in_a_new_process(tmp_path):
    # (compiled at once: a small new plan would run through NumPy first)
    env = dict(os.environ, NUMLOOM_CACHE_DIR=str(tmp_path / "cache"), NUMLOOM_COMPILE_AFTER_MS="0")
    bench = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks")
    script = SCRIPT.format(bench=os.path.abspath(bench))
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, check=True)  # fmt: skip
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, check=True)  # fmt: skip
    assert first.stdout.split()[0] != "0"
    compiled, hits = second.stdout.split()
    assert compiled == "0" and int(hits) >= 1


def test_without_a_compiler_numpy_runs_the_plan_and_says_so(tmp_path):
    env = dict(os.environ, NUMLOOM_CC="/nonexistent/cc", CC="/nonexistent/cc",
               NUMLOOM_CACHE_DIR=str(tmp_path), NUMLOOM_DEVICE="cpu")  # fmt: skip
    code = ("import numloom as nl, numpy\nx = nl.arange(10.0)\n"
            "print(float((nl.sin(x) * 2).sum()), float((nl.sin(x) * 3).sum()))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)  # fmt: skip
    want = numpy.sin(numpy.arange(10.0))
    got = [float(v) for v in out.stdout.split()]
    numpy.testing.assert_allclose(got, [(want * 2).sum(), (want * 3).sum()])
    assert out.stderr.count("no C compiler") == 1


def test_explain_shows_kernel_sources():
    x = nl.asarray(RNG.random(100))
    plan = nl.explain(nl.exp(x) + 1)
    (kernel,) = plan.kernels
    assert kernel.kind == "map" and "expf" not in kernel.source and "exp(" in kernel.source
    assert "exp(" in str(plan)


# --- random DAGs against NumPy -------------------------------------------------------------

UNARY = ["negative", "absolute", "sin", "exp", "sqrt", "tanh", "floor", "square"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "divide", "hypot", "arctan2"]


@st.composite
def programs(draw):
    """A random program: ops on a few arrays, shared subexpressions, views, writes, reductions."""
    steps = draw(st.lists(st.tuples(st.sampled_from(["u", "b", "view", "write", "reduce",
                                                     "where"]),
                                    st.integers(0, 50), st.integers(0, 50)),
                          min_size=1, max_size=12))  # fmt: skip
    return steps


def _run_program(xp, steps, base):
    arrays = [xp.asarray(base.copy()), xp.asarray(base[::-1].copy() + 1)]
    for kind, i, j in steps:
        a, b = arrays[i % len(arrays)], arrays[j % len(arrays)]
        if kind == "u":
            arrays.append(getattr(xp, UNARY[i % len(UNARY)])(a * 0.1))
        elif kind == "b" and a.shape == b.shape:
            # |b| + 2, not b + 2: b may be x - (x + 2), which is -2 give or take an ulp that
            # the order of a sum decides, and dividing by the difference makes 1e15 or inf
            arrays.append(getattr(xp, BINARY[j % len(BINARY)])(a, xp.abs(b) + 2.0))
        elif kind == "view" and a.ndim == 2:
            arrays.append([a.T, a[1:, ::2], a[::-1], a[:, None, :][:, 0]][j % 4])
        elif kind == "write" and a.ndim == 2 and a.shape == arrays[0].shape:
            target = arrays[0]
            if j % 3 == 0:
                target[1:, :] = a[:-1] * 0.5
            elif j % 3 == 1:
                target[...] = target + a
            else:
                target[:, 0] = 3.0
        elif kind == "reduce" and a.ndim == 2:
            arrays.append([a.sum(axis=1, keepdims=True) * a, a.max(axis=0), a.mean()][j % 3])
        elif kind == "where" and a.shape == b.shape:
            # not a > b: two sums in another order can differ by an ulp, and x - (x + 2) is
            # then -2 on one side of the comparison and -2 + ulp on the other
            arrays.append(xp.where(a > b + 0.1, a, b * 2))
    return [numpy.asarray(x) for x in arrays]


@settings(max_examples=40, deadline=None)
@given(programs())
@example([("b", 1, 1), ("u", 0, 0), ("u", 0, 0), ("reduce", 0, 0), ("u", 0, 0), ("b", 33, 33),
          ("where", 7, 2)])  # fmt: skip
@example([("u", 0, 0), ("reduce", 0, 0), ("u", 0, 0), ("b", 33, 33), ("b", 0, 5)])
def test_random_programs_match_numpy(steps):
    check_program(steps, numpy.arange(30.0).reshape(5, 6) / 7)


def check_program(steps, base) -> None:
    """The random program ``steps`` over ``base`` gives NumPy's arrays."""
    want = _run_program(numpy, steps, base)
    got = _run_program(nl, steps, base)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        # Sums may add in another order (an ulp or so); exp of a large sum magnifies that by
        # the sum's size (exp(633) moves 1e-13 per ulp of its argument): 1e-9 bounds it.
        numpy.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, equal_nan=True)


def test_blackscholes_holds_no_intermediate_in_memory():
    """Peak memory while evaluating is the inputs and the two outputs, nothing else."""
    import tracemalloc

    n = 1_000_000
    S, X, T = W.blackscholes_inputs(n, RNG)
    tracemalloc.start()
    s, x, t = nl.asarray(S), nl.asarray(X), nl.asarray(T)
    call, put = W.blackscholes(nl, s, x, t)
    nl.sync()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1.3 * 5 * n * 4


def test_two_sums_of_one_chain_each_read_its_inputs_on_a_gpu():
    """Black-Scholes reduced to the sums of its calls and puts (a chunk's work on Dask): two
    whole-array sums cannot be one kernel, and on a GPU the chain they share is recomputed by
    each from the three inputs instead of written out for both to read back (12 arrays: 160
    bytes an option moved, against 24). The CPU, short of arithmetic, stores it."""
    S, X, T = W.blackscholes_inputs(10_000, RNG)
    s, x, t = nl.asarray(S), nl.asarray(X), nl.asarray(T)
    nl.evaluate(s, x, t)
    call, put = W.blackscholes(nl, s, x, t)
    sums = call.sum(dtype=numpy.float64), put.sum(dtype=numpy.float64)
    from numloom.compile.compiler import check_cuda_sources, nvrtc_available

    plan = nl.explain(*sums, target="cuda")
    assert [k.kind for k in plan.kernels] == ["reduce", "reduce"]
    assert all(all(n.op.name == "BUFFER" for n in k.inputs) for k in plan.kernels)
    if nvrtc_available():
        sources = [k.source for k in plan.kernels]
        assert check_cuda_sources(sources, "sm_90") == [None, None]
    assert len(nl.explain(*sums, target="cpu").kernels) > 2  # (the shared values, each sum)
    want_call, want_put = W.blackscholes(numpy, S, X, T)
    numpy.testing.assert_allclose([float(v) for v in sums],
                                  [want_call.sum(dtype=numpy.float64),
                                   want_put.sum(dtype=numpy.float64)], rtol=1e-6)  # fmt: skip


def test_an_exp_read_by_several_cpu_kernels_is_computed_once():
    """A softmax's exponentials, read by the row sums, the probabilities' log loss and their
    argmax (reductions that cannot share a kernel), are computed once on the CPU and stored:
    the C library's exp costs what twenty additions do, and each kernel computing it again
    made a small network's evaluation (mlfromscratch's neuroevolution) twice NumPy's time.
    A GPU recomputes such a chain in each kernel."""
    import re

    host = RNG.random((1078, 10))
    o = nl.asarray(host)
    nl.evaluate(o)

    def program(xp, o):
        e = xp.exp(o - xp.max(o, axis=-1, keepdims=True))
        p = e / xp.sum(e, axis=-1, keepdims=True)
        q = xp.clip(p, 1e-15, 1 - 1e-15)
        return xp.mean(-xp.log(q) - xp.log(1 - q)), xp.argmax(p, axis=1)

    loss, best = program(nl, o)
    computing = [k for k in nl.explain(loss, best, target="cpu").kernels
                 if re.search(r"\bexp\(", k.source)]  # fmt: skip
    assert len(computing) == 1 and computing[0].kind == "map"
    gpu = nl.explain(loss, best, target="cuda").kernels
    assert sum(bool(re.search(r"\bexp\(", k.source)) for k in gpu) > 1
    want = program(numpy, host)
    if o.device == "cpu":
        assert float(loss) == want[0]
    numpy.testing.assert_allclose(float(loss), want[0], rtol=1e-13)  # (a GPU's log: last bit)
    numpy.testing.assert_array_equal(best.get(), want[1])


def test_gathers_scans_and_joins_fuse_into_their_kernels():
    host = RNG.random((6, 5))
    a = nl.asarray(host)
    idx = numpy.array([5, -1, 0, 2])
    n, (g, s, c) = kernels_for(lambda: (a[nl.asarray(idx)] * 2 + 1, nl.cumsum(a * 3, axis=1),
                                        nl.concatenate([a, a * 2], axis=1) - 1))  # fmt: skip
    assert n == 3
    numpy.testing.assert_array_equal(g.get(), host[idx] * 2 + 1)
    # (a GPU scans a row in parallel: its sums may round an ulp away from NumPy's running sum)
    numpy.testing.assert_allclose(s.get(), numpy.cumsum(host * 3, axis=1), rtol=1e-14)
    numpy.testing.assert_array_equal(c.get(), numpy.concatenate([host, host * 2], axis=1) - 1)


def test_an_out_of_bounds_index_in_a_compiled_gather_raises_at_the_sync():
    a = nl.asarray(numpy.arange(8.0))
    bad = nl.arange(3) * 4  # 8 is out of bounds
    c = a[bad] + 1
    fine = a * 2
    with pytest.raises(IndexError, match="index 8 is out of bounds for axis 0 with size 8"):
        c.get()
    numpy.testing.assert_array_equal(fine.get(), numpy.arange(8.0) * 2)


@pytest.mark.parametrize("n", [16, 1000, 300_000])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_full_reductions_sharing_their_work_are_each_computed(n, dtype):
    """Whole-array sums of values that share an expensive step (a select over an exp): each
    reduces in parallel, and each output is its own sum (a kernel of several such sums once
    stored only the first). The CPU stores the shared values once; a GPU's sums each
    recompute them from the inputs."""
    host = numpy.random.default_rng(3).uniform(5, 30, n)
    other = numpy.random.default_rng(4).uniform(1, 100, n)

    def program(xp, a, b):
        d = a - 10.0
        w = 1.0 - xp.exp(-d * d / 2.0)
        c = xp.where(d < 0, 1.0 - w, w)
        if dtype == "int64":
            return (a * c > 3).sum(), (b * c > 3).sum(), (c > 0.5).sum()
        return (a * c).astype(dtype).sum(), (b * c).astype(dtype).sum(), c.astype(dtype).max()

    want = program(numpy, host, other)
    a, b = nl.asarray(host), nl.asarray(other)
    nl.evaluate(a, b)
    n_kernels, got = kernels_for(lambda: program(nl, a, b))  # (the sync evaluates them)
    assert n_kernels == (4 if a.device == "cpu" else 3)  # (the shared step,) a reduction each
    for g, w in zip(got, want):
        numpy.testing.assert_allclose(numpy.asarray(g), w, rtol=1e-5 if dtype == "float32"
                                      else 1e-12)  # fmt: skip


def test_kernel_symbols_say_what_they_do():
    """A kernel's symbol carries its kind and the operation that ends it before its hash
    (``nl_map_multiply_<hash>``, ``nl_reduce_sum_<hash>``): readable on a profiler's
    timeline, for the CPU's C and the GPU's CUDA alike."""
    import re

    x = nl.asarray(numpy.arange(10.0))
    for target in ("cpu", "cuda"):
        plan = nl.explain(nl.exp(x) * 2, (x * x).sum(), target=target)
        names = [re.search(r"void (?:__launch_bounds__\(\d+\) )?(nl_\w+?)(?:_part)?\(",
                           k.source).group(1) for k in plan.kernels]  # fmt: skip
        assert re.fullmatch(r"nl_map_multiply_[0-9a-f]{16}", names[0]), names
        assert re.fullmatch(r"nl_reduce_sum_[0-9a-f]{16}", names[1]), names


ROW_THEN_OTHER_ROWS = {  # softmax's rows, then a reduction over other rows
    "column sum": lambda xp, e: (e / e.sum(axis=1, keepdims=True)).sum(axis=0),
    "whole sum": lambda xp, e: (e / e.sum(axis=1, keepdims=True)).sum(),
    "column max": lambda xp, e: (e - e.mean(axis=1, keepdims=True)).max(axis=0),
}


@pytest.mark.parametrize("case", list(ROW_THEN_OTHER_ROWS.values()), ids=list(ROW_THEN_OTHER_ROWS))
def test_row_reductions_under_a_reduction_of_other_rows_compile(case):
    """A row's reductions (softmax's max and sum) fuse with the kernel using them only where it
    walks the same rows; under a column or whole-array reduction they are written to memory
    as a vector of row values, and every kernel compiles (none runs through NumPy)."""
    host = numpy.random.default_rng(3).standard_normal((96, 40), dtype=numpy.float32)
    x = nl.asarray(host)

    def program(xp, x):
        return case(xp, xp.exp(x - x.max(axis=1, keepdims=True)))

    before = nl.stats()["kernels_through_numpy"]
    got = program(nl, x).get()
    assert nl.stats()["kernels_through_numpy"] == before
    numpy.testing.assert_allclose(got, program(numpy, host), rtol=2e-6)
    # (a CPU stores the exponentials the row and the other reduction both read: one kernel more)
    assert len(nl.explain(program(nl, x)).kernels) <= 3 + (x.device == "cpu")


def test_a_row_reduction_under_a_write_gets_a_kernel_of_its_own(monkeypatch):
    """Epochs of a small MLP traced into one plan (nothing read between them): the row sums
    of ``p /= p.sum(1, keepdims=True)`` are used by a write kernel, which is lowered without
    reductions; they are written by a kernel of their own, so every kernel compiles (before,
    such kernels ran through NumPy node by node)."""
    from numloom.compile import lower

    refused = []
    real = lower.lower

    def recording(kernel):
        try:
            return real(kernel)
        except lower.Unsupported as e:
            if "library" not in str(e):
                refused.append(str(e))
            raise

    monkeypatch.setattr(lower, "lower", recording)

    def run(xp):
        rng = numpy.random.default_rng(0)
        X = xp.asarray(rng.standard_normal((60, 2)))
        y = xp.asarray((rng.random(60) > 0.5).astype(int))
        W = xp.asarray(rng.standard_normal((2, 3)))
        for _ in range(4):
            z = X @ W
            z -= z.max(1, keepdims=True)
            p = xp.exp(z)
            p /= p.sum(1, keepdims=True)
            dz = p.copy()
            dz[xp.arange(60), y] -= 1
            W -= 0.1 * (X.T @ dz)
        return W

    numpy.testing.assert_allclose(numpy.asarray(run(nl)), run(numpy), rtol=1e-12)
    assert refused == []


def test_many_merged_kernels_are_planned_in_one_scan(monkeypatch):
    """A naive Bayes fit's per-class means and variances of each column of a gathered subset:
    each column's mean and variance become one kernel (a merge, which changes no node's
    owners). The plan finds the owners again only after it stores a shared value (the
    gather), not after each merge: 640 pending pairs took 6 s to plan when each merge started
    the scan over."""
    from numloom.compile import schedule

    calls = []
    owners = schedule._owners
    monkeypatch.setattr(schedule, "_owners", lambda order, why: calls.append(1) or owners(order, why))
    host = RNG.random((300, 64))
    x = nl.asarray(host)
    picks = [RNG.integers(0, 300, 50) for _ in range(3)]
    params = [(col.mean(), col.var()) for p in picks for col in x[nl.asarray(p)].T]
    n, _ = kernels_for(lambda: None)
    assert len(calls) <= 5  # a few passes (2 here), not one per column (194 before)
    want = [(c.mean(), c.var()) for p in picks for c in host[p].T]
    numpy.testing.assert_allclose(numpy.asarray(params, float), numpy.asarray(want), rtol=1e-12)


def _minibatch_training(xp, inputs, hidden=30):
    """Nielsen's network.py mini-batch step, unchanged: per sample a forward and backward
    pass, the gradients summed over the batch with no sync."""
    rng = numpy.random.default_rng(0)
    w1, w2 = (xp.asarray(rng.standard_normal((hidden, inputs.shape[1]))),
              xp.asarray(rng.standard_normal((10, hidden))))  # fmt: skip
    b1, b2 = xp.asarray(rng.standard_normal((hidden, 1))), xp.asarray(rng.standard_normal((10, 1)))
    xs = [x.reshape(-1, 1) for x in inputs]
    ys = [numpy.eye(10)[:, [j % 10]] for j in range(len(inputs))]

    def sig(z):
        return 1.0 / (1.0 + xp.exp(-z))

    for k in range(0, len(inputs), 10):
        gw1, gw2, gb1, gb2 = xp.zeros(w1.shape), xp.zeros(w2.shape), xp.zeros(b1.shape), xp.zeros(b2.shape)
        for x, y in zip(xs[k : k + 10], ys[k : k + 10]):
            z1 = xp.dot(w1, x) + b1
            a1 = sig(z1)
            z2 = xp.dot(w2, a1) + b2
            d2 = (sig(z2) - y) * sig(z2) * (1 - sig(z2))
            d1 = xp.dot(w2.transpose(), d2) * sig(z1) * (1 - sig(z1))
            gb1, gb2 = gb1 + d1, gb2 + d2
            gw1, gw2 = gw1 + xp.dot(d1, x.transpose()), gw2 + xp.dot(d2, a1.transpose())
        w1, w2 = w1 - 0.3 * gw1, w2 - 0.3 * gw2
        b1, b2 = b1 - 0.3 * gb1, b2 - 0.3 * gb2
    return w1, w2


def test_a_plan_storing_many_shared_values_finds_its_kernels_in_few_passes(monkeypatch):
    """A network's mini-batch loop with no sync: many values several kernels read are stored.
    The scheduler found every node's kernels again after each one (45 passes for 200 samples;
    hundreds over a flush of thousands of nodes, 27 s of a 33 s training run); a pass now
    stores all it finds, and the nodes before them are looked at again once."""
    from numloom.compile import schedule as sched

    calls = []
    original = sched._owners
    monkeypatch.setattr(sched, "_owners", lambda *a: calls.append(1) or original(*a))
    inputs = numpy.random.default_rng(1).random((200, 100))
    want = _minibatch_training(numpy, inputs)
    got = _minibatch_training(nl, inputs)  # (weights of 3000 elements: traced, not run at once)
    for g, w in zip(got, want):
        numpy.testing.assert_allclose(g.get(), w, rtol=1e-9, atol=1e-12)
    assert 0 < len(calls) <= 4
