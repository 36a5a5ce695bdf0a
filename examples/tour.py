# tour.py — a tour of hdpsgd from Python, cell by cell; examples/tour.ipynb holds the same
# cells as a Jupyter notebook (a "# %%" line starts a cell). As a script:
#   PYTHONPATH=build/python python3 examples/tour.py      (writes tour.png and tour-data.png in
#   the current folder)

# %% [markdown]
# # hdpsgd: a tour
# A model of one-pass DP-SGD on high-dimensional linear regression, the deterministic ODE that
# predicts its risk, the Monte Carlo of the real algorithm, the schedule of lowest predicted risk
# at the same privacy, the accounting of DP-SGD as practitioners run it, and your own data as the
# theory sees it.

# %% a model: the built-in default (power-law spectrum, d = 200, n = 2000), clipped at c = 0.5;
# 16 eigenvalue bins keep each ODE solve fast for the schedule search below
import hdpsgd

model = hdpsgd.Model(overrides={"clip.c": 0.5, "ode.points": 51, "ode.bins": 16})
print(model, "d =", model["data.d"], "n =", model["data.n"], "rho =", model["privacy.rho"])
privacy = hdpsgd.accountant(model)
print(f"privacy: ({privacy.rho_z:.4g})-zCDP, epsilon = {privacy.epsilon_cks:.4g} at delta = {privacy.delta:.3g}")

# %% theory (the risk ODE, docs/theory.md §3) against 200 runs of the real algorithm
theory = hdpsgd.ode(model)
runs = hdpsgd.sim(model, runs=200, seed=1)
check = hdpsgd.validate(model, runs=200, seed=1, with_sde=False)
print(f"ODE final risk {theory.final_risk:.5f}; Monte Carlo {runs.final_risk_mean:.5f} "
      f"+- {runs.final_risk_stderr:.5f}; validate: {'PASS' if check.passed else 'FAIL'} "
      f"(max relative deviation {check.sim_side.max_rel_dev:.2%})")

# %% design: the non-increasing piecewise-linear schedule of lowest predicted risk, same rho
best = hdpsgd.design(model, family="pl", knots=8)
designed = best.designed_model("tour.schedule.tab")
tuned = hdpsgd.ode(designed)
tuned_runs = hdpsgd.sim(designed, runs=200, seed=1)
print(f"designed schedule: ODE {tuned.final_risk:.5f} ({100 * (tuned.final_risk / theory.final_risk - 1):+.1f} %), "
      f"Monte Carlo {tuned_runs.final_risk_mean:.5f} +- {tuned_runs.final_risk_stderr:.5f}")

# %% the figure: ODE (lines) against the runs (dots and their 10-90 % band), and the schedules
import matplotlib.pyplot as plt

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
for ode_result, mc, color, name in ((theory, runs, "tab:red", "inverse-time (the model's)"),
                                    (tuned, tuned_runs, "tab:blue", "designed (pl, 8 knots)")):
    left.fill_between(mc.t, mc.q10, mc.q90, color=color, alpha=0.15)
    left.plot(mc.t, mc.mean, ".", color=color, ms=3)
    left.plot(ode_result.t, ode_result.risk, "-", color=color, label=f"{name}: {ode_result.final_risk:.4f}")
    right.plot(ode_result.t, ode_result.eta, "-", color=color, label=name)
left.set(xlabel="t = k/n", ylabel="excess risk", title="ODE (lines) vs 200 runs (dots, 10-90 %)")
right.set(xlabel="t = k/n", ylabel="learning rate", title=f"schedules at rho = {privacy.rho:g}")
left.legend()
right.legend()
fig.tight_layout()
fig.savefig("tour.png", dpi=110)  # in a notebook the figure is also shown below the cell

# %% DP-SGD as Opacus and TensorFlow Privacy run it: Poisson sampling at q = B/N, a noise
# multiplier, epochs; epsilon by PLD, RDP and classic RDP (docs/theory.md §6.5)
dpsgd = hdpsgd.dpsgd_privacy(256 / 60000, noise_multiplier=1.1, epochs=60)
print(f"q = 256/60000, sigma = 1.1, 60 epochs ({dpsgd.steps} steps): epsilon = {dpsgd.epsilon_pld:.3f} (PLD), "
      f"{dpsgd.epsilon_rdp:.3f} (RDP), {dpsgd.epsilon_rdp_classic:.3f} (RDP classic) at delta = {dpsgd.delta:g}")

# %% your own data: a data set made here with NumPy (N = 2000 rows, d = 50 features with a
# decaying spectrum, labels from a linear model plus noise), saved as .npy files, read and
# prepared by hdpsgd.dataset as `hdpsgd dataset` does (docs/theory.md §9): centred, scaled to
# mean eigenvalue 1, the covariance's eigenvalues and the least-squares target's R(0) and
# residual variance tau^2. Any N x d .npy, .csv or IDX file of yours goes the same way.
import os
import shutil
import tempfile

import numpy as np


def example_data(n=2000, d=50, seed=0):
    """Features with standard deviations j^-0.75 (a power-law spectrum) and labels
    y = x'theta + 0.3 noise."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)) * np.arange(1, d + 1) ** -0.75
    theta = rng.standard_normal(d)
    return x, x @ theta + 0.3 * rng.standard_normal(n)


folder = tempfile.mkdtemp(prefix="hdpsgd-tour-")
x, y = example_data()
np.save(os.path.join(folder, "features.npy"), x)
np.save(os.path.join(folder, "labels.npy"), y)
data = hdpsgd.dataset(os.path.join(folder, "features.npy"),
                      labels=os.path.join(folder, "labels.npy"))
shutil.rmtree(folder)
top = " ".join(f"{v:.6g}" for v in data.eigenvalues[:5])
print(f"your data: N = {data.n}, d = {data.d}, scale factor {data.scale_factor:.6g}; "
      f"eigenvalues {top} ... {data.eigenvalues[-1]:.6g}")
print(f"least squares: R(0) = {data.risk0:.6g}, residual variance tau^2 = "
      f"{data.residual_variance:.6g} (label variance {data.label_variance:.6g})")

# %% its spectrum: the eigenvalues lambda_j of the prepared rows' covariance and the target's
# energy D_j(0) per eigendirection (the ODE's initial condition, docs/theory.md §3.1)
fig, ax = plt.subplots(figsize=(5.5, 3.8))
j = np.arange(1, data.d + 1)
ax.loglog(j, data.eigenvalues, "o-", ms=3, label="eigenvalues $\\lambda_j$")
ax.loglog(j, data.energy, "s", ms=3, alpha=0.7, label="energy $D_j(0)$")
ax.set(xlabel="j", title=f"your data: N = {data.n}, d = {data.d}, R(0) = {data.risk0:.3g}")
ax.legend()
fig.tight_layout()
fig.savefig("tour-data.png", dpi=110)  # in a notebook the figure is also shown below the cell
