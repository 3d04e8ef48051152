"""Heat spreading through a plate: Jacobi sweeps of a 5-point stencil, in place.

    python examples/heat.py [--size 2048] [--steps 500] [--numpy]

The top edge is held hot; each sweep sets every interior point to the mean of itself and its
four neighbours. The sweep writes through a view of the grid (``center[:] = ...``), as NumPy
code does; numloom fuses each sweep into one kernel and, on a GPU, launches them as graphs.
"""

from __future__ import annotations

import argparse
import time


def heat(np, size: int, steps: int):
    grid = np.zeros((size, size))
    grid[0, :] = 100.0  # the hot edge
    center = grid[1:-1, 1:-1]
    north, south = grid[:-2, 1:-1], grid[2:, 1:-1]
    west, east = grid[1:-1, :-2], grid[1:-1, 2:]
    for _ in range(steps):
        center[:] = 0.2 * (center + north + south + west + east)
    return grid


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--numpy", action="store_true", help="run with NumPy instead")
    args = parser.parse_args(argv)
    if args.numpy:
        import numpy as np
    else:
        import numloom as np
    start = time.perf_counter()
    grid = heat(np, args.size, args.steps)
    mean = float(grid.mean())
    took = time.perf_counter() - start
    print(f"{args.size}x{args.size} plate, {args.steps} sweeps: mean temperature {mean:.6f}, "
          f"{took * 1e3:.0f} ms")  # fmt: skip
    return grid


if __name__ == "__main__":
    main()
