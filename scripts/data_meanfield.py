#!/usr/bin/env python3
"""Row-resolved mean-field model of clipped one-pass SGD on a small data set (docs/theory.md §9.5).

Usage: data_meanfield.py FEATURES.npy LABELS.npy --positive 0,2,4,6,8 [--c C] [--gamma G]
                         [--rho RHO] [--n N] [--diag] [--quadrature] [--mcm] [--sim SIM.csv] [--csv OUT]

Prepares the rows as `hdpsgd` does (centred, labels +1 for the listed classes and -1 else, centred;
rows scaled to trace d, rotated into the eigenbasis; theta* the minimum-norm least squares), then
runs, step by step with the inverse-time schedule c1 = c2 = c3 = 1 (eta~ = 1/(t + a),
a = gamma max(1, 1/rho), n = round(d/gamma) steps or --n; rho < inf: the private noise
(2 c sqrt(d) sigma_k)^2 I of hdpsgd's hdp_sched_step added to C at every step), the recursion
of the mean iterate m_k and the covariance C_k of the fluctuation about it, both over the rows:

  r_i = x_i^T m - y_i, s_i^2 = x_i^T C x_i, xi ~ N(0, s_i^2), psi = clamp(r_i + xi, +-kappa_i),
  kappa_i = c sqrt(d) / ||x_i||,   g = mean_i x_i E[psi],   H = mean_i P(|r_i + xi| < kappa_i) x_i x_i^T,
  Q = mean_i E[psi^2] x_i x_i^T - g g^T,   m <- m - eta g,   C <- C - eta (H C + C H) + eta^2 Q,

and prints the excess risk 1/2 ||m - theta*||^2_Sigma + 1/2 tr(Sigma C), split into the mean's
part and the fluctuation's. --diag keeps only diag(C) in the eigenbasis (the structure of the
ODE of §3). The expectations over xi are in closed form (normal cdf and density), as
`hdpsgd ode` with ode.model = rows computes them; --quadrature takes them by 24-point
Gauss-Hermite quadrature instead (the first version of this script). The update of C is the
exact one-step covariance for a Gaussian fluctuation (Stein's lemma; Q holds the rows' fourth
moments); --mcm takes the first version's C <- (I - eta H) C (I - eta H)^T + eta^2 Q, which
counts eta^2 H C H once more. O(N d^2) per step: for
small d (scikit-learn's digits: 2 minutes on one core).
--sim: an `hdpsgd sim` CSV of the same model, compared at the printed times.
--csv OUT: the risk after every step k = 0..n, one line "k,risk,test_mse" (the check of the
program's ode.model = rows, tests/cli/data_meanfield.sh); --test TEST_FEATURES TEST_LABELS:
held-out rows, whose mean squared error E[(y - x^T theta)^2] over theta ~ (m, C) is the third
column (nan without them).
"""
import argparse
import csv

import numpy as np
from scipy.special import ndtr


def clamp_moments(r, s, k):
    """E clamp(r + s xi, +-k), E clamp^2 and P(|r + s xi| < k), xi ~ N(0, 1), in closed form."""
    if np.all(np.isinf(k)):  # c = inf: no clipping
        return r, r * r + s * s, np.ones_like(r)
    ok = s > 0
    sd = np.where(ok, s, 1.0)
    a, b = (-k - r) / sd, (k - r) / sd
    lo, hi = ndtr(a), ndtr(-b)
    P = np.where(a > 0, ndtr(-a) - hi, np.where(b < 0, ndtr(b) - lo, 1.0 - lo - hi))
    pa, pb = np.exp(-0.5 * a * a) / np.sqrt(2 * np.pi), np.exp(-0.5 * b * b) / np.sqrt(2 * np.pi)
    e1 = -k * lo + k * hi + r * P + s * (pa - pb)
    e2 = k * k * (lo + hi) + r * r * P + 2 * r * s * (pa - pb) + s * s * (P + a * pa - b * pb)
    v = np.clip(r, -k, k)
    return (np.where(ok, e1, v), np.where(ok, e2, v * v),
            np.where(ok, P, (np.abs(r) < k).astype(float)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("features"); ap.add_argument("labels")
    ap.add_argument("--positive", required=True); ap.add_argument("--c", type=float, default=0.3)
    ap.add_argument("--gamma", type=float, default=0.02); ap.add_argument("--diag", action="store_true")
    ap.add_argument("--sim"); ap.add_argument("--rho", type=float, default=float("inf"))
    ap.add_argument("--n", type=int, default=0); ap.add_argument("--quadrature", action="store_true")
    ap.add_argument("--mcm", action="store_true")
    ap.add_argument("--csv"); ap.add_argument("--test", nargs=2, metavar=("TEST_FEATURES", "TEST_LABELS"))
    a = ap.parse_args()
    X = np.load(a.features).astype(np.float64); y = np.load(a.labels).astype(np.float64)
    pos = [float(v) for v in a.positive.split(",")]
    y = np.where(np.isin(y, pos), 1.0, -1.0)
    mx, my = X.mean(0), y.mean()
    X = X - mx; y = y - my
    N, d = X.shape
    S = X.T @ X / N; sc = np.sqrt(d / np.trace(S)); X *= sc
    lam, U = np.linalg.eigh(X.T @ X / N); lam, U = np.maximum(lam[::-1], 0), U[:, ::-1]
    X = X @ U
    ok = lam > 1e-12 * lam[0]
    th = np.where(ok, (X.T @ y / N) / np.where(ok, lam, 1), 0)
    tmom = None
    if a.test:  # the held-out rows prepared as the training rows, their moments about theta*
        Xt = (np.load(a.test[0]).astype(np.float64) - mx) * sc @ U
        yt = np.load(a.test[1]).astype(np.float64)
        yt = np.where(np.isin(yt, pos), 1.0, -1.0) - my
        zt = yt - Xt @ th
        tmom = (Xt.T @ Xt / len(yt), Xt.T @ zt / len(yt), np.mean(zt * zt))
    test_mse = lambda e, C: (e @ tmom[0] @ e + np.sum(tmom[0] * C) - 2 * e @ tmom[1] + tmom[2]
                             if tmom else float("nan"))
    kap = a.c * np.sqrt(d) / np.maximum(np.sqrt((X * X).sum(1)), 1e-300)
    gx, gw = np.polynomial.hermite_e.hermegauss(24); gw = gw / gw.sum()
    n = a.n or int(round(d / a.gamma))  # inverse time, c1 = c2 = c3 = 1
    at = a.gamma * max(1.0, 1.0 / a.rho)
    eta_of = lambda k: 1.0 / (k / n + at) / n
    C_clip = a.c * np.sqrt(d)
    m = np.zeros(d); C = np.zeros((d, d)); eye = np.eye(d)
    times = {int(round(f * n)): f for f in (0.1, 0.2, 0.5, 1.0)}
    sim = None
    if a.sim:
        rows = [r for r in csv.reader(l for l in open(a.sim) if not l.startswith("#"))]
        sim = {h: [float(r[i]) for r in rows[1:]] for i, h in enumerate(rows[0])}
    out = open(a.csv, "w") if a.csv else None
    if out:
        out.write(f"0,{0.5 * np.sum(lam * th * th):.17g},{test_mse(-th, C):.17g}\n")
    for k in range(n):
        eta = eta_of(k)
        if np.isinf(a.rho):
            noise2 = 0.0
        else:  # hdp_sched_step's sigma_k, the noise 2 C sigma_k per coordinate
            var = (eta * eta - eta_of(k + 1) ** 2) if k < n - 1 else eta * eta
            noise2 = (2.0 * C_clip) ** 2 * max(var, 0.0) / a.rho ** 2
        r = X @ m - y
        if a.quadrature:
            s = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", X, C, X), 1e-300))
            A = np.clip(r[:, None] + s[:, None] * gx[None, :], -kap[:, None], kap[:, None])
            E1, E2 = A @ gw, (A * A) @ gw
            P = ndtr((kap - r) / s) - ndtr((-kap - r) / s)
        else:
            E1, E2, P = clamp_moments(r, np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", X, C, X), 0)), kap)
        g = X.T @ E1 / N
        H = (X * P[:, None]).T @ X / N
        Q = (X * E2[:, None]).T @ X / N - np.outer(g, g)
        if a.diag:
            H, Q = np.diag(np.diag(H)), np.diag(np.diag(Q))
        m = m - eta * g
        if a.mcm:  # the first version's form: eta^2 H C H once more
            M = eye - eta * H
            C = M @ C @ M.T + eta * eta * Q + noise2 * eye
        else:
            C = C - eta * (H @ C + C @ H) + eta * eta * Q + noise2 * eye
        if out:
            out.write(f"{k + 1},{0.5 * np.sum(lam * (m - th) ** 2) + 0.5 * np.sum(lam * np.diag(C)):.17g},"
                      f"{test_mse(m - th, C):.17g}\n")
        if k + 1 in times:
            e = m - th; mp = 0.5 * np.sum(lam * e * e); fl = 0.5 * np.sum(lam * np.diag(C))
            line = f"t = {times[k + 1]:.2f}: R = {mp + fl:.6g} (mean {mp:.6g}, fluctuation {fl:.6g})"
            if sim:
                i = min(range(len(sim["t"])), key=lambda j: abs(sim["t"][j] - times[k + 1]))
                line += f"; Monte Carlo {sim['mean'][i]:.6g} +- {sim['stderr'][i]:.2g} ({100 * ((mp + fl) / sim['mean'][i] - 1):+.2f} %)"
            print(line, flush=True)


if __name__ == "__main__":
    main()
