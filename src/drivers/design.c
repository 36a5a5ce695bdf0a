/*
 * design.c — schedule design on the risk ODE (docs/theory.md §3, §5, §6) for one family,
 * hdp_design_optimize: its checks, the search's state, the search (design_search.c,
 * design_refine.c) and the winner's final risk and table at the model's own settings; see
 * hdpsgd/design.h for the families, the parametrisation and the ownership rules.
 *
 * Objective: hdp_ode_solve(...).final_risk = R(1) + 2 c^2 gamma^2 eta~(1)^2 / rho^2
 * (docs/theory.md §3, final-iterate jump included), at the model's fixed rho (docs/theory.md §6:
 * every schedule discretised as in docs/theory.md §1 is exactly (rho^2/2)-zCDP).
 * Search, method bfgs (default): the objective and its exact gradient from the
 * differentiated Runge-Kutta discretisation of core/ode_grad.h (privacy noise and
 * final-step noise included, docs/theory.md §5.3); a coarse scan of it, then GSL's vector_bfgs2
 * from the three best distinct scan points, each restarted while a round gains more than
 * 1e-10 relative; refine (pl): K -> 2K - 1 knots from the coarser optimum. Method simplex:
 * a coarse scan, then Nelder-Mead (gsl_multimin_fminimizer_nmsimplex2) on hdp_ode_solve restarted
 * from the best point with a shrinking initial simplex until a round gains less than
 * 1e-6 relative (the search ODE is accurate to ~1e-6 at rtol 1e-7). Both: at most
 * max_restarts rounds and max_solves ODE solves (per refine level). A candidate whose ODE
 * fails scores PENALTY.
 */
#include "drivers/design_internal.h"
#include "core/problem_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double design_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* final_risk of the ODE of a design result at the model's own [ode] settings (docs/theory.md §3) */
static hdp_status solve_at_model(const hdp_model *m, const hdp_design_result *r, int use_table,
                                 double *risk, hdp_error *err)
{
    hdp_model mm;
    hdp_status st = design_model(m, r, use_table, &mm, err); /* m: checked with the problem */
    if (st != HDP_OK)
        return st;
    hdp_ode_result o;
    st = hdp_ode_solve(&mm, &o, err);
    if (st == HDP_OK)
        *risk = o.final_risk;
    hdp_ode_result_free(&o);
    hdp_model_free(&mm);
    return st;
}


/* the steps of hdp_design_optimize, after it */
static hdp_status check_request(hdp_design_family family, const hdp_design_options *opt,
                                hdp_error *err);
static hdp_status search_new(const hdp_model *m, hdp_design_family family,
                             const hdp_design_options *opt, search **out, hdp_error *err);
static void search_free(search *s);
static hdp_status finish(const search *s, const hdp_model *m, double t0, hdp_design_result *res,
                         hdp_error *err);
static hdp_status finish_cancelled(search *s, const hdp_model *m, double t0,
                                   hdp_design_result *res, hdp_error *err);

/* the problem (without the accountant, which the designer does not read), then the search */
hdp_status hdp_design_optimize(const hdp_model *m, hdp_design_family family,
                               const hdp_design_options *opt, const hdp_design_result *hints,
                               int nhints, hdp_design_result *res, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, res);
    hdp_problem pb; /* checks m */
    hdp_status st = hdp_problem_build_solver(m, &pb, err);
    if (st == HDP_OK)
        st = hdp_design_optimize_problem(&pb, family, opt, hints, nhints, res, err);
    hdp_problem_free(&pb);
    return st;
}

/* check, search (simplex or bfgs, hdp_design_options), finish */
hdp_status hdp_design_optimize_problem(const hdp_problem *pb, hdp_design_family family,
                                       const hdp_design_options *opt,
                                       const hdp_design_result *hints, int nhints,
                                       hdp_design_result *res, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, res);
    if (hdp_problem_check(pb, NULL, "hdp_design_optimize_problem", err) != HDP_OK)
        return HDP_EINPUT;
    const hdp_model *m = pb->model;
    res->family = family;
    hdp_status st = check_request(family, opt, err);
    if (st != HDP_OK)
        return st;
    search *s;
    if ((st = search_new(m, family, opt, &s, err)) != HDP_OK)
        return st;
    s->pb = pb;
    double t0 = design_now_seconds();
    hdp_gsl_quiet();
    /* the ODE solves stop at their next step when cancelled (issue 29) */
    const volatile int *old_cancel = hdp_cancel_flag_set(opt->cancel);
    if (opt->method == HDP_DESIGN_SIMPLEX)
        st = design_search_simplex(s, hints, nhints, err);
    else
        st = design_search_bfgs(s, hints, nhints, res, err);
    if (st == HDP_OK && !design_cancel_asked(s))
        st = finish(s, m, t0, res, err);
    hdp_cancel_flag_set(old_cancel);
    if (st != HDP_ECANCELLED && design_cancel_asked(s)) /* whatever the solve then said */
        st = finish_cancelled(s, m, t0, res, err);
    search_free(s);
    return st;
}

/* A cancelled search, with keep_best: the best point found so far finished as usual (its risk and table at
 * the model's settings, solved with the cancel flag no longer set) and marked unconverged;
 * HDP_ECANCELLED in every case, res->unconverged = 1 only when it holds a result. */
static hdp_status finish_cancelled(search *s, const hdp_model *m, double t0,
                                   hdp_design_result *res, hdp_error *err)
{
    hdp_error_clear(err);
    if (s->cancel_seen)
        s->solves = s->solves_done;
    if (s->opt->keep_best && s->best < PENALTY) {
        hdp_status st = finish(s, m, t0, res, err);
        if (st != HDP_OK)
            return st;
        res->unconverged = 1;
    }
    return hdp_fail(err, HDP_ECANCELLED, "%s family: cancelled during the search",
                    hdp_design_family_name(s->family));
}

/* hdp_design_optimize's argument checks (after its NULL checks and the model's) */
static hdp_status check_request(hdp_design_family family, const hdp_design_options *opt,
                                hdp_error *err)
{
    if (family < 0 || family >= HDP_FAMILY_COUNT)
        return hdp_fail(err, HDP_EINPUT, "unknown schedule family %d", (int)family);
    if (opt->method != HDP_DESIGN_BFGS && opt->method != HDP_DESIGN_SIMPLEX)
        return hdp_fail(err, HDP_EINPUT, "unknown design method %d", (int)opt->method);
    if (opt->refine && !(opt->refine_tol > 0))
        return hdp_fail(err, HDP_EINPUT, "refine: tolerance %g; expected a positive number",
                        opt->refine_tol);
    if (family == HDP_FAMILY_PL && (opt->knots < 2 || opt->knots > HDP_DESIGN_MAX_KNOTS))
        return hdp_fail(err, HDP_EINPUT, "pl family: K = %d knots; expected 2 to %d", opt->knots,
                        HDP_DESIGN_MAX_KNOTS);
    return HDP_OK;
}

/* The search's state for family at the search settings, in *out:
 * its work model is m at 2 output points and the search's rtol (hdp_model_with), whose
 * schedule each evaluation replaces (design_apply; a pl table in s->kt, s->ke). */
static hdp_status search_new(const hdp_model *m, hdp_design_family family,
                             const hdp_design_options *opt, search **out, hdp_error *err)
{
    *out = NULL;
    if (m->ode_model == HDP_ODE_MODEL_ROWS) /* docs/theory.md §9.5 */
        return hdp_model_fail_key(m, "ode", "model", err,
                                  "schedule design searches the bins' ODE (its exact gradient, "
                                  "thousands of solves); model = rows is for ode and validate: "
                                  "design with model = bins, then check the schedule with rows");
    search *s = calloc(1, sizeof *s);
    if (!s)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    char rtol[32];
    snprintf(rtol, sizeof rtol, "%.17g", fmax(opt->search_rtol, m->rtol));
    hdp_model two;
    hdp_status st = hdp_model_with(m, "ode.points", "2", &two, err);
    if (st == HDP_OK)
        st = hdp_model_with(&two, "ode.rtol", rtol, &s->work, err);
    hdp_model_free(&two);
    if (st != HDP_OK) {
        free(s);
        return st;
    }
    design_drop_table(&s->work); /* the schedule is the search's (design_apply) */
    s->base = m;
    s->family = family;
    s->K = opt->knots;
    s->tune_clip = opt->tune_clip;
    s->np = design_nparams(family, opt->knots, opt->tune_clip);
    s->max_solves = opt->max_solves > 0 ? opt->max_solves : 6000;
    s->best = INFINITY;
    s->opt = opt;
    *out = s;
    return HDP_OK;
}

static void search_free(search *s)
{
    if (s->g) {
        hdp_ode_grad_free(s->g);
        free(s->g);
    }
    s->work.table_t = s->work.table_eta = NULL; /* s->kt, s->ke: not the model's own */
    hdp_model_free(&s->work);
    free(s);
}

/* The winner of the search into res, then its final risk and its table's at the model's own
 * settings. */
static hdp_status finish(const search *s, const hdp_model *m, double t0, hdp_design_result *res,
                         hdp_error *err)
{
    design_decode(s, s->best_p, res);
    res->search_risk = s->best;
    res->ode_solves = s->solves;
    res->seconds = design_now_seconds() - t0;
    hdp_status st = solve_at_model(m, res, 0, &res->final_risk, err);
    if (st == HDP_OK)
        st = design_make_table(res, s->opt->table_points, err);
    if (st == HDP_OK)
        st = solve_at_model(m, res, 1, &res->table_final_risk, err);
    return st;
}
