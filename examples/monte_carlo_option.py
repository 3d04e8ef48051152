"""A Monte Carlo pricer for a European call, checked against Black-Scholes' closed form.

    python examples/monte_carlo_option.py [--paths 10000000] [--numpy]

Every path is one geometric-Brownian-motion step to expiry; the price is the discounted mean
payoff. With numloom the draw, the payoff and the mean run as a few kernels on the default
device (a GPU when one is usable); ``--numpy`` runs the same code with NumPy.
"""

from __future__ import annotations

import argparse
import math
import time


def price(np, paths: int, spot=100.0, strike=105.0, rate=0.03, vol=0.2, years=1.0, seed=7):
    """The call's price: the mean of max(S_T - K, 0) over ``paths`` draws, discounted."""
    z = np.random.default_rng(seed).standard_normal(paths)
    s_t = spot * np.exp((rate - 0.5 * vol * vol) * years + vol * math.sqrt(years) * z)
    payoff = np.maximum(s_t - strike, 0.0)
    return float(math.exp(-rate * years) * payoff.mean()), float(payoff.std() / math.sqrt(paths))


def black_scholes(spot=100.0, strike=105.0, rate=0.03, vol=0.2, years=1.0) -> float:
    d1 = (math.log(spot / strike) + (rate + 0.5 * vol * vol) * years) / (vol * math.sqrt(years))
    d2 = d1 - vol * math.sqrt(years)
    cdf = lambda x: 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))  # noqa: E731
    return spot * cdf(d1) - strike * math.exp(-rate * years) * cdf(d2)


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=10_000_000)
    parser.add_argument("--numpy", action="store_true", help="run with NumPy instead")
    args = parser.parse_args(argv)
    if args.numpy:
        import numpy as np
    else:
        import numloom as np
    start = time.perf_counter()
    estimate, error = price(np, args.paths)
    took = time.perf_counter() - start
    exact = black_scholes()
    print(f"Monte Carlo {estimate:.4f} (± {error:.4f}), Black-Scholes {exact:.4f}, "
          f"{args.paths:,} paths in {took * 1e3:.0f} ms")  # fmt: skip
    return estimate


if __name__ == "__main__":
    main()
