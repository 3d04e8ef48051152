"""What a GPU kernel's floating-point notes cost (numloom.h's ``NL_FE_F``: each value an
error would show in is checked where it is made): ``numloom.jit`` workloads with the notes as
numloom compiles them, against the same kernels with the notes defined away, each variant in
its own process (and compile cache), alternated.

    python benchmarks/fp_notes.py [--repeat 50] [--rounds 2] [--variants fma,none]

Variants: ``fma`` (numloom's: a fused multiply-add of the value by 0 into a per-thread sum),
``none`` (no note; the launcher still waits for the flag word), ``ignore`` (no note, called
under ``np.errstate(all="ignore")``: nothing is read, the floor) and ``bits`` (an integer test
of the value's exponent, OR-ed into a per-thread word). Each figure is the median milliseconds of a call and its sync;
results are checked against NumPy first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads as wl  # noqa: E402

VARIANTS = {
    "fma": "",
    "none": "#undef NL_FE_F\n#undef NL_FE_D\n#define NL_FE_F(v) (v)\n#define NL_FE_D(v) (v)\n",
    "ignore": "#undef NL_FE_F\n#undef NL_FE_D\n#define NL_FE_F(v) (v)\n#define NL_FE_D(v) (v)\n",
    "bits": (
        "#undef NL_FE_F\n#undef NL_FE_D\n"
        "NL_FN float nl_fe_bits_f(float v, int &s) {\n"
        "    s |= (__float_as_int(v) & 0x7f800000) == 0x7f800000;\n    return v;\n}\n"
        "NL_FN double nl_fe_bits_d(double v, int &s) {\n"
        "    s |= (__double2hiint(v) & 0x7ff00000) == 0x7ff00000;\n    return v;\n}\n"
        "#define NL_FE_F(v) nl_fe_bits_f((v), nl_fe_i)\n"
        "#define NL_FE_D(v) nl_fe_bits_d((v), nl_fe_i)\n"
    ),
}


def cases():
    rng = numpy.random.default_rng(0)
    re = numpy.linspace(-2.0, 1.0, 2048, dtype=numpy.float32)
    im = numpy.linspace(-1.5, 1.5, 2048, dtype=numpy.float32)
    cr, ci = numpy.meshgrid(re, im)
    s, x, t = wl.blackscholes_inputs(10**8, rng)
    logits = rng.standard_normal((8192, 4096)).astype(numpy.float32)
    return [
        ("mandelbrot 2048x2048 x50 f32", lambda xp, a, b: wl.mandelbrot(xp, a, b, 50), (cr, ci)),
        ("blackscholes 1e8 f32", lambda xp, a, b, c: wl.blackscholes(xp, a, b, c)[0], (s, x, t)),
        ("softmax 8192x4096 f32", wl.softmax, (logits,)),
    ]


def child(variant: str, repeat: int) -> dict:
    import numloom
    from numloom.compile import render_cuda

    prelude = VARIANTS[variant]
    plain = render_cuda.render_cuda

    def render(k):
        return plain(k).replace('#include "numloom.h"\n', '#include "numloom.h"\n' + prelude, 1)

    render_cuda.render_cuda = render
    numloom.set_device("cuda")
    out = {}
    state = dict(all="ignore") if variant == "ignore" else dict(all="warn", under="ignore")
    for name, fn, host in cases():
        arrays = [numloom.asarray(a) for a in host]
        jitted = numloom.jit(lambda *a, fn=fn: fn(numloom, *a))
        with numpy.errstate(all="ignore"):
            want = fn(numpy, *host)
        with numpy.errstate(**state):  # (traced and replayed under this state)
            got = numpy.asarray(jitted(*arrays))
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                jitted(*arrays)
                numloom.sync()
                times.append((time.perf_counter() - t0) * 1e3)
        if got.dtype.kind == "f":
            numpy.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)
        else:
            assert numpy.mean(got != want) < 1e-3, name
        out[name] = statistics.median(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--variants", default="fma,none")
    parser.add_argument("--child", default=None)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.repeat)))
        return
    variants = args.variants.split(",")
    figures: dict = {}
    for _ in range(args.rounds):
        for variant in variants:
            with tempfile.TemporaryDirectory() as cache:
                env = {**os.environ, "NUMLOOM_CACHE_DIR": cache}
                run = subprocess.run([sys.executable, __file__, "--child", variant,
                                      "--repeat", str(args.repeat)], env=env,
                                     capture_output=True, text=True, check=True)  # fmt: skip
            for name, ms in json.loads(run.stdout.strip().splitlines()[-1]).items():
                figures.setdefault(name, {}).setdefault(variant, []).append(ms)
    print("numloom.jit, median ms per call + sync; one figure per round")
    print()
    print("| workload | " + " | ".join(variants) + " |")
    print("| --- |" + " ---: |" * len(variants))
    for name, by in figures.items():
        cells = [", ".join(f"{ms:.3f}" for ms in by[v]) for v in variants]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
