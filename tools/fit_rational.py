"""Fits the rational approximations of erf and tanh that the CPU kernels use
(csrc/kernels/common/Math.h) and prints their coefficients.

Both functions are odd, so each is fitted as f(x) = x P(x^2) / Q(x^2) with
Q(0) = 1 on [0, clamp], where beyond `clamp` the kernels hold x at the clamp
(erf(3.92) and tanh(7.9) are within 3e-7 of 1). The fit minimises the largest
relative error: weighted linear least squares of P - f Q, reweighted by
Lawson's rule towards the minimax solution.

    python3 tools/fit_rational.py

Prints, for each function, the coefficients (lowest degree first) and the
largest relative error in float64 and in a float32 evaluation over
[-2 clamp, 2 clamp].
"""

from __future__ import annotations

import math

import numpy as np

# name: (the function, clamp, degree of P, degree of Q)
FITS = {
    "erf": (np.vectorize(math.erf), 3.92, 6, 4),
    "tanh": (np.tanh, 7.9, 5, 3),
}


def fit(f, clamp: float, p_degree: int, q_degree: int, rounds: int = 200):
    """The coefficients of P and Q (lowest degree first) and their largest
    relative error on (0, clamp]."""
    x = np.linspace(1e-4, clamp, 40000)
    t = x * x
    target = f(x) / x
    basis_p = np.vander(t, p_degree + 1, increasing=True)
    basis_q = np.vander(t, q_degree + 1, increasing=True)[:, 1:]
    system = np.concatenate([basis_p, -target[:, None] * basis_q], axis=1)
    lawson = np.ones_like(x)
    q_previous = np.ones_like(x)
    best = None
    for _ in range(rounds):
        # Dividing by f Q of the last round makes the residual P - f Q a
        # relative error of P / Q.
        weight = lawson / (target * q_previous)
        solution, *_ = np.linalg.lstsq(system * weight[:, None], target * weight, rcond=None)
        p = solution[:p_degree + 1]
        q = np.concatenate([[1.0], solution[p_degree + 1:]])
        q_previous = np.polyval(q[::-1], t)
        error = np.abs(np.polyval(p[::-1], t) / q_previous - target) / target
        if best is None or error.max() < best[2]:
            best = (p, q, error.max())
        lawson = lawson * (error / error.max()) ** 0.3 + 1e-12
        lawson /= lawson.mean()
    return best


def float32_error(f, clamp: float, p: np.ndarray, q: np.ndarray) -> float:
    """The largest error relative to max(|f|, 2^-126) of x P(x^2) / Q(x^2)
    evaluated in float32 as the kernels do (Horner's scheme)."""
    x = np.linspace(-2 * clamp, 2 * clamp, 2_000_001).astype(np.float32)
    held = np.clip(x, np.float32(-clamp), np.float32(clamp))
    t = held * held
    numerator = np.zeros_like(t)
    for c in p[::-1].astype(np.float32):
        numerator = numerator * t + c
    denominator = np.zeros_like(t)
    for c in q[::-1].astype(np.float32):
        denominator = denominator * t + c
    approx = held * (numerator / denominator)
    exact = f(x.astype(np.float64))
    return float((np.abs(approx - exact) / np.maximum(np.abs(exact), 2.0 ** -126)).max())


def main() -> None:
    for name, (f, clamp, p_degree, q_degree) in FITS.items():
        p, q, error = fit(f, clamp, p_degree, q_degree)
        print(f"{name}: clamp {clamp}, P degree {p_degree}, Q degree {q_degree}")
        print("  P:", ", ".join(f"{np.float32(c).item()!r}f" for c in p))
        print("  Q:", ", ".join(f"{np.float32(c).item()!r}f" for c in q))
        print(f"  relative error {error:.2e} (float64), "
              f"{float32_error(f, clamp, p, q):.2e} (float32)")


if __name__ == "__main__":
    main()
