/*
 * validate.c — the only code that sees both the theory side (ODE) and the
 * simulation side (Monte Carlo, SDE); see hdpsgd/validate.h.
 */
#include "hdpsgd/validate.h"
#include "core/check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hdpsgd/grid.h"
#include "hdpsgd/privacy.h"

hdp_status hdp_validate_compare(const hdp_ode_result *ode, const hdp_mc_result *mc,
                                double rel_tol, double z_tol, hdp_validate_side *side,
                                hdp_error *err)
{
    HDP_ZERO(side);
    HDP_REQUIRE(err, ode);
    HDP_REQUIRE(err, mc);
    HDP_REQUIRE(err, side);
    if (ode->points < 1 || mc->points != ode->points || !ode->risk || !mc->mean ||
        !mc->stderr_ || !mc->clipped)
        return hdp_fail(err, HDP_EINPUT,
                        "hdp_validate_compare: the ODE has %ld grid points and the simulation %ld: "
                        "both sides must be on the same grid",
                        ode->points, mc->points);
    if (!(rel_tol > 0) || !(z_tol > 0))
        return hdp_fail(err, HDP_EINPUT, "hdp_validate_compare: rel_tol and z_tol must be > 0");
    side->worst_point = side->max_z_point = -1;
    side->pass = 1;
    double worst_margin = 0; /* how far past both tolerances the worst point is */
    double clipped = 0;
    for (long i = 0; i < ode->points; i++) {
        double abs_dev = fabs(mc->mean[i] - ode->risk[i]);
        double rel = ode->risk[i] > 0 ? abs_dev / ode->risk[i] : (abs_dev > 0 ? INFINITY : 0);
        /* a standard error below double rounding of the risk (runs that all start at the same
         * iterate: a data set's least-squares target at t = 0) does not make rounding
         * significant: 1e-12 |R| is a floor far above sum-order differences (d eps) */
        double se = fmax(mc->stderr_[i], 1e-12 * fabs(ode->risk[i]));
        double z = se > 0 ? abs_dev / se : (abs_dev > 0 ? INFINITY : 0);
        if (abs_dev > side->max_abs_dev) side->max_abs_dev = abs_dev;
        if (rel > side->max_rel_dev) side->max_rel_dev = rel;
        if (z > side->max_z) {
            side->max_z = z;
            side->max_z_point = i;
        }
        if (!(rel <= rel_tol || z <= z_tol)) {
            side->pass = 0;
            double margin = fmin(rel / rel_tol, z / z_tol);
            if (margin > worst_margin) {
                worst_margin = margin;
                side->worst_point = i;
            }
        }
        if (i > 0) clipped += mc->clipped[i];
    }
    side->within_rel_tol = side->max_rel_dev <= rel_tol;
    side->significant = side->max_z > z_tol;
    side->clipped = ode->points > 1 ? clipped / (double)(ode->points - 1) : 0;
    side->final_risk = mc->final_mean;
    side->final_stderr = mc->final_stderr;
    return HDP_OK;
}

void hdp_validate_free(hdp_validate_result *v)
{
    if (!v)
        return;
    hdp_ode_result_free(&v->ode);
    hdp_mc_result_free(&v->sim);
    hdp_mc_result_free(&v->sde);
}

/* the ODE, the Monte Carlo and (with_sde) the SDE on one problem, each compared with the ODE */
static hdp_status run_sides(const hdp_problem *pb, const hdp_mc_options *opt, int with_sde,
                            hdp_validate_result *v, hdp_error *err)
{
    const hdp_model *m = pb->model;
    /* the ODE honours the Monte Carlo's cancel flag too (issue 29) */
    const volatile int *old_cancel = hdp_cancel_flag_set(opt->cancel);
    hdp_status st = hdp_ode_solve_problem(m, pb, &v->ode, err);
    hdp_cancel_flag_set(old_cancel);
    /* the Monte Carlo, then the SDE */
    for (int k = 0; st == HDP_OK && k < (with_sde ? 2 : 1); k++) {
        hdp_mc_result *mc = k ? &v->sde : &v->sim;
        hdp_validate_side *side = k ? &v->sde_side : &v->sim_side;
        st = k ? hdp_sde_run_problem(pb, opt, mc, err) : hdp_sim_run_problem(pb, opt, mc, err);
        if (st == HDP_OK)
            st = hdp_validate_compare(&v->ode, mc, m->rel_tol, m->z_tol, side, err);
        if (st == HDP_OK)
            v->pass = side->pass && (k == 0 || v->pass);
    }
    return st;
}

hdp_status hdp_validate_run(const hdp_model *m, const hdp_mc_options *opt, int with_sde,
                            hdp_validate_result *v, hdp_error *err)
{
    HDP_ZERO(v);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, v);
    if (m->sampling == HDP_SAMPLING_SHUFFLE || m->sampling == HDP_SAMPLING_POISSON)
        return hdp_model_fail_key(m, "sgd", "sampling", err,
                                  "sampling = %s: nothing to validate: the risk ODE and the SDE "
                                  "are one-pass DP-SGD's (docs/theory.md §3, §4) and no theory of "
                                  "the toolkit covers standard DP-SGD on a finite training set "
                                  "(docs/theory.md §6.6); hdpsgd sim simulates it",
                                  hdp_sampling_name(m->sampling));
    /* one problem (spectrum, bins, schedule, threshold, accountant) for the three sides; the
     * model is checked once, there */
    hdp_problem pb;
    hdp_status st = hdp_problem_build(m, &pb, err);
    if (st != HDP_OK) {
        hdp_problem_free(&pb);
        return st;
    }
    v->with_sde = with_sde;
    v->rho = m->rho;
    v->rho_z = 0.5 * m->rho * m->rho;
    v->delta = m->delta;
    v->epsilon_cks = hdp_zcdp_epsilon_cks(v->rho_z, v->delta);
    v->epsilon_bs = hdp_zcdp_epsilon_bs(v->rho_z, v->delta);
    st = run_sides(&pb, opt, with_sde, v, err);
    hdp_problem_free(&pb);
    return st;
}

/* ---- scaling in n ---- */

typedef struct {
    const hdp_model *base;
    const hdp_mc_options *opt;
    hdp_progress_fn progress;
    void *user;
    hdp_validate_scaling_result *res;
    long K;
} scaling_ctx;

static hdp_status level_job(void *user, long l, void *row, hdp_error *err)
{
    (void)row;
    scaling_ctx *c = user;
    long f = 1L << (2 * l);
    if (c->progress && c->progress("validate level", l, c->K, (double)(c->base->n * f),
                                   c->user))
        return hdp_fail(err, HDP_ECANCELLED, "validate --scaling: stopped before level %ld",
                        l + 1);
    /* the level's model: the base with data.d and data.n scaled, made in the library (no
     * call back into the program) */
    char dval[32], nval[32];
    snprintf(dval, sizeof dval, "%ld", c->base->d * f);
    snprintf(nval, sizeof nval, "%ld", c->base->n * f);
    hdp_model md, m;
    hdp_status st = hdp_model_with(c->base, "data.d", dval, &md, err);
    if (st == HDP_OK) {
        st = hdp_model_with(&md, "data.n", nval, &m, err);
        hdp_model_free(&md);
    }
    if (st != HDP_OK)
        return st;
    hdp_validate_result v;
    st = hdp_validate_run(&m, c->opt, 0, &v, err);
    if (st == HDP_OK)
        c->res->level[l] = (hdp_validate_level){m.n, m.d, v.sim_side.max_abs_dev,
                                                v.sim_side.max_rel_dev, v.sim_side.max_z};
    hdp_validate_free(&v);
    hdp_model_free(&m);
    return st;
}

hdp_status hdp_validate_scaling(const hdp_model *base, const hdp_mc_options *opt, long K,
                                hdp_progress_fn progress, void *user,
                                hdp_validate_scaling_result *res, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, base);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, res);
    if (K < 1 || K > HDP_VALIDATE_MAX_LEVELS)
        return hdp_fail(err, HDP_EINPUT, "hdp_validate_scaling: %ld levels: expected 1 to %d", K,
                        HDP_VALIDATE_MAX_LEVELS);
    if (base->spectrum == HDP_SPECTRUM_FILE)
        return hdp_fail(err, HDP_EINPUT, "--scaling needs a generated spectrum (data.spectrum = "
                        "isotropic | powerlaw | twolevel), not a file");
    if (hdp_model_check(base, err) != HDP_OK)
        return HDP_EINPUT;
    scaling_ctx c = {base, opt, progress, user, res, K};
    hdp_grid_spec g = {.count = K, .job = level_job, .user = &c};
    hdp_status st = hdp_grid_each(&g, err);
    if (st != HDP_OK)
        return st;
    res->levels = K;
    if (progress)
        progress("validate level", K, K, NAN, user);
    /* least-squares slope of log(max_abs_dev) against log(n) */
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (long l = 0; l < K; l++) {
        double x = log((double)res->level[l].n), y = log(res->level[l].max_abs_dev);
        sx += x; sy += y; sxx += x * x; sxy += x * y;
    }
    res->slope = K >= 2 ? (K * sxy - sx * sy) / (K * sxx - sx * sx) : NAN;
    double n0 = (double)res->level[0].n, n1 = (double)res->level[K - 1].n;
    res->theory_slope = (log(log(n1) * log(n1) / sqrt(n1)) - log(log(n0) * log(n0) / sqrt(n0))) /
                        (log(n1) - log(n0));
    for (long l = 0; l < K; l++)
        if (res->level[l].max_z > res->max_z) res->max_z = res->level[l].max_z;
    return HDP_OK;
}
