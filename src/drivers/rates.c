/*
 * rates.c — the rates driver (hdpsgd/rates.h): every wanted schedule family optimised
 * at every gamma (design.c), and least-squares log-log slopes of the final risk and of
 * the theorem's rate (docs/theory.md §5) on the smallest-gamma decade.
 */
#include "hdpsgd/rates.h"
#include "core/check.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hdp_status hdp_rates_grid_parse(const char *text, double *lo, double *hi, long *count,
                                hdp_error *err)
{
    HDP_REQUIRE(err, text);
    HDP_REQUIRE(err, lo);
    HDP_REQUIRE(err, hi);
    HDP_REQUIRE(err, count);
    char *end;
    errno = 0;
    *lo = strtod(text, &end);
    const char *p = end + 1;
    if (end == text || *end != ':' || ((*hi = strtod(p, &end)), end == p || *end != ':'))
        return hdp_fail(err, HDP_EINPUT, "'%s': expected LO:HI:COUNT, for example 0.001:0.1:7",
                        text);
    p = end + 1;
    *count = strtol(p, &end, 10);
    if (end == p || *end || errno)
        return hdp_fail(err, HDP_EINPUT, "'%s': COUNT must be an integer", text);
    if (!(isfinite(*lo) && isfinite(*hi) && *lo > 0))
        return hdp_fail(err, HDP_EINPUT, "'%s': LO must be a number > 0", text);
    if (!(*lo < *hi))
        return hdp_fail(err, HDP_EINPUT, "'%s': LO must be smaller than HI", text);
    if (!(*hi < 1))
        return hdp_fail(err, HDP_EINPUT,
                        "'%s': HI must be < 1 (the rates of docs/theory.md §5 are for gamma -> 0)", text);
    if (*count < 2 || *count > HDP_RATES_MAX_GAMMAS)
        return hdp_fail(err, HDP_EINPUT, "'%s': COUNT must be between 2 and %d", text,
                        HDP_RATES_MAX_GAMMAS);
    return HDP_OK;
}

double hdp_rates_gamma(double lo, double hi, long count, long i)
{
    return lo * pow(hi / lo, (double)i / (double)(count - 1));
}

hdp_status hdp_rates_models(const hdp_model *base, double lo, double hi, long count,
                            hdp_model *models, hdp_error *err)
{
    HDP_REQUIRE(err, base);
    HDP_REQUIRE(err, models);
    memset(models, 0, sizeof *models * (size_t)(count > 0 ? count : 0));
    if (count < 2 || count > HDP_RATES_MAX_GAMMAS || !(lo > 0) || !(lo < hi) || !(hi < 1))
        return hdp_fail(err, HDP_EINPUT, "hdp_rates_models: %ld gammas from %g to %g: expected "
                        "0 < lo < hi < 1 and 2 to %d gammas", count, lo, hi,
                        HDP_RATES_MAX_GAMMAS);
    hdp_status st = HDP_OK;
    long i;
    for (i = 0; i < count && st == HDP_OK; i++) {
        char gval[32];
        snprintf(gval, sizeof gval, "%.17g", hdp_rates_gamma(lo, hi, count, i));
        st = hdp_model_with(base, "data.gamma", gval, &models[i], err);
    }
    if (st != HDP_OK)
        for (long k = 0; k < i; k++)
            hdp_model_free(&models[k]);
    return st;
}

hdp_status hdp_rates_families(const char *list, int want[HDP_FAMILY_COUNT], hdp_error *err)
{
    HDP_REQUIRE(err, want);
    if (list)
        return hdp_design_families_parse(list, want, err);
    memset(want, 0, sizeof(int) * HDP_FAMILY_COUNT);
    want[HDP_FAMILY_OUTPUT] = want[HDP_FAMILY_LINEAR_NOISE] = want[HDP_FAMILY_OPTIMAL] = 1;
    return HDP_OK;
}

void hdp_rates_result_free(hdp_rates_result *r)
{
    if (!r)
        return;
    if (r->des)
        for (long i = 0; i < r->count; i++)
            hdp_design_set_free(&r->des[i]);
    free(r->des);
    memset(r, 0, sizeof *r);
}

/* slopes of the final risk and of the theorem's rate on the smallest-gamma decade */
static void fit_slopes(hdp_rates_result *r)
{
    double gx[HDP_RATES_MAX_GAMMAS], ry[HDP_RATES_MAX_GAMMAS], ty[HDP_RATES_MAX_GAMMAS];
    double g0 = r->models[0].gamma;
    r->dec = 0;
    for (long i = 0; i < r->count; i++)
        if (r->models[i].gamma <= 10.0 * g0 * (1 + 1e-9)) r->dec = i + 1;
    if (r->dec < 2) r->dec = 2;
    double rho = r->models[0].rho;
    for (int f = 0; f < HDP_FAMILY_COUNT; f++) {
        r->slope[f] = r->theory_slope[f] = NAN;
        if (!r->want[f]) continue;
        for (long i = 0; i < r->dec; i++) {
            gx[i] = r->models[i].gamma;
            ry[i] = r->des[i].res[f].final_risk;
            ty[i] = hdp_design_rate_theory(f, r->models[i].gamma, rho);
        }
        r->slope[f] = hdp_loglog_slope(gx, ry, r->dec);
        r->theory_slope[f] = hdp_loglog_slope(gx, ty, r->dec);
    }
}

hdp_status hdp_rates_run(const hdp_model *models, long count, const int want[HDP_FAMILY_COUNT],
                         const hdp_design_options *opt, hdp_progress_fn progress,
                         void *progress_user, hdp_rates_result *r, hdp_error *err)
{
    HDP_ZERO(r);
    HDP_REQUIRE(err, models);
    HDP_REQUIRE(err, want);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, r);
    if (count < 2 || count > HDP_RATES_MAX_GAMMAS)
        return hdp_fail(err, HDP_EINPUT, "rates: %ld gammas: between 2 and %d are needed", count,
                        HDP_RATES_MAX_GAMMAS);
    r->des = calloc((size_t)count, sizeof *r->des);
    if (!r->des)
        return hdp_fail(err, HDP_ENOMEM, "rates: out of memory");
    r->count = count;
    r->models = models;
    memcpy(r->want, want, sizeof r->want);
    for (long i = 0; i < count; i++) {
        /* every wanted family at this gamma, as `schedule --optimize` does */
        hdp_status st = hdp_design_set_run(&models[i], want, opt, &r->des[i], err);
        if (st != HDP_OK)
            return st;
        r->solves += r->des[i].solves;
        r->seconds += r->des[i].seconds;
        if (progress && progress("rates gamma", i + 1, count, models[i].gamma, progress_user))
            return hdp_fail(err, HDP_ECANCELLED, "rates: stopped after gamma %ld of %ld", i + 1,
                            count);
    }
    fit_slopes(r);
    return HDP_OK;
}
