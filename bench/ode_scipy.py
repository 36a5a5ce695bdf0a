#!/usr/bin/python3
"""Baseline for issue 7: the risk ODE of docs/theory.md §3 with SciPy's LSODA, the way a
user would write it (vectorised right-hand side, no Jacobian structure), on the same
model and tolerances as `hdpsgd ode`. Prints JSON: seconds per solve and the final risk.
Usage: ode_scipy.py BINS GAMMA RTOL ATOL [REPEATS [C RHO POINTS]]
(defaults: 5 repeats, c = 0.3, rho = 0.5, 101 output points: hdpsgd's default model)"""
import json, math, sys, time
import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import erf, erfc

bins, gamma, rtol, atol = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
repeats = int(sys.argv[5]) if len(sys.argv) > 5 else 5
# the default model of hdpsgd: power law alpha = 0.5 (isotropic for one bin), c = 0.3,
# rho = 0.5, tau2 = 0.25, optimal schedule c1 = c2 = c3 = 1; c, rho and the number of
# output points can be given
c, rho, tau2, c1 = 0.3, 0.5, 0.25, 1.0
points = 101
if len(sys.argv) > 8:
    c, rho, points = float(sys.argv[6]), float(sys.argv[7]), int(sys.argv[8])
a = gamma * max(1.0, 1.0 / rho)
if bins == 1:
    lam, w = np.array([1.0]), np.array([1.0])
else:
    lam = np.arange(1, bins + 1, dtype=float) ** -0.5
    lam *= bins / lam.sum()
    w = np.full(bins, 1.0 / bins)

def factors(R):
    s = R + tau2 / 2
    A = c / (2 * math.sqrt(s))
    mu = math.erf(A)
    nu = math.erf(A) - 2 * A / math.sqrt(math.pi) * math.exp(-A * A) + 2 * A * A * math.erfc(A)
    return mu, nu * s

def rhs(t, D):
    R = float(np.dot(w * lam, D))
    mu, V = factors(max(R, 0.0))
    eta = c1 / (t + a)
    sig2 = 2 * c1 * c1 / (rho * rho * (t + a) ** 3)
    return -2 * lam * eta * mu * D + gamma * lam * eta * eta * V + 2 * c * c * gamma * gamma * sig2

D0 = np.full(bins, 0.5)
best = 1e9
for _ in range(repeats):
    t0 = time.perf_counter()
    sol = solve_ivp(rhs, (0, 1), D0, method="LSODA", rtol=rtol, atol=atol, t_eval=np.linspace(0, 1, points))
    best = min(best, time.perf_counter() - t0)
R1 = float(np.dot(w * lam, sol.y[:, -1]))
print(json.dumps({"bins": bins, "seconds": best, "final_risk_before_noise": R1, "nfev": int(sol.nfev),
                  "njev": int(sol.njev), "nlu": int(sol.nlu)}))
