/*
 * rf_sim.c — `hdpsgd rf`: the Monte Carlo of DP-GD runs in R^p coupled to the OU process
 * (docs/theory.md §7; hdp_rf_simulate, hdp_rf_sim_result_free).
 *
 * Method.
 *  - DP-GD (Algorithm 1 of Bombari-Mondelli, docs/theory.md §7) literally in R^p: per step one
 *    dgemv for r = Phi theta - y, the weights min(1, C_clip / (2 |r_i| ||phi_i||)), one dgemv
 *    for Phi^T (w .* r): never an n x p gradient matrix.
 *  - The OU process by its exact step in each mode, on the same Gaussians.
 *  - Noise: run j draws its Gaussians from the block stream of its own xoshiro256++ stream
 *    (the seed's stream jumped j + 1 times), the generator of every other Monte Carlo of the
 *    library (exact N(0, 1), SIMD); the runs go through the generic loop of sim/mc.h.
 */
#include "hdpsgd/rf.h"
#include "core/alloc.h"
#include "core/check.h"
#include "families/rf_internal.h"
#include "sim/mc.h"
#include "sim/stats.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hdpsgd/rng.h"

/* ---- `hdpsgd rf`: DP-GD in R^p coupled to the OU process (docs/theory.md §7) ---- */

/* the result's 14 arrays of res->points records */
#define RESULT_ARRAYS(res)                                                                   \
    {&(res)->tau, &(res)->dpgd_test, &(res)->dpgd_test_se, &(res)->dpgd_train,               \
     &(res)->dpgd_train_se, &(res)->ou_test, &(res)->ou_train, &(res)->em_expected_test,     \
     &(res)->em_test, &(res)->em_test_se, &(res)->ex_test, &(res)->ex_test_se,               \
     &(res)->clipped, &(res)->gf_test}

void hdp_rf_sim_result_free(hdp_rf_sim_result *res)
{
    if (!res)
        return;
    free(res->step);
    res->step = NULL;
    double **arrays[] = RESULT_ARRAYS(res);
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        free(*arrays[i]);
        *arrays[i] = NULL;
    }
    res->points = 0;
}

/* the recorded steps: 0 and round(i T / records), i = 1..records, without repeats */
static long record_steps(long T, long records, long *out)
{
    long P = 0;
    out[P++] = 0;
    for (long i = 1; i <= records; i++) {
        long k = (long)nearbyint((double)i * (double)T / (double)records);
        if (k > out[P - 1])
            out[P++] = k;
    }
    if (out[P - 1] != T)
        out[P++] = T;
    return P;
}

/* constants shared by the runs */
typedef struct {
    const hdp_rf_problem *pb;
    const hdp_rf_dpgd *q;
    const long *steps; /* recorded steps */
    long P;
    double cs;                        /* s sqrt(eta): the DP-GD noise scale (Algorithm 1) */
    double *ex_decay, *ex_shift, *ex_sd; /* exact OU step of length eta per mode (docs/theory.md §7) */
} sim_ctx;

typedef struct {
    double *theta, *xi, *Z, *g;       /* [p] */
    double *resid, *v, *q;            /* [n] */
    double *aD, *c_em, *c_ex, *xim, *wz; /* [r] */
    double *pred, *zt;                /* [m] */
    hdp_normals ns;                   /* the run's block Gaussian stream */
} sim_ws;

static void *rf_sim_ws_alloc(const void *c)
{
    const hdp_rf_problem *pb = ((const sim_ctx *)c)->pb;
    const long n = pb->spec.k.n, p = pb->spec.k.p, m = pb->spec.k.test_size, r = pb->r;
#define A(f, len) HDP_MC_ARRAY(sim_ws, f, len)
    const hdp_mc_array a[] = {A(theta, p), A(xi, p), A(Z, p),    A(g, p),    A(resid, n),
                              A(v, n),     A(q, n),  A(aD, r),   A(c_em, r), A(c_ex, r),
                              A(xim, r),   A(wz, r), A(pred, m), A(zt, m)};
#undef A
    return HDP_MC_WS_ALLOC(sim_ws, a);
}

/* Fraction of samples whose gradient 2 |r_i| ||phi_i|| exceeds C_clip (docs/theory.md §7). */
static double clipped_fraction(const double *resid, const double *phi_norm, long n, double C)
{
    long c = 0;
    for (long i = 0; i < n; i++)
        c += 2.0 * fabs(resid[i]) * phi_norm[i] > C;
    return (double)c / (double)n;
}

static double dist(const double *a, const double *b, long len)
{
    double s = 0;
    for (long i = 0; i < len; i++)
        s += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(s);
}

/* per-run outputs (slots owned by the driver) */
typedef struct {
    double *test, *train, *em, *ex, *clip; /* [P] each */
    double *pred_final;                    /* [m] Phi_test theta_T */
    double strong, strong_em, theta_norm, clip_max;
} sim_out;

/*
 * One run (see hdp_rf_simulate): DP-GD theta in R^p (Algorithm 1 of Bombari-Mondelli), the
 * Euler-Maruyama OU path c_em and the exact OU step c_ex in mode coordinates, driven by
 * the same xi: xi_k = w_k^T xi on the modes, and the common null-space part
 * s sqrt(eta) P_perp Z, Z = sum of the xi (docs/theory.md §7).
 */
static void sim_one(const sim_ctx *c, sim_ws *w, sim_out *o)
{
    const hdp_rf_problem *pb = c->pb;
    const hdp_rf_dpgd *q = c->q;
    const long n = pb->spec.k.n, p = pb->spec.k.p, m = pb->spec.k.test_size, r = pb->r;
    const double *Phi = pb->Phi, *y = pb->y;
    const double step_coef = 2.0 * q->eta / (double)n, cs = c->cs;
    memset(w->theta, 0, sizeof(double) * (size_t)p);
    memset(w->Z, 0, sizeof(double) * (size_t)p);
    memset(w->c_em, 0, sizeof(double) * (size_t)r);
    memset(w->c_ex, 0, sizeof(double) * (size_t)r);
    for (long i = 0; i < n; i++)
        w->resid[i] = -y[i]; /* Phi theta_0 - y */
    o->strong = o->strong_em = o->theta_norm = 0;
    o->clip_max = clipped_fraction(w->resid, pb->phi_norm, n, q->C_clip);
    long row;
    /* row 0: theta = 0 */
    o->test[0] = o->em[0] = o->ex[0] = pb->zero_test;
    o->train[0] = pb->zero_train;
    o->clip[0] = o->clip_max;
    row = 1;
    for (long k = 1; k <= q->T; k++) {
        /* clipped gradient at theta_{k-1}: weights min(1, C_clip / (2 |r_i| ||phi_i||)) */
        for (long i = 0; i < n; i++) {
            double gn = 2.0 * fabs(w->resid[i]) * pb->phi_norm[i];
            w->v[i] = gn > q->C_clip ? w->resid[i] * (q->C_clip / gn) : w->resid[i];
        }
        blas_gemv(1, n, p, 1.0, Phi, p, w->v, 0.0, w->g);
        /* theta <- theta - eta (1/n) sum_i clip(g_i) + sqrt(eta) (2 C_clip / n) sigma xi */
        if (cs > 0) {
            hdp_normals_fill(&w->ns, w->xi, p);
            for (long j = 0; j < p; j++) {
                w->theta[j] += -step_coef * w->g[j] + cs * w->xi[j];
                w->Z[j] += w->xi[j];
            }
            /* the same increments on the modes: xi_k = w_k^T xi = u_k^T Phi xi / s_k */
            blas_gemv(0, n, p, 1.0, Phi, p, w->xi, 0.0, w->q);
            to_modes(pb, w->q, w->xim);
        } else {
            for (long j = 0; j < p; j++)
                w->theta[j] -= step_coef * w->g[j];
            memset(w->xim, 0, sizeof(double) * (size_t)r);
        }
        /* Euler-Maruyama and the exact step of the OU process, mode by mode (docs/theory.md §7) */
        for (long kk = 0; kk < r; kk++) {
            double lam = pb->lambda[kk], b = pb->beta[kk];
            w->c_em[kk] += -q->eta * lam * (w->c_em[kk] - b) + cs * w->xim[kk];
            w->c_ex[kk] = c->ex_decay[kk] * w->c_ex[kk] + c->ex_shift[kk] +
                          q->s * c->ex_sd[kk] * w->xim[kk];
        }
        /* residual at theta_k (the next step's, and the train loss) */
        blas_gemv(0, n, p, 1.0, Phi, p, w->theta, 0.0, w->resid);
        to_modes(pb, w->resid, w->aD); /* S^{-1} U^T Phi theta, before subtracting y */
        for (long i = 0; i < n; i++)
            w->resid[i] -= y[i];
        /* ||theta_DPGD - theta_OU||: the null-space parts coincide (both s sqrt(eta) P_perp Z) */
        double e1 = dist(w->aD, w->c_ex, r), e2 = dist(w->aD, w->c_em, r);
        double nrm = sqrt(dot(w->aD, w->aD, r));
        if (e1 > o->strong) o->strong = e1;
        if (e2 > o->strong_em) o->strong_em = e2;
        if (nrm > o->theta_norm) o->theta_norm = nrm;
        double cf = clipped_fraction(w->resid, pb->phi_norm, n, q->C_clip);
        if (cf > o->clip_max) o->clip_max = cf;
        if (row < c->P && c->steps[row] == k) {
            o->train[row] = dot(w->resid, w->resid, n) / (double)n;
            o->clip[row] = cf;
            blas_gemv(0, m, p, 1.0, pb->Phi_test, p, w->theta, 0.0, w->pred);
            o->test[row] = mse(w->pred, pb->y_test, m);
            if (k == q->T)
                memcpy(o->pred_final, w->pred, sizeof(double) * (size_t)m);
            /* null-space part of the OU paths on the test set: Phi_test P_perp Z */
            if (cs > 0) {
                blas_gemv(0, m, p, 1.0, pb->Phi_test, p, w->Z, 0.0, w->zt);
                blas_gemv(0, n, p, 1.0, Phi, p, w->Z, 0.0, w->q);
                to_modes(pb, w->q, w->wz);
                blas_gemv(0, m, r, -1.0, pb->G, r, w->wz, 1.0, w->zt);
            } else {
                memset(w->zt, 0, sizeof(double) * (size_t)m);
            }
            for (int which = 0; which < 2; which++) {
                const double *cc = which ? w->c_ex : w->c_em;
                for (long j = 0; j < m; j++)
                    w->pred[j] = cs * w->zt[j];
                blas_gemv(0, m, r, 1.0, pb->G, r, cc, 1.0, w->pred);
                (which ? o->ex : o->em)[row] = mse(w->pred, pb->y_test, m);
            }
            row++;
        }
    }
}

/* run i on its stream (the seed's stream jumped i + 1 times), into its slot */
static hdp_status rf_sim_run(const void *c, long i, void *vw, hdp_xoshiro *stream, void *slot,
                             hdp_error *err)
{
    (void)i;
    (void)err;
    sim_ws *w = vw;
    hdp_normals_init(&w->ns, stream);
    sim_one(c, w, slot);
    return HDP_OK;
}

/* HDP_EINPUT unless the options and the DP-GD parameters can be simulated on pb */
static hdp_status sim_check(const hdp_rf_problem *pb, const hdp_rf_dpgd *q,
                            const hdp_rf_sim_options *opt, hdp_error *err)
{
    if (opt->runs < 1)
        return hdp_fail(err, HDP_EINPUT, "runs = %ld: need at least one run", opt->runs);
    if (opt->records < 1)
        return hdp_fail(err, HDP_EINPUT, "records = %ld: need at least one", opt->records);
    if (opt->threads < 0)
        return hdp_fail(err, HDP_EINPUT, "threads = %d must be >= 0", opt->threads);
    if (!pb->G)
        return hdp_fail(err, HDP_EINPUT, "hdp_rf_simulate needs a problem built with "
                        "HDP_RF_TEST_MODES");
    if (q->T < 1 || !(q->eta > 0))
        return hdp_fail(err, HDP_EINPUT, "DP-GD: T = %ld, eta = %g", q->T, q->eta);
    return HDP_OK;
}

/* the recorded steps and the result's arrays of P records */
static hdp_status sim_result_alloc(const hdp_rf_dpgd *q, long records, hdp_rf_sim_result *res,
                                   hdp_error *err)
{
    long *steps = malloc(sizeof(long) * (size_t)(records + 2));
    if (!steps)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    long P = record_steps(q->T, records, steps);
    res->points = P;
    res->step = steps;
    double **arrays[] = RESULT_ARRAYS(res);
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        if (!(*arrays[i] = calloc((size_t)P, sizeof(double))))
            return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld records", P);
    return HDP_OK;
}

/* exact OU step of length h = eta in mode k (docs/theory.md §7):
 *   a <- e^{-lambda h} a + (1 - e^{-lambda h}) beta
 *        + s sqrt((1 - e^{-2 lambda h})/(2 lambda)) xi */
static void ou_exact_step(const hdp_rf_problem *pb, double h, sim_ctx *c)
{
    for (long k = 0; k < pb->r; k++) {
        double lam = pb->lambda[k];
        c->ex_decay[k] = exp(-lam * h);
        c->ex_shift[k] = -expm1(-lam * h) * pb->beta[k];
        c->ex_sd[k] = lam > 0 ? sqrt(-expm1(-2.0 * lam * h) / (2.0 * lam)) : sqrt(h);
    }
}

/* The test loss's terms at the last step over the runs (rf.h, docs/theory.md §7.4): per test
 * point j the predictions f_ij of run i, their mean and deviations d_ij; noise = mean_j of the
 * unbiased variance, early = mean_j of (mean - f*_j)^2 - var/R (f* = G beta, the min-norm
 * interpolator's), and leave-one-run-out values (mean - d_i/(R-1), sum of squares
 * D2 - d_i^2 R/(R-1)) for the jackknife standard errors. */
static hdp_status terms_mc(const hdp_rf_problem *pb, const sim_out *outs, long R,
                           hdp_rf_sim_result *res, hdp_error *err)
{
    const long m = pb->spec.k.test_size, r = pb->r;
    res->noise_term = res->noise_term_stderr = NAN;
    res->early_stopping_term = res->early_stopping_term_stderr = NAN;
    if (R < 2)
        return HDP_OK;
    double *jn, *je;
    void *block = HDP_MC_VECS({&jn, (size_t)R}, {&je, (size_t)R});
    if (!block)
        return hdp_fail(err, HDP_ENOMEM, "out of memory");
    const double Rd = (double)R, R1 = Rd - 1.0;
    double an = 0, ae = 0;
    for (long j = 0; j < m; j++) {
        double fstar = dot(pb->G + j * r, pb->beta, r), mean = 0, D2 = 0;
        for (long i = 0; i < R; i++) mean += outs[i].pred_final[j];
        mean /= Rd;
        for (long i = 0; i < R; i++) {
            double d = outs[i].pred_final[j] - mean;
            D2 += d * d;
        }
        double var = D2 / R1, gap = mean - fstar;
        an += var;
        ae += gap * gap - var / Rd;
        for (long i = 0; i < R && R > 2; i++) { /* leave run i out */
            double d = outs[i].pred_final[j] - mean;
            double v1 = (D2 - d * d * Rd / R1) / (R1 - 1.0), g1 = gap - d / R1;
            jn[i] += v1;
            je[i] += g1 * g1 - v1 / R1;
        }
    }
    res->noise_term = an / (double)m;
    res->early_stopping_term = ae / (double)m;
    if (R > 2) {
        double mn = 0, me = 0, sn = 0, se = 0;
        for (long i = 0; i < R; i++) {
            mn += jn[i] / (double)m / Rd;
            me += je[i] / (double)m / Rd;
        }
        for (long i = 0; i < R; i++) {
            double a = jn[i] / (double)m - mn, b = je[i] / (double)m - me;
            sn += a * a;
            se += b * b;
        }
        res->noise_term_stderr = sqrt(R1 / Rd * sn);
        res->early_stopping_term_stderr = sqrt(R1 / Rd * se);
    }
    free(block);
    return HDP_OK;
}

/* The statistics over the runs, in run order: per record the means and standard errors of
 * the DP-GD losses, the OU paths' test losses and the clipped fraction, with the OU
 * process's expected losses beside them; the maxima of the strong errors, norms and clipped
 * fractions. The runs' records are read where they are: run i's slots lie i * per_run
 * doubles after run 0's (one array, hdp_rf_simulate). HDP_ENUMERIC when a mean loss is not
 * finite (DP-GD diverged). */
static hdp_status sim_reduce(const hdp_rf_problem *pb, const hdp_rf_dpgd *q, const sim_out *outs,
                             long runs, long per_run, hdp_rf_sim_result *res, hdp_error *err)
{
    const long P = res->points;
    const long *steps = res->step;
    const sim_out *o = outs;
    for (long i = 0; i < P; i++) {
        res->tau[i] = q->eta * (double)steps[i];
        hdp_mean_stderr(o->test + i, runs, per_run, &res->dpgd_test[i], &res->dpgd_test_se[i]);
        hdp_mean_stderr(o->train + i, runs, per_run, &res->dpgd_train[i],
                        &res->dpgd_train_se[i]);
        hdp_mean_stderr(o->em + i, runs, per_run, &res->em_test[i], &res->em_test_se[i]);
        hdp_mean_stderr(o->ex + i, runs, per_run, &res->ex_test[i], &res->ex_test_se[i]);
        hdp_mean_stderr(o->clip + i, runs, per_run, &res->clipped[i], NULL);
        hdp_rf_expected_loss(pb, q->eta, q->s, res->tau[i], 0, &res->ou_test[i], &res->ou_train[i]);
        hdp_rf_expected_loss(pb, q->eta, q->s, res->tau[i], 1, &res->em_expected_test[i], NULL);
        hdp_rf_expected_loss(pb, q->eta, 0.0, res->tau[i], 0, &res->gf_test[i], NULL);
    }
    res->minnorm_test = pb->minnorm_test;
    double sum = 0;
    for (long i = 0; i < runs; i++) {
        sum += outs[i].strong;
        if (outs[i].strong > res->strong_error_max) res->strong_error_max = outs[i].strong;
        if (outs[i].strong_em > res->strong_error_em_max)
            res->strong_error_em_max = outs[i].strong_em;
        if (outs[i].theta_norm > res->theta_norm_max) res->theta_norm_max = outs[i].theta_norm;
        if (outs[i].clip_max > res->max_clipped_fraction)
            res->max_clipped_fraction = outs[i].clip_max;
    }
    res->strong_error_mean = sum / (double)runs;
    const double tauT = q->eta * (double)q->T;
    hdp_rf_loss_terms(pb, q->eta, q->s, tauT, 1, &res->noise_term_exact,
                      &res->early_stopping_term_exact);
    hdp_rf_loss_terms(pb, q->eta, q->s, tauT, 0, &res->noise_term_ou, &res->early_stopping_term_ou);
    hdp_status st = terms_mc(pb, outs, runs, res, err);
    if (st != HDP_OK)
        return st;
    for (long i = 0; i < P; i++) {
        if (!isfinite(res->dpgd_test[i]) || !isfinite(res->dpgd_train[i]))
            return hdp_fail(err, HDP_ENUMERIC, "DP-GD diverged (non-finite loss at step %ld): eta "
                            "lambda_max = %g (stable below 2)", steps[i], q->eta * pb->lambda[0]);
        /* finite means whose standard errors or OU values overflow: the noise is too large */
        double v[] = {res->dpgd_test_se[i], res->dpgd_train_se[i], res->em_test[i],
                      res->em_test_se[i], res->ex_test[i], res->ex_test_se[i], res->ou_test[i],
                      res->ou_train[i], res->em_expected_test[i], res->gf_test[i]};
        for (size_t k = 0; k < sizeof v / sizeof *v; k++)
            if (!isfinite(v[k]))
                return hdp_fail(err, HDP_ENUMERIC,
                                "the losses at step %ld overflowed (DP-GD test loss %g, the OU "
                                "process's %g; noise scale s = %g): lower [dpgd] C, clip or "
                                "sigma, or raise [dpgd] epsilon",
                                steps[i], res->dpgd_test[i], res->ou_test[i], q->s);
    }
    return HDP_OK;
}

/*
 * DP-GD coupled to the OU process (see rf.h): the runs on the generic Monte Carlo loop, run i
 * on the seed's stream jumped i + 1 times (the unjumped one drew the data) with its own
 * output slot, then the statistics in run order.
 */
hdp_status hdp_rf_simulate(const hdp_rf_problem *pb, const hdp_rf_dpgd *q,
                           const hdp_rf_sim_options *opt, hdp_rf_sim_result *res,
                           hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, q);
    HDP_REQUIRE(err, opt);
    HDP_REQUIRE(err, res);
    double t0 = omp_get_wtime();
    hdp_status st = sim_check(pb, q, opt, err);
    if (st != HDP_OK)
        return st;
    const long runs = opt->runs, r = pb->r;
    long records = opt->records < q->T ? opt->records : q->T;
    res->runs = runs;
    res->threads = hdp_mc_loop_threads(runs, opt->threads);
    if ((st = sim_result_alloc(q, records, res, err)) != HDP_OK)
        return st;
    const long P = res->points;

    int old = blas_single();
    sim_ctx c = {pb, q, res->step, P, q->s * sqrt(q->eta), NULL, NULL, NULL};
    const long m = pb->spec.k.test_size, per_run = 5 * P + m;
    double *slots;
    void *block = HDP_MC_VECS({&c.ex_decay, (size_t)r}, {&c.ex_shift, (size_t)r},
                              {&c.ex_sd, (size_t)r}, {&slots, (size_t)(runs * per_run)});
    sim_out *outs = calloc((size_t)runs, sizeof *outs);
    if (!block || !outs) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for %ld runs", runs);
        goto done;
    }
    ou_exact_step(pb, q->eta, &c);
    for (long i = 0; i < runs; i++) {
        double *base = slots + i * per_run;
        outs[i] = (sim_out){base,          base + P, base + 2 * P, base + 3 * P, base + 4 * P,
                            base + 5 * P, 0,        0,            0,            0};
    }
    hdp_xoshiro first;
    hdp_xoshiro_stream(&first, (uint64_t)pb->spec.seed, 1);
    hdp_mc_loop loop = {.name = "rf", .runs = runs, .threads = res->threads, .ctx = &c,
                        .ws_alloc = rf_sim_ws_alloc, .ws_free = free,
                        .run = rf_sim_run, .first = &first, .slots = outs,
                        .slot_size = sizeof *outs,
                        .progress = opt->progress, .progress_user = opt->progress_user};
    if ((st = hdp_mc_loop_run(&loop, err)) == HDP_OK)
        st = sim_reduce(pb, q, outs, runs, per_run, res, err);
done:
    free(outs);
    free(block);
    blas_restore(old);
    res->seconds = omp_get_wtime() - t0;
    return st;
}
