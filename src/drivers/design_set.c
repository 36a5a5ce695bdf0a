/*
 * design_set.c — design across families (hdp_design_set_run): each wanted family optimised in
 * order, earlier families seeding the pl search, the best kept; hdp_design_set_free.
 */
#include "drivers/design_internal.h"
#include "core/problem_internal.h"

#include <string.h>

hdp_status hdp_design_set_run(const hdp_model *m, const int want[HDP_FAMILY_COUNT],
                              const hdp_design_options *opt, hdp_design_set *d, hdp_error *err)
{
    HDP_ZERO(d);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, want);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, d);
    hdp_problem pb; /* checks m; the designer does not read the accountant */
    hdp_status st = hdp_problem_build_solver(m, &pb, err);
    if (st == HDP_OK)
        st = hdp_design_set_run_problem(&pb, want, opt, d, err);
    hdp_problem_free(&pb);
    return st;
}

hdp_status hdp_design_set_run_problem(const hdp_problem *pb, const int want[HDP_FAMILY_COUNT],
                                      const hdp_design_options *opt, hdp_design_set *d,
                                      hdp_error *err)
{
    HDP_ZERO(d);
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, want);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, d);
    if (hdp_problem_check(pb, NULL, "hdp_design_set_run_problem", err) != HDP_OK)
        return HDP_EINPUT;
    d->best = -1;
    for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
        if (!want[f])
            continue;
        /* earlier families seed the pl search (res[0..f-1] that were run) */
        hdp_design_result hints[HDP_FAMILY_COUNT];
        int nh = 0;
        for (int g = 0; g < f; g++)
            if (d->done[g]) hints[nh++] = d->res[g];
        hdp_status st =
            hdp_design_optimize_problem(pb, f, opt, nh ? hints : NULL, nh, &d->res[f], err);
        if (st == HDP_ECANCELLED && d->res[f].unconverged)
            d->done[f] = 1; /* the best so far, kept */
        if (st == HDP_ECANCELLED)
            d->unconverged = 1;
        if (st != HDP_OK && !d->done[f])
            return st;
        d->done[f] = 1;
        d->solves += d->res[f].ode_solves;
        d->seconds += d->res[f].seconds;
        if (d->best < 0 || d->res[f].final_risk < d->res[d->best].final_risk)
            d->best = f;
        if (st != HDP_OK)
            return st; /* cancelled: the families after f are not run */
    }
    return HDP_OK;
}

void hdp_design_set_free(hdp_design_set *d)
{
    if (!d)
        return;
    for (int f = 0; f < HDP_FAMILY_COUNT; f++)
        hdp_design_result_free(&d->res[f]);
}
