/*
 * data_bias.c — the clipping bias of a data set's least-squares target (hdpsgd/dataset.h,
 * docs/theory.md §9): theta_c, the zero of the mean clipped gradient over the rows, found as
 * the minimiser of the rows' mean Huber loss
 *   F(theta) = (1/N) sum_i H_{k_i}(x_i^T theta - y_i),  k_i = C / ||x_i||,  C = c sqrt(d),
 * (H_k(r) = r^2/2 for |r| <= k, k |r| - k^2/2 beyond: its derivative is the clipped residual,
 * so grad F is the mean clipped gradient of DP-SGD), by Newton's method with a backtracking
 * line search. In the eigenbasis the rows' covariance is diag(lambda), so the Hessian
 * Sigma - (1/N) sum_{clipped i} x_i x_i^T is kept as diag(lambda) minus the clipped rows'
 * part, updated by dsyrk with the rows that changed side at each step (F is piecewise
 * quadratic: once no row changes side a full Newton step is exact). Computed once per c and
 * cached with the data set (the values of c used last; see the cache below).
 */
#include "core/check.h"
#include "core/clock.h"
#include "core/model_internal.h"
#include "hdpsgd/dataset.h"
#include "hdpsgd/model.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The cache: the CACHE_SLOTS values of c used last (least recently used evicted); an entry is
 * freed when neither the cache nor a model holds it. A model pins the entry of its c
 * (hdp_model.data_bias_pin, with a reference to the data set), so that the pointers
 * hdp_data_bias_of returned stay valid while the model lives with that c, whatever other
 * values of c are computed meanwhile (another thread, the designer's search). */
#define CACHE_SLOTS 16

typedef struct entry {
    hdp_data_bias b; /* first: &e->b is e */
    int refs;        /* the cache's and the pins' (under the cache's lock) */
    unsigned long used;
    hdp_data *owner;
} entry;

struct hdp_data_cache {
    pthread_mutex_t lock;
    int used;
    unsigned long clock;
    entry *slot[CACHE_SLOTS];
};

static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;

static void entry_unref(entry *e)
{
    if (e && --e->refs == 0) {
        free(e->b.theta_c);
        free(e->b.z);
        free(e->b.energy);
        free(e);
    }
}

void hdp_data_cache_free(struct hdp_data_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->used; i++)
        entry_unref(c->slot[i]); /* a pin holds the data set: none is left here */
    pthread_mutex_destroy(&c->lock);
    free(c);
}

void hdp_data_bias_unpin(hdp_model *m)
{
    entry *e = m ? m->data_bias_pin : NULL;
    if (!e)
        return;
    hdp_data *owner = e->owner;
    pthread_mutex_lock(&owner->cache->lock);
    entry_unref(e);
    pthread_mutex_unlock(&owner->cache->lock);
    m->data_bias_pin = NULL;
    hdp_data_release(owner);
}

typedef struct {
    const hdp_dataset *ds;
    long n, d;
    double *kappa; /* [N] C / ||x_i|| */
    double *r;     /* [N] residuals x_i^T theta - y_i */
    unsigned char *clipped;
    double *buf;   /* rows in double, a block */
    long block;
} newton;

static double row_dot(const hdp_matrix *x, long i, const double *v)
{
    long d = x->d;
    double s = 0;
    if (x->f32) {
        const float *p = x->f32 + (size_t)i * (size_t)d;
        for (long j = 0; j < d; j++)
            s += (double)p[j] * v[j];
    } else {
        const double *p = x->f64 + (size_t)i * (size_t)d;
        for (long j = 0; j < d; j++)
            s += p[j] * v[j];
    }
    return s;
}

static void row_axpy(const hdp_matrix *x, long i, double a, double *v)
{
    long d = x->d;
    if (x->f32) {
        const float *p = x->f32 + (size_t)i * (size_t)d;
        for (long j = 0; j < d; j++)
            v[j] += a * (double)p[j];
    } else {
        const double *p = x->f64 + (size_t)i * (size_t)d;
        for (long j = 0; j < d; j++)
            v[j] += a * p[j];
    }
}

static double huber(double r, double k)
{
    double a = fabs(r);
    return a <= k ? 0.5 * r * r : k * a - 0.5 * k * k;
}

/* F at theta, the residuals into nt->r (when keep) */
static double objective(newton *nt, const double *theta, int keep)
{
    const hdp_dataset *ds = nt->ds;
    double f = 0;
    for (long i = 0; i < nt->n; i++) {
        double r = row_dot(&ds->rows, i, theta) - ds->y[i];
        if (keep)
            nt->r[i] = r;
        f += huber(r, nt->kappa[i]);
    }
    return f / (double)nt->n;
}

/* H += sign (1/N) sum over the rows idx[0..k) of x x^T (upper triangle) */
static void hess_update(newton *nt, const long *idx, long k, double sign, double *H)
{
    long d = nt->d;
    for (long i0 = 0; i0 < k; i0 += nt->block) {
        long b = k - i0 < nt->block ? k - i0 : nt->block;
        for (long r = 0; r < b; r++)
            for (long j = 0; j < d; j++)
                nt->buf[r * d + j] = hdp_matrix_get(&nt->ds->rows, idx[i0 + r], j);
        cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)d, (int)b, sign / (double)nt->n,
                    nt->buf, (int)d, 1.0, H, (int)d);
    }
}

/* the gradient (1/N) sum clamp(r_i) x_i at the residuals nt->r; the rows that changed side
 * into H */
static void gradient_and_hessian(newton *nt, double *g, double *H, long *idx_on, long *idx_off,
                                 double *clipped_frac)
{
    long d = nt->d, non = 0, noff = 0, nclip = 0;
    memset(g, 0, sizeof(double) * (size_t)d);
    for (long i = 0; i < nt->n; i++) {
        double r = nt->r[i], k = nt->kappa[i];
        double psi = r > k ? k : r < -k ? -k : r;
        row_axpy(&nt->ds->rows, i, psi / (double)nt->n, g);
        unsigned char cl = fabs(r) > k;
        nclip += cl;
        if (cl && !nt->clipped[i])
            idx_off[noff++] = i; /* newly clipped: its part leaves the Hessian */
        else if (!cl && nt->clipped[i])
            idx_on[non++] = i;
        nt->clipped[i] = cl;
    }
    hess_update(nt, idx_off, noff, -1.0, H);
    hess_update(nt, idx_on, non, 1.0, H);
    *clipped_frac = (double)nclip / (double)nt->n;
}

/* the size of the mean clipped gradient at theta = 0, the scale of convergence (g: work) */
static double gradient_at_zero(newton *nt, double *g)
{
    const hdp_dataset *ds = nt->ds;
    double g0 = 0;
    memset(g, 0, sizeof(double) * (size_t)nt->d);
    for (long i = 0; i < nt->n; i++) {
        double r = -ds->y[i], k = nt->kappa[i];
        row_axpy(&ds->rows, i, (r > k ? k : r < -k ? -k : r) / (double)nt->n, g);
    }
    for (long j = 0; j < nt->d; j++)
        g0 += g[j] * g[j];
    return sqrt(g0);
}

/* b's residuals z = y - x^T theta_c (from r = -z), tau2, the energies and R_bias */
static hdp_status finish(const hdp_dataset *ds, hdp_data_bias *b, hdp_error *err)
{
    long n = ds->n, d = ds->d;
    b->tau2 = 0;
    for (long i = 0; i < n; i++) {
        b->z[i] = -b->z[i];
        b->tau2 += b->z[i] * b->z[i];
    }
    b->tau2 /= (double)n;
    b->energy = malloc(sizeof(double) * (size_t)d);
    if (!b->energy)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the clipping bias");
    b->risk_bias = 0;
    for (long j = 0; j < d; j++) {
        double v = b->theta_c[j] - ds->theta_eig[j];
        b->risk_bias += 0.5 * ds->lambda[j] * v * v;
        b->energy[j] = 0.5 * (double)d * b->theta_c[j] * b->theta_c[j];
    }
    return HDP_OK;
}

/* Newton's method from theta*; fills b (theta_c, the residuals, the numbers) */
static hdp_status solve(const hdp_dataset *ds, double c, hdp_data_bias *b, hdp_error *err)
{
    long n = ds->n, d = ds->d;
    double t0 = hdp_seconds_now(), C = c * sqrt((double)d);
    newton nt = {ds, n, d, NULL, NULL, NULL, NULL, 2048};
    nt.kappa = malloc(sizeof(double) * (size_t)n);
    nt.r = malloc(sizeof(double) * (size_t)n);
    nt.clipped = calloc((size_t)n, 1);
    nt.buf = malloc(sizeof(double) * (size_t)nt.block * (size_t)d);
    long *on = malloc(sizeof(long) * (size_t)n), *off = malloc(sizeof(long) * (size_t)n);
    double *H = calloc((size_t)d * (size_t)d, sizeof(double));
    double *A = malloc(sizeof(double) * (size_t)d * (size_t)d);
    double *g = malloc(sizeof(double) * (size_t)d), *step = malloc(sizeof(double) * (size_t)d);
    double *theta = malloc(sizeof(double) * (size_t)d), *trial = malloc(sizeof(double) * (size_t)d);
    hdp_status st = HDP_OK;
    if (!nt.kappa || !nt.r || !nt.clipped || !nt.buf || !on || !off || !H || !A || !g || !step ||
        !theta || !trial) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for the clipping bias (d = %ld)", d);
        goto done;
    }
    for (long i = 0; i < n; i++) {
        double xx = 0;
        for (long j = 0; j < d; j++) {
            double v = hdp_matrix_get(&ds->rows, i, j);
            xx += v * v;
        }
        nt.kappa[i] = xx > 0 ? C / sqrt(xx) : INFINITY;
    }
    for (long j = 0; j < d; j++)
        H[j * d + j] = ds->lambda[j];
    double ridge = 1e-12 * (ds->lambda[0] > 0 ? ds->lambda[0] : 1.0);
    double g0 = gradient_at_zero(&nt, g);
    memcpy(theta, ds->theta_eig, sizeof(double) * (size_t)d);
    double F = objective(&nt, theta, 1), gn = INFINITY, frac = 0;
    long it;
    for (it = 0; it < 200; it++) {
        gradient_and_hessian(&nt, g, H, on, off, &frac);
        gn = 0;
        for (long j = 0; j < d; j++)
            gn += g[j] * g[j];
        gn = sqrt(gn);
        if (!(g0 > 0) || gn <= 1e-10 * g0)
            break;
        memcpy(A, H, sizeof(double) * (size_t)d * (size_t)d);
        for (long j = 0; j < d; j++) {
            A[j * d + j] += ridge;
            step[j] = -g[j];
        }
        if (LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', (int)d, 1, A, (int)d, step, 1) != 0) {
            st = hdp_fail(err, HDP_ENUMERIC, "the clipping bias at c = %g: the Hessian of the "
                          "rows' Huber loss is not positive definite (LAPACK dposv)", c);
            goto done;
        }
        double slope = 0;
        for (long j = 0; j < d; j++)
            slope += g[j] * step[j];
        double t = 1, Ft = F;
        for (int ls = 0; ls < 40; ls++, t *= 0.5) {
            for (long j = 0; j < d; j++)
                trial[j] = theta[j] + t * step[j];
            Ft = objective(&nt, trial, 0);
            if (Ft <= F + 1e-4 * t * slope)
                break;
        }
        if (!(Ft <= F)) /* no decrease: converged to rounding */
            break;
        memcpy(theta, trial, sizeof(double) * (size_t)d);
        F = objective(&nt, theta, 1);
    }
    if (!(gn <= 1e-6 * g0) && g0 > 0) {
        st = hdp_fail(err, HDP_ENUMERIC,
                      "the clipping bias at c = %g did not converge: the mean clipped gradient "
                      "is still %.3g of its size at theta = 0 after %ld Newton steps", c,
                      gn / g0, it);
        goto done;
    }
    b->c = c;
    b->theta_c = theta;
    theta = NULL;
    b->z = nt.r; /* r = x^T theta_c - y: z = -r */
    nt.r = NULL;
    if ((st = finish(ds, b, err)) != HDP_OK)
        goto done;
    b->grad_norm = g0 > 0 ? gn / g0 : 0;
    b->clipped = frac;
    b->iterations = it;
    b->seconds = hdp_seconds_now() - t0;
done:
    if (st != HDP_OK) {
        free(b->theta_c);
        free(b->z);
        free(b->energy);
        memset(b, 0, sizeof *b);
    }
    free(nt.kappa);
    free(nt.r);
    free(nt.clipped);
    free(nt.buf);
    free(on);
    free(off);
    free(H);
    free(A);
    free(g);
    free(step);
    free(theta);
    free(trial);
    return st;
}

hdp_status hdp_data_bias_of(const hdp_model *m, const hdp_data_bias **out, hdp_error *err)
{
    HDP_REQUIRE(err, out);
    *out = NULL;
    const hdp_data *cd = hdp_model_data(m);
    if (!cd || cd->planted || !cd->train.has_labels || !isfinite(m->c))
        return HDP_OK;
    hdp_data *data = (hdp_data *)cd; /* the cache is the one mutable part (locked) */
    pthread_mutex_lock(&create_lock);
    if (!data->cache) {
        data->cache = calloc(1, sizeof *data->cache);
        if (data->cache)
            pthread_mutex_init(&data->cache->lock, NULL);
    }
    pthread_mutex_unlock(&create_lock);
    struct hdp_data_cache *c = data->cache;
    if (!c)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the clipping bias");
    hdp_model *mm = (hdp_model *)m; /* its pin is the other mutable part (under c->lock) */
    pthread_mutex_lock(&c->lock);
    hdp_status st = HDP_OK;
    entry *pin = mm->data_bias_pin, *e = NULL;
    if (pin && pin->owner == data && pin->b.c == m->c) {
        *out = &pin->b;
        goto unlock;
    }
    int at = -1;
    for (int i = 0; i < c->used; i++)
        if (c->slot[i]->b.c == m->c)
            at = i;
    if (at >= 0) {
        e = c->slot[at];
    } else {
        e = calloc(1, sizeof *e);
        if (!e) {
            st = hdp_fail(err, HDP_ENOMEM, "out of memory for the clipping bias");
            goto unlock;
        }
        if ((st = solve(&data->train, m->c, &e->b, err)) != HDP_OK) {
            free(e);
            goto unlock;
        }
        e->owner = data;
        e->refs = 1; /* the cache's */
        if (c->used == CACHE_SLOTS) { /* evict the least recently used */
            int lru = 0;
            for (int i = 1; i < c->used; i++)
                if (c->slot[i]->used < c->slot[lru]->used)
                    lru = i;
            entry_unref(c->slot[lru]);
            c->slot[lru] = c->slot[--c->used];
        }
        c->slot[c->used++] = e;
    }
    e->used = ++c->clock;
    e->refs++; /* m's pin, with a reference to the data set */
    hdp_data_retain(data);
    if (pin) { /* another c or another data set: the old pin's lock may be another's */
        hdp_data *old = pin->owner;
        if (old == data) {
            entry_unref(pin);
            hdp_data_release(old); /* not the last: m's new pin holds data */
        } else {
            pthread_mutex_unlock(&c->lock);
            hdp_data_bias_unpin(mm);
            pthread_mutex_lock(&c->lock);
        }
    }
    mm->data_bias_pin = e;
    *out = &e->b;
unlock:
    pthread_mutex_unlock(&c->lock);
    return st;
}
