/*
 * design_refine.c — method bfgs with refinement in the knots (pl): the levels K -> 2K - 1, each
 * started from the coarser level's optimum (its schedule at the new knots), until the search
 * risk moves by less than refine_tol; without --refine, one level.
 */
#include "drivers/design_internal.h"
#include "hdpsgd/dataset.h"

#include <math.h>
#include <stdlib.h>

/* The pl start at K knots from an earlier pl result (its schedule at the new knots). */
void design_pl_start_from(const search *s, const hdp_design_result *prev, double *p)
{
    double e_prev = 0;
    for (int i = 0; i < s->K; i++) {
        double t = i == s->K - 1 ? 1.0 : (double)i / (double)(s->K - 1);
        double e = hdp_design_eta(prev, t);
        if (i == 0)
            p[0] = design_logit(e * s->base->gamma / 2.0);
        else
            p[i] = design_ratio_param(s, e_prev > 0 ? e / e_prev : 1e-12);
        e_prev = e > 0 ? e : 1e-300;
    }
    if (s->tune_clip)
        p[s->np - 1] = log(prev->c);
}

/* refine: a finished level to the progress callback, with its table (its K knots) */
static void report_level(search *s, hdp_design_result *level)
{
    if (!s->opt->progress)
        return;
    hdp_error err;
    hdp_error_clear(&err);
    level->search_risk = s->best;
    level->final_risk = level->table_final_risk = NAN;
    if (design_make_table(level, 0, &err) != HDP_OK)
        return; /* out of memory: no table to report, the search goes on */
    if (s->opt->level)
        *s->opt->level = level;
    design_report(s, HDP_DESIGN_LEVEL);
    if (s->opt->level)
        *s->opt->level = NULL;
    hdp_design_result_free(level); /* the table only; the schedule stays */
}

/* refine, cancelled before the next level's first point: the finished level (level, at
 * res->level_knots[levels - 1] knots) is the search's best again */
static void keep_level(search *s, const hdp_design_result *level, const hdp_design_result *res)
{
    s->K = res->level_knots[res->levels - 1];
    s->np = design_nparams(s->family, s->K, s->opt->tune_clip);
    design_pl_start_from(s, level, s->best_p);
    s->best = res->level_risk[res->levels - 1];
}

/* method bfgs: at each level (one without --refine) a scan (level 0) or the start from the
 * coarser level's optimum, then BFGS from the best starts; --refine (pl) doubles the knots'
 * segments until the search risk moves by less than refine_tol, recording each level in res.
 * A cancellation ends it early (HDP_OK; the caller reports it). */
hdp_status design_search_bfgs(search *s, const hdp_design_result *hints, int nhints,
                              hdp_design_result *res, hdp_error *err)
{
    const hdp_design_options *opt = s->opt;
    s->g = calloc(1, sizeof *s->g);
    hdp_design_result *level = calloc(1, sizeof *level);
    hdp_status st = HDP_OK;
    if (!s->g || !level) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory");
        goto done;
    }
    if (s->tune_clip && hdp_model_data(s->base) && !hdp_model_data(s->base)->planted) {
        /* core/ode_grad.h: c fixed by a least-squares target's bias */
        st = hdp_fail(err, HDP_EINPUT,
                      "--tune-clip on a data set with a least-squares target: the exact gradient "
                      "does not differentiate the clipping bias theta_c, the residuals' law and "
                      "the energies in c (docs/theory.md §9.3); tune c with --method simplex");
        goto done;
    }
    if ((st = hdp_ode_grad_init_problem(s->g, s->pb, err)) != HDP_OK)
        goto done;
    long budget = s->max_solves;
    int refine = opt->refine && s->family == HDP_FAMILY_PL;
    for (int lv = 0;; lv++) {
        s->best = INFINITY;
        s->nstart = 0;
        s->max_solves = s->solves + budget;
        if (lv == 0) {
            design_scan(s, hints, nhints);
        } else {
            double p[MAX_PARAMS];
            design_pl_start_from(s, level, p);
            design_eval_p(s, p);
            if (design_cancel_asked(s) && !(s->best < PENALTY)) {
                keep_level(s, level, res); /* cancelled before the new level's first point */
                goto done;
            }
        }
        if (design_cancel_asked(s) || (st = design_check_scan(s, err)) != HDP_OK)
            goto done;
        design_bfgs_search(s, s->start_p, s->start_f, s->nstart);
        design_decode(s, s->best_p, level);
        if (!refine)
            break;
        res->level_knots[lv] = s->K;
        res->level_risk[lv] = s->best;
        res->levels = lv + 1;
        if (design_cancel_asked(s))
            goto done; /* the level's search was cut short: not a finished level */
        report_level(s, level);
        if (lv > 0 && fabs(res->level_risk[lv - 1] - s->best) <= opt->refine_tol * fabs(s->best))
            break;
        if (2 * s->K - 1 > HDP_DESIGN_MAX_KNOTS || lv + 1 >= HDP_DESIGN_MAX_LEVELS)
            break;
        s->K = 2 * s->K - 1;
        s->np = design_nparams(s->family, s->K, opt->tune_clip);
    }
done:
    free(level);
    return st;
}
