/*
 * hdpsgd/design.h — schedule design: learning-rate schedules that minimise the
 * predicted final-iterate excess risk at a fixed privacy level
 * (docs/theory.md §3, §5 and §6).
 *
 * What is minimised: hdp_ode_solve's final_risk, i.e. R(1) of the risk ODE of
 * docs/theory.md §3 plus the final-iterate jump 2 c^2 gamma^2 eta~(1)^2 / rho^2. Every
 * candidate keeps the model's rho: the discrete schedule of docs/theory.md §1 spends
 * exactly rho whatever eta~ is (docs/theory.md §6: the accountant gives rho_acc = rho),
 * so all families are compared at the same (rho^2/2)-zCDP guarantee.
 *
 * Families (eta~ is the continuous learning rate of docs/theory.md §5, dimensionless;
 * the step size of the algorithm is eta_k = eta~(k/n) / n):
 *   output        eta~ = eta0                       1 parameter
 *   linear-noise  eta~ = eta0 sqrt(1 - t)           1 parameter
 *   inverse-time  eta~ = c1 / (t + a)               2 parameters (c1, a); the model keys
 *                 c2 = a/gamma and c3 = a rho/gamma both reproduce a = gamma max(c2, c3/rho)
 *   pl            non-increasing piecewise-linear eta~ through K knots t_i = i/(K-1),
 *                 K parameters (the knot values)
 * and, with tune_clip, the clipping constant c (docs/theory.md §0) as one more parameter.
 *
 * Method: unconstrained parameters p mapped so that every candidate is admissible:
 *   eta~(0) = (2/gamma) sigmoid(p_0)   (stability, docs/theory.md §3: sup eta~ = eta~(0) <
 *   2/gamma); inverse-time: a = e^{p_1}, c1 = a eta~(0);
 *   pl: eta~(t_i) = eta~(t_{i-1}) r(p_i) (non-increasing, docs/theory.md §1), the ratio
 *       r(p) = 1/(1 + p^2) for bfgs (equal knots, the usual active constraint, at p = 0 with
 *       non-zero curvature) and sigmoid(p) for simplex;
 *   c = e^{p_c}.
 * Default method (bfgs): the final risk and its exact gradient in p from the
 * reverse-mode differentiated Runge-Kutta discretisation of src/core/ode_grad.h
 * (privacy noise sigma~^2 = -(eta~^2)'/rho^2 and the final-iterate jump included); a
 * coarse scan of the same objective picks the starts, and GSL's vector_bfgs2 minimises
 * from the three best, each restarted until a restart no longer improves. With refine
 * (pl) the optimum at K knots, interpolated, starts the search at 2K - 1 knots.
 * Method simplex (the former method, for comparison): a coarse scan, then GSL's
 * Nelder-Mead simplex (nmsimplex2) restarted from the best point until a restart no
 * longer improves, on hdp_ode_solve (2 output points, rtol = search_rtol).
 * Either way the winner is re-solved by hdp_ode_solve at the model's own [ode] settings.
 *
 * Ownership: results own their arrays (release with hdp_design_result_free, also
 * after a failure). Models made by hdp_design_model are deep copies (release with
 * hdp_model_free). The library prints nothing: progress goes through an optional
 * callback.
 */
#ifndef HDPSGD_DESIGN_H
#define HDPSGD_DESIGN_H

#include <stdio.h>

#include "hdpsgd/model.h"
#include "hdpsgd/ode.h"
#include "hdpsgd/problem.h"
#include "hdpsgd/progress.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HDP_FAMILY_OUTPUT = 0,
    HDP_FAMILY_LINEAR_NOISE,
    HDP_FAMILY_OPTIMAL,
    HDP_FAMILY_PL,
    HDP_FAMILY_COUNT
} hdp_design_family;
/* the family c1/(t + a) by its name since issue 21 (not the optimum at finite gamma) */
#define HDP_FAMILY_INVERSE_TIME HDP_FAMILY_OPTIMAL

/* "output", "linear-noise", "inverse-time", "pl"; and the reverse (-1 when unknown),
 * which also accepts "optimal", the name of inverse-time before issue 21. */
const char *hdp_design_family_name(hdp_design_family f);
int hdp_design_family_parse(const char *name);

/* The family as machine-read outputs spell it (CSV columns and cells, JSON values, the
 * gnuplot scripts): "output", "linear-noise", "inverse-time", "pl" (the name since
 * issue 21 here too; "optimal" is read by hdp_design_family_parse only). */
const char *hdp_design_family_column(hdp_design_family f);

/* Parse "all" or a comma-separated list of family names into want[f] = 0/1 (blanks
 * around a name are ignored); HDP_EINPUT naming the unknown name, or when the list
 * names none. */
hdp_status hdp_design_families_parse(const char *list, int want[HDP_FAMILY_COUNT], hdp_error *err);

/* The family as a JSON key prefix: output, linear_noise, inverse_time, pl. */
const char *hdp_design_family_key(hdp_design_family f);

struct hdp_design_result_s; /* hdp_design_result, below */

/* Progress of a search: hdp_progress_fn (hdpsgd/progress.h) after every restart and every
 * 100 ODE solves, with done = the family's ODE solves so far, total = -1 (not known) and
 * value = the best final risk so far (search settings); what names the family and the event:
 *   "<family>"        the every-100-solves report (HDP_DESIGN_SOLVES)
 *   "<family> scan"   the end of the starting scan (HDP_DESIGN_SCAN)
 *   "<family> round"  the end of a Nelder-Mead or BFGS round (HDP_DESIGN_ROUND)
 *   "<family> level"  refine (pl): a level finished (HDP_DESIGN_LEVEL); its result, with its
 *                     table (its K knots) but no risk at the model's settings (final_risk
 *                     NaN), is *opt->level during the report
 * with <family> hdp_design_family_name's. A nonzero return stops the search as opt->cancel
 * does (issue 31: with keep_best the best point so far is finished). */
typedef enum {
    HDP_DESIGN_SOLVES = 0,
    HDP_DESIGN_SCAN,
    HDP_DESIGN_ROUND,
    HDP_DESIGN_LEVEL,
    HDP_DESIGN_EVENT_COUNT
} hdp_design_event;

/* The what of a report (the static string above). */
const char *hdp_design_progress_what(hdp_design_family f, hdp_design_event e);
/* The event of a report's what, and its family in *family (may be NULL); -1 when what is
 * not a design report's. */
int hdp_design_progress_event(const char *what, hdp_design_family *family);

/* The search method: quasi-Newton on the exact gradient (default), or Nelder-Mead. */
typedef enum { HDP_DESIGN_BFGS = 0, HDP_DESIGN_SIMPLEX } hdp_design_method;

/* "bfgs", "simplex"; and the reverse (-1 when unknown). */
const char *hdp_design_method_name(hdp_design_method m);
int hdp_design_method_parse(const char *name);

typedef struct {
    int knots;             /* pl: K >= 2 knots (default 8) */
    hdp_design_method method; /* default HDP_DESIGN_BFGS */
    int refine;            /* pl, bfgs: optimise at K, then at 2K - 1 knots (the segments halved,
                            * started from the coarser optimum) ... until the final risk moves by
                            * less than refine_tol (relative) or K would pass HDP_DESIGN_MAX_KNOTS */
    double refine_tol;     /* default 1e-5 */
    int tune_clip;         /* 1: also optimise the clipping constant c */
    int max_restarts;      /* Nelder-Mead rounds (default 6) */
    long max_solves;       /* ODE solves per family (default 6000) */
    double search_rtol;    /* simplex: ODE rtol during the search (default 1e-7) */
    long table_points;     /* knots of the written table (default 201; pl: its own K knots) */
    hdp_progress_fn progress; /* may be NULL; its reports above */
    void *progress_user;
    const struct hdp_design_result_s **level; /* refine: may be NULL; else set to the level
                                                 just finished for its "<family> level"
                                                 report (valid during the report only) */
    const volatile int *cancel; /* NULL: none; nonzero: the search stops at its next ODE solve
                                   and returns HDP_ECANCELLED (issue 24) */
    int keep_best;         /* 1: when cancelled, the result still holds the best point found so
                            * far, finished as usual (a few ODE solves at the model's settings)
                            * and marked unconverged = 1, when there was one (issue 31);
                            * 0 (default): no result, the call returns at once */
} hdp_design_options;

/* Defaults as documented above. */
void hdp_design_options_init(hdp_design_options *o);

#define HDP_DESIGN_MAX_KNOTS 512
#define HDP_DESIGN_MAX_LEVELS 12

typedef struct hdp_design_result_s {
    hdp_design_family family;
    /* the optimised schedule */
    double eta0;          /* output, linear-noise: eta0; every family: eta~(0) */
    double eta1;          /* eta~(1) (0 for linear-noise) */
    double c1, a;         /* optimal */
    double c2, c3;        /* optimal, as model keys: c2 = a/gamma, c3 = a rho/gamma (inf rho: c3 = 0) */
    int knots;            /* pl: K */
    double knot_t[HDP_DESIGN_MAX_KNOTS], knot_eta[HDP_DESIGN_MAX_KNOTS];
    double c;             /* clipping constant (the model's unless tune_clip) */
    /* risks (final-iterate excess risk, docs/theory.md §3) */
    double search_risk;   /* best value at the search settings */
    double final_risk;    /* the winner re-solved at the model's [ode] settings */
    /* the schedule as a table (docs/theory.md §5, kind = table) */
    long table_len;
    double *table_t, *table_eta;
    double table_final_risk; /* ODE final risk of the table at the model's settings */
    /* refine: the levels, coarse to fine (levels = 0 without refine) */
    int levels;
    int level_knots[HDP_DESIGN_MAX_LEVELS];
    double level_risk[HDP_DESIGN_MAX_LEVELS];  /* search risk at each level */
    /* cost */
    long ode_solves;      /* during the search, this family (a solve with its gradient counts one) */
    double seconds;       /* wall time of the search */
    int unconverged;      /* 1: cancelled (hdp_design_options.cancel): the best point found before
                           * the stop, finished as usual (risks, table) */
} hdp_design_result;

/* Optimise one family on a finalized model. hints (may be NULL, nhints = 0) are
 * earlier results whose schedules seed the start of the pl family. On failure
 * (an ODE failure at the winner, no admissible candidate) returns HDP_ENUMERIC;
 * HDP_EINPUT for a bad option (K outside 2..HDP_DESIGN_MAX_KNOTS). */
hdp_status hdp_design_optimize(const hdp_model *m, hdp_design_family family,
                               const hdp_design_options *opt, const hdp_design_result *hints,
                               int nhints, hdp_design_result *res, hdp_error *err);
/* The same on a problem built from the model (hdpsgd/problem.h: hdp_design_optimize builds
 * one and calls this): its spectrum, schedule and clipping factors are not built again and
 * its model is not checked again. */
hdp_status hdp_design_optimize_problem(const hdp_problem *pb, hdp_design_family family,
                                       const hdp_design_options *opt,
                                       const hdp_design_result *hints, int nhints,
                                       hdp_design_result *res, hdp_error *err);

void hdp_design_result_free(hdp_design_result *res);

/* Schedule design over several families (the driver of `schedule --optimize`, `rates` and
 * `sweep`): every wanted family in the order of hdp_design_family, each earlier result
 * seeding the start of the pl search. */
typedef struct {
    hdp_design_result res[HDP_FAMILY_COUNT];
    int done[HDP_FAMILY_COUNT]; /* 1: res[f] holds a result */
    int best;                   /* the family of lowest final risk (-1: none) */
    long solves;                /* ODE solves of all the searches */
    double seconds;             /* their wall time */
    int unconverged;            /* 1: cancelled; the families done hold the best so far (the
                                   cancelled one unconverged), the later ones are not run */
} hdp_design_set;

/* Optimise every family f with want[f] != 0 on the finalized model m. On failure the
 * results so far stay in d (release with hdp_design_set_free in every case); on
 * cancellation (HDP_ECANCELLED) d->unconverged = 1 and d->best is the best of them (-1: none). */
hdp_status hdp_design_set_run(const hdp_model *m, const int want[HDP_FAMILY_COUNT],
                              const hdp_design_options *opt, hdp_design_set *d, hdp_error *err);
/* The same on a problem built from the model: one problem for every family. */
hdp_status hdp_design_set_run_problem(const hdp_problem *pb, const int want[HDP_FAMILY_COUNT],
                                      const hdp_design_options *opt, hdp_design_set *d,
                                      hdp_error *err);
void hdp_design_set_free(hdp_design_set *d);

/* ---- The batch size in the design (`schedule --optimize --tune-batch`, issue 33) ----
 * Batched one pass (docs/theory.md §1.6, §3.11): the schedule designed (hdp_design_set_run) at
 * B = 1, 2, 4, ... up to hdp_design_batch_max(m) = n / HDP_DESIGN_MIN_STEPS (at least that
 * many steps: the batched ODE is an expansion in B/n, validated at 32 steps), the batch of
 * lowest final risk kept with its design and model. */
#define HDP_DESIGN_MIN_STEPS 32
#define HDP_DESIGN_MAX_BATCHES 48

typedef struct {
    int count;                            /* the batch sizes designed */
    long batch[HDP_DESIGN_MAX_BATCHES];   /* B of each */
    double risk[HDP_DESIGN_MAX_BATCHES];  /* the best family's final risk at each */
    int best;                             /* index of the best (-1: none) */
    hdp_design_set set;                   /* the design at batch[best] */
    hdp_model model;                      /* the model at batch[best] (a deep copy) */
    long solves;                          /* ODE solves of all the designs */
    double seconds;
    int unconverged;                      /* 1: cancelled (the batches done hold the best so far) */
} hdp_design_batch;

long hdp_design_batch_max(const hdp_model *m);

/* The design at every candidate batch (above). HDP_EINPUT for a model that is not one pass;
 * on cancellation HDP_ECANCELLED with the best so far kept (out->unconverged = 1). Release
 * with hdp_design_batch_free in every case. */
hdp_status hdp_design_batch_run(const hdp_model *m, const int want[HDP_FAMILY_COUNT],
                                const hdp_design_options *opt, hdp_design_batch *out,
                                hdp_error *err);
void hdp_design_batch_free(hdp_design_batch *out);

/* A batched one-pass model (a designed one: hdp_design_model) in the vocabulary of the
 * subsampled-Gaussian accountants (hdpsgd/accountant.h): the sample rate q = B/n, the steps
 * K = ceil(n/B), the noise multipliers of its steps (the noise on the sum of a batch's clipped
 * gradients over C, 2 sigma_k / a_k: min, median, max), its own guarantee (rho_accounted, and
 * epsilon of (rho^2/2)-zCDP by CKS at the model's delta); and standard Poisson DP-SGD at the
 * same q, steps and (epsilon, delta): its sigma by the model's sgd.accountant and that sigma's
 * epsilon by each accountant (NaN when epsilon is infinite or no sigma up to 1e6 meets it). */
typedef struct {
    long batch, steps;
    double sample_rate, delta;
    double noise_min, noise_median, noise_max;
    double rho_accounted, epsilon_zcdp;
    double poisson_sigma, epsilon_pld, epsilon_rdp, epsilon_rdp_classic;
} hdp_design_batch_terms_t;

hdp_status hdp_design_batch_terms(const hdp_model *m, hdp_design_batch_terms_t *t, hdp_error *err);

/* A family's rho-equivalent and its epsilon (CKS at the model's delta; inf: not reachable), as
 * `schedule --optimize --refine` reports them (hdpsgd/fields.h: design_equivalent). */
typedef struct {
    double rho, epsilon;
} hdp_design_equivalent;

/* The privacy a family needs to match a target risk (the epsilon-equivalent of docs/theory.md §5):
 * the rho at which the family, optimised (opt; refine ignored), reaches final risk
 * `target`, by Brent's method on log rho (1e-4 relative) after bracketing by factors of 4
 * from the model's rho. *rho = inf when 10^4 times the model's rho does not reach the
 * target (the family's non-private floor is above it). solves (may be NULL): the design
 * solves spent. HDP_EINPUT for rho = inf or target <= 0. */
hdp_status hdp_design_rho_equivalent(const hdp_model *m, hdp_design_family family,
                                     const hdp_design_options *opt, double target, double *rho,
                                     long *solves, hdp_error *err);

/* eta~(t) of the optimised schedule (the analytic family, not the table). */
double hdp_design_eta(const hdp_design_result *r, double t);

/* A deep copy of base with the optimised schedule and clipping constant: the
 * family's own kind (output, linear-noise, optimal; pl as a table of its K knots),
 * or with use_table the written table. Release with hdp_model_free. */
hdp_status hdp_design_model(const hdp_model *base, const hdp_design_result *r, int use_table,
                            hdp_model *out, hdp_error *err);

/* The theorem's rate of docs/theory.md §5 as gamma -> 0 (constants set to 1):
 *   output        gamma log(1/gamma) + gamma^2 log^2(1/gamma) / rho^2
 *   linear-noise  gamma log^{2/3}(1/gamma) + gamma^2 log^{4/3}(1/gamma) / rho^2
 *   optimal, pl   gamma + gamma^2 / rho^2   (the minimax rate)
 * rho = inf drops the privacy term. */
double hdp_design_rate_theory(hdp_design_family f, double gamma, double rho);

/* Least-squares slope of log y against log x over n points (NAN when n < 2 or a
 * value is not positive). */
double hdp_loglog_slope(const double *x, const double *y, long n);

/* The parameters of a family's optimum in one line ("eta0 = 2.5", "eta at knots: ..."). */
void hdp_design_describe(const hdp_design_result *r, char *buf, size_t size);

/* The best schedule b as a table file (two columns t, eta after a '#' header: the family, its
 * parameters and risks, use (NULL: none) and the model's core sections): the format of
 * `hdpsgd schedule --optimize -o` that schedule.kind = table reads. */
void hdp_design_write_table(FILE *f, const hdp_model *m, const hdp_design_result *b,
                            const char *use);

#ifdef __cplusplus
}
#endif
#endif
