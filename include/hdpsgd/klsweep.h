/*
 * hdpsgd/klsweep.h — the kl experiments driver (Ye et al.; docs/theory.md §8; hdpsgd/kl.h): the
 * runs of `hdpsgd kl run --vs epochs|depth|width` and the checks of `hdpsgd kl init`, each
 * on the grid runner (hdpsgd/grid.h). It prints nothing: progress goes through callbacks;
 * the command line prints the tables and writes the CSV, the JSON and the figures.
 *
 *   epochs   noisy GD for each wanted initialisation scheme at the model's depth and width
 *            (hdp_kl_run), with B (eq. 7) of each; with kl.network = relu also on the real
 *            ReLU network (same data and initialisations, kl.relu_runs paths), for every x too;
 *   depth,   the same for every (depth or width, scheme) of a list, keeping the KL after
 *   width    round(0.4 epochs) (>= 1) and after kl.epochs epochs; every point's spec is
 *            checked before anything runs;
 *   init     the Monte Carlo of E||df/dW||^2 at initialisation (hdp_kl_init_mc) against
 *            Lemma C.3 for every (depth, scheme), each on its own stream (seed + 1000003 x
 *            (4 depth index + scheme)), pass when |z| <= validate.z_tol.
 */
#ifndef HDPSGD_KLSWEEP_H
#define HDPSGD_KLSWEEP_H

#include "hdpsgd/kl.h"
#include "hdpsgd/progress.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HDP_KLSWEEP_MAX 64 /* values of a depth or width list */

/* The spec of scheme k at depth L and width `width` on the model's [kl] keys. */
void hdp_kl_spec_at(const hdp_model *m, hdp_kl_init_kind k, long L, long width, hdp_kl_spec *s);

/* The point i * 4 + k (value i of nx, scheme k) of the done-th report (done from 1) of a
 * sweep or init run over the schemes want: the points run x-major, the wanted schemes in
 * order. -1 when done is out of range. */
long hdp_klsweep_index(const int want[4], long nx, long done);

/* ---- kl run --vs epochs ---- */

typedef struct {
    int want[4];
    hdp_kl_spec spec[4];
    double B[4];
    hdp_kl_run_result res[4];   /* the wanted schemes' runs (zeroed for the others) */
    int relu;                   /* kl.network = relu: the real network too, on the same data
                                   and initialisations (kl.relu_runs noise paths) */
    hdp_kl_spec spec_relu[4];
    hdp_kl_run_result res_relu[4];
} hdp_kl_epochs;

/* Run every wanted scheme at the model's depth and width; a run that is unstable (the
 * squared loss with eta lambda_max(K)/n >= 2) is kept with its flag set. Release ep with
 * hdp_kl_epochs_free in every case. */
hdp_status hdp_kl_epochs_run(const hdp_model *m, const int want[4], int threads,
                             hdp_kl_epochs *ep, hdp_error *err);
void hdp_kl_epochs_free(hdp_kl_epochs *ep);

/* ---- kl run --vs depth | width ---- */

typedef struct {
    double kl, se, kle, see;    /* the KL (Monte Carlo) and its stderr, final and early */
    double exact, exacte;       /* the exact KL (squared loss; NaN otherwise) */
    double B, grad2, seconds, eta_lambda_max;
    double bound, bounde;       /* Corollary 4.2's KL bound (c = 4) at T and at Te */
    int unstable;
    /* kl.network = relu: the real network's KL and stderr, final and early, and its time */
    double rkl, rse, rkle, rsee, rseconds;
} hdp_klsweep_point;

typedef struct {
    int by_depth;               /* 1: depth, 0: width */
    int nx;
    long xs[HDP_KLSWEEP_MAX];
    int want[4];
    long E, Ee;                 /* epochs, early epochs round(0.4 E) >= 1 */
    double T, Te;               /* eta E, eta Ee */
    int relu;                   /* kl.network = relu: every point also on the real network */
    hdp_klsweep_point *points;  /* [nx * 4]: point (i, k) at i * 4 + k */
} hdp_klsweep;

/* One scheme of a sweep (hdpsgd/fields.h: kl_sweep_scheme, kl_sweep_relu): its points. */
typedef struct {
    const hdp_klsweep *sw;
    int scheme; /* hdp_kl_init_kind */
} hdp_klsweep_scheme;


/* Check every point's spec (scheme He at each x); on success sw is ready to run. Release sw
 * with hdp_klsweep_free in every case. */
hdp_status hdp_klsweep_plan(const hdp_model *m, int by_depth, const long *xs, int nx,
                            const int want[4], hdp_klsweep *sw, hdp_error *err);
/* Run every wanted point in order (x-major, schemes in order). progress (NULL: none) after
 * each: "kl point", done of total wanted points, value its final KL (p->kl); the point is
 * sw->points[hdp_klsweep_index(sw->want, sw->nx, done)]. A nonzero return stops the sweep
 * (HDP_ECANCELLED). */
hdp_status hdp_klsweep_run(hdp_klsweep *sw, const hdp_model *m, int threads,
                           hdp_progress_fn progress, void *user, hdp_error *err);
void hdp_klsweep_free(hdp_klsweep *sw);

/* ---- kl init ---- */

typedef struct {
    int nd;
    long depths[HDP_KLSWEEP_MAX];
    int want[4];
    hdp_kl_init_result *res;    /* [nd * 4]: (i, k) at i * 4 + k */
    int fails;                  /* points with |z| > validate.z_tol */
    double seconds;
} hdp_klinit;

/* The Monte Carlo at every (depth, wanted scheme) at the model's width. progress (NULL:
 * none) after each: "kl init point", done of total wanted points, value its z; the point is
 * ki->res[hdp_klsweep_index(ki->want, ki->nd, done)], passed when |z| <= validate.z_tol. A
 * nonzero return stops the run (HDP_ECANCELLED). Release ki with hdp_klinit_free in every
 * case. */
hdp_status hdp_klinit_run(const hdp_model *m, const long *depths, int nd, const int want[4],
                          int threads, hdp_progress_fn progress, void *user, hdp_klinit *ki,
                          hdp_error *err);
void hdp_klinit_free(hdp_klinit *ki);

/* One row of kl init's CSV (hdpsgd/fields.h: kl_init_csv): a layer l of one scheme at one depth
 * (layer 0: all layers), the Monte Carlo of E||df/dW_l||^2 against Lemma C.3. */
typedef struct {
    const char *init;
    long depth, width, layer;
    double mc_mean, mc_stderr, lemma_c3, z; /* z = (mc_mean - lemma_c3) / mc_stderr */
} hdp_kl_init_row;

#ifdef __cplusplus
}
#endif
#endif
