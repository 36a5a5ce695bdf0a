#!/usr/bin/python3
"""Baseline for issue 7: a straightforward NumPy loop of one-pass DP-SGD (docs/theory.md §1),
one run, per-step vectorised over d, the way a user would write it.
Usage: sim_numpy.py D GAMMA [STEPS_TO_TIME]; prints JSON with the time per step and the
extrapolated time per run (n = D/GAMMA steps)."""
import json, math, sys, time
import numpy as np

d, gamma = int(sys.argv[1]), float(sys.argv[2])
n = round(d / gamma)
steps = int(sys.argv[3]) if len(sys.argv) > 3 else min(n, 20000)
c, rho, tau2, c1 = 0.3, 0.5, 0.25, 1.0
a = gamma * max(1.0, 1.0 / rho)
lam = np.arange(1, d + 1, dtype=float) ** -0.5
lam *= d / lam.sum()
sq = np.sqrt(lam)
rng = np.random.default_rng(1)
theta_star = rng.standard_normal(d)
theta_star /= np.linalg.norm(theta_star)
e = -theta_star.copy()
C = c * math.sqrt(d)
eta = lambda k: c1 / (k / n + a) / n
t0 = time.perf_counter()
for k in range(steps):
    x = sq * rng.standard_normal(d)
    r = x @ e - math.sqrt(tau2) * rng.standard_normal()
    g = r * x
    gn = abs(r) * np.linalg.norm(x)
    ek, ek1 = eta(k), eta(k + 1)
    sigma = math.sqrt(max(ek * ek - ek1 * ek1, 0.0)) / rho
    e -= ek * g / max(1.0, gn / C)
    e += 2 * C * sigma * rng.standard_normal(d)
dt = time.perf_counter() - t0
print(json.dumps({"d": d, "n": n, "steps_timed": steps, "seconds_per_step": dt / steps,
                  "seconds_per_run": dt / steps * n, "risk": float(0.5 * np.dot(lam, e * e))}))
