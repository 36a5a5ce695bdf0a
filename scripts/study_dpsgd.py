#!/usr/bin/env python3
"""study_dpsgd.py — the designed one-pass scheme against standard Poisson DP-SGD at equal
privacy budgets, on a synthetic model (docs/study-dpsgd.md, issue 33).

    scripts/study_dpsgd.py BIN [OUTDIR] [--quick]

For each epsilon in {0.5, 1, 2, 4, 8} at delta = 1e-5, on the default model (d = 200,
n = 2000 samples, power-law spectrum, tau^2 = 0.25):

  * one pass, designed: `schedule --optimize --tune-clip` at privacy.epsilon = epsilon (the ODE's
    best schedule and clipping constant; its predicted final risk), then `sim` of that table
    (the simulated risk);
  * standard DP-SGD with Poisson sampling on N = n = 2000 rows, tuned by a sweep over batch B,
    epochs E, learning rate eta~ (constant schedule) and clipping constant c, the noise
    multiplier calibrated by the PLD accountant (`accountant --epsilon`):
      - "add/remove": at (epsilon, delta) add/remove, the convention of Opacus and TF Privacy;
      - "replace-one": at (epsilon/2, delta/(1 + e^(epsilon/2))) add/remove, which by group
        privacy is (epsilon, delta) under replace-one neighbours, the one-pass scheme's relation
        (docs/theory.md §6.1, §6.6);
    each configuration simulated with 20 runs: a coarse grid, then a local search from its best
    point (a factor 2 up or down one axis at a time, past the grid's edges) until no neighbour
    is better; the best one (lowest mean final risk) simulated again with 200 runs on another
    seed (no winner's curse in the number reported).

Writes OUTDIR/study-dpsgd.csv (one row per epsilon) and OUTDIR/study-dpsgd.png (gnuplot),
and prints the table. --quick: a reduced sweep (the whole study takes ~15 minutes on 2 cores).
"""
import csv
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile

EPS = [0.5, 1, 2, 4, 8]
DELTA = 1e-5
N = 2000  # = data.n of the default model (d = 200, gamma = 0.1)


def run(cmd, check=True):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def calibrate(bin_, B, E, eps, delta):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        p = run([bin_, "accountant", "--sample-rate", repr(B / N), "--epsilon", repr(eps),
                 "--epochs", str(E), "--delta", repr(delta), "--json", f.name], check=False)
        if p.returncode != 0:
            return None
        return json.load(open(f.name))["noise_multiplier"]


def sim(bin_, sets, runs, seed, work):
    out = os.path.join(work, "s.json")
    cmd = [bin_, "sim", "--runs", str(runs), "--seed", str(seed), "-o", os.path.join(work, "s.csv"),
           "--json", out]
    for s in sets:
        cmd += ["--set", s]
    p = run(cmd, check=False)
    if p.returncode != 0:
        return None
    d = json.load(open(out))
    if d["diverged_runs"] > 0:
        return None
    return d


def designed(bin_, eps, work):
    tab = os.path.join(work, f"designed-{eps}.tab")
    js = os.path.join(work, f"designed-{eps}.json")
    run([bin_, "schedule", "--optimize", "--tune-clip", "--set", f"privacy.epsilon={eps}",
         "--set", f"privacy.delta={DELTA}", "-o", tab, "--json", js])
    d = json.load(open(js))
    s = sim(bin_, [f"privacy.epsilon={eps}", f"privacy.delta={DELTA}", "schedule.kind=table",
                   f"schedule.file={tab}", f"clip.c={d['best_c']!r}"], 200, 2, work)
    return d["best_final_risk"], d["best_c"], d["best_family"], s


# the axes of the sweep: each value a factor from the next (local search steps one factor)
FACTOR = dict(B=2, E=2, eta=2, c=2)
LIMITS = dict(B=(1, N), E=(1, 64), eta=(1 / 64, 64), c=(1e-3, 100))


def poisson(bin_, eps, delta, grid, work, rounds=12):
    """The best (B, E, eta, c) for Poisson DP-SGD at (eps, delta) add/remove: the coarse grid,
    then a local search from its best point, one factor up or down an axis at a time (leaving
    the grid where its best point sits on an edge), until no neighbour is better."""
    sigmas, results = {}, {}

    def evaluate(B, E, eta, c):
        key = (B, E, eta, c)
        if key in results:
            return results[key]
        if (B, E) not in sigmas:
            sigmas[(B, E)] = calibrate(bin_, B, E, eps, delta)
        sigma = sigmas[(B, E)]
        s = None
        if sigma is not None:
            sets = ["sgd.sampling=poisson", f"data.train_size={N}", f"sgd.batch={B}",
                    f"sgd.epochs={E}", f"sgd.noise_multiplier={sigma!r}", "privacy.rho=inf",
                    "schedule.kind=constant", f"schedule.eta0={eta!r}", f"clip.c={c!r}"]
            s = sim(bin_, sets, 20, 1, work)
            if s:
                s = (s["final_risk_mean"], sets, dict(B=B, E=E, eta=eta, c=c, sigma=sigma))
        results[key] = s
        return s

    best = None
    for point in itertools.product(grid["B"], grid["E"], grid["eta"], grid["c"]):
        r = evaluate(*point)
        if r and (best is None or r[0] < best[0]):
            best = r
    for _ in range(rounds):
        moved = False
        here = best[2]
        for axis in ("B", "E", "eta", "c"):
            for f in (FACTOR[axis], 1 / FACTOR[axis]):
                p = dict(B=here["B"], E=here["E"], eta=here["eta"], c=here["c"])
                v = p[axis] * f
                if axis in ("B", "E"):
                    v = int(round(v))
                if axis == "B" and v > N > p["B"]:
                    v = N  # full batch
                lo, hi = LIMITS[axis]
                if v < lo or v > hi or v == p[axis]:
                    continue
                p[axis] = v
                r = evaluate(p["B"], p["E"], p["eta"], p["c"])
                if r and r[0] < best[0]:
                    best, moved = r, True
        if not moved:
            break
    s = sim(bin_, best[1], 200, 2, work)  # the winner again, 200 runs, another seed
    best[2]["tried"] = sum(1 for r in results.values() if r)
    return s, best[2]


def figure(csvpath, png):
    script = f"""
set terminal pngcairo size 680,520 font ",11"
set output '{png}'
set datafile separator ','
set logscale xy
set xlabel 'epsilon (delta = 1e-5)'
set ylabel 'final excess risk'
set key bottom left
set xtics (0.5, 1, 2, 4, 8)
set xrange [0.4:10]
set yrange [0.01:0.6]
set grid
ols = 0.25 * 200 / (2.0 * ({N} - 200 - 1))
plot '{csvpath}' using 1:2 skip 1 with lines lw 2 dt 2 lc rgb '#1f77b4' title 'one pass, designed (ODE)', \\
     '' using 1:3:4 skip 1 with yerrorbars pt 7 ps 0.8 lc rgb '#1f77b4' title 'one pass, designed (sim)', \\
     '' using 1:7:8 skip 1 with yerrorlines pt 5 ps 0.8 lc rgb '#d62728' title 'Poisson, tuned, add/remove', \\
     '' using 1:14:15 skip 1 with yerrorlines pt 9 ps 0.9 lc rgb '#2ca02c' title 'Poisson, tuned, replace-one', \\
     ols with lines dt 3 lc rgb '#555555' title 'least squares on the N rows, no privacy'
"""
    p = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)


def main():
    args = [a for a in sys.argv[1:] if a != "--quick"]
    quick = "--quick" in sys.argv[1:]
    bin_ = os.path.abspath(args[0])
    outdir = os.path.abspath(args[1] if len(args) > 1 else ".")
    grid = dict(B=[16, 128, 1024], E=[1, 4, 16, 64], eta=[0.5, 1, 2, 4], c=[0.03, 0.1, 0.3, 1])
    eps_list = EPS
    if quick:
        grid = dict(B=[64], E=[1, 4], eta=[1], c=[0.3])
        eps_list = [1, 4]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for eps in eps_list:
            pred, c1, fam, s1 = designed(bin_, eps, work)
            sa, ca = poisson(bin_, eps, DELTA, grid, work)
            sr, cr = poisson(bin_, eps / 2, DELTA / (1 + math.exp(eps / 2)), grid, work)
            row = [eps, pred, s1["final_risk_mean"], s1["final_risk_stderr"], fam, c1,
                   sa["final_risk_mean"], sa["final_risk_stderr"], ca["B"], ca["E"], ca["eta"],
                   ca["c"], ca["sigma"],
                   sr["final_risk_mean"], sr["final_risk_stderr"], cr["B"], cr["E"], cr["eta"],
                   cr["c"], cr["sigma"]]
            rows.append(row)
            print("eps %-4g one pass designed: ODE %.4f sim %.4f +- %.4f (%s, c %.3g) | Poisson "
                  "add/remove %.4f +- %.4f (B %d E %d eta %g c %g sigma %.3g) | replace-one "
                  "%.4f +- %.4f (B %d E %d eta %g c %g sigma %.3g)" % tuple(row), "| tried",
                  ca["tried"], cr["tried"], flush=True)
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "study-dpsgd.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["epsilon", "onepass_ode", "onepass_sim", "onepass_stderr", "onepass_family",
                    "onepass_c", "poisson_ar", "poisson_ar_stderr", "ar_batch", "ar_epochs",
                    "ar_eta", "ar_c", "ar_sigma", "poisson_ro", "poisson_ro_stderr", "ro_batch",
                    "ro_epochs", "ro_eta", "ro_c", "ro_sigma"])
        w.writerows(rows)
    figure(path, os.path.join(outdir, "study-dpsgd.png"))


if __name__ == "__main__":
    main()
