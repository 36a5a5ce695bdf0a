/*
 * grid.c — the grid runner (hdpsgd/grid.h): check every point, run every point in order,
 * keep the rows, report progress. The experiments' drivers (nc_sweep.c, kl_sweep.c, ...)
 * and the sweep's points go through it instead of each writing its own loop.
 */
#include "hdpsgd/grid.h"
#include "core/check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void *hdp_grid_row(const hdp_grid_result *res, long i)
{
    if (!res || !res->rows || i < 0 || i >= res->count)
        return NULL;
    return (char *)res->rows + (size_t)i * res->row_size;
}

void hdp_grid_free(hdp_grid_result *res)
{
    if (!res)
        return;
    if (res->row_free && res->rows)
        for (long i = 0; i < res->count; i++)
            res->row_free(hdp_grid_row(res, i));
    free(res->rows);
    free(res->status);
    memset(res, 0, sizeof *res);
}

hdp_status hdp_grid_run(const hdp_grid_spec *spec, hdp_grid_result *res, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, spec);
    HDP_REQUIRE(err, res);
    HDP_REQUIRE(err, spec->job);
    res->checked_failure = -1;
    if (spec->count < 0 || spec->row_size < 1)
        return hdp_fail(err, HDP_EINPUT,
                        "hdp_grid_run: count = %ld and row_size = %zu: expected count >= 0 and "
                        "row_size >= 1",
                        spec->count, spec->row_size);
    for (long i = 0; spec->check && i < spec->count; i++) {
        hdp_status st = spec->check(spec->user, i, err);
        if (st != HDP_OK) {
            res->checked_failure = i;
            return st;
        }
    }
    size_t n = spec->count > 0 ? (size_t)spec->count : 1;
    res->rows = calloc(n, spec->row_size);
    res->status = calloc(n, sizeof *res->status);
    if (!res->rows || !res->status) {
        hdp_grid_free(res); /* count 0: no row to free */
        return hdp_fail(err, HDP_ENOMEM, "out of memory for a grid of %ld points", spec->count);
    }
    res->count = spec->count;
    res->row_size = spec->row_size;
    res->row_free = spec->row_free;
    for (long i = 0; i < spec->count; i++) {
        void *row = hdp_grid_row(res, i);
        hdp_error perr;
        hdp_error_clear(&perr);
        hdp_status st = spec->job(spec->user, i, row, &perr);
        res->status[i] = st;
        res->done++;
        if (st != HDP_OK)
            res->failed++;
        if (st != HDP_OK && !spec->keep_going) {
            if (err)
                *err = perr;
            return st;
        }
        if (st == HDP_OK && spec->progress &&
            spec->progress("grid point", i + 1, spec->count, NAN, spec->user))
            return hdp_fail(err, HDP_ECANCELLED, "stopped after point %ld of %ld", i + 1,
                            spec->count);
    }
    return HDP_OK;
}

hdp_status hdp_grid_each(const hdp_grid_spec *spec, hdp_error *err)
{
    HDP_REQUIRE(err, spec);
    hdp_grid_spec g = *spec;
    if (g.row_size == 0)
        g.row_size = 1;
    hdp_grid_result res;
    hdp_status st = hdp_grid_run(&g, &res, err);
    hdp_grid_free(&res);
    return st;
}
