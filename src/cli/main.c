/*
 * main.c — `hdpsgd <command> [MODEL.ini] [--set section.key=value]...`
 * A table of {name, function, help} dispatches; the same table prints the
 * command list and each command's help.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hdpsgd/rng.h"
#include "hdpsgd/version.h"

int cmd_ode(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_sde(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_keys(int argc, char **argv);
int cmd_privacy(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_rates(int argc, char **argv);
extern const cli_opt privacy_opts[], schedule_opts[], rates_opts[];
extern const cli_opt ode_opts[], sim_opts[], sde_opts[], validate_opts[], plot_opts[], sweep_opts[];
int cmd_rf(int argc, char **argv);
int cmd_rf_experiment(int argc, char **argv);
extern const cli_opt rf_opts[], rf_experiment_opts[];
int cmd_nc(int argc, char **argv);
extern const cli_opt nc_opts[];
int cmd_kl(int argc, char **argv);
extern const cli_opt kl_opts[];
int cmd_si(int argc, char **argv);
extern const cli_opt si_opts[];

hdp_status ode_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);
hdp_status sim_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);
hdp_status validate_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);
hdp_status schedule_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);
hdp_status rates_sweep_write(const char *pdir, const hdp_sweep_point *p, hdp_error *err);

static const cli_opt no_opts[] = {{NULL, 0, 0, NULL, NULL, NULL}};

const cli_command hdp_commands[] = {
    {"ode", cmd_ode, "integrate the risk ODE of homogenized DP-SGD (CVODE)",
     "ode [MODEL.ini] [--set k=v]... [-o FILE.csv] [--json FILE.json] [--max-steps N] "
     "[--rtol R] [--atol A]",
     "Integrates the deterministic ODE for the excess risk of one-pass DP-SGD with per-sample\n"
     "clipping (THEORY.md sections 2, 3, 5) on [0, 1] and writes one CSV row per grid point:\n"
     "  t,risk,risk_upper,risk_lower,mu_c,nu_c,eta,sigma2\n"
     "risk is the predicted excess risk R(t) (the row t = 1 is the output theta_n, final-step\n"
     "noise included, also in the bounds); mu_c, nu_c are the clipping factors at R(t); eta\n"
     "and sigma2 are the schedule's eta~(t) and sigma~(t)^2. Lines starting with # give the\n"
     "model. The JSON summary has final_risk, risk_before_final_noise, gamma, n, d, rho\n"
     "(null = inf), stable, rhs_evals, steps, solve_seconds.",
     ode_opts, 0, NULL, &hdp_sweep_ode, ode_sweep_write},
    {"sim", cmd_sim, "Monte Carlo of one-pass DP-SGD (the discrete algorithm)",
     "sim [MODEL.ini] [--set k=v]... [--runs N] [--threads T] [--seed S] [-o FILE.csv] "
     "[--json FILE.json]",
     "Runs the discrete algorithm of THEORY.md section 1 exactly (fresh Gaussian samples in\n"
     "the eigenbasis of Sigma, label noise of the model's law, per-sample clipping of the true\n"
     "gradient norm at c*sqrt(d), private noise 2*c*sqrt(d)*sigma_k*xi) for sim.runs\n"
     "independent runs and records the exact excess risk on the grid of `hdpsgd ode`. One CSV\n"
     "row per grid point:\n"
     "  t,mean,stderr,q10,q50,q90,clipped_fraction\n"
     "over the runs that did not diverge (the row t = 1 is the output theta_n);\n"
     "clipped_fraction is the fraction of clipped steps since the previous row. Run r uses\n"
     "the r-th jump of a xoshiro256++ stream seeded by sim.seed (its steps' Gaussians come\n"
     "eight at a time from the run's block stream, see hdpsgd/rng.h; HDPSGD_SIMD=generic|avx2|\n"
     "avx512 picks the kernel; another value, or a kernel the CPU lacks, is ignored with a\n"
     "warning): the CSV is the same for any --threads and any kernel. With\n"
     "several threads each is pinned to its own CPU during the runs unless OMP_PROC_BIND or\n"
     "OMP_PLACES is set. A run diverges when its excess risk becomes non-finite or exceeds\n"
     "sim.divergence_factor x max(R(0), P), P = 2 c^2 gamma^2 eta~(0)^2/rho^2 the risk the\n"
     "private noise adds; when every run diverges the exit status is 4. The JSON\n"
     "summary has final_risk_mean, final_risk_stderr, final_jump_mean/stderr (the jump of the\n"
     "last step's private noise), runs, diverged_runs, rho_accounted (THEORY 6 on the realised\n"
     "schedule; null = inf), seconds, threads, seed.",
     sim_opts, 0, NULL, &hdp_sweep_sim, sim_sweep_write},
    {"sde", cmd_sde, "Euler-Maruyama of the homogenized SDE (H-DP-SGD)",
     "sde [MODEL.ini] [--set k=v]... [--runs N] [--step h] [--threads T] [--seed S] "
     "[-o FILE.csv] [--json FILE.json]",
     "Integrates the homogenized SDE of THEORY.md section 4 in the eigenbasis of Sigma with\n"
     "Euler-Maruyama, step h (sde.step or --step; 0 = 1/n), N = round(1/h) steps, the risk\n"
     "recomputed every step for the clipping factors mu_c, V_c (THEORY 2), then adds the\n"
     "final-iterate noise of THEORY 3 at t = 1. Same runs, seeds, CSV columns and JSON keys\n"
     "as `hdpsgd sim`; clipped_fraction is the mean of 1 - mu_c(R) over the steps of the\n"
     "interval (the probability that a DP-SGD step would be clipped), and rho_accounted is\n"
     "the accountant on the discrete schedule of the model.",
     sde_opts, 0, NULL, &hdp_sweep_sde, sim_sweep_write},
    {"validate", cmd_validate, "ODE vs Monte Carlo vs SDE on one model: table, verdict, figure",
     "validate [MODEL.ini] [--set k=v]... [--runs N] [--threads T] [--seed S] [--figure FILE] "
     "[--json FILE.json] [--no-sde] [--scaling K]",
     "The toolkit's main job: runs `ode`, `sim` and `sde` on the same model and grid and prints,\n"
     "for each simulated side, the maximum absolute and relative deviation from the ODE, the\n"
     "maximum z-score |mean - ODE|/stderr, the final-iterate risk, the clipped fraction, and the\n"
     "privacy level (rho, and epsilon at delta = 1/n by Canonne-Kamath-Steinke). A grid point\n"
     "agrees when its relative deviation is <= validate.rel_tol (0.05) or its deviation is within\n"
     "validate.z_tol (4) standard errors; the model passes when every point of both sides\n"
     "agrees. Exit status 0 on pass, 1 on fail, 2 on bad input. --figure draws the curves with\n"
     "gnuplot (PNG, PDF or SVG by extension) and writes the data beside it; --scaling K repeats\n"
     "the Monte Carlo comparison at n, 4n, ..., 4^(K-1) n with gamma fixed and fits the\n"
     "log-log slope of the deviation (theory: O(log^2 n / sqrt n)). JSON keys: max_abs_dev,\n"
     "max_rel_dev, max_z, final_risk, clipped_fraction, pass (and sde_* for the SDE side),\n"
     "sim_pass, ode_final_risk, rho, rho_z, delta, epsilon_cks, epsilon_bs, runs, diverged_runs.",
     validate_opts, 0, ".ode.csv .sim.csv .sde.csv", &hdp_sweep_validate, validate_sweep_write},
    {"plot", cmd_plot, "draw the toolkit's CSV files with gnuplot",
     "plot FILE.csv... -o FIG [--title T] [--logy] [--bounds]",
     "Draws any of the toolkit's risk CSVs in one figure: ode CSVs (header t,risk,...) as\n"
     "curves, sim/sde CSVs (header t,mean,...) as the mean with a 10-90 % band. The row t = 1\n"
     "(the output theta_n) is a marker. The format follows FIG's extension: .png, .pdf, .svg.",
     plot_opts, 1, NULL, NULL, NULL},
    {"sweep", cmd_sweep, "run commands over a grid of model keys (serial or Open MPI)",
     "sweep SWEEP.ini [--resume] [--dry-run] [-o DIR] [--threads T]",
     "Runs the commands named in SWEEP.ini ([sweep] commands = ode, sim, sde, validate,\n"
     "schedule, rates) at every point of the Cartesian product of its [axes] (section.key =\n"
     "v1, v2, ... or LO:HI:COUNT or LO:HI:COUNT:log), on the base model [sweep] model with the\n"
     "fixed overrides of [set]. schedule is `schedule --optimize` ([sweep] schedule_families,\n"
     "default all; schedule_knots, default 8; tune_clip = true|false); rates is `rates`\n"
     "([sweep] rates_gammas = LO:HI:COUNT, required; rates_families, default output,\n"
     "linear-noise, optimal; not with a data.gamma or data.n axis).\n"
     "Point i writes DIR/points/pNNNNN/ (the commands' CSV and JSON files, schedule.tab, then\n"
     "row.csv, last and atomically); DIR/results.csv collects the rows in point order: point,\n"
     "the axes, d, n, gamma, rho, epsilon_cks, then ode_final_risk, sim_final_risk,\n"
     "sim_final_stderr, sim_diverged, sde_..., validate_pass, validate_max_rel_dev,\n"
     "validate_max_z, schedule_<family>_final_risk..., schedule_best_family,\n"
     "schedule_best_final_risk, schedule_best_c, schedule_ode_solves, rates_<family>_slope,\n"
     "rates_<family>_theory_slope..., rates_ode_solves (for the commands run; family keys use\n"
     "linear_noise) and status (ok, or failed: the message). Every point's model is checked\n"
     "before anything runs (--dry-run: only that, and the list of points). --resume continues\n"
     "a killed sweep, losing at most the points in\n"
     "progress. Under `mpirun -np N hdpsgd sweep ...` (Open MPI) the ranks take points from a\n"
     "shared counter (dynamic load balancing); the results are the same bytes as a serial run.\n"
     "Exit status 4 when some point failed.",
     sweep_opts, 0, NULL, NULL, NULL},
    {"privacy", cmd_privacy, "privacy level: rho, zCDP, (epsilon, delta), accountant, calibration, DP-GD",
     "privacy [MODEL.ini] [--set k=v]... [--delta D] [--epsilon E] [--json FILE.json]\n"
     "       hdpsgd privacy --dpgd --eta ETA --steps T (--sigma S | --epsilon E) [--delta D] [--json FILE.json]",
     "Privacy accounting of THEORY.md section 6. For the model: rho (the output is\n"
     "(rho^2/2)-zCDP), rho_z = rho^2/2, and epsilon at delta (default 1/n) by\n"
     "Canonne-Kamath-Steinke (the one to use) and Bun-Steinke (looser); the\n"
     "amplification-by-iteration accountant on the model's discrete schedule (any kind,\n"
     "table included), which must give rho back (exit status 1 if not). With --epsilon E:\n"
     "the rho that meets (E, delta) exactly, printed as --set privacy.rho=... (17 digits).\n"
     "--dpgd: full-batch DP-GD of seeds 000/003 with step size --eta and --steps T; with\n"
     "--sigma S: rho_z = eta T/(2 S^2), epsilon by both conversions and by seed 003's\n"
     "formula sqrt(eta T) sqrt(8 ln(1/delta))/S (valid for epsilon in (0, 8 ln(1/delta)));\n"
     "with --epsilon E: seed 003's sigma and the smaller sigma of the zCDP route,\n"
     "sqrt(eta T/(2 rho_z)) with rho_z from the CKS calibration. JSON keys: rho, rho_z,\n"
     "delta, epsilon_bs, epsilon_cks, rho_accounted, rho_for_target, rho_z_for_target; for\n"
     "--dpgd: eta, steps, sigma, rho_z, delta, epsilon_bs, epsilon_cks, epsilon_seed003 or\n"
     "sigma_seed003 and sigma_zcdp, seed003_applies. Non-finite numbers are null.",
     privacy_opts, 0, NULL, NULL, NULL},
    {"schedule", cmd_schedule, "optimise the learning-rate schedule on the risk ODE at fixed privacy",
     "schedule [MODEL.ini] [--set k=v]... --optimize [--family F] [--knots K] [--tune-clip] "
     "[-o FILE] [--json FILE.json] [--figure FIG]",
     "Minimises the ODE's final-iterate excess risk (THEORY.md 3, final-step noise included) at\n"
     "the model's rho over the schedule families of THEORY.md 5: output (eta0), linear-noise\n"
     "(eta0), optimal (c1 and a; reported also as c2 = a/gamma, c3 = a rho/gamma), and pl, a\n"
     "non-increasing piecewise-linear eta~ through K knots t_i = i/(K-1); with --tune-clip\n"
     "jointly over the clipping constant c. sup eta~ < 2/gamma is built into the\n"
     "parametrisation. Nelder-Mead (GSL nmsimplex2) with restarts after a coarse scan, on a\n"
     "cheap ODE (2 output points, rtol 1e-7); the winners are re-solved at the model's [ode]\n"
     "settings. Prints a table (parameters, final risk, epsilon at delta = 1/n by CKS, ODE\n"
     "solves), writes the best schedule as a table file (-o: two columns t, eta, '#' header;\n"
     "201 knots, geometric near t = 0 for the optimal family, the K knots for pl) for\n"
     "--set schedule.kind=table --set schedule.file=FILE, and reports the ODE risk of that\n"
     "table. --figure draws eta~(t) and R(t) of every family; its data go to\n"
     "FIG-without-extension.schedules.csv (t,eta_<family>,risk_<family>,...). JSON keys:\n"
     "<family>_final_risk, <family>_table_final_risk, <family>_c, <family>_ode_solves and the\n"
     "parameters (output_eta0, linear_noise_eta0, optimal_c1/a/c2/c3, pl_knots, pl_eta_<i>),\n"
     "best_family, best_final_risk, best_c, table_final_risk, epsilon_cks, delta, ode_solves,\n"
     "ode_solves_per_second (family keys use linear_noise for linear-noise).",
     schedule_opts, 0, ".schedules.csv", &hdp_sweep_schedule, schedule_sweep_write},
    {"rates", cmd_rates, "optimised final risk of each schedule family against gamma, vs the theorem",
     "rates [MODEL.ini] [--set k=v]... --gammas LO:HI:COUNT [--families LIST] [--tune-clip] "
     "[-o FILE.csv] [--json FILE.json] [--figure FIG]",
     "For COUNT log-spaced gamma = d/n from LO to HI (d fixed, n = round(d/gamma)) optimises\n"
     "each family's parameters on the ODE as `hdpsgd schedule --optimize` does and records the\n"
     "final excess risk; fits the log-log slope of risk against gamma on the smallest-gamma\n"
     "decade and prints it next to the local slope of the theorem's rate over the same points\n"
     "(THEORY.md 5): output gamma log(1/gamma) + gamma^2 log^2(1/gamma)/rho^2, linear-noise\n"
     "gamma log^(2/3)(1/gamma) + gamma^2 log^(4/3)(1/gamma)/rho^2, optimal gamma + gamma^2/rho^2.\n"
     "CSV (-o): gamma,n,family,final_risk,eta0,eta1,c1,a,c,ode_solves. --figure: risk against\n"
     "gamma (log-log) with the rates scaled to match at the smallest gamma; data in\n"
     "FIG-without-extension.rates.csv. JSON: count, gamma_<i>, <family>_final_risk_<i>,\n"
     "<family>_slope, <family>_theory_slope, decade_lo, decade_hi, ode_solves.",
     rates_opts, 0, ".rates.csv", &hdp_sweep_rates, rates_sweep_write},
    {"rf", cmd_rf, "DP-GD on random features vs its Ornstein-Uhlenbeck limit (seed 003)",
     "rf [MODEL.ini] [--set k=v]... [--runs N] [--threads T] [--seed S] [-o FILE.csv] "
     "[--json FILE.json]",
     "Algorithm 1 of seed 003 (THEORY.md 6, 7) on the random-features model of [rf]: features\n"
     "act(V x), V_ij ~ N(0, 1/d) frozen, x ~ N(0, I_d), labels sign(u^T x) or u^T x, square loss;\n"
     "per-sample gradients clipped at C_clip, noise sqrt(eta) (2 C_clip/n) sigma N(0, I_p), sigma\n"
     "from (epsilon, delta) by seed 003's bound (by the zCDP route, with a note, outside its\n"
     "range). rf.runs runs of DP-GD in R^p (two matrix-vector products per step), each coupled\n"
     "to the OU process dTheta = -(2/n) Phi^T (Phi Theta - y) dt + s dB, s = 2 C_clip sigma/n,\n"
     "through the same Gaussian increments: its Euler-Maruyama path (identical to DP-GD while\n"
     "nothing is clipped) and its exact step in the eigenbasis of Phi Phi^T. One CSV row per\n"
     "recorded step (0 and rf.records steps up to T):\n"
     "  step,tau,dpgd_test,dpgd_test_se,dpgd_train,dpgd_train_se,ou_test,ou_train,em_test,\n"
     "  em_test_se,em_expected_test,ex_test,ex_test_se,clipped_fraction,minnorm_test,gf_test\n"
     "tau = eta step; *_test, *_train: mean square losses on the test and training sets, *_se\n"
     "their standard errors over the runs; ou_*: the exact OU expected losses (closed form);\n"
     "em_*: Euler-Maruyama OU path; em_expected_test: the closed form of that recursion; ex_*:\n"
     "exact OU step; clipped_fraction: mean over runs of the fraction of samples whose gradient\n"
     "at theta_step exceeds C_clip; minnorm_test: the min-norm interpolator Phi^+ y (least\n"
     "squares for p < n); gf_test: gradient flow (the OU mean) at tau. The data come from the\n"
     "stream of sim.seed, run r from its (r+1)-th jump: the CSV is the same for any --threads.\n"
     "JSON keys: dpgd_test(_stderr), dpgd_train, ou_exact_test/train, ou_em_test(_stderr),\n"
     "ou_em_expected_test, ou_exact_step_test(_stderr), minnorm_test/train, gradient_flow_test,\n"
     "max_clipped_fraction, strong_error_mean/max (sup over steps of ||theta_DPGD - theta_OU||,\n"
     "exact-step coupling), strong_error_em_max, sigma, sigma_route, epsilon (null = inf),\n"
     "epsilon_cks, rho_z, delta, T, eta, tau, C_clip, s, lambda_max, p, n, d, test_size, modes,\n"
     "runs, threads, seed, build_seconds, seconds.",
     rf_opts, 0, NULL, NULL, NULL},
    {"rf-experiment", cmd_rf_experiment, "seed 003's Fig. 2 on random features: P1, P2, P3, P4",
     "rf-experiment P1|P2|P3|P4 [MODEL.ini] [--set k=v]... [--full] [-o DIR] [--runs N] "
     "[--threads T] [--seed S]",
     "Writes DIR/rf-pK.csv and the figure DIR/rf-pK.png (gnuplot). The model (models/rf-pK.ini)\n"
     "gives d, n, test size, activation, target, epsilon, delta, eta (0 = 1/p) and, for P2/P3,\n"
     "C; DP-GD runs in the coordinates of the modes of Phi (exactly Algorithm 1, O(n min(n,p))\n"
     "per step), one run per configuration unless --runs.\n"
     "  P1  test loss against p (reduced: p = 31 ... 20000, 9 values; C in {0.5, 1} x CT in\n"
     "      {2, 5}, the best kept; --full: 25 values up to 40000 and seed 003's 3 x 3 grid)\n"
     "      for DP-GD and the min-norm interpolator (double descent, peak at p = n).\n"
     "  P2  test loss against T = CT d/(eta p), C_clip = C sqrt(p), eta fixed, for p = 4000,\n"
     "      8000, 16000 (--full adds 32000) and 9 CT from 10^-0.5 to 10^1.5 (--full 21), with\n"
     "      the OU closed form and gradient flow at tau = eta T; eta = dpgd.eta, or 1/p_max.\n"
     "  P3  the same against eta T p / d: the curves collapse.\n"
     "  P4  heat map over C in 10^[-2, 1.5] and CT in 10^[-1.5, 2] (8 x 8; --full 20 x 20 up\n"
     "      to 10^2.5) at p = rf.p.\n"
     "Reduced grids take under a minute each on 2 cores at the models' sizes; --full takes\n"
     "minutes to tens of minutes (see models/rf-pK.ini). The CSV is the same for any --threads.",
     rf_experiment_opts, 1, NULL, NULL, NULL},
    {"kl", cmd_kl, "KL privacy of noisy GD on ReLU networks by initialisation (seed 001)",
     "kl bound|init|run [MODEL.ini] [--set k=v]... [--vs epochs|depth|width] [--schemes LIST]\n"
     "       [--depths LIST] [--widths LIST] [--runs N] [--threads T] [--seed S] [-o FILE.csv]\n"
     "       [--figure FIG] [--json FILE.json]",
     "Langevin diffusion / noisy GD W <- W - eta grad L + sqrt(2 eta sigma^2) N(0, I) on fully\n"
     "connected ReLU networks of depth L and width m initialised by LeCun, He, NTK or Xavier\n"
     "(seed 001 Table 1; THEORY.md 8; model keys [kl], see hdpsgd keys). The KL privacy of all\n"
     "iterates is sum_k eta E||grad L(W_k; D) - grad L(W_k; D')||^2 / (c sigma^2) with c = 4: the\n"
     "seed writes c = 2, but for the squared loss the joint law of the iterates is Gaussian and\n"
     "its exact KL equals the c = 4 sum to rounding (tests/test_kl.c), the exact KL of the last\n"
     "iterate equals it after one step. Seed 001's formula (eq. 6, 74) and bounds are thus twice\n"
     "the true KL: still upper bounds, a factor 2 loose (its step 77 takes the variance of a\n"
     "step to be sigma^2 instead of 2 eta sigma^2).\n"
     "  bound  beta_l per layer, B (eq. 7, product formula and Table 1), the KL bound of\n"
     "         Corollary 4.2 (c = 4: B T/(n^2 sigma^2); seed: 2 B T/(n^2 sigma^2)), T = eta epochs,\n"
     "         Pinsker's (0, delta), delta = min(1, sqrt(KL/2)), Corollary 6.4's sigma^2 for the KL\n"
     "         budget kl.budget and its T*, sigma*^2 (R of Lemma 6.3 without log factors), a\n"
     "         target kl.delta; table of B against --depths and --widths. CSV: axis,depth,width,\n"
     "         B_<s>,Btable_<s>,kl_<s>,klseed_<s> for s = lecun, he, ntk, xavier; --figure draws B\n"
     "         (left axis) and the bound (right axis) against depth and width.\n"
     "  init   Monte Carlo of E||df(x)/dW||_F^2 at initialisation (kl.init_runs networks, x on the\n"
     "         sphere of radius sqrt(d)) against Lemma C.3 (exact at every width); exit status 1\n"
     "         when some |z| > validate.z_tol. CSV: init,depth,width,layer,mc_mean,mc_stderr,\n"
     "         lemma_c3,z (layer 0 = the sum).\n"
     "  run    noisy GD on the linearised network f(W_0) + J (W - W_0) (eq. 3) for synthetic data\n"
     "         (x uniform on the sphere of radius sqrt(d), labels sign(u^T x) of a random teacher),\n"
     "         kl.inits initialisations x kl.runs noise paths, squared or logistic loss. The\n"
     "         Jacobian Gram K = J J^T is formed once per initialisation; gradients live in its row\n"
     "         space, so the simulation runs there exactly. Neighbours D' = D without one sample; the\n"
     "         KL is the worst sample's. For the squared loss (an OU process) also the exact KL from\n"
     "         the OU mean and covariance and the exact KL of the last iterate's Gaussian law.\n"
     "         --vs epochs (Fig. 1; default scheme kl.init): CSV epoch,T,<s>_kl,<s>_kl_se,<s>_kl_sd\n"
     "         (spread over initialisations),<s>_kl_max (max over samples of the MC means),\n"
     "         <s>_kl_exact,<s>_kl_final (last iterate),<s>_loss,<s>_bound,<s>_bound_seed.\n"
     "         --vs depth (Fig. 2a, 2b; --depths, default 2:12) or --vs width (Fig. 2c; --widths):\n"
     "         all schemes, KL after round(0.4 epochs) and after epochs; CSV depth|width,\n"
     "         <s>_kl_early(_se),<s>_kl(_se),<s>_exact_early,<s>_exact,<s>_bound_early,<s>_bound,\n"
     "         <s>_B,<s>_grad2. With the squared loss, eta lambda_max(K)/n >= 2 diverges: exit 4\n"
     "         (--vs epochs) or the point is left out with a warning (sweeps).\n"
     "JSON keys: bound: B, B_table, kl_bound, kl_bound_seed, pinsker_delta, sigma2_for_budget,\n"
     "T_opt, sigma2_opt, risk_opt (and *_seed), R_lemma63, beta_<l>; init: <s>_L<L>_mc, _stderr,\n"
     "_lemma_c3, _z, pass; run --vs epochs: <s>_kl, _kl_stderr, _kl_exact, _kl_last_iterate,\n"
     "_kl_seed_constant, _z_exact, _bound, _bound_seed, _pinsker_delta, _B, _grad2, _worst_sample,\n"
     "_eta_lambda_max, _R_lazy, c, epochs, T. Results do not depend on --threads. On 2 cores the\n"
     "defaults take about 20 s for each of run --vs depth and --vs width, 15 s for init, 1 s for\n"
     "run --schemes all (the seed's three figures and the check of Lemma C.3 in about a minute).",
     kl_opts, 1, ".csv", NULL, NULL},
    {"nc", cmd_nc, "NoisyGD on neural-collapse features: error against the dimension p (seed 004)",
     "nc [MODEL.ini] [--set nc.KEY=V]... [--draws N] [--threads T] [--seed S] [--exact] "
     "[-o FILE.csv] [--json FILE.json]\n"
     "       hdpsgd nc --sweep flat|perturb|remedy [MODEL.ini] [--set nc.KEY=V]... [--ps LIST] "
     "[--draws N] [-o FILE.csv] [--figure FIG] [--json FILE.json]",
     "When is the private error of last-layer fine-tuning independent of the feature dimension\n"
     "p, and when do perturbations bring p back (seed 004; THEORY.md 6, 8; the [nc] keys of\n"
     "`hdpsgd keys`). Features: the K-simplex ETF M_k in R^p (||M_k|| = 1, supported on the first\n"
     "K-1 coordinates); n samples in total (nc.imbalance = alpha: class 1 gets round(alpha n)).\n"
     "Training: nc.steps steps of NoisyGD (batch = 0: W <- W - eta (sum_i clip(g_i) + xi)) or\n"
     "NoisySGD (batch = b: a uniform batch of b samples and step eta/b), xi ~ N(0, sigma^2 I),\n"
     "sigma^2 = G^2/(2 rho), clip(g) = min(1, G/||g||) g (seed 004 writes max, which never clips);\n"
     "loss ce | logistic (K = 2, one vector theta) | squared; init zero | gaussian.\n"
     "PRIVACY: nc.rho is zCDP PER STEP as in seed 004 (the rho_z of `hdpsgd privacy`, not the rho\n"
     "of [privacy]); T steps are (T rho)-zCDP, reported as (epsilon, nc.delta) by CKS.\n"
     "Perturbations (nc.perturbation; l_inf size nc.beta; v = beta times fixed random signs):\n"
     "  test-offset  test features M_c + v     adversarial   the worst ||v||_inf <= beta against W\n"
     "  stochastic   test M_c + fresh +-beta   train-offset  training features M_k + v\n"
     "  both         M + v in training and test per-sample   training M_k + fresh +-beta noise\n"
     "Remedies (nc.remedy): center (training and test features each minus their mean; the mean\n"
     "is treated as public), pca (project on the top K-1 principal directions of the centred\n"
     "second moment of nc.public_samples public samples drawn like the training features).\n"
     "A single run makes nc.draws draws of the noise (and of the random perturbations); the test\n"
     "error of each draw is exact (stochastic: nc.test_samples random test points per class). It\n"
     "also gives the exact one-step error 1 - E_Z prod_j Phi(Z + (mu_c - mu_j)/(sigma ||z_c||)) when\n"
     "it applies (one full-batch step from W = 0, deterministic training and test features): for\n"
     "perfect collapse and balanced classes 1 - E[Phi(Z + n/((K-1) sigma))^(K-1)], i.e.\n"
     "Phi(-n/(sqrt2 sigma)) for K = 2 and Phi(-n/(2 sigma)) for the logistic model. --exact gives\n"
     "only that (exit status 2 naming the key when it does not apply). JSON keys: K, p, n,\n"
     "imbalance, loss, init, steps, eta, batch, perturbation, beta, remedy, G, rho, rho_total,\n"
     "delta, epsilon, sigma, exact_error, draws, error_mean, error_stderr, error_min, error_max,\n"
     "z_exact, clipped_fraction, max_clipped_norm, threads, seconds, offset_norm, pca_alignment,\n"
     "seed (null: not applicable). -o writes the run as one CSV row (columns as below).\n"
     "--sweep NAME runs its curves at every p of --ps (default 10,30,...,10000) with 400 draws per\n"
     "point unless nc.draws or --draws is given, each point on its own stream, and writes the CSV\n"
     "(-o, default nc-NAME.csv: curve,name,p,K,n,loss,init,steps,eta,batch,perturbation,beta,\n"
     "remedy,imbalance,G,rho,rho_total,epsilon,delta,sigma,draws,error,stderr,exact,z_exact,\n"
     "clipped_fraction,max_clipped_norm,offset_norm,pca_alignment,seconds) and the figure\n"
     "(--figure, default nc-NAME.png; plots/nc-sweep.gp):\n"
     "  flat     perfect collapse: ce at eta and eta/100, squared loss, imbalance 0.3, 5 steps,\n"
     "           NoisySGD (batch n/2, 5 steps), Gaussian init: all flat in p;\n"
     "  perturb  none, test-offset, adversarial, stochastic, train-offset, both, both with\n"
     "           imbalance 0.3, per-sample: the error grows with p;\n"
     "  remedy   centring against the offsets, PCA against test and per-sample noise, with two\n"
     "           unremedied curves dashed. PCA against per-sample noise holds only while the m\n"
     "           public samples resolve span(M): the mean squared cosine (pca_alignment) is about\n"
     "           (1 - g/l^2)/(1 + g/l), g = p/m, l = 1/((K-1) beta^2) (spiked covariance), so the\n"
     "           error rises again once p is comparable to m/((K-1) beta^2).\n"
     "The sweep's JSON has per curve <name>_error_first, <name>_error_last, <name>_flat_z (max over\n"
     "p of |e_p - e_first| / combined standard error) and <name>_max_z_exact. Each default sweep\n"
     "takes well under a minute on 2 cores.",
     nc_opts, 0, NULL, NULL, NULL},
    {"sim-index", cmd_si, "private feature learning for a single-index model, two stages (seed 002)",
     "sim-index [MODEL.ini] [--set k=v]... [--runs N] [--threads T] [--seed S] [-o FILE.csv]\n"
     "       [--json FILE.json] | --experiment eps|n|align [-o FILE.csv] [--figure FIG]",
     "Seed 002's Algorithm 1 (THEORY.md 6, 7, 8; hdpsgd/si.h) on a two-layer tanh network\n"
     "f(x) = a^T tanh(W^T x + b) and the single-index target y = sigma_*(<x, mu>), sigma_* =\n"
     "he1 He1 + he2 He2 + he3 He3, x ~ N(0, I_d), two disjoint training sets of n samples.\n"
     "Stage 1: one gradient step on W from W_0 (per-sample, per-neuron clipping at C_W), the\n"
     "neurons normalised by max(||w||, R) and noised by sigma_W N(0, I_d): a Gaussian mechanism\n"
     "with sensitivity Delta1 = 2 eta_W C_W sqrt(p)/R, rho_z1 = Delta1^2/(2 sigma_W^2). Stage 2:\n"
     "DP-GD on a over the fixed features with ridge lambda, clipping at C_a and noise\n"
     "sqrt(eta_a) (2 C_a/n) sigma_a N(0, I_p) (stage2 = gd; eta_a lambda_max(K) < 2 is enforced,\n"
     "eta_a = 0 means 1/lambda_max), or the exact OU law at tau = eta_a T (stage2 = ou).\n"
     "Fixed slips of seed 002: the clip is g min(1, C_a/||g||) (written inverted), the noise is\n"
     "a vector N(0, I_p) (written N(0, 1)), the gradient uses a_{t-1} (written a_{i-1}), the\n"
     "noise scale is 2 C_a/n (replace-one sensitivity; written C_a/n), eps_B -> eps_n, and the\n"
     "undefined first-layer clip g^C_W is defined. Privacy: stage 2 by THEORY 6 (sigma_a by\n"
     "seed 002's formula for the target si.epsilon, else the zCDP route), stage 1 as above,\n"
     "total by zCDP composition, (epsilon, delta) by Canonne-Kamath-Steinke. Scalings: seed\n"
     "002's Assumption 4 with prefactors (hdpsgd keys, section [si]).\n"
     "CSV (one row per eigenmode k of K = (2/n) Phi^T Phi + 2 lambda I): mode,lambda_k,\n"
     "pred_mean,mc_mean,mc_mean_se,z_mean,pred_var,mc_var,mc_var_se,z_var,ou_mean,ou_var,\n"
     "gd_mean,gd_var: the Monte Carlo of the second-layer weights over si.runs runs against\n"
     "the law of the simulated process (gd: unclipped discrete GD; ou: OU at tau). JSON keys:\n"
     "test_risk(_stderr) (fresh samples), ou_expected_risk, gd_expected_risk, zero_risk,\n"
     "alignment_mean, alignment_init_mean, random_alignment, stage1_clipped_fraction,\n"
     "stage1_floored_neurons, clipped_fraction, max_z_mean, max_z_var, lambda_max,\n"
     "eta_lambda_max, the resolved hyperparameters, sigma_a(_route), rho_z1, rho_z2, rho_z,\n"
     "epsilon_stage1, epsilon_stage2, epsilon_total, delta, d, p, n, runs, threads, seed.\n"
     "--experiment eps: risk against the stage-2 epsilon (0.25 ... 32, inf) on one problem;\n"
     "n: risk and alignment against n = 500 ... 8000; align: histograms of the alignment\n"
     "|<w_j, mu>|/||w_j|| at W_0, after stage 1 with sigma_W = 0 and with the model's sigma_W\n"
     "(p = 512 unless si.p is given). Each writes si-NAME.csv and si-NAME.png (gnuplot) and\n"
     "takes well under a minute at the defaults. Results do not depend on --threads.",
     si_opts, 0, NULL, NULL, NULL},
    {"keys", cmd_keys, "list the model keys with their defaults", "keys",
     "Prints every model key as section.key = default, with what it accepts.", no_opts, 0, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL},
};

const char *hdp_version_string(void) { return HDPSGD_VERSION_FULL; }

int cmd_keys(int argc, char **argv)
{
    cli_common common;
    int rc = cli_parse(cli_find_command("keys"), argc, argv, &common);
    if (rc)
        return rc;
    const char *section, *key, *def, *help, *prev = "";
    for (int i = 0; hdp_model_schema_entry(i, &section, &key, &def, &help); i++) {
        if (strcmp(prev, section))
            printf("%s[%s]\n", i ? "\n" : "", section);
        prev = section;
        printf("  %-18s = %-10s %s\n", key, def[0] ? def : "(none)", help);
    }
    return 0;
}

static void print_commands(FILE *f)
{
    fprintf(f, "Usage: hdpsgd <command> [MODEL.ini] [--set section.key=value]... [options]\n\n"
               "Predicts and simulates the training dynamics of differentially private SGD in\n"
               "high dimensions (see README.md and THEORY.md).\n\nCommands:\n");
    for (const cli_command *c = hdp_commands; c->name; c++)
        fprintf(f, "  %-14s %s\n", c->name, c->summary);
    fprintf(f, "  %-14s %s\n", "help", "help COMMAND: the options of one command");
    fprintf(f, "\nWith no MODEL.ini the built-in default model is used (models/default.ini).\n"
               "Options: --version, --help, --man (the man page), --completion bash.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_commands(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        print_commands(stdout);
        return 0;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "version")) {
        printf("hdpsgd %s\n", hdp_version_string());
        return 0;
    }
    if (!strcmp(name, "--man")) {
        cli_print_man(stdout);
        return 0;
    }
    if (!strcmp(name, "--completion")) {
        if (argc < 3 || strcmp(argv[2], "bash")) {
            fprintf(stderr, "hdpsgd: --completion takes 'bash'\n");
            return 2;
        }
        cli_print_completion_bash(stdout);
        return 0;
    }
    if (!strcmp(name, "help")) {
        if (argc < 3) {
            print_commands(stdout);
            return 0;
        }
        const cli_command *c = cli_find_command(argv[2]);
        if (!c) {
            fprintf(stderr, "hdpsgd: unknown command '%s'\n", argv[2]);
            return 2;
        }
        cli_print_help(c, stdout);
        return 0;
    }
    const cli_command *c = cli_find_command(name);
    if (!c) {
        fprintf(stderr, "hdpsgd: unknown command '%s'\n\n", name);
        print_commands(stderr);
        return 2;
    }
    const char *simd = hdp_normals_env_problem();
    if (simd)
        fprintf(stderr, "hdpsgd: warning: HDPSGD_SIMD=%s %s\n", getenv("HDPSGD_SIMD"), simd);
    cli_install_signal_handlers(); /* an interrupted command leaves no partial output */
    int rc = c->run(argc - 1, argv + 1);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("hdpsgd: error writing to standard output");
        return EXIT_IO;
    }
    return rc;
}
