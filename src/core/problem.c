/*
 * problem.c — the spectrum and the schedule of a model, built once for the validator's
 * sides (hdpsgd/problem.h).
 */
#include "hdpsgd/problem.h"
#include "core/check.h"

#include <string.h>

hdp_status hdp_problem_build(const hdp_model *m, hdp_problem *pb, hdp_error *err)
{
    HDP_ZERO(pb);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, pb);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    hdp_status st = hdp_spectrum_build(m, &pb->spec, err);
    if (st != HDP_OK)
        return st;
    hdp_sched_from_model(m, &pb->sched);
    pb->d = m->d;
    pb->n = m->n;
    return HDP_OK;
}

hdp_status hdp_problem_check(const hdp_problem *pb, const hdp_model *m, const char *who,
                             hdp_error *err)
{
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, m);
    if (pb->d != m->d || pb->n != m->n || pb->spec.d != m->d || !pb->spec.lambda)
        return hdp_fail(err, HDP_EINPUT,
                        "%s: the problem (d = %ld, n = %ld) was not built from this model (d = "
                        "%ld, n = %ld): build it with hdp_problem_build",
                        who ? who : "hdp_problem_check", pb->d, pb->n, m->d, m->n);
    return HDP_OK;
}

void hdp_problem_free(hdp_problem *pb)
{
    if (!pb)
        return;
    hdp_spectrum_free(&pb->spec);
    memset(pb, 0, sizeof *pb);
}
