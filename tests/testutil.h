/* testutil.h — helpers for the cmocka tests: build models from key=value lists. */
#ifndef HDP_TESTUTIL_H
#define HDP_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "hdpsgd/model.h"

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
