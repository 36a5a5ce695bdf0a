/*
 * hdpsgd/schedule.h — learning-rate schedules and the private noise they imply
 * (docs/theory.md §1 and §5).
 *
 * Continuous schedules on t in [0, 1]:
 *   eta~(t)         the learning rate (non-increasing);
 *   sigma~(t)^2 = -(d/dt eta~(t)^2) / rho^2   (0 when rho = inf).
 * Discrete schedule of the algorithm (docs/theory.md §1), k = 0..n-1:
 *   eta_k = eta~(k/n) / n,
 *   sigma_k^2 = (eta_k^2 - eta_{k+1}^2) / rho^2 for k < n-1,  sigma_{n-1}^2 = eta_{n-1}^2 / rho^2.
 * The same code serves the ODE (continuous) and the simulation (discrete).
 */
#ifndef HDPSGD_SCHEDULE_H
#define HDPSGD_SCHEDULE_H

#include "hdpsgd/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    hdp_sched_kind kind;
    double eta0;           /* constant, output, linear-noise */
    double c1, a;          /* optimal: eta~ = c1 / (t + a), a = gamma max(c2, c3/rho) */
    double rho;            /* privacy parameter, may be inf */
    int len;               /* table: knots (borrowed from the model) */
    const double *t, *eta;
} hdp_schedule;

/* The schedule of a finalized model (borrows the model's table). */
void hdp_sched_from_model(const hdp_model *m, hdp_schedule *s);

/* eta~(t), t clamped to [0, 1]. */
double hdp_sched_eta(const hdp_schedule *s, double t);

/* sigma~(t)^2 = -(eta~^2)'(t) / rho^2, analytic (right derivative at table
 * knots); 0 on [0,1) for constant and output; 0 when rho = inf. */
double hdp_sched_sigma2(const hdp_schedule *s, double t);

/* sup over [0,1] of eta~ (= eta~(0): schedules are non-increasing). */
double hdp_sched_eta_sup(const hdp_schedule *s);

/* The discrete step k of n (docs/theory.md §1): eta_k and sigma_k (not squared). */
void hdp_sched_step(const hdp_schedule *s, long n, long k, double *eta_k, double *sigma_k);

/* Batched one pass (docs/theory.md §1.6, [sgd] batch = B): the n rows in K =
 * hdp_sched_batch_count(n, B) = ceil(n/B) consecutive batches, step k on rows kB ..
 * kB + B_k - 1 (B_k = B, the last batch the rows left), from t_k = kB/n to t_{k+1}. Its
 * learning rate on the batch's averaged clipped gradient is eta_k = B_k a_k with the per-row
 * rate a_k = eta~(m_k)/n at the mean time of its rows m_k = (kB + (B_k - 1)/2)/n, and its
 * noise that of the schedule on [t_k, t_{k+1}], sigma_k^2 = (eta~(t_k)^2 -
 * eta~(t_{k+1})^2)/(n rho)^2 (the last: eta~(t_{K-1})^2/(n rho)^2), so that the accountant of
 * §6.1 on the sensitivities eta_k/B_k = a_k <= eta~(t_k)/n gives at most rho. rows (may be
 * NULL) receives B_k. B = 1 is hdp_sched_step, bit for bit. */
long hdp_sched_batch_count(long n, long B);
void hdp_sched_batch_step(const hdp_schedule *s, long n, long B, long k, double *eta_k,
                          double *sigma_k, long *rows);

#ifdef __cplusplus
}
#endif
#endif
