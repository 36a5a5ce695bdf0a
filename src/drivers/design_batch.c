/*
 * design_batch.c — the batch size in the design (hdp_design_batch_run, `schedule --optimize
 * --tune-batch`): the schedule designed at each candidate batch size of batched one pass
 * (docs/theory.md §1.6, §3.11), the best kept; and the designed scheme in the vocabulary of
 * the subsampled-Gaussian accountants (hdp_design_batch_terms).
 */
#include "drivers/design_internal.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/accountant.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/schedule.h"

long hdp_design_batch_max(const hdp_model *m)
{
    long b = m && m->n >= HDP_DESIGN_MIN_STEPS ? m->n / HDP_DESIGN_MIN_STEPS : 1;
    return b < 1 ? 1 : b;
}

hdp_status hdp_design_batch_run(const hdp_model *m, const int want[HDP_FAMILY_COUNT],
                                const hdp_design_options *opt, hdp_design_batch *out,
                                hdp_error *err)
{
    HDP_ZERO(out);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, want);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, out);
    out->best = -1;
    if (hdp_model_check(m, err) != HDP_OK ||
        hdp_model_require_one_pass(m, "the batch design (--tune-batch)", err) != HDP_OK)
        return HDP_EINPUT;
    long bmax = hdp_design_batch_max(m);
    hdp_status st = HDP_OK;
    for (long B = 1; B <= bmax && out->count < HDP_DESIGN_MAX_BATCHES && st == HDP_OK; B *= 2) {
        char text[32];
        snprintf(text, sizeof text, "%ld", B);
        hdp_model mb;
        if ((st = hdp_model_with(m, "sgd.batch", text, &mb, err)) != HDP_OK) {
            hdp_model_free(&mb);
            break;
        }
        hdp_design_set d;
        st = hdp_design_set_run(&mb, want, opt, &d, err);
        int have = d.best >= 0 && (st == HDP_OK || (st == HDP_ECANCELLED && d.unconverged));
        int i = out->count;
        if (have) {
            out->batch[i] = B;
            out->risk[i] = d.res[d.best].final_risk;
            out->count++;
            out->solves += d.solves;
            out->seconds += d.seconds;
        }
        if (have && (out->best < 0 || out->risk[i] < out->risk[out->best])) {
            if (out->best >= 0) { /* the former best's design and model */
                hdp_design_set_free(&out->set);
                hdp_model_free(&out->model);
            }
            out->best = i;
            out->set = d;
            out->model = mb;
        } else {
            hdp_design_set_free(&d);
            hdp_model_free(&mb);
        }
        if (st == HDP_ECANCELLED)
            out->unconverged = 1;
    }
    if (st == HDP_ECANCELLED && out->best >= 0)
        out->set.unconverged = 1;
    return st;
}

void hdp_design_batch_free(hdp_design_batch *out)
{
    if (!out)
        return;
    if (out->best >= 0) {
        hdp_design_set_free(&out->set);
        hdp_model_free(&out->model);
    }
    memset(out, 0, sizeof *out);
    out->best = -1;
}

hdp_status hdp_design_batch_terms(const hdp_model *m, hdp_design_batch_terms_t *t, hdp_error *err)
{
    HDP_ZERO(t);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, t);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    long n = m->n, B = m->batch, K = hdp_sched_batch_count(n, B);
    t->batch = B;
    t->steps = K;
    t->sample_rate = (double)B / (double)n;
    t->delta = m->delta;
    t->epsilon_zcdp = hdp_zcdp_epsilon_cks(0.5 * m->rho * m->rho, m->delta);
    hdp_schedule s;
    hdp_sched_from_model(m, &s);
    t->rho_accounted = hdp_privacy_accountant_batches(&s, n, B);
    /* the designed scheme's noise on the sum of a batch's clipped gradients, over C: the step
     * is -a_k (sum_b g_b + (2 sigma_k / a_k) C xi) */
    double *z = malloc(sizeof(double) * (size_t)K);
    if (!z)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld steps", K);
    long nz = 0;
    for (long k = 0; k < K; k++) {
        double eta, sigma;
        long rows;
        hdp_sched_batch_step(&s, n, B, k, &eta, &sigma, &rows);
        double a = eta / (double)rows;
        if (a > 0 && sigma > 0)
            z[nz++] = 2.0 * sigma / a;
    }
    gsl_sort(z, 1, (size_t)nz);
    t->noise_min = nz ? z[0] : NAN;
    t->noise_median = nz ? gsl_stats_median_from_sorted_data(z, 1, (size_t)nz) : NAN;
    t->noise_max = nz ? z[nz - 1] : NAN;
    free(z);
    /* standard Poisson DP-SGD at the same q and steps and the same (epsilon, delta): its sigma
     * by the model's accountant, and that sigma's epsilon by each */
    t->poisson_sigma = t->epsilon_pld = t->epsilon_rdp = t->epsilon_rdp_classic = NAN;
    if (!isfinite(t->epsilon_zcdp) || t->epsilon_zcdp <= 0 || K > HDP_ACCOUNTANT_MAX_STEPS)
        return HDP_OK;
    hdp_accountant_query q = {t->sample_rate, 1.0, K, m->delta, 0};
    hdp_error e;
    hdp_error_clear(&e);
    double sigma;
    hdp_status st = hdp_accountant_calibrate(&q, m->accountant, t->epsilon_zcdp, &sigma, &e);
    if (st == HDP_ENOMEM)
        return hdp_fail(err, HDP_ENOMEM, "%s", e.msg);
    if (st != HDP_OK)
        return HDP_OK; /* no sigma up to 1e6 meets it: reported as not a number */
    q.noise_multiplier = sigma;
    hdp_accountant_result r;
    if ((st = hdp_accountant_epsilon(&q, &r, &e)) != HDP_OK)
        return st == HDP_ENOMEM ? hdp_fail(err, HDP_ENOMEM, "%s", e.msg) : HDP_OK;
    t->poisson_sigma = sigma;
    t->epsilon_pld = r.epsilon_pld;
    t->epsilon_rdp = r.epsilon_rdp;
    t->epsilon_rdp_classic = r.epsilon_rdp_classic;
    return HDP_OK;
}
