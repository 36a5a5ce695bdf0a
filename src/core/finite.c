/*
 * finite.c — standard DP-SGD on a finite training set, the model's side (hdpsgd/finite.h,
 * docs/theory.md §6.6): the combinations of data.train_size with [sgd] and [clip] checked at
 * finalize (shuffle and poisson; one-pass's are sgd_finalize's, model.c), and the run's
 * privacy: its steps, the noise multiplier given or calibrated from the model's budget, and
 * its epsilon by the accountant of hdpsgd/accountant.h.
 */
#include "hdpsgd/finite.h"
#include "core/check.h"
#include "hdpsgd/dataset.h"
#include "core/model_internal.h"

#include <math.h>
#include <string.h>

/* the largest N d of synthetic rows (each Monte Carlo thread holds its own) */
#define FINITE_MAX_CELLS 1e8

/* N: the data file's rows (data.source = file, loaded by finalize before the sections'
 * checks), else data.train_size */
static long finite_rows(const hdp_model *m)
{
    return m->data ? m->data->train.n : m->train_size;
}

/* the steps of a finite model (B <= N checked): poisson ceil(E/q), shuffle E ceil(N/B) */
static long long finite_steps(const hdp_model *m)
{
    long N = finite_rows(m);
    if (m->sampling == HDP_SAMPLING_POISSON)
        return hdp_accountant_steps_for_epochs((double)m->epochs,
                                               (double)m->batch / (double)N);
    return (long long)m->epochs * ((N + m->batch - 1) / m->batch);
}

/* data.source = file: the training set is the file's N rows; data.train_size 0 or N */
static hdp_status data_rows_check(const hdp_model *m, hdp_error *err)
{
    long N = m->data->train.n;
    if (m->train_size != 0 && m->train_size != N)
        return hdp_model_fail_key(m, "data", "train_size", err,
                                  "train_size = %ld with data.source = file: the training set of "
                                  "sgd.sampling = %s is the data set's %ld rows (data.features): "
                                  "leave train_size at 0 or set it to %ld",
                                  m->train_size, hdp_sampling_name(m->sampling), N, N);
    if (m->batch > N)
        return hdp_model_fail_key(m, "sgd", "batch", err,
                                  "batch = %ld exceeds the data set's %ld rows (data.features): "
                                  "the sample rate q = B/N must be in (0, 1]: need batch <= %ld",
                                  m->batch, N, N);
    return HDP_OK;
}

hdp_status hdp_finite_finalize(hdp_model *m, hdp_error *err)
{
    const char *sampling = hdp_sampling_name(m->sampling);
    if (m->sampling == HDP_SAMPLING_ONE_PASS) /* its combinations: sgd_finalize (model.c) */
        return HDP_OK;
    hdp_status st;
    if (m->data && (st = data_rows_check(m, err)) != HDP_OK)
        return st;
    if (!m->data && m->train_size == 0)
        return hdp_model_fail_key(m, "data", "train_size", err,
                                  "train_size = 0 with sgd.sampling = %s (%ld epoch%s): standard "
                                  "DP-SGD needs a finite training set: set data.train_size = N "
                                  "(N synthetic rows, integer in [1, 1e7]) or train on a data "
                                  "file's rows (data.source = file)",
                                  sampling, m->epochs, m->epochs == 1 ? "" : "s");
    if (!m->data && (double)m->train_size * (double)m->d > FINITE_MAX_CELLS)
        return hdp_model_fail_key(m, "data", "train_size", err,
                                  "train_size = %ld rows of d = %ld: N d = %.4g values, above the "
                                  "1e8 that each Monte Carlo thread may hold",
                                  m->train_size, m->d, (double)m->train_size * (double)m->d);
    if (!m->data && m->batch > m->train_size)
        return hdp_model_fail_key(m, "sgd", "batch", err,
                                  "batch = %ld exceeds data.train_size = %ld: the sample rate q = "
                                  "B/N must be in (0, 1]: need batch <= train_size",
                                  m->batch, m->train_size);
    long long T = finite_steps(m);
    if (T > HDP_ACCOUNTANT_MAX_STEPS)
        return hdp_model_fail_key(m, "sgd", "epochs", err,
                                  "epochs = %ld at batch = %ld of %ld rows: %lld steps, "
                                  "above the %.0e the accountant takes",
                                  m->epochs, m->batch, finite_rows(m), T,
                                  (double)HDP_ACCOUNTANT_MAX_STEPS);
    if (m->feature_norm != 0)
        return hdp_model_fail_key(m, "clip", "feature_norm", err,
                                  "feature_norm with sgd.sampling = %s: row clipping is one-pass "
                                  "DP-SGD's precondition (docs/theory.md §6.1); standard DP-SGD's "
                                  "privacy comes from the gradients' clip at c sqrt(d): leave it 0",
                                  sampling);
    if (isinf(m->c) && m->noise_multiplier > 0)
        return hdp_model_fail_key(m, "clip", "c", err,
                                  "c = inf with sgd.noise_multiplier = %g: the noise sigma C on "
                                  "the batch's sum would be infinite: give a finite c",
                                  m->noise_multiplier);
    return HDP_OK;
}

/* the form of the budget the user gave, for the messages */
static const char *budget_key(const hdp_model *m)
{
    if (hdp_model_key_given(m, "privacy", "epsilon"))
        return "epsilon";
    if (hdp_model_key_given(m, "privacy", "rho_zcdp"))
        return "rho_zcdp";
    return "rho";
}

hdp_status hdp_finite_privacy_of(const hdp_model *m, hdp_finite_privacy *out, hdp_error *err)
{
    HDP_ZERO(out);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, out);
    if (m->sampling == HDP_SAMPLING_ONE_PASS)
        return HDP_OK;
    long N = finite_rows(m);
    if (N < 1 || m->batch < 1 || m->batch > N)
        return hdp_fail(err, HDP_EINPUT, "hdp_finite_privacy_of: the model was not finalized "
                        "(%ld training rows, batch = %ld)", N, m->batch);
    int poisson = m->sampling == HDP_SAMPLING_POISSON;
    long long steps = finite_steps(m);
    /* Poisson: T steps of the subsampled Gaussian mechanism at rate q (add/remove). Shuffle: a
     * row is in one batch per epoch; without amplification, E Gaussian mechanisms whose
     * sensitivity under replace-one neighbours is 2C: the accountant at q = 1 with sigma/2. */
    *out = (hdp_finite_privacy){.finite = 1, .poisson = poisson, .train_size = N,
                                .batch = m->batch, .epochs = (double)m->epochs,
                                .sample_rate = (double)m->batch / (double)N, .steps = steps,
                                .delta = m->delta, .accountant = m->accountant,
                                .compositions = poisson ? steps : (long long)m->epochs};
    double scale = out->poisson ? 1.0 : 0.5; /* the accountant's sigma over ours */
    hdp_accountant_query q = {out->poisson ? out->sample_rate : 1.0, 0, out->compositions,
                              m->delta, 0};
    out->noise_multiplier = m->noise_multiplier;
    if (m->noise_multiplier == 0 && isfinite(m->epsilon)) {
        double s;
        hdp_error e2;
        hdp_error_clear(&e2);
        hdp_status st = hdp_accountant_calibrate(&q, m->accountant, m->epsilon, &s, &e2);
        if (st == HDP_EINPUT)
            return hdp_model_fail_key(m, "privacy", budget_key(m), err,
                                      "epsilon = %g at delta = %g: no noise multiplier up to "
                                      "1e6 meets it for sgd.sampling = %s over %lld steps (%s)",
                                      m->epsilon, m->delta, hdp_sampling_name(m->sampling),
                                      out->steps, e2.msg);
        if (st != HDP_OK)
            return hdp_fail(err, st, "%s", e2.msg);
        out->noise_multiplier = s / scale;
        out->calibrated = 1;
    }
    out->epsilon = INFINITY;
    if (out->noise_multiplier > 0) {
        q.noise_multiplier = out->noise_multiplier * scale;
        hdp_status st = hdp_accountant_epsilon_of(&q, m->accountant, &out->epsilon, err);
        if (st != HDP_OK)
            return st;
    }
    return HDP_OK;
}
