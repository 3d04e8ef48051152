"""k-means clustering of random points (Lloyd's algorithm, vectorized).

    python examples/kmeans.py [--points 1000000] [--k 8] [--iterations 20] [--numpy]

Each iteration finds every point's nearest center (a broadcast distance and an argmin), then
moves each center to the mean of its points (a one-hot product). numloom fuses the distances
and the argmin into one kernel.
"""

from __future__ import annotations

import argparse
import time


def kmeans(np, points, k: int, iterations: int):
    centers = points[:k].copy()
    ids = np.arange(k)
    for _ in range(iterations):
        distances = ((points[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
        labels = distances.argmin(axis=1)
        onehot = (labels[:, None] == ids[None, :]).astype(points.dtype)
        counts = onehot.sum(axis=0)
        centers = (onehot.T @ points) / np.maximum(counts, 1)[:, None]
    return centers, labels


def blobs(np, n: int, k: int, seed=0):
    """``n`` points around ``k`` random centers in 2-D (float32)."""
    rng = np.random.default_rng(seed)
    middles = rng.uniform(-10.0, 10.0, (k, 2))
    which = rng.integers(0, k, n)
    return (middles[which] + rng.standard_normal((n, 2))).astype(np.float32)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--numpy", action="store_true", help="run with NumPy instead")
    args = parser.parse_args(argv)
    if args.numpy:
        import numpy as np
    else:
        import numloom as np
    points = blobs(np, args.points, args.k)
    start = time.perf_counter()
    centers, labels = kmeans(np, points, args.k, args.iterations)
    sizes = np.bincount(labels, minlength=args.k)
    took = time.perf_counter() - start
    print(f"{args.points:,} points, k={args.k}, {args.iterations} iterations in "
          f"{took * 1e3:.0f} ms; cluster sizes {sizes.tolist()}")  # fmt: skip
    return centers, labels


if __name__ == "__main__":
    main()
