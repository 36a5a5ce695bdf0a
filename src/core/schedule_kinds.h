/*
 * schedule_kinds.h — what the table of schedule kinds in schedule.c offers the rest of the
 * core beyond hdpsgd/schedule.h (internal): the kinds' names for the model schema, the
 * integral and bends of eta~ for the step choices of the ODE methods, the knots where the
 * right-hand side jumps, and eta~, q = qf sigma~^2 with their derivatives in the schedule's
 * parameters for the exact gradient of ode_grad.c. Nothing outside schedule.c switches on
 * the kind (docs/architecture.md, "Adding a schedule kind").
 */
#ifndef HDPSGD_CORE_SCHEDULE_KINDS_H
#define HDPSGD_CORE_SCHEDULE_KINDS_H

#include "hdpsgd/schedule.h"

/* The kinds' names in the order of hdp_sched_kind, NULL-terminated (schedule.kind). */
extern const char *const hdp_sched_kind_names[];

/* eta~ and q = qf sigma~^2 at one time, and their derivatives in the parameters
 * idx[0..n-1] of the schedule (layout of ode_grad.h: [eta0]; [c1, a]; the table's knot
 * values, two per segment). */
typedef struct {
    double eta, q;
    int n, idx[2];
    double de[2], dq[2];
} hdp_sched_point;

/* The number of parameters (the gradient's length). */
int hdp_sched_params(const hdp_schedule *s);

/* The point at t on segment seg (table; ignored by the other kinds); q and dq stay 0
 * unless privacy. */
void hdp_sched_point_at(const hdp_schedule *s, int seg, double t, double qf, int privacy,
                        hdp_sched_point *p);

/* ds[i] += de1 d eta~(1) / d param_i. */
void hdp_sched_final_grad(const hdp_schedule *s, double de1, double *ds);

/* The scale over which eta~ bends at t (eta~ / |eta~'| up to a constant; INFINITY where
 * it is linear), for graded steps. */
double hdp_sched_bend(const hdp_schedule *s, double t);

/* int_0^1 eta~(t) dt, exact. */
double hdp_sched_integral(const hdp_schedule *s);

/* The knots of a piecewise schedule (*t: len of them, 0 and 1 included), where sigma~^2
 * jumps; 0 (and *t = NULL) for the smooth kinds. */
int hdp_sched_knots(const hdp_schedule *s, const double **t);

#endif
