/*
 * hdpsgd/finite.h — standard DP-SGD on a finite training set (docs/theory.md §6.6): N rows,
 * batches of B (shuffled each epoch, or Poisson-sampled at rate q = B/N) for E epochs, the sum
 * of the batch's clipped per-sample gradients plus N(0, sigma^2 C^2 I), divided by B, times
 * the learning rate. A model runs it when sgd.sampling is shuffle or poisson; hdp_sim_run
 * (hdpsgd/sim.h) then simulates it, recording the population excess risk exactly through
 * Sigma as for one-pass DP-SGD.
 *
 * The training rows: for synthetic data (data.train_size = N) N Gaussian rows with the model's
 * spectrum and target, labels y = x^T theta* + z with the model's noise law, drawn once per run
 * from the run's stream. With data.source = file the training set is the data file's N rows
 * (already in the eigenbasis of their Sigma), given to the simulation as an hdp_trainset
 * (hdp_problem.train); data.train_size is then 0 or N.
 */
#ifndef HDPSGD_FINITE_H
#define HDPSGD_FINITE_H

#include "hdpsgd/accountant.h"
#include "hdpsgd/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A training set in the eigenbasis of its covariance Sigma: row i is x[i d .. i d + d - 1]
 * (or x32's, rows stored as float32: exactly one of x and x32 is set), z[i] = y_i - x_i^T
 * theta* its label's deviation from the target (the label noise), target = theta*. z and
 * target both NULL: a planted target, theta* uniform on the sphere of the model's
 * target_radius and z_i drawn from the model's label-noise law, once per run (the labels are
 * then fixed for all the run's epochs). The simulation starts from theta_0 = 0
 * (e_0 = -theta*) and reads the rows only. A model with data.source = file and sgd.sampling =
 * shuffle | poisson has its data set's rows as one (hdp_problem.train, set by
 * hdp_problem_build). */
typedef struct {
    long N, d;
    const double *x;      /* [N d], row-major (or NULL) */
    const double *z;      /* [N] (NULL: planted) */
    const double *target; /* [d] (NULL: planted) */
    const float *x32;     /* [N d], row-major (or NULL) */
} hdp_trainset;

/* The privacy of standard DP-SGD on a finite training set, as a model configures it. */
typedef struct {
    int finite;               /* 1: sgd.sampling is shuffle or poisson (the rest is then set) */
    int poisson;              /* 1: Poisson sampling; 0: shuffled fixed batches */
    long train_size;          /* N (data.train_size, or the data file's rows) */
    long batch;               /* B (Poisson: the expected batch size) */
    double epochs;            /* E */
    double sample_rate;       /* q = B/N */
    long long steps;          /* T: ceil(E/q) (Poisson, as the accountant counts them) or
                                 E ceil(N/B) (shuffle) */
    long long compositions;   /* the Gaussian mechanisms the accountant composes: T (Poisson),
                                 E (shuffle: a row is in one batch per epoch, no amplification) */
    double noise_multiplier;  /* sigma: the noise's standard deviation over C on the batch's sum
                                 (0: no noise) */
    int calibrated;           /* 1: sigma calibrated from the model's budget (sgd.noise_multiplier
                                 = 0); 0: given */
    double epsilon, delta;    /* the run's epsilon at the model's delta by `accountant` (inf: no
                                 noise); Poisson under add/remove neighbours, shuffle under
                                 replace-one (sensitivity 2C, docs/theory.md §6.6) */
    hdp_accountant_kind accountant;
} hdp_finite_privacy;

/* The privacy of the model's standard DP-SGD: out->finite = 0 for one-pass models (nothing
 * else set); else the steps, sigma (sgd.noise_multiplier, or when 0 the smallest sigma whose
 * epsilon by sgd.accountant at privacy.delta is at most the model's privacy.epsilon, which
 * every form of the budget sets; 0 when the budget is rho = inf) and its epsilon.
 * HDP_EINPUT naming privacy.epsilon when no sigma up to 1e6 meets the budget. Costs up to a
 * second or two when sigma is calibrated (PLD). */
hdp_status hdp_finite_privacy_of(const hdp_model *m, hdp_finite_privacy *out, hdp_error *err);

#ifdef __cplusplus
}
#endif
#endif
