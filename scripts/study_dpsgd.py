#!/usr/bin/env python3
"""study_dpsgd.py — the designed one-pass scheme against standard Poisson DP-SGD at equal
privacy budgets, on a synthetic model and on real data (docs/study-dpsgd.md, issue 33).

    scripts/study_dpsgd.py BIN [OUTDIR] [--part=PART,...] [--quick]

For each epsilon in {0.5, 1, 2, 4, 8} at delta = 1e-5:

  * one pass, designed: `schedule --optimize --tune-clip` at privacy.epsilon = epsilon (the ODE's
    best schedule and clipping constant; its predicted final risk), then `sim` of that table
    (the simulated risk);
  * standard DP-SGD with Poisson sampling on N rows, tuned by a sweep over batch B, epochs E,
    learning rate eta~ (constant schedule) and clipping constant c, the noise multiplier
    calibrated by the PLD accountant (`accountant --epsilon`):
      - "add/remove": at (epsilon, delta) add/remove, the convention of Opacus and TF Privacy;
      - "replace-one": at (epsilon/2, delta/(1 + e^(epsilon/2))) add/remove, which by group
        privacy is (epsilon, delta) under replace-one neighbours, the one-pass scheme's relation
        (docs/theory.md §6.1, §6.6);
    each configuration simulated with 20 runs (the same seed: common random numbers): a coarse
    grid, then coordinate descent from its best point in (B, flow time E eta~, E at a fixed
    flow time, c), a factor 2 up or down, then sqrt(2) for the flow time and c, until no
    neighbour is better (E up to 512 synthetic, 4096 digits); the best one (lowest mean final
    risk) simulated again with 200 runs on another seed (no winner's curse in the number
    reported).

Parts (default: synthetic, digits, epochs-synthetic, epochs-digits; OUTDIR default: the current
folder, docs/gallery for the files of docs/study-dpsgd.md):
  synthetic  the default model (d = 200, n = N = 2000): OUTDIR/study-dpsgd.csv, .png
  digits     scikit-learn's digits (python3-sklearn), even against odd, 1500 training rows and
             297 held-out (a fixed split), as a data model (data.source = file on .npy files
             written to a scratch folder): one pass on the rows without replacement (each row
             once, n = N = 1500), designed by --method simplex (BFGS refuses --tune-clip on
             a least-squares data target: its gradient has no data corrections in c) in
             the family linear-noise (the best of the four at epsilon = 1, and the cheapest
             search); Poisson DP-SGD on the same rows, a smaller
             grid (B 16, 128, 1024; E 4 to 256; eta~ 0.5, 2; c 0.1, 0.3, 1) and E up to 4096
             in the local search; tuned on the training rows' excess risk, the held-out MSE
             reported: OUTDIR/study-dpsgd-digits.csv, .png
  epochs-synthetic, epochs-digits
             the epoch profile: from each Poisson winner of OUTDIR/study-dpsgd.csv (or
             study-dpsgd-digits.csv), E doubled up to 512 (synthetic) or 1024 (digits) at the
             winner's B and c, eta~ re-tuned at each E (a factor-2 line search from the
             winner's flow time E eta~, 20 runs), the best eta~ at each E simulated again (100
             runs, another seed): OUTDIR/study-dpsgd-epochs-synthetic.csv (-digits.csv) and
             the figure of both, OUTDIR/study-dpsgd-epochs.png (epochs-figure: that figure
             alone)
  poisson-synthetic, poisson-digits
             (not by default) the Poisson columns of OUTDIR/study-dpsgd.csv (-digits.csv) tuned
             again by that coordinate descent, started from the CSV's winners and the epoch
             profile's best points (no grid), the one-pass columns kept; the CSV and its figure
             rewritten (digits: about 14 minutes on 2 loaded cores)
  fashion    (not by default) a spot check on Fashion-MNIST at epsilon = 1 and 4, a few
             configurations, few runs (dataset-fashion-mnist; about 25 minutes on 2 loaded
             cores): OUTDIR/study-dpsgd-fashion.csv

--quick: a reduced sweep and two budgets (a check that the script runs, a few minutes).
Run it with a python3 that has NumPy and scikit-learn (Debian's /usr/bin/python3).
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
SYN_N = 2000  # = data.n of the default model (d = 200, gamma = 0.1)
DIGITS_TRAIN = 1500


def run(cmd, check=True):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


class Problem:
    """What the two schemes run on: the model file (None: the default model), the rows N, the
    --set options of both schemes (base), of one pass (onepass) and of Poisson DP-SGD (poisson),
    and the design's options."""

    def __init__(self, name, model, N, base, onepass, poisson, design, grid, e_max, e_top):
        self.name, self.model, self.N = name, model, N
        self.base, self.onepass, self.poisson, self.design = base, onepass, poisson, design
        self.grid, self.e_max, self.e_top = grid, e_max, e_top  # e_top: the epoch profile's

    def cmd(self, bin_, command, sets):
        c = [bin_, command] + ([self.model] if self.model else [])
        for s in self.base + sets:
            c += ["--set", s]
        return c


def synthetic_problem():
    return Problem("synthetic", None, SYN_N, [], [], [f"data.train_size={SYN_N}"],
                   ["--tune-clip"], dict(B=[16, 128, 1024], E=[1, 4, 16, 64], eta=[0.5, 1, 2, 4],
                                         c=[0.03, 0.1, 0.3, 1]), 512, 512)


def digits_problem(work):
    """scikit-learn's digits as .npy files and a data model on them (even digits +1)."""
    import numpy as np
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    perm = np.random.default_rng(0).permutation(len(y))
    tr, te = perm[:DIGITS_TRAIN], perm[DIGITS_TRAIN:]
    paths = {}
    for name, a in (("features", X[tr]), ("labels", y[tr]), ("test_features", X[te]),
                    ("test_labels", y[te])):
        paths[name] = os.path.join(work, f"digits-{name}.npy")
        np.save(paths[name], a.astype(np.float64 if "features" in name else np.int64))
    model = os.path.join(work, "digits.ini")
    with open(model, "w") as f:
        f.write("[data]\nsource = file\ntarget = least-squares\nlabels_positive = 0,2,4,6,8\n")
        for k, v in paths.items():
            f.write(f"{k} = {v}\n")
    d = X.shape[1]
    # n = N: one pass sees every training row once (gamma = d / N)
    return Problem("digits", model, DIGITS_TRAIN, [f"data.gamma={d / DIGITS_TRAIN!r}"],
                   ["sim.rows=without-replacement"], [],
                   ["--tune-clip", "--method", "simplex", "--family", "linear-noise"],
                   dict(B=[16, 128, 1024], E=[4, 16, 64, 256], eta=[0.5, 2], c=[0.1, 0.3, 1]),
                   4096, 1024)


def calibrate(bin_, N, B, E, eps, delta):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        p = run([bin_, "accountant", "--sample-rate", repr(B / N), "--epsilon", repr(eps),
                 "--epochs", str(E), "--delta", repr(delta), "--json", f.name], check=False)
        if p.returncode != 0:
            return None
        return json.load(open(f.name))["noise_multiplier"]


def sim(bin_, pb, sets, runs, seed, work):
    out = os.path.join(work, "s.json")
    cmd = pb.cmd(bin_, "sim", sets) + ["--runs", str(runs), "--seed", str(seed), "-o",
                                       os.path.join(work, "s.csv"), "--json", out]
    p = run(cmd, check=False)
    if p.returncode != 0:
        return None
    d = json.load(open(out))
    if d["diverged_runs"] > 0:
        return None
    return d


def designed(bin_, pb, eps, work):
    """The one-pass design at eps: (ODE risk, c, family, sim JSON, ODE JSON of the table)."""
    tab = os.path.join(work, f"designed-{pb.name}-{eps}.tab")
    js = os.path.join(work, f"designed-{pb.name}-{eps}.json")
    priv = [f"privacy.epsilon={eps}", f"privacy.delta={DELTA}"]
    run(pb.cmd(bin_, "schedule", priv + pb.onepass) + ["--optimize"] + pb.design +
        ["-o", tab, "--json", js])
    d = json.load(open(js))
    sets = priv + pb.onepass + ["schedule.kind=table", f"schedule.file={tab}",
                                f"clip.c={d['best_c']!r}"]
    s = sim(bin_, pb, sets, 200, 2, work)
    oj = os.path.join(work, "o.json")
    run(pb.cmd(bin_, "ode", sets) + ["-o", os.path.join(work, "o.csv"), "--json", oj])
    return d["best_final_risk"], d["best_c"], d["best_family"], s, json.load(open(oj))


# the axes of the sweep: each value a factor from the next (local search steps one factor)
FACTOR = dict(B=2, E=2, eta=2, c=2)


def poisson_sets(pb, B, E, eta, c, sigma):
    return pb.poisson + ["sgd.sampling=poisson", f"sgd.batch={B}", f"sgd.epochs={E}",
                         f"sgd.noise_multiplier={sigma!r}", "privacy.rho=inf",
                         "schedule.kind=constant", f"schedule.eta0={eta!r}", f"clip.c={c!r}"]


def poisson(bin_, pb, eps, delta, grid, work, starts=(), rounds=40):
    """The best (B, E, eta, c) for Poisson DP-SGD at (eps, delta) add/remove: the best of the
    coarse grid (grid None: none) and of the start points (B, E, eta, c), then coordinate
    descent in (B, F = E eta, E, c) from it: the batch, the flow time F (eta = F / E), the
    epochs at a fixed flow time (E up, eta down together: the move an axis-by-axis search in
    (B, E, eta, c) cannot make) and the clipping constant, each a factor 2 up or down, then
    F and c by a factor sqrt(2), until no neighbour is better (20 runs each, the same seed:
    common random numbers); E up to pb.e_max. The winner simulated again with 200 runs on
    another seed (no winner's curse in the number reported); its dict says at which bounds
    (B = N, E = e_max) it sits."""
    sigmas, results = {}, {}

    def evaluate(B, E, eta, c):
        key = (B, E, round(eta, 12), round(c, 12))
        if key in results:
            return results[key]
        if (B, E) not in sigmas:
            sigmas[(B, E)] = calibrate(bin_, pb.N, B, E, eps, delta)
        sigma = sigmas[(B, E)]
        s = None
        if sigma is not None:
            sets = poisson_sets(pb, B, E, eta, c, sigma)
            s = sim(bin_, pb, sets, 20, 1, work)
            if s:
                s = (s["final_risk_mean"], sets, dict(B=B, E=E, eta=eta, c=c, sigma=sigma))
        results[key] = s
        return s

    best = None
    points = list(itertools.product(grid["B"], grid["E"], grid["eta"], grid["c"])) if grid else []
    for point in points + list(starts):
        r = evaluate(*point)
        if r and (best is None or r[0] < best[0]):
            best = r

    def neighbours(h, f):
        B, E, eta, c = h["B"], h["E"], h["eta"], h["c"]
        F = E * eta
        out = []
        if f == 2:
            for b in (min(B * 2, pb.N), B // 2):
                if 1 <= b != B:
                    out.append((b, E, eta, c))
            for e in (E * 2, E // 2):
                if 1 <= e <= pb.e_max and e != E:
                    out.append((B, e, F / e, c))
        for g in (f, 1 / f):
            out.append((B, E, F * g / E, c))
            out.append((B, E, eta, c * g))
        return out

    for f in (2, math.sqrt(2)):
        for _ in range(rounds):
            moved = False
            for p in neighbours(best[2], f):
                r = evaluate(*p)
                if r and r[0] < best[0]:
                    best, moved = r, True
                    break  # first improvement: the neighbours of the new point
            if not moved:
                break
    s = sim(bin_, pb, best[1], 200, 2, work)  # the winner again, 200 runs, another seed
    w = best[2]
    w["tried"] = sum(1 for r in results.values() if r)
    w["bounds"] = ",".join(b for b, at in (("B=N", w["B"] == pb.N), ("E=max", w["E"] == pb.e_max))
                           if at)
    return s, w


COLUMNS = ["epsilon", "onepass_ode", "onepass_sim", "onepass_stderr", "onepass_family",
           "onepass_c", "poisson_ar", "poisson_ar_stderr", "ar_batch", "ar_epochs", "ar_eta",
           "ar_c", "ar_sigma", "poisson_ro", "poisson_ro_stderr", "ro_batch", "ro_epochs",
           "ro_eta", "ro_c", "ro_sigma"]
TEST_COLUMNS = ["onepass_ode_test_mse", "onepass_test_mse", "onepass_test_mse_stderr",
                "ar_test_mse", "ar_test_mse_stderr", "ro_test_mse", "ro_test_mse_stderr",
                "test_mse_star"]


def compare(bin_, pb, eps_list, grid, work):
    """One row per budget: the designed one pass and both Poisson winners."""
    rows = []
    for eps in eps_list:
        pred, c1, fam, s1, o1 = designed(bin_, pb, eps, work)
        sa, ca = poisson(bin_, pb, eps, DELTA, grid, work)
        sr, cr = poisson(bin_, pb, eps / 2, DELTA / (1 + math.exp(eps / 2)), grid, work)
        row = [eps, pred, s1["final_risk_mean"], s1["final_risk_stderr"], fam, c1,
               sa["final_risk_mean"], sa["final_risk_stderr"], ca["B"], ca["E"], ca["eta"],
               ca["c"], ca["sigma"],
               sr["final_risk_mean"], sr["final_risk_stderr"], cr["B"], cr["E"], cr["eta"],
               cr["c"], cr["sigma"]]
        print("%s eps %-4g one pass designed: ODE %.4f sim %.4f +- %.4f (%s, c %.3g) | Poisson "
              "add/remove %.4f +- %.4f (B %d E %d eta %g c %g sigma %.3g) | replace-one "
              "%.4f +- %.4f (B %d E %d eta %g c %g sigma %.3g)" % tuple([pb.name] + row),
              "| tried", ca["tried"], cr["tried"], flush=True)
        if "test_mse" in s1:
            row += [o1["ode_test_mse"], s1["test_mse"], s1["test_mse_stderr"], sa["test_mse"],
                    sa["test_mse_stderr"], sr["test_mse"], sr["test_mse_stderr"],
                    o1["test_mse_star"]]
            print("  held-out MSE: one pass ODE %.4f sim %.4f +- %.4f | add/remove %.4f +- %.4f "
                  "| replace-one %.4f +- %.4f | theta* %.4f" % tuple(row[20:]), flush=True)
        rows.append(row)
    return rows


def retune(bin_, pb, outdir, work, eps_list):
    """Part poisson-<problem>: the Poisson columns of the problem's study CSV tuned again by the
    coordinate descent of poisson(), started from the CSV's winner and the epoch profile's best
    point at that budget and convention (no grid); the one-pass columns kept. The CSV is
    rewritten; bounds the winners sit at are printed."""
    stem = "study-dpsgd" if pb.name == "synthetic" else f"study-dpsgd-{pb.name}"
    path = os.path.join(outdir, stem + ".csv")
    with open(path) as f:
        old = list(csv.DictReader(f))
    header = list(old[0].keys())
    prof = {}
    ppath = os.path.join(outdir, f"study-dpsgd-epochs-{pb.name}.csv")
    if os.path.exists(ppath):
        with open(ppath) as f:
            for r in csv.DictReader(f):
                k = (float(r["epsilon"]), r["convention"])
                if k not in prof or float(r["risk"]) < float(prof[k]["risk"]):
                    prof[k] = r
    for row in old:
        eps = float(row["epsilon"])
        if eps not in eps_list:
            continue
        for conv, e, dl in (("ar", eps, DELTA), ("ro", eps / 2, DELTA / (1 + math.exp(eps / 2)))):
            starts = [(int(row[f"{conv}_batch"]), int(row[f"{conv}_epochs"]),
                       float(row[f"{conv}_eta"]), float(row[f"{conv}_c"]))]
            if (eps, conv) in prof:
                r = prof[(eps, conv)]
                starts.append((int(r["batch"]), int(r["epochs"]), float(r["eta"]), float(r["c"])))
            s, w = poisson(bin_, pb, e, dl, None, work, starts)
            col = "poisson_ar" if conv == "ar" else "poisson_ro"
            row[col], row[col + "_stderr"] = s["final_risk_mean"], s["final_risk_stderr"]
            for k, v in (("batch", w["B"]), ("epochs", w["E"]), ("eta", w["eta"]), ("c", w["c"]),
                         ("sigma", w["sigma"])):
                row[f"{conv}_{k}"] = v
            if f"{conv}_test_mse" in row:
                row[f"{conv}_test_mse"] = s["test_mse"]
                row[f"{conv}_test_mse_stderr"] = s["test_mse_stderr"]
            print(f"{pb.name} eps {eps:g} {conv}: {s['final_risk_mean']:.5f} +- "
                  f"{s['final_risk_stderr']:.5f} (B {w['B']} E {w['E']} eta {w['eta']:.4g} c "
                  f"{w['c']:.4g} sigma {w['sigma']:.4g}; {w['tried']} tried; at bounds: "
                  f"{w['bounds'] or 'none'})", flush=True)
            write_csv(path, header, [[r[h] for h in header] for r in old])  # as it goes
    return path


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def gnuplot(script):
    p = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)


def panel(csvpath, cols, ylabel, key, yrange, floor, floor_title, logy):
    """One panel: the designed one pass (ODE, sim) and both Poisson winners against epsilon."""
    return f"""
set datafile separator ','
set logscale x
{'set logscale y' if logy else 'unset logscale y'}
set xlabel 'epsilon (delta = 1e-5)'
set ylabel '{ylabel}'
set key {key}
set xtics (0.5, 1, 2, 4, 8)
set xrange [0.4:10]
set yrange [{yrange}]
set grid
plot '{csvpath}' using 1:{cols[0]} skip 1 with lines lw 2 dt 2 lc rgb '#1f77b4' title 'one pass, designed (ODE)', \\
     '' using 1:{cols[1]} skip 1 with yerrorbars pt 7 ps 0.8 lc rgb '#1f77b4' title 'one pass, designed (sim)', \\
     '' using 1:{cols[2]} skip 1 with yerrorlines pt 5 ps 0.8 lc rgb '#d62728' title 'Poisson, tuned, add/remove', \\
     '' using 1:{cols[3]} skip 1 with yerrorlines pt 9 ps 0.9 lc rgb '#2ca02c' title 'Poisson, tuned, replace-one', \\
     {floor} with lines dt 3 lc rgb '#555555' title '{floor_title}'
"""


def figure(csvpath, png, yrange, floor, floor_title):
    """Final excess risk against epsilon."""
    gnuplot(f"set terminal pngcairo size 680,520 font ',11'\nset output '{png}'\n" +
            panel(csvpath, ("2", "3:4", "7:8", "14:15"), "final excess risk", "bottom left",
                  yrange, floor, floor_title, True))


def digits_figure(csvpath, png):
    """Two panels: the training rows' excess risk and the held-out MSE against epsilon."""
    with open(csvpath) as f:
        star = float(next(csv.DictReader(f))["test_mse_star"])
    gnuplot(f"set terminal pngcairo size 1100,480 font ',11'\nset output '{png}'\n"
            "set multiplot layout 1,2\n" +
            panel(csvpath, ("2", "3:4", "7:8", "14:15"), "final excess risk (training rows)",
                  "bottom left", "0.005:0.1", "1/0", "", True) +
            panel(csvpath, ("21", "22:23", "24:25", "26:27"), "held-out MSE (297 rows)",
                  "top right", "0.35:0.52", repr(star),
                  "least squares on the training rows", False) +
            "unset multiplot\n")


def read_winners(path, name):
    """The Poisson winners of a study CSV: (problem, epsilon, convention, B, E, eta, c)."""
    out = []
    with open(path) as f:
        for r in csv.DictReader(f):
            for conv in ("ar", "ro"):
                out.append((name, float(r["epsilon"]), conv, int(r[f"{conv}_batch"]),
                            int(r[f"{conv}_epochs"]), float(r[f"{conv}_eta"]),
                            float(r[f"{conv}_c"])))
    return out


def epoch_profile(bin_, pb, eps, conv, B, E0, eta0, c, work, runs=100):
    """The best risk at each E = E0, 2 E0, ... up to pb.e_top at the winner's B and c: eta~
    line-searched by factors of 2 from the winner's flow time E0 eta0 (20 runs), the best
    simulated again (runs, seed 2). Rows (E, eta, sigma, mean, stderr)."""
    delta = DELTA if conv == "ar" else DELTA / (1 + math.exp(eps / 2))
    e_eps = eps if conv == "ar" else eps / 2
    rows, E = [], E0
    while E <= pb.e_top:
        sigma = calibrate(bin_, pb.N, B, E, e_eps, delta)
        if sigma is None:
            break
        tried = {}

        def at(eta):
            if eta not in tried:
                s = sim(bin_, pb, poisson_sets(pb, B, E, eta, c, sigma), 20, 1, work)
                tried[eta] = s["final_risk_mean"] if s else math.inf
            return tried[eta]

        eta = eta0 * E0 / E
        for step in (2, 0.5):  # up while better, then down while better
            while at(eta * step) < at(eta):
                eta *= step
        s = sim(bin_, pb, poisson_sets(pb, B, E, eta, c, sigma), runs, 2, work)
        rows.append((E, eta, sigma, s["final_risk_mean"], s["final_risk_stderr"]))
        print(f"{pb.name} eps {eps} {conv}: B {B} c {c} E {E} eta {eta:g} sigma {sigma:.4g} "
              f"risk {rows[-1][3]:.5f} +- {rows[-1][4]:.5f} ({len(tried)} tried)", flush=True)
        E *= 2
    return rows


def epochs_part(bin_, outdir, work, pbs, eps_list, names):
    """The epoch profiles of the winners of each problem in names (its study CSV in outdir),
    into study-dpsgd-epochs-<problem>.csv; then the figure of every such file in outdir."""
    header = ["problem", "epsilon", "convention", "batch", "c", "epochs", "eta", "sigma", "risk",
              "stderr"]
    for name in names:
        stem = "study-dpsgd" if name == "synthetic" else f"study-dpsgd-{name}"
        rows = []
        for (_, eps, conv, B, E, eta, c) in read_winners(os.path.join(outdir, stem + ".csv"),
                                                         name):
            if eps in eps_list:
                for r in epoch_profile(bin_, pbs[name], eps, conv, B, E, eta, c, work):
                    rows.append([name, eps, conv, B, c] + list(r))
        write_csv(os.path.join(outdir, f"study-dpsgd-epochs-{name}.csv"), header, rows)
    # the figure: risk at E relative to the winner's (the profile's first point), add/remove
    lines = []
    for name in ("synthetic", "digits"):
        path = os.path.join(outdir, f"study-dpsgd-epochs-{name}.csv")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r["convention"] == "ar"]
        for eps in sorted({float(r["epsilon"]) for r in rows}):
            pts = [r for r in rows if float(r["epsilon"]) == eps]
            r0 = float(pts[0]["risk"])
            lines.append((name, eps, [(int(r["epochs"]), float(r["risk"]) / r0,
                                       float(r["stderr"]) / r0) for r in pts]))
    data = os.path.join(work, "profile.dat")
    with open(data, "w") as f:
        for _, _, pts in lines:
            f.writelines(f"{e} {v} {se}\n" for e, v, se in pts)
            f.write("\n\n")
    colour = {e: i + 1 for i, e in enumerate(EPS)}  # one colour per budget, both problems
    plots = ", ".join(f"'{data}' index {i} using 1:2:3 with yerrorlines lw 1.5 "
                      f"dt {1 if name == 'synthetic' else 2} lc {colour.get(eps, 6)} "
                      f"pt {5 if name == 'synthetic' else 7} ps 0.7 title '{name}, eps {eps:g}'"
                      for i, (name, eps, _) in enumerate(lines))
    gnuplot(f"""
set terminal pngcairo size 680,520 font ",11"
set output '{os.path.join(outdir, "study-dpsgd-epochs.png")}'
set logscale x 2
set xlabel 'epochs E (Poisson, add/remove; B and c of the winner, eta re-tuned)'
set ylabel 'final excess risk / risk at the winner (+- se)'
set key bottom left
set yrange [0.7:1.05]
set xrange [*:*] noextend
set offsets graph 0.04, graph 0.04, 0, 0
set grid
plot {plots}
""")


FASHION = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "models",
                       "fashion-mnist-labels.ini")


def fashion_part(bin_, outdir, work, eps_list):
    """A few configurations on Fashion-MNIST (tops against the rest, 60 000 training rows, the
    10 000 test images held out): one pass on the rows without replacement (n = N), the model's
    own inverse-time schedule with c chosen among {0.1, 0.3, 1} by the ODE, simulated with 10
    runs; Poisson DP-SGD at B = 256, E = 5, eta~ in {1, 4}, c in {0.1, 0.3} (2 runs each), the
    best simulated again with 6 runs (seed 2). No design (the simplex search is thousands of
    ODE solves at d = 784) and no sweep: a spot check of the digits' conclusion."""
    pb = Problem("fashion", os.path.abspath(FASHION), 60000, ["data.gamma=0.013066666666666667"],
                 ["sim.rows=without-replacement"], [], [], [], 5, 5)
    rows = []
    for eps in eps_list:
        priv = [f"privacy.epsilon={eps}", f"privacy.delta={DELTA}"]
        best = None
        for c in (0.1, 0.3, 1):
            sets = priv + pb.onepass + [f"clip.c={c!r}"]
            oj = os.path.join(work, "fo.json")
            run(pb.cmd(bin_, "ode", sets) + ["-o", os.path.join(work, "fo.csv"), "--json", oj])
            o = json.load(open(oj))
            if best is None or o["final_risk"] < best[0]["final_risk"]:
                best = (o, sets, c)
        s1 = sim(bin_, pb, best[1], 10, 2, work)
        row = [eps, best[0]["final_risk"], s1["final_risk_mean"], s1["final_risk_stderr"],
               best[2], best[0]["ode_test_mse"], s1["test_mse"], s1["test_mse_stderr"]]
        for conv, e, dl in (("ar", eps, DELTA), ("ro", eps / 2, DELTA / (1 + math.exp(eps / 2)))):
            sigma = calibrate(bin_, pb.N, 256, 5, e, dl)
            tried = []
            for eta, c in itertools.product((1, 4), (0.1, 0.3)):
                s = sim(bin_, pb, poisson_sets(pb, 256, 5, eta, c, sigma), 2, 1, work)
                if s:
                    tried.append((s["final_risk_mean"], eta, c))
            _, eta, c = min(tried)
            s = sim(bin_, pb, poisson_sets(pb, 256, 5, eta, c, sigma), 6, 2, work)
            row += [s["final_risk_mean"], s["final_risk_stderr"], eta, c, sigma, s["test_mse"],
                    s["test_mse_stderr"]]
        row.append(best[0]["test_mse_star"])
        print("fashion eps %g one pass: ODE %.5f sim %.5f +- %.5f (c %g) test ODE %.4f sim %.4f "
              "+- %.4f | add/remove %.5f +- %.5f (eta %g c %g sigma %.3g) test %.4f +- %.4f | "
              "replace-one %.5f +- %.5f (eta %g c %g sigma %.3g) test %.4f +- %.4f | theta* "
              "%.4f" % tuple(row), flush=True)
        rows.append(row)
    write_csv(os.path.join(outdir, "study-dpsgd-fashion.csv"),
              ["epsilon", "onepass_ode", "onepass_sim", "onepass_stderr", "onepass_c",
               "onepass_ode_test_mse", "onepass_test_mse", "onepass_test_mse_stderr",
               "poisson_ar", "poisson_ar_stderr", "ar_eta", "ar_c", "ar_sigma", "ar_test_mse",
               "ar_test_mse_stderr", "poisson_ro", "poisson_ro_stderr", "ro_eta", "ro_c",
               "ro_sigma", "ro_test_mse", "ro_test_mse_stderr", "test_mse_star"], rows)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    quick = "--quick" in flags
    parts = ["synthetic", "digits", "epochs-synthetic", "epochs-digits"]
    for a in flags:
        if a.startswith("--part="):
            parts = a[len("--part="):].split(",")
    bin_ = os.path.abspath(args[0])
    outdir = os.path.abspath(args[1] if len(args) > 1 else ".")
    os.makedirs(outdir, exist_ok=True)
    eps_list = [1, 4] if quick else EPS
    with tempfile.TemporaryDirectory() as work:
        pbs = {"synthetic": synthetic_problem(), "digits": digits_problem(work)}
        for name in ("synthetic", "digits"):
            if name not in parts:
                continue
            pb = pbs[name]
            g = dict(B=[64], E=[1, 4], eta=[1], c=[0.3]) if quick else pb.grid
            rows = compare(bin_, pb, eps_list, g, work)
            stem = "study-dpsgd" if name == "synthetic" else "study-dpsgd-digits"
            path = os.path.join(outdir, stem + ".csv")
            write_csv(path, COLUMNS + (TEST_COLUMNS if name == "digits" else []), rows)
            if name == "synthetic":
                ols = f"0.25 * 200 / (2.0 * ({SYN_N} - 200 - 1))"
                figure(path, os.path.join(outdir, stem + ".png"), "0.01:0.6", ols,
                       "least squares on the N rows, no privacy")
            else:
                digits_figure(path, os.path.join(outdir, stem + ".png"))
        for name in ("synthetic", "digits"):
            if f"poisson-{name}" in parts:
                path = retune(bin_, pbs[name], outdir, work, eps_list)
                if name == "synthetic":
                    figure(path, os.path.join(outdir, "study-dpsgd.png"), "0.01:0.6",
                           f"0.25 * 200 / (2.0 * ({SYN_N} - 200 - 1))",
                           "least squares on the N rows, no privacy")
                else:
                    digits_figure(path, os.path.join(outdir, "study-dpsgd-digits.png"))
        if "fashion" in parts:
            fashion_part(bin_, outdir, work, [1, 4] if not quick else [4])
        names = [p[len("epochs-"):] for p in parts if p.startswith("epochs-")]
        names = [n for n in names if n in pbs]  # epochs-figure: the figure of the CSVs alone
        if names or "epochs-figure" in parts:
            epochs_part(bin_, outdir, work, pbs, eps_list, names)


if __name__ == "__main__":
    main()
