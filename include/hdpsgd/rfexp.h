/*
 * hdpsgd/rfexp.h — the rf experiments driver: Bombari-Mondelli's Fig. 2 on random features
 * (docs/theory.md §6, §7; hdpsgd/rf.h), the computations of `hdpsgd rf-experiment P1|P2|P3|P4`.
 * It prints nothing: progress goes through callbacks; the command line writes the CSV
 * and the figure.
 *
 * An experiment is a grid of feature counts p (P1: 9 values from 31 to 20000, --full 25 up
 * to 40000 and n; P2, P3: 4000, 8000, 16000, --full 32000; P4: rf.p alone), run on the grid
 * runner; at each p the problem is built once and DP-GD runs (hdp_rf_dpgd_final) for a grid
 * of configurations (C, CT): C_clip = C sqrt(p), T = round(CT d/(eta p)) >= 1, sigma
 * calibrated at the model's epsilon and delta (dpgd.delta, or 1/n). P1: C in {0.5, 1} x CT
 * in {2, 5} (--full {0.2, 0.5, 1} x {2, 5, 10}), eta = dpgd.eta or 1/p, the best kept;
 * P2, P3: C = dpgd.C, 9 CT from 10^-0.5 to 10^1.5 (--full 21), eta = dpgd.eta or 1/p_max,
 * with the OU closed form and gradient flow at tau = eta T; P4: 8 x 8 (--full 20 x 20) C in
 * 10^[-2, 1.5], CT in 10^[-1.5, 2] (--full 2.5), eta = dpgd.eta or 1/p. Each configuration
 * runs `runs` times on consecutive streams (1, 2, ... over the whole experiment), so the
 * results are the same for any number of threads.
 *
 * Selection (Bombari-Mondelli tunes its hyperparameters on validation data): at every p the
 * configuration of lowest mean *validation* loss is selected (rf.val_size samples, 20 % of
 * rf.test_size by default, drawn from their own streams: hdpsgd/rf.h, HDP_RF_VALIDATION),
 * and its *test* loss is what P1 reports; HDP_RFEXP_SELECT_TEST selects on the test loss
 * instead (optimistic: the test set then chooses and scores; for comparison only).
 */
#ifndef HDPSGD_RFEXP_H
#define HDPSGD_RFEXP_H

#include "hdpsgd/progress.h"
#include "hdpsgd/rf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { HDP_RFEXP_P1, HDP_RFEXP_P2, HDP_RFEXP_P3, HDP_RFEXP_P4 } hdp_rfexp_kind;

/* What selects a configuration: the validation loss (the default), or the test loss. */
typedef enum { HDP_RFEXP_SELECT_VALIDATION = 0, HDP_RFEXP_SELECT_TEST } hdp_rfexp_select;

/* "validation" or "test" */
const char *hdp_rfexp_select_name(hdp_rfexp_select s);

#define HDP_RFEXP_MAX_PS 40
#define HDP_RFEXP_MAX_C 20
#define HDP_RFEXP_MAX_CT 21

/* One configuration (C, CT) at one p: its calibrated DP-GD and the mean over its runs. */
typedef struct {
    hdp_rf_dpgd q;
    double test, test_se, train, clipped;
    double val, val_se;         /* mean validation loss over the runs and its standard error */
    double ou_test, gf_test;    /* P2, P3: the OU closed form and gradient flow at tau */
} hdp_rfexp_config;

/* One p. */
typedef struct {
    long p;
    double eta;
    double minnorm_test, minnorm_train, zero_test;
    long modes;                 /* rank kept */
    double lambda_max;          /* the largest OU rate 2 s_1^2 / n */
    hdp_rfexp_config *cfg;      /* [nC x nCT], C-major */
    long best;                  /* the selected configuration: lowest mean validation loss
                                   (or test loss with HDP_RFEXP_SELECT_TEST) */
    long best_test;             /* the configuration of lowest test loss (the oracle) */
    int zcdp;                   /* 1: the first configuration calibrated by the zCDP route
                                   in the experiment is at this p (see zcdp_q) */
    hdp_rf_dpgd zcdp_q;
    double build_seconds, dpgd_seconds;
} hdp_rfexp_point;

typedef struct {
    hdp_rfexp_kind kind;
    int full;
    long runs;                  /* per configuration */
    hdp_rfexp_select select;
    long val_size;              /* validation samples */
    int np;
    long ps[HDP_RFEXP_MAX_PS];
    int nC, nCT;
    double Cs[HDP_RFEXP_MAX_C], CTs[HDP_RFEXP_MAX_CT];
    hdp_rfexp_point *points;    /* [np] */
} hdp_rfexp;

/* Run experiment `kind` on the finalized model (rf and dpgd keys), selecting on the
 * validation set. bar (may be NULL) gets the DP-GD runs of each p as they finish ("rf",
 * hdpsgd/rf.h); progress (hdpsgd/progress.h; may be NULL) each p: "rf-experiment point", done
 * points of np, value its p; the point is xp->points[done - 1]; a nonzero return of either
 * stops the experiment (HDP_ECANCELLED). Release xp with hdp_rfexp_free in every case. */
hdp_status hdp_rfexp_run(const hdp_model *m, hdp_rfexp_kind kind, int full, long runs,
                         int threads, hdp_progress_fn bar, void *bar_user,
                         hdp_progress_fn progress, void *user, hdp_rfexp *xp,
                         hdp_error *err);

/* The same with the selection chosen. */
hdp_status hdp_rfexp_run_select(const hdp_model *m, hdp_rfexp_kind kind, int full, long runs,
                                hdp_rfexp_select select, int threads, hdp_progress_fn bar,
                                void *bar_user, hdp_progress_fn progress, void *user,
                                hdp_rfexp *xp, hdp_error *err);
void hdp_rfexp_free(hdp_rfexp *xp);

/* rf-experiment's summary (its --json, hdpsgd/fields.h: rfexp, then rfexp_point once per p,
 * then rfexp_source), filled by the command from hdp_rfexp and the model. */
typedef struct {
    const char *experiment, *selected_on;
    long val_size, test_size, n, runs;
    const char *grid; /* "full" or "reduced" */
    long count;       /* points (p values) */
    const char *model; /* the model's source */
} hdp_rfexp_summary;

/* One p's selected configuration (rfexp_point, its names suffixed _<i>). */
typedef struct {
    long p;
    double selected_C, selected_CT;
    long selected_T;
    double selected_val, selected_test, selected_test_se, oracle_test, minnorm_test;
} hdp_rfexp_selected;

/* A row's context in rf-experiment's CSVs (hdpsgd/fields.h: rfexp_p1_csv, ...; the row's
 * object a configuration of pt): its point, C and CT, d, and whether it is pt's selected one. */
typedef struct {
    const hdp_rfexp_point *pt;
    double C, CT;
    long d;
    int selected;
} hdp_rfexp_row;

#ifdef __cplusplus
}
#endif
#endif
