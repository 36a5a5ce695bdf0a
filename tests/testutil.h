/* testutil.h — helpers for the cmocka tests: build models from key=value lists. */
#ifndef HDP_TESTUTIL_H
#define HDP_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "hdpsgd/model.h"
#include "hdpsgd/schedule.h"

/* Build and finalize a model from the defaults and a NULL-terminated list of
 * "section.key=value" strings; fails the test on error. */
static inline void make_model(hdp_model *m, ...)
{
    hdp_error err;
    hdp_error_clear(&err);
    hdp_model_init(m);
    va_list ap;
    va_start(ap, m);
    const char *kv;
    while ((kv = va_arg(ap, const char *)) != NULL) {
        if (hdp_model_set(m, kv, &err) != HDP_OK) {
            print_error("make_model: %s\n", err.msg);
            fail();
        }
    }
    va_end(ap);
    if (hdp_model_finalize(m, &err) != HDP_OK) {
        print_error("make_model: %s\n", err.msg);
        fail();
    }
}

/* A shallow copy of m that runs schedule s (its kind and parameters) at tight tolerances:
 * hdp_ode_solve's reference for the exact gradient's value. Its pointers are m's or s's
 * (not to be freed); a theta_c pin it takes is the caller's to release. */
static inline hdp_model model_of_schedule(const hdp_model *m, const hdp_schedule *s)
{
    hdp_model mm = *m;
    mm.sched = s->kind;
    mm.rtol = 1e-11;
    mm.atol = 1e-14;
    if (s->kind == HDP_SCHED_OUTPUT || s->kind == HDP_SCHED_LINEAR_NOISE) mm.eta0 = s->eta0;
    if (s->kind == HDP_SCHED_OPTIMAL) {
        mm.c1 = s->c1;
        mm.c2 = s->a / m->gamma;
        mm.c3 = 0;
    }
    if (s->kind == HDP_SCHED_TABLE) {
        mm.table_len = s->len;
        mm.table_t = (double *)s->t;
        mm.table_eta = (double *)s->eta;
    }
    return mm;
}

/* |a - b| <= tol * max(|b|, floor) */
static inline void assert_rel(double a, double b, double tol, double floor_)
{
    double scale = fabs(b) > floor_ ? fabs(b) : floor_;
    if (!(fabs(a - b) <= tol * scale)) {
        print_error("assert_rel: %.17g vs %.17g (rel %.3g > %.3g)\n", a, b, fabs(a - b) / scale, tol);
        fail();
    }
}

#endif
