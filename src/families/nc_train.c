/*
 * nc_train.c — NoisyGD / NoisySGD on neural-collapse features (the NC paper; docs/theory.md §6
 * and §8): the Monte Carlo. One draw builds the per-sample training features, trains with
 * clipped noisy (full-batch or minibatch) gradient steps and measures the test error of the
 * result; hdp_nc_run runs the draws on the generic loop of sim/mc.h. See hdpsgd/nc.h for the
 * model and its conventions.
 */
#include "hdpsgd/nc.h"
#include "core/alloc.h"
#include "core/check.h"
#include "sim/mc.h"
#include "sim/stats.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/privacy.h"
#include "hdpsgd/rng.h"
#include "sim/rng_internal.h"

#include "families/blas_internal.h"
#include "families/nc_internal.h"

/* ---- the Monte Carlo ---- */

typedef struct {
    double *W, *Gs;    /* [Kout x q] */
    double *S, *A;     /* [rows x Kout] scores; mult c r (the gradient's coefficients) */
    double *res;       /* [K x Kout] residual of a row */
    double *cf, *zn;   /* [rows] clipping factors, feature norms */
    long *mult;        /* [rows] multiplicities in the batch */
    long *perm;        /* [n] row of each sample (shuffled for the batches) */
    double *Zs;        /* per-sample: [n x q] training features of the draw */
    double *X;         /* per-sample with pca: [n x p] the perturbations beta s_i */
    double *C;         /* [K x q] per-class sums of mult c z (per-sample rows, W = 0) */
    double *U;         /* [p x Kout] P W^T (pca, adversarial) */
    double *V, *VP;    /* stochastic: [t x p] test perturbations, [t x q] projected */
    double *VS;        /* stochastic: [t x Kout] their scores */
    double *sc, *base; /* [Kout] */
} nc_ws;

static void *nc_ws_alloc(const void *vpb)
{
    const hdp_nc_problem *pb = vpb;
    const hdp_nc_spec *s = &pb->spec;
    const long K = s->K, Kout = pb->Kout, q = pb->q, p = s->p, n = s->n;
    const long rows = pb->grouped ? K : n;
    const int per_sample = !pb->grouped, stoch = s->perturbation == HDP_NC_PERT_STOCHASTIC;
    const long t = s->test_samples;
#define A(f, len) HDP_MC_ARRAY(nc_ws, f, len)
    const hdp_mc_array a[] = {
        A(W, Kout * q), A(Gs, Kout * q), A(S, rows * Kout), A(A, rows * Kout), A(res, K * Kout),
        A(cf, rows), A(zn, rows), A(mult, rows), A(perm, n),
        A(Zs, per_sample ? n * q : 1), A(X, per_sample && pb->P ? n * p : 1), A(C, K * q),
        A(U, s->perturbation == HDP_NC_PERT_ADVERSARIAL && pb->P ? p * Kout : 1),
        A(V, stoch ? t * p : 1), A(VP, stoch && pb->P ? t * q : 1), A(VS, stoch ? t * Kout : 1),
        A(sc, Kout), A(base, Kout)};
#undef A
    return HDP_MC_WS_ALLOC(nc_ws, a);
}

static double dotv(const double *a, const double *b, long len)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    long i = 0;
    for (; i + 4 <= len; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < len; i++)
        s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

/* 1 when class c wins strictly (ties are errors) */
static int correct(const double *sc, long Kout, long c)
{
    if (Kout == 1) /* logistic: sign(theta^T z) = y */
        return (c == 1 ? sc[0] : -sc[0]) > 0;
    for (long j = 0; j < Kout; j++)
        if (j != c && !(sc[c] > sc[j]))
            return 0;
    return 1;
}

/* The per-sample training features of one draw: x_i = M_k + beta s_i, then the remedy
 * (pca: z_i = P^T M_k + P^T (beta s_i), the second term one product [n x p] [p x q]). */
static void build_per_sample(const hdp_nc_problem *pb, nc_ws *w, hdp_xoshiro *g)
{
    const hdp_nc_spec *s = &pb->spec;
    const long n = s->n, p = s->p, q = pb->q;
    if (pb->P) {
        hdp_nc_fill_signs(g, s->beta, w->X, n * p);
        blas_gemm(0, 0, n, q, p, 1.0, w->X, p, pb->P, q, 0.0, w->Zs, q);
        for (long i = 0; i < n; i++)
            for (long j = 0; j < q; j++)
                w->Zs[i * q + j] += pb->PM[pb->sample_class[i] * q + j];
    } else {
        for (long i = 0; i < n; i++) { /* row by row: the norm while the row is in cache */
            double *z = w->Zs + i * q;
            const double *Mk = pb->M + pb->sample_class[i] * p;
            hdp_nc_fill_signs(g, s->beta, z, p);
            for (long l = 0; l < pb->K0 - 1; l++) /* M_k lives in the first K0-1 coordinates */
                z[l] += Mk[l];
            w->zn[i] = sqrt(dotv(z, z, q));
        }
    }
    if (s->remedy == HDP_NC_REMEDY_CENTER) {
        double *mean = w->C; /* K x q >= q */
        memset(mean, 0, sizeof(double) * (size_t)q);
        for (long i = 0; i < n; i++)
            for (long l = 0; l < q; l++)
                mean[l] += w->Zs[i * q + l];
        for (long l = 0; l < q; l++)
            mean[l] /= (double)n;
        for (long i = 0; i < n; i++)
            for (long l = 0; l < q; l++)
                w->Zs[i * q + l] -= mean[l];
    }
    if (pb->P || s->remedy == HDP_NC_REMEDY_CENTER)
        for (long i = 0; i < n; i++)
            w->zn[i] = sqrt(dotv(w->Zs + i * q, w->Zs + i * q, q));
}

typedef struct {
    double error, maxclip;
    long clipped, gradients;
} draw_out;

/* Record the clipping of row r (gradient norm gnorm) and return its factor. */
static double clip_row(const hdp_nc_spec *s, nc_ws *w, long r, double gnorm, draw_out *out)
{
    double cf = hdp_nc_clip_factor(gnorm, s->G);
    if (cf < 1)
        out->clipped += w->mult[r];
    out->gradients += w->mult[r];
    if (cf * gnorm > out->maxclip)
        out->maxclip = cf * gnorm; /* ||clip_G(g)|| = c ||r|| ||z|| */
    return cf;
}

/* One step's clipped gradient sum Gs = sum_r mult_r c_r r_r z_r^T (rows r with mult_r > 0). */
static void gradient_sum(const hdp_nc_problem *pb, nc_ws *w, const double *Z, long rows,
                         const long *row_class, int wzero, draw_out *out)
{
    const hdp_nc_spec *s = &pb->spec;
    const long K = s->K, Kout = pb->Kout, q = pb->q;
    memset(w->Gs, 0, sizeof(double) * (size_t)(Kout * q));
    if (wzero && rows > K) {
        /* W = 0, one row per sample: the residual r_k depends on the class only, so
         * Gs = sum_k r_k (sum_{i in k} mult_i c_i z_i)^T: O(n q) instead of O(n K q) */
        memset(w->S, 0, sizeof(double) * (size_t)Kout);
        double rn[1000];
        for (long k = 0; k < K; k++) {
            hdp_nc_residual(s->loss, K, k, w->S, w->res + k * Kout);
            rn[k] = sqrt(dotv(w->res + k * Kout, w->res + k * Kout, Kout));
        }
        memset(w->C, 0, sizeof(double) * (size_t)(K * q));
        for (long r = 0; r < rows; r++) {
            if (w->mult[r] == 0)
                continue;
            long k = row_class[r];
            double a = (double)w->mult[r] * clip_row(s, w, r, rn[k] * w->zn[r], out);
            const double *z = Z + r * q;
            double *Ck = w->C + k * q;
            for (long l = 0; l < q; l++)
                Ck[l] += a * z[l];
        }
        for (long k = 0; k < K; k++)
            for (long j = 0; j < Kout; j++) {
                double a = w->res[k * Kout + j];
                for (long l = 0; l < q; l++)
                    w->Gs[j * q + l] += a * w->C[k * q + l];
            }
        return;
    }
    /* scores S = Z W^T, residuals, coefficients A = mult c r, then Gs = A^T Z */
    if (wzero)
        memset(w->S, 0, sizeof(double) * (size_t)(rows * Kout));
    else if (rows > K)
        blas_gemm(0, 1, rows, Kout, q, 1.0, Z, q, w->W, q, 0.0, w->S, Kout);
    else
        for (long r = 0; r < rows; r++)
            for (long j = 0; j < Kout; j++)
                w->S[r * Kout + j] = dotv(w->W + j * q, Z + r * q, q);
    for (long r = 0; r < rows; r++) {
        double *a = w->A + r * Kout;
        if (w->mult[r] == 0) {
            memset(a, 0, sizeof(double) * (size_t)Kout);
            continue;
        }
        long k = row_class ? row_class[r] : r;
        hdp_nc_residual(s->loss, K, k, w->S + r * Kout, a);
        double gnorm = sqrt(dotv(a, a, Kout)) * w->zn[r]; /* ||r z^T||_F = ||r|| ||z|| */
        double m = (double)w->mult[r] * clip_row(s, w, r, gnorm, out);
        for (long j = 0; j < Kout; j++)
            a[j] *= m;
    }
    if (rows > K) {
        blas_gemm(1, 0, Kout, q, rows, 1.0, w->A, Kout, Z, q, 0.0, w->Gs, q);
    } else {
        for (long r = 0; r < rows; r++)
            for (long j = 0; j < Kout; j++) {
                double a = w->A[r * Kout + j];
                if (a == 0)
                    continue;
                const double *z = Z + r * q;
                double *Gj = w->Gs + j * q;
                for (long l = 0; l < q; l++)
                    Gj[l] += a * z[l];
            }
    }
}

/* The test error of W (nc.h): the mean over the classes c of P(class c misclassified). */
static double test_error(const hdp_nc_problem *pb, nc_ws *w, hdp_xoshiro *g)
{
    const hdp_nc_spec *s = &pb->spec;
    const long K = s->K, Kout = pb->Kout, q = pb->q, p = s->p;
    double total = 0;
    if (s->perturbation == HDP_NC_PERT_ADVERSARIAL && pb->P) /* U = P W^T: A^T W_j = U[:, j] */
        blas_gemm(0, 1, p, Kout, q, 1.0, pb->P, q, w->W, q, 0.0, w->U, Kout);
    for (long c = 0; c < K; c++) {
        const double *z = pb->ztest + c * q;
        for (long j = 0; j < Kout; j++)
            w->sc[j] = dotv(w->W + j * q, z, q);
        if (s->perturbation == HDP_NC_PERT_ADVERSARIAL) {
            /* the worst v, ||v||_inf <= beta, against rival j adds beta ||A^T (W_j - W_c)||_1
             * (Hoelder, attained at v = beta sign(A^T (W_j - W_c))) */
            int wrong = 0;
            if (Kout == 1) {
                double l1 = 0;
                for (long l = 0; l < p; l++)
                    l1 += fabs(pb->P ? w->U[l] : w->W[l]);
                wrong = !((c == 1 ? w->sc[0] : -w->sc[0]) - s->beta * l1 > 0);
            } else {
                for (long j = 0; j < Kout && !wrong; j++) {
                    if (j == c)
                        continue;
                    double l1 = 0;
                    if (pb->P)
                        for (long l = 0; l < p; l++)
                            l1 += fabs(w->U[l * Kout + j] - w->U[l * Kout + c]);
                    else
                        for (long l = 0; l < p; l++)
                            l1 += fabs(w->W[j * q + l] - w->W[c * q + l]);
                    if (w->sc[j] - w->sc[c] + s->beta * l1 >= 0)
                        wrong = 1;
                }
            }
            total += wrong;
        } else if (s->perturbation == HDP_NC_PERT_STOCHASTIC) {
            /* t test points M_c + beta s': scores W z_c + W A (beta s') */
            const long t = s->test_samples;
            hdp_nc_fill_signs(g, s->beta, w->V, t * p);
            if (pb->P) {
                blas_gemm(0, 0, t, q, p, 1.0, w->V, p, pb->P, q, 0.0, w->VP, q);
                blas_gemm(0, 1, t, Kout, q, 1.0, w->VP, q, w->W, q, 0.0, w->VS, Kout);
            } else {
                blas_gemm(0, 1, t, Kout, p, 1.0, w->V, p, w->W, q, 0.0, w->VS, Kout);
            }
            memcpy(w->base, w->sc, sizeof(double) * (size_t)Kout);
            long wrong = 0;
            for (long i = 0; i < t; i++) {
                for (long j = 0; j < Kout; j++)
                    w->sc[j] = w->base[j] + w->VS[i * Kout + j];
                wrong += !correct(w->sc, Kout, c);
            }
            total += (double)wrong / (double)t;
        } else {
            total += !correct(w->sc, Kout, c);
        }
    }
    return total / (double)K;
}

/* One draw: train on the stream g, then the test error of the result (nc.h). */
static void one_draw(const hdp_nc_problem *pb, nc_ws *w, hdp_xoshiro *g, draw_out *out)
{
    const hdp_nc_spec *s = &pb->spec;
    const long K = s->K, Kout = pb->Kout, q = pb->q, n = s->n;
    const long rows = pb->grouped ? K : n;
    const double *Z = pb->grouped ? pb->Z : w->Zs;
    const long *row_class = pb->grouped ? NULL : pb->sample_class; /* grouped: row r is class r */
    if (!pb->grouped)
        build_per_sample(pb, w, g); /* also the norms zn */
    else
        for (long r = 0; r < rows; r++)
            w->zn[r] = sqrt(dotv(Z + r * q, Z + r * q, q));
    for (long i = 0; i < n; i++)
        w->perm[i] = pb->grouped ? pb->sample_class[i] : i;
    /* initial weights */
    int wzero = s->init == HDP_NC_INIT_ZERO || s->init_std == 0;
    for (long i = 0; i < Kout * q; i++)
        w->W[i] = wzero ? 0.0 : s->init_std * hdp_rng_normal_fast(g);
    const double eta = s->batch > 0 ? s->eta / (double)s->batch : s->eta;
    out->maxclip = 0;
    out->clipped = out->gradients = 0;
    for (long t = 0; t < s->steps; t++) {
        /* the batch: full, or b samples drawn uniformly without replacement (partial
         * Fisher-Yates on perm; uniform whatever the order perm is left in) */
        if (s->batch > 0) {
            memset(w->mult, 0, sizeof(long) * (size_t)rows);
            for (long i = 0; i < s->batch; i++) {
                long j = i + (long)(hdp_xoshiro_double(g) * (double)(n - i));
                if (j >= n) j = n - 1;
                long tmp = w->perm[i];
                w->perm[i] = w->perm[j];
                w->perm[j] = tmp;
                w->mult[w->perm[i]]++;
            }
        } else {
            for (long r = 0; r < rows; r++)
                w->mult[r] = pb->grouped ? pb->nk[r] : 1;
        }
        gradient_sum(pb, w, Z, rows, row_class, wzero, out);
        /* W <- W - eta (Gs + N(0, sigma^2 I)) (eta/b for NoisySGD) */
        if (pb->sigma > 0)
            for (long i = 0; i < Kout * q; i++)
                w->W[i] -= eta * (w->Gs[i] + pb->sigma * hdp_rng_normal_fast(g));
        else
            for (long i = 0; i < Kout * q; i++)
                w->W[i] -= eta * w->Gs[i];
        wzero = 0;
    }
    out->error = test_error(pb, w, g);
}


static hdp_status nc_draw(const void *pb, long d, void *w, hdp_xoshiro *g, void *out,
                          hdp_error *err)
{
    (void)d;
    (void)err;
    one_draw(pb, w, g, out);
    return HDP_OK;
}

hdp_status hdp_nc_run(const hdp_nc_problem *pb, int threads, hdp_nc_result *res, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, res);
    const hdp_nc_spec *s = &pb->spec;
    double t0 = omp_get_wtime();
    memset(res, 0, sizeof *res);
    const long draws = s->draws;
    const int nt = hdp_mc_loop_threads(draws, threads);
    draw_out *outs = calloc((size_t)draws, sizeof *outs);
    hdp_status st = HDP_OK;
    if (!outs) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory (%ld draws)", draws);
        goto done;
    }
    /* draw d: the base stream jumped d + 1 times (the unjumped one made the problem) */
    hdp_xoshiro first;
    hdp_xoshiro_stream(&first, (uint64_t)s->seed, 1);
    hdp_mc_loop loop = {.name = "nc", .runs = draws, .threads = nt, .ctx = pb,
                        .ws_alloc = nc_ws_alloc, .ws_free = free, .run = nc_draw,
                        .first = &first, .slots = outs, .slot_size = sizeof *outs};
    int old_blas = blas_single();
    st = hdp_mc_loop_run(&loop, err);
    blas_restore(old_blas);
    if (st != HDP_OK)
        goto done;
    /* serial reduction in draw order: the same bits for any thread count */
    double sum = 0, mn = INFINITY, mx = -INFINITY, clipped = 0, grads = 0;
    for (long d = 0; d < draws; d++) {
        sum += outs[d].error;
        mn = fmin(mn, outs[d].error);
        mx = fmax(mx, outs[d].error);
        clipped += (double)outs[d].clipped;
        grads += (double)outs[d].gradients;
        res->max_clipped_norm = fmax(res->max_clipped_norm, outs[d].maxclip);
    }
    double mean = sum / (double)draws, ss = 0;
    for (long d = 0; d < draws; d++)
        ss += (outs[d].error - mean) * (outs[d].error - mean);
    res->draws = draws;
    res->threads = nt;
    res->error_mean = mean;
    res->error_stderr = hdp_stderr_from_ss(ss, draws); /* 0 for one draw */
    res->error_min = mn;
    res->error_max = mx;
    res->clipped_fraction = grads > 0 ? clipped / grads : 0;
    res->sigma = pb->sigma;
    res->rho_total = (double)s->steps * s->rho; /* composition of T rho-zCDP steps */
    res->epsilon = hdp_zcdp_epsilon_cks(res->rho_total, s->delta);
    st = hdp_nc_exact_error(pb, &res->exact_error, err);
done:
    free(outs);
    res->seconds = omp_get_wtime() - t0;
    return st;
}
