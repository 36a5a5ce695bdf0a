/*
 * design_internal.h — the designer's private declarations shared by design.c,
 * design_family.c, design_search.c, design_refine.c, design_compare.c and design_set.c:
 * the search's state and the functions one file calls in another; internal.
 */
#ifndef HDPSGD_DESIGN_INTERNAL_H
#define HDPSGD_DESIGN_INTERNAL_H

#include "hdpsgd/design.h"
#include "core/check.h"
#include "core/ode_grad.h"
#include "hdpsgd/error.h"
#include "hdpsgd/schedule.h"

#define PENALTY 1e30
#define MAX_PARAMS (HDP_DESIGN_MAX_KNOTS + 1)

typedef struct {
    const hdp_model *base;
    const hdp_problem *pb;       /* the problem base was checked and built with */
    hdp_model work;              /* m at the search settings (hdp_model_with); its schedule
                                    design_apply's, its table s->kt, s->ke */
    hdp_design_family family;
    int K, tune_clip, np;
    double kt[HDP_DESIGN_MAX_KNOTS], ke[HDP_DESIGN_MAX_KNOTS]; /* pl knots of the candidate */
    long solves, max_solves;
    int cancel_seen;             /* cancelled: solves_done the solves before the stop (the
                                    objective then sets solves = max_solves to end the loops) */
    long solves_done;
    int stop;                    /* the progress callback asked to stop (as opt->cancel) */
    hdp_error fatal;             /* simplex: a solve's failure other than numerical (out of
                                    memory, bad input): ends the search, reported */
    double best, best_p[MAX_PARAMS];
    int restart;
    const hdp_design_options *opt;
    hdp_ode_grad *g;             /* bfgs: the differentiated discretisation (ode_grad.h) */
    int nstart;                  /* bfgs: the best distinct points of the scan */
    double start_f[3], start_p[3][MAX_PARAMS];
} search;

/* design.c */
double design_now_seconds(void);

/* design_family.c: the parametrisation */
double design_clampd(double x, double lo, double hi);
double design_sigmoid(double p);
double design_logit(double u);
double design_knot_ratio(const search *s, double p);
double design_ratio_param(const search *s, double ratio);
int design_nparams(hdp_design_family f, int K, int tune_clip);
void design_decode(const search *s, const double *p, hdp_design_result *r);
void design_apply(hdp_model *w, const hdp_design_result *r, double *t, double *eta);
/* free a model's schedule table (its schedule is then the designer's to set) */
void design_drop_table(hdp_model *w);
hdp_status design_make_table(hdp_design_result *r, long N, hdp_error *err);
/* hdp_design_model on a base model already checked (the designer's problem's) */
hdp_status design_model(const hdp_model *base, const hdp_design_result *r, int use_table,
                        hdp_model *out, hdp_error *err);

/* design_search.c: the searches at fixed K */
int design_cancel_asked(const search *s);
void design_report(search *s, hdp_design_event e);
double design_eval_p(search *s, const double *p);
void design_scan(search *s, const hdp_design_result *hints, int nhints);
void design_nelder_mead(search *s, double step);
void design_bfgs_search(search *s, double (*starts)[MAX_PARAMS], const double *start_f,
                        int nstarts);
hdp_status design_check_scan(const search *s, hdp_error *err);
hdp_status design_search_simplex(search *s, const hdp_design_result *hints, int nhints,
                                 hdp_error *err);

/* design_refine.c: method bfgs, refined in the knots */
void design_pl_start_from(const search *s, const hdp_design_result *prev, double *p);
hdp_status design_search_bfgs(search *s, const hdp_design_result *hints,
                              int nhints, hdp_design_result *res, hdp_error *err);

#endif
