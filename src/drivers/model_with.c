/*
 * model_with.c — a finalized model with some keys changed (see model_with.h).
 */
#include "drivers/model_with.h"
#include "core/check.h"

#include <string.h>

hdp_status hdp_drv_model_with(const hdp_model *m, const char *const *sets, int count,
                              hdp_model *out, hdp_error *err)
{
    HDP_ZERO(out);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, out);
    HDP_REQUIRE(err, sets || count == 0);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    /* the arrays that finalize fills (the schedule table, a spectrum file) are read again by
     * it from the same files: the copy owns none of m's */
    *out = *m;
    out->table_t = out->table_eta = out->file_lambda = NULL;
    out->table_len = 0;
    out->file_len = 0;
    hdp_status st = HDP_OK;
    for (int i = 0; i < count && st == HDP_OK; i++)
        st = hdp_model_set(out, sets[i], err);
    if (st == HDP_OK)
        st = hdp_model_finalize(out, err);
    return st;
}
