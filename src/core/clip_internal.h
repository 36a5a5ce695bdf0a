/*
 * clip_internal.h — the clipping evaluator's state, shared by clip.c (the laws: closed forms,
 * quadratures, the law table) and clip_fit.c (the fitted factors and their cache); internal.
 */
#ifndef HDPSGD_CORE_CLIP_INTERNAL_H
#define HDPSGD_CORE_CLIP_INTERNAL_H

#include <gsl/gsl_chebyshev.h>
#include <gsl/gsl_integration.h>
#include <stdint.h>

#include "hdpsgd/clip.h"

enum { FIT_ORDER = 20 }; /* of each piece's series (hdp_clip_tabulate) */

/* One piece of the fitted factors (hdp_clip_tabulate): Chebyshev series in u = log(R + s0)
 * on [ua, ub] of log mu and log V and of their u-derivatives. */
typedef struct {
    double ua, ub;
    int direct; /* no series: evaluated directly (a law with partial fits, hdp_clip_law_partial) */
    gsl_cheb_series *lmu, *lV, *dlmu, *dlV;
    double coef[4][FIT_ORDER + 1]; /* the four series' coefficients (FIT_ORDER + 1), packed for reading */
} fit_piece;

struct hdp_clip {
    hdp_noise_kind noise;
    double tau2, df, c;
    double mix_w, mix_m1, mix_v1, mix_v2, mix_m2; /* mixture (hdp_noise_law) */
    double *emp_a, *emp_s2; /* empirical: |z_i| ascending; emp_s2[k] = sum_{i<k} emp_a[i]^2 */
    size_t emp_n;
    double zscale;  /* density laws: the spread of z the quadrature's breakpoints follow */
    double edge;    /* uniform: the half-width sqrt(3 tau2) of the support, else 0 */
    double t_scale; /* Student: z = t_scale * T_df has variance tau2 */
    double t_lognorm; /* Student: log of the density of z at 0 */
    int asymptotic;   /* Student with df >= HDP_CLIP_STUDENT_ASYMPTOTIC_DF: the expansion in 1/df */
    gsl_integration_workspace *ws;
    /* the quadratures' memo (clip.c, density_average): the integrand of E min(r^2, c^2) at
     * the points the integral of P(|r| < c) visited, keyed by the bits of z; an entry is
     * current when its generation is memo_cur */
    uint64_t *memo_key;
    double *memo_val;
    unsigned *memo_gen;
    unsigned memo_cur;
    int memo_state; /* 0: none yet, 1: allocated, -1: out of memory (no memo) */
    /* the fitted factors on [0, R_max] (hdp_clip_tabulate; npieces = 0: none), owned by the
     * shared table `shared` once fitted (fit_cache below) */
    fit_piece *pieces;
    size_t npieces, cap;
    struct fit_table *shared;
    double s0, R_max;
    hdp_clip_table_info info;
    /* a composite over groups of rows of a data set (clip_rows.c, docs/theory.md §9):
     * mu = sum_g ga[g] mu_g, V (nu) those of vplain; 0 groups: none */
    int ngroups;
    struct hdp_clip **group;
    double *ga;
    struct hdp_clip *vplain;
    /* the groups' shares p_g and mean norms w_g, and per eigendirection j of the data set
     * (dir_d of them) the weights dirw[j * ngroups + g] = E[x_j^2 | g] / lambda_j (1 where
     * lambda_j = 0): ode.clip_weights = direction (docs/theory.md §9.3) */
    double *gp, *gw, *dirw;
    long dir_d;
};

/* at most this many groups of rows (clip_rows.c) */
#define HDP_CLIP_ROW_GROUPS 32

/* clip_rows.c: the composite's factors at R (derivs: also dmu, dV); its fits; its release */
void hdp_clip_rows_eval(hdp_clip *clip, double R, int derivs, hdp_clip_values *out);
hdp_status hdp_clip_rows_tabulate(hdp_clip *clip, double R_max, hdp_error *err);
void hdp_clip_rows_free(hdp_clip *clip);
/* the composite's groups' factors at R: mu[g], V[g] (and with derivs dmu[g], dV[g]; else
 * those are not written), each group's own law at c / w_g (the rows scaled by 1/sqrt(w_g));
 * returns the number of groups */
int hdp_clip_rows_groups(const hdp_clip *clip, double R, int derivs, double *mu, double *V,
                         double *dmu, double *dV);
/* the composite of a finalized model with a data set at c, fitted on [0, R_max] */
hdp_clip *hdp_clip_alloc_rows(const hdp_model *m, double c, double R_max, hdp_error *err);

/* clip.c: mu, V (derivatives 0) by the law's average over z, directly (force_gauss_quad:
 * integrate a Gaussian density, for the tests); whether clip's law is one that is fitted */
void hdp_clip_law_factors(hdp_clip *clip, double R, int force_gauss_quad, hdp_clip_values *out);
int hdp_clip_law_fitted(const hdp_clip *clip);
/* whether a piece of clip's fit that does not converge is evaluated directly (the rest
 * staying fitted) instead of the whole fit being abandoned */
int hdp_clip_law_partial(const hdp_clip *clip);
/* whether a and b hold the same law and c (the fit cache's key, with the range) */
int hdp_clip_same_law(const hdp_clip *a, const hdp_clip *b);
/* a copy of clip's law and c, without fit (NULL: out of memory) */
hdp_clip *hdp_clip_clone_law(const hdp_clip *clip);

/* clip_fit.c: drop clip's fit; the fitted factors at R (derivs: with their derivatives),
 * 1, or 0 when R is outside the fit or there is none */
void hdp_clip_fit_free(hdp_clip *clip);
int hdp_clip_table_at(const hdp_clip *clip, double R, int derivs, hdp_clip_values *out);

/* The Monte Carlo's divergence threshold of m, sim.divergence_factor x max(R(0), the private
 * noise's excess risk at sup eta~ = eta_sup) (problem.c): the problem's threshold and the top of
 * the range the factors are fitted on (hdp_clip_range) are this one number. */
double hdp_divergence_threshold(const hdp_model *m, double eta_sup);

#endif
