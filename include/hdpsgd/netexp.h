/*
 * hdpsgd/netexp.h — the privacy-for-free paper's Fig. 1 on a two-layer ReLU network
 * (hdpsgd/net.h; docs/theory.md §7.4): test accuracy against the width at fixed n, or against
 * n at fixed width, for three variants trained on the same data:
 *   dp  DP-GD on both layers at the model's (epsilon, delta) (the paper's theta^p),
 *   rf  DP-GD on the second layer only (random features: the first layer frozen), same budget,
 *   gd  plain GD on both layers (the paper's non-private theta^*).
 * At every point each variant's hyperparameters are chosen on the validation split, as the
 * paper does: DP variants over a grid of (learning rate, C_clip, T) — one run per
 * configuration, since sigma depends on T — and GD over its learning rates and the steps of
 * one run (early stopping: the recorded step of best validation accuracy; no noise, so no
 * budget to spend). The test accuracy and loss of the chosen configuration are reported.
 * Reduced grids by default (minutes on 2 cores), the paper's sizes with full.
 * Results do not depend on the number of threads (hdpsgd/net.h).
 */
#ifndef HDPSGD_NETEXP_H
#define HDPSGD_NETEXP_H

#include "hdpsgd/net.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { HDP_NETEXP_WIDTH = 0, HDP_NETEXP_SAMPLES } hdp_netexp_kind;
enum { HDP_NETEXP_DP = 0, HDP_NETEXP_RF, HDP_NETEXP_GD, HDP_NETEXP_VARIANTS };
const char *hdp_netexp_variant_name(int v);

/* The selection grids: learning rates (the rf variant's are multiplied by 1/width: the
 * features' kernel grows like the width), absolute clipping constants C_clip (the rf
 * variant's times sqrt(width), the paper's scaling) and steps. */
typedef struct {
    int nlr, nclip, nsteps;
    double lr[8], clip[8];
    long steps[8];
} hdp_netexp_grid;

/* The grids of a variant: reduced (full = 0) or the paper's sizes (full = 1). */
void hdp_netexp_grid_of(int variant, int full, hdp_netexp_grid *g);

/* The chosen configuration of one variant at one point, with its numbers. */
typedef struct {
    double test_accuracy, test_loss, val_accuracy, val_loss, train_accuracy, train_loss;
    double lr, clip;  /* the chosen learning rate and C_clip (inf: gd) */
    long steps;       /* the chosen T (gd: the early-stopping step) */
    double sigma;     /* its noise multiplier (0: gd) */
    double clipped_fraction; /* over its last recorded interval */
    long configs;     /* configurations tried */
} hdp_netexp_cell;

typedef struct {
    hdp_netexp_kind kind;
    int full;
    long points;
    double *grid;       /* widths or samples (double: a result column) */
    double *width, *n;  /* of every point */
    hdp_netexp_cell *cell[HDP_NETEXP_VARIANTS]; /* [points] */
    double epsilon, delta; /* the budget (delta: at the largest n, auto = 1/n per point) */
    long runs;             /* training runs made */
    long diverged;         /* of them, stopped by a non-finite loss (skipped) */
    double seconds;
    int threads;
} hdp_netexp;

/* Run the experiment on dt (its training split holds at least the largest n; the points use
 * its first n rows) with the model's [net] loss, epsilon, delta, calibration and seed. The
 * panel's grid[npoints]: widths (each at `fixed` samples) or samples (each at width
 * `fixed`). progress gets ("net", done, total, NaN) in units of the cost (about n width T / 1e6 multiply-adds per input coordinate)
 * (a nonzero return stops: HDP_ECANCELLED). A configuration whose loss becomes non-finite is
 * skipped (counted in diverged); HDP_ENUMERIC when every configuration of a cell diverged. */
hdp_status hdp_netexp_run(const hdp_model *m, const hdp_net_data *dt, hdp_netexp_kind kind,
                          int full, const long *grid, long npoints, long fixed, int threads,
                          hdp_progress_fn progress, void *user, hdp_netexp *out, hdp_error *err);

/* The default sizes of a panel: the fixed n (width panel) or width (samples panel). */
long hdp_netexp_default_fixed(hdp_netexp_kind kind, int full);

/* The default grid of a panel (at most 16 values): writes it and returns its length. */
long hdp_netexp_default_grid(hdp_netexp_kind kind, int full, long *grid);

void hdp_netexp_free(hdp_netexp *x);

#ifdef __cplusplus
}
#endif
#endif
