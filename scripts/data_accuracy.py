#!/usr/bin/env python3
"""ODE against the real-row Monte Carlo on a data set's model (docs/theory.md §9, issue 32).

Usage: data_accuracy.py HDPSGD MODEL.ini [--runs R] [--set KEY=VALUE]... [--quick]
                        [--gamma G]... [--ode-set KEY=VALUE]...

For every configuration of the grid gamma in {0.1, 0.02}, c in {0.3, 1, inf}, rho in {0.5, inf}
(c = inf only with rho = inf), runs `hdpsgd ode` and `hdpsgd sim` on the model and prints one
Markdown row: the relative gap (ODE / Monte Carlo - 1) at t = 1 with the Monte Carlo's standard
error in the same units, the largest gap over t in [0.1, 1] (where, and in standard errors), and with a held-out set the test
MSE gap at t = 1. --quick: gamma = 0.1 only; --gamma G (repeatable): those gammas only.
--ode-set KEY=VALUE (repeatable): a second ODE with these keys set too (e.g. ode.discrete=true),
compared with the same Monte Carlo: its gap at t = 1 and its largest gap over [0.1, 1] in two
more columns (before/after tables from one set of runs).
"""
import csv
import json
import os
import subprocess
import sys
import tempfile


def read_csv(path):
    with open(path) as f:
        rows = [r for r in csv.reader(line for line in f if not line.startswith("#"))]
    head, data = rows[0], rows[1:]
    return {h: [float(r[i]) if r[i] else float("nan") for r in data] for i, h in enumerate(head)}


def main():
    args = sys.argv[1:]
    exe, model = args[0], args[1]
    runs, sets, quick, gammas, osets = "40", [], False, [], []
    i = 2
    while i < len(args):
        if args[i] == "--runs":
            runs = args[i + 1]; i += 2
        elif args[i] == "--set":
            sets += ["--set", args[i + 1]]; i += 2
        elif args[i] == "--gamma":
            gammas.append(args[i + 1]); i += 2
        elif args[i] == "--ode-set":
            osets += ["--set", args[i + 1]]; i += 2
        elif args[i] == "--quick":
            quick = True; i += 1
        else:
            sys.exit(f"unknown argument {args[i]}")
    grid = [(g, c, r) for g in (gammas or (["0.1"] if quick else ["0.1", "0.02"]))
            for c in ["0.3", "1", "inf"] for r in ["0.5", "inf"] if not (c == "inf" and r != "inf")]
    extra = " second ODE: gap at 1 | max gap, t ∈ [0.1, 1] |" if osets else ""
    print("| γ | c | ρ | ODE R(1) | MC R(1) ± se | gap at t = 1 | (in se) | max gap, t ∈ [0.1, 1] | (in se) | test MSE gap at 1 |" + extra)
    print("|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if osets else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for g, c, r in grid:
            s = sets + ["--set", f"data.gamma={g}", "--set", f"clip.c={c}", "--set", f"privacy.rho={r}",
                        "--set", f"sim.runs={runs}"]
            oc, oj = os.path.join(tmp, "o.csv"), os.path.join(tmp, "o.json")
            sc, sj = os.path.join(tmp, "s.csv"), os.path.join(tmp, "s.json")
            subprocess.run([exe, "ode", model, *s, "-o", oc, "--json", oj], check=True,
                           stderr=subprocess.DEVNULL)
            subprocess.run([exe, "sim", model, *s, "-o", sc, "--json", sj], check=True,
                           stderr=subprocess.DEVNULL)
            o, m = read_csv(oc), read_csv(sc)
            ks = [k for k in range(len(o["t"])) if o["t"][k] >= 0.1 - 1e-9]
            kw = max(ks, key=lambda k: abs(o["risk"][k] / m["mean"][k] - 1))
            worst = o["risk"][kw] / m["mean"][kw] - 1
            zw = (o["risk"][kw] - m["mean"][kw]) / m["stderr"][kw] if m["stderr"][kw] > 0 else float("nan")
            g1 = o["risk"][-1] / m["mean"][-1] - 1
            z1 = (o["risk"][-1] - m["mean"][-1]) / m["stderr"][-1] if m["stderr"][-1] > 0 else float("nan")
            more = ""
            if osets:
                subprocess.run([exe, "ode", model, *s, *osets, "-o", oc, "--json", oj], check=True,
                               stderr=subprocess.DEVNULL)
                o2 = read_csv(oc)
                kw2 = max(ks, key=lambda k: abs(o2["risk"][k] / m["mean"][k] - 1))
                z2 = (o2["risk"][kw2] - m["mean"][kw2]) / m["stderr"][kw2] if m["stderr"][kw2] > 0 else float("nan")
                more = (f" {100 * (o2['risk'][-1] / m['mean'][-1] - 1):+.2f} % | "
                        f"{100 * (o2['risk'][kw2] / m['mean'][kw2] - 1):+.2f} % (t = {o2['t'][kw2]:.2f}, {z2:+.1f} se) |")
            tm = ""
            if "ode_test_mse" in o and "test_mse" in m:
                tm = f"{100 * (o['ode_test_mse'][-1] / m['test_mse'][-1] - 1):+.2f} %"
            print(f"| {g} | {c} | {r} | {o['risk'][-1]:.5g} | {m['mean'][-1]:.5g} ± {m['stderr'][-1]:.2g} | "
                  f"{100 * g1:+.2f} % | {z1:+.1f} | {100 * worst:+.2f} % (t = {o['t'][kw]:.2f}) | {zw:+.1f} | {tm} |{more}", flush=True)


if __name__ == "__main__":
    main()
