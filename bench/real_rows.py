#!/usr/bin/python3
"""The real-row Monte Carlo of issue 32 side by side: `hdpsgd sim` on a data model against the
same DP-SGD written in NumPy and in PyTorch, each vectorised over the runs (an R x d matrix of
iterates, one gathered row per run and step).

The algorithm is docs/theory.md §1.2-§1.5 on the rows of §9, as src/sim/rows.c runs it:
  rows prepared as the toolkit prepares them (centred, scaled so that Tr Sigma = d, rotated
  into the eigenbasis of Sigma = X'X/N, rounded to float32 as the toolkit stores them);
  per step, each run draws a row i uniformly (with replacement), r = x_i'e - z_i,
  e <- e - eta_k r x_i min(1, C / (|r| ||x_i||)) + 2 C sigma_k xi,  C = c sqrt(d),
  eta_k = eta~(k/n)/n with the inverse-time schedule eta~(t) = c1/(t + a), a = gamma max(c2,
  c3/rho), sigma_k^2 = (eta_k^2 - eta_{k+1}^2)/rho^2 (k < n-1), eta_{n-1}^2/rho^2 (k = n-1);
  target planted (theta* uniform on the sphere of target_radius, each run its own, z ~ N(0,
  tau2) drawn at every step) or least-squares (theta* the minimum-norm least squares on the
  rows, z_i the row's residual); the excess risk 1/2 sum_j lambda_j e_j^2 on the grid
  k_i = round(i n/(P-1)) (at most n-1 below t = 1).
The preparation is checked against `hdpsgd dataset --json` (scale, eigenvalues, |theta*|, R(0),
tau^2) before anything is timed.

Times: CPU seconds per (run x step) of the Monte Carlo loop only (process CPU time, all
threads: what a shared machine cannot inflate), and wall seconds. For `hdpsgd sim` (a separate
process that also loads and prepares the data) the loop's CPU time is the child's CPU time minus
that of the same command with data.n = 1 and one run (the load alone), best of the repetitions,
and the median and range of the repetitions each less the median load (the table prints both;
the peers' median and range likewise); its wall time is the JSON's `seconds` (the Monte Carlo alone).

Usage: real_rows.py HDPSGD --data fashion|digits --target planted|labels [--gamma G]
       [--c C] [--rho RHO] [--runs R] [--points P] [--reps K] [--float32] [--no-torch]
       [--workdir DIR]
Prints a human-readable report and, last, one JSON line with every number.
"""
import argparse, gzip, json, math, os, resource, statistics, subprocess, sys, tempfile, time

import numpy as np

FASHION = "/usr/share/datasets/fashion-mnist"


# ---- data ----------------------------------------------------------------------------------

def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    if raw[2] != 0x08:
        raise SystemExit(f"{path}: IDX type code {raw[2]:#x}, expected unsigned bytes")
    a = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    return a.reshape(dims[0], -1) if ndim > 1 else a


def load_data(name, workdir):
    """features (N x d float64), class labels, the files hdpsgd reads, the positive classes"""
    if name == "fashion":
        X = read_idx(f"{FASHION}/train-images-idx3-ubyte.gz").astype(np.float64)
        y = read_idx(f"{FASHION}/train-labels-idx1-ubyte.gz").astype(np.int64)
        files = (f"{FASHION}/train-images-idx3-ubyte.gz", f"{FASHION}/train-labels-idx1-ubyte.gz")
        return X, y, files, "0"  # tops (T-shirt/top) against the rest
    from sklearn.datasets import load_digits
    dg = load_digits()
    X, y = dg.data.astype(np.float64), dg.target.astype(np.int64)
    files = (os.path.join(workdir, "digits_X.npy"), os.path.join(workdir, "digits_y.npy"))
    np.save(files[0], X)
    np.save(files[1], y.astype(np.float64))
    return X, y, files, "0"  # the digit 0 against the rest


def prepare(X, y_class, positive):
    """docs/theory.md §9: centre, scale = trace, Sigma, eigenbasis, rotated rows (float32 as the
    toolkit stores them), the least-squares target and residuals"""
    N, d = X.shape
    Xc = X - X.mean(axis=0)
    S_raw = Xc.T @ Xc / N
    s = math.sqrt(d / np.trace(S_raw))
    lam, U = np.linalg.eigh(s * s * S_raw)
    lam, U = lam[::-1].copy(), U[:, ::-1].copy()
    lam[lam < 0] = 0.0
    rows64 = (s * Xc) @ U
    rows = rows64.astype(np.float32)
    y = np.where(np.isin(y_class, [int(p) for p in positive.split(",")]), 1.0, -1.0)
    y -= y.mean()
    b = rows64.T @ y / N
    theta = np.where(lam > 1e-12 * lam[0], b / np.where(lam > 0, lam, 1.0), 0.0)
    z = y - rows64 @ theta
    return dict(N=N, d=d, scale=s, lam=lam, rows=rows, theta=theta, z=z,
                risk0=0.5 * float(np.dot(lam, theta * theta)), tau2=float(np.mean(z * z)))


def check_preparation(prep, hdpsgd, files, positive, workdir):
    """the NumPy preparation against `hdpsgd dataset --json`: the largest relative difference"""
    out = os.path.join(workdir, "dataset.json")
    subprocess.run([hdpsgd, "dataset", files[0], "--labels", files[1], "--positive", positive,
                    "--json", out], check=True, stdout=subprocess.DEVNULL)
    ref = json.load(open(out))
    rel = lambda a, b: abs(a - b) / max(abs(b), 1e-300)
    lam_ref = np.array(ref["eigenvalues"])
    top = lam_ref > 1e-9 * lam_ref[0]
    diffs = {"scale": rel(prep["scale"], ref["scale_factor"]),
             "eigenvalues": float(np.max(np.abs(prep["lam"][top] - lam_ref[top]) / lam_ref[top])),
             "theta_norm": rel(float(np.linalg.norm(prep["theta"])), ref["theta_norm"]),
             "risk0": rel(prep["risk0"], ref["risk0"]),
             "tau2": rel(prep["tau2"], ref["residual_variance"])}
    return diffs


# ---- the schedule and the grid (src/core/schedule.c, src/sim/mc.c) -------------------------

def schedule(n, gamma, rho, c1=1.0, c2=1.0, c3=1.0):
    a = gamma * max(c2, 0.0 if math.isinf(rho) else c3 / rho)
    k = np.arange(n + 1, dtype=np.float64)
    eta = c1 / (k / n + a) / n
    if math.isinf(rho):
        return eta[:n], np.zeros(n)
    var = np.maximum(eta[:n] ** 2 - eta[1:] ** 2, 0.0) / rho ** 2
    var[n - 1] = eta[n - 1] ** 2 / rho ** 2
    return eta[:n], np.sqrt(var)


def grid(n, P):
    kg = np.floor(np.arange(P) / (P - 1) * n + 0.5).astype(np.int64)
    kg[:-1] = np.minimum(kg[:-1], n - 1)
    kg[0], kg[-1] = 0, n
    return kg


# ---- the two vectorised Monte Carlos --------------------------------------------------------

def arrays(prep, lib, dtype, torch=None):
    """the rows, their norms and the eigenvalues in the implementation's dtype, made once
    (before the timed loop: converting 60 000 rows is set-up, not Monte Carlo)"""
    key = (lib, str(dtype))
    if key not in prep:
        x64 = prep["rows"].astype(np.float64)
        xnorm = np.sqrt(np.einsum("ij,ij->i", x64, x64))
        del x64
        if lib == "numpy":
            prep[key] = (prep["rows"].astype(dtype), xnorm.astype(dtype),
                         prep["lam"].astype(dtype))
        else:
            prep[key] = (torch.from_numpy(prep["rows"]).to(dtype),
                         torch.from_numpy(xnorm).to(dtype), torch.from_numpy(prep["lam"]).to(dtype))
    return prep[key]


def mc_numpy(prep, planted, n, C, eta, sig, kg, R, radius, tau, seed, dtype):
    rng = np.random.default_rng(seed)
    N, d = prep["N"], prep["d"]
    rows, xnorm, lam = arrays(prep, "numpy", dtype)
    if planted:
        g = rng.standard_normal((R, d))
        E = (-radius * g / np.linalg.norm(g, axis=1, keepdims=True)).astype(dtype)
    else:
        E = np.tile(-prep["theta"].astype(dtype), (R, 1))
        zrow = prep["z"].astype(dtype)
    risk = np.empty((len(kg), R))
    p = 0
    while p < len(kg) and kg[p] == 0:
        risk[p] = 0.5 * (E * E) @ lam
        p += 1
    for k in range(n):
        idx = rng.integers(0, N, size=R)
        Xb = rows[idx]
        z = tau * rng.standard_normal(R, dtype=dtype) if planted else zrow[idx]
        r = np.einsum("rj,rj->r", Xb, E) - z
        gn = np.abs(r) * xnorm[idx]
        with np.errstate(divide="ignore"):
            coef = eta[k] * r * np.minimum(1.0, C / gn)
        E -= coef[:, None] * Xb
        if sig[k] > 0:
            E += (2.0 * C * sig[k]) * rng.standard_normal((R, d), dtype=dtype)
        while p < len(kg) and kg[p] == k + 1:
            risk[p] = 0.5 * (E * E) @ lam
            p += 1
    return risk


def mc_torch(torch, prep, planted, n, C, eta, sig, kg, R, radius, tau, seed, dtype):
    gen = torch.Generator().manual_seed(seed)
    N, d = prep["N"], prep["d"]
    rows, xnorm, lam = arrays(prep, "torch", dtype, torch)
    if planted:
        g = torch.randn(R, d, generator=gen, dtype=torch.float64)
        E = (-radius * g / g.norm(dim=1, keepdim=True)).to(dtype)
    else:
        E = (-torch.from_numpy(prep["theta"])).to(dtype).repeat(R, 1)
        zrow = torch.from_numpy(prep["z"]).to(dtype)
    risk = np.empty((len(kg), R))
    p = 0
    with torch.no_grad():
        while p < len(kg) and kg[p] == 0:
            risk[p] = (0.5 * (E * E) @ lam).double().numpy()
            p += 1
        for k in range(n):
            idx = torch.randint(0, N, (R,), generator=gen)
            Xb = rows.index_select(0, idx)
            z = tau * torch.randn(R, generator=gen, dtype=dtype) if planted else zrow[idx]
            r = (Xb * E).sum(1) - z
            gn = r.abs() * xnorm[idx]
            coef = float(eta[k]) * r * torch.clamp(C / gn, max=1.0)
            E.sub_(coef[:, None] * Xb)
            if sig[k] > 0:
                E.add_(torch.randn(R, d, generator=gen, dtype=dtype), alpha=2.0 * C * float(sig[k]))
            while p < len(kg) and kg[p] == k + 1:
                risk[p] = (0.5 * (E * E) @ lam).double().numpy()
                p += 1
    return risk


def timed(fn, *args):
    c, w = time.process_time(), time.perf_counter()
    out = fn(*args)
    return out, time.process_time() - c, time.perf_counter() - w


# ---- hdpsgd sim ------------------------------------------------------------------------------

def child_cpu(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def read_curve(path):
    lines = [l for l in open(path) if not l.startswith("#")]
    head = lines[0].strip().split(",")
    vals = np.array([[float(v) for v in l.strip().split(",")] for l in lines[1:]])
    return vals[:, head.index("mean")], vals[:, head.index("stderr")]


def run_hdpsgd(hdpsgd, model, sets, R, threads, reps, n, workdir, seed):
    """per run-step CPU (load subtracted) and wall seconds, best of reps; the curve of the
    first repetition"""
    base = [hdpsgd, "sim"] + ([model] if model else []) + [a for s in sets for a in ("--set", s)]
    tab, js = os.path.join(workdir, "sim.csv"), os.path.join(workdir, "sim.json")
    cpus, walls, loads, curve = [], [], [], None
    for rep in range(reps):
        loads.append(child_cpu(base + ["--set", "data.n=1", "--runs", "1", "--threads", "1",
                                       "-o", os.devnull]))
        cpus.append(child_cpu(base + ["--runs", str(R), "--threads", str(threads), "--seed",
                                      str(seed), "-o", tab, "--json", js]))
        walls.append(json.load(open(js))["seconds"])
        if curve is None:
            curve = read_curve(tab)
    load = statistics.median(loads)
    per = sorted((c - load) / (R * n) for c in cpus)  # each repetition, the median load off
    return dict(cpu=(min(cpus) - min(loads)) / (R * n), wall=min(walls) / (R * n),
                cpu_median=statistics.median(per), cpu_min=per[0], cpu_max=per[-1],
                load_cpu=min(loads), curve=curve)


# ---- the report ------------------------------------------------------------------------------

def summary(risk):
    R = risk.shape[1]
    return risk.mean(1), risk.std(1, ddof=1) / math.sqrt(R)


def zscores(a, b):
    (ma, sa), (mb, sb) = a, b
    se = np.sqrt(sa ** 2 + sb ** 2)
    # points where every run has the same value (t = 0 with the least-squares target) compare
    # rounding, not Monte Carlo error: left out
    ok = se > 1e-9 * np.maximum(np.abs(ma), np.abs(mb))
    z = np.where(ok, (ma - mb) / np.where(ok, se, 1.0), 0.0)
    return float(z[-1]), float(np.max(np.abs(z)))


def sweep(res, a, prep, planted, n, C, eta, sig, radius, tau, impls, torch, ref_cpu):
    """NumPy and PyTorch alone over the first steps at several numbers of runs at once: how
    their cost per run-step falls as the Python overhead per step is shared by more runs"""
    steps = min(n, 1500)
    kg = np.array([0, steps])
    print(f"\nruns at once (first {steps} steps; CPU µs per run-step, best of {a.reps}; "
          f"ratio to hdpsgd's {1e6 * ref_cpu:.3f}):")
    res["sweep"] = {}
    for R in [int(v) for v in a.sweep_runs.split(",")]:
        line = []
        for name, dt in impls:
            label = f"{name} {str(dt).split('.')[-1].strip('>')[:7]}"
            best = math.inf
            for rep in range(a.reps):
                args = (prep, planted, steps, C, eta, sig, kg, R, radius, tau, a.seed + rep, dt)
                arrays(prep, name, dt, torch)
                if name == "numpy":
                    _, cpu, _ = timed(mc_numpy, *args)
                else:
                    _, cpu, _ = timed(mc_torch, torch, *args)
                best = min(best, cpu / (R * steps))
            res["sweep"][f"{label} R={R}"] = best
            line.append(f"{label} {1e6 * best:.3f} ({best / ref_cpu:.1f}x)")
        print(f"R = {R}: " + ", ".join(line))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("hdpsgd")
    ap.add_argument("--data", choices=["fashion", "digits"], default="fashion")
    ap.add_argument("--target", choices=["planted", "labels"], default="planted")
    ap.add_argument("--gamma", type=float, default=0.1)
    ap.add_argument("--c", type=float, default=0.3)
    ap.add_argument("--rho", type=float, default=0.5)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--hdpsgd-runs", type=int, default=0,
                    help="runs of hdpsgd sim (default: enough for 2e6 run-steps, at least --runs)")
    ap.add_argument("--points", type=int, default=21)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--float32", action="store_true", help="also NumPy and PyTorch in float32")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--torch-threads", type=int, default=1,
                    help="PyTorch's intra-op threads (default 1: the thread hdpsgd's reference "
                    "column and NumPy use)")
    ap.add_argument("--workdir")
    ap.add_argument("--sweep-runs", default="",
                    help="also time NumPy and PyTorch alone over the first 1500 steps at these "
                    "numbers of runs at once (comma-separated)")
    a = ap.parse_args()
    workdir = a.workdir or tempfile.mkdtemp(prefix="hdpsgd-bench-")
    hdpsgd = os.path.abspath(a.hdpsgd)
    radius, tau2 = 1.0, 0.25
    planted = a.target == "planted"

    X, ycls, files, positive = load_data(a.data, workdir)
    t0 = time.process_time()
    prep = prepare(X, ycls, positive)
    del X
    prep_cpu = time.process_time() - t0
    diffs = check_preparation(prep, hdpsgd, files, positive, workdir)
    N, d = prep["N"], prep["d"]
    n = int(math.floor(d / a.gamma + 0.5))
    gamma = d / n
    C = a.c * math.sqrt(d)
    eta, sig = schedule(n, gamma, a.rho)
    kg = grid(n, a.points)
    tau = math.sqrt(tau2) if planted else 0.0
    print(f"# {a.data}, target {a.target}: N = {N}, d = {d}, n = {n} (gamma = {gamma:g}), c = {a.c}, "
          f"rho = {a.rho}, {a.runs} runs at once in NumPy and PyTorch, {a.points} grid points; "
          f"NumPy {np.__version__}")
    print(f"preparation (NumPy, {prep_cpu:.2f} s CPU) against hdpsgd dataset, largest relative "
          "difference: " + ", ".join(f"{k} {v:.1e}" for k, v in diffs.items()))
    if max(diffs.values()) > 1e-6:
        raise SystemExit("the NumPy preparation differs from the toolkit's: not comparable")

    # the model file: the data set's own, without its held-out set (its test MSE is extra work
    # the other two do not do), on this configuration
    model = os.path.join(workdir, "model.ini")
    with open(model, "w") as f:
        f.write("[data]\nsource = file\n")
        f.write(f"features = {files[0]}\n")
        if planted:
            f.write(f"target = planted\ntarget_radius = {radius}\nnoise = gaussian\ntau2 = {tau2}\n")
        else:
            f.write(f"labels = {files[1]}\nlabels_positive = {positive}\ntarget = least-squares\n")
        f.write(f"gamma = {a.gamma}\n[clip]\nc = {a.c}\n[privacy]\nrho = {a.rho}\n"
                "[schedule]\nkind = inverse-time\nc1 = 1\nc2 = 1\nc3 = 1\n")
    sets = [f"ode.points={a.points}"]
    res = {"data": a.data, "target": a.target, "N": N, "d": d, "n": n, "c": a.c, "rho": a.rho,
           "runs": a.runs, "prep_diffs": diffs, "impl": {}}
    curves = {}
    Rh = a.hdpsgd_runs or max(a.runs, math.ceil(2e6 / n))
    res["hdpsgd_runs"] = Rh
    for th in (1, 2):
        h = run_hdpsgd(hdpsgd, model, sets, Rh, th, a.reps, n, workdir, a.seed)
        curves[f"hdpsgd-{th}"] = h.pop("curve")
        res["impl"][f"hdpsgd --threads {th}"] = h
    # the Gaussian model of the same d, n, c, rho and schedule (power-law spectrum, planted)
    g = run_hdpsgd(hdpsgd, None, ["data.source=synthetic", f"data.d={d}", f"data.n={n}",
                                        f"clip.c={a.c}", f"privacy.rho={a.rho}"] + sets,
                   Rh, 1, a.reps, n, workdir, a.seed)
    g.pop("curve")
    res["impl"]["hdpsgd Gaussian --threads 1"] = g

    impls = [("numpy", np.float64)] + ([("numpy", np.float32)] if a.float32 else [])
    torch = None
    if not a.no_torch:
        import torch
        torch.set_num_threads(a.torch_threads)
        impls += [("torch", torch.float64)] + ([("torch", torch.float32)] if a.float32 else [])
        res["torch_version"] = torch.__version__
    for name, dt in impls:
        label = f"{name} {str(dt).split('.')[-1].strip('>')[:7]}"
        best_cpu = best_wall = math.inf
        cpus = []
        # warm-up, not timed: the first steps of a run (allocations, lazy initialisation)
        wk = min(n, 200)
        warm = (prep, planted, wk, C, eta, sig, np.array([0, wk]), a.runs, radius, tau, a.seed, dt)
        arrays(prep, name, dt, torch)
        if name == "numpy":
            mc_numpy(*warm)
        else:
            mc_torch(torch, *warm)
        for rep in range(a.reps):
            args = (prep, planted, n, C, eta, sig, kg, a.runs, radius, tau, a.seed + 1 + rep, dt)
            arrays(prep, name, dt, torch)
            if name == "numpy":
                risk, cpu, wall = timed(mc_numpy, *args)
            else:
                risk, cpu, wall = timed(mc_torch, torch, *args)
            best_cpu, best_wall = min(best_cpu, cpu), min(best_wall, wall)
            cpus.append(cpu / (a.runs * n))
            if rep == 0:
                curves[label] = summary(risk)
        res["impl"][label] = dict(cpu=best_cpu / (a.runs * n), wall=best_wall / (a.runs * n),
                                  cpu_median=statistics.median(cpus), cpu_min=min(cpus),
                                  cpu_max=max(cpus))
        if not a.sweep_runs:
            prep.pop((name, str(dt)), None)

    ref = res["impl"]["hdpsgd --threads 1"]
    print(f"\n| implementation | CPU µs per run-step, best of {a.reps} | median (min–max) | "
          "wall µs per run-step | CPU ratio to hdpsgd (1 thread): best, median | "
          "final risk ± s.e. | z vs hdpsgd at t = 1 | max |z| on the curve |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, v in res["impl"].items():
        key = {"hdpsgd --threads 1": "hdpsgd-1", "hdpsgd --threads 2": "hdpsgd-2"}.get(label, label)
        cur = curves.get(key)
        fin = zs = ""
        if cur is not None:
            fin = f"{cur[0][-1]:.5f} ± {cur[1][-1]:.5f}"
            if key != "hdpsgd-1":
                zf, zm = zscores(cur, curves["hdpsgd-1"])
                zs = f"{zf:+.2f} | {zm:.2f}"
                v["z_final"], v["z_max"] = zf, zm
            else:
                zs = " | "
            v["final_mean"], v["final_stderr"] = float(cur[0][-1]), float(cur[1][-1])
        else:
            zs = " | "
        v["cpu_ratio"] = v["cpu"] / ref["cpu"]
        v["cpu_ratio_median"] = v["cpu_median"] / ref["cpu_median"]
        print(f"| {label} | {1e6 * v['cpu']:.3f} | {1e6 * v['cpu_median']:.3f} "
              f"({1e6 * v['cpu_min']:.3f}–{1e6 * v['cpu_max']:.3f}) | {1e6 * v['wall']:.3f} | "
              f"{v['cpu_ratio']:.2f}, {v['cpu_ratio_median']:.2f} | {fin} | {zs} |")
    for name in ("numpy float64", "torch float64"):
        if name in res["impl"]:
            print(f"speed-up of hdpsgd (1 thread, CPU) over {name}: "
                  f"{res['impl'][name]['cpu'] / ref['cpu']:.1f}x; of hdpsgd (2 threads, wall): "
                  f"{res['impl'][name]['wall'] / res['impl']['hdpsgd --threads 2']['wall']:.1f}x")
    print(f"hdpsgd sim: {Rh} runs (load alone: {ref['load_cpu']:.2f} s CPU, subtracted)")
    print(f"real rows against the Gaussian model of the same d, n (CPU): "
          f"{ref['cpu'] / g['cpu']:.2f}x")
    if a.sweep_runs:
        sweep(res, a, prep, planted, n, C, eta, sig, radius, tau, impls, torch, ref["cpu"])
    res["t"] = (kg / n).tolist()
    res["curves"] = {k: {"mean": v[0].tolist(), "stderr": v[1].tolist()} for k, v in curves.items()}
    print(json.dumps(res))


if __name__ == "__main__":
    main()
