/*
 * hdpsgd/ncsweep.h — the nc experiments driver: one NoisyGD point (the Monte Carlo of
 * hdp_nc_run, or the exact one-step error alone) and the sweeps over the feature
 * dimension p of `hdpsgd nc --sweep flat|perturb|remedy|frame|projection` (the NC paper;
 * docs/theory.md §6, §8; frame and projection are its Theorems 4 and 5).
 * It prints nothing: progress goes through a callback; the command line writes the CSV,
 * the JSON and the figure.
 *
 * A sweep is a set of curves (named changes of [nc] keys: flat, perturb, remedy; see
 * `hdpsgd help nc`) times a list of p values, run on the grid runner (hdpsgd/grid.h) in
 * curve-major order. Every point has its own random stream, splitmix64 of the model's
 * seed, the curve and the p index, so points are independent and the results are the
 * same for any number of threads. Every point's spec is checked before anything runs.
 */
#ifndef HDPSGD_NCSWEEP_H
#define HDPSGD_NCSWEEP_H

#include "hdpsgd/nc.h"
#include "hdpsgd/progress.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HDP_NCSWEEP_MAX_CURVES 12
#define HDP_NCSWEEP_MAX_PS 64

/* One point: its spec, the Monte Carlo result, the exact one-step error (NaN where it does
 * not apply), the problem's offset norm and PCA alignment (NaN without PCA). */
typedef struct {
    int curve;
    hdp_nc_spec spec;
    hdp_nc_result res;
    double exact;
    double offset_norm, pca_alignment;
} hdp_nc_point;

/* Build pt->spec's problem and run it: the Monte Carlo (hdp_nc_run, the exact error
 * included where it applies) or, with exact_alone, only the exact one-step error (with
 * sigma, rho_total and epsilon; the Monte Carlo fields NaN). pt->spec is the input. */
hdp_status hdp_nc_point_run(hdp_nc_point *pt, int threads, int exact_alone, hdp_error *err);

/* |error - exact| / stderr: NaN without an exact value or with a vanishing standard error. */
double hdp_nc_point_z(const hdp_nc_point *pt);

typedef struct {
    const char *name;  /* the CSV's name column */
    char label[160];   /* the legend */
    char sets[5][80];  /* nc.key=value overrides of the base model */
    int nsets;
    int reference;     /* 1: drawn dashed, as the unremedied reference */
    int per_p;         /* 1: projection_beta = 1/p at each p; 2: frame_classes = p */
} hdp_ncsweep_curve;

typedef struct {
    char name[16];                               /* flat | perturb | remedy | frame | projection */
    int ncurves;
    hdp_ncsweep_curve curves[HDP_NCSWEEP_MAX_CURVES];
    int nps;
    long ps[HDP_NCSWEEP_MAX_PS];
    long draws;                                  /* per point */
    hdp_nc_point *points;                        /* [ncurves * nps], curve-major */
    int failed_curve;                            /* the curve whose spec failed, -1 if none */
    double seconds;                              /* Monte Carlo time of all points */
} hdp_ncsweep;

/* 1 when name is a sweep (flat, perturb, remedy, frame, projection). */
int hdp_ncsweep_known(const char *name);

/* The points of sweep `name` at the nps increasing p of ps (2 <= p, at most
 * HDP_NCSWEEP_MAX_PS) on the finalized model m, draws per point (nc.draws when given, else
 * 400), each spec checked; on a failing spec sw->failed_curve names its curve. Release sw
 * with hdp_ncsweep_free in every case. */
hdp_status hdp_ncsweep_plan(const hdp_model *m, const char *name, const long *ps, int nps,
                            hdp_ncsweep *sw, hdp_error *err);

/* Run every point of a planned sweep (curve-major). progress (hdpsgd/progress.h; NULL: none)
 * is called after each point: "nc point", done points of count, value its mean test error;
 * the point is sw->points[done - 1]. A nonzero return stops before the next point
 * (HDP_ECANCELLED). */
hdp_status hdp_ncsweep_run(hdp_ncsweep *sw, int threads, hdp_progress_fn progress,
                           void *user, hdp_error *err);

/* max over p of |e_p - e_first| / sqrt(se_p^2 + se_first^2) of one curve: its flatness. */
double hdp_ncsweep_flat_z(const hdp_ncsweep *sw, int curve);
/* max over p of hdp_nc_point_z of one curve (NaN when no point has an exact value). */
double hdp_ncsweep_max_z_exact(const hdp_ncsweep *sw, int curve);

void hdp_ncsweep_free(hdp_ncsweep *sw);

#ifdef __cplusplus
}
#endif
#endif
