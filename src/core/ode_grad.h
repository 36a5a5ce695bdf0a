/*
 * ode_grad.h — the final risk of the risk ODE (docs/theory.md §3) and its exact
 * gradient with respect to the schedule and the clipping constant (internal; the
 * schedule designer, src/drivers/design_search.c and design_refine.c, is its user).
 *
 * Method: "exact differentiation of a discretisation". The bin ODE
 *   dD_j/dt = -2 lambda_j eta~ mu_c(R) D_j + gamma lambda_j eta~^2 V_c(R) + 2 c^2 gamma^2 sigma~^2
 * (the bound ODEs are not needed) is integrated by the classical Runge-Kutta method on a
 * grid that depends on the schedule's shape only (see hdp_ode_grad_eval), and the
 * objective
 *   F = sum_j w_j lambda_j D_j(1) + 2 c^2 gamma^2 eta~(1)^2 / rho^2
 * (R(1) plus the final-iterate jump, as hdp_ode_solve's final_risk) is differentiated in
 * reverse mode through every Runge-Kutta stage: the gradient is the exact gradient of the
 * discrete objective, whatever the step, so a quasi-Newton search sees a consistent
 * function and gradient. The privacy constraint enters through sigma~^2 = -(eta~^2)'/rho^2
 * (docs/theory.md §5, §6): a schedule fixes its own private noise at the model's rho, and the
 * gradient includes that dependence and the final-iterate noise.
 *
 * Schedules: hdp_schedule (hdpsgd/schedule.h) of kind output, linear-noise, optimal
 * (c1/(t + a), with `a` given directly) or table (piecewise linear; the knots are the
 * parameters). Gradient layout (dsched):
 *   output, linear-noise   [d/d eta0]
 *   optimal                [d/d c1, d/d a]
 *   table                  [d/d eta_0 .. d/d eta_{len-1}]
 * and dc = dF/dc (clipping constant; Gaussian label noise: exact from the scale
 * invariance of mu_c, V_c in c/sqrt(R + tau^2/2); other laws: central differences of
 * the factors in c, like their R-derivatives in clip.c).
 *
 * A data set (data.source = file, docs/theory.md §9): the clipping factors of its rows and
 * its corrections (hdp_grad_data below) are carried exactly, forward and reverse; F is then
 * the corrected final risk of hdp_ode_solve. With a least-squares target c enters the bias
 * theta_c, the residuals' law and the energies, which the gradient does not differentiate: c
 * must stay the model's (another c gives NAN) and dc is not given (NAN when asked). Planted:
 * the rows' factors are fitted again at each new c and dc is exact (the groups' dmu/dc).
 */
#ifndef HDPSGD_CORE_ODE_GRAD_H
#define HDPSGD_CORE_ODE_GRAD_H

#include "hdpsgd/error.h"
#include "hdpsgd/clip.h"
#include "hdpsgd/model.h"
#include "hdpsgd/problem.h"
#include "hdpsgd/schedule.h"
#include "hdpsgd/spectrum.h"

/* The reverse pass keeps every state while (steps + 1) * bins doubles fit in this (32 MiB);
 * beyond, checkpoints every sqrt(steps) steps and one recomputed block: memory
 * O(sqrt(steps) bins) for one more forward pass. */
#define HDP_GRAD_STORE (4L << 20)

/* A data set's corrections (data.source = file with a least-squares target, docs/theory.md §9),
 * carried by the gradient as extra states after the m bins: I(t) = int_0^t eta~ mu_c(R_c) ds
 * (the first-moment equation's exponent) and the heteroscedastic responses delta_k of the
 * bins, delta_k' = -2 lambda_k eta~ mu_c delta_k + lambda_k hb_k gamma eta~^2 nu_c tau^2/2,
 * delta_k(0) = 0; the objective adds
 *   sum_k w_k lambda_k delta_k(1) - sum_j cw_j exp(-lambda_j I(1)) + R_bias
 * (the heteroscedastic term, the cross term, the bias; hdp_data_ode_correct's after a solve).
 * hb_k: the bin's h_j - 1, each eigendirection j given to the bin node nearest in log lambda
 * with the weight lambda_j^2 (the leading order of its part of the risk), so that
 * sum_k w_k lambda_k^2 hb_k = (1/d) sum_j lambda_j^2 (h_j - 1) exactly, and every direction
 * is its own bin's when the bins are the distinct eigenvalues. Filled by
 * hdp_data_grad_terms (data_ode.c) at the model's c. */
typedef struct {
    int on;              /* 0: none (not a data set, or a planted target) */
    long d;
    double *lambda;      /* [d] the data set's eigenvalues */
    double *cw;          /* [d] lambda_j theta_c,j (theta_c - theta*)_j (0 without a bias) */
    double *bin_h;       /* [m] hb_k */
    double risk_bias;    /* R_bias = 1/2 |theta_c - theta*|_Sigma^2 */
    double tau2;         /* the residuals' mean square (the clipping law's) */
} hdp_grad_data;

/* The data terms of a finalized data model on the bins of spec (t zeroed first; t->on = 0
 * for other models), with ode.clip_weights = direction h_j less the part the rows' groups of
 * clip (the model's factors) carry; free with hdp_grad_data_free. */
hdp_status hdp_data_grad_terms(const hdp_model *m, const hdp_spectrum *spec,
                               const hdp_clip *clip, hdp_grad_data *t, hdp_error *err);
void hdp_grad_data_free(hdp_grad_data *t);

typedef struct {
    hdp_spectrum spec;      /* the bins (owned) */
    double gamma, rho, R0;  /* R0 = D_j(0) = r*^2 / 2 */
    double kappa;           /* (B - 1)/n: the batch's terms of the ODE (docs/theory.md §3.11) */
    hdp_noise_kind noise;
    double tau2, df;
    hdp_noise_law law;      /* the label-noise law (its sample: law_sample, owned) */
    double *law_sample;
    double clip_range;      /* R range of the fitted clipping factors (hdp_clip_range) */
    hdp_clip *clip;         /* the factors at clip_c, fitted once and kept while c stays */
    double clip_c;
    int data_model;         /* data.source = file: the clipping factors are the rows'
                               (clip_rows.c); 1: a least-squares target, c fixed at the model's,
                               dc not available; 2: planted, c free */
    const hdp_model *model; /* data.source = file: the problem's model (borrowed) */
    hdp_clip *pb_clip;      /* the problem's factors at the model's c (borrowed), or NULL */
    int clip_borrowed;      /* clip is pb_clip */
    hdp_grad_data data;     /* the data set's corrections (on: extra states) */
    int dir_ng;             /* ode.clip_weights = direction: the groups and the bins' weights
                               (risk_ode.h; owned, the same at every c: the rows' groups) */
    double *dir_wa, *dir_wb;
    long ns;                /* state length: m, or 2 m + 1 with the data set's corrections */
    long base_steps;        /* accuracy: at most 1/base_steps per step (default 256) */
    double store;           /* doubles of states kept whole (default HDP_GRAD_STORE) */
    double rel_step;        /* accuracy: at most rel_step * eta~/|eta~'| per step (default 1/32) */
    /* work (grown as needed) */
    long cap;               /* steps the arrays hold */
    double *grid;           /* [cap + 1] step nodes */
    int *seg;               /* [cap] table segment of each step (-1 for analytic kinds) */
    double *ys;             /* states: checkpoints, one block, current and next */
    size_t ys_len;          /* doubles allocated in ys */
    double *w;              /* 11 ns scratch */
    long steps;             /* of the last evaluation */
} hdp_ode_grad;

/* Bins of a finalized model as hdp_ode_solve chooses them for the model's own schedule
 * ([ode] bins; bins = auto: log bins doubled from 8 until the final risk of this
 * discretisation moves by at most spectrum_tol, relative). HDP_ENUMERIC when the model's
 * schedule cannot be integrated; free with hdp_ode_grad_free in every case. */
hdp_status hdp_ode_grad_init(hdp_ode_grad *g, const hdp_model *m, hdp_error *err);
/* The same on a built problem (hdpsgd/problem.h): its bins copied, its schedule for
 * bins = auto, the range of its clipping factors; the model is not checked again. On a data
 * set (data.source = file) g borrows the problem's clipping factors and model: pb must
 * outlive g (with hdp_ode_grad_init, the model m). */
hdp_status hdp_ode_grad_init_problem(hdp_ode_grad *g, const hdp_problem *pb, hdp_error *err);
void hdp_ode_grad_free(hdp_ode_grad *g);

/* Final risk F of schedule s (rho: g's) with clipping constant c; NAN when the
 * integration fails (a non-finite state, out of memory). With dsched (and/or dc) non-NULL
 * also the gradient (layout above). */
double hdp_ode_grad_eval(hdp_ode_grad *g, const hdp_schedule *s, double c, double *dsched,
                         double *dc);

#endif
