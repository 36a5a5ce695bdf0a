/*
 * clip_rows.c — the clipping factors of DP-SGD on a data set's rows (docs/theory.md §9): the
 * drift's factor mu: the rows are grouped by their squared norm w = ||x||^2 / d (Tr Sigma = d:
 * mean w = 1) into HDP_CLIP_ROW_GROUPS groups of equal count, and a row of group g is taken as
 * x = sqrt(w_g) g with g of covariance Sigma (an elliptical law). Its clipped gradient
 * x clamp(x^T e - z, c sqrt(d)/||x||) is then w_g g clamp(g^T e - z/sqrt(w_g), c/w_g), whose
 * mean (Stein's lemma) gives
 *   mu(R) = sum_g p_g w_g mu_{c/w_g}(R; z/sqrt(w_g)),
 * p_g the group's share of the rows, z the group's label noise: the residuals of its rows
 * (least-squares: at theta_c for the model's c, else at theta*; an empirical law per group,
 * which keeps the dependence of the residuals on the rows' norms), or the model's law
 * (planted). The noise term V is the law's own V_c(R) (all rows, w = 1): the same argument
 * gives the total clipped-gradient noise sum_g p_g w_g^2 V_{c/w_g}, but the ODE spreads it over
 * the eigendirections as Sigma does, and on Fashion-MNIST that moved the ODE away from the
 * Monte Carlo (-7 % at c = inf) where V_c stays within 2 % (docs/theory.md §9).
 * ode.clip_weights = direction (risk_ode.h, docs/theory.md §9.3) spreads the groups' own
 * factors over the eigendirections instead: per direction j the weights
 * E[x_j^2 | g] / lambda_j of each group (dirw, one more pass over the rows), with the
 * groups' shares p_g and mean norms w_g (gp, gw), and the groups' mu_g, V_g at R
 * (hdp_clip_rows_groups).
 */
#include "core/check.h"
#include "core/clip_internal.h"
#include "hdpsgd/dataset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double w;
    long i;
} wi;

static int cmp_wi(const void *a, const void *b)
{
    const wi *x = a, *y = b;
    return (x->w > y->w) - (x->w < y->w);
}

void hdp_clip_rows_free(hdp_clip *clip)
{
    if (!clip || !clip->ngroups)
        return;
    for (int g = 0; g < clip->ngroups; g++)
        hdp_clip_free(clip->group[g]);
    free(clip->group);
    hdp_clip_free(clip->vplain);
    clip->vplain = NULL;
    free(clip->ga);
    free(clip->gp);
    free(clip->gw);
    free(clip->dirw);
    clip->gp = clip->gw = clip->dirw = NULL;
    clip->group = NULL;
    clip->ga = NULL;
    clip->ngroups = 0;
}

void hdp_clip_rows_eval(hdp_clip *clip, double R, int derivs, hdp_clip_values *out)
{
    hdp_clip_values s, v;
    if (derivs) /* V and its derivative: the law's own */
        hdp_clip_eval(clip->vplain, R, &s);
    else
        hdp_clip_eval_values(clip->vplain, R, &s);
    s.mu = s.dmu = 0;
    for (int g = 0; g < clip->ngroups; g++) {
        if (derivs)
            hdp_clip_eval(clip->group[g], R, &v);
        else
            hdp_clip_eval_values(clip->group[g], R, &v);
        s.mu += clip->ga[g] * v.mu;
        s.dmu += clip->ga[g] * v.dmu;
    }
    if (!derivs)
        s.dmu = s.dV = 0;
    *out = s;
}

int hdp_clip_rows_groups(const hdp_clip *clip, double R, int derivs, double *mu, double *V,
                         double *dmu, double *dV)
{
    hdp_clip_values v;
    for (int g = 0; g < clip->ngroups; g++) {
        if (derivs)
            hdp_clip_eval(clip->group[g], R, &v);
        else
            hdp_clip_eval_values(clip->group[g], R, &v);
        mu[g] = v.mu;
        V[g] = v.V;
        if (derivs) {
            dmu[g] = v.dmu;
            dV[g] = v.dV;
        }
    }
    return clip->ngroups;
}

/* ode.clip_weights = direction: dirw[j G + g] = E[x_j^2 | g] / lambda_j over the rows of
 * group g (order[lo..hi) of each group), in the eigenbasis the rows are stored in */
static void direction_weights(const hdp_dataset *ds, const double *lambda, const wi *order,
                              int G, double *dirw)
{
    long N = ds->n, d = ds->d;
    for (int g = 0; g < G; g++) {
        long lo = (long)((double)g * (double)N / G), hi = (long)((double)(g + 1) * (double)N / G);
        double *acc = dirw; /* column g, stride G */
        for (long j = 0; j < d; j++)
            acc[j * G + g] = 0.0;
        for (long k = lo; k < hi; k++)
            for (long j = 0; j < d; j++) {
                double v = hdp_matrix_get(&ds->rows, order[k].i, j);
                acc[j * G + g] += v * v;
            }
        for (long j = 0; j < d; j++) {
            double l = lambda[j];
            acc[j * G + g] = l > 0 ? acc[j * G + g] / (double)(hi - lo) / l : 1.0;
        }
    }
}

hdp_status hdp_clip_rows_tabulate(hdp_clip *clip, double R_max, hdp_error *err)
{
    hdp_status vs = hdp_clip_tabulate(clip->vplain, R_max, err);
    if (vs != HDP_OK)
        return vs;
    hdp_clip_table_info vinfo;
    hdp_clip_table_get(clip->vplain, &vinfo);
    double seconds = vinfo.seconds;
    for (int g = 0; g < clip->ngroups; g++) {
        hdp_status st = hdp_clip_tabulate(clip->group[g], R_max, err);
        if (st != HDP_OK)
            return st;
        hdp_clip_table_info info;
        hdp_clip_table_get(clip->group[g], &info);
        seconds += info.seconds;
    }
    memset(&clip->info, 0, sizeof clip->info);
    clip->info.seconds = seconds;
    return HDP_OK;
}

/* the model's law (planted) for rows of squared norm w: z / sqrt(w) */
static hdp_status scaled_law(const hdp_noise_law *base, double w, hdp_noise_law *law,
                             double **buf)
{
    *law = *base;
    law->tau2 = base->tau2 / w;
    law->mix_m1 = base->mix_m1 / sqrt(w);
    law->mix_v1 = base->mix_v1 / w;
    law->mix_v2 = base->mix_v2 / w;
    if (base->kind == HDP_NOISE_EMPIRICAL && base->sample) {
        *buf = malloc(sizeof(double) * (base->n ? base->n : 1));
        if (!*buf)
            return HDP_ENOMEM;
        for (size_t k = 0; k < base->n; k++)
            (*buf)[k] = base->sample[k] / sqrt(w);
        law->sample = *buf;
    }
    return HDP_OK;
}

hdp_clip *hdp_clip_alloc_rows(const hdp_model *m, double c, double R_max, hdp_error *err)
{
    const hdp_data *data = hdp_model_data(m);
    const hdp_dataset *ds = &data->train;
    long N = ds->n, d = ds->d;
    hdp_noise_law base;
    hdp_noise_law_of_model(m, &base); /* least-squares: the residuals at theta_c or theta* */
    const double *z = NULL;
    if (!data->planted) {
        z = base.sample;
        if (c != m->c) /* the bias is the model's c's: at another c, the residuals at theta* */
            z = ds->residual;
    }
    int G = N / 64 >= HDP_CLIP_ROW_GROUPS ? HDP_CLIP_ROW_GROUPS : (int)(N / 64 > 0 ? N / 64 : 1);
    wi *order = malloc(sizeof(wi) * (size_t)N);
    double *zs = z ? malloc(sizeof(double) * (size_t)(N / G + N % G + 1)) : NULL;
    hdp_clip *clip = calloc(1, sizeof *clip);
    if (clip) {
        clip->group = calloc((size_t)G, sizeof *clip->group);
        clip->ga = calloc((size_t)G, sizeof(double));
        clip->gp = calloc((size_t)G, sizeof(double));
        clip->gw = calloc((size_t)G, sizeof(double));
        clip->dirw = malloc(sizeof(double) * (size_t)G * (size_t)(d > 0 ? d : 1));
    }
    if (!order || (z && !zs) || !clip || !clip->group || !clip->ga || !clip->gp || !clip->gw ||
        !clip->dirw)
        goto nomem;
    clip->dir_d = d;
    clip->ngroups = G;
    clip->noise = base.kind;
    clip->c = c;
    clip->tau2 = base.tau2;
    for (long i = 0; i < N; i++) {
        double s = 0;
        for (long j = 0; j < d; j++) {
            double v = hdp_matrix_get(&ds->rows, i, j);
            s += v * v;
        }
        order[i] = (wi){s / (double)d, i};
    }
    qsort(order, (size_t)N, sizeof(wi), cmp_wi);
    for (int g = 0; g < G; g++) {
        long lo = (long)((double)g * (double)N / G), hi = (long)((double)(g + 1) * (double)N / G);
        double w = 0;
        for (long k = lo; k < hi; k++)
            w += order[k].w;
        w /= (double)(hi - lo);
        if (!(w > 0))
            w = 1e-300; /* rows of norm 0 (their gradient is 0): weight 0 below */
        double p = (double)(hi - lo) / (double)N;
        clip->ga[g] = p * w;
        clip->gp[g] = p;
        clip->gw[g] = w;
        hdp_noise_law law;
        double *buf = NULL;
        if (z) {
            law = base;
            for (long k = lo; k < hi; k++)
                zs[k - lo] = z[order[k].i] / sqrt(w);
            law.kind = HDP_NOISE_EMPIRICAL;
            law.sample = zs;
            law.n = (size_t)(hi - lo);
            double t2 = 0;
            for (long k = lo; k < hi; k++)
                t2 += zs[k - lo] * zs[k - lo];
            law.tau2 = t2 / (double)(hi - lo);
        } else if (scaled_law(&base, w, &law, &buf) != HDP_OK) {
            goto nomem;
        }
        clip->group[g] = hdp_clip_alloc_law(&law, isinf(c) ? c : c / w);
        free(buf);
        if (!clip->group[g])
            goto nomem;
    }
    direction_weights(ds, ds->lambda, order, G, clip->dirw);
    hdp_noise_law plain = base;
    if (z) /* at another c than the model's: the residuals at theta* */
        plain.sample = z;
    if (!(clip->vplain = hdp_clip_alloc_law(&plain, c)))
        goto nomem;
    free(order);
    free(zs);
    if (hdp_clip_tabulate(clip, R_max, err) != HDP_OK) {
        hdp_clip_free(clip);
        return NULL;
    }
    return clip;
nomem:
    free(order);
    free(zs);
    hdp_clip_free(clip);
    hdp_fail(err, HDP_ENOMEM, "out of memory for the clipping factors of the data set's rows");
    return NULL;
}
