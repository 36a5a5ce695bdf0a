/*
 * hdpsgd/siexp.h — the sim-index experiments driver (the single-index notes;
 * docs/theory.md §6, §7, §8; hdpsgd/si.h): the computations of `hdpsgd sim-index --experiment
 * eps|n|align`. It prints nothing; the command line writes the CSV and the figure.
 *
 *   eps    one problem (data and stage 1), stage 2 at the stage-2 epsilon targets 0.25,
 *          0.5, 1, ..., 32 and inf (hdp_si_set_epsilon), si.runs runs each; with
 *          si.epsilon_total > 0 the same values are total targets of both stages, one
 *          problem per target (stage 1's noise changes; the data are the same);
 *   n      a problem and its stage 2 at n = 500, 1000, 2000, 4000, 8000 (si.n ignored);
 *   align  histograms (25 bins on [0, 1]) of the neuron alignments |<w_j, mu>|/||w_j|| at
 *          W_0, after stage 1 with sigma_W = 0 and with the model's sigma_W (p = 512 unless
 *          si.p is given).
 * eps and n run their points on the grid runner (hdpsgd/grid.h).
 */
#ifndef HDPSGD_SIEXP_H
#define HDPSGD_SIEXP_H

#include "hdpsgd/si.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { HDP_SIEXP_EPS, HDP_SIEXP_N, HDP_SIEXP_ALIGN } hdp_siexp_kind;

#define HDP_SIEXP_MAX_ROWS 16
#define HDP_SIEXP_BINS 25

/* One point of eps or n. */
typedef struct {
    double epsilon;            /* eps: the stage-2 target (the total one with epsilon_total) */
    long n;                    /* n: the sample count */
    hdp_si_params hp;          /* the resolved hyperparameters and privacy */
    double risk, risk_se, ou_risk, gd_risk, zero_risk, clipped;
    double align_mean, align0_mean, clipped1;
} hdp_siexp_row;

typedef struct {
    hdp_siexp_kind kind;
    hdp_si_spec spec;          /* the model's spec (align: k.p = 512 unless si.p is given) */
    long runs;
    int nrows;
    hdp_siexp_row rows[HDP_SIEXP_MAX_ROWS];
    hdp_si_params meta_hp;     /* the CSV's header: the first point's problem (align: the
                                  private stage 1) */
    hdp_si_params last_hp;     /* eps: the problem after the last point */
    double last_align_mean;
    double nonpriv;            /* eps: the risk at epsilon = inf (NaN otherwise) */
    long hist[3][HDP_SIEXP_BINS];  /* align: init, stage 1 noiseless, stage 1 private */
    double means[3];
} hdp_siexp;

/* One bin of --experiment align's histogram (hdpsgd/fields.h: si_align_csv): the neurons whose
 * alignment falls in [bin_lo, bin_hi) at initialisation, after stage 1 without and with noise. */
typedef struct {
    double bin_lo, bin_hi, bin_mid;
    long init, stage1_noiseless, stage1_private;
} hdp_siexp_bin;

/* Run experiment `kind` on the finalized model. */
hdp_status hdp_siexp_run(const hdp_model *m, hdp_siexp_kind kind, int threads, hdp_siexp *xp,
                         hdp_error *err);

#ifdef __cplusplus
}
#endif
#endif
