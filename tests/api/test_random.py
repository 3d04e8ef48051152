"""numloom.random draws NumPy's streams: the same numbers as NumPy, on the CPU and on a GPU.

The samplers a GPU runs (``random_streams.SAMPLERS``) compile as host C too: here they are
checked against NumPy's own draws on any machine, tails and 32-bit buffering included. On a GPU
(``NUMLOOM_DEVICE=cuda``) the same tests draw through numloom's device kernels.
"""

from __future__ import annotations

import ctypes
import warnings

import numpy
import pytest

import numloom
from numloom.api import random_streams

ON_GPU = numloom.get_device() != "cpu"

DRIVER = r"""
void nl_test_draw(int kind, nl_u64 shi, nl_u64 slo, nl_u64 ihi, nl_u64 ilo, int has, nl_u32 buf,
                  const unsigned char *t, long long n, void *out, long long *used) {
    nl_src r;
    r.s.hi = shi; r.s.lo = slo; r.inc.hi = ihi; r.inc.lo = ilo;
    r.has = has; r.buf = buf; r.used = 0;
    for (long long i = 0; i < n; i++) {
        if (kind == 0) { double v; while (!nl_normal64(&r, t, &v)) {} ((double *)out)[i] = v; }
        if (kind == 1) { float v; while (!nl_normal32(&r, t, &v)) {} ((float *)out)[i] = v; }
        if (kind == 2) { double v; while (!nl_exponential64(&r, t, &v)) {} ((double *)out)[i] = v; }
        if (kind == 3) { float v; while (!nl_exponential32(&r, t, &v)) {} ((float *)out)[i] = v; }
    }
    *used = r.used;
}

void nl_test_jump(nl_u64 shi, nl_u64 slo, const nl_u64 *jumps, long long pos, long long near,
                  nl_u64 *out) {
    nl_u128 s; s.hi = shi; s.lo = slo;
    const nl_u128 far = nl_jump(s, jumps, pos), close = nl_near(s, jumps, near);
    out[0] = far.hi; out[1] = far.lo; out[2] = close.hi; out[3] = close.lo;
}

void nl_test_integers(int wide, nl_u64 shi, nl_u64 slo, nl_u64 ihi, nl_u64 ilo, int has,
                      nl_u32 buf, nl_u64 excl, nl_u64 threshold, nl_u64 off, long long n,
                      nl_u64 *out, long long *used) {
    nl_src r;
    r.s.hi = shi; r.s.lo = slo; r.inc.hi = ihi; r.inc.lo = ilo;
    r.has = has; r.buf = buf; r.used = 0;
    for (long long i = 0; i < n; i++) {
        nl_u64 v;
        if (wide) { while (!nl_lemire64(nl_next64(&r), excl, threshold, &v)) {} }
        else { while (!nl_lemire32(nl_next32(&r), excl, threshold, &v)) {} }
        out[i] = off + v;
    }
    *used = r.used;
}
"""


def _host_samplers():
    from numloom.compile.compiler import compile_c, has_c_compiler

    if not has_c_compiler():
        pytest.skip("no C compiler")
    return compile_c(random_streams.LOG1M + random_streams.SAMPLERS + DRIVER,
                     name_hint="random_samplers")  # fmt: skip


# Where a sample comes from the ziggurat's tail (beyond these), it goes through a logarithm:
# numloom's is correctly rounded, the C library's (which NumPy calls) nearly so, so the two
# may differ in the last bit, about once in 1,200 tail samples (once in millions of samples).
TAILS = {"normal": 3.6541528853610088, "exponential": 7.6971174701310497}


def assert_numpys(got, want, tail, ulps=1):
    """``got`` is NumPy's ``want``, but for a last bit in tail samples (``TAILS``; ``ulps``
    where the sample is scaled and shifted after)."""
    got, want = numpy.asarray(got), numpy.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    differ = got != want
    if differ.any():
        assert numpy.all(numpy.abs(want[differ]) > tail), (got[differ], want[differ])
        ulp = numpy.spacing(numpy.abs(want[differ]).astype(want.dtype))
        assert numpy.all(numpy.abs(got[differ] - want[differ]) <= ulps * ulp)
        assert differ.mean() < 1e-4


SAMPLERS = {
    0: lambda g, n: g.standard_normal(n),
    1: lambda g, n: g.standard_normal(n, dtype=numpy.float32),
    2: lambda g, n: g.standard_exponential(n),
    3: lambda g, n: g.standard_exponential(n, dtype=numpy.float32),
}


@pytest.mark.parametrize("kind", sorted(SAMPLERS))
@pytest.mark.parametrize("half_kept", [False, True])
def test_the_device_samplers_are_numpys_bit_for_bit(kind, half_kept):
    lib = _host_samplers()
    tables = numpy.frombuffer(random_streams.ziggurat_tables(), numpy.uint8)
    g = numpy.random.default_rng(20261125 + kind)
    if half_kept:
        g.random(dtype=numpy.float32)  # a 32-bit half stays in the generator's state
    state = g.bit_generator.state
    n = 200_000  # (about 60 tail samples, 1,500 wedge tests)
    want = SAMPLERS[kind](g, n)
    got = numpy.empty(n, want.dtype)
    used = ctypes.c_longlong()
    s, inc, m = state["state"]["state"], state["state"]["inc"], (1 << 64) - 1
    lib.nl_test_draw(ctypes.c_int(kind), ctypes.c_uint64(s >> 64), ctypes.c_uint64(s & m),
                     ctypes.c_uint64(inc >> 64), ctypes.c_uint64(inc & m),
                     ctypes.c_int(state["has_uint32"]), ctypes.c_uint32(state["uinteger"]),
                     tables.ctypes.data_as(ctypes.c_void_p), ctypes.c_longlong(n),
                     got.ctypes.data_as(ctypes.c_void_p), ctypes.byref(used))  # fmt: skip
    assert_numpys(got, want, TAILS["normal" if kind < 2 else "exponential"])
    assert random_streams.advanced(state, used.value, kind in (1, 3)) == g.bit_generator.state


def test_the_samplers_log_is_correctly_rounded():
    """``nl_log``: the device's log refined in double-double arithmetic, to the double
    nearest the true logarithm (checked against 50-digit decimal logarithms)."""
    import decimal

    from numloom.compile.compiler import compile_c, has_c_compiler

    if not has_c_compiler():
        pytest.skip("no C compiler")
    lib = compile_c(random_streams.LOG1M + random_streams.SAMPLERS + r"""
void nl_test_log(long long n, const double *x, double *y) {
    for (long long i = 0; i < n; i++) y[i] = nl_log(x[i]);
}
""", name_hint="random_log")  # fmt: skip
    u = numpy.random.default_rng(0).integers(0, 2**53, 3000) * 2.0**-53
    x = numpy.concatenate([1.0 - u, [1.0, 2.0**-53, 0.5, 1.0 - 2.0**-53]])
    y = numpy.empty_like(x)
    lib.nl_test_log(ctypes.c_longlong(x.size), x.ctypes.data_as(ctypes.c_void_p),
                    y.ctypes.data_as(ctypes.c_void_p))  # fmt: skip
    decimal.getcontext().prec = 40
    for xi, yi in zip(x.tolist(), y.tolist()):
        true = decimal.Decimal(xi).ln()
        error = abs(decimal.Decimal(yi) - true)
        assert error <= abs(decimal.Decimal(numpy.nextafter(yi, 0.0)) - true)
        assert error <= abs(decimal.Decimal(numpy.nextafter(yi, -numpy.inf)) - true)


@pytest.mark.parametrize("low, high, dtype", [
    (0, 10, "int64"), (-5, 5, "int64"), (0, 2**31 + 1, "int64"), (3, 2**40, "int64"),
    (-(2**62), 2**62, "int64"), (0, 1000, "int32"), (-(2**31), 2**31 - 2, "int32"),
])  # fmt: skip
def test_the_device_integers_are_numpys(low, high, dtype):
    lib = _host_samplers()
    g = numpy.random.default_rng(99)
    g.random(dtype=numpy.float32)  # a 32-bit half kept
    state = g.bit_generator.state
    n = 20_000
    want = g.integers(low, high, size=n, dtype=dtype)
    span = high - low - 1
    wide = span > 0xFFFFFFFF
    excl = span + 1
    threshold = ((1 << (64 if wide else 32)) - excl) % excl
    got = numpy.empty(n, numpy.uint64)
    used = ctypes.c_longlong()
    s, inc, m = state["state"]["state"], state["state"]["inc"], (1 << 64) - 1
    lib.nl_test_integers(ctypes.c_int(wide), ctypes.c_uint64(s >> 64), ctypes.c_uint64(s & m),
                         ctypes.c_uint64(inc >> 64), ctypes.c_uint64(inc & m),
                         ctypes.c_int(state["has_uint32"]), ctypes.c_uint32(state["uinteger"]),
                         ctypes.c_uint64(excl), ctypes.c_uint64(threshold),
                         ctypes.c_uint64(low % (1 << 64)), ctypes.c_longlong(n),
                         got.ctypes.data_as(ctypes.c_void_p), ctypes.byref(used))  # fmt: skip
    numpy.testing.assert_array_equal(got.astype(dtype), want)
    assert random_streams.advanced(state, used.value, not wide) == g.bit_generator.state


def test_the_ziggurat_tables_are_read_from_numpy():
    data = random_streams.ziggurat_tables()
    assert data is not None and len(data) == 6 * 2048 + 6 * 1024
    wi = numpy.frombuffer(data[2048:4096], numpy.float64)
    assert numpy.all(wi > 0) and numpy.all(numpy.diff(wi[1:]) > 0)


@pytest.mark.parametrize("draws", [0, 1, 2, 7, 1000, 2**40 + 3])
@pytest.mark.parametrize("unit32", [False, True])
def test_jumping_ahead_is_numpys_advance(draws, unit32):
    g = numpy.random.default_rng(5)
    g.random(dtype=numpy.float32)  # a half kept
    state = g.bit_generator.state
    moved = random_streams.advanced(state, draws, unit32)
    if not unit32:
        g.bit_generator.advance(draws)  # (NumPy's advance drops the kept half)
        assert moved["state"] == g.bit_generator.state["state"]
    elif draws < 10_000:
        g.integers(0, 2**32, size=draws, dtype=numpy.uint32)  # 32-bit draws, one each
        assert moved == g.bit_generator.state


def test_the_near_jumps_are_jumps():
    inc = numpy.random.default_rng(8).bit_generator.state["state"]["inc"]
    words = random_streams.jumps(inc, 300).reshape(-1, 4)
    for k, d in [(0, 1), (5, 32), (64, 0), (65, 1), (64 + 299, 299)]:
        a, c = random_streams.jump(d, inc)
        hi_lo = [int(w) for w in words[k]]
        assert (hi_lo[0] << 64 | hi_lo[1], hi_lo[2] << 64 | hi_lo[3]) == (a, c)


@pytest.mark.parametrize("inc", [1, 3, 2**127 + 1, 2**128 - 1, 0x9E3779B97F4A7C15F39CC0605CEDC835,
                                 numpy.random.default_rng(9).bit_generator.state["state"]["inc"]])
def test_every_jump_of_any_stream_is_the_streams_jump(inc):
    """Each of ``jumps``' entries (by 2**k and by 0..near-1 draws) for streams whose
    increments use all 128 bits: the product ``inc * S`` it computes in 64-bit words against
    the jump in Python's integers."""
    words = random_streams.jumps(inc, 40).reshape(-1, 4)
    steps = [1 << k for k in range(64)] + list(range(40))
    for w, d in zip(words, steps, strict=True):
        a, c = random_streams.jump(d, inc)
        assert (int(w[0]) << 64 | int(w[1]), int(w[2]) << 64 | int(w[3])) == (a, c), d


@pytest.mark.parametrize("pos, near", [(0, 0), (1, 1), (255, 17), (2**40 + 12345, 299)])
def test_the_device_jumps_are_pcg64s(pos, near):
    """``nl_jump`` (by powers of two) and ``nl_near`` (by a few draws), as the kernels take
    them, against the stream stepped in Python."""
    lib = _host_samplers()
    state = numpy.random.default_rng(3).bit_generator.state["state"]
    s, inc = state["state"], state["inc"]
    words = random_streams.jumps(inc, 300)
    out = numpy.zeros(4, numpy.uint64)
    lib.nl_test_jump(ctypes.c_uint64(s >> 64), ctypes.c_uint64(s & ((1 << 64) - 1)),
                     words.ctypes.data_as(ctypes.c_void_p), ctypes.c_longlong(pos),
                     ctypes.c_longlong(near), out.ctypes.data_as(ctypes.c_void_p))  # fmt: skip
    got = [int(out[0]) << 64 | int(out[1]), int(out[2]) << 64 | int(out[3])]
    want = []
    for steps in (pos, near):
        a, c = random_streams.jump(steps, inc)
        want.append((a * s + c) % (1 << 128))
    assert got == want
    if pos < 300:
        moved = s
        for _ in range(pos):
            moved = random_streams.step(moved, inc)
        assert got[0] == moved


def _same_as_numpy(draw, seed=1234, check_state=True, tail=numpy.inf, ulps=1):
    mine = numloom.random.default_rng(seed)
    theirs = numpy.random.default_rng(seed)
    before = dict(numloom.stats()["fallbacks"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", numloom.NumloomFallbackWarning)
        for _ in range(2):  # (the second call continues the stream)
            got, want = draw(mine), draw(theirs)
            assert isinstance(got, numloom.ndarray) and got.device == numloom.get_device()
            assert_numpys(got.get(), want, tail, ulps)
    assert numloom.stats()["fallbacks"] == before
    if check_state:
        assert mine.bit_generator.state == theirs.bit_generator.state
        assert mine.random() == theirs.random()


@pytest.mark.parametrize("shape", [5, (300, 7), 100_001])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_random_is_numpys(shape, dtype):
    _same_as_numpy(lambda g: g.random(shape, dtype=dtype))


def test_random_float32_after_a_kept_half():
    def draw(g):
        g.random(dtype=numpy.float32)  # odd: the next draw starts with the kept half
        return g.random(9, dtype=numpy.float32)

    _same_as_numpy(draw)


@pytest.mark.parametrize("shape", [1, 1000, (64, 1001), 300_007])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_standard_normal_is_numpys(shape, dtype):
    _same_as_numpy(lambda g: g.standard_normal(shape, dtype=dtype), seed=77, tail=TAILS["normal"])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_standard_exponential_is_numpys(dtype):
    _same_as_numpy(lambda g: g.standard_exponential((500, 401), dtype=dtype), seed=3,
                   tail=TAILS["exponential"])


def test_normal_uniform_exponential_with_parameters_are_numpys():
    _same_as_numpy(lambda g: g.normal(3.0, 2.5, size=(1000, 3)), tail=2.5 * 3.65 - 3.0, ulps=2)
    _same_as_numpy(lambda g: g.uniform(-2.0, 5.0, size=12345))
    _same_as_numpy(lambda g: g.exponential(0.5, size=4321), tail=0.5 * 7.69, ulps=2)


@pytest.mark.parametrize("low, high, dtype, endpoint", [
    (0, 10, "int64", False), (10, None, "int64", False), (-7, 7, "int64", True),
    (0, 2**40, "int64", False), (0, 2**31 + 1, "int64", False), (-100, 100, "int32", False),
])  # fmt: skip
def test_integers_are_numpys(low, high, dtype, endpoint):
    def draw(g):
        g.random(dtype=numpy.float32)  # (a kept half, then integers)
        return g.integers(low, high, size=(300, 7), dtype=dtype, endpoint=endpoint)

    _same_as_numpy(draw, seed=21)


def test_a_seeded_program_draws_the_same_numbers_as_numpy():
    def program(np):
        rng = np.random.default_rng(42)
        a = rng.standard_normal((200, 300))
        b = rng.uniform(0.0, 1.0, 1000)
        c = rng.integers(0, 10, size=20)  # (drawn by NumPy: the state stays in step)
        d = rng.standard_normal(77, dtype=np.float32)
        return [a, b, c, d, rng.random(3)]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numloom.NumloomFallbackWarning)
        got = program(numloom)
    for g, w in zip(got, program(numpy)):
        assert_numpys(g.get(), w, TAILS["normal"])


@pytest.mark.parametrize("call, error", [
    (lambda g: g.normal(0.0, -1.0, size=3), "scale < 0"),
    (lambda g: g.exponential(-1.0, size=3), "scale < 0"),
    (lambda g: g.uniform(0.0, numpy.inf, size=3), "range exceeds valid bounds"),
    (lambda g: g.standard_normal(3, dtype=numpy.int32), "Unsupported dtype"),
    (lambda g: g.random(-1), "negative dimensions"),
])  # fmt: skip
def test_bad_parameters_raise_numpys_errors(call, error):
    with pytest.raises(Exception) as theirs:
        call(numpy.random.default_rng(0))
    assert error in str(theirs.value)
    with pytest.raises(theirs.type) as mine:
        call(numloom.random.default_rng(0))
    assert str(mine.value) == str(theirs.value)


def test_numloom_random_env_draws_on_the_host(monkeypatch):
    monkeypatch.setenv("NUMLOOM_RANDOM", "numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numloom.NumloomFallbackWarning)
        got = numloom.random.default_rng(9).standard_normal(10)
    numpy.testing.assert_array_equal(got.get(), numpy.random.default_rng(9).standard_normal(10))


@pytest.mark.skipif(not ON_GPU, reason="the device draws on a GPU")
def test_a_device_draw_makes_no_host_round_trip():
    rng = numloom.random.default_rng(1)
    before = numloom.stats()
    x = rng.standard_normal(1 << 20)
    y = rng.random(1 << 20)
    numloom.sync()
    after = numloom.stats()
    # (what goes up is the stream's tables, its jumps and the ziggurat's, 160 KB: not the 12 MB
    # of samples)
    assert after["host_to_device_bytes"] - before["host_to_device_bytes"] < 256 << 10
    assert after["fallbacks"] == before["fallbacks"]
    assert x.shape == y.shape == (1 << 20,)


# --- the legacy functions: a Philox stream (on a GPU, or with NUMLOOM_RANDOM=philox) -------------


def test_philox_is_random123s_philox4x32_10():
    from numloom.api import philox

    words = philox.blocks(numpy, 0, 1, (0, 0))  # Random123's known-answer vector
    assert [int(w[0]) for w in words] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    mine = philox.doubles(numloom, 7, 11, (5, 9)).get()
    numpy.testing.assert_array_equal(mine, philox.doubles(numpy, 7, 11, (5, 9)))
    assert numpy.all((mine >= 0) & (mine < 1))


@pytest.fixture
def philox_everywhere(monkeypatch):
    monkeypatch.setenv("NUMLOOM_RANDOM", "philox")


LEGACY = [  # (call, NumPy's mean, NumPy's variance) of the distribution
    (lambda r: r.rand(400, 250), 0.5, 1 / 12),
    (lambda r: r.random_sample(100_000), 0.5, 1 / 12),
    (lambda r: r.uniform(-2.0, 4.0, size=100_000), 1.0, 3.0),
    (lambda r: r.randn(100_000), 0.0, 1.0),
    (lambda r: r.normal(3.0, 2.0, size=(100, 1000)), 3.0, 4.0),
    (lambda r: r.standard_exponential(100_000), 1.0, 1.0),
    (lambda r: r.exponential(0.5, 100_000), 0.5, 0.25),
    (lambda r: r.lognormal(0.0, 0.25, 100_000), numpy.exp(0.25**2 / 2),
     (numpy.exp(0.25**2) - 1) * numpy.exp(0.25**2)),
    (lambda r: r.randint(0, 10, size=100_000), 4.5, 8.25),
    (lambda r: r.randint(3, size=100_000), 1.0, 2 / 3),
    (lambda r: r.gumbel(1.0, 2.0, 100_000), 1.0 + 2.0 * numpy.euler_gamma, numpy.pi**2 / 6 * 4),
    (lambda r: r.laplace(1.0, 2.0, 100_000), 1.0, 8.0),
    (lambda r: r.logistic(1.0, 2.0, 100_000), 1.0, numpy.pi**2 / 3 * 4),
    (lambda r: r.rayleigh(2.0, 100_000), 2.0 * numpy.sqrt(numpy.pi / 2), (4 - numpy.pi) / 2 * 4),
    (lambda r: r.weibull(1.0, 100_000), 1.0, 1.0),
    (lambda r: r.power(2.0, 100_000), 2 / 3, 2 / 36),
    (lambda r: r.geometric(0.3, 100_000), 1 / 0.3, 0.7 / 0.09),
    (lambda r: r.geometric(1.0, 1000), 1.0, 0.0),
    (lambda r: r.triangular(0.0, 1.0, 4.0, 100_000), 5 / 3, (16 + 1 - 4) / 18),
    (lambda r: r.wald(2.0, 3.0, 200_000), 2.0, 8 / 3),
    (lambda r: r.choice(10, 100_000), 4.5, 8.25),
    (lambda r: r.choice(3, 100_000, p=[0.5, 0.0, 0.5]), 1.0, 1.0),
    (lambda r: r.choice(numloom.arange(10) if r is numloom.random else numpy.arange(10),
                        (100, 1000)), 4.5, 8.25),
]  # fmt: skip


@pytest.mark.parametrize("case", range(len(LEGACY)))
def test_legacy_draws_have_numpys_distribution_shape_and_dtype(philox_everywhere, case):
    call, mean, variance = LEGACY[case]
    numloom.random.seed(12)
    got = call(numloom.random)
    want = call(numpy.random.RandomState(12))
    assert isinstance(got, numloom.ndarray)
    assert got.dtype == want.dtype and got.shape == want.shape
    values = got.get().astype(float)
    n = values.size
    assert abs(values.mean() - mean) <= 6 * numpy.sqrt(variance / n)
    assert abs(values.var() - variance) <= 0.05 * variance


def test_legacy_draws_are_seeded_and_move_on(philox_everywhere):
    numloom.random.seed(7)
    a, b = numloom.random.rand(1000).get(), numloom.random.rand(1000).get()
    numloom.random.seed(7)
    assert numpy.array_equal(numloom.random.rand(1000).get(), a)
    assert not numpy.array_equal(a, b)
    r = numloom.random.RandomState(7)
    assert numpy.array_equal(r.rand(1000).get(), a)  # (a RandomState: its own stream)
    assert not numpy.array_equal(numloom.random.RandomState(8).rand(1000).get(), a)


def test_legacy_permutation_shuffle_and_errors(philox_everywhere):
    numloom.random.seed(1)
    p = numloom.random.permutation(50)
    assert p.dtype == numpy.random.permutation(50).dtype
    assert sorted(p.get().tolist()) == list(range(50))
    x = numloom.arange(20.0).reshape(10, 2)
    view = x[:, 0]
    numloom.random.shuffle(x)  # in place: the view sees it
    rows = sorted(map(tuple, x.get().tolist()))
    assert rows == [(2.0 * i, 2.0 * i + 1) for i in range(10)]
    numpy.testing.assert_array_equal(view.get(), x.get()[:, 0])
    y = numloom.random.permutation(numloom.arange(6))
    assert sorted(y.get().tolist()) == list(range(6))
    z = numloom.random.choice(numloom.arange(100) * 2, 40, replace=False)
    assert len(set(z.get().tolist())) == 40 and all(v % 2 == 0 for v in z.get().tolist())
    with pytest.warns(DeprecationWarning):
        w = numloom.random.random_integers(3, 5, size=1000)
    assert w.dtype == numpy.int64 and set(w.get().tolist()) == {3, 4, 5}
    for call in (lambda r: r.normal(0.0, -1.0, size=3), lambda r: r.randint(5, 1, size=3),
                 lambda r: r.exponential(-2.0, size=3), lambda r: r.uniform(0, numpy.inf, 3),
                 lambda r: r.wald(0.0, 1.0, size=3), lambda r: r.choice(5, 6, replace=False),
                 lambda r: r.choice(3, 4, p=[0.2, 0.2, 0.2])):  # fmt: skip
        with pytest.raises(Exception) as theirs:
            call(numpy.random.RandomState(0))
        with pytest.raises(theirs.type) as mine:
            call(numloom.random)
        assert str(mine.value) == str(theirs.value)


def test_a_legacy_draw_fuses_with_its_use(philox_everywhere):
    """``np.random.rand(n) * 2 - 1`` is one kernel: the draw is array operations."""
    numloom.random.seed(0)
    x = numloom.random.rand(10_000) * 2.0 - 1.0
    before = numloom.stats()["kernels_launched"]
    numloom.evaluate(x)
    assert numloom.stats()["kernels_launched"] - before == 1
    assert -1.0 <= float(x.min()) and float(x.max()) < 1.0


@pytest.mark.skipif(not ON_GPU, reason="the legacy functions draw from Philox on a GPU")
def test_legacy_draws_stay_on_the_gpu():
    before = dict(numloom.stats()["fallbacks"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", numloom.NumloomFallbackWarning)
        x = numloom.random.randn(1000, 1000) + numloom.random.rand(1000, 1000)
        numloom.random.shuffle(x)
    assert x.device == numloom.get_device() and numloom.stats()["fallbacks"] == before


# -- samplers built on the device's draws, and orders (host index, device data) --------------


@pytest.fixture
def device_path(monkeypatch):
    """The Generator's device path. On the CPU its three device draws (doubles, ziggurat
    normals and exponentials, tested above against NumPy's) are made by NumPy here, so what
    numloom builds on them runs as on a GPU."""
    if ON_GPU:
        return
    gen = numloom.random.Generator

    def device_shape(self, size, out=None):
        if size is None or out is not None:
            return None
        if type(self._generator.bit_generator) is not numpy.random.PCG64:
            return None
        return numloom.random._shape_of(size)

    def fill(self, shape, dtype, low=0.0, span=None):
        u = self._generator.random(shape, dtype)
        return numloom.asarray(u if span is None else low + span * u)

    def ziggurat(self, family, shape, dtype, mode=0, loc=0.0, scale=1.0):
        g = self._generator
        if family == "normal":
            v = g.normal(loc, scale, shape) if mode else g.standard_normal(shape, dtype)
        else:
            v = g.exponential(scale, shape) if mode else g.standard_exponential(shape, dtype)
        return numloom.asarray(v)

    monkeypatch.setattr(gen, "_device_shape", device_shape)
    monkeypatch.setattr(gen, "_fill", fill)
    monkeypatch.setattr(gen, "_ziggurat", ziggurat)
    monkeypatch.setattr(gen, "_draw", lambda self, device_draw, unit32: None)


def _close_to_numpys(got, want, integral=False):
    """``got`` is NumPy's ``want``: bit for bit on the CPU; on a GPU within a few units in
    the last place (the device's exp, log and pow against the C library's; absolute where a
    result cancels to near zero, as logistic's log(u / (1 - u)) near u = 1/2), and for integer
    samples, a rare neighbour where a value lies on a boundary."""
    got, want = numpy.asarray(got), numpy.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if not ON_GPU:
        numpy.testing.assert_array_equal(got, want)
    elif integral:
        differ = got != want
        assert differ.mean() < 1e-4 and numpy.all(numpy.abs(got - want)[differ] <= 1)
    else:
        scale = float(numpy.abs(want).max()) if want.size else 0.0
        numpy.testing.assert_allclose(got, want, rtol=2e-15, atol=4e-15 * scale)


METHODS = {
    "lognormal": lambda g: g.lognormal(0.5, 0.75, size=(300, 7)),
    "standard_cauchy": lambda g: g.standard_cauchy(2001),
    "gumbel": lambda g: g.gumbel(1.0, 2.0, size=3000),
    "laplace": lambda g: g.laplace(-1.0, 0.5, size=3000),
    "logistic": lambda g: g.logistic(2.0, 3.0, size=3000),
    "rayleigh": lambda g: g.rayleigh(2.5, size=3000),
    "weibull": lambda g: g.weibull(1.7, size=3000),
    "weibull zero": lambda g: g.weibull(0.0, size=10),
    "pareto": lambda g: g.pareto(3.0, size=3000),
    "power": lambda g: g.power(0.6, size=3000),
    "triangular": lambda g: g.triangular(-1.0, 0.25, 4.0, size=(50, 60)),
    "geometric inversion": lambda g: g.geometric(0.05, size=3000),
    "geometric search": lambda g: g.geometric(0.4, size=3000),
    "geometric one": lambda g: g.geometric(1.0, size=30),
    "choice": lambda g: g.choice(1000, size=(40, 50)),
    "choice p": lambda g: g.choice(5, size=4000, p=[0.1, 0.0, 0.3, 0.4, 0.2]),
    "choice no replace": lambda g: g.choice(20000, size=500, replace=False),
    "choice no replace tail": lambda g: g.choice(20000, size=15000, replace=False),
    "choice no replace p": lambda g: g.choice(6, size=4, replace=False,
                                              p=[0.1, 0.0, 0.3, 0.4, 0.1, 0.1]),
    "choice of rows": lambda g, xp=numloom: g.choice(xp.arange(60.0).reshape(20, 3), 7,
                                                     axis=0),
    "choice of columns": lambda g, xp=numloom: g.choice(xp.arange(60).reshape(3, 20), (2, 4),
                                                        axis=1, replace=False),
    "permutation": lambda g: g.permutation(1000),
    "permutation of rows": lambda g, xp=numloom: g.permutation(xp.arange(50.0).reshape(10, 5)),
    "permutation axis": lambda g, xp=numloom: g.permutation(xp.arange(50).reshape(10, 5),
                                                            axis=1),
    "permuted": lambda g, xp=numloom: g.permuted(xp.arange(24.0).reshape(4, 6)),
    "permuted axis": lambda g, xp=numloom: g.permuted(xp.arange(24).reshape(2, 3, 4), axis=1),
}  # fmt: skip


def _with(xp, fn):
    """``fn`` with its arrays made by ``xp`` (numloom's cases name ``xp=numloom``)."""
    if "xp" in fn.__code__.co_varnames:
        return lambda g: fn(g, xp=xp)
    return fn


@pytest.mark.parametrize("case", list(METHODS.values()), ids=list(METHODS))
def test_samplers_and_orders_draw_numpys_stream(case, device_path):
    mine, theirs = numloom.random.default_rng(2024), numpy.random.default_rng(2024)
    before = dict(numloom.stats()["fallbacks"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", numloom.NumloomFallbackWarning)
        for _ in range(2):  # (the second call continues the stream)
            got, want = _with(numloom, case)(mine), _with(numpy, case)(theirs)
            assert isinstance(got, numloom.ndarray) and got.device == numloom.get_device()
            _close_to_numpys(got.get(), want, want.dtype.kind in "iu")
    assert numloom.stats()["fallbacks"] == before
    assert mine.bit_generator.state == theirs.bit_generator.state


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_shuffle_writes_numpys_order_into_the_array(axis, device_path):
    mine, theirs = numloom.random.default_rng(5), numpy.random.default_rng(5)
    host = numpy.arange(60.0).reshape(6, 10)
    a, b = numloom.asarray(host), host.copy()
    view = a[:, ::2]  # a view sees the write; the base's other columns keep theirs
    mine.shuffle(a, axis=axis)
    theirs.shuffle(b, axis=axis)
    numpy.testing.assert_array_equal(a.get(), b)
    numpy.testing.assert_array_equal(view.get(), b[:, ::2])
    mine.shuffle(a[1])  # into a row of the array
    theirs.shuffle(b[1])
    numpy.testing.assert_array_equal(a.get(), b)
    assert mine.bit_generator.state == theirs.bit_generator.state


def test_permuted_into_out_and_errors(device_path):
    mine, theirs = numloom.random.default_rng(8), numpy.random.default_rng(8)
    x = numpy.arange(12.0).reshape(3, 4)
    out, want_out = numloom.zeros((3, 4)), numpy.zeros((3, 4))
    got = mine.permuted(numloom.asarray(x), axis=0, out=out)
    want = theirs.permuted(x, axis=0, out=want_out)
    assert got is out
    numpy.testing.assert_array_equal(out.get(), want)
    for call in (lambda g, xp: g.permuted(xp.arange(4.0), out=xp.zeros(3)),
                 lambda g, xp: g.permuted(xp.arange(4.0), out=xp.zeros(4, dtype=xp.int64)),
                 lambda g, xp: g.shuffle(xp.arange(4.0).reshape(2, 2), axis=2),
                 lambda g, xp: g.choice(xp.arange(4.0), 5, replace=False),
                 lambda g, xp: g.choice(4, 3, p=[0.5, 0.5, 0.5, 0.5]),
                 lambda g, xp: g.geometric(1.5, size=3),
                 lambda g, xp: g.triangular(2.0, 1.0, 3.0, size=3)):  # fmt: skip
        with pytest.raises(Exception) as theirs_error:
            call(numpy.random.default_rng(0), numpy)
        with pytest.raises(theirs_error.type) as mine_error:
            call(numloom.random.default_rng(0), numloom)
        assert str(mine_error.value) == str(theirs_error.value)


def test_a_sampler_fuses_with_its_use(device_path):
    """A sampler built on a device draw is numloom operations: the draw (made at the call),
    then one kernel for the sampler's formula and its use."""
    rng = numloom.random.default_rng(1)
    x = rng.gumbel(0.0, 1.0, size=1000)
    numloom.evaluate(x)
    y = rng.laplace(0.0, 2.0, size=1000) * 3.0 + x
    before = numloom.stats()["kernels_launched"]
    numloom.evaluate(y)
    assert numloom.stats()["kernels_launched"] - before == 1


@pytest.mark.skipif(not ON_GPU, reason="the host round trip of a draw on a GPU")
def test_an_empty_draw_is_not_counted_as_a_round_trip():
    """An empty draw (Dask makes one for each random collection's meta) moves no data between
    host and device: no fallback is counted or shown."""
    before = numloom.stats()["fallbacks"].get("random.uniform", 0)
    made = numloom.random.default_rng(3).uniform(0.0, 1.0, size=(0,))
    assert made.shape == (0,) and made.device != "cpu"
    assert numloom.stats()["fallbacks"].get("random.uniform", 0) == before


def test_scalar_draws_are_numpys_own_at_once():
    """``np.random.random()`` in a Python loop (a random walk): NumPy's scalar from NumPy's
    stream, with nothing to evaluate."""
    calls = [
        lambda r: r.random(), lambda r: r.rand(), lambda r: r.randint(0, 10),
        lambda r: r.normal(), lambda r: r.uniform(-1, 1), lambda r: r.randint(5, dtype=numpy.int8),
        lambda r: r.choice(7), lambda r: r.standard_normal(),
    ]
    for seed in (0, 7):
        numpy.random.seed(seed)
        want = [call(numpy.random) for call in calls for _ in range(3)]
        numloom.random.seed(seed)
        before = numloom.stats()["plans_evaluated"]
        got = [call(numloom.random) for call in calls for _ in range(3)]
        assert [type(g) for g in got] == [type(w) for w in want] and got == want
        assert numloom.stats()["plans_evaluated"] == before
    rng, ref = numloom.random.default_rng(3), numpy.random.default_rng(3)
    assert [rng.random(), rng.integers(9), rng.normal()] == [ref.random(), ref.integers(9),
                                                             ref.normal()]  # fmt: skip


def test_generator_and_random_state_are_classes_as_numpys():
    """``isinstance(rng, np.random.Generator)`` (a program's check of a seed argument) works,
    and the classes construct as NumPy's do."""
    rng = numloom.random.default_rng(7)
    assert isinstance(rng, numloom.random.Generator) and isinstance(numloom.random.Generator, type)
    assert isinstance(numloom.random.RandomState(3), numloom.random.RandomState)
    made = numloom.random.Generator(numpy.random.PCG64(1)).random(3)
    numpy.testing.assert_array_equal(numloom.asnumpy(made), numpy.random.Generator(numpy.random.PCG64(1)).random(3))
    legacy = numloom.random.RandomState(5).rand(3)
    numpy.testing.assert_array_equal(  # (a GPU draws a Philox stream of the seed: module doc)
        numloom.asnumpy(legacy),
        numloom.asnumpy(numloom.random.RandomState(5).rand(3)) if ON_GPU
        else numpy.random.RandomState(5).rand(3))  # fmt: skip
    with pytest.raises(AttributeError, match="capsule"):
        numloom.random.Generator(5)  # (NumPy's error: a BitGenerator is wanted)


def test_scalar_draws_in_a_loop_are_numpys_numbers_and_types():
    """A loop's scalar draws (``np.random.random() < p``, ``normal(0, 2)``, ``randint(10)``,
    a Generator's ``normal()``) go straight to NumPy's generator: its numbers and its Python or
    NumPy scalar types, in the same order as the same seed's NumPy run."""

    def draws(xp):
        xp.random.seed(3)
        r = [xp.random.random(), xp.random.normal(), xp.random.normal(1, 2.0), xp.random.rand(),
             xp.random.randint(10), xp.random.randint(3, 9), xp.random.uniform(),
             xp.random.uniform(2, 5), xp.random.randn(), xp.random.exponential(),
             xp.random.random_sample(), xp.random.normal(numpy.float64(1.5)),
             xp.random.randint(xp.sum(xp.arange(10) > 4)),  # (Schelling's ``randint(num_empty)``)
             xp.random.uniform(xp.arange(4.0).max(), 9.0)]
        g = xp.random.default_rng(5)
        return r + [g.normal(), g.uniform(1, 2), g.exponential(3.0), g.random(), g.normal(0, 1),
                    g.standard_normal(), g.integers(10), g.integers(3, 9, endpoint=True),
                    g.integers(5, dtype=numpy.int8), g.random(dtype=numpy.float32)]

    got, want = draws(numloom), draws(numpy)
    assert got == want and [type(x) for x in got] == [type(x) for x in want]
