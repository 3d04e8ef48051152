"""An n-body simulation: the accelerations from a Python kernel, the step in array code.

    python examples/nbody.py [--bodies 4096] [--steps 10] [--numpy]

``accelerations`` is a kernel written in numba.cuda's vocabulary (``numloom.cuda``): one
thread a body, summing the pull of every other body. It runs on a GPU, or compiled to C with
OpenMP on the CPU, and is ordered with the array code around it (the leapfrog update).
``--numpy`` computes the accelerations with NumPy broadcasting instead, for comparison.
"""

from __future__ import annotations

import argparse
import math
import time

from numloom import cuda

SOFTENING = 1e-3


@cuda.jit
def accelerations(pos, mass, acc):
    i = cuda.grid(1)
    if i < pos.shape[0]:
        ax = 0.0
        ay = 0.0
        az = 0.0
        for j in range(pos.shape[0]):
            dx = pos[j, 0] - pos[i, 0]
            dy = pos[j, 1] - pos[i, 1]
            dz = pos[j, 2] - pos[i, 2]
            r2 = dx * dx + dy * dy + dz * dz + SOFTENING
            inv = mass[j] / (r2 * math.sqrt(r2))
            ax += dx * inv
            ay += dy * inv
            az += dz * inv
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


def numpy_accelerations(np, pos, mass):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d * d).sum(axis=2) + SOFTENING
    return (d * (mass[None, :] / (r2 * np.sqrt(r2)))[:, :, None]).sum(axis=1)


def simulate(np, bodies: int, steps: int, dt=1e-3, kernel=True, seed=1):
    rng = np.random.default_rng(seed)
    pos = rng.standard_normal((bodies, 3))
    vel = np.zeros((bodies, 3))
    mass = rng.uniform(0.5, 1.5, bodies) / bodies
    acc = np.zeros((bodies, 3))
    threads = 128
    blocks = (bodies + threads - 1) // threads
    for _ in range(steps):
        if kernel:
            accelerations[blocks, threads](pos, mass, acc)
        else:
            acc = numpy_accelerations(np, pos, mass)
        vel += dt * acc
        pos += dt * vel
    return pos, vel


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--numpy", action="store_true", help="NumPy broadcasting instead")
    args = parser.parse_args(argv)
    if args.numpy:
        import numpy as np
    else:
        import numloom as np
    start = time.perf_counter()
    pos, vel = simulate(np, args.bodies, args.steps, kernel=not args.numpy)
    energy = float(0.5 * (vel * vel).sum())
    took = time.perf_counter() - start
    print(f"{args.bodies} bodies, {args.steps} steps: kinetic energy {energy:.6e}, "
          f"{took * 1e3:.0f} ms")  # fmt: skip
    return pos, vel


if __name__ == "__main__":
    main()
