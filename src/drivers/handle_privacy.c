/*
 * handle_privacy.c — the handle API's privacy accounting (hdpsgd/handle.h): the model's
 * amplification-by-iteration accountant, the zCDP conversions, and DP-SGD with Poisson
 * sampling (hdpsgd/accountant.h). The records are handle.c's (drivers/handle_internal.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "drivers/handle_internal.h"
#include "hdpsgd/accountant.h"
#include "hdpsgd/design.h"
#include "hdpsgd/fields.h"
#include "hdpsgd/handle.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/rates.h"
#include "hdpsgd/schedule.h"

/* the accountant walks every step: the command line's limit */
#define ACCOUNTANT_MAX_N 100000000L

hdp_status hdp_handle_accountant(const hdp_model *m, hdp_record **out, hdp_error *err)
{
    HDP_REQUIRE_OUT(err, out, m);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    if (m->n > ACCOUNTANT_MAX_N)
        return hdp_fail(err, HDP_EINPUT,
                        "the accountant walks every step: n = %ld is above %ld (data.n)", m->n,
                        ACCOUNTANT_MAX_N);
    double rho = m->rho, rho_z = 0.5 * rho * rho, delta = m->delta;
    hdp_schedule s;
    hdp_sched_from_model(m, &s);
    double acc = hdp_privacy_accountant_batches(&s, m->n, m->batch);
    int acc_ok = (isinf(rho) && isinf(acc)) ||
                 (m->batch > 1 ? acc <= rho * (1 + 1e-9) : fabs(acc - rho) <= 1e-9 * rho);
    hdp_spectrum spec; /* the accountant's precondition, docs/theory.md §6.1 */
    hdp_nonexpansive ne;
    hdp_status st = hdp_spectrum_build(m, &spec, err);
    if (st == HDP_OK)
        st = hdp_nonexpansive_eval(m, spec.lambda, spec.d, &ne, err);
    hdp_spectrum_free(&spec);
    if (st != HDP_OK)
        return st;
    hdp_record *r = hdp_rec_new();
    if (r) {
        hdp_privacy_summary ps = {rho,
                                  rho_z,
                                  delta,
                                  hdp_zcdp_epsilon_bs(rho_z, delta),
                                  hdp_zcdp_epsilon_cks(rho_z, delta),
                                  acc,
                                  acc_ok,
                                  m->n,
                                  ""};
        snprintf(ps.schedule, sizeof ps.schedule, "%s", hdp_sched_name(m->sched));
        hdp_rec_fields(r, &hdp_privacy_fields, "", &ps, NULL);
        hdp_rec_fields(r, &hdp_nonexpansive_fields, "", &ne, &delta);
        hdp_rec_fields(r, &hdp_source_fields, "", m, NULL);
    }
    return hdp_rec_finish(r, out, err);
}

/* the zCDP conversions' arguments: the budget name = v > 0 (or inf), delta in (0, 1) */
static hdp_status check_budget(const char *name, double v, double delta, hdp_error *err)
{
    if (!(v > 0))
        return hdp_fail(err, HDP_EINPUT, "%s = %g: expected a number > 0 or inf", name, v);
    if (!(delta > 0 && delta < 1))
        return hdp_fail(err, HDP_EINPUT, "delta = %g: expected a number in (0, 1)", delta);
    return HDP_OK;
}

hdp_status hdp_handle_epsilon(double rho, double delta, double *epsilon, hdp_error *err)
{
    HDP_REQUIRE(err, epsilon);
    *epsilon = NAN;
    if (check_budget("rho", rho, delta, err) != HDP_OK)
        return HDP_EINPUT;
    *epsilon = hdp_zcdp_epsilon_cks(0.5 * rho * rho, delta);
    return HDP_OK;
}

hdp_status hdp_handle_rho_for(double epsilon, double delta, double *rho, hdp_error *err)
{
    HDP_REQUIRE(err, rho);
    *rho = NAN;
    if (check_budget("epsilon", epsilon, delta, err) != HDP_OK)
        return HDP_EINPUT;
    if (isinf(epsilon)) {
        *rho = INFINITY;
        return HDP_OK;
    }
    double rho_z;
    hdp_status st = hdp_zcdp_from_epsilon(epsilon, delta, &rho_z, err);
    if (st != HDP_OK)
        return st;
    *rho = sqrt(2.0 * rho_z);
    return HDP_OK;
}

/* ---- DP-SGD with Poisson sampling (hdpsgd/accountant.h) ---- */

hdp_status hdp_handle_poisson_accountant(double sample_rate, double noise_multiplier, double target_epsilon,
                                         long long steps, double delta, const char *accountant,
                                         hdp_record **out, hdp_error *err)
{
    HDP_REQUIRE_OUT(err, out, accountant);
    hdp_accountant_kind kind;
    if (!strcmp(accountant, "pld"))
        kind = HDP_ACCOUNTANT_PLD;
    else if (!strcmp(accountant, "rdp"))
        kind = HDP_ACCOUNTANT_RDP;
    else
        return hdp_fail(err, HDP_EINPUT, "accountant '%s': expected pld or rdp", accountant);
    if ((noise_multiplier > 0) == (target_epsilon > 0))
        return hdp_fail(err, HDP_EINPUT, "give exactly one of a noise multiplier > 0 and a target epsilon > 0");
    hdp_accountant_query x = {sample_rate, noise_multiplier, steps, delta, 0};
    hdp_status st;
    if (target_epsilon > 0 && (st = hdp_accountant_calibrate(&x, kind, target_epsilon, &x.noise_multiplier, err)) != HDP_OK)
        return st;
    hdp_accountant_result res;
    if ((st = hdp_accountant_epsilon(&x, &res, err)) != HDP_OK)
        return st;
    hdp_record *r = hdp_rec_new();
    if (r) {
        hdp_accountant_choice c = {&res, kind, target_epsilon > 0 ? target_epsilon : NAN, NAN};
        hdp_rec_fields(r, &hdp_accountant_choice_fields, "", &c, NULL);
        hdp_rec_fields(r, &hdp_accountant_fields, "", &res, NULL);
        hdp_rec_fields(r, &hdp_accountant_query_fields, "", &x, NULL);
        hdp_rec_fields(r, &hdp_accountant_target_fields, "", &c, NULL);
    }
    return hdp_rec_finish(r, out, err);
}
