"""An image filter chain: a Gaussian blur, Sobel edges and a threshold, on a synthetic image.

    python examples/image_filters.py [--size 4096] [--numpy]

Each filter is array slicing and arithmetic, as NumPy image code is written; numloom fuses the
Sobel magnitude and the threshold into one kernel.
"""

from __future__ import annotations

import argparse
import time


def synthetic(np, size: int):
    """A float32 test image: rings and a bright square."""
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / size
    image = np.sin(40.0 * ((x - 0.5) ** 2 + (y - 0.5) ** 2))
    image[size // 4 : size // 2, size // 4 : size // 2] += 1.0
    return image.astype(np.float32)


def blur(np, image):
    """A 3x3 Gaussian blur (weights 1-2-1 by 1-2-1, over 16) of the interior."""
    rows = image[:-2, :] + 2 * image[1:-1, :] + image[2:, :]
    return (rows[:, :-2] + 2 * rows[:, 1:-1] + rows[:, 2:]) / 16


def sobel(np, image):
    gx = (image[:-2, 2:] + 2 * image[1:-1, 2:] + image[2:, 2:]
          - image[:-2, :-2] - 2 * image[1:-1, :-2] - image[2:, :-2])  # fmt: skip
    gy = (image[2:, :-2] + 2 * image[2:, 1:-1] + image[2:, 2:]
          - image[:-2, :-2] - 2 * image[:-2, 1:-1] - image[:-2, 2:])  # fmt: skip
    return np.sqrt(gx * gx + gy * gy)


def edges(np, image, threshold=0.5):
    magnitude = sobel(np, blur(np, image))
    return magnitude > threshold * magnitude.max()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--numpy", action="store_true", help="run with NumPy instead")
    args = parser.parse_args(argv)
    if args.numpy:
        import numpy as np
    else:
        import numloom as np
    image = synthetic(np, args.size)
    start = time.perf_counter()
    found = edges(np, image)
    count = int(found.sum())
    took = time.perf_counter() - start
    print(f"{args.size}x{args.size} image: {count:,} edge pixels, {took * 1e3:.0f} ms")
    return found


if __name__ == "__main__":
    main()
