# notebook.py — hdpsgd from Python, cell by cell (# %% marks a cell for Jupyter/VS Code).
# Loads a model, integrates the risk ODE, runs the Monte Carlo of DP-SGD, draws both with
# matplotlib, and designs a better learning-rate schedule at the same privacy level.
#
#   PYTHONPATH=build/python python3 examples/notebook.py [FIGURE.png] [MODEL.ini]

# %% a model: a file, or the built-in default (models/default.ini), with changes (16 bins of
# eigenvalues keep the ODE fast for the schedule search below)
import sys

import hdpsgd

figure = sys.argv[1] if len(sys.argv) > 1 else "notebook.png"
model = hdpsgd.Model(sys.argv[2] if len(sys.argv) > 2 else None,
                     overrides={"clip.c": 0.5, "ode.points": 51, "ode.bins": 16})
print(model, "d =", model["data.d"], "n =", model["data.n"], "rho =", model["privacy.rho"])
priv = hdpsgd.accountant(model)
print(f"privacy: ({priv.rho_z:.4g})-zCDP, epsilon = {priv.epsilon_cks:.4g} at delta = 1/n")

# %% theory: the risk ODE of homogenized DP-SGD (docs/theory.md §3)
theory = hdpsgd.ode(model)
print(f"ODE: final excess risk {theory.final_risk:.5f} "
      f"(R(1) = {theory.risk_before_final_noise:.5f} + final noise {theory.final_noise:.2g})")

# %% simulation: 200 runs of the real algorithm (docs/theory.md §1), and the ODE's verdict on them
mc = hdpsgd.sim(model, runs=200, seed=1)
print(f"Monte Carlo: {mc.final_risk_mean:.5f} +- {mc.final_risk_stderr:.5f} "
      f"({mc.runs} runs, {mc.diverged_runs} diverged, {mc.threads} threads)")
check = hdpsgd.validate(model, runs=200, seed=1, with_sde=False)
print(f"validate: max relative deviation {check.sim_side.max_rel_dev:.2%}, "
      f"{'PASS' if check.passed else 'FAIL'}")

# %% design: the non-increasing piecewise-linear schedule of lowest predicted risk (same rho)
best = hdpsgd.design(model, family="pl", knots=8)
tuned_model = best.designed_model(figure.rsplit(".", 1)[0] + ".schedule.tab")
tuned = hdpsgd.ode(tuned_model)
tuned_mc = hdpsgd.sim(tuned_model, runs=200, seed=1)
print(f"designed schedule: ODE final risk {tuned.final_risk:.5f} "
      f"({100 * (tuned.final_risk / theory.final_risk - 1):+.1f} %), "
      f"Monte Carlo {tuned_mc.final_risk_mean:.5f} +- {tuned_mc.final_risk_stderr:.5f}")

# %% the figure
import matplotlib

matplotlib.use("Agg")  # files only; drop this line in a notebook
import matplotlib.pyplot as plt

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
for res, sims, color, name in ((theory, mc, "tab:red", "optimal (model)"),
                               (tuned, tuned_mc, "tab:blue", "designed (pl, 8 knots)")):
    left.fill_between(sims.t, sims.q10, sims.q90, color=color, alpha=0.15)
    left.plot(sims.t, sims.mean, ".", color=color, ms=3)
    left.plot(res.t, res.risk, "-", color=color, label=f"{name}: {res.final_risk:.4f}")
    right.plot(res.t, res.eta, "-", color=color, label=name)
left.set(xlabel="t = k/n", ylabel="excess risk", title="ODE (lines) vs 200 runs (dots, 10-90 %)")
right.set(xlabel="t = k/n", ylabel="learning rate eta~(t)", title=f"schedules at rho = {priv.rho:g}")
left.legend()
right.legend()
fig.tight_layout()
fig.savefig(figure, dpi=110)
print("figure:", figure)
